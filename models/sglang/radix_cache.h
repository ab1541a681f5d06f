// RadixCache: model `sglang` (SPEC §9.3) at full speed, the radix engine's
// SGLang RadixCache replayed one request at a time. Its answers, node_count,
// evicted_count and size equal ReferenceRadixCache's after every request
// (tests/model_engines_test.cc), for both triggers, lru and fifo, both match
// limits and every page size.
//
// Design
// ------
// Nodes live in slots of one vector; an evicted node's slot is reused by the
// next new node, while IDs (never reused, SPEC §9.3) come from a counter.
// An edge is a run of tokens in one flat arena_: a new leaf appends its
// tokens, a split only cuts a run in two (the new node takes its head, the
// child keeps the tail), so edges never move or copy on the hot path. The
// runs of evicted nodes are reclaimed by compacting the arena (copying the
// edges present into a fresh one) once it holds more than twice the tree's
// size plus kArenaSlack tokens: amortized O(1) a token, since each token is
// appended once and evicted once, and memory stays O(tree size).
//
// Children are found through a PageMap (kvprefix/page_map.h): (parent slot,
// first page) -> child slot in one absl::flat_hash_map, the page hashed
// (the token itself when P = 1) and compared on lookup.
//
// Eviction candidates (leaves, unlocked, not the root) are ordered by a
// LeafHeap (kvprefix/leaf_heap.h), the lazy-deletion min-heap of the
// optimized engines, keyed by priority (lru: access time, fifo: creation
// time) with the slot as handle. Invariant (bounded only): every candidate
// has an entry whose key is its current priority. It holds because an entry
// is pushed whenever a node becomes a candidate or, under lru, a leaf's
// access time changes: a new leaf, a leaf entered by a match or insert, a
// parent left childless by an eviction, and the locked node of on-allocate
// once unlocked (the only locked node that can be a leaf: its ancestors
// keep it as a child). An entry is stale if its slot is free, not a leaf,
// locked (then its node gets a new entry when unlocked) or has another
// priority; a stale entry never matches a new occupant of its slot, whose
// times are all later than any time of the evicted node's. The heap is
// rebuilt from the candidates when it holds more than
// LeafHeap::EntryBound(nodes) entries. Unbounded, nothing is pushed.
//
// Costs: match and insert O(n) expected for n tokens (one hash probe and
// one page compare per edge, then a token compare along it), plus O(locked
// path) for on-allocate's locks; evict O(log entries) a victim, amortized.
//
// Thread safety: const members may run concurrently; the rest need exclusive
// access.
#ifndef KVPREFIX_MODELS_SGLANG_RADIX_CACHE_H_
#define KVPREFIX_MODELS_SGLANG_RADIX_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/cache_core.h"
#include "kvprefix/leaf_heap.h"
#include "kvprefix/page_map.h"
#include "kvprefix/pins.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix {

class RadixCache : public CacheCore {
 public:
  static constexpr std::string_view kName = "radix";

  // A model engine of kvprefix/prefix_index.h for model sglang: its members
  // mean what that header says of sglang (and equal ReferenceRadixCache's).
  // Also throws std::invalid_argument for a page size outside 1 to 2^31 - 1.
  // Costs for n tokens: Access O(n) expected plus O(log entries) per node
  // evicted; Insert and MatchPrefix O(n) expected; the counts O(1); Access
  // throws std::bad_alloc when memory runs out.
  RadixCache();  // unbounded, over tokens (P = 1), after-insert
  // options.capacity pages of options.page_size tokens (SPEC §9.3), with
  // options.policy (lru or fifo), options.match_limit and options.trigger.
  explicit RadixCache(const CacheOptions& options);

  // §9.3's steps for one request. Equal to SPEC §10.4's attempt, prefill
  // end and finish at one instant (§10.7; tests/property/
  // serving_properties_test.cc), it keeps its own shorter path: no lock
  // under after-insert, one insert under on-allocate.
  Match Access(TokenSpan request);
  NodeId Insert(TokenSpan sequence);

  // SPEC §10.4, model sglang: ReferenceRadixCache's Admit, PrefillEnd and
  // Finish (kvprefix/request.h's ServingEngine), with lock counts under
  // both triggers and slots held by running requests. Costs as Access,
  // plus O(locked path) per lock and a hash map entry per running request.
  Attempt Admit(RequestId id, TokenSpan prompt, std::uint64_t stored_length);
  void PrefillEnd(RequestId id, TokenSpan prompt);
  void Finish(RequestId id, TokenSpan stored);
  Match PeekMatch(TokenSpan request) const;
  // Locked plus held tokens; tree size / P; evicted tokens / P. O(1).
  std::uint64_t pinned() const { return locked_tokens_ + held_; }
  std::uint64_t cached_pages() const { return size_ / options().page_size; }
  std::uint64_t evicted_pages() const {
    return evicted_tokens_ / options().page_size;
  }
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return present_; }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h): evicted_count() counts the nodes evicted, and
  // the listener gets each evicted node's edge; CacheCore's clock gives
  // §9.3's ticks.
  // The tree's size: tokens on the edges of the nodes present. O(1).
  std::uint64_t size_tokens() const { return size_; }
  // The node, slot and arena arrays, the page map and the heap. O(1).
  std::size_t memory_bytes() const;

 private:
  using Slot = std::uint64_t;  // 0: the root
  static constexpr Slot kRootSlot = 0;
  // Evicted tokens the arena may hold beyond the tree's size before it is
  // compacted (so that small trees do not compact often).
  static constexpr std::uint64_t kArenaSlack = 4096;

  struct Node {
    NodeId id = kRootNode;
    Slot parent = kRootSlot;
    std::uint64_t offset = 0;  // the edge: arena_[offset, offset + length)
    std::uint64_t length = 0;
    std::uint64_t access = 0;    // a
    std::uint64_t creation = 0;  // c
    std::uint64_t children = 0;
    bool present = true;
  };
  // Where a walk ended: the tokens walked and the node.
  struct Walk {
    std::size_t tokens = 0;
    Slot node = kRootSlot;
  };

  TokenSpan Edge(Slot slot) const {
    return TokenSpan(arena_).subspan(nodes_[slot].offset, nodes_[slot].length);
  }
  TokenSpan FirstPage(Slot slot) const {
    return Edge(slot).first(options().page_size);
  }
  // The child of `parent` whose edge starts with key's first page, or
  // PageMap::kNone.
  Slot FindChild(Slot parent, TokenSpan key) const {
    return children_.Find(parent, key.first(options().page_size),
                          [this](Slot slot) { return FirstPage(slot); });
  }
  // The common prefix of slot's edge and `key`, in tokens of whole pages.
  std::size_t CommonTokens(Slot slot, TokenSpan key) const;
  TokenSpan WholePages(TokenSpan key) const {
    return key.first(key.size() / options().page_size * options().page_size);
  }
  std::uint64_t Priority(const Node& node) const;
  bool IsCandidate(Slot slot) const {
    const Node& node = nodes_[slot];
    return slot != kRootSlot && node.present && node.children == 0 &&
           !pins_.is_pinned(slot);
  }
  // Records a candidate's current priority (bounded only).
  void PushIfCandidate(Slot slot);
  // Sets slot's access time to t, pushing it if it is a candidate (lru).
  void Touch(Slot slot, std::uint64_t t);
  Slot NewNode(Slot parent, std::uint64_t offset, std::uint64_t length);
  // split(child, j) at `tokens` = j * P: returns the new node.
  Slot Split(Slot child, std::size_t tokens);
  Walk MatchKey(TokenSpan key);
  // §9.3's insert; returns the node the key's whole pages end at.
  Slot InsertKey(TokenSpan key);
  // What §9.3's match or insert of a key whose path ends exactly at `node`
  // (so neither splits nor creates) does: t = tick, a = t on the root and
  // every node of the path. O(nodes of the path), where a walk costs
  // O(tokens).
  void TouchPath(Slot node);
  std::uint64_t Evict(std::uint64_t demand);
  // Adds or removes one lock on `slot` and its ancestors; a node whose
  // last lock goes is pushed if it is a candidate (its entries may have
  // been dropped while it was locked).
  void AddLocks(Slot slot, bool lock);
  // C·P tokens, saturating.
  std::uint64_t LimitTokens() const;
  // A running request (SPEC §10.4): its locked node, the slots it holds
  // outside the tree, its match, the tokens of its prompt's whole pages.
  struct Running {
    Slot node = kRootSlot;
    std::uint64_t held = 0;
    std::uint64_t matched = 0;
    std::uint64_t key_tokens = 0;  // the prompt's whole pages, K
  };
  // The end of every bounded Access: the heap rebuilt if overfull, the
  // arena compacted if sparse.
  void Tidy();

  std::vector<Node> nodes_ = std::vector<Node>(1);  // [Slot]; [0] the root
  std::vector<Slot> free_slots_;                    // evicted nodes' slots
  std::vector<Token> arena_;                        // the edges' tokens
  PageMap children_;
  LeafHeap<std::uint64_t, Slot> candidates_;
  NodeId next_id_ = 1;
  std::uint64_t present_ = 0;
  std::uint64_t size_ = 0;  // tokens on present edges
  // SPEC §10.4: each node's lock count, the running requests whose node
  // is it or below (kvprefix/pins.h), and each running request's state.
  PinTable<Slot, Running, DensePinCounts<Slot>> pins_;
  std::uint64_t locked_tokens_ = 0;  // on edges of nodes with a lock
  std::uint64_t held_ = 0;           // held outside the tree
  std::uint64_t evicted_tokens_ = 0;
};

}  // namespace kvprefix

#endif  // KVPREFIX_MODELS_SGLANG_RADIX_CACHE_H_
