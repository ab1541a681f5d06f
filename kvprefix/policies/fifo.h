// fifo: SPEC §8's first-in-first-out order, as a policy type of the cache
// model (kvprefix/cache_model.h says what a policy type provides).
#ifndef KVPREFIX_KVPREFIX_POLICIES_FIFO_H_
#define KVPREFIX_KVPREFIX_POLICIES_FIFO_H_

#include <cstdint>

#include "kvprefix/types.h"

namespace kvprefix {

// "fifo: the leaf with the smallest node ID (the oldest created)" (SPEC §8
// step 4). The key is the ID itself: a node keeps no state and a touch
// changes nothing, so engines skip both.
struct FifoPolicy {
  struct State {};
  using Key = std::uint64_t;

  static void Touch(State&, std::uint64_t) {}
  static Key LeafKey(const State&, NodeId id) { return id; }

  // Nodes off the path are older than its new ones, and a new node is older
  // than its children: the first C nodes of a long request stay.
  static constexpr bool kKeepsFirstCapacityNodes = true;
  static constexpr bool kTouchSetsState = true;  // no state at all
  // A run's IDs are consecutive: once its last node goes, the one before it
  // is the smallest ID of any leaf.
  static constexpr bool kRunTailLeavesAtOnce = true;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_POLICIES_FIFO_H_
