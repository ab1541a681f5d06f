// The `kvprefix` command line as a function, so that the tool's main() and
// the Python module's `python3 -m kvprefix` (python/kvprefix_module.cc)
// parse and run the very same commands: the same options, output bytes,
// error line and exit status (SPEC §6).
#ifndef KVPREFIX_CLI_RUN_H_
#define KVPREFIX_CLI_RUN_H_

#include <CLI/CLI.hpp>
#include <span>
#include <stdexcept>
#include <string>

namespace kvprefix::cli {

// Adds one subcommand to an app: a Register*Command of commands.h.
using RegisterCommand = void (*)(CLI::App& app);

// Runs the command line argv[0..argc) (argv[0] is the program, not read)
// with the subcommands `commands` registers, in that order (as `kvprefix
// --help` and an unknown command's error list them): parses it with CLI11
// and runs the command, which writes its output itself. Returns the exit
// status: 0 on success (--help and --version print to stdout); otherwise,
// after printing one line "kvprefix: <message>" to stderr, 2 for bad input
// or bad usage and 1 for an input/output or resource failure (running out
// of memory included). Throws nothing. stdio's stdout is flushed before it
// returns, and a failed flush is an input/output failure. A closed output
// pipe is reported as such only if the caller ignores SIGPIPE (the tool's
// main() does; so does the Python interpreter). Not thread-safe: it writes
// to the process's standard output and error.
int RunCommandLine(int argc, char** argv,
                   std::span<const RegisterCommand> commands);

// A command's failure as RunCommandLine reports it: the exit status (1 or
// 2) and the message of its stderr line, without "kvprefix: ". Thrown as
// it is by a command that already knows both (a supervised child's
// failure, cli/supervised.h); RunCommandLine prints it unchanged.
class CommandFailure : public std::runtime_error {
 public:
  CommandFailure(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// The CommandFailure that RunCommandLine makes of the exception being
// handled (call it inside a catch block): InputError, FileInputError and
// std::invalid_argument are bad input (2); IoError, CapacityError
// ("capacity: ..."), std::bad_alloc ("out of memory") and any other
// exception are failures (1). Throws nothing. O(message).
CommandFailure CurrentFailure();

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_RUN_H_
