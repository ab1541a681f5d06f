// SPEC §11.5 `power-of-two`: a stream. With N = 1, worker 0 (no draw);
// otherwise i1 = below(N), i2 = (i1 + 1 + below(N − 1)) mod N (two draws,
// two different workers), and i1 if load_i1 ≤ load_i2, else i2.
// Follows: SGLang's power_of_two.rs exactly (the offset and the ≤).
// Leaves out: its optional token loads from a load monitor (the request
// counts, its fallback, are used).
#ifndef KVPREFIX_ROUTER_POLICIES_POWER_OF_TWO_H_
#define KVPREFIX_ROUTER_POLICIES_POWER_OF_TWO_H_

#include <cstdint>

#include "router/router.h"
#include "router/stream.h"

namespace kvprefix {

class PowerOfTwoRouter final : public Router {
 public:
  explicit PowerOfTwoRouter(std::uint64_t seed) : stream_(seed) {}
  // O(1).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;

 private:
  Stream stream_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_POWER_OF_TWO_H_
