// Running an external program with a deadline: see subprocess.h.
#include "verify/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <system_error>
#include <vector>

extern char** environ;

namespace kvprefix::verify {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes moved per read(2)/write(2): one pipe buffer's worth.
constexpr std::size_t kChunkBytes = 64 * 1024;

// How long the output pipes may stay open after the command itself exited:
// a background child it left (`sleep 30 & ./answer.sh`) holds them open, and
// waiting for it would turn a finished answer into a timeout.
constexpr std::chrono::milliseconds kExitGrace{100};

// How often the I/O loop looks whether the command exited (there is no
// descriptor to poll for that) while its pipes are open.
constexpr int kExitCheckMilliseconds = 10;

[[noreturn]] void ThrowErrno(int error, const char* what) {
  throw std::system_error(error, std::generic_category(), what);
}

// Owns one file descriptor; closing twice is harmless.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }

  int get() const { return fd_; }
  bool is_open() const { return fd_ >= 0; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read_end;
  Fd write_end;
};

Pipe MakePipe() {
  std::array<int, 2> fds;
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) ThrowErrno(errno, "pipe2");
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

void SetNonBlocking(const Fd& fd) {
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) < 0) {
    ThrowErrno(errno, "fcntl(O_NONBLOCK)");
  }
}

// posix_spawn's attribute and file-action objects, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawnattr_init(&attr_);
    ::posix_spawn_file_actions_init(&actions_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attr_);
  }
  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

pid_t Spawn(const std::string& command, const Pipe& in, const Pipe& out,
            const Pipe& err) {
  SpawnSetup setup;
  ::posix_spawn_file_actions_adddup2(setup.actions(), in.read_end.get(), 0);
  ::posix_spawn_file_actions_adddup2(setup.actions(), out.write_end.get(), 1);
  ::posix_spawn_file_actions_adddup2(setup.actions(), err.write_end.get(), 2);
  // Its own process group, so a timeout kills the shell and its children;
  // default signal handling, since an ignored SIGPIPE would be inherited.
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  ::posix_spawnattr_setpgroup(setup.attr(), 0);
  ::posix_spawnattr_setsigdefault(setup.attr(), &default_signals);
  ::posix_spawnattr_setsigmask(setup.attr(), &no_signals);
  ::posix_spawnattr_setflags(setup.attr(), POSIX_SPAWN_SETPGROUP |
                                               POSIX_SPAWN_SETSIGDEF |
                                               POSIX_SPAWN_SETSIGMASK);
  std::string shell = "/bin/sh";
  std::string dash_c = "-c";
  std::string command_copy = command;
  char* argv[] = {shell.data(), dash_c.data(), command_copy.data(), nullptr};
  pid_t pid = 0;
  const int error = ::posix_spawn(&pid, shell.c_str(), setup.actions(),
                                  setup.attr(), argv, environ);
  if (error != 0) ThrowErrno(error, "posix_spawn /bin/sh");
  return pid;
}

// Milliseconds until `deadline`, rounded up, for poll(2); 0 when past.
int MillisecondsUntil(Clock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1 << 30));
}

// Reads what is available from `fd` into `out`; closes `fd` at end of file
// or on error.
void Drain(Fd& fd, std::string& out) {
  char buffer[kChunkBytes];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    out.append(buffer, static_cast<std::size_t>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    fd.Close();
  }
}

// write(2) to a pipe whose reader may be gone, without changing the
// process's SIGPIPE disposition (the program owns it): SIGPIPE is blocked in
// this thread for the call, and the one the write raised, if it failed with
// EPIPE, is taken off the thread's pending signals (sigtimedwait with a zero
// timeout), as PostgreSQL's libpq does. A SIGPIPE already pending before is
// left for its owner. errno as write(2) left it.
ssize_t WriteWithoutSigpipe(int fd, const char* data, std::size_t size) {
  sigset_t sigpipe;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  sigset_t previous;
  ::pthread_sigmask(SIG_BLOCK, &sigpipe, &previous);
  const ssize_t n = ::write(fd, data, size);
  const int error = errno;
  if (n < 0 && error == EPIPE && !was_pending) {
    const timespec no_wait = {0, 0};
    while (::sigtimedwait(&sigpipe, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = error;
  return n;
}

// Writes what the pipe accepts of input[written..]; closes `fd` when the
// reader is gone (EPIPE), and when all is written if `close_at_end`.
void Feed(Fd& fd, std::string_view input, std::size_t& written,
          bool close_at_end = true) {
  const std::size_t count = std::min(kChunkBytes, input.size() - written);
  const ssize_t n =
      WriteWithoutSigpipe(fd.get(), input.data() + written, count);
  if (n > 0) written += static_cast<std::size_t>(n);
  if ((close_at_end && written == input.size()) ||
      (n < 0 && errno != EAGAIN && errno != EINTR)) {
    fd.Close();
  }
}

// Keeps standard error's tail: trims `data` to kMaxStderrBytes once it has
// grown to twice that (so that trimming costs O(1) per byte read).
void TrimStderr(std::string& data, std::size_t limit = 2 * kMaxStderrBytes) {
  if (data.size() > limit) data.erase(0, data.size() - kMaxStderrBytes);
}

// True once `pid` has exited. It is not reaped (WNOWAIT): until it is, its
// pid, which is also its process group's id, cannot be reused, so killing
// the group cannot hit an unrelated process.
bool HasExited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info,
               WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno == EINTR) return false;
    ThrowErrno(errno, "waitid");
  }
  return info.si_pid == pid;
}

// Kills what is left of the group (children the command left behind, or
// all of it on timeout) and reaps the command into `status`.
void KillGroupAndReap(pid_t pid, int& status) {
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::string ShellQuote(std::string_view text) {
  const auto is_control = [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
  };
  if (std::any_of(text.begin(), text.end(), is_control)) {
    std::string quoted = "$'";
    for (char c : text) {
      if (is_control(c)) {
        quoted += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      } else {
        if (c == '\'' || c == '\\') quoted += '\\';
        quoted += c;
      }
    }
    return quoted + "'";
  }
  std::string quoted = "'";
  for (char c : text) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

SubprocessResult RunSubprocess(const std::string& command,
                               std::string_view input,
                               const SubprocessOptions& options) {
  Pipe in = MakePipe();
  Pipe out = MakePipe();
  Pipe err = MakePipe();
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + options.timeout;
  const pid_t pid = Spawn(command, in, out, err);
  in.read_end.Close();
  out.write_end.Close();
  err.write_end.Close();
  SetNonBlocking(in.write_end);
  SetNonBlocking(out.read_end);
  SetNonBlocking(err.read_end);

  SubprocessResult result;
  std::size_t written = 0;
  if (input.empty()) in.write_end.Close();
  bool exited = false;  // the command itself (not its children) has exited
  Clock::time_point pipes_deadline = deadline;
  while (out.read_end.is_open() || err.read_end.is_open()) {
    std::vector<pollfd> fds;
    std::vector<Fd*> owners;
    for (auto [fd, events] :
         {std::pair{&in.write_end, POLLOUT}, std::pair{&out.read_end, POLLIN},
          std::pair{&err.read_end, POLLIN}}) {
      if (!fd->is_open()) continue;
      fds.push_back(pollfd{fd->get(), static_cast<short>(events), 0});
      owners.push_back(fd);
    }
    if (!exited && HasExited(pid)) {
      exited = true;
      pipes_deadline = std::min(deadline, Clock::now() + kExitGrace);
    }
    int timeout_ms = MillisecondsUntil(pipes_deadline);
    if (timeout_ms == 0) {
      // After the grace period the answer is what was read so far.
      if (!exited) result.kind = ExitKind::kTimedOut;
      break;
    }
    if (!exited) timeout_ms = std::min(timeout_ms, kExitCheckMilliseconds);
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      ThrowErrno(errno, "poll");
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (owners[i] == &in.write_end) {
        Feed(in.write_end, input, written);
      } else if (owners[i] == &out.read_end) {
        Drain(out.read_end, result.stdout_data);
      } else {
        Drain(err.read_end, result.stderr_data);
        TrimStderr(result.stderr_data);
      }
    }
    if (result.stdout_data.size() > options.max_output_bytes) {
      result.kind = ExitKind::kOutputLimit;
      break;
    }
  }
  in.write_end.Close();

  if (result.kind == ExitKind::kExited) {
    // Both outputs are closed; wait for the exit itself, still bounded by
    // the deadline (a child may close its outputs and then hang).
    while (!HasExited(pid)) {
      if (MillisecondsUntil(deadline) == 0) {
        result.kind = ExitKind::kTimedOut;
        break;
      }
      ::poll(nullptr, 0, 1);
    }
  }
  int status = 0;
  KillGroupAndReap(pid, status);
  result.elapsed = Clock::now() - start;
  TrimStderr(result.stderr_data, kMaxStderrBytes);
  if (result.kind == ExitKind::kExited) {
    if (WIFSIGNALED(status)) {
      result.kind = ExitKind::kSignaled;
      result.signal = WTERMSIG(status);
    } else {
      result.exit_status = WEXITSTATUS(status);
    }
  }
  return result;
}

struct LineProcess::State {
  explicit State(const std::string& command)
      : in(MakePipe()), out(MakePipe()), err(MakePipe()) {
    pid = Spawn(command, in, out, err);
    in.read_end.Close();
    out.write_end.Close();
    err.write_end.Close();
    SetNonBlocking(in.write_end);
    SetNonBlocking(out.read_end);
    SetNonBlocking(err.read_end);
  }

  // Reads what `fd` holds now, without waiting, into `data`.
  static void DrainNow(Fd& fd, std::string& data) {
    while (fd.is_open()) {
      const std::size_t before = data.size();
      Drain(fd, data);
      if (data.size() == before) break;  // nothing more (EAGAIN) or closed
    }
  }

  // Kills what is left of the group and reaps the command, once.
  int KillAndReap() {
    int status = 0;
    if (!reaped) KillGroupAndReap(pid, status);
    reaped = true;
    usable = false;
    return status;
  }

  Pipe in;
  Pipe out;
  Pipe err;
  pid_t pid = -1;
  bool usable = true;
  bool reaped = false;
  std::string stderr_data;
};

LineProcess::LineProcess(const std::string& command)
    : state_(std::make_unique<State>(command)) {}

LineProcess::~LineProcess() {
  State& state = *state_;
  if (state.reaped) return;
  // End of input is the polite way to stop; a command that ignores it is
  // killed after the grace period.
  state.in.write_end.Close();
  const Clock::time_point deadline = Clock::now() + kExitGrace;
  try {
    while (!HasExited(state.pid) && Clock::now() < deadline) {
      ::poll(nullptr, 0, 1);
    }
  } catch (const std::system_error&) {
    // waitid failed: the kill below still ends the group.
  }
  state.KillAndReap();
}

bool LineProcess::usable() const { return state_->usable; }

LineExchange LineProcess::Exchange(std::string_view line,
                                   const SubprocessOptions& options,
                                   std::chrono::milliseconds late_output_wait) {
  State& state = *state_;
  LineExchange result;
  const Clock::time_point deadline = Clock::now() + options.timeout;
  // A command that exited after its last answer is not this line's fault.
  result.exited_before = HasExited(state.pid);
  // Anything on standard output now was printed after the last answer.
  State::DrainNow(state.out.read_end, result.before);
  State::DrainNow(state.err.read_end, state.stderr_data);
  std::string output;       // standard output read for this line
  std::size_t scanned = 0;  // bytes of `output` without a newline
  std::size_t newline = std::string::npos;
  std::size_t written = 0;
  bool exited = false;  // the command itself (not its children) has exited
  Clock::time_point pipes_deadline = deadline;
  while (state.out.read_end.is_open()) {
    std::vector<pollfd> fds;
    std::vector<Fd*> owners;
    for (auto [fd, events] : {std::pair{&state.in.write_end, POLLOUT},
                              std::pair{&state.out.read_end, POLLIN},
                              std::pair{&state.err.read_end, POLLIN}}) {
      if (!fd->is_open()) continue;
      if (fd == &state.in.write_end && written == line.size()) continue;
      fds.push_back(pollfd{fd->get(), static_cast<short>(events), 0});
      owners.push_back(fd);
    }
    if (!exited && HasExited(state.pid)) {
      exited = true;
      pipes_deadline = std::min(deadline, Clock::now() + kExitGrace);
    }
    int timeout_ms = MillisecondsUntil(pipes_deadline);
    if (timeout_ms == 0) break;
    if (!exited) timeout_ms = std::min(timeout_ms, kExitCheckMilliseconds);
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      ThrowErrno(errno, "poll");
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (owners[i] == &state.in.write_end) {
        Feed(state.in.write_end, line, written, /*close_at_end=*/false);
      } else if (owners[i] == &state.out.read_end) {
        Drain(state.out.read_end, output);
      } else {
        Drain(state.err.read_end, state.stderr_data);
        TrimStderr(state.stderr_data);
      }
    }
    newline = output.find('\n', scanned);
    if (newline != std::string::npos) break;
    scanned = output.size();
    if (output.size() > options.max_output_bytes) {
      result.kind = LineExchange::Kind::kOutputLimit;
      break;
    }
  }
  if (newline != std::string::npos) {
    result.line = output.substr(0, newline + 1);
    result.after = output.substr(newline + 1);
    result.unwritten = line.size() - written;
    // Whatever came with the answer belongs to this exchange, and so does
    // what comes within late_output_wait.
    State::DrainNow(state.out.read_end, result.after);
    const Clock::time_point late_deadline = Clock::now() + late_output_wait;
    while (result.after.empty() && state.out.read_end.is_open()) {
      const int wait_ms = MillisecondsUntil(late_deadline);
      if (wait_ms == 0) break;
      pollfd out{state.out.read_end.get(), POLLIN, 0};
      if (::poll(&out, 1, wait_ms) < 0) {
        if (errno == EINTR) continue;
        ThrowErrno(errno, "poll");
      }
      if (out.revents != 0) Drain(state.out.read_end, result.after);
    }
    if (!result.before.empty() || !result.after.empty() ||
        result.unwritten > 0) {
      state.usable = false;  // out of step with its input: start afresh
    }
  } else {
    result.line = std::move(output);
    if (result.kind != LineExchange::Kind::kOutputLimit) {
      // Output closed, or the command exited and its children kept the
      // output past the grace period: it ended. Else the deadline passed.
      const bool ended = !state.out.read_end.is_open() || exited;
      result.kind =
          ended ? LineExchange::Kind::kClosed : LineExchange::Kind::kTimedOut;
    }
    if (result.kind == LineExchange::Kind::kClosed) {
      // Its output is closed; wait for the exit itself, still bounded by
      // the deadline (it may close its output and then hang).
      while (!HasExited(state.pid)) {
        if (MillisecondsUntil(deadline) == 0) {
          result.exit = ExitKind::kTimedOut;
          break;
        }
        ::poll(nullptr, 0, 1);
      }
    }
    State::DrainNow(state.err.read_end, state.stderr_data);
    const int status = state.KillAndReap();
    if (result.kind == LineExchange::Kind::kClosed &&
        result.exit == ExitKind::kExited) {
      if (WIFSIGNALED(status)) {
        result.exit = ExitKind::kSignaled;
        result.signal = WTERMSIG(status);
      } else {
        result.exit_status = WEXITSTATUS(status);
      }
    }
  }
  TrimStderr(state.stderr_data, kMaxStderrBytes);
  result.stderr_tail = state.stderr_data;
  return result;
}

}  // namespace kvprefix::verify
