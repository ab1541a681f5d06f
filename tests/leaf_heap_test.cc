// Tests of LeafHeap (kvprefix/leaf_heap.h), the lazy min-heap of leaves that
// orders the optimized engines' evictions (SPEC §8 step 4): the order of
// pops, stale entries skipped (PopCurrent, and PopCurrentBelow up to a
// bound), the rebuild bound, NoneBelow, a wider key, the memory it
// reports, and NoEvictableLeafError when nothing is
// evictable (which lru and fifo never reach through an engine, so it is
// tested here, on the structure itself).
#include "kvprefix/leaf_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/memory.h"

namespace kvprefix {
namespace {

using Heap = LeafHeap<std::uint64_t, std::uint32_t>;

// Every entry is current: PopCurrent then pops in plain heap order.
constexpr auto kAlwaysCurrent = [](const Heap::Entry&) { return true; };

std::uint32_t Pop(Heap& heap) {
  return heap.PopCurrent(kAlwaysCurrent, "test", 1, 0);
}

TEST(LeafHeapTest, PopsBySmallestKeyFirst) {
  Heap heap;
  heap.Push(5, 1);
  heap.Push(3, 2);
  heap.Push(9, 3);
  heap.Push(4, 1);
  heap.Push(7, 4);
  EXPECT_EQ(heap.size(), 5u);
  EXPECT_EQ(heap.front().key, 3u);
  EXPECT_EQ(heap.front().handle, 2u);
  std::vector<std::uint32_t> handles;
  while (!heap.empty()) handles.push_back(Pop(heap));
  // (3,2) (4,1) (5,1) (7,4) (9,3).
  EXPECT_EQ(handles, (std::vector<std::uint32_t>{2, 1, 1, 4, 3}));
}

// A model of an engine's leaves: handle -> current key. An entry is current
// while its handle is a leaf with that key.
struct Leaves {
  std::map<std::uint32_t, std::uint64_t> keys;

  bool IsCurrent(const Heap::Entry& entry) const {
    const auto leaf = keys.find(entry.handle);
    return leaf != keys.end() && leaf->second == entry.key;
  }
  // The predicate PopCurrent and PopCurrentBelow take.
  auto IsCurrentFn() const {
    return [this](const Heap::Entry& entry) { return IsCurrent(entry); };
  }
  // Leaves 1 to n, leaf h with key h, each pushed to `heap`.
  static Leaves OneTo(std::uint32_t n, Heap& heap) {
    Leaves leaves;
    for (std::uint32_t handle = 1; handle <= n; ++handle) {
      leaves.keys[handle] = handle;
      heap.Push(handle, handle);
    }
    return leaves;
  }
  auto ForEach() const {
    return [this](auto add) {
      for (const auto& [handle, key] : keys) add(key, handle);
    };
  }
};

TEST(LeafHeapTest, PopCurrentSkipsAndDropsStaleEntries) {
  Heap heap;
  Leaves leaves = Leaves::OneTo(4, heap);
  // Leaf 1 touched (new key 10), leaf 2 gone (evicted or no longer a leaf):
  // their entries (1,1) and (2,2) are stale.
  leaves.keys[1] = 10;
  heap.Push(10, 1);
  leaves.keys.erase(2);
  const auto is_current = leaves.IsCurrentFn();
  EXPECT_EQ(heap.PopCurrent(is_current, "test", 3, 2), 3u);
  EXPECT_EQ(heap.size(), 2u) << "(1,1), (2,2) and (3,3) popped";
  EXPECT_EQ(heap.PopCurrent(is_current, "test", 2, 1), 4u);
  EXPECT_EQ(heap.PopCurrent(is_current, "test", 1, 0), 1u);
  EXPECT_TRUE(heap.empty());
}

// PopCurrentBelow takes current leaves below the bound only, drops the
// stale entries below it on the way, and neither pops nor throws at the
// bound: a stale entry and a current one at or above it stay.
TEST(LeafHeapTest, PopCurrentBelowStopsAtTheBoundWithoutThrowing) {
  Heap heap;
  Leaves leaves = Leaves::OneTo(5, heap);
  leaves.keys.erase(2);  // (2,2) stale, below the bound
  leaves.keys.erase(4);  // (4,4) stale, at the bound
  const auto is_current = leaves.IsCurrentFn();
  EXPECT_EQ(heap.PopCurrentBelow(is_current, 4),
            std::optional<std::uint32_t>{1});
  EXPECT_EQ(heap.PopCurrentBelow(is_current, 4),
            std::optional<std::uint32_t>{3})
      << "(2,2) is stale and dropped";
  EXPECT_EQ(heap.PopCurrentBelow(is_current, 4), std::nullopt);
  EXPECT_EQ(heap.size(), 2u) << "(4,4) and (5,5) stay";
  EXPECT_EQ(heap.PopCurrentBelow(is_current, 6),
            std::optional<std::uint32_t>{5})
      << "(4,4) dropped, then 5";
  EXPECT_TRUE(heap.empty());
  EXPECT_EQ(heap.PopCurrentBelow(is_current, 100), std::nullopt)
      << "an empty heap: nothing, no NoEvictableLeafError";
}

// Touching one leaf of n over and over pushes a stale entry each time;
// RebuildIfOverfull, called after every touch as the engines call it after
// every insert, keeps the heap at most 2n + 64 entries, and a rebuild leaves
// exactly one entry per leaf, in the right order.
TEST(LeafHeapTest, RebuildKeepsSizeWithinTwiceTheItemsPlus64) {
  constexpr std::size_t kLeaves = 20;
  Heap heap;
  Leaves leaves;
  for (std::uint32_t handle = 0; handle < kLeaves; ++handle) {
    leaves.keys[handle] = 1000 + handle;
    heap.Push(1000 + handle, handle);
  }
  EXPECT_EQ(Heap::EntryBound(kLeaves), 2 * kLeaves + 64);
  int rebuilds = 0;
  std::size_t largest = 0;
  for (std::uint64_t touch = 1; touch <= 1000; ++touch) {
    leaves.keys[7] = 2000 + touch;  // leaf 7 touched again
    heap.Push(2000 + touch, 7);
    if (heap.RebuildIfOverfull(kLeaves, leaves.ForEach())) {
      ++rebuilds;
      EXPECT_EQ(heap.size(), kLeaves) << "one entry per leaf after a rebuild";
    }
    largest = std::max(largest, heap.size());
    ASSERT_LE(heap.size(), 2 * kLeaves + 64) << "after touch " << touch;
    ASSERT_FALSE(heap.Overfull(kLeaves));
  }
  EXPECT_EQ(largest, 2 * kLeaves + 64);
  // 1000 touches, a rebuild at 105 entries that leaves 20: every 85th.
  EXPECT_EQ(rebuilds, 1000 / 85);
  const auto is_current = leaves.IsCurrentFn();
  std::vector<std::uint32_t> order;
  for (std::size_t i = 0; i < kLeaves; ++i) {
    const std::uint32_t handle = heap.PopCurrent(is_current, "test", 1, 0);
    order.push_back(handle);
    leaves.keys.erase(handle);
  }
  std::vector<std::uint32_t> expected;
  for (std::uint32_t handle = 0; handle < kLeaves; ++handle) {
    if (handle != 7) expected.push_back(handle);
  }
  expected.push_back(7);  // its key, 3000, is the largest
  EXPECT_EQ(order, expected);
  EXPECT_TRUE(heap.empty());
}

TEST(LeafHeapTest, RebuildIfOverfullDoesNothingUpToTheBound) {
  Heap heap;
  for (std::uint32_t i = 0; i < 2 * 3 + 64; ++i) heap.Push(i, i);
  bool scanned = false;
  EXPECT_FALSE(heap.RebuildIfOverfull(3, [&](auto) { scanned = true; }));
  EXPECT_FALSE(scanned);
  EXPECT_EQ(heap.size(), 70u);
  heap.Push(70, 70);
  EXPECT_TRUE(heap.Overfull(3));
  EXPECT_TRUE(heap.RebuildIfOverfull(3, [](auto add) { add(42, 9); }));
  EXPECT_EQ(heap.size(), 1u);
  EXPECT_EQ(heap.front().key, 42u);
  EXPECT_EQ(heap.front().handle, 9u);
}

TEST(LeafHeapTest, NoneBelowComparesWithTheSmallestKey) {
  Heap heap;
  EXPECT_TRUE(heap.NoneBelow(0)) << "an empty heap has nothing below";
  heap.Push(8, 1);
  heap.Push(5, 2);
  EXPECT_TRUE(heap.NoneBelow(4));
  EXPECT_TRUE(heap.NoneBelow(5)) << "equal is not below";
  EXPECT_FALSE(heap.NoneBelow(6));
}

// A policy may order by more than one number, e.g. (count, stamp).
TEST(LeafHeapTest, AWiderKeyOrdersLexicographically) {
  LeafHeap<std::pair<std::uint64_t, std::uint64_t>, std::int32_t> heap;
  heap.Push({2, 1}, 10);
  heap.Push({1, 9}, 11);
  heap.Push({1, 3}, 12);
  heap.Push({2, 0}, 13);
  const auto current = [](const auto&) { return true; };
  std::vector<std::int32_t> handles;
  while (!heap.empty()) handles.push_back(heap.PopCurrent(current, "t", 1, 0));
  EXPECT_EQ(handles, (std::vector<std::int32_t>{12, 11, 13, 10}));
  EXPECT_TRUE(heap.NoneBelow({1, 0}));
}

TEST(LeafHeapTest, AnEmptyHeapThrowsNoEvictableLeafError) {
  Heap heap;
  try {
    heap.PopCurrent(kAlwaysCurrent, "hash", 5, 4);
    FAIL() << "popped from an empty heap";
  } catch (const NoEvictableLeafError& error) {
    EXPECT_EQ(std::string(error.what()),
              "hash: no leaf is evictable with 5 nodes present over "
              "capacity 4");
  }
  // Only stale entries: they are dropped, then the same error.
  heap.Push(1, 1);
  heap.Push(2, 2);
  EXPECT_THROW(
      heap.PopCurrent([](const Heap::Entry&) { return false; }, "radix", 3, 2),
      NoEvictableLeafError);
  EXPECT_TRUE(heap.empty());
  // It is a std::logic_error: a broken invariant, not bad input.
  EXPECT_THROW(Pop(heap), std::logic_error);
}

TEST(LeafHeapTest, ReserveGrowsGeometricallyAndMemoryBytesCountsIt) {
  Heap heap;
  EXPECT_EQ(heap.memory_bytes(), 0u);
  heap.Reserve(10);
  const std::size_t capacity = heap.capacity();
  ASSERT_GE(capacity, 10u);
  EXPECT_EQ(heap.memory_bytes(),
            MallocChunkBytes(capacity * sizeof(Heap::Entry)));
  EXPECT_EQ(sizeof(Heap::Entry), 16u) << "{uint64 key, uint32 handle}";
  heap.Reserve(capacity + 1);
  EXPECT_GE(heap.capacity(), 2 * capacity);
  for (std::uint32_t i = 0; i < 10; ++i) heap.Push(i, i);
  EXPECT_EQ(heap.size(), 10u);
}

}  // namespace
}  // namespace kvprefix
