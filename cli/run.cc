// RunCommandLine: see run.h. Every failure becomes one stderr line and an
// exit status (SPEC §6): 0 success, 2 bad input or bad usage, 1
// input/output or resource failure.
#include "cli/run.h"

#include <fmt/format.h>

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string_view>

#include "cli/commands.h"
#include "io/input_error.h"
#include "io/json_strings.h"
#include "kvprefix/types.h"
#include "kvprefix/version.h"

namespace kvprefix::cli {
namespace {

constexpr int kExitIoFailure = 1;
constexpr int kExitBadInput = 2;

int Fail(int status, std::string_view message) {
  // Standard error may be gone as well (`2>&1 | head -1`): nothing is left
  // to tell then, so a failed write is ignored. fmt::print would throw out
  // of the handler that called Fail, and the tool would abort (status 134).
  // The one line of every failure, with its control characters escaped
  // whatever composed it (CLI11 and a plugin's error buffer quote text raw).
  const std::string line =
      fmt::format("kvprefix: {}\n", EscapeControlCharacters(message));
  static_cast<void>(std::fwrite(line.data(), 1, line.size(), stderr));
  return status;
}

// What a command printed through stdio (verify's report, --help, --version)
// must have reached standard output: a full disk or a closed stdout is an
// I/O failure (exit 1), not a success. The other commands write their
// output themselves and report such failures where they happen.
int FinishStdout(int status) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  return Fail(kExitIoFailure, ErrnoError("<stdout>", "write").what());
}

}  // namespace

int RunCommandLine(int argc, char** argv,
                   std::span<const RegisterCommand> commands) {
  try {
    CLI::App app(
        "kvprefix: the longest reusable KV-cache prefix of each LLM request "
        "(a token trie; see `kvprefix <command> --help`)",
        "kvprefix");
    app.set_version_flag("--version", fmt::format("kvprefix {}", kVersion),
                         "Print \"kvprefix <version>\" and exit");
    app.require_subcommand(1);
    for (const RegisterCommand add : commands) add(app);
    try {
      // CLI11 would say "A subcommand is required" for `kvprefix bogus`.
      CheckCommandName(app, argc, argv, 1, "");
      if (argc > 1 && std::string_view(argv[1]) == "convert") {
        CheckCommandName(*app.get_subcommand("convert"), argc, argv, 2,
                         "convert ");
      }
      app.parse(argc, argv);
      return FinishStdout(0);
    } catch (const CLI::ParseError& error) {
      if (error.get_exit_code() == 0) {
        return FinishStdout(app.exit(error));  // --help, --version
      }
      return Fail(kExitBadInput,
                  fmt::format("{} (run with --help for usage)", error.what()));
    }
  } catch (...) {
    const CommandFailure failure = CurrentFailure();
    return Fail(failure.status(), failure.what());
  }
}

CommandFailure CurrentFailure() {
  try {
    throw;
  } catch (const CommandFailure& failure) {
    return failure;
  } catch (const FileInputError& error) {
    return CommandFailure(kExitBadInput, error.what());
  } catch (const InputError& error) {
    return CommandFailure(kExitBadInput, error.what());
  } catch (const std::invalid_argument& error) {
    return CommandFailure(kExitBadInput, error.what());
  } catch (const IoError& error) {
    return CommandFailure(kExitIoFailure, error.what());
  } catch (const CapacityError& error) {
    return CommandFailure(kExitIoFailure,
                          fmt::format("capacity: {}", error.what()));
  } catch (const std::bad_alloc&) {
    return CommandFailure(kExitIoFailure, "out of memory");
  } catch (const std::exception& error) {
    return CommandFailure(kExitIoFailure, error.what());
  } catch (...) {
    return CommandFailure(kExitIoFailure, "unknown exception");
  }
}

}  // namespace kvprefix::cli
