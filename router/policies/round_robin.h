// SPEC §11.5 `round-robin` (the default router): no state; request k goes
// to worker k mod N.
// Follows: production-stack's RoundRobinRouter (a counter over the
// endpoints sorted by URL), SGLang's round_robin, Dynamo's round_robin mode.
// Leaves out: nothing (the counter is the arrival index).
#ifndef KVPREFIX_ROUTER_POLICIES_ROUND_ROBIN_H_
#define KVPREFIX_ROUTER_POLICIES_ROUND_ROBIN_H_

#include "router/router.h"

namespace kvprefix {

class RoundRobinRouter final : public Router {
 public:
  // O(1).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override {
    return static_cast<std::size_t>(request.index % workers.size());
  }
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_ROUND_ROBIN_H_
