// Validators for command-line options, shared by the tool's subcommands, and
// the exact arithmetic of --cached-fraction. Private to cli/: no library
// below the CLI knows about CLI11.
//
// Every numeric option is checked on its text, before CLI11 converts it, so
// that nothing is wrapped, capped or read in another base: CLI11 converts
// integers with strtoull(text, 0), which takes 0x10 as 16, 010 as 8 and -1
// as 2^64 - 1 for an unsigned option. A bad value is a usage error (exit
// status 2) whose message names the option, the value and what is allowed:
//   kvprefix: --vocab: expected an integer from 1 to 2147483648, found 0x10
#ifndef KVPREFIX_CLI_OPTION_CHECKS_H_
#define KVPREFIX_CLI_OPTION_CHECKS_H_

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/json_strings.h"
#include "kvprefix/cache.h"

namespace kvprefix::cli {

// A decimal integer as ParseDecimalInteger reads it: sign and magnitude.
struct DecimalInteger {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

// `text` if it is a decimal integer written as JSON writes one: an optional
// '-', then 0 or digits without a leading zero; nothing else (no '+', no
// spaces, no 0x, no fraction or exponent). nullopt for any other text and
// for magnitudes of 2^64 or more. O(digits).
inline std::optional<DecimalInteger> ParseDecimalInteger(
    std::string_view text) {
  DecimalInteger result;
  result.negative = text.starts_with('-');
  if (result.negative) text.remove_prefix(1);
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (result.magnitude > (UINT64_MAX - digit) / 10) return std::nullopt;
    result.magnitude = result.magnitude * 10 + digit;
  }
  return result;
}

// Whether `value` lies in [min, max], compared without converting it to T
// (which could wrap). Requires min <= max.
template <typename T>
bool InRange(const DecimalInteger& value, T min, T max) {
  if (value.negative && value.magnitude != 0) {
    if constexpr (std::is_unsigned_v<T>) {
      return false;
    } else {
      // Magnitudes of negative bounds, computed without overflow at the
      // type's minimum.
      if (min >= 0) return false;
      if (value.magnitude > static_cast<std::uint64_t>(-(min + 1)) + 1) {
        return false;
      }
      return max >= 0 ||
             value.magnitude >= static_cast<std::uint64_t>(-(max + 1)) + 1;
    }
  }
  return !std::cmp_less(value.magnitude, min) &&
         !std::cmp_greater(value.magnitude, max);
}

// A CLI11 check for an integer option of type T: its text must be a decimal
// integer (ParseDecimalInteger) from `min` to `max`, else the usage error
// "<option>: expected an integer from <min> to <max>, found <text>". Only
// then does CLI11 convert the text, which it can no longer misread.
template <typename T>
CLI::Validator IntegerIn(T min, T max) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(std::uint64_t));
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const auto value = ParseDecimalInteger(text);
        if (value && InRange(*value, min, max)) return {};
        return fmt::format("expected an integer from {} to {}, found {}", min,
                           max, text);
      },
      "");
}

// Adds the integer option `name` bound to `value` with the IntegerIn(min,
// max) check; --help shows it as "INTEGER in [min - max]". Every integer
// option of the tool is added this way (CliTest.IntegerOptionsAreStrict
// checks --help for any other).
template <typename T>
CLI::Option* AddIntegerOption(CLI::App& command, const std::string& name,
                              T& value, const std::string& description,
                              T min = std::numeric_limits<T>::min(),
                              T max = std::numeric_limits<T>::max()) {
  return command.add_option(name, value, description)
      ->check(IntegerIn(min, max))
      ->type_name(fmt::format("INTEGER in [{} - {}]", min, max));
}

// Adds option `name` taking one of `entries`' names, its help `what` and
// then each value with its NamedValue help.
template <typename Enum, std::size_t N>
inline CLI::Option* AddNamedValueOption(
    CLI::App& command, const std::string& name, std::string& value,
    const std::array<NamedValue<Enum>, N>& entries, std::string_view what) {
  std::vector<std::string> names;
  std::string help(what);
  for (const NamedValue<Enum>& entry : entries) {
    names.emplace_back(entry.name);
    help += fmt::format("{} {}: {}", names.size() == 1 ? "" : ";", entry.name,
                        entry.help);
  }
  return command.add_option(name, value, help)->check(CLI::IsMember(names));
}

// Adds the option `name` (-o,--output, --matches, --out) naming a file to
// write into `path`, its default shown in --help. An empty value is the
// usage error "<option>: the output path is empty" (exit 2), found before
// any work is done: an empty --matches once read as "not given" and its
// output was silently not written. Every output option of the tool is
// added this way.
inline CLI::Option* AddOutputOption(CLI::App& command, const std::string& name,
                                    std::string& path,
                                    const std::string& description) {
  return command.add_option(name, path, description)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text.empty() ? "the output path is empty" : "";
          },
          "FILE"))
      ->capture_default_str();
}

// The regular file a write to `path` would replace, as an absolute path
// with "." and ".." and every symbolic link resolved (a dangling one to
// where it points: the write goes there); "-" is standard output's file
// when that is a regular file. nullopt for what is not, or would not be, a
// regular file (a terminal, a pipe, /dev/null): writes there replace
// nothing. Reads the file system. O(path components).
inline std::optional<std::filesystem::path> FileWrittenBy(
    const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path file =
      path == "-" ? fs::path("/proc/self/fd/1") : fs::absolute(path, error);
  const auto not_regular = [&error](const fs::path& name) {
    const fs::file_status status = fs::status(name, error);  // follows links
    return fs::exists(status) && !fs::is_regular_file(status);
  };
  if (not_regular(file) || (path == "-" && !fs::exists(file, error))) {
    return std::nullopt;
  }
  for (int links = 0; links < 40 && fs::is_symlink(file, error); ++links) {
    const fs::path target = fs::read_symlink(file, error);
    if (error) break;
    file = target.is_absolute() ? target : file.parent_path() / target;
  }
  file = fs::weakly_canonical(file, error);
  if (error || not_regular(file)) return std::nullopt;
  return file;
}

// Throws the usage error "<first> and <second> name the same file: <path>"
// (CLI::ValidationError, exit 2) when both output options would write one
// regular file (FileWrittenBy: however it is spelled, through symbolic
// links, or as "-" with standard output redirected to it): the second
// write would replace the first, which was then lost without a word
// (`replay --matches x -o x` kept the summary alone). "-" twice (standard
// output as a stream, written in turn) and an empty path (an option not
// given) are never a clash. For a command's callback, before any work.
inline void CheckDistinctOutputs(std::string_view first_name,
                                 const std::string& first,
                                 std::string_view second_name,
                                 const std::string& second) {
  if (first.empty() || second.empty() || (first == "-" && second == "-")) {
    return;
  }
  const auto first_file = FileWrittenBy(first);
  if (first_file && first_file == FileWrittenBy(second)) {
    throw CLI::ValidationError(fmt::format("{} and {} name the same file: {}",
                                           first_name, second_name,
                                           EscapeForMessage(second, 200)));
  }
}

// A CLI11 check for a floating-point option: its value must be a finite
// number from `min` to `max` (inclusive), else CLI11 reports the usage error
// "<option>: expected a number from <min> to <max>, found <text>" (exit 2).
// CLI::Range and CLI::PositiveNumber compare with < and >, which NaN passes,
// and "inf" is a double too: every floating option of the tool uses this
// check instead. Thread-safe.
inline CLI::Validator FiniteNumberIn(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && std::isfinite(value) &&
            value >= min && value <= max) {
          return {};
        }
        return fmt::format("expected a number from {} to {}, found {}", min,
                           max, text);
      },
      fmt::format("NUMBER in [{} - {}]", min, max));
}

// A decimal as typed (sizes such as 0.5GiB, --cached-fraction): an integer
// part written as ParseDecimalInteger writes one, without sign (0, or
// digits without a leading zero), which may be left out before a fraction
// (.5); then optionally '.' and one or more digits. No sign, exponent or
// spaces: "0.5", ".5", "12", "1.000" but not "05", "5.", "." or "1e3". The
// string views point into `text`. O(length).
struct Decimal {
  std::string_view whole;     // the digits before the point, maybe none
  std::string_view fraction;  // the digits after the point, maybe none
};
inline std::optional<Decimal> ParseDecimal(std::string_view text) {
  const auto all_digits = [](std::string_view digits) {
    for (const char c : digits) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  Decimal result;
  const std::size_t point = text.find('.');
  result.whole = text.substr(0, point);
  if (point != std::string_view::npos) {
    result.fraction = text.substr(point + 1);
    if (result.fraction.empty()) return std::nullopt;  // "5." or "."
  } else if (result.whole.empty()) {
    return std::nullopt;
  }
  if (result.whole.size() > 1 && result.whole[0] == '0') return std::nullopt;
  if (!all_digits(result.whole) || !all_digits(result.fraction)) {
    return std::nullopt;
  }
  return result;
}

// The digits of a decimal fraction from 0 to 1 as typed (ParseDecimal):
// "0", "1", "0.29", ".5", "1.000". nullopt for anything else or above 1.
// The string views point into `text`.
struct DecimalFraction {
  bool one = false;           // the integer part is 1 (then F is exactly 1)
  std::string_view fraction;  // the digits after the point, maybe none
};
inline std::optional<DecimalFraction> ParseDecimalFraction(
    std::string_view text) {
  const std::optional<Decimal> decimal = ParseDecimal(text);
  if (!decimal || (decimal->whole != "" && decimal->whole != "0" &&
                   decimal->whole != "1")) {
    return std::nullopt;
  }
  DecimalFraction result{.one = decimal->whole == "1",
                         .fraction = decimal->fraction};
  if (result.one &&
      result.fraction.find_first_not_of('0') != std::string_view::npos) {
    return std::nullopt;
  }
  return result;
}

// floor(F * n) for the decimal F = 0.d1d2...dk (or 1) exactly as written:
// integer arithmetic on its digits, never binary floating point, in which
// 0.29 * 100 is 28.999999999999996. The digits are taken from the last:
// after j of them, carry = floor(n * S / 10^j), S the number the last j
// digits write; one step is carry = floor((d * n + carry) / 10), exact
// because d * n is an integer, and computed without overflow as
// d * (n / 10) + carry / 10 + (d * (n % 10) + carry % 10) / 10. After all k
// digits carry = floor(n * 0.d1...dk) <= n. O(k).
inline std::uint64_t FloorTimes(const DecimalFraction& f, std::uint64_t n) {
  if (f.one) return n;
  std::uint64_t carry = 0;
  for (auto digit = f.fraction.rbegin(); digit != f.fraction.rend(); ++digit) {
    const auto d = static_cast<std::uint64_t>(*digit - '0');
    carry = d * (n / 10) + carry / 10 + (d * (n % 10) + carry % 10) / 10;
  }
  return carry;
}

// What a decimal fraction option takes, for its messages.
inline constexpr std::string_view kDecimalFractionExpected =
    "expected a decimal from 0 to 1 (such as 0.25; no exponent)";

// A CLI11 check for a decimal fraction option (ParseDecimalFraction), else
// "<option>: expected a decimal from 0 to 1 (such as 0.25; no exponent),
// found <text>".
inline CLI::Validator DecimalFractionFrom0To1() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (ParseDecimalFraction(text)) return {};
        return fmt::format("{}, found {}", kDecimalFractionExpected, text);
      },
      "");
}

// For an app whose first argument must name one of its subcommands (the
// tool itself, `convert`) and that has no option but --help: throws
// std::invalid_argument (a usage error, exit status 2) naming what is wrong
// with argv[first] and listing the commands: "unknown command 'NAME'",
// "unknown option '--NAME'", "a command is required", each after
// "convert: " for `convert`'s own. `prefix` is what the user typed before
// it ("", "convert ").
inline void CheckCommandName(const CLI::App& app, int argc, char** argv,
                             int first, const std::string& prefix) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) {
    names.push_back(command->get_name());
  }
  const std::string commands =
      fmt::format("commands: {}", fmt::join(names, ", "));
  // "convert: " before a problem of `convert`'s own arguments.
  const std::string where =
      prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1) + ": ";
  if (first >= argc) {
    throw std::invalid_argument(
        fmt::format("{}a command is required ({})", where, commands));
  }
  const std::string name = argv[first];
  if (name.starts_with('-')) {
    if (app.get_option_no_throw(name) != nullptr) return;  // --help, -h
    throw std::invalid_argument(fmt::format("{}unknown option '{}' ({})", where,
                                            EscapeForMessage(name, 1024),
                                            commands));
  }
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->check_name(name)) return;
  }
  throw std::invalid_argument(fmt::format("{}unknown command '{}' ({})", where,
                                          EscapeForMessage(name, 1024),
                                          commands));
}

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_OPTION_CHECKS_H_
