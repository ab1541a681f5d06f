// Sizes on the command line: see byte_sizes.h.
#include "cli/byte_sizes.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "cli/option_checks.h"

namespace kvprefix::cli {
namespace {

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 9> kUnits = {{
    {"B", 1},
    {"KB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000ull * 1000 * 1000},
    {"TB", 1000ull * 1000 * 1000 * 1000},
    {"KiB", 1ull << 10},
    {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},
    {"TiB", 1ull << 40},
}};

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// `text` (digits only) as a number, or nullopt past 2^64 - 1.
std::optional<std::uint64_t> ToUint(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// The usage error of a capacity that is neither a node count nor a size.
std::string NotACapacity(std::string_view text, std::string_view option) {
  return fmt::format(
      "{}: expected a number of nodes (a decimal integer, no leading zero) "
      "or a size such as 80GiB or 0.5GB (units B, KB, MB, GB, TB, KiB, MiB, "
      "GiB, TiB), found '{}'",
      option, text);
}

}  // namespace

std::optional<std::uint64_t> ParseByteSize(std::string_view text,
                                           std::string_view option) {
  std::size_t number_end = 0;
  while (number_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[number_end])) ||
          text[number_end] == '.')) {
    ++number_end;
  }
  const std::string_view unit_name = text.substr(number_end);
  if (unit_name.empty()) return std::nullopt;
  std::uint64_t unit = 0;
  for (const auto& [name, bytes] : kUnits) {
    if (name == unit_name) unit = bytes;
  }
  const std::optional<Decimal> number =
      ParseDecimal(text.substr(0, number_end));
  if (unit == 0 || !number) {
    throw std::invalid_argument(NotACapacity(text, option));
  }
  // The whole part has no leading zero, so one of 2^64 or more (any with
  // over 20 digits) times a unit of at least 1 byte is out of range.
  const auto whole_value = number->whole.empty()
                               ? std::optional<std::uint64_t>(0)
                               : ToUint(number->whole);
  const auto too_large = [&] {
    return std::invalid_argument(
        fmt::format("{}: {} is 2^64 bytes or more", option, text));
  };
  if (!whole_value) throw too_large();
  // floor(unit * 0.d1...dn) exactly for any n, by long multiplication from
  // the last digit: carry = floor((d * unit + carry) / 10) equals the floor
  // of the exact partial product, and stays below 10 * unit <= 2^44.
  std::uint64_t fraction_bytes = 0;
  for (auto digit = number->fraction.rbegin(); digit != number->fraction.rend();
       ++digit) {
    fraction_bytes =
        (static_cast<std::uint64_t>(*digit - '0') * unit + fraction_bytes) / 10;
  }
  const UInt128 bytes =
      static_cast<UInt128>(*whole_value) * unit + fraction_bytes;
  if (bytes > std::numeric_limits<std::uint64_t>::max()) throw too_large();
  return static_cast<std::uint64_t>(bytes);
}

std::uint64_t ParseCapacity(std::string_view text, std::string_view option,
                            UInt128 node_bytes) {
  // A node count is an integer as every integer option takes it (-0 is 0).
  const std::optional<DecimalInteger> nodes = ParseDecimalInteger(text);
  if (nodes && InRange(*nodes, std::uint64_t{0}, UINT64_MAX)) {
    return nodes->magnitude;
  }
  if (!nodes && AllDigits(text) && text[0] != '0') {
    throw std::invalid_argument(
        fmt::format("{}: expected at most 18446744073709551615 nodes, found {}",
                    option, text));
  }
  const std::optional<std::uint64_t> bytes = ParseByteSize(text, option);
  if (!bytes) throw std::invalid_argument(NotACapacity(text, option));
  if (node_bytes == 0) {
    throw std::invalid_argument(
        fmt::format("{} {}: a size needs --kv-bytes-per-token", option, text));
  }
  return static_cast<std::uint64_t>(*bytes / node_bytes);
}

std::optional<std::uint64_t> CapacityBytes(std::uint64_t capacity,
                                           UInt128 node_bytes) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  if (node_bytes == 0 || (capacity != 0 && node_bytes > kMax / capacity)) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(capacity * node_bytes);
}

}  // namespace kvprefix::cli
