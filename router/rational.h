// Exact rationals for routing (SPEC §11.1, §11.3): a decimal parameter is
// the rational number its text denotes, never a binary floating point, and
// every score or cost a policy compares is computed from integers and those
// rationals exactly, so that two values tie only when they are equal. The
// oracle (tests/serve/serve_oracle/routers.py) uses Python's Fraction.
#ifndef KVPREFIX_ROUTER_RATIONAL_H_
#define KVPREFIX_ROUTER_RATIONAL_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvprefix {

// A signed 128-bit integer (a GCC and Clang extension; __extension__ keeps
// -Wpedantic quiet).
__extension__ typedef __int128 Int128;

// numerator / denominator in lowest terms, denominator > 0. Every operation
// is exact; one whose result (or an intermediate product) does not fit in
// 127 bits throws std::overflow_error ("exact arithmetic passes 2^127"),
// which routing values far below that (counts of requests and tokens,
// decimals of a few digits) never meet. Values; thread-safe.
class Rational {
 public:
  Rational() = default;
  Rational(std::int64_t value) : numerator_(value) {}  // NOLINT: implicit
  // numerator / denominator (denominator not 0), reduced. Throws
  // std::invalid_argument for a zero denominator.
  Rational(Int128 numerator, Int128 denominator);
  static Rational FromUnsigned(std::uint64_t value) {
    return Rational(static_cast<Int128>(value), 1);
  }

  // SPEC §6's decimal, read exactly: digits without a leading zero (or
  // "0"), which may be left out before a fraction, then optionally '.' and
  // one or more digits: "1.25" is 5/4, "0.3" 3/10, "2", ".5". No sign,
  // exponent or space. nullopt for any other text, and for one whose value
  // needs more than 38 significant digits. O(length).
  static std::optional<Rational> FromDecimal(std::string_view text);

  Int128 numerator() const { return numerator_; }
  Int128 denominator() const { return denominator_; }

  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  // Throws std::invalid_argument when `b` is 0.
  friend Rational operator/(const Rational& a, const Rational& b);
  friend bool operator==(const Rational&, const Rational&) = default;
  // Cross-multiplied: a/b <=> c/d is a·d <=> c·b.
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b);

 private:
  Int128 numerator_ = 0;
  Int128 denominator_ = 1;
};

// The larger of `a` and `b`.
inline Rational Max(const Rational& a, const Rational& b) {
  return a < b ? b : a;
}

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_RATIONAL_H_
