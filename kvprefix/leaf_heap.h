// LeafHeap: the order in which a bounded cache's leaves leave (SPEC §8 step
// 4), one structure for every optimized engine (hash, radix, double-array).
//
// SPEC §8 evicts, while more than C nodes are present, the leaf with the
// smallest key: its stamp under lru, its node ID under fifo, its (count,
// stamp) under lfu (kvprefix/policies/). Keys change
// (a touch gives a leaf a new stamp) and nodes stop being leaves (an insert
// gives them a child) far more often than leaves are evicted, so the engines
// do not keep the leaves in a structure that can find and update an entry.
// They keep a lazy-deletion binary min-heap instead: an entry {key, handle}
// is pushed whenever a node becomes a leaf or a leaf's key changes, and
// nothing is ever removed from the middle. An entry goes stale when its
// node is evicted, gets a child or gets a new key; stale entries are dropped
// when they reach the front (PopCurrent), and all of them at once when they
// pile up (Rebuild from the engine's current leaves once the heap holds more
// than EntryBound(items) entries). The same technique orders the leaves of
// SGLang's RadixCache (RadixCache.evict in
// python/sglang/srt/mem_cache/radix_cache.py heapifies the evictable leaves
// and pushes a parent once it is a leaf) and the priority queues of
// libCacheSim's eviction algorithms; lazy deletion itself is the textbook
// way to "decrease a key" in a binary heap without a position index (e.g.
// Dijkstra's algorithm with std::priority_queue).
//
// Shapes. Key is the policy's order: std::uint64_t for lru and fifo, a wider
// type (lfu's {count, stamp}) for a policy that orders by more; it
// needs a strict weak order `<` and a copy. Handle names a node or an edge in
// the engine (a slot, an edge index): a small integer, ordered by `<` too.
// Entries are ordered by key alone: entries of equal keys (stale copies of
// one leaf's) pop in any order, which cannot change a victim, since the keys
// of the leaves present differ (SPEC §8). A tie-break on the handle would
// cost a second compare in every sift, measurably (docs/design_history.md).
//
// Invariant the engines keep (their header essays say how): every leaf
// present has at least one entry whose key equals its current key. Then the
// first entry that the caller's predicate accepts is the policy's leaf, and
// an empty heap while nodes are over capacity means that no leaf is
// evictable: PopCurrent throws NoEvictableLeafError (kvprefix/cache.h)
// instead of reading past the end.
//
// Thread safety: none of its own. The const members may run concurrently
// with each other; everything else needs exclusive access, as the engine
// that owns the heap does for its inserts.
#ifndef KVPREFIX_KVPREFIX_LEAF_HEAP_H_
#define KVPREFIX_KVPREFIX_LEAF_HEAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/memory.h"

namespace kvprefix {

template <typename Key, typename Handle>
class LeafHeap {
 public:
  // One leaf as pushed: the policy's key at that moment and the engine's
  // name for the leaf.
  struct Entry {
    Key key;
    Handle handle;
  };

  // The entries a heap over `items` nodes (or edges) may keep between
  // rebuilds: twice the items plus a slack of 64, so that rebuilding (O(items))
  // is paid for by at least `items` stale entries pushed since the last one
  // (amortized O(1) a push) and memory stays O(items). O(1). Thread-safe.
  static constexpr std::size_t EntryBound(std::size_t items) {
    return 2 * items + 64;
  }

  // An empty heap; allocates nothing.
  LeafHeap() = default;

  // Entries held, stale ones included. O(1).
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Entries the heap has room for without allocating. O(1).
  std::size_t capacity() const { return entries_.capacity(); }
  // An entry of the smallest key, which may be stale. Requires
  // !empty(). O(1).
  const Entry& front() const { return entries_.front(); }

  // True if no entry has a key smaller than `key`, an empty heap included.
  // Then a leaf whose current key is `key` is the policy's next victim
  // (every leaf has an entry with its current key, and keys of different
  // leaves differ, SPEC §8), so an engine may evict it at once without a
  // push and a pop: a parent left without children along a chain. O(1).
  bool NoneBelow(const Key& key) const {
    return entries_.empty() || !(entries_.front().key < key);
  }

  // Records that `handle` is a leaf with key `key`. O(log size); amortized
  // O(1) allocation (std::vector growth). Throws std::bad_alloc, leaving the
  // heap unchanged; never throws once Reserve made room.
  void Push(const Key& key, Handle handle) {
    entries_.push_back(Entry{key, handle});
    std::push_heap(entries_.begin(), entries_.end(), Later{});
  }

  // Pops entries, smallest first, until one for which
  // is_current(const Entry&) is true (its handle is present, a leaf, and its
  // key equals the leaf's current key), and returns that entry's handle;
  // the stale entries popped on the way are dropped. is_current is a
  // template parameter, inlined (no std::function). O((1 + stale popped) *
  // log size). Throws NoEvictableLeafError (kvprefix/cache.h) if the heap
  // runs empty first: `engine`, `nodes` (present, or about to be) and
  // `capacity` name the cache in its message. The heap is then empty, which
  // leaves the invariant no worse than the caller's state did.
  template <typename IsCurrent>
  Handle PopCurrent(IsCurrent&& is_current, std::string_view engine,
                    std::uint64_t nodes, std::uint64_t capacity) {
    while (true) {
      if (entries_.empty()) [[unlikely]] {
        ThrowNoEvictableLeaf(engine, nodes, capacity);
      }
      const Entry top = PopFront();
      if (is_current(top)) return top.handle;
    }
  }

  // As PopCurrent, but only among entries whose key is below `bound`:
  // returns the handle of the first current one, or nothing (and never
  // throws) once every entry left has a key >= bound, stale or not. Those
  // are left in place. O((1 + stale popped) * log size).
  template <typename IsCurrent>
  std::optional<Handle> PopCurrentBelow(IsCurrent&& is_current,
                                        const Key& bound) {
    while (!NoneBelow(bound)) {
      const Entry top = PopFront();
      if (is_current(top)) return top.handle;
    }
    return std::nullopt;
  }

  // Replaces every entry by one per current leaf: for_each_leaf(add) must
  // call add(key, handle) once for each leaf present with its current key.
  // O(leaves + the engine's scan); no allocation when the leaves are no more
  // than the entries held before (they are whenever the invariant holds).
  // Throws std::bad_alloc if more room is needed and none is left; the heap
  // then holds some of the leaves and the caller must rebuild again.
  template <typename ForEachLeaf>
  void Rebuild(ForEachLeaf&& for_each_leaf) {
    entries_.clear();
    for_each_leaf([this](const Key& key, Handle handle) {
      entries_.push_back(Entry{key, handle});
    });
    std::make_heap(entries_.begin(), entries_.end(), Later{});
  }

  // True if the heap holds more than EntryBound(items) entries. O(1).
  bool Overfull(std::size_t items) const {
    return entries_.size() > EntryBound(items);
  }

  // Rebuild(for_each_leaf) if Overfull(items); returns whether it rebuilt.
  // Called once at the end of every bounded insert, it keeps size() <=
  // EntryBound(items) between inserts (leaves <= items). Costs and errors
  // as Rebuild when it rebuilds, O(1) otherwise.
  template <typename ForEachLeaf>
  bool RebuildIfOverfull(std::size_t items, ForEachLeaf&& for_each_leaf) {
    if (!Overfull(items)) return false;
    Rebuild(for_each_leaf);
    return true;
  }

  // Makes room for `entries` entries, at least doubling the capacity when it
  // grows (ReserveGeometric, kvprefix/memory.h), so that a reserve before
  // every push stays amortized O(1). Throws std::bad_alloc, leaving the heap
  // unchanged.
  void Reserve(std::size_t entries) { ReserveGeometric(entries_, entries); }

  // Heap bytes of the entries' array as a glibc malloc chunk (capacity, not
  // size). O(1).
  std::size_t memory_bytes() const {
    return VectorHeapBytes<Entry>(entries_.capacity());
  }

 private:
  // "a after b" in the min-order: the std heap algorithms keep the largest
  // element of this order at the front, i.e. an entry of the smallest key.
  // A function object, not a function: the heap algorithms are then
  // instantiated for this type and inline the compare, where a function
  // pointer left an indirect call in every sift step
  // (docs/design_history.md).
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return b.key < a.key;
    }
  };

  // Removes and returns an entry of the smallest key. Requires !empty().
  Entry PopFront() {
    std::pop_heap(entries_.begin(), entries_.end(), Later{});
    const Entry top = entries_.back();
    entries_.pop_back();
    return top;
  }

  // Out of line and cold: the message is built only when thrown.
  [[noreturn, gnu::cold, gnu::noinline]] static void ThrowNoEvictableLeaf(
      std::string_view engine, std::uint64_t nodes, std::uint64_t capacity) {
    throw NoEvictableLeafError(engine, nodes, capacity);
  }

  std::vector<Entry> entries_;  // a binary heap in the order of Later
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_LEAF_HEAP_H_
