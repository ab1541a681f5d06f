// Running an external program with a deadline: feed it standard input, collect
// standard output and standard error, and survive whatever it does (hang,
// crash, flood its output, close its input early).
#ifndef KVPREFIX_VERIFY_SUBPROCESS_H_
#define KVPREFIX_VERIFY_SUBPROCESS_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace kvprefix::verify {

// How a subprocess ended.
enum class ExitKind {
  kExited,       // returned from main / called exit(): see exit_status
  kSignaled,     // killed by a signal it did not handle: see signal
  kTimedOut,     // still running at the deadline; its process group was killed
  kOutputLimit,  // wrote more than max_output_bytes; its group was killed
};

struct SubprocessResult {
  ExitKind kind = ExitKind::kExited;
  int exit_status = 0;  // kExited only; 127 when /bin/sh cannot find it
  int signal = 0;       // kSignaled only
  std::string stdout_data;
  std::string stderr_data;  // its last kMaxStderrBytes bytes
  std::chrono::nanoseconds elapsed{0};
};

struct SubprocessOptions {
  std::chrono::milliseconds timeout{10'000};
  std::size_t max_output_bytes = std::size_t{1} << 30;
};

// Bytes of standard error kept (the tail, where the error usually is).
inline constexpr std::size_t kMaxStderrBytes = 4096;

// Runs `/bin/sh -c command` (posix_spawn) in a new process group, writes
// `input` to its standard input, then closes it, and reads its standard output
// and error until both reach end of file and it exits, or the deadline passes.
// Once the command itself has exited, its outputs get 100 ms more to reach
// end of file (a background child it started may keep them open); then the
// result is its exit and the output read so far. When it returns, whatever
// is left of the process group has been killed with SIGKILL.
// Writing and reading are interleaved in one poll(2) loop, so neither side can
// deadlock on a full pipe whatever the sizes. A child that stops reading its
// input early is fine: the unwritten rest is dropped, and the SIGPIPE of
// that write is blocked in the calling thread and discarded, whatever the
// process's SIGPIPE disposition, which is left as it is (the child gets the
// default one). On timeout or output flood the whole process group gets
// SIGKILL, so a shell's children die too.
// Cost: O(input + output bytes). Throws std::system_error if pipes cannot be
// created or the shell cannot be spawned (resource failures, not the child's
// fault). Thread-safe; installs no signal handler.
SubprocessResult RunSubprocess(const std::string& command,
                               std::string_view input,
                               const SubprocessOptions& options);

// `text` quoted for /bin/sh: in single quotes, each ' written '\''.
std::string ShellQuote(std::string_view text);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_SUBPROCESS_H_
