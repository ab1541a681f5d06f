// SPEC §11.5 `least-loaded`: no state; the first worker with the smallest
// load_w (running + queued).
// Follows: SGLang's shortest-queue choice (min_by_key over worker.load(),
// which keeps the first minimum).
// Leaves out: production-stack's fallbacks, which pick the lowest QPS
// instead (§11.10).
#ifndef KVPREFIX_ROUTER_POLICIES_LEAST_LOADED_H_
#define KVPREFIX_ROUTER_POLICIES_LEAST_LOADED_H_

#include "router/router.h"

namespace kvprefix {

class LeastLoadedRouter final : public Router {
 public:
  // O(N).
  std::size_t Choose(const RoutedRequest&,
                     const WorkerViews& workers) override {
    return FirstLeastLoaded(workers);
  }
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_LEAST_LOADED_H_
