// A main for building fuzz targets as plain programs (g++, no libFuzzer):
// runs LLVMFuzzerTestOneInput once on each file named on the command line,
// and on every regular file below each named folder, in sorted order. ctest
// uses it to replay the checked-in seed corpora so the targets never rot; it
// also reproduces a crash file without clang.
//
// Usage: <target>_replay [-timeout=N] PATH...
//   -timeout=N: seconds one input may run (libFuzzer's flag and default,
//     1200; 0 for no limit); past it the program reports a timeout.
//
// Exit status: 0 when every input ran; 1 when a path cannot be read, no
// input was found (an empty corpus replays nothing and proves nothing) or a
// flag is unknown; 70 on a timeout (libFuzzer's -timeout_exitcode). A
// target that finds a bug aborts, as under libFuzzer; a crash or a timeout
// names the input it happened on first ("replay: SIGABRT on input FILE"),
// which libFuzzer's own driver does and a folder replay otherwise hides.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

namespace {

// libFuzzer's exit status for a timeout.
constexpr int kTimeoutStatus = 70;

// The input in flight, for the signal handler (which may read only this).
const char* volatile input_in_flight = nullptr;

void WriteText(const char* text) {
  // Async-signal-safe; a short write is only a shorter report.
  [[maybe_unused]] const ssize_t written =
      write(STDERR_FILENO, text, std::strlen(text));
}

extern "C" void ReportSignal(int signal_number) {
  WriteText("replay: ");
  if (signal_number == SIGALRM) {
    WriteText("timeout");
  } else {
    // glibc's table of names: a lookup, safe in a handler.
    WriteText("SIG");
    WriteText(sigabbrev_np(signal_number));
  }
  if (const char* input = input_in_flight) {
    WriteText(" on input ");
    WriteText(input);
  }
  WriteText("\n");
  if (signal_number == SIGALRM) _exit(kTimeoutStatus);
  // The default action once the handler returns (SA_RESETHAND): a fault
  // faults again, abort() raises again; the exit status stays the signal's.
}

void InstallSignalHandlers() {
  // Its own stack: a stack overflow is one of the crashes to report.
  static char stack[64 * 1024];
  stack_t alternate = {};
  alternate.ss_sp = stack;
  alternate.ss_size = sizeof(stack);
  sigaltstack(&alternate, nullptr);
  struct sigaction action = {};
  action.sa_handler = ReportSignal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int signal_number :
       {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM}) {
    sigaction(signal_number, &action, nullptr);
  }
}

// The files `path` names: itself, or every regular file below it, sorted.
// Throws std::filesystem::filesystem_error when a folder cannot be read.
std::vector<std::filesystem::path> InputFiles(
    const std::filesystem::path& path) {
  if (!std::filesystem::is_directory(path)) return {path};
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool RunFile(const std::filesystem::path& file, unsigned timeout) {
  // The clock runs from the open: waiting on a FIFO with no writer, or on a
  // slow file, is the input's time too.
  input_in_flight = file.c_str();
  alarm(timeout);
  std::ifstream stream(file, std::ios::binary);
  if (!stream) {
    alarm(0);
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(stream)),
                                std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                         bytes.size());
  alarm(0);
  input_in_flight = nullptr;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned timeout = 1200;
  std::vector<std::filesystem::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument.starts_with("-timeout=")) {
      const std::string_view value = argument.substr(9);
      const auto [end, error] =
          std::from_chars(value.data(), value.data() + value.size(), timeout);
      if (error != std::errc() || end != value.data() + value.size() ||
          value.empty()) {
        std::fprintf(stderr, "replay: -timeout=N takes whole seconds: %s\n",
                     argv[i]);
        return 1;
      }
    } else if (argument.starts_with("-")) {
      std::fprintf(stderr,
                   "replay: unknown flag %s (usage: %s [-timeout=N] PATH...)\n",
                   argv[i], argv[0]);
      return 1;
    } else {
      paths.emplace_back(argument);
    }
  }
  InstallSignalHandlers();
  std::size_t inputs = 0;
  for (const auto& path : paths) {
    std::vector<std::filesystem::path> files;
    try {
      files = InputFiles(path);
    } catch (const std::filesystem::filesystem_error& error) {
      // A symlink loop, an unreadable folder: the path's fault, not a
      // crash of the target.
      std::fprintf(stderr, "replay: cannot read %s: %s\n", path.c_str(),
                   error.code().message().c_str());
      return 1;
    }
    for (const auto& file : files) {
      if (!RunFile(file, timeout)) return 1;
      ++inputs;
    }
  }
  std::printf("replayed %zu inputs\n", inputs);
  return inputs == 0 ? 1 : 0;
}
