// HashTrie: see the design notes in the header.
#include "optimized/hash_trie.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "kvprefix/memory.h"

namespace kvprefix {

HashTrie::HashTrie(const CacheOptions& options, std::uint64_t max_nodes)
    : CacheCore(options), max_nodes_(max_nodes), tokens_(1), next_node_(1) {
  CheckTrieEngineOptions("hash engine", options);
  if (max_nodes < 1 || max_nodes > kMaxNodes) {
    throw std::invalid_argument("hash engine: max_nodes " +
                                std::to_string(max_nodes) +
                                " is outside 1 to 2^32 - 1");
  }
  if (options.bounded()) {
    nodes_.assign(1, Node{});  // the root's: ID 0, and never free
    states_ = PolicyStates<HugePageVector<std::uint64_t>>(options.policy);
    states_.words().assign(states_.words_per_handle(), 0);  // the root's
    leaves_ = PolicyLeafHeap<Slot>(options.policy);
  }
}

template <typename Visit>
HashTrie::Walk HashTrie::WalkPath(TokenSpan request, Visit&& visit) const {
  Walk walk;
  for (Token token : request) {
    const Slot child = Child(walk.slot, token);
    if (child == 0) break;
    walk.slot = child;
    ++walk.matched;
    visit(child);
  }
  return walk;
}

Match HashTrie::MatchPrefix(TokenSpan request) const {
  const Walk walk = WalkPath(request, IgnoreWalk{});
  return Match{walk.matched,
               options().bounded() ? nodes_[walk.slot].id : NodeId{walk.slot}};
}

NodeId HashTrie::Insert(TokenSpan sequence) {
  if (!options().bounded()) {
    return InsertUnbounded(WalkPath(sequence, IgnoreWalk{}), sequence);
  }
  return VisitPolicy(options().policy, [&]<typename Policy>(Policy) {
    return kvprefix::InsertBounded<Policy>(*this, sequence).deepest;
  });
}

Match HashTrie::Access(TokenSpan request) {
  if (options().match_limit != MatchLimit::kAll) {
    return AccessWithMatchLimit(*this, request, options());
  }
  if (!options().bounded()) {
    const Walk existing = WalkPath(request, IgnoreWalk{});
    InsertUnbounded(existing, request);
    return Match{existing.matched, existing.slot};
  }
  return VisitPolicy(options().policy, [&]<typename Policy>(Policy) {
    return kvprefix::InsertBounded<Policy>(*this, request).match;
  });
}

// --- Requests in flight (SPEC §10.4)
// ------------------------------------------

Match HashTrie::PeekMatch(TokenSpan request) const {
  return MatchPrefix(request.first(
      MatchLimitTokens(options().match_limit, request.size(), 1)));
}

Attempt HashTrie::Admit(RequestId id, TokenSpan prompt, std::uint64_t) {
  // A pinned node counts one more child: it is no leaf until its last pin
  // goes (a node of the path other than its end has its path child anyway).
  const Walk walk = WalkPath(
      prompt.first(MatchLimitTokens(options().match_limit, prompt.size(), 1)),
      [this](Slot slot) {
        pins_.Pin(slot, [this](Slot pinned) {
          if (options().bounded()) ++nodes_[pinned].children;
        });
      });
  pins_.Admit(id, walk);
  return Attempt{
      .outcome = AttemptOutcome::kStart,
      .match = Match{walk.matched, options().bounded() ? nodes_[walk.slot].id
                                                       : NodeId{walk.slot}}};
}

void HashTrie::Finish(RequestId id, TokenSpan stored) {
  const Walk walk = pins_.Finish(id);
  // The stored sequence starts with the prompt, whose pinned path is intact.
  WalkPath(stored.first(walk.matched), [this](Slot slot) {
    pins_.Unpin(slot, [this](Slot unpinned) {
      if (options().bounded() && --nodes_[unpinned].children == 0) {
        VisitPolicy(options().policy, [&]<typename Policy>(Policy) {
          PushLeaf<Policy>(unpinned);
        });
      }
    });
  });
  Insert(stored);
}

// --- Unbounded: slot == ID ---------------------------------------------------

NodeId HashTrie::InsertUnbounded(Walk existing, TokenSpan sequence) {
  const std::size_t missing = sequence.size() - existing.matched;
  if (missing > max_nodes_ - node_count()) {
    throw CapacityError("hash engine: inserting " + std::to_string(missing) +
                        " nodes would exceed its limit of " +
                        std::to_string(max_nodes_) + " nodes (32-bit IDs)");
  }
  Slot parent = existing.slot;
  for (Token token : sequence.subspan(existing.matched)) {
    const Slot created = static_cast<Slot>(tokens_.size());
    const bool is_next_node = parent + 1 == created;
    if (!is_next_node) branches_.emplace(BranchKey(parent, token), created);
    tokens_.push_back(token);
    next_node_.push_back(is_next_node);
    parent = created;
  }
  return parent;
}

// --- Bounded (SPEC §8): kvprefix/bounded_insert.h's primitives ---------------

template <typename Policy>
void HashTrie::CheckRoom(TokenSpan sequence, std::size_t stored) const {
  // IDs: 2^64 - 1 of them cannot run out in practice, but a wrap would be
  // silent, so say it (conservatively: as if the whole sequence were new).
  if (sequence.size() > std::numeric_limits<NodeId>::max() - next_id_) {
    throw CapacityError("hash engine: node IDs would exceed 2^64 - 1");
  }
  // Slots: a sequence this short cannot overflow them.
  if (stored <= max_nodes_ - node_count()) return;
  if (kvprefix::KeepsFirstCapacityNodes<Policy>(*this) &&
      options().capacity <= max_nodes_) {
    return;  // room is made before creating: at most capacity + 1 slots
  }
  const std::uint64_t created =
      stored - WalkPath(sequence.first(stored), IgnoreWalk{}).matched;
  if (created > max_nodes_ - node_count()) {
    throw CapacityError("hash engine: storing " + std::to_string(created) +
                        " more nodes would exceed its limit of " +
                        std::to_string(max_nodes_) +
                        " nodes present (32-bit slots)");
  }
}

template <typename Policy>
HashTrie::Walk HashTrie::WalkTouching(TokenSpan prefix, std::uint64_t stamp) {
  return WalkPath(prefix,
                  [&](Slot slot) { states_.Touch<Policy>(slot, stamp); });
}

template <typename Policy>
void HashTrie::Grow(Walk& walk, TokenSpan tokens, std::uint64_t stamp) {
  if (tokens.empty()) {
    if (kKeepsState<Policy> && walk.slot != 0 &&
        nodes_[walk.slot].children == 0) {
      PushLeaf<Policy>(walk.slot);  // a leaf touched: its key changed
    }
    return;
  }
  // Step 4's first victims go before creating, so that the new chain reuses
  // the slots they free, last freed first, in ascending runs that keep their
  // implicit next-node edges (slots freed only after creating come back in
  // the order of other requests' evictions, and most new nodes then need a
  // branch entry). The path's end gets a child anyway: while it counts one
  // more, no victim is on the path.
  const std::uint64_t present = node_count();
  const std::uint64_t created = tokens.size();
  const std::uint64_t capacity = options().capacity;
  if (present + created > capacity) {
    ++nodes_[walk.slot].children;
    if (kvprefix::KeepsFirstCapacityNodes<Policy>(*this)) {
      // Every node off the path goes first: all of step 4's victims.
      EvictLeaves<Policy>(present + created - capacity);
    } else {
      // Those below the new leaf's key are step 4's first victims anyway.
      EvictLeavesBelow<Policy>(
          present + created - capacity,
          Policy::LeafKey(CreatedState<Policy>(stamp), next_id_ + created - 1));
    }
    --nodes_[walk.slot].children;
  }
  ReserveSlots(created - std::min<std::uint64_t>(created, free_.size()));
  walk.slot = CreateChain<Policy>(walk.slot, tokens, stamp);
  walk.matched += tokens.size();
}

HashTrie::Walk HashTrie::DeepestLeft(TokenSpan, Walk walk) const {
  // What is left of the path is a prefix of it (only leaves go), and no
  // freed slot is reused before the next CreateChain, so climbing from the
  // deepest node through the freed slots finds its end, in O(nodes of the
  // path evicted) where a new walk costs a lookup per token (it was a fifth
  // of lfu's bounded block replay).
  while (walk.slot != 0 && nodes_[walk.slot].id == 0) {  // ID 0: a freed slot
    walk.slot = nodes_[walk.slot].parent;
    --walk.matched;
  }
  return walk;
}

template <typename Policy>
void HashTrie::Tidy() {
  // Drop the stale leaf entries once they pile up (kvprefix/leaf_heap.h).
  leaves_.Get<Policy>().RebuildIfOverfull(node_count(), [&](auto add) {
    for (std::size_t slot = 1; slot < nodes_.size(); ++slot) {
      if (nodes_[slot].id != 0 && nodes_[slot].children == 0) {
        add(LeafKey<Policy>(static_cast<Slot>(slot)), static_cast<Slot>(slot));
      }
    }
  });
}

void HashTrie::ReserveSlots(std::uint64_t appended) {
  // Slots never exceed capacity + 1 (evictions come before creations), so
  // growth stops there instead of doubling past it.
  const std::size_t limit =
      static_cast<std::size_t>(std::min(options().capacity, max_nodes_)) + 1;
  const std::size_t slots = tokens_.size() + appended;
  ReserveGeometric(tokens_, slots, limit);
  ReserveGeometric(next_node_, slots, limit);
  ReserveGeometric(nodes_, slots, limit);
  const std::size_t words = states_.words_per_handle();
  if (words > 0)
    ReserveGeometric(states_.words(), slots * words, limit * words);
}

// What EvictLeaves (kvprefix/cache_model.h) needs of the slots.
template <typename Policy>
class HashTrie::Leaves {
 public:
  using Entry = typename LeafHeap<typename Policy::Key, Slot>::Entry;
  explicit Leaves(HashTrie& trie) : trie_(trie) {}

  bool IsCurrent(const Entry& entry) const {
    return trie_.nodes_[entry.handle].id != 0 &&
           trie_.nodes_[entry.handle].children == 0 &&
           trie_.LeafKey<Policy>(entry.handle) == entry.key;
  }
  typename Policy::Key LeafKey(Slot slot) const {
    return trie_.LeafKey<Policy>(slot);
  }
  // Removes one node: the parent, if it is a leaf now, is next.
  std::pair<std::uint64_t, std::optional<Slot>> RemoveTail(Slot leaf,
                                                           std::uint64_t) {
    const Slot parent = trie_.Remove(leaf);
    if (--trie_.nodes_[parent].children != 0 || parent == 0) return {1, {}};
    return {1, parent};
  }

 private:
  HashTrie& trie_;
};

template <typename Policy>
void HashTrie::EvictLeaves(std::uint64_t count) {
  // With the shortcut, called only while a leaf off the request's path
  // exists (SPEC §8: evicting never needs more than the nodes off the path);
  // EvictLeaves throws NoEvictableLeafError should none be left.
  Leaves<Policy> leaves(*this);
  kvprefix::EvictLeaves(leaves_.Get<Policy>(), leaves, count, kName,
                        options().capacity);
}

template <typename Policy>
void HashTrie::EvictLeavesBelow(std::uint64_t count,
                                const typename Policy::Key& bound) {
  Leaves<Policy> leaves(*this);
  kvprefix::EvictLeavesBelow(leaves_.Get<Policy>(), leaves, count, bound);
}

HashTrie::Slot HashTrie::Remove(Slot slot) {
  const Slot parent = nodes_[slot].parent;
  if (next_node_[slot]) {
    next_node_[slot] = false;  // a free slot must never match
  } else {
    branches_.erase(BranchKey(parent, tokens_[slot]));
  }
  BufferEvicted(tokens_[slot]);
  nodes_[slot].id = 0;
  free_.push_back(slot);
  CountEvicted(1);
  return parent;
}

template <typename Policy>
HashTrie::Slot HashTrie::CreateChain(Slot parent, TokenSpan tokens,
                                     std::uint64_t request) {
  for (Token token : tokens) {
    Slot child;
    if (!free_.empty()) {
      child = free_.back();
      free_.pop_back();
    } else {
      child = static_cast<Slot>(tokens_.size());
      tokens_.emplace_back();
      next_node_.emplace_back();
      nodes_.emplace_back();
      states_.PushBack<Policy>();
    }
    const bool is_next_node = std::size_t{parent} + 1 == child;
    if (!is_next_node) branches_.emplace(BranchKey(parent, token), child);
    tokens_[child] = token;
    next_node_[child] = is_next_node;
    nodes_[child] = Node{next_id_++, parent, 0};
    states_.Create<Policy>(child, request);  // step 2, then step 3's touch
    ++nodes_[parent].children;
    parent = child;
  }
  PushLeaf<Policy>(parent);  // the new path's end is a leaf
  return parent;
}

std::size_t HashTrie::memory_bytes() const {
  return VectorHeapBytes<Token>(tokens_.capacity()) +
         VectorHeapBytes<std::uint64_t>((next_node_.capacity() + 63) / 64) +
         FlatHashTableBytes(branches_) +
         VectorHeapBytes<Node>(nodes_.capacity()) +
         VectorHeapBytes<std::uint64_t>(states_.words().capacity()) +
         VectorHeapBytes<Slot>(free_.capacity()) + leaves_.memory_bytes() +
         eviction_buffer_bytes();
}

}  // namespace kvprefix
