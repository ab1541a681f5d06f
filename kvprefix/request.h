// A request's life in a cache while other requests run (SPEC §10.4): the
// interface a serving replay (serve/) drives and a router (§10.6) reads, and
// the options and inputs of a serving replay (SPEC §10.1).
//
// A request is attempted (Admit): it starts (its match is recorded and its
// entries pinned, so that no eviction takes them while it runs), waits at
// the head of the queue (nothing changes but what the model's match itself
// changes) or is refused (it can never fit). A started request later ends
// its prefill (PrefillEnd) and finishes (Finish: its stored sequence is
// cached, its pins released). Time is not the cache's business: the caller
// (serve/worker.h) orders the calls by its one clock (§10.3), and a model
// that keeps times of its own (§9.3's ticks) takes them in call order.
//
// Sources: vLLM v1's KVCacheManager / BlockPool (reference counts, a free
// queue, allocation at start) and SGLang's scheduler and RadixCache (lock
// counts, the prompt inserted at prefill end), as SPEC §10.4 restates them.
#ifndef KVPREFIX_KVPREFIX_REQUEST_H_
#define KVPREFIX_KVPREFIX_REQUEST_H_

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/page_events.h"
#include "kvprefix/replay.h"
#include "kvprefix/types.h"

namespace kvprefix {

// A request's number in its replay: 0, 1, 2, ... in request order.
using RequestId = std::uint64_t;

// What one attempt did (SPEC §10.3 step 3).
enum class AttemptOutcome : std::uint8_t {
  kStart,   // it runs; `match` is its recorded answer
  kWait,    // not enough room now: it stays at the head of the queue
  kRefuse,  // it can never fit: answered (0, node 0)
};

struct Attempt {
  AttemptOutcome outcome = AttemptOutcome::kStart;
  Match match;  // kStart only; (0, 0) otherwise
};

// What the cache of one worker does while requests run (SPEC §10.4), for
// the three models of kvprefix/cache.h. The calls for one request come in
// the order Admit (until it starts or is refused), PrefillEnd, Finish; the
// requests' calls interleave as the caller's clock orders them. An empty
// request (no tokens) never reaches the cache (§10.4: the caller answers it).
// Not thread-safe: one caller at a time.
class ServingCache {
 public:
  virtual ~ServingCache() = default;

  // The engine's name, as the registry gives it.
  virtual std::string_view name() const = 0;
  virtual const CacheOptions& options() const = 0;
  // True for a cache that is exact only with one request at a time and
  // output "none" (§10.7): an engine without a lifecycle of its own
  // (engines/sequential_serving.h). A replay refuses it anything else.
  virtual bool one_at_a_time() const { return false; }

  // One attempt of request `id` (SPEC §10.4's "attempt"): `prompt` its n
  // tokens (n >= 1), `stored_length` L >= n the tokens its KV holds at
  // finish (§10.4: n, or n + max(o - 1, 0) under output "unique"). On
  // kStart the cache keeps the request's pins until Finish(id). O(n) plus
  // the model's eviction cost.
  virtual Attempt Admit(RequestId id, TokenSpan prompt,
                        std::uint64_t stored_length) = 0;
  // The prefill end of the started request `id`, `prompt` its prompt as
  // Admit had it (§10.4: sglang "on-allocate" inserts the prompt; nothing
  // elsewhere).
  virtual void PrefillEnd(RequestId id, TokenSpan prompt) = 0;
  // The finish of the started request `id`: `stored` its stored sequence
  // (the prompt, then L - n tokens equal to no other token of the replay).
  // Caches it as the model says, releases its pins, evicts to the capacity.
  virtual void Finish(RequestId id, TokenSpan stored) = 0;

  // SPEC §10.6's view, read-only. The match an attempt of `request` would
  // make now, changing nothing (no tick, no split: where sglang would
  // split an edge, the ID its new node would get). O(n).
  virtual Match PeekMatch(TokenSpan request) const = 0;
  // Pinned now: spec nodes with a pin, vllm blocks with a count above 0,
  // sglang locked plus held tokens (§10.5's peak_pinned quantity). O(1).
  virtual std::uint64_t pinned() const = 0;
  // Cached now: spec nodes, vllm blocks holding a chain, sglang tree size /
  // P (pages). O(1).
  virtual std::uint64_t cached_pages() const = 0;
  // Pages evicted so far: spec nodes, vllm blocks taken from a chain by an
  // allocation, sglang evicted tokens / P. O(1).
  virtual std::uint64_t evicted_pages() const = 0;
  // Reports the pages this cache comes to hold and lets go to `listener`
  // (kvprefix/page_events.h; null: none) and returns true, or returns false
  // if this cache does not report them (the reference caches do). Call on
  // an empty cache; `listener` must outlive its changes.
  virtual bool SetPageEventListener(PageEventListener* /*listener*/) {
    return false;
  }
};

// What a serving replay (serve/serving_replay.h) reports as it runs, so
// that a log of its workers' page events (io/kv_events.h) can place each
// event in time and against the routing decisions (SPEC §11.11). Not
// thread-safe: one replay calls it.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  // The clock moved to `now` (µs): the caches' changes and arrivals that
  // follow happen at `now`.
  virtual void Time(std::uint64_t now) = 0;
  // Request `id` arrived and joined worker `worker`'s queue; `matched`
  // holds, for each worker, the matched length (tokens) of its peek_match
  // of the request's prompt at the routing instant (SPEC §10.6).
  virtual void Arrived(RequestId id, std::size_t worker,
                       std::span<const std::uint64_t> matched) = 0;
};

// What an engine type `E` provides to be a ServingCache natively (the
// reference engines of every model; engines/registry.h's MakeServingCache
// wraps it in ServingAdapter): the members of ServingCache with the same
// meanings, non-virtual, plus the PrefixCacheEngine members
// (kvprefix/prefix_index.h), and
//   std::uint64_t cached_pages() const, evicted_pages() const;
// in the units ServingCache's say.
template <typename E>
concept ServingEngine = requires(E& engine, const E& const_engine, RequestId id,
                                 TokenSpan tokens, std::uint64_t length) {
  { engine.Admit(id, tokens, length) } -> std::same_as<Attempt>;
  engine.PrefillEnd(id, tokens);
  engine.Finish(id, tokens);
  { const_engine.PeekMatch(tokens) } -> std::same_as<Match>;
  { const_engine.pinned() } -> std::same_as<std::uint64_t>;
  { const_engine.cached_pages() } -> std::same_as<std::uint64_t>;
  { const_engine.evicted_pages() } -> std::same_as<std::uint64_t>;
  { const_engine.options() } -> std::same_as<const CacheOptions&>;
};

// Adapts an engine that is a ServingEngine to ServingCache. `engine()`
// exposes the wrapped object.
template <ServingEngine E>
class ServingAdapter final : public ServingCache {
 public:
  template <typename... Args>
  explicit ServingAdapter(Args&&... args)
      : engine_(std::forward<Args>(args)...) {}

  std::string_view name() const override { return E::kName; }
  const CacheOptions& options() const override { return engine_.options(); }
  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override {
    return engine_.Admit(id, prompt, stored_length);
  }
  void PrefillEnd(RequestId id, TokenSpan prompt) override {
    engine_.PrefillEnd(id, prompt);
  }
  void Finish(RequestId id, TokenSpan stored) override {
    engine_.Finish(id, stored);
  }
  Match PeekMatch(TokenSpan request) const override {
    return engine_.PeekMatch(request);
  }
  std::uint64_t pinned() const override { return engine_.pinned(); }
  std::uint64_t cached_pages() const override { return engine_.cached_pages(); }
  std::uint64_t evicted_pages() const override {
    return engine_.evicted_pages();
  }
  bool SetPageEventListener(PageEventListener* listener) override {
    if constexpr (requires { engine_.SetPageEventListener(listener); }) {
      engine_.SetPageEventListener(listener);
      return true;
    } else {
      return false;
    }
  }

  E& engine() { return engine_; }

 private:
  E engine_;
};

// SPEC §10.1 "output": what a request's output costs.
enum class OutputMode : std::uint8_t {
  kNone,    // time, never cache space
  kUnique,  // stored, as tokens equal to no other token of the replay
};

inline constexpr std::array<NamedValue<OutputMode>, 2> kOutputModes = {{
    {OutputMode::kNone, "none", "output takes time, never cache space"},
    {OutputMode::kUnique, "unique",
     "output tokens are stored, each equal to no other token"},
}};
static_assert(InValueOrder(kOutputModes));

// The largest arrival, output length (SPEC §10.1: 0 to 2^53) and rate (0 to
// 2^32) a serving replay takes; max_running is 1 to 2^31 - 1.
inline constexpr std::uint64_t kMaxServeTime = std::uint64_t{1} << 53;
inline constexpr std::uint64_t kMaxServeRate = std::uint64_t{1} << 32;
inline constexpr std::uint64_t kMaxRunning = (std::uint64_t{1} << 31) - 1;

// SPEC §10.1-§10.2: how a worker runs requests. The defaults are a §8/§9
// replay's (§10.7).
struct ServeOptions {
  std::uint64_t max_running = 1;           // B
  std::uint64_t prefill_us_per_token = 0;  // per uncached prompt token
  std::uint64_t decode_us_per_token = 0;   // per output token
  std::uint64_t overhead_us = 0;           // per request
  OutputMode output = OutputMode::kNone;

  friend bool operator==(const ServeOptions&, const ServeOptions&) = default;
};

// A SPEC §10 replay document: a §8 document (requests, cache, namespaces)
// and each request's arrival (µs, non-decreasing) and output length
// (tokens), empty meaning all 0.
struct ServeInput {
  ReplayInput replay;
  std::vector<std::uint64_t> arrivals_us = {};
  std::vector<std::uint64_t> output_lengths = {};
  ServeOptions serve = {};

  friend bool operator==(const ServeInput&, const ServeInput&) = default;
};

// One request's answer in a serving replay (SPEC §10.5). Times in µs.
struct ServedRequest {
  Match match;  // the match of the attempt that started it; (0, 0) refused
  std::uint64_t arrival_us = 0;
  std::uint64_t start_us = 0;  // its start, or its refusal
  std::uint64_t prefill_end_us = 0;
  std::uint64_t finish_us = 0;
  bool refused = false;
  bool waited_for_room = false;  // at least one attempt waited

  std::uint64_t wait_us() const { return start_us - arrival_us; }
  friend bool operator==(const ServedRequest&, const ServedRequest&) = default;
};

// A sum of waits: up to 2^64 requests of up to 2^64 µs each. (A GCC and
// Clang extension: __extension__ keeps -Wpedantic quiet.)
__extension__ typedef unsigned __int128 WaitSum;

// A serving replay's totals (SPEC §10.5): counts of requests, tokens
// (request_tokens, matched_tokens), pages (evicted_pages: spec nodes, vllm
// blocks, sglang evicted tokens / P), the peaks, and µs. The two doubles are
// derived (hit_ratio, mean_wait_us in io's writer) from the exact integers
// kept here.
struct ServeTotals {
  std::uint64_t requests = 0;
  std::uint64_t request_tokens = 0;
  std::uint64_t matched_tokens = 0;
  std::uint64_t refused = 0;
  std::uint64_t waited_for_room = 0;
  std::uint64_t evicted_pages = 0;
  std::uint64_t peak_pinned = 0;  // the model's pinned() unit
  std::uint64_t peak_running = 0;
  std::uint64_t peak_queued = 0;
  WaitSum total_wait_us = 0;      // mean = total / requests
  std::uint64_t p50_wait_us = 0;  // nearest rank
  std::uint64_t p99_wait_us = 0;
  std::uint64_t makespan_us = 0;  // latest finish - first arrival

  friend bool operator==(const ServeTotals&, const ServeTotals&) = default;
};

// A serving replay's whole answer: requests in request order (left empty
// by a replay that only counts), and the totals.
struct ServeAnswer {
  std::vector<ServedRequest> requests;
  ServeTotals totals;
};

// A routed replay's whole answer (SPEC §11.8): the requests in request
// order (left empty by a replay that only counts) with each one's worker,
// the totals over all workers (sums; peaks the largest; waits and makespan
// over all requests), each worker's own totals, and the router's name
// (kRouterPolicies, router/router_spec.h). The imbalance figures are
// derived from per_worker by io's writer.
struct RoutedAnswer {
  std::vector<ServedRequest> requests = {};
  std::vector<std::size_t> workers_of = {};  // request -> its worker
  ServeTotals totals = {};
  std::vector<ServeTotals> per_worker = {};  // N of them
  std::string_view router = {};
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_REQUEST_H_
