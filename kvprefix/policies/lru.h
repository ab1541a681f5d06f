// lru: SPEC §8's least-recently-used order, as a policy type of the cache
// model (kvprefix/cache_model.h says what a policy type provides).
#ifndef KVPREFIX_KVPREFIX_POLICIES_LRU_H_
#define KVPREFIX_KVPREFIX_POLICIES_LRU_H_

#include <cstdint>

#include "kvprefix/types.h"

namespace kvprefix {

// "lru: the leaf with the smallest stamp" (SPEC §8 step 4). A node's state
// is its stamp, the last request whose path held it. Stamps are unique among
// leaves (the nodes last touched by request r form one chain of r's path),
// so the key needs no tie-break.
struct LruPolicy {
  struct State {
    std::uint64_t stamp = 0;
  };
  using Key = std::uint64_t;

  // Step 3 for one node of request `request`'s path (also for a node the
  // request created: State{} first). O(1).
  static void Touch(State& state, std::uint64_t request) {
    state.stamp = request;
  }
  // The order of victims: smaller leaves first. O(1).
  static Key LeafKey(const State& state, NodeId) { return state.stamp; }

  // The request's path (its newest stamp) leaves after every other node, and
  // its new nodes deepest first: SPEC §8's "a request longer than C keeps
  // only its first C nodes" holds.
  static constexpr bool kKeepsFirstCapacityNodes = true;
  // After a touch a node's state is the request alone, so a new node and the
  // touched ones above it are alike.
  static constexpr bool kTouchSetsState = true;
  // A run (nodes of one radix edge, touched and created together) leaves
  // whole, deepest first, before anything else: equal stamps, unique among
  // leaves.
  static constexpr bool kRunTailLeavesAtOnce = true;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_POLICIES_LRU_H_
