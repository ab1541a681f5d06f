// SPEC §11.5 `dynamo`: a stream; parameters prefill_load_scale σ,
// overlap_score_credit c, decode_active_request_weight ρ (decimals ≥ 0;
// Dynamo's defaults 1, 1, 0) and ties ("random" or "first"); temperature 0
// only. For each w: raw_w = (unprefilled_tokens_w + n)/P pages, prefill_w =
// σ · max(raw_w − c · m_w, 0), decode_w = pinned_pages_w + ⌈n/P⌉ − m_w,
// cost_w = prefill_w + decode_w + ρ · load_w; the smallest cost wins. Ties
// "random": a reservoir from best = 0, count 1, walking w = 1 ... N − 1: a
// smaller cost replaces it (count 1), an equal one adds 1 to the count j
// and replaces it if below(j) = 0 (one draw per tie met). "first": the
// first minimum, no draw.
// Follows: Dynamo's KV router default selector
// (lib/kv-router/src/scheduling/selector/default.rs): the overlap-credit
// form (with σ = c = 1 the classic overlap_score_weight · prefill_blocks +
// decode_blocks with weight 1) and its zero-temperature reservoir tie rule
// (fastrand).
// Leaves out: host and disk tiers (their 0.75 and 0.25 credits), credit
// decay, temperature above 0 (a softmax through exp, not reproducible bit
// for bit); decode_w counts a matched page as already held, where Dynamo
// counts as new every block not already active on the worker.
#ifndef KVPREFIX_ROUTER_POLICIES_DYNAMO_H_
#define KVPREFIX_ROUTER_POLICIES_DYNAMO_H_

#include <cstdint>

#include "router/rational.h"
#include "router/router.h"
#include "router/stream.h"

namespace kvprefix {

struct DynamoWeights {
  Rational prefill_load_scale = 1;            // σ
  Rational overlap_score_credit = 1;          // c
  Rational decode_active_request_weight = 0;  // ρ
  bool random_ties = true;                    // ties "random"; false: "first"
};

class DynamoRouter final : public Router {
 public:
  DynamoRouter(std::uint64_t seed, const RouteSetup& setup,
               const DynamoWeights& weights)
      : stream_(seed), setup_(setup), weights_(weights) {}
  // O(N n).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;

 private:
  // cost_w of step 1.
  Rational Cost(const WorkerViews& workers, std::size_t w,
                TokenSpan tokens) const;

  Stream stream_;
  RouteSetup setup_;
  DynamoWeights weights_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_DYNAMO_H_
