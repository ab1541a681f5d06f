// SPEC §11.5 `vllm-prefix`: a stream and the router's own hash trie, whose
// nodes are chunks of `chunk` C tokens, each holding the workers that
// requests through it were routed to; parameter min_match. (1) Match: cut
// x into chunks of C (the last one possibly shorter); from the root, with
// every worker a candidate and M = 0, for each chunk step to its child
// (stop if none), intersect the candidates with its workers (stop if
// empty), else M += C (also for a shorter last chunk) and keep the
// intersection. (2) If M < min_match the first least loaded worker;
// otherwise the below(count)-th candidate in index order (one draw, also
// for one candidate). (3) Insert: the chosen worker joins every chunk node
// of x, missing ones created; nothing is ever removed.
// Follows: production-stack's PrefixAwareRouter and prefix/hashtrie.py
// with its quirks (a short last chunk counts C, a request that matches
// nothing goes to a random worker among all, the min-match fallback still
// inserts).
// Leaves out: chunks of 128 characters (here C tokens); random.choice over
// a Python set (not reproducible across processes) is the stream over the
// sorted candidates; its fallback picks the lowest QPS (here the load).
//
// The chunk trie is kept as a trie of tokens: a chunk node is the token
// node where its chunk ends (a full chunk at a depth that is a multiple of
// C, a shorter last one elsewhere), so one node is at most one chunk's.
#ifndef KVPREFIX_ROUTER_POLICIES_VLLM_PREFIX_H_
#define KVPREFIX_ROUTER_POLICIES_VLLM_PREFIX_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "router/policies/token_trie.h"
#include "router/router.h"
#include "router/stream.h"

namespace kvprefix {

class VllmPrefixRouter final : public Router {
 public:
  VllmPrefixRouter(std::uint64_t seed, std::uint64_t chunk,
                   std::uint64_t min_match)
      : stream_(seed), chunk_(chunk), min_match_(min_match), workers_(1) {}
  // O(n + N).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;

 private:
  using Node = TokenEdges::Node;
  // The chunk node after `node` for `chunk`; with `create`, made if absent.
  std::optional<Node> Step(Node node, TokenSpan chunk, bool create);

  Stream stream_;
  std::uint64_t chunk_;
  std::uint64_t min_match_;
  TokenEdges edges_;
  std::vector<std::vector<std::uint32_t>> workers_;  // per node, sorted
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_VLLM_PREFIX_H_
