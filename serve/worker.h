// One serving worker (SPEC §10.3-§10.6): a cache, a FIFO queue of waiting
// requests, the running requests and their pending prefill ends and
// finishes. The replay's clock (serve/serving_replay.h) tells it what is due
// when; the worker keeps no time of its own.
//
// The shape follows the event loops of Dynamo's offline replay and llm-d's
// inference simulator (a queue, a running set, events in time order), with
// SPEC §10.3's order at one instant: prefill ends, then finishes, then
// arrivals, then the start loop.
#ifndef KVPREFIX_SERVE_WORKER_H_
#define KVPREFIX_SERVE_WORKER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <queue>
#include <tuple>
#include <vector>

#include "kvprefix/request.h"
#include "serve/serve_requests.h"
#include "serve/serving_rules.h"

namespace kvprefix {

// SPEC §10.6's view of a worker, read by a router (§11.2) at a request's
// arrival. Everything is now; nothing here changes the worker.
struct WorkerCounts {
  std::uint64_t running = 0;
  std::uint64_t queued = 0;
  std::uint64_t pinned = 0;              // ServingCache::pinned()
  std::uint64_t unprefilled_tokens = 0;  // Σ (n − m), prefill not ended
  std::uint64_t cached_pages = 0;        // ServingCache::cached_pages()
};

class Worker {
 public:
  // A worker over `cache` (kept by reference), running at most
  // requests.options().max_running requests at once, writing each request's
  // answer into answers[id] (kept by reference; sized for every request).
  Worker(ServingCache& cache, const ServeRequests& requests,
         std::vector<ServedRequest>& answers);

  // The earliest pending prefill end or finish, if any. O(1).
  std::optional<std::uint64_t> NextEventTime() const;
  // §10.3 step 2's events at `now` (no earlier one may be pending): every
  // prefill end, then every finish, each in request order. Returns whether
  // there was any. O(events log(running)) plus the cache's costs.
  bool ApplyDue(std::uint64_t now);
  // An arrival joins the tail of the queue. O(1).
  void Enqueue(RequestId id);
  // §10.3 step 3 at `now`: while the queue is not empty and fewer than B
  // requests run, attempt the head: it starts, is refused (answered at
  // `now`, and the loop goes on) or waits (the loop stops; under rules
  // whose kWaitingHeadBlocks is false, the next request is attempted and
  // the waiting one keeps its place). Throws std::invalid_argument if a
  // time passes 2^64 − 1 µs. O(attempts) plus the cache's costs.
  template <typename Rules = Section10Rules>
  void StartLoop(std::uint64_t now);

  WorkerCounts counts() const;
  // §10.6 peek_match: the match an attempt would make now. O(n).
  Match PeekMatch(TokenSpan tokens) const { return cache_.PeekMatch(tokens); }
  // The totals the worker alone knows: refused, waited_for_room,
  // evicted_pages and the peaks (serve/serving_replay.h adds the rest).
  const ServeTotals& totals() const;

 private:
  enum class EventKind : std::uint8_t { kPrefillEnd, kFinish };
  // Ordered by time, then prefill ends before finishes, then request order
  // (§10.3 step 2).
  using Event = std::tuple<std::uint64_t, EventKind, RequestId>;

  // Attempts the request at queue_[position] (§10.4): false if it waits,
  // else it left the queue (started or refused).
  bool TryStart(std::size_t position, std::uint64_t now);
  void Start(RequestId id, std::uint64_t now, const Match& match);

  ServingCache& cache_;
  const ServeRequests& requests_;
  std::vector<ServedRequest>& answers_;
  std::deque<RequestId> queue_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t running_ = 0;
  std::uint64_t unprefilled_tokens_ = 0;
  std::vector<Token> stored_;  // the stored sequence of a finish
  mutable ServeTotals totals_;
};

template <typename Rules>
void Worker::StartLoop(std::uint64_t now) {
  std::size_t position = 0;  // the queue's first request not waiting
  while (position < queue_.size() &&
         running_ < requests_.options().max_running) {
    if (TryStart(position, now)) continue;
    if constexpr (Rules::kWaitingHeadBlocks) return;
    ++position;
  }
}

}  // namespace kvprefix

#endif  // KVPREFIX_SERVE_WORKER_H_
