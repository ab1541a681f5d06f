// A router over N serving workers (SPEC §11): at each request's arrival a
// policy (router/policies/, one file each, registered in
// router/router_spec.h) reads every worker's view (§11.2, read-only) and
// chooses one; it may update only its own state (a stream, a tree, a trie).
// The replay that calls it (serve/routed_replay.h) owns the workers and the
// clock (§11.4); nothing here depends on serve/.
#ifndef KVPREFIX_ROUTER_ROUTER_H_
#define KVPREFIX_ROUTER_ROUTER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvprefix/request.h"
#include "kvprefix/types.h"
#include "router/rational.h"

namespace kvprefix {

// SPEC §11.2's counts of one worker at the routing instant (§10.6).
struct WorkerView {
  std::uint64_t running = 0;  // started, not finished
  std::uint64_t queued = 0;   // routed to it, not started
  // §10.6: spec pinned nodes, vllm blocks with a count above 0, sglang
  // locked plus held tokens.
  std::uint64_t pinned = 0;
  std::uint64_t unprefilled_tokens = 0;  // Σ (n − m), prefill not ended
  std::uint64_t cached_pages = 0;        // no policy reads it

  // load_w = running + queued (SGLang's worker.load()).
  std::uint64_t load() const { return running + queued; }
};

// The N workers as a router sees them. Implementations read the workers as
// they are now and change nothing.
class WorkerViews {
 public:
  virtual ~WorkerViews() = default;
  // N >= 1.
  virtual std::size_t size() const = 0;
  // Worker w's counts. O(1).
  virtual WorkerView view(std::size_t w) const = 0;
  // §10.6 peek_match_w(tokens): the matched length (tokens) an attempt
  // would make on w now, changing nothing. O(tokens).
  virtual std::uint64_t PeekMatch(std::size_t w, TokenSpan tokens) const = 0;
};

// What a policy knows of the replay it routes for, fixed at its start.
struct RouteSetup {
  std::size_t workers = 1;      // N
  std::uint64_t page_size = 1;  // P
  // Whether `pinned` counts tokens (model sglang): §11.2's pinned_pages_w
  // is then pinned_w / P.
  bool pinned_in_tokens = false;
};

// One request at its routing instant.
struct RoutedRequest {
  RequestId index = 0;  // k, its place in the document (arrival order)
  TokenSpan tokens;     // x, n = tokens.size() (namespace folded, §8.1)
  std::uint64_t arrival_us = 0;
};

// A routing policy (SPEC §11.5). Not thread-safe: one replay calls it, in
// arrival order.
class Router {
 public:
  virtual ~Router() = default;
  // The worker (0 ... N − 1) for `request`, seeing `workers` (N of them, as
  // the policy was made for). Updates only the policy's own state. Throws
  // std::overflow_error if an exact score passes 2^127 (router/rational.h).
  virtual std::size_t Choose(const RoutedRequest& request,
                             const WorkerViews& workers) = 0;
};

// §11.3 "the first" with the smallest load_w. O(N).
std::size_t FirstLeastLoaded(const WorkerViews& workers);

// peek_match_w(tokens) of every worker, in worker order. O(N n).
std::vector<std::uint64_t> PeekMatches(const WorkerViews& workers,
                                       TokenSpan tokens);

// m_w = peek_match_w(x) / P, in pages (a rational). O(n).
Rational MatchedPages(const WorkerViews& workers, std::size_t w,
                      TokenSpan tokens, std::uint64_t page_size);

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_ROUTER_H_
