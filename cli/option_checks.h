// Validators for command-line options, shared by the tool's subcommands.
// Private to cli/: no library below the CLI knows about CLI11.
#ifndef KVPREFIX_CLI_OPTION_CHECKS_H_
#define KVPREFIX_CLI_OPTION_CHECKS_H_

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace kvprefix::cli {

// A CLI11 check for a floating-point option: its value must be a finite
// number from `min` to `max` (inclusive), else CLI11 reports the usage error
// "<option>: must be a number from <min> to <max>, found <text>" (exit 2).
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
        return fmt::format("must be a number from {} to {}, found {}", min, max,
                           text);
      },
      fmt::format("NUMBER in [{} - {}]", min, max));
}

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_OPTION_CHECKS_H_
