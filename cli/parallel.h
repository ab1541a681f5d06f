// The worker pool of the commands that split a job into independent items
// (match's chunks of requests, curve's capacities): a fixed number of
// threads, each claiming the next item until none is left.
#ifndef KVPREFIX_CLI_PARALLEL_H_
#define KVPREFIX_CLI_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace kvprefix::cli {

// The most --jobs (threads of ForEachInParallel) a command takes.
inline constexpr unsigned kMaxJobs = 1024;

// Calls work(i) once for each i in [0, count), on min(threads, count)
// threads: the calling thread and up to threads - 1 started ones (threads 0
// counts as 1). Each thread claims the next index from an atomic counter,
// so an item that takes long does not hold up the others, and the calling
// thread runs items too (a command with --threads 1 starts no thread). A
// caller that must do something on its own thread only (e.g. show
// Progress) compares std::this_thread::get_id() with its own.
//
// Thread safety: work is called concurrently for distinct indices, so it
// must be safe to call so (e.g. each call writes only its own item's
// result); all calls have returned, and their writes are visible, when
// ForEachInParallel returns.
//
// Errors: when a thread cannot be started (std::system_error, e.g. no
// address space left for another stack), the threads already running do
// the rest of the items. When work throws, no index is claimed after it
// (the calls already running finish), and once every thread has joined,
// the first exception thrown is rethrown; the others are dropped.
//
// Complexity: count calls of work plus one atomic increment each, and
// min(threads, count) - 1 thread starts and joins.
template <typename Work>
void ForEachInParallel(std::size_t count, unsigned threads, Work&& work) {
  std::atomic<std::size_t> next = 0;
  std::atomic<bool> failed = false;
  std::exception_ptr failure;  // written by the thread that set `failed`
  const auto run = [&] {
    try {
      for (std::size_t i; !failed && (i = next++) < count;) work(i);
    } catch (...) {
      if (!failed.exchange(true)) failure = std::current_exception();
    }
  };
  const std::size_t started =
      std::min<std::size_t>(std::max(threads, 1u), count);
  std::vector<std::jthread> workers;
  workers.reserve(started - 1);  // before any thread: std::bad_alloc here
                                 // leaves none running
  for (std::size_t t = 1; t < started; ++t) {
    try {
      workers.emplace_back(run);
    } catch (const std::system_error&) {
      break;  // no room for another stack: the threads started do the rest
    }
  }
  run();
  workers.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_PARALLEL_H_
