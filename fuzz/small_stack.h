// A small call stack for the fuzz targets that read untrusted nesting.
//
// A reader that recursed once per nesting level overflowed the default
// 8 MiB stack only ~26,000 levels deep (tests/former_bugs_test.cc), far
// beyond the few kilobytes a fuzzer's inputs hold, so on the default stack
// such a bug is never found. RunOnSmallStack runs the target's work on a thread
// whose stack is kKvprefixFuzzStackBytes with a guard page below: the old
// recursive check (fuzz/recursive_validate_value.cc, ~1 KiB per level under
// ASan) overflows about 30 levels deep, which libFuzzer reaches from an empty
// corpus in well under CI's minute, and ASan reports it as
// "stack-overflow". io's readers are iterative and need the same few
// kilobytes at any depth. (Lowering RLIMIT_STACK would not do: Linux maps
// the main thread's first 128 KiB at exec, whatever the limit.)
//
// The thread is made once and reused, so an input costs a hand-over (two
// context switches), not a thread. It works the same under libFuzzer,
// OSS-Fuzz and the plain replay programs.
#ifndef KVPREFIX_FUZZ_SMALL_STACK_H_
#define KVPREFIX_FUZZ_SMALL_STACK_H_

#include <pthread.h>
#include <signal.h>

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>

namespace kvprefix::fuzz {

// 32 KiB: the iterative readers need 16 to 32 KiB under ASan on their error
// paths (fmt's 500-byte buffers, the dynamic linker's first lookup of a
// symbol; 16 KiB overflows), not one frame per level of a deep input.
inline constexpr std::size_t kKvprefixFuzzStackBytes = std::size_t{32} << 10;

class SmallStackThread {
 public:
  SmallStackThread() {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, kKvprefixFuzzStackBytes);
    pthread_t thread;
    if (pthread_create(&thread, &attributes, &Loop, this) != 0) {
      std::perror("fuzz: pthread_create");
      std::abort();
    }
    pthread_attr_destroy(&attributes);
    pthread_detach(thread);
  }

  // Runs `work` on the thread and returns when it has finished.
  void Run(const std::function<void()>& work) {
    std::unique_lock lock(mutex_);
    work_ = &work;
    changed_.notify_all();
    changed_.wait(lock, [this] { return work_ == nullptr; });
  }

 private:
  static void* Loop(void* self) {
    InstallSignalStack();
    auto& thread = *static_cast<SmallStackThread*>(self);
    std::unique_lock lock(thread.mutex_);
    while (true) {
      thread.changed_.wait(lock, [&] { return thread.work_ != nullptr; });
      (*thread.work_)();
      thread.work_ = nullptr;
      thread.changed_.notify_all();
    }
  }

  // A signal stack of the thread's own, unless one is set (ASan sets its
  // own): the alternate stack is per thread, and without one a fault on the
  // guard page (a stack overflow, what this thread exists to show) cannot
  // run a handler, such as the replay program's "replay: SIGSEGV on input
  // FILE" (fuzz/replay_main.cc).
  static void InstallSignalStack() {
    stack_t current = {};
    if (sigaltstack(nullptr, &current) != 0 ||
        (current.ss_flags & SS_DISABLE) == 0) {
      return;
    }
    static char stack[64 * 1024];  // one thread per process
    stack_t alternate = {};
    alternate.ss_sp = stack;
    alternate.ss_size = sizeof(stack);
    sigaltstack(&alternate, nullptr);
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void()>* work_ = nullptr;
};

// Runs `work` on the one small-stack thread of this process.
inline void RunOnSmallStack(const std::function<void()>& work) {
  static SmallStackThread* const thread =
      new SmallStackThread();  // never freed
  thread->Run(work);
}

}  // namespace kvprefix::fuzz

#endif  // KVPREFIX_FUZZ_SMALL_STACK_H_
