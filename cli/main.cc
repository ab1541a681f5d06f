// The `kvprefix` command-line tool: parses the command line with CLI11 and
// maps every failure to one stderr line and an exit status (SPEC §6):
// 0 success, 2 bad input or bad usage, 1 input/output or resource failure.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string_view>

#include "cli/commands.h"
#include "io/input_error.h"
#include "io/json_output.h"
#include "kvprefix/types.h"
#include "kvprefix/version.h"

namespace {

constexpr int kExitIoFailure = 1;
constexpr int kExitBadInput = 2;

int Fail(int status, std::string_view message) {
  fmt::print(stderr, "kvprefix: {}\n", message);
  return status;
}

// What a command printed through stdio (verify's report, --help, --version)
// must have reached standard output: a full disk or a closed stdout is an
// I/O failure (exit 1), not a success. The other commands write their
// output themselves and report such failures where they happen.
int FinishStdout(int status) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  return Fail(kExitIoFailure, kvprefix::ErrnoError("<stdout>", "write").what());
}

// SIGINT, SIGTERM and SIGHUP end the tool as their default action does, but
// first remove the temporary file of an output being written
// (io/json_output.h), so that an interrupted run leaves no `.name.XXXXXX`
// behind. Async-signal-safe: unlink, signal and raise.
extern "C" void RemoveTemporaryFileAndDie(int signal_number) {
  kvprefix::RemoveTemporaryFileInFlight();
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);  // delivered with the default action on return
}

// The tool owns the process's signals; the libraries install no handler.
void InstallSignalHandlers() {
  // A closed output pipe (`kvprefix match ... | head -c 10`) becomes a write
  // error reported as "Broken pipe" with exit status 1, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction previous = {};
    sigaction(signal_number, nullptr, &previous);
    if (previous.sa_handler == SIG_IGN) continue;  // nohup: stays ignored
    struct sigaction action = {};
    action.sa_handler = RemoveTemporaryFileAndDie;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  InstallSignalHandlers();
  CLI::App app(
      "kvprefix: the longest reusable KV-cache prefix of each LLM request "
      "(a token trie; see `kvprefix <command> --help`)",
      "kvprefix");
  app.set_version_flag("--version",
                       fmt::format("kvprefix {}", kvprefix::kVersion),
                       "Print \"kvprefix <version>\" and exit");
  app.require_subcommand(1);
  kvprefix::cli::RegisterMatchCommand(app);
  kvprefix::cli::RegisterReplayCommand(app);
  kvprefix::cli::RegisterCurveCommand(app);
  kvprefix::cli::RegisterConvertCommand(app);
  kvprefix::cli::RegisterEnginesCommand(app);
  kvprefix::cli::RegisterVerifyCommand(app);
  try {
    // CLI11 would say "A subcommand is required" for `kvprefix bogus`.
    kvprefix::cli::CheckCommandName(app, argc, argv, 1, "");
    if (argc > 1 && std::string_view(argv[1]) == "convert") {
      kvprefix::cli::CheckCommandName(*app.get_subcommand("convert"), argc,
                                      argv, 2, "convert ");
    }
    app.parse(argc, argv);
    return FinishStdout(0);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0)
      return FinishStdout(app.exit(error));  // --help, --version
    return Fail(kExitBadInput,
                fmt::format("{} (run with --help for usage)", error.what()));
  } catch (const kvprefix::cli::FileInputError& error) {
    return Fail(kExitBadInput, error.what());
  } catch (const kvprefix::InputError& error) {
    return Fail(kExitBadInput, error.what());
  } catch (const std::invalid_argument& error) {
    return Fail(kExitBadInput, error.what());
  } catch (const kvprefix::IoError& error) {
    return Fail(kExitIoFailure, error.what());
  } catch (const kvprefix::CapacityError& error) {
    return Fail(kExitIoFailure, fmt::format("capacity: {}", error.what()));
  } catch (const std::bad_alloc&) {
    return Fail(kExitIoFailure, "out of memory");
  } catch (const std::exception& error) {
    return Fail(kExitIoFailure, error.what());
  }
}
