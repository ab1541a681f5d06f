// HashTrie: a per-token trie whose edges live in one absl::flat_hash_map,
// unbounded (SPEC §1-§3) or a capacity-bounded cache under any eviction
// policy of SPEC §8 (lru, fifo, lfu).
//
// Design
// ------
// The seed's hint, made fast: "a dictionary can map a token to a child node
// ID". A naive per-node dictionary costs a heap object per node and one
// dependent cache miss per token. This engine keeps one global
// absl::flat_hash_map (Swiss table; Abseil, "SwissTables design notes")
// keyed by (parent, token), plus one observation that makes real traces
// cheap:
//
//   Nodes are stored in creation order, and an insert creates the nodes of
//   its unmatched suffix one after another. So the child created right after
//   its parent sits right after it. Such a "next-node edge" needs no map
//   entry: it is implied by two facts stored with the child, its edge token
//   and one bit saying "my parent is the entry before me".
//
// Storage is indexed by *slot*. Unbounded, slot == node ID: the layout has
// no ID array at all. Bounded, evicted nodes free their slots and new nodes
// reuse them, so storage stays proportional to the nodes present while IDs
// (never given twice, SPEC §8) keep growing; nodes_[slot].id holds the ID.
//
// Memory layout (per slot; slot 0 is the root: only its record's ID, 0, and
// child count are used)
//   tokens_[s]     the token on the edge into the node in slot s (4 bytes);
//   next_node_[s]  true when that node's parent is in slot s - 1 (1 bit);
//   branches_      flat_hash_map<(parent slot << 32 | uint32 token), child
//                  slot> for every other edge: where an insert leaves an
//                  existing path (about one entry per insert that adds
//                  nodes), and, bounded, where a new chain continues in a
//                  reused slot that is not right after its parent.
//   Bounded only (empty vectors, never touched, when unbounded):
//   nodes_[s]      16 bytes, one record because creating and evicting a
//                  node read them together (one load, not three arrays'):
//                  .id the node's ID, 64-bit, 0 marks a free slot;
//                  .parent the parent's slot, for a branch's key on eviction;
//                  .children the node's child count, 0 means a leaf;
//   states_        the policy's state of slot s (kvprefix/cache_model.h's
//                  PolicyStates): lru's stamp (8 bytes), lfu's count and
//                  stamp (16 bytes), nothing for fifo;
//   free_          freed slots, reused last-freed-first;
//   leaves_        the leaves as a LeafHeap (kvprefix/leaf_heap.h, the lazy
//                  binary min-heap the optimized engines share) of (policy
//                  key, slot): one heap per policy's key type
//                  (PolicyLeafHeap), 16 bytes an entry for lru and fifo,
//                  24 for lfu.
//
// Invariants
//   * every node except the root has exactly one incoming edge, stored
//     either as next_node_[child] (parent slot == child slot - 1) or in
//     branches_; a free slot has next_node_ false, so it never matches;
//   * a node has at most one next-node child (slot + 1), others are branches;
//   * bounded: the nodes present are prefix-closed and at most `capacity`
//     after every Insert; every leaf has at least one heap entry whose key
//     equals its current key. An entry is stale (skipped when popped) if its
//     slot is free, is no leaf, or its key differs from the slot's current
//     key. A stale entry can never look valid for a new occupant of its
//     slot: a slot freed during request r is reused at the earliest by the
//     next creation, which is r's own nodes when it evicted before creating
//     (the shortcut below, and lfu's victims below its new leaf's key), and
//     a node evicted then was off r's path, its stamp < r; a slot freed
//     after creating is reused at r + 1 or later. The occupant's stamp is
//     its creating request or later, and fifo keys are unique IDs.
//
// Insert walks like MatchPrefix; each missing token creates a node in a
// slot (unbounded: the next slot, == the next ID) and, if its parent is in
// the slot before, only sets the bit, else adds a branch entry. MatchPrefix
// at slot p with token t first checks the next-node edge (tokens_[p + 1] ==
// t and next_node_[p + 1]), which reads the next array element: a chain
// inserted in one go is matched as a sequential scan. Only where that fails
// does it probe the hash map.
//
// Bounded Insert (SPEC §8 steps 1-4) is kvprefix/bounded_insert.h's
// InsertBounded, written once for the three tries and every policy type
// (kvprefix/cache_model.h); this engine provides its primitives, touching
// through PolicyStates as it walks and evicting with EvictLeaves. A policy
// whose kKeepsFirstCapacityNodes is false (lfu) gets the steps as SPEC §8
// writes them: walk and touch, create every new node, evict while more than C
// are present, the new ones included; only the victims whose keys are below the
// new leaf's, which step 4 would take first, go before creating
// (EvictLeavesBelow), so that the new nodes reuse their slots in ascending runs
// as below. Where the trait holds (lru, fifo) the insert exploits how the
// policy orders the victims of one request r whose path (matched nodes, then m
// new ones) has length L. Every leaf off r's path goes before any node of it:
// for LRU the path holds stamp r, the largest; for FIFO the path's only leaf is
// its last node, new or touched, and a new node's ID is the largest (with m = 0
// nothing is evicted at all, since the nodes present are <= C). So steps 2-4
// are done as:
//   1. walk the matched part, writing stamp r (LRU) on every node;
//   2. of the m new nodes, only the first min(m, C - matched) are stored;
//      the rest would be evicted at once (deepest first, after everything
//      else): they get their IDs, count as evicted and go to the listener,
//      but never occupy a slot;
//   3. pin the deepest matched node (count its first new child early, so it
//      is no leaf), then evict present + stored - C leaves off the path,
//      smallest key first, *before* creating anything: the victims do not
//      depend on the new nodes, and creating after evicting means the slots
//      never exceed capacity + 1;
//   4. create the stored nodes in the freed slots (then at the end). The
//      evicted are never more than the stored, so every freed slot is
//      reused by the same insert and none stays free between inserts.
//      Freed slots are reused last-freed-first, and a chain is evicted
//      deepest first, so a new chain usually gets ascending consecutive
//      slots and keeps its implicit next-node edges.
// Eviction pops the heap until an entry is valid (LeafHeap::PopCurrent,
// which throws NoEvictableLeafError should the heap run empty). When the
// victim's parent becomes a leaf whose key is <= the heap's smallest entry
// (LeafHeap::NoneBelow) it is evicted at once, without touching the heap:
// for FIFO that is always so (a parent's ID is smaller than its child's),
// and for LRU it is so along a chain touched by the same requests. So
// evicting a chain of k nodes costs one heap pop and k O(1) removals. At the
// end of every bounded insert the heap is rebuilt from the slots (O(slots))
// if it holds more than 2 * nodes + 64 entries (LeafHeap::EntryBound), which
// bounds it at O(nodes) amortized.
//
// Complexity: Insert and MatchPrefix are O(length) expected; a step costs an
// array read, plus one hash probe at branch points. Bounded Insert adds
// O(matched) stamp writes (LRU), O(1) heap pushes and, per evicted node,
// O(1) expected plus O(log leaves) per heap pop. Memory (unbounded): ~4.2
// bytes a node plus ~17-39 bytes (slot + control byte over the load factor)
// a branch, at most ~47 bytes a node when every node is a branch (the
// memory property, testing/property_checks.h, asks <= 64). Bounded adds 16
// (FIFO), 24 (LRU) or 32 (LFU) bytes a slot and 16 bytes a heap entry (24
// for LFU; <= 2 * nodes + 64 between inserts), and reused slots make more
// branches: 30-45 bytes a node on the Mooncake conversation trace in block
// mode. All of it follows min(capacity, nodes ever created) (the slot arrays
// stop growing at capacity + 1; without the shortcut at capacity + the longest
// request's new nodes), never the IDs given.
//
// Limits: slots are 32-bit. Unbounded, slot == ID, so Insert throws
// CapacityError, before changing anything, when the trie would exceed
// max_nodes (2^32 - 1) nodes. Bounded, IDs are 64-bit (2^64 - 1 IDs, which
// no run reaches); only the nodes *present* are limited to max_nodes, which
// matters only for a capacity above it.
#ifndef KVPREFIX_OPTIMIZED_HASH_TRIE_H_
#define KVPREFIX_OPTIMIZED_HASH_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kvprefix/bounded_insert.h"
#include "kvprefix/cache.h"
#include "kvprefix/cache_core.h"
#include "kvprefix/cache_model.h"
#include "kvprefix/huge_pages.h"
#include "kvprefix/leaf_heap.h"
#include "kvprefix/pins.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix {

class HashTrie : public CacheCore {
 public:
  static constexpr std::string_view kName = "hash";
  // Largest number of nodes stored at once (slots are uint32). Unbounded,
  // this is also the largest node ID.
  static constexpr std::uint64_t kMaxNodes =
      std::numeric_limits<std::uint32_t>::max();

  // An unbounded trie holding only the root.
  HashTrie() : HashTrie(CacheOptions{}) {}

  // An empty cache with options.capacity and options.policy (SPEC §8);
  // CacheOptions{} (capacity kUnbounded) is the unbounded trie, which keeps
  // no recency state at all. At most `max_nodes` nodes are stored at once
  // (1 <= max_nodes <= kMaxNodes; tests lower it to reach the limit).
  // Throws std::invalid_argument if options.page_size != 1 (pages are
  // PagedIndex's job) or max_nodes is outside [1, kMaxNodes].
  explicit HashTrie(const CacheOptions& options,
                    std::uint64_t max_nodes = kMaxNodes);

  // Inserts `sequence` (SPEC §1). Bounded: SPEC §8 steps 2-4 with the next
  // stamp (insert, touch the whole path, evict leaves by the policy while
  // more than `capacity` nodes are present). Returns the ID of the deepest
  // node of the sequence's path still present (unbounded: the node its last
  // token reaches), kRootNode if none (an empty sequence, C = 0).
  // O(length) expected, plus the evictions (see the design notes).
  // Errors: throws CapacityError, leaving the trie unchanged, if more than
  // max_nodes nodes would be stored (unbounded: node_count() would exceed
  // it; bounded: only possible with capacity > max_nodes). Throws
  // std::bad_alloc on memory exhaustion, after which the trie must not be
  // used: Abseil's table (20220623) is itself left inconsistent when its
  // growth fails, so no weaker guarantee is attempted. An exception from the
  // eviction listener propagates after the cache is complete. Throws
  // NoEvictableLeafError (kvprefix/cache.h) if it must evict and finds no
  // leaf, which lru and fifo never reach (SPEC §8). Not thread-safe.
  NodeId Insert(TokenSpan sequence);

  // Longest cached prefix of `request` among the nodes present (SPEC §1):
  // matched_length in tokens, cache_node the ID reached. Never modifies the
  // trie (no touch, SPEC §8). O(matched length) expected. Never throws;
  // safe to call from many threads at once (when no Insert/Access runs).
  Match MatchPrefix(TokenSpan request) const;

  // The serving step, SPEC §8 steps 1-4 (SPEC §3's match-then-insert when
  // unbounded): inserts `request` as Insert does and returns the match it
  // had before, walking the request once. Errors and cost as Insert.
  // Not thread-safe.
  Match Access(TokenSpan request);

  // SPEC §10.4, model spec (kvprefix/request.h's ServingEngine), as
  // ReferenceTrie's: Admit pins the matched path (the match limit
  // applied), Finish releases it and inserts the stored sequence as Insert
  // does. A pin is a count per node of the path (kvprefix/pins.h), and a
  // pinned node counts one more child, so that no eviction takes the path
  // (none of its nodes is a leaf). While any pin is held, Insert
  // takes SPEC §8's general path: the first-C-nodes shortcut of lru and
  // fifo assumes every node off the path can go first. O(matched) expected
  // per Admit, plus Insert's cost per Finish.
  Attempt Admit(RequestId id, TokenSpan prompt, std::uint64_t stored_length);
  void PrefillEnd(RequestId, TokenSpan) {}
  void Finish(RequestId id, TokenSpan stored);
  // The match Admit would record now (the match limit applied).
  Match PeekMatch(TokenSpan request) const;
  // Nodes with a pin; nodes present; nodes evicted. O(1).
  std::uint64_t pinned() const { return pins_.pinned(); }
  std::uint64_t cached_pages() const { return node_count(); }
  std::uint64_t evicted_pages() const { return evicted_count(); }

  // Nodes present, root excluded. O(1). Unbounded, also the largest ID.
  std::uint64_t node_count() const { return tokens_.size() - 1 - free_.size(); }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h). evicted_count(): nodes evicted so
  // far, including those never stored because they would have been evicted
  // at once (a request longer than the capacity). The listener gets every
  // eviction by its edge token (see kvprefix/cache.h): each Insert/Access
  // makes at most two calls, once it is complete: the stored nodes it
  // evicted, then the new nodes it never stored. Never called when
  // unbounded.

  // Edges stored in the hash map; every other edge is an implicit
  // next-node edge. O(1). For tests and benchmarks of the layout.
  std::size_t branch_count() const { return branches_.size(); }

  // Heap bytes of the arrays, the hash table and (bounded) the heap of
  // leaves, the free list and the listener's buffer, counted as glibc malloc
  // chunks (capacities, not sizes). O(1).
  std::size_t memory_bytes() const;

 private:
  using Slot = std::uint32_t;
  // The end of a walk from the root: tokens followed and the slot reached.
  struct Walk {
    std::size_t matched = 0;
    Slot slot = 0;
  };

  // The child of the node in slot `parent` along `token`, or 0 (the root's
  // slot, never a child) if there is none.
  Slot Child(Slot parent, Token token) const {
    const std::size_t next = std::size_t{parent} + 1;
    if (next < tokens_.size() && tokens_[next] == token && next_node_[next]) {
      return static_cast<Slot>(next);
    }
    const auto branch = branches_.find(BranchKey(parent, token));
    return branch == branches_.end() ? 0 : branch->second;
  }
  // Follows `request` from the root as far as edges exist, calling
  // visit(slot) on every node reached (LRU's touch; or nothing).
  template <typename Visit>
  Walk WalkPath(TokenSpan request, Visit&& visit) const;

  // Unbounded: creates the nodes of `sequence` past `existing`.
  NodeId InsertUnbounded(Walk existing, TokenSpan sequence);

  // Bounded: kvprefix/bounded_insert.h's InsertBounded, over the primitives
  // below (that header states what each must do).
  template <CachePolicy Policy, typename Trie, typename OnWalk>
  friend BoundedInsertResult InsertBounded(Trie&, TokenSpan, OnWalk&&);
  using Path = Walk;
  template <typename Policy>
  void CheckRoom(TokenSpan sequence, std::size_t stored) const;
  template <typename Policy>
  Walk WalkTouching(TokenSpan prefix, std::uint64_t stamp);
  Match MatchAt(const Walk& walk) const {
    return Match{walk.matched, nodes_[walk.slot].id};
  }
  // Frees room before creating (step 4's first victims; all of them under
  // the shortcut), then creates the chain.
  template <typename Policy>
  void Grow(Walk& walk, TokenSpan tokens, std::uint64_t stamp);
  void SkipIds(std::uint64_t count) { next_id_ += count; }
  // Climbs from the old end through the freed slots.
  Walk DeepestLeft(TokenSpan sequence, Walk walk) const;
  template <typename Policy>
  void Tidy();
  // Reserves room for `appended` more slots in every slot array.
  void ReserveSlots(std::uint64_t appended);
  // The structure kvprefix/cache_model.h's EvictLeaves evicts from.
  template <typename Policy>
  class Leaves;
  template <typename Policy>
  void EvictLeaves(std::uint64_t count);
  // Step 4's victims below `bound` only, at most `count` of them.
  template <typename Policy>
  void EvictLeavesBelow(std::uint64_t count, const typename Policy::Key& bound);
  template <typename Policy>
  Slot CreateChain(Slot parent, TokenSpan tokens, std::uint64_t request);
  // Frees the leaf in `slot`; returns its parent's slot.
  Slot Remove(Slot slot);
  template <typename Policy>
  typename Policy::Key LeafKey(Slot slot) const {
    return states_.LeafKey<Policy>(slot, nodes_[slot].id);
  }
  // Records that the leaf in `slot` has its current key.
  template <typename Policy>
  void PushLeaf(Slot slot) {
    leaves_.Get<Policy>().Push(LeafKey<Policy>(slot), slot);
  }

  static std::uint64_t BranchKey(Slot parent, Token token) {
    return std::uint64_t{parent} << 32 | static_cast<std::uint32_t>(token);
  }

  std::uint64_t max_nodes_;
  HugePageVector<Token> tokens_;  // tokens_[slot]: token on the edge into it
  std::vector<bool> next_node_;   // next_node_[slot]: parent is slot - 1
  HugePageHashMap<std::uint64_t, Slot> branches_;
  // Bounded only:
  // A bounded slot's record (the essay's memory layout).
  struct Node {
    NodeId id = 0;
    Slot parent = 0;
    Slot children = 0;
  };
  static_assert(sizeof(Node) == 16, "the essay's 16 bytes a slot");
  HugePageVector<Node> nodes_;  // nodes_[slot]
  // The policy's state of slot s (kvprefix/cache_model.h; the essay).
  PolicyStates<HugePageVector<std::uint64_t>> states_;
  std::vector<Slot> free_;       // free slots, last freed at the back
  PolicyLeafHeap<Slot> leaves_;  // every leaf, by key, lazily
  NodeId next_id_ = 1;           // "the next unused one" (SPEC §1)
  // SPEC §10.4: each pinned slot's pin count (kvprefix/pins.h; hashed, the
  // slots being up to 2^32), and each running request's match (tokens, and
  // the slot it ends at).
  PinTable<Slot, Walk> pins_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_OPTIMIZED_HASH_TRIE_H_
