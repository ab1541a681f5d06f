// SPEC §11.5 `precise`: no state; the worker with the largest m_w (the
// match in pages); ties: the smallest load_w, then the first.
// Follows: llm-d's precise prefix-cache scorer on its own (LongestPrefix:
// the sum of tier weights over the contiguous leading blocks a pod holds;
// with one tier of weight 1.0 it is m_w), with an exact and current index;
// its min-max normalisation does not change an argmax (see llmd.h).
// Leaves out: KV events and their lag (the worker's cache is read now).
#ifndef KVPREFIX_ROUTER_POLICIES_PRECISE_H_
#define KVPREFIX_ROUTER_POLICIES_PRECISE_H_

#include "router/router.h"

namespace kvprefix {

class PreciseRouter final : public Router {
 public:
  // O(N n).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_PRECISE_H_
