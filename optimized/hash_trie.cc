// HashTrie: see the design notes in the header.
#include "optimized/hash_trie.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {
namespace {

// A WalkPath visitor that does nothing: a plain match.
struct NoVisit {
  void operator()(std::uint32_t) const {}
};

}  // namespace

HashTrie::HashTrie(const CacheOptions& options, std::uint64_t max_nodes)
    : options_(options), max_nodes_(max_nodes), tokens_(1), next_node_(1) {
  if (options.page_size != 1) {
    throw std::invalid_argument(
        "hash engine: an engine indexes tokens (page size 1); pages of more "
        "tokens are PagedIndex's job");
  }
  if (max_nodes < 1 || max_nodes > kMaxNodes) {
    throw std::invalid_argument("hash engine: max_nodes " +
                                std::to_string(max_nodes) +
                                " is outside 1 to 2^32 - 1");
  }
  if (options.bounded()) {
    ids_.assign(1, kRootNode);  // the root's slot holds ID 0 and is never free
    parents_.assign(1, 0);
    children_.assign(1, 0);
    if (KeepsStamps(options.policy)) stamps_.assign(1, 0);
  }
}

template <typename Visit>
HashTrie::Walk HashTrie::WalkPath(TokenSpan request, Visit&& visit) const {
  Walk walk;
  for (Token token : request) {
    const Slot child = Child(walk.slot, token);
    if (child == 0) break;
    walk.slot = child;
    ++walk.length;
    visit(child);
  }
  return walk;
}

Match HashTrie::MatchPrefix(TokenSpan request) const {
  const Walk walk = WalkPath(request, NoVisit{});
  return Match{walk.length,
               options_.bounded() ? ids_[walk.slot] : NodeId{walk.slot}};
}

NodeId HashTrie::Insert(TokenSpan sequence) {
  if (!options_.bounded()) {
    return InsertUnbounded(WalkPath(sequence, NoVisit{}), sequence);
  }
  switch (options_.policy) {
    case EvictionPolicy::kLru:
      return InsertBounded<EvictionPolicy::kLru>(sequence).deepest;
    case EvictionPolicy::kFifo:
      return InsertBounded<EvictionPolicy::kFifo>(sequence).deepest;
  }
  return kRootNode;  // not reached: every policy has a case
}

Match HashTrie::Access(TokenSpan request) {
  if (!options_.bounded()) {
    const Walk existing = WalkPath(request, NoVisit{});
    InsertUnbounded(existing, request);
    return Match{existing.length, existing.slot};
  }
  switch (options_.policy) {
    case EvictionPolicy::kLru:
      return InsertBounded<EvictionPolicy::kLru>(request).match;
    case EvictionPolicy::kFifo:
      return InsertBounded<EvictionPolicy::kFifo>(request).match;
  }
  return Match{};  // not reached: every policy has a case
}

// --- Unbounded: slot == ID ---------------------------------------------------

NodeId HashTrie::InsertUnbounded(Walk existing, TokenSpan sequence) {
  const std::size_t missing = sequence.size() - existing.length;
  if (missing > max_nodes_ - node_count()) {
    throw CapacityError("hash engine: inserting " + std::to_string(missing) +
                        " nodes would exceed its limit of " +
                        std::to_string(max_nodes_) + " nodes (32-bit IDs)");
  }
  Slot parent = existing.slot;
  for (Token token : sequence.subspan(existing.length)) {
    const Slot created = static_cast<Slot>(tokens_.size());
    const bool is_next_node = parent + 1 == created;
    if (!is_next_node) branches_.emplace(BranchKey(parent, token), created);
    tokens_.push_back(token);
    next_node_.push_back(is_next_node);
    parent = created;
  }
  return parent;
}

// --- Bounded (SPEC §8) -------------------------------------------------------

void HashTrie::CheckBoundedLimits(TokenSpan sequence) const {
  // IDs: 2^64 - 1 of them cannot run out in practice, but a wrap would be
  // silent, so say it (conservatively: as if the whole sequence were new).
  if (sequence.size() > std::numeric_limits<NodeId>::max() - next_id_) {
    throw CapacityError("hash engine: node IDs would exceed 2^64 - 1");
  }
  // Slots: after the insert min(present + stored, capacity) nodes are
  // stored; only a capacity above max_nodes_ can overflow them.
  if (options_.capacity <= max_nodes_ ||
      sequence.size() <= max_nodes_ - node_count()) {
    return;
  }
  const Walk walk = WalkPath(sequence, NoVisit{});
  const std::uint64_t stored = std::min<std::uint64_t>(
      sequence.size() - walk.length, options_.capacity - walk.length);
  if (stored > max_nodes_ - node_count()) {
    throw CapacityError("hash engine: storing " + std::to_string(stored) +
                        " more nodes would exceed its limit of " +
                        std::to_string(max_nodes_) +
                        " nodes present (32-bit slots)");
  }
}

template <EvictionPolicy kPolicy>
HashTrie::BoundedResult HashTrie::InsertBounded(TokenSpan sequence) {
  constexpr bool kStamps = KeepsStamps(kPolicy);
  CheckBoundedLimits(sequence);
  evicted_tokens_.clear();

  // §8 step 1 (the match) and step 3 (touch) for the nodes already present.
  const std::uint64_t stamp = kStamps ? ++stamp_ : 0;
  const Walk walk = WalkPath(sequence, [&](Slot slot) {
    if constexpr (kStamps) stamps_[slot] = stamp;
  });
  const Match match{walk.length, ids_[walk.slot]};

  // Step 2: the missing nodes. The path's nodes present are <= C, so only
  // new ones can fall beyond depth C, and those would be evicted at once.
  const std::uint64_t present = node_count();
  const std::uint64_t missing = sequence.size() - walk.length;
  const std::uint64_t stored =
      std::min<std::uint64_t>(missing, options_.capacity - walk.length);
  Slot deepest = walk.slot;
  if (stored > 0) {
    const std::uint64_t excess = present + stored > options_.capacity
                                     ? present + stored - options_.capacity
                                     : 0;
    ReserveSlots(stored - std::min(stored, free_.size() + excess));
    // Step 4 before creating: pin the deepest matched node so that only
    // leaves off the path are evicted (it gets a child below anyway).
    ++children_[walk.slot];
    EvictLeaves<kPolicy>(excess);
    --children_[walk.slot];
    deepest = CreateChain<kPolicy>(
        walk.slot, sequence.subspan(walk.length, stored), stamp);
  } else if (kStamps && walk.slot != 0 && children_[walk.slot] == 0) {
    PushLeaf<kPolicy>(walk.slot);  // a leaf touched: its key changed
  }
  const std::uint64_t never_stored = missing - stored;
  next_id_ += never_stored;
  evicted_ += never_stored;
  // Drop the stale leaf entries once they pile up (kvprefix/leaf_heap.h).
  leaves_.RebuildIfOverfull(node_count(), [&](auto add) {
    for (std::size_t slot = 1; slot < ids_.size(); ++slot) {
      if (ids_[slot] != 0 && children_[slot] == 0) {
        add(LeafKey<kPolicy>(static_cast<Slot>(slot)), static_cast<Slot>(slot));
      }
    }
  });
  const BoundedResult result{match, ids_[deepest]};
  Notify(sequence.subspan(sequence.size() - never_stored));
  return result;
}

void HashTrie::ReserveSlots(std::uint64_t appended) {
  // Slots never exceed capacity + 1 (evictions come before creations), so
  // growth stops there instead of doubling past it.
  const std::size_t limit =
      static_cast<std::size_t>(std::min(options_.capacity, max_nodes_)) + 1;
  const std::size_t slots = tokens_.size() + appended;
  ReserveGeometric(tokens_, slots, limit);
  ReserveGeometric(next_node_, slots, limit);
  ReserveGeometric(ids_, slots, limit);
  ReserveGeometric(parents_, slots, limit);
  ReserveGeometric(children_, slots, limit);
  if (KeepsStamps(options_.policy)) {
    ReserveGeometric(stamps_, slots, limit);
  }
}

template <EvictionPolicy kPolicy>
void HashTrie::EvictLeaves(std::uint64_t count) {
  // Called only while a leaf off the request's path exists (SPEC §8:
  // evicting never needs more than the nodes off the path); PopCurrent
  // throws NoEvictableLeafError should none be left.
  const auto is_current = [this](const LeafOrder::Entry& entry) {
    return ids_[entry.handle] != 0 && children_[entry.handle] == 0 &&
           LeafKey<kPolicy>(entry.handle) == entry.key;
  };
  while (count > 0) {
    Slot leaf = leaves_.PopCurrent(is_current, kName, options_.capacity + count,
                                   options_.capacity);
    while (true) {
      const Slot parent = Remove(leaf);
      --count;
      if (--children_[parent] != 0 || parent == 0) break;
      // The parent just became a leaf. If nothing in the heap is smaller it
      // is the next victim: evict it without a push and a pop.
      if (count > 0 && leaves_.NoneBelow(LeafKey<kPolicy>(parent))) {
        leaf = parent;
        continue;
      }
      PushLeaf<kPolicy>(parent);
      break;
    }
  }
}

HashTrie::Slot HashTrie::Remove(Slot slot) {
  const Slot parent = parents_[slot];
  if (next_node_[slot]) {
    next_node_[slot] = false;  // a free slot must never match
  } else {
    branches_.erase(BranchKey(parent, tokens_[slot]));
  }
  if (listener_) evicted_tokens_.push_back(tokens_[slot]);
  ids_[slot] = 0;
  free_.push_back(slot);
  ++evicted_;
  return parent;
}

template <EvictionPolicy kPolicy>
HashTrie::Slot HashTrie::CreateChain(Slot parent, TokenSpan tokens,
                                     std::uint64_t stamp) {
  for (Token token : tokens) {
    Slot child;
    if (!free_.empty()) {
      child = free_.back();
      free_.pop_back();
    } else {
      child = static_cast<Slot>(tokens_.size());
      tokens_.emplace_back();
      next_node_.emplace_back();
      ids_.emplace_back();
      parents_.emplace_back();
      children_.emplace_back();
      if constexpr (KeepsStamps(kPolicy)) stamps_.emplace_back();
    }
    const bool is_next_node = std::size_t{parent} + 1 == child;
    if (!is_next_node) branches_.emplace(BranchKey(parent, token), child);
    tokens_[child] = token;
    next_node_[child] = is_next_node;
    ids_[child] = next_id_++;
    parents_[child] = parent;
    children_[child] = 0;
    if constexpr (KeepsStamps(kPolicy)) stamps_[child] = stamp;
    ++children_[parent];
    parent = child;
  }
  PushLeaf<kPolicy>(parent);  // the new path's end is a leaf
  return parent;
}

template <EvictionPolicy kPolicy>
void HashTrie::PushLeaf(Slot slot) {
  leaves_.Push(LeafKey<kPolicy>(slot), slot);
}

void HashTrie::Notify(TokenSpan never_stored) {
  if (!listener_) return;
  if (!evicted_tokens_.empty()) listener_(evicted_tokens_);
  if (!never_stored.empty()) listener_(never_stored);
}

std::size_t HashTrie::memory_bytes() const {
  return VectorHeapBytes<Token>(tokens_.capacity()) +
         VectorHeapBytes<std::uint64_t>((next_node_.capacity() + 63) / 64) +
         FlatHashTableBytes(branches_) +
         VectorHeapBytes<NodeId>(ids_.capacity()) +
         VectorHeapBytes<Slot>(parents_.capacity()) +
         VectorHeapBytes<Slot>(children_.capacity()) +
         VectorHeapBytes<std::uint64_t>(stamps_.capacity()) +
         VectorHeapBytes<Slot>(free_.capacity()) + leaves_.memory_bytes() +
         VectorHeapBytes<Token>(evicted_tokens_.capacity());
}

}  // namespace kvprefix
