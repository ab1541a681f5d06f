// The `kvprefix` command-line tool: every subcommand, run by
// RunCommandLine (run.h), which maps every failure to one stderr line and
// an exit status (SPEC §6).
#include <csignal>

#include "cli/commands.h"
#include "cli/run.h"

int main(int argc, char** argv) {
  // A closed output pipe (`kvprefix match ... | head -c 10`) becomes a write
  // error reported as "Broken pipe" with exit status 1, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  namespace cli = kvprefix::cli;
  static constexpr cli::RegisterCommand kCommands[] = {
      cli::RegisterMatchCommand,   cli::RegisterReplayCommand,
      cli::RegisterCurveCommand,   cli::RegisterConvertCommand,
      cli::RegisterEnginesCommand, cli::RegisterVerifyCommand};
  return cli::RunCommandLine(argc, argv, kCommands);
}
