// SPEC §11.5 `consistent-hash`: a ring (router/stream.h) of N workers with
// ring_points V each; a request goes to the owner of its first hash_prefix
// K tokens (all of them if it is shorter). No load check.
// Follows: production-stack's SessionRouter (a uhashring ring over the
// session id) and SGLang's consistent_hash (a ring over a routing key).
// Leaves out: conversation ids (the traces have none: the prompt's head
// stands for one); md5 (uhashring) and blake3 (SGLang) are §7's splitmix64,
// so a key lands on another worker than in either system, with the same
// stickiness.
#ifndef KVPREFIX_ROUTER_POLICIES_CONSISTENT_HASH_H_
#define KVPREFIX_ROUTER_POLICIES_CONSISTENT_HASH_H_

#include <cstdint>

#include "router/router.h"
#include "router/stream.h"

namespace kvprefix {

// The key of a request: its first `hash_prefix` tokens, or all of them.
TokenSpan RingKey(TokenSpan tokens, std::uint64_t hash_prefix);

class ConsistentHashRouter final : public Router {
 public:
  // O(N V log(N V)) for the ring.
  ConsistentHashRouter(std::size_t workers, std::uint64_t hash_prefix,
                       std::uint64_t ring_points)
      : ring_(workers, ring_points), hash_prefix_(hash_prefix) {}
  // O(K + log(N V)).
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews&) override {
    return ring_.Owner(RingKey(request.tokens, hash_prefix_));
  }

 private:
  Ring ring_;
  std::uint64_t hash_prefix_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_CONSISTENT_HASH_H_
