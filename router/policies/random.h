// SPEC §11.5 `random`: a stream (router/stream.h); each request goes to
// below(N), one draw per request, also when N is 1.
// Follows: SGLang's random policy.
// Leaves out: its unseeded generator (rand::rng()); the seeded stream makes
// a replay reproducible.
#ifndef KVPREFIX_ROUTER_POLICIES_RANDOM_H_
#define KVPREFIX_ROUTER_POLICIES_RANDOM_H_

#include <cstdint>

#include "router/router.h"
#include "router/stream.h"

namespace kvprefix {

class RandomRouter final : public Router {
 public:
  explicit RandomRouter(std::uint64_t seed) : stream_(seed) {}
  // O(1).
  std::size_t Choose(const RoutedRequest&,
                     const WorkerViews& workers) override {
    return static_cast<std::size_t>(stream_.Below(workers.size()));
  }

 private:
  Stream stream_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_RANDOM_H_
