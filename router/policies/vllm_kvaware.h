// SPEC §11.5 `vllm-kvaware`: no state; parameter kv_aware_threshold T. With
// M* the largest peek_match_w(x) (tokens) and w* the first worker having
// it: the first least loaded worker if M* < n − T, else w*.
// Follows: production-stack's KvawareRouter, the exact caches standing for
// the LMCache controller's lookup.
// Leaves out: its fallback (the SessionRouter ring, else the lowest QPS) and
// the controller's choice among equal matches, which its code leaves
// undefined (the first key of a reply).
#ifndef KVPREFIX_ROUTER_POLICIES_VLLM_KVAWARE_H_
#define KVPREFIX_ROUTER_POLICIES_VLLM_KVAWARE_H_

#include <cstdint>

#include "router/router.h"

namespace kvprefix {

class VllmKvawareRouter final : public Router {
 public:
  explicit VllmKvawareRouter(std::uint64_t threshold) : threshold_(threshold) {}
  // O(N n).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;

 private:
  std::uint64_t threshold_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_VLLM_KVAWARE_H_
