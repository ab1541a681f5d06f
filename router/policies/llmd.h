// SPEC §11.5 `llmd`: a stream; parameters prefix_weight wp and queue_weight
// wq (decimals ≥ 0). (1) Prefix score: workers with m_w > 0 are present,
// the others score 0; a present worker scores (m_w − min)/(max − min) over
// the present ones, or 1 when all present ones have the same m_w. (2) Queue
// score: (max load − load_w)/(max load − min load), or 1 for every worker
// when all loads are equal. (3) Score = wp · prefix + wq · queue; the
// largest wins, several sharing it: the below(count)-th of them in index
// order (one draw; none for a single best).
// Follows: llm-d-inference-scheduler's precise prefix-cache scorer
// normalisation (indexedScoresToNormalizedScoredPods: absent pods 0, all
// equal 1), the 2 : 1 weights of llm-d's precise-routing guide, and the
// Gateway API Inference Extension's max-score picker (random among equal
// scores).
// Leaves out: the guide's kv-cache-utilisation scorer; the queue scorer
// reads load_w where the extension reads the waiting queue only.
#ifndef KVPREFIX_ROUTER_POLICIES_LLMD_H_
#define KVPREFIX_ROUTER_POLICIES_LLMD_H_

#include <cstdint>
#include <vector>

#include "router/rational.h"
#include "router/router.h"
#include "router/stream.h"

namespace kvprefix {

class LlmdRouter final : public Router {
 public:
  LlmdRouter(std::uint64_t seed, Rational prefix_weight, Rational queue_weight)
      : stream_(seed),
        prefix_weight_(prefix_weight),
        queue_weight_(queue_weight) {}
  // O(N n).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;

 private:
  Stream stream_;
  Rational prefix_weight_;
  Rational queue_weight_;
};

// Chooses among `scores` (one per worker) the largest; several sharing it:
// the below(count)-th of them in index order from `stream` (no draw for a
// single best). O(N).
std::size_t PickLargest(const std::vector<Rational>& scores, Stream& stream);

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_LLMD_H_
