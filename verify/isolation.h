// Checking in a child process, so that an engine plugin that crashes or
// hangs is reported as a failure of the input it was given instead of
// taking verify with it: a plugin (plugin/plugin_engine.h) runs in
// kvprefix's address space, unlike a --cmd command. The commands that run
// a plugin (replay, match) run in such a child too (cli/supervised.h).
//
// The child is forked (it inherits the loaded plugins, the inputs and the
// checker) and runs the checks; it publishes which input each of its jobs
// is checking in a shared anonymous mapping, a relaxed atomic store per
// input and no system call, so checks run at in-process speed. The parent
// waits, polling the child every 50 ms (or --timeout, if shorter): if the
// child is killed by a signal it knows the input being checked and the
// plugin call in flight (written by the child's crash handler); if one
// input has been in flight for longer than the timeout, it kills the child
// and knows the input that hung. The child also publishes the plugin call
// each of its threads is in (PluginCallBoard, in the same mapping): one
// call in flight for longer than the timeout is a hang too, and an exit
// or a hang is named by its call.
#ifndef KVPREFIX_VERIFY_ISOLATION_H_
#define KVPREFIX_VERIFY_ISOLATION_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verify/checker.h"
#include "verify/failure.h"

namespace kvprefix::verify {

// The child's side of the shared mapping: what each job is checking.
// Begin and End of one slot are called from one thread; slots differ per
// thread.
class ChildProgress {
 public:
  virtual ~ChildProgress() = default;
  // Job `slot` (< the slots RunInChild was given) starts or ends checking
  // input number `input` (0-based, in the run's order). O(1), no syscall.
  virtual void Begin(std::size_t slot, std::uint64_t input) = 0;
  virtual void End(std::size_t slot) = 0;
  // Inputs 0 to `count` - 1 are checked and passed.
  virtual void SetPassed(std::uint64_t count) = 0;
};

// How a child ended, as its parent saw it.
struct ChildResult {
  enum class End {
    kFinished,  // the body returned `payload`
    kSignaled,  // killed by `signal`
    kExited,    // exited with `exit_status` before the body returned
    kTimedOut,  // one input in flight longer than the timeout: killed
  };
  End end = End::kFinished;
  std::string payload;
  int signal = 0;
  int exit_status = 0;
  // kSignaled: the input whose check crashed (when the crash happened in a
  // job's thread); kTimedOut: the input that ran too long.
  std::optional<std::uint64_t> input;
  // kSignaled, kExited, kTimedOut: the inputs in flight at the end, and how
  // many had passed before them (SetPassed).
  std::vector<std::uint64_t> in_flight;
  std::uint64_t passed = 0;
  // The plugin call the end happened in, as DescribePluginCallInFlight
  // names it ("match #3 of plugin 'mycache' (./libmycache.so)"), or "":
  // kSignaled, the call of the thread that crashed (its crash handler's);
  // kExited, the call in flight longest when the child ended (exit() or
  // _exit() inside it); kTimedOut, the call in flight longest.
  std::string plugin_call;
};

// Forks a child that runs body(progress) with `slots` job slots, sends its
// result to the parent and exits (_exit: no atexit handler or static
// destructor of the parent's runs twice), and waits for it as above. The
// child publishes its plugin calls (PublishPluginCalls, plugin_engine.h),
// so that any one call in flight for longer than `timeout` (loading a
// plugin included) is a timeout as well, and an exit in a call is named.
// The
// child's standard output is flushed before it exits (a write error there
// is the parent's IoError); the parent's is flushed before the fork, so
// that its buffer is not printed twice.
// An exception from the body is rethrown in the parent: std::invalid_argument
// and InputError as std::invalid_argument (exit status 2), std::bad_alloc as
// itself, anything else as IoError with its message (exit status 1).
// Throws std::system_error if fork, pipe or mmap fail. Installs crash
// handlers (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) in the child only.
// Not thread-safe: call it from a process's only thread (a child of a
// multi-threaded process could inherit a lock held by another thread).
ChildResult RunInChild(std::size_t slots, std::chrono::milliseconds timeout,
                       const std::function<std::string(ChildProgress&)>& body);

// What a child's end means, in one line naming the plugin call it
// happened in when known (`result.plugin_call`), and the child as
// `process` otherwise: "the plugin crashed: killed by signal 11
// (Segmentation fault) in match #3 of plugin 'mycache' (./libmycache.so)",
// "the plugin ended the process (exit or _exit, status 0) in create #1 of
// plugin ...", "the plugin hung: match #3 of plugin ... did not return
// within 200 ms (--timeout) and was killed".
// `result.end` is not kFinished. O(message).
std::string DescribeChildEnd(const ChildResult& result,
                             std::chrono::milliseconds timeout,
                             std::string_view process);

// The failure a child's end means: kCrash for a signal or an early exit,
// kTimeout for a hang, with DescribeChildEnd's message ("the checking
// process"). `result.end` is not kFinished.
Failure ChildFailure(const ChildResult& result,
                     std::chrono::milliseconds timeout);

// Loads the plugin `engine` names ("plugin:PATH") in a child process
// (RunInChild), so that its constructors and entry point cannot end or
// hang the caller: throws what loading throws (PluginError's message as
// IoError, exit status 1), or IoError with DescribeChildEnd's line when
// loading crashed, exited or took longer than `timeout`. Not thread-safe
// (RunInChild).
void CheckPluginInChild(std::string_view engine,
                        std::chrono::milliseconds timeout);

// A failure or none, as bytes for the pipe, and back. Decode requires what
// Encode wrote.
std::string EncodeFailure(const std::optional<Failure>& failure);
std::optional<Failure> DecodeFailure(std::string_view bytes);

// `check` run in a child process per call: what `check` reports, or the
// crash or timeout ChildFailure describes. For shrinking a plugin's failure
// (one fork per candidate, about 0.3 ms). Not thread-safe (RunInChild).
template <typename Input>
CheckerOf<Input> IsolatedChecker(CheckerOf<Input> check,
                                 std::chrono::milliseconds timeout) {
  return [check = std::move(check), timeout](const Input& input) {
    const ChildResult result =
        RunInChild(1, timeout, [&](ChildProgress& progress) {
          progress.Begin(0, 0);
          const std::optional<Failure> failure = check(input);
          progress.End(0);
          return EncodeFailure(failure);
        });
    if (result.end != ChildResult::End::kFinished) {
      return std::optional<Failure>(ChildFailure(result, timeout));
    }
    return DecodeFailure(result.payload);
  };
}

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_ISOLATION_H_
