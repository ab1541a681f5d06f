// The `kvprefix` command-line tool: installs the process's signal handlers,
// then runs every subcommand by RunCommandLine (run.h), which maps every
// failure to one stderr line and an exit status (SPEC §6).
#include <signal.h>

#include <csignal>

#include "cli/commands.h"
#include "cli/run.h"
#include "io/json_kernel.h"
#include "io/json_output.h"

namespace {

// Signals whose default action ends the process (kSignalsThatEndAWrite):
// each first removes the temporary file of an output being written
// (io/json_output.h), so that an interrupted run leaves no `.name.XXXXXX`
// behind, then ends the process by the default action (SIGQUIT and SIGXCPU
// still dump core). Async-signal-safe: unlink, signal and raise.
extern "C" void RemoveTemporaryFileAndDie(int signal_number) {
  kvprefix::RemoveTemporaryFileInFlight();
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);  // delivered with the default action on return
}

// The tool owns the process's signals and exit handlers; the libraries
// install none. A plugin's crash, exit() or hang is not handled here: the
// commands that run a plugin run it in a child process (cli/supervised.h,
// verify/isolation.h) that reports it.
void InstallSignalHandlers() {
  // A closed output pipe (`kvprefix match ... | head -c 10`) becomes a write
  // error reported as "Broken pipe" with exit status 1, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  // Likewise an output past the file size limit (ulimit -f) becomes "File
  // too large" (EFBIG), exit status 1, and the temporary file is removed,
  // instead of a death by SIGXFSZ that leaves it behind.
  std::signal(SIGXFSZ, SIG_IGN);
  for (const int signal_number : kvprefix::kSignalsThatEndAWrite) {
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
  // libsimdjson picks its kernel in a function-local static at its first
  // parse, inside a noexcept function: if that first parse runs out of
  // memory (on a reader thread of a large trace) the process aborts
  // ("terminate called without an active exception") instead of reporting
  // it. Picking it here, before any input is read, leaves nothing for a
  // parse to allocate but its own buffers, which fail cleanly.
  kvprefix::ActiveJsonKernel();
  namespace cli = kvprefix::cli;
  static constexpr cli::RegisterCommand kCommands[] = {
      cli::RegisterMatchCommand,   cli::RegisterReplayCommand,
      cli::RegisterCurveCommand,   cli::RegisterConvertCommand,
      cli::RegisterEnginesCommand, cli::RegisterPoliciesCommand,
      cli::RegisterVerifyCommand};
  return cli::RunCommandLine(argc, argv, kCommands);
}
