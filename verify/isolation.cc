// Checking in a child process: see isolation.h.
#include "verify/isolation.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <system_error>

#include "engines/registry.h"
#include "io/input_error.h"
#include "io/json_strings.h"
#include "plugin/plugin_engine.h"

namespace kvprefix::verify {
namespace {

using Clock = std::chrono::steady_clock;

// The parent looks at the child this often, at most.
constexpr std::chrono::milliseconds kPollInterval{50};

// The start of the shared mapping; the slots follow it.
struct SharedHeader {
  std::atomic<std::uint64_t> passed{0};
  // The input whose check crashed, plus 1; 0: not known.
  std::atomic<std::uint64_t> crashed_input{0};
  char plugin_call[512] = {};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared across processes: must not hide a lock");
static_assert(sizeof(SharedHeader) % alignof(std::atomic<std::uint64_t>) == 0);

// The bytes of the header and `slots` input slots, rounded up to a cache
// line: the plugin call board (plugin/plugin_engine.h) follows.
constexpr std::size_t BoardOffset(std::size_t slots) {
  const std::size_t bytes =
      sizeof(SharedHeader) + slots * sizeof(std::atomic<std::uint64_t>);
  return (bytes + 63) / 64 * 64;
}

// The shared anonymous mapping, made before the fork: the header, the
// input slots and the board the child publishes its plugin calls on.
class SharedMapping final : public ChildProgress {
 public:
  explicit SharedMapping(std::size_t slots)
      : slots_(std::max<std::size_t>(slots, 1)),
        bytes_(BoardOffset(slots_) + PluginCallBoardBytes()) {
    void* memory = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
      throw std::system_error(errno, std::generic_category(),
                              "verify: cannot map memory shared with the "
                              "checking process");
    }
    header_ = new (memory) SharedHeader();
    slot_ = reinterpret_cast<std::atomic<std::uint64_t>*>(header_ + 1);
    for (std::size_t i = 0; i < slots_; ++i) {
      new (&slot_[i]) std::atomic<std::uint64_t>(0);
    }
    board_ =
        CreatePluginCallBoard(static_cast<char*>(memory) + BoardOffset(slots_));
  }
  ~SharedMapping() override { munmap(header_, bytes_); }
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;

  void Begin(std::size_t slot, std::uint64_t input) override;
  void End(std::size_t slot) override;
  void SetPassed(std::uint64_t count) override {
    header_->passed.store(count, std::memory_order_relaxed);
  }

  SharedHeader& header() { return *header_; }
  PluginCallBoard& board() { return *board_; }
  std::size_t slots() const { return slots_; }
  // The input in flight in `slot`, plus 1; 0: none.
  std::uint64_t InFlight(std::size_t slot) const {
    return slot_[slot].load(std::memory_order_relaxed);
  }

 private:
  const std::size_t slots_;
  const std::size_t bytes_;
  SharedHeader* header_;
  std::atomic<std::uint64_t>* slot_;
  PluginCallBoard* board_;
};

// The child's crash handler's view: the mapping, and the input the
// crashing thread was checking (plus 1).
SharedHeader* child_header = nullptr;
thread_local std::uint64_t thread_input = 0;

void SharedMapping::Begin(std::size_t slot, std::uint64_t input) {
  slot_[slot].store(input + 1, std::memory_order_relaxed);
  thread_input = input + 1;
}

void SharedMapping::End(std::size_t slot) {
  slot_[slot].store(0, std::memory_order_relaxed);
  thread_input = 0;
}

// Records the input and the plugin call, then dies by the signal's default
// action. Async-signal-safe: atomic stores, DescribePluginCallInFlight,
// signal and raise.
extern "C" void RecordCrashAndDie(int signal_number) {
  if (child_header != nullptr) {
    child_header->crashed_input.store(thread_input, std::memory_order_relaxed);
    DescribePluginCallInFlight(child_header->plugin_call,
                               sizeof(child_header->plugin_call));
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

void InstallChildCrashHandlers(SharedHeader& header) {
  child_header = &header;
  InstallCrashHandler(RecordCrashAndDie);
}

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;  // the parent is gone: nobody to tell
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

// exit() called in the child (by a plugin: kvprefix's code never calls
// it) ends it at once with the plugin's status, as _exit() would: the
// parent's atexit handlers and static destructors are not the child's to
// run, and other threads may still be running plugin calls.
extern "C" void ExitAtOnce(int status, void* /*unused*/) { _exit(status); }

// The child: runs the body, writes 'R' and its result, or 'E', the kind of
// exception ('I' bad usage or input, 'M' out of memory, 'O' other) and its
// message, and exits.
[[noreturn]] void RunChild(
    SharedMapping& shared, int result_fd,
    const std::function<std::string(ChildProgress&)>& body) {
  InstallChildCrashHandlers(shared.header());
  PublishPluginCalls(shared.board());
  on_exit(ExitAtOnce, nullptr);
  std::string message;
  try {
    message = "R" + body(shared);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      message = std::string("EO") + ErrnoError("<stdout>", "write").what();
    }
  } catch (const std::invalid_argument& error) {
    message = std::string("EI") + error.what();
  } catch (const InputError& error) {
    message = std::string("EI") + error.what();
  } catch (const std::bad_alloc&) {
    message = "EM";
  } catch (const std::exception& error) {
    message = std::string("EO") + error.what();
  }
  std::fflush(stdout);
  WriteAll(result_fd, message);
  _exit(0);
}

// The plugin calls in flight in the child, as the parent saw them: per
// board slot the call (0: none) and since when it has been there.
struct Watch {
  std::vector<std::uint64_t> seen;
  std::vector<Clock::time_point> since;

  void Resize(std::size_t slots, Clock::time_point now) {
    seen.resize(std::max(seen.size(), slots), 0);
    since.resize(seen.size(), now);
  }
  // Records that `slot` holds `call` at `now`; returns how long it has
  // held that call (0 for none).
  Clock::duration Update(std::size_t slot, std::uint64_t call,
                         Clock::time_point now) {
    if (call != seen[slot]) {
      seen[slot] = call;
      since[slot] = now;
    }
    return call == 0 ? Clock::duration::zero() : now - since[slot];
  }
  // The description of the call in flight longest, or "" if none is.
  std::string Oldest(const PluginCallBoard& board) const {
    std::size_t oldest = seen.size();
    for (std::size_t slot = 0; slot < seen.size(); ++slot) {
      if (seen[slot] != 0 &&
          (oldest == seen.size() || since[slot] < since[oldest])) {
        oldest = slot;
      }
    }
    return oldest == seen.size() ? "" : DescribePluginCall(board, seen[oldest]);
  }
};

// Reads what is readable from `fd` into `out`; false at end of file.
bool ReadAvailable(int fd, std::string& out) {
  char buffer[65536];
  for (;;) {
    const ssize_t count = read(fd, buffer, sizeof(buffer));
    if (count > 0) {
      out.append(buffer, static_cast<std::size_t>(count));
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    return count < 0;  // EAGAIN: more may come; 0: end of file
  }
}

void ThrowErrno(const char* what) {
  throw std::system_error(errno, std::generic_category(),
                          std::string("verify: cannot ") + what);
}

}  // namespace

ChildResult RunInChild(std::size_t slots, std::chrono::milliseconds timeout,
                       const std::function<std::string(ChildProgress&)>& body) {
  SharedMapping shared(slots);
  // Else the child inherits what is buffered and prints it again.
  std::fflush(stdout);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) ThrowErrno("create a pipe");
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    errno = error;
    ThrowErrno("fork the checking process");
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    RunChild(shared, pipe_fds[1], body);
  }
  close(pipe_fds[1]);
  const int fd = pipe_fds[0];
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

  ChildResult result;
  std::string received;
  // Each slot's input and since when the parent has seen it there.
  std::vector<std::uint64_t> seen(shared.slots(), 0);
  std::vector<Clock::time_point> since(shared.slots(), Clock::now());
  Watch calls;  // the plugin call each of the child's threads is in
  const auto interval = std::min(kPollInterval, timeout);
  int status = 0;
  for (bool open = true;;) {
    if (open) {
      pollfd watch = {.fd = fd, .events = POLLIN, .revents = 0};
      poll(&watch, 1, static_cast<int>(interval.count()));
      open = ReadAvailable(fd, received);
    }
    // At the end of the pipe the child is exiting: wait for it.
    const pid_t waited = waitpid(pid, &status, open ? WNOHANG : 0);
    if (waited == pid) break;
    if (waited < 0 && errno == ECHILD) {
      // SIGCHLD ignored: the child was reaped unseen; its pipe tells.
      status = 0;
      break;
    }
    const Clock::time_point now = Clock::now();
    for (std::size_t slot = 0; slot < shared.slots(); ++slot) {
      const std::uint64_t input = shared.InFlight(slot);
      if (input != seen[slot]) {
        seen[slot] = input;
        since[slot] = now;
      } else if (input != 0 && now - since[slot] >= timeout) {
        result.end = ChildResult::End::kTimedOut;
        result.input = input - 1;
        break;
      }
    }
    // A plugin call that has not returned for the timeout (the input's
    // slot, set before it, times out first when there is one).
    const PluginCallBoard& board = shared.board();
    calls.Resize(PluginCallSlots(board), now);
    for (std::size_t slot = 0; slot < calls.seen.size(); ++slot) {
      if (calls.Update(slot, PluginCallInSlot(board, slot), now) >= timeout) {
        result.end = ChildResult::End::kTimedOut;
      }
    }
    if (result.end == ChildResult::End::kTimedOut) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.plugin_call = calls.Oldest(board);
      break;
    }
  }
  ReadAvailable(fd, received);  // what it wrote before it ended
  close(fd);

  SharedHeader& header = shared.header();
  result.passed = header.passed.load(std::memory_order_relaxed);
  for (std::size_t slot = 0; slot < shared.slots(); ++slot) {
    if (const std::uint64_t input = shared.InFlight(slot); input != 0) {
      result.in_flight.push_back(input - 1);
    }
  }
  std::sort(result.in_flight.begin(), result.in_flight.end());
  if (result.end == ChildResult::End::kTimedOut) return result;
  if (WIFSIGNALED(status)) {
    result.end = ChildResult::End::kSignaled;
    result.signal = WTERMSIG(status);
    if (const std::uint64_t input = header.crashed_input.load(); input != 0) {
      result.input = input - 1;
    }
    header.plugin_call[sizeof(header.plugin_call) - 1] = '\0';
    result.plugin_call = header.plugin_call;
    return result;
  }
  if (received.empty()) {
    result.end = ChildResult::End::kExited;
    result.exit_status = WEXITSTATUS(status);
    calls.Resize(PluginCallSlots(shared.board()), Clock::now());
    for (std::size_t slot = 0; slot < calls.seen.size(); ++slot) {
      calls.Update(slot, PluginCallInSlot(shared.board(), slot), Clock::now());
    }
    result.plugin_call = calls.Oldest(shared.board());
    return result;
  }
  if (received[0] == 'E') {
    const std::string message = received.substr(2);
    switch (received[1]) {
      case 'I':
        throw std::invalid_argument(message);
      case 'M':
        throw std::bad_alloc();
      default:
        throw IoError(message);
    }
  }
  result.payload = received.substr(1);
  return result;
}

std::string DescribeChildEnd(const ChildResult& result,
                             std::chrono::milliseconds timeout,
                             std::string_view process) {
  // It names the plugin as its table does: escaped.
  const std::string call = EscapeControlCharacters(result.plugin_call);
  switch (result.end) {
    case ChildResult::End::kTimedOut:
      if (!result.plugin_call.empty()) {
        return fmt::format(
            "the plugin hung: {} did not return within {} ms (--timeout) and "
            "was killed",
            call, timeout.count());
      }
      return fmt::format(
          "no answer within {} ms (a plugin that hangs?); {} was killed",
          timeout.count(), process);
    case ChildResult::End::kSignaled: {
      const std::string signal =
          fmt::format("killed by signal {} ({})", result.signal,
                      ::strsignal(result.signal));
      if (!result.plugin_call.empty()) {
        return fmt::format("the plugin crashed: {} in {}", signal, call);
      }
      return fmt::format(
          "{} was {}, outside any plugin call (memory a plugin corrupted?)",
          process, signal);
    }
    case ChildResult::End::kExited:
    case ChildResult::End::kFinished:
      break;
  }
  if (!result.plugin_call.empty()) {
    return fmt::format(
        "the plugin ended the process (exit or _exit, status "
        "{}) in {}",
        result.exit_status, call);
  }
  return fmt::format(
      "{} exited with status {} before it finished, outside any plugin call "
      "(a plugin that calls exit?)",
      process, result.exit_status);
}

Failure ChildFailure(const ChildResult& result,
                     std::chrono::milliseconds timeout) {
  return Failure{result.end == ChildResult::End::kTimedOut
                     ? FailureKind::kTimeout
                     : FailureKind::kCrash,
                 DescribeChildEnd(result, timeout, "the checking process")};
}

void CheckPluginInChild(std::string_view engine,
                        std::chrono::milliseconds timeout) {
  const ChildResult result = RunInChild(1, timeout, [&](ChildProgress&) {
    CheckEngineName(engine);
    return std::string();
  });
  if (result.end != ChildResult::End::kFinished) {
    throw IoError(DescribeChildEnd(
        result, timeout,
        fmt::format("the process loading {}", EscapeForMessage(engine, 1024))));
  }
}

std::string EncodeFailure(const std::optional<Failure>& failure) {
  if (!failure) return "";
  std::string bytes;
  const auto append = [&bytes](const auto& value) {
    bytes.append(reinterpret_cast<const char*>(&value), sizeof(value));
  };
  append(static_cast<std::int32_t>(failure->kind));
  append(static_cast<std::uint8_t>(failure->request.has_value()));
  append(static_cast<std::uint64_t>(failure->request.value_or(0)));
  bytes += failure->message;
  return bytes;
}

std::optional<Failure> DecodeFailure(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  std::int32_t kind;
  std::uint8_t has_request;
  std::uint64_t request;
  const auto take = [&bytes](auto& value) {
    std::memcpy(&value, bytes.data(), sizeof(value));
    bytes.remove_prefix(sizeof(value));
  };
  take(kind);
  take(has_request);
  take(request);
  Failure failure{static_cast<FailureKind>(kind), std::string(bytes)};
  if (has_request != 0) failure.request = static_cast<std::size_t>(request);
  return failure;
}

}  // namespace kvprefix::verify
