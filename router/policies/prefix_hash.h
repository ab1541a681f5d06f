// SPEC §11.5 `prefix-hash`: consistent-hash's ring and key (hash_prefix,
// ring_points) with a load check, load_factor L (a decimal above 0). With
// w0 the key's owner, T = Σ load_w and ok(w) ⇔ T = 0 or load_w · N ≤
// (T + 1) · L: w0 if ok(w0); else the first least loaded w with ok(w);
// else w0.
// Follows: SGLang's prefix_hash.rs exactly (the key is the prompt's first
// 256 tokens, the +1 counts the incoming request, the fallback is the least
// loaded acceptable worker, not a ring walk).
// Leaves out: its hash (splitmix64 here, as consistent-hash).
#ifndef KVPREFIX_ROUTER_POLICIES_PREFIX_HASH_H_
#define KVPREFIX_ROUTER_POLICIES_PREFIX_HASH_H_

#include <cstdint>

#include "router/rational.h"
#include "router/router.h"
#include "router/stream.h"

namespace kvprefix {

class PrefixHashRouter final : public Router {
 public:
  PrefixHashRouter(std::size_t workers, std::uint64_t hash_prefix,
                   std::uint64_t ring_points, Rational load_factor)
      : ring_(workers, ring_points),
        hash_prefix_(hash_prefix),
        load_factor_(load_factor) {}
  // O(K + log(N V) + N).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;

 private:
  Ring ring_;
  std::uint64_t hash_prefix_;
  Rational load_factor_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_PREFIX_HASH_H_
