// lfu: least frequently used, ties broken by recency (SPEC §8), as a policy
// type of the cache model (kvprefix/cache_model.h says what a policy type
// provides).
#ifndef KVPREFIX_KVPREFIX_POLICIES_LFU_H_
#define KVPREFIX_KVPREFIX_POLICIES_LFU_H_

#include <compare>
#include <cstdint>

#include "kvprefix/types.h"

namespace kvprefix {

// "lfu: the leaf with the smallest count; among leaves with equal counts,
// the one with the smallest stamp" (SPEC §8). A touch adds 1 to the count
// and sets the stamp; a new node starts at count 0, so its own request's
// touch makes it 1. Stamps are unique among leaves, so (count, stamp) never
// ties. The classic LFU of caching (e.g. libCacheSim's LFU) with SGLang's
// and LRU's recency as the tie-break, applied to the leaves of a prefix
// tree: a parent's count is at least each child's, so leaves still go
// first.
struct LfuPolicy {
  struct State {
    std::uint64_t count = 0;
    std::uint64_t stamp = 0;
  };
  struct Key {
    std::uint64_t count;
    std::uint64_t stamp;
    friend auto operator<=>(const Key&, const Key&) = default;
  };

  static void Touch(State& state, std::uint64_t request) {
    ++state.count;
    state.stamp = request;
  }
  static Key LeafKey(const State& state, NodeId) {
    return Key{state.count, state.stamp};
  }

  // A long request's new tail has count 1 and may leave before an older
  // leaf of a larger count: SPEC §8's "first C nodes" does not hold.
  static constexpr bool kKeepsFirstCapacityNodes = false;
  // A touched node's count is its past plus one, unlike a new node's 1.
  static constexpr bool kTouchSetsState = false;
  // The nodes of one run were touched together since it was created (a
  // radix edge splits where touches end), so they share (count, stamp);
  // stamps are unique among leaves, so the run's next node is the minimum.
  static constexpr bool kRunTailLeavesAtOnce = true;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_POLICIES_LFU_H_
