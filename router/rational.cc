#include "router/rational.h"

#include <initializer_list>
#include <stdexcept>

namespace kvprefix {
namespace {

[[noreturn]] void Overflow() {
  throw std::overflow_error("exact arithmetic passes 2^127");
}

Int128 Multiply(Int128 a, Int128 b) {
  Int128 product = 0;
  if (__builtin_mul_overflow(a, b, &product)) Overflow();
  return product;
}

Int128 Add(Int128 a, Int128 b) {
  Int128 sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) Overflow();
  return sum;
}

Int128 Gcd(Int128 a, Int128 b) {
  if (a < 0) a = -a;
  while (b != 0) {
    const Int128 rest = a % b;
    a = b;
    b = rest;
  }
  return a;
}

bool AllDigits(std::string_view text) {
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

Rational::Rational(Int128 numerator, Int128 denominator) {
  if (denominator == 0) throw std::invalid_argument("a rational over 0");
  if (denominator < 0) {
    numerator = Multiply(numerator, -1);
    denominator = Multiply(denominator, -1);
  }
  const Int128 divisor = Gcd(numerator, denominator);
  numerator_ = numerator / divisor;
  denominator_ = denominator / divisor;
}

std::optional<Rational> Rational::FromDecimal(std::string_view text) {
  const std::size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? "" : text.substr(point + 1);
  const bool bad_point = point != std::string_view::npos && fraction.empty();
  if (bad_point || (whole.empty() && fraction.empty()) ||
      (whole.size() > 1 && whole[0] == '0') || !AllDigits(whole) ||
      !AllDigits(fraction)) {
    return std::nullopt;
  }
  std::string_view kept = fraction;  // trailing zeros change nothing
  while (!kept.empty() && kept.back() == '0') kept.remove_suffix(1);
  if (kept.size() > 38) return std::nullopt;
  Int128 numerator = 0;
  std::size_t significant = 0;
  for (const std::string_view digits : {whole, kept}) {
    for (const char c : digits) {
      if ((numerator != 0 || c != '0') && ++significant > 38) {
        return std::nullopt;  // 10^38 < 2^127
      }
      numerator = numerator * 10 + (c - '0');
    }
  }
  Int128 denominator = 1;
  for (std::size_t i = 0; i < kept.size(); ++i) denominator *= 10;
  return Rational(numerator, denominator);
}

Rational operator+(const Rational& a, const Rational& b) {
  return Rational(Add(Multiply(a.numerator_, b.denominator_),
                      Multiply(b.numerator_, a.denominator_)),
                  Multiply(a.denominator_, b.denominator_));
}

Rational operator-(const Rational& a, const Rational& b) {
  return a + Rational(Multiply(b.numerator_, -1), b.denominator_);
}

Rational operator*(const Rational& a, const Rational& b) {
  return Rational(Multiply(a.numerator_, b.numerator_),
                  Multiply(a.denominator_, b.denominator_));
}

Rational operator/(const Rational& a, const Rational& b) {
  if (b.numerator_ == 0) throw std::invalid_argument("a division by 0");
  return Rational(Multiply(a.numerator_, b.denominator_),
                  Multiply(a.denominator_, b.numerator_));
}

std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
  return Multiply(a.numerator_, b.denominator_) <=>
         Multiply(b.numerator_, a.denominator_);
}

}  // namespace kvprefix
