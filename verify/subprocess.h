// Running an external program with a deadline: feed it standard input, collect
// standard output and standard error, and survive whatever it does (hang,
// crash, flood its output, close its input early).
#ifndef KVPREFIX_VERIFY_SUBPROCESS_H_
#define KVPREFIX_VERIFY_SUBPROCESS_H_

#include <chrono>
#include <cstddef>
#include <memory>
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

// What one LineProcess::Exchange saw.
struct LineExchange {
  enum class Kind {
    kAnswered,     // a whole line came back: see line, before, after
    kClosed,       // standard output reached end of file before a whole
                   // line: see exit, exit_status, signal
    kTimedOut,     // no whole line by the deadline; the group was killed
    kOutputLimit,  // more than max_output_bytes without a newline; killed
  };
  Kind kind = Kind::kAnswered;
  // The answer up to and including its '\n' (kAnswered), or what was read
  // of it (the other kinds).
  std::string line;
  // Output found before the input was written: an earlier answer's extra
  // lines, printed late. Empty for a command that keeps the protocol.
  std::string before;
  // Output read after the answer's '\n' (another line, printed at once).
  std::string after;
  // kAnswered only: bytes of the input that were still unwritten when the
  // answer came (the command answered before reading its whole line).
  std::size_t unwritten = 0;
  // kClosed: kExited (see exit_status), kSignaled (see signal), or
  // kTimedOut when the command was still running with its output closed
  // at the deadline (its group was killed).
  ExitKind exit = ExitKind::kExited;
  int exit_status = 0;
  int signal = 0;
  // kClosed: the command had already exited when the exchange began (after
  // answering the line before, or at start-up).
  bool exited_before = false;
  // The last kMaxStderrBytes bytes of its standard error, over its life.
  std::string stderr_tail;
};

// A command that stays running and answers one line of standard output for
// each line written to its standard input (the JSON Lines protocol of
// verify/README.md). Started as RunSubprocess starts one (`/bin/sh -c`,
// posix_spawn, its own process group, default SIGPIPE), at construction.
// Not thread-safe: one exchange at a time (verify keeps one per job).
class LineProcess {
 public:
  // Throws std::system_error if pipes cannot be created or the shell cannot
  // be spawned.
  explicit LineProcess(const std::string& command);
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;
  // Closes its standard input, gives it kExitGrace (100 ms) to exit, then
  // kills what is left of its process group (SIGKILL) and reaps it.
  ~LineProcess();

  // Writes `line` (one line, its '\n' included) and reads standard output
  // up to the first '\n', within options.timeout from the call (the first
  // exchange's deadline includes the command's start-up). Reading and
  // writing share one poll(2) loop, as in RunSubprocess, so large lines
  // cannot deadlock and a command that stops reading costs an EPIPE only;
  // standard error is drained all along. Output already waiting before the
  // write goes to `before`; output read with the answer after its '\n', or
  // arriving within `late_output_wait` after it (0: none is waited for),
  // to `after`. Only after kAnswered with `before`, `after` and `unwritten`
  // empty can the process take another line (usable()); after anything
  // else it is finished, or out of step with its input. Throws
  // std::system_error on a failing poll(2)/waitid(2). Cost: O(line + answer
  // bytes), plus up to late_output_wait.
  LineExchange Exchange(std::string_view line, const SubprocessOptions& options,
                        std::chrono::milliseconds late_output_wait =
                            std::chrono::milliseconds(0));

  // False once an exchange went wrong: start a new process.
  bool usable() const;

 private:
  struct State;  // the pipes, the pid, standard error's tail
  std::unique_ptr<State> state_;
};

// `text` quoted for a shell: in single quotes, each ' written '\'' (POSIX
// sh). Text holding a control character (ESC, a newline, ...) is written in
// ANSI-C quotes instead, $'...' with each such byte as \xHH (bash, zsh, ksh;
// POSIX.1-2024 sh): a copied command line still runs the same command, and
// printing it cannot drive the terminal. O(bytes).
std::string ShellQuote(std::string_view text);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_SUBPROCESS_H_
