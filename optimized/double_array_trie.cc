// DoubleArrayTrie: see the design essay in the header.
#include "optimized/double_array_trie.h"

#include <algorithm>
#include <bit>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "kvprefix/memory.h"

namespace kvprefix {
namespace {

// How many of the lowest free slots FindBase tries as the home of the
// smallest code of a family (all codes then inside the used slots) before it
// places the family at the end of the used slots. Bounds the search (no
// quadratic scans); each try costs one bitmap lookup per code, and families
// of 2..4 codes spread over a 128,256-token vocabulary need many tries once
// the holes are few: on the tree-of-thought workload 16 tries leave 35 bytes
// per node, 256 tries 21.
constexpr int kMaxBaseTries = 256;
// How many slots from the end of the used slots FindBase tries as the home
// of the largest code (the others below it) before it puts the whole family
// past the end; also how far past the end AddChild accepts a new child's
// slot without moving its family.
constexpr int kMaxTopTries = 16;
// Largest family that moves to fill holes when its next child's slot is past
// the used slots (larger ones keep their base: moving them again and again
// would cost more than the slots it saves).
constexpr std::size_t kMaxFamilyToCompact = 16;
// Bounded: a family this large becomes a hash node, so that an eviction's
// linear search of its parent's code list stays short.
constexpr std::size_t kMaxBoundedFamily = 64;
// Slots allocated for a new index; the arrays then grow by 1/16.
constexpr std::size_t kInitialSlots = 1024;

template <typename T>
std::size_t ArrayHeapBytes(std::size_t capacity) {
  return capacity == 0 ? 0 : MallocChunkBytes(capacity * sizeof(T));
}

}  // namespace

template <typename T>
void DoubleArrayTrie::ReallocArray<T>::Reallocate(std::size_t capacity) {
  static_assert(std::is_trivially_copyable_v<T>);
  void* grown = std::realloc(data_.get(), capacity * sizeof(T));
  if (grown == nullptr) throw std::bad_alloc();
  // Not advised for transparent huge pages: glibc then copies the block on
  // every growth instead of moving it with mremap (GrowingTheArraysDoesNot-
  // FaultThemInAgain in tests/double_array_trie_test.cc).
  data_.release();
  data_.reset(static_cast<T*>(grown));
  capacity_ = capacity;
}

void DoubleArrayTrie::SlotBitmap::GrowSet(std::size_t size) {
  if (levels_.empty()) levels_.emplace_back();
  std::vector<std::uint64_t>& bits = levels_[0];
  bits.resize((size + 63) / 64, 0);
  // Set bits [size_, size): a partial first word, whole words, a partial
  // last word.
  for (std::size_t i = size_; i < size;) {
    const std::size_t end = std::min(size, (i | 63) + 1);
    const std::uint64_t ones = end - i == 64
                                   ? ~std::uint64_t{0}
                                   : ((std::uint64_t{1} << (end - i)) - 1);
    bits[i >> 6] |= ones << (i & 63);
    i = end;
  }
  size_ = size;
  // Rebuild the summary levels: cheap (1/64 of the bits) and growth is rare.
  std::size_t level = 0;
  while (levels_[level].size() > 1) {
    if (levels_.size() == level + 1) levels_.emplace_back();
    const std::vector<std::uint64_t>& below = levels_[level];
    std::vector<std::uint64_t>& above = levels_[level + 1];
    above.assign((below.size() + 63) / 64, 0);
    for (std::size_t w = 0; w < below.size(); ++w) {
      if (below[w] != 0) above[w >> 6] |= std::uint64_t{1} << (w & 63);
    }
    ++level;
  }
}

void DoubleArrayTrie::SlotBitmap::Set(std::size_t i) {
  for (std::vector<std::uint64_t>& level : levels_) {
    std::uint64_t& word = level[i >> 6];
    const bool was_empty = word == 0;
    word |= std::uint64_t{1} << (i & 63);
    if (!was_empty) return;
    i >>= 6;
  }
}

void DoubleArrayTrie::SlotBitmap::Clear(std::size_t i) {
  for (std::vector<std::uint64_t>& level : levels_) {
    std::uint64_t& word = level[i >> 6];
    word &= ~(std::uint64_t{1} << (i & 63));
    if (word != 0) return;
    i >>= 6;
  }
}

std::size_t DoubleArrayTrie::SlotBitmap::NextSetAbove(std::size_t i) const {
  // Climb while the rest of the current word is empty, then descend along
  // the lowest set bits.
  std::size_t level = 0;
  for (;; ++level) {
    if (level == levels_.size()) return kNone;
    const std::vector<std::uint64_t>& words = levels_[level];
    const std::size_t w = i >> 6;
    if (w >= words.size()) return kNone;
    const std::uint64_t word = words[w] & (~std::uint64_t{0} << (i & 63));
    if (word != 0) {
      i = (w << 6) | std::countr_zero(word);
      break;
    }
    i = w + 1;  // the next word of this level is bit w + 1 of the next level
  }
  while (level > 0) {
    --level;
    i = (i << 6) | std::countr_zero(levels_[level][i]);
  }
  return i;
}

std::size_t DoubleArrayTrie::SlotBitmap::memory_bytes() const {
  std::size_t bytes =
      VectorHeapBytes<std::vector<std::uint64_t>>(levels_.capacity());
  for (const auto& level : levels_) {
    bytes += VectorHeapBytes<std::uint64_t>(level.capacity());
  }
  return bytes;
}

DoubleArrayTrie::DoubleArrayTrie(const CacheOptions& options,
                                 std::size_t max_slots)
    : CacheCore(options),
      bounded_(options.bounded()),
      max_slots_(max_slots),
      states_(options.policy),
      leaves_(options.policy) {
  CheckTrieEngineOptions("double-array", options);
  if (max_slots < 2 || max_slots > kMaxSlots) {
    throw std::invalid_argument("double-array: max_slots " +
                                std::to_string(max_slots) +
                                " is outside [2, 2^30]");
  }
  EnsureSize(1);
  free_.Clear(0);  // the root; its check stays -1 so no edge lands on it
  if (bounded_) {
    ids64_[0] = kRootNode;
    tokens_[0] = 0;
    push_leaf_ = VisitPolicy(options.policy, []<typename Policy>(Policy) {
      return &DoubleArrayTrie::PushLeaf<Policy>;
    });
  } else {
    ids_[0] = kRootNode;
  }
}

std::int64_t DoubleArrayTrie::HashChild(std::int64_t s, Token token) const {
  const auto u = static_cast<std::uint32_t>(token);
  if (s == 0) {
    if (u < root_children_.size()) return root_children_[u];
    const auto it = root_edges_.find(u);
    return it == root_edges_.end() ? -1 : it->second;
  }
  const auto it = edges_.find(EdgeKey{static_cast<std::uint32_t>(s), u});
  return it == edges_.end() ? -1 : it->second;
}

void DoubleArrayTrie::EnsureLabels() {
  if (tokens_.data() != nullptr) return;
  tokens_.Reallocate(cells_.capacity());
  std::fill(tokens_.data(), tokens_.data() + cells_.capacity(), Token{0});
}

void DoubleArrayTrie::EnsureSize(std::size_t size) {
  if (size <= size_) return;
  if (size > max_slots_) {
    throw CapacityError("double-array: needs " + std::to_string(size) +
                        " slots, the limit is " + std::to_string(max_slots_) +
                        " (slot indices and bases are 32-bit)");
  }
  const std::size_t capacity =
      std::min(max_slots_, std::max({size, size_ + size_ / 16, kInitialSlots}));
  cells_.Reallocate(capacity);
  if (bounded_) {
    ids64_.Reallocate(capacity);
    // The policy's state: words_per_handle() words a slot (lru: one;
    // a stateless policy such as fifo: none).
    if (const std::size_t words = states_.words_per_handle(); words > 0) {
      states_.words().Reallocate(capacity * words);
    }
  } else {
    ids_.Reallocate(capacity);
  }
  std::fill(cells_.data() + size_, cells_.data() + capacity, Cell{0, -1});
  if (bounded_ || tokens_.data() != nullptr) {
    tokens_.Reallocate(capacity);
    std::fill(tokens_.data() + size_, tokens_.data() + capacity, Token{0});
  }
  free_.GrowSet(capacity);
  size_ = capacity;
}

std::size_t DoubleArrayTrie::NextFree(std::size_t from) {
  std::size_t f = free_.NextSet(from);
  if (f == SlotBitmap::kNone) {
    EnsureSize(std::max(from, size_) + 1);
    f = free_.NextSet(from);
  }
  return f;
}

template <bool kBounded>
std::size_t DoubleArrayTrie::FreeSlotFor(std::size_t from) {
  // Unbounded, nothing frees slots but relocation, whose placements obey
  // the density rule, so it always holds; from <= used_end_ (from is next
  // to a used slot), so the first free slot extends the used slots by at
  // most the one slot of the node it is for, which keeps the rule.
  if (!kBounded) return NextFree(from);
  const std::size_t f = free_.NextSet(from);
  if (f != SlotBitmap::kNone && f < used_end_) return f;
  // Taking the first free slot would extend the used slots. When holes
  // dominate (a bounded cache after evictions), fill the lowest one instead.
  const std::size_t end = f == SlotBitmap::kNone ? std::max(from, size_) : f;
  if (!Affordable(end + 1, 1)) {
    const std::size_t low = free_.NextSet(1);
    if (low < used_end_) return low;
  }
  if (f != SlotBitmap::kNone) return f;
  EnsureSize(end + 1);
  return free_.NextSet(from);
}

bool DoubleArrayTrie::FindBase(const Codes& codes, std::size_t added,
                               std::int64_t& base) {
  const auto [min_it, max_it] = std::minmax_element(codes.begin(), codes.end());
  const std::int64_t min_code = *min_it;
  const std::int64_t max_code = *max_it;
  const std::int64_t used_end = static_cast<std::int64_t>(used_end_);
  const auto fits = [&](std::int64_t b) {
    return std::all_of(codes.begin(), codes.end(),
                       [&](std::uint32_t code) { return IsFree(b + code); });
  };
  // First choice: every code in a hole below used_end_, the smallest code at
  // one of the lowest free slots. Searching from the node's own slot instead
  // would mostly try slots at the end of the array, where a family spread
  // over the vocabulary (codes up to 128,257 apart) leaves a hole as wide as
  // its spread that nothing ever fills: 50 slots per node on the
  // tree-of-thought workload.
  std::size_t f = 1;
  for (int tries = 0; tries < kMaxBaseTries; ++tries, ++f) {
    f = free_.NextSet(f);
    const std::int64_t b = static_cast<std::int64_t>(f) - min_code;
    if (f == SlotBitmap::kNone || b + max_code >= used_end) break;
    if (fits(b)) {
      base = b;
      return true;
    }
  }
  // Else the largest code at the first free slots from used_end_ on (the
  // others below it, >= 1), so the used part grows by a few slots, not by
  // the family's spread; else all codes from used_end_ on, which always
  // fits (every slot >= used_end_ is free, and used_end_ >= 1). Either only
  // within the density rule: a family spread wider than that allows becomes
  // a hash node instead (the caller's choice).
  std::int64_t b = used_end - min_code;
  for (std::int64_t top = std::max(used_end, max_code - min_code + 1),
                    tries = 0;
       tries < kMaxTopTries; ++tries, ++top) {
    if (fits(top - max_code)) {
      b = top - max_code;
      break;
    }
  }
  const std::size_t new_end = static_cast<std::size_t>(b + max_code) + 1;
  if (!Affordable(new_end, added)) return false;
  EnsureSize(new_end);
  base = b;
  return true;
}

template <bool kBounded>
std::int64_t DoubleArrayTrie::CreateNode(std::int64_t t, std::int64_t parent,
                                         Token token, std::uint32_t code) {
  if (kBounded || code > kDirectTokens) {
    if (!kBounded) EnsureLabels();
    tokens_[t] = token;
  }
  Occupy(t);
  cells_[t] = Cell{0, static_cast<std::int32_t>(parent)};
  ++stored_;
  if constexpr (kBounded) {
    ids64_[t] = ++next_id_;  // its policy state: InsertBounded's to write
  } else {
    ids_[t] = static_cast<std::uint32_t>(stored_);
  }
  return t;
}

template <bool kBounded>
std::int64_t DoubleArrayTrie::AddChildToLeaf(std::int64_t s, Token token) {
  const std::uint32_t code = CodeOf(token);
  const auto f = static_cast<std::int64_t>(FreeSlotFor<kBounded>(s + 1));
  // A leaf has no entry; a child not at s + 1 needs one (the essay).
  if (f != s + 1) children_.emplace(static_cast<std::int32_t>(s), Codes{code});
  cells_[s].base = static_cast<std::int32_t>(f - code);
  return CreateNode<kBounded>(f, s, token, code);
}

template <bool kBounded>
std::int64_t DoubleArrayTrie::AddHashChild(std::int64_t s, Token token) {
  const auto t = static_cast<std::int64_t>(FreeSlotFor<kBounded>(s + 1));
  AddEdge(s, token, t);
  const std::uint32_t children = ++hash_children_[static_cast<std::int32_t>(s)];
  if constexpr (!kBounded) {
    if (s == 0) {
      const auto u = static_cast<std::uint32_t>(token);
      if (u < root_children_.size()) {
        root_children_[u] = static_cast<std::int32_t>(t);
      } else if (root_children_.empty() && stored_ + 1 >= kRootTableNodes &&
                 children >= kRootTableChildren) {
        IndexRootChildren(t, token);
      }
    }
  }
  return CreateNode<kBounded>(t, s, token, CodeOf(token));
}

void DoubleArrayTrie::IndexRootChildren(std::int64_t t, Token token) {
  root_children_.assign(kDirectTokens, -1);
  for (const auto& [u, child] : root_edges_) {
    if (u < kDirectTokens) root_children_[u] = child;
  }
  // The child AddHashChild is adding: in root_edges_ already, not yet
  // created.
  if (const auto u = static_cast<std::uint32_t>(token); u < kDirectTokens) {
    root_children_[u] = static_cast<std::int32_t>(t);
  }
}

void DoubleArrayTrie::AddEdge(std::int64_t s, Token token, std::int64_t t) {
  const auto u = static_cast<std::uint32_t>(token);
  if (s == 0) {
    root_edges_.emplace(u, static_cast<std::int32_t>(t));
  } else {
    edges_.emplace(EdgeKey{static_cast<std::uint32_t>(s), u},
                   static_cast<std::int32_t>(t));
  }
}

void DoubleArrayTrie::RemoveEdge(std::int64_t s, Token token) {
  const auto u = static_cast<std::uint32_t>(token);
  if (s == 0) {
    root_edges_.erase(u);
  } else {
    edges_.erase(EdgeKey{static_cast<std::uint32_t>(s), u});
  }
}

void DoubleArrayTrie::ConvertToHashNode(std::int64_t s) {
  Codes codes;
  AppendChildren(s, codes);
  // Allocate first (room for the child the caller adds next, too), so that
  // nothing below can throw: a half-converted node would leave edges_
  // entries keyed by a slot that is not a hash node.
  if (s == 0) {
    root_edges_.reserve(codes.size() + 1);
  } else {
    edges_.reserve(edges_.size() + codes.size() + 1);
  }
  hash_children_[static_cast<std::int32_t>(s)] =
      static_cast<std::uint32_t>(codes.size());
  const std::int64_t base = cells_[s].base;
  for (std::uint32_t code : codes) {
    const std::int64_t t = base + code;
    AddEdge(s, TokenAt(t, code), t);
  }
  children_.erase(static_cast<std::int32_t>(s));
  cells_[s].base = kHashBase;
}

void DoubleArrayTrie::AppendChildren(std::int64_t s, Codes& out) const {
  if (auto it = children_.find(static_cast<std::int32_t>(s));
      it != children_.end()) {
    out.insert(out.end(), it->second.begin(), it->second.end());
  } else if (static_cast<std::size_t>(s) + 1 < size_ &&
             cells_[s + 1].check == s) {
    out.push_back(static_cast<std::uint32_t>(s + 1 - cells_[s].base));
  }
}

std::size_t DoubleArrayTrie::ChildCount(std::int64_t s) const {
  if (cells_[s].base == kHashBase) {
    return hash_children_.find(static_cast<std::int32_t>(s))->second;
  }
  if (auto it = children_.find(static_cast<std::int32_t>(s));
      it != children_.end()) {
    return it->second.size();
  }
  return static_cast<std::size_t>(s) + 1 < size_ && cells_[s + 1].check == s;
}

template <bool kBounded>
std::int64_t DoubleArrayTrie::AddChild(std::int64_t& s, Token token) {
  if (cells_[s].base == kHashBase) return AddHashChild<kBounded>(s, token);
  const std::size_t siblings = ChildCount(s);
  if (siblings == 0) return AddChildToLeaf<kBounded>(s, token);
  if (kBounded && siblings >= kMaxBoundedFamily) {
    ConvertToHashNode(s);
    return AddHashChild<kBounded>(s, token);
  }
  const std::uint32_t code = CodeOf(token);

  std::int64_t target = std::int64_t{cells_[s].base} + code;
  // A target far past the used slots would leave a hole as wide as the
  // distance; a small family moves to where the holes are instead, and no
  // family may break the density rule.
  const bool in_place =
      target >= 1 &&
      (static_cast<std::size_t>(target) < used_end_ + kMaxTopTries ||
       siblings > kMaxFamilyToCompact) &&
      Affordable(static_cast<std::size_t>(target) + 1, 1);
  if (!in_place) {
    if ((target < 1 || siblings <= kMaxFamilyToCompact) &&
        MoveChildren<kBounded>(s, &token, s)) {
      return std::int64_t{cells_[s].base} + code;
    }
    ConvertToHashNode(s);
    return AddHashChild<kBounded>(s, token);
  }
  if (!IsFree(target)) {
    // cedar's rule: move the smaller sibling set. The root is never an
    // occupant; a hash node's children never move; the occupant is a
    // sibling (p == s) only when two hashed codes collide, and then only a
    // hash node can hold both.
    const std::int64_t p = cells_[target].check;
    const bool moved_occupant = p != s && cells_[p].base != kHashBase &&
                                ChildCount(p) <= siblings &&
                                MoveChildren<kBounded>(p, nullptr, s);
    if (!moved_occupant) {
      if (p != s && MoveChildren<kBounded>(s, &token, s)) {
        return std::int64_t{cells_[s].base} + code;
      }
      ConvertToHashNode(s);
      return AddHashChild<kBounded>(s, token);
    }
    target = std::int64_t{cells_[s].base} + code;  // s may have moved
  }
  EnsureSize(static_cast<std::size_t>(target) + 1);
  // Record the new sibling. Without an entry, s has not moved and its one
  // child is still at s + 1.
  auto [entry, created] = children_.try_emplace(static_cast<std::int32_t>(s));
  if (created) {
    entry->second.push_back(static_cast<std::uint32_t>(s + 1 - cells_[s].base));
  }
  entry->second.push_back(code);
  return CreateNode<kBounded>(target, s, token, code);
}

template <bool kBounded>
bool DoubleArrayTrie::MoveChildren(std::int64_t n, const Token* extra,
                                   std::int64_t& tracked) {
  Codes codes;
  AppendChildren(n, codes);
  const std::int64_t old_base = cells_[n].base;
  const std::uint32_t extra_code = extra == nullptr ? 0 : CodeOf(*extra);
  for (std::uint32_t code : codes) {
    if (cells_[old_base + code].base == kHashBase || code == extra_code) {
      return false;
    }
  }
  const std::size_t moved = codes.size();
  if (extra != nullptr) codes.push_back(extra_code);
  std::int64_t base;
  if (!FindBase(codes, extra != nullptr, base)) return false;
  for (std::size_t i = 0; i < moved; ++i) {
    const std::int64_t from = old_base + codes[i];
    MoveNode<kBounded>(from, base + codes[i], n);
    if (tracked == from) tracked = base + codes[i];
  }
  cells_[n].base = static_cast<std::int32_t>(base);
  children_.insert_or_assign(static_cast<std::int32_t>(n), std::move(codes));
  relocated_nodes_ += moved;
  if (extra != nullptr) {
    CreateNode<kBounded>(base + extra_code, n, *extra, extra_code);
  }
  return true;
}

template <bool kBounded>
void DoubleArrayTrie::MoveNode(std::int64_t from, std::int64_t to,
                               std::int64_t parent) {
  const std::int32_t base = cells_[from].base;
  Occupy(to);
  cells_[to] = Cell{base, static_cast<std::int32_t>(parent)};
  if constexpr (kBounded) {
    ids64_[to] = ids64_[from];
    states_.Copy(static_cast<std::size_t>(from), static_cast<std::size_t>(to));
  } else {
    ids_[to] = ids_[from];
  }
  if (kBounded || tokens_.data() != nullptr) tokens_[to] = tokens_[from];
  // Re-point the children of the moved node. A child list kept by position
  // (the single child at from + 1) no longer holds at `to`: make it an entry.
  bool leaf = false;
  if (auto it = children_.find(static_cast<std::int32_t>(from));
      it != children_.end()) {
    for (std::uint32_t code : it->second) {
      cells_[std::int64_t{base} + code].check = static_cast<std::int32_t>(to);
    }
    Codes list = std::move(it->second);
    children_.erase(it);
    children_.emplace(static_cast<std::int32_t>(to), std::move(list));
  } else if (static_cast<std::size_t>(from) + 1 < size_ &&
             cells_[from + 1].check == from) {
    cells_[from + 1].check = static_cast<std::int32_t>(to);
    children_[static_cast<std::int32_t>(to)].push_back(
        static_cast<std::uint32_t>(from + 1 - base));
  } else {
    leaf = true;
  }
  cells_[from] = Cell{0, -1};
  free_.Set(from);
  if constexpr (kBounded) {
    if (leaf) (this->*push_leaf_)(to);  // its entry names the old slot
  }
}

NodeId DoubleArrayTrie::Insert(TokenSpan sequence) {
  if (!bounded_) return InsertUnbounded(sequence);
  return VisitPolicy(options().policy, [&]<typename Policy>(Policy) {
    return kvprefix::InsertBounded<Policy>(*this, sequence).deepest;
  });
}

Match DoubleArrayTrie::Access(TokenSpan request) {
  if (!bounded_ || options().match_limit != MatchLimit::kAll) {
    const Match match = MatchPrefix(request.first(
        MatchLimitTokens(options().match_limit, request.size(), 1)));
    Insert(request);
    return match;
  }
  return VisitPolicy(options().policy, [&]<typename Policy>(Policy) {
    return kvprefix::InsertBounded<Policy>(*this, request).match;
  });
}

template <typename Visit>
DoubleArrayTrie::Walk DoubleArrayTrie::WalkChildren(TokenSpan sequence,
                                                    Visit&& visit) const {
  Walk walk{0, 0};
  for (; walk.matched < sequence.size(); ++walk.matched) {
    const std::int64_t t = Child(walk.slot, sequence[walk.matched]);
    if (t < 0) break;
    walk.slot = t;
    visit(t);
  }
  return walk;
}

NodeId DoubleArrayTrie::InsertUnbounded(TokenSpan sequence) {
  const auto [matched, slot] = WalkChildren(sequence, IgnoreWalk{});
  std::int64_t s = slot;
  std::size_t i = matched;
  if (i < sequence.size()) {
    s = AddChild<false>(s, sequence[i]);
    // Every later node is a fresh leaf: the fast path, O(1) per token.
    for (++i; i < sequence.size(); ++i) {
      s = AddChildToLeaf<false>(s, sequence[i]);
    }
  }
  return ids_[s];
}

// --- Bounded (SPEC §8): kvprefix/bounded_insert.h's primitives ---------------

template <typename Policy>
void DoubleArrayTrie::CheckRoom(TokenSpan, std::size_t) {
  // No limit to check here (a slot past the limit throws in AddChild), but
  // room for one more heap entry is made before the walk touches anything,
  // so that a throw later can still record the leaf it leaves or re-keys
  // (every leaf must have an entry). Growing geometrically: reserving
  // exactly one more copied the whole heap on every insert, quadratic while
  // leaves pile up (CHANGELOG). Step 4 pushes at most one entry per entry it
  // pops, so it needs no room of its own.
  LeafHeap<typename Policy::Key, std::int32_t>& leaves = leaves_.Get<Policy>();
  leaves.Reserve(leaves.size() + 1);
}

template <typename Policy>
DoubleArrayTrie::Walk DoubleArrayTrie::WalkTouching(TokenSpan prefix,
                                                    std::uint64_t stamp) {
  return WalkChildren(prefix, [&](std::int64_t t) {
    states_.Touch<Policy>(static_cast<std::size_t>(t), stamp);
  });
}

template <typename Policy>
void DoubleArrayTrie::Grow(Walk& walk, TokenSpan tokens, std::uint64_t stamp) {
  std::int64_t s = walk.slot;
  if (tokens.empty()) {
    if (kKeepsState<Policy> && s != 0 && ChildCount(s) == 0) {
      PushLeaf<Policy>(s);  // a leaf touched again: its key changed
    }
    return;
  }
  // Nodes are created before step 4 evicts: a new node's slot is placed by
  // its parent's base, so freed slots would not serve it in order anyway.
  // The structure code is shared by every policy (kBounded only), so the
  // new node's state is written here: State{} touched by this request.
  const std::uint64_t stored_before = stored_;
  try {
    s = AddChild<true>(s, tokens[0]);
    states_.Create<Policy>(static_cast<std::size_t>(s), stamp);
    for (const Token token : tokens.subspan(1)) {
      s = AddChildToLeaf<true>(s, token);
      states_.Create<Policy>(static_cast<std::size_t>(s), stamp);
    }
  } catch (...) {
    if (stored_ != stored_before) PushLeaf<Policy>(s);
    throw;
  }
  PushLeaf<Policy>(s);  // the new deepest node
  walk = Walk{walk.matched + tokens.size(), s};
}

DoubleArrayTrie::Walk DoubleArrayTrie::DeepestLeft(TokenSpan sequence,
                                                   Walk) const {
  // An evicted slot keeps no parent (its check is cleared), so the path is
  // walked again.
  return WalkChildren(sequence, IgnoreWalk{});
}

template <typename Policy>
void DoubleArrayTrie::Tidy() {
  // Every slot >= used_end_ is free, so the leaves are below it.
  leaves_.Get<Policy>().RebuildIfOverfull(stored_, [&](auto add) {
    for (std::size_t s = 1; s < used_end_; ++s) {
      if (!free_.Test(s) && ChildCount(static_cast<std::int64_t>(s)) == 0) {
        add(LeafKey<Policy>(static_cast<std::int64_t>(s)),
            static_cast<std::int32_t>(s));
      }
    }
  });
}

// What EvictLeaves (kvprefix/cache_model.h) needs of the slots.
template <typename Policy>
class DoubleArrayTrie::Leaves {
 public:
  using Entry = typename LeafHeap<typename Policy::Key, std::int32_t>::Entry;
  explicit Leaves(DoubleArrayTrie& trie) : trie_(trie) {}

  // The entry's slot holds a leaf whose key is still the entry's.
  bool IsCurrent(const Entry& entry) const {
    const std::int64_t s = entry.handle;
    return !trie_.free_.Test(static_cast<std::size_t>(s)) &&
           trie_.LeafKey<Policy>(s) == entry.key && trie_.ChildCount(s) == 0;
  }
  typename Policy::Key LeafKey(std::int32_t s) const {
    return trie_.LeafKey<Policy>(s);
  }
  // Evicts one node; its parent, if that is a leaf now (not the root), is
  // the next candidate.
  std::pair<std::uint64_t, std::optional<std::int32_t>> RemoveTail(
      std::int32_t leaf, std::uint64_t) {
    const std::int64_t parent = trie_.Evict(leaf);
    if (parent <= 0) return {1, std::nullopt};
    return {1, static_cast<std::int32_t>(parent)};
  }

 private:
  DoubleArrayTrie& trie_;
};

template <typename Policy>
void DoubleArrayTrie::EvictLeaves(std::uint64_t count) {
  // Every leaf present has an entry with its current key (pushed when it
  // became a leaf, was touched or moved), so the first current entry is the
  // leaf SPEC §8 step 4 names; stale entries are dropped on the way, and
  // kvprefix::EvictLeaves throws NoEvictableLeafError should no leaf be
  // left. A parent left childless is usually next (the rest of a chain) and
  // is evicted without a round trip through the heap when no entry's key is
  // below its key.
  Leaves<Policy> structure(*this);
  kvprefix::EvictLeaves(leaves_.Get<Policy>(), structure, count, kName,
                        options().capacity);
}

std::int64_t DoubleArrayTrie::Evict(std::int64_t t) {
  const std::int64_t p = cells_[t].check;
  const Token token = tokens_[t];
  bool parent_is_leaf = true;  // t == p + 1 was p's only child
  if (cells_[p].base == kHashBase) {
    RemoveEdge(p, token);
    auto it = hash_children_.find(static_cast<std::int32_t>(p));
    parent_is_leaf = --it->second == 0;
    if (parent_is_leaf) {
      hash_children_.erase(it);
      cells_[p].base = 0;  // a leaf again, with no edges_ entries
    }
  } else if (auto it = children_.find(static_cast<std::int32_t>(p));
             it != children_.end()) {
    Codes& codes = it->second;
    const auto code = static_cast<std::uint32_t>(t - cells_[p].base);
    *std::find(codes.begin(), codes.end(), code) = codes.back();
    codes.pop_back();
    parent_is_leaf = codes.empty();
    if (parent_is_leaf) children_.erase(it);
  }
  cells_[t] = Cell{0, -1};
  free_.Set(t);
  --stored_;
  CountEvicted(1);
  BufferEvicted(token);
  return parent_is_leaf ? p : -1;
}

DoubleArrayTrie::Walk DoubleArrayTrie::WalkArrays(TokenSpan request,
                                                  Walk walk) const {
  const Cell* cells = cells_.data();
  const std::uint64_t size = size_;
  const Token* tokens = request.data();
  const std::size_t length = request.size();
  std::int64_t s = walk.slot;
  std::size_t i = walk.matched;
  for (; i < length; ++i) {
    const Token token = tokens[i];
    const auto u = static_cast<std::uint32_t>(token);
    // The code, u + 1, computed apart from the base: the walk's critical
    // path is load base, add, load base, ... and GCC otherwise folds both
    // additions into one three-operand lea, which takes 2 cycles on AMD Zen
    // and recent Intel cores where an add takes 1 (Agner Fog's instruction
    // tables): 7 cycles a token instead of 6, 15-20% of an unbounded match.
    std::uint64_t code = std::uint64_t{u} + 1;
    asm("" : "+r"(code));  // keeps `code` a register of its own
    const std::int64_t base = cells[s].base;
    std::int64_t t;
    if (u < kDirectTokens) [[likely]] {
      t = base + static_cast<std::int64_t>(code);
      if (static_cast<std::uint64_t>(t) >= size || cells[t].check != s) break;
    } else {
      t = base + kDirectTokens + 1 + HashedCode(u);
      if (static_cast<std::uint64_t>(t) >= size || cells[t].check != s ||
          tokens_[t] != token) {  // t holds a node with a hashed code
        break;
      }
    }
    s = t;
  }
  return Walk{i, s};
}

Match DoubleArrayTrie::MatchPrefix(TokenSpan request) const {
  Walk walk{0, 0};
  for (;;) {
    // At a hash node (the root, for requests' spread-out first tokens) the
    // probe comes first: the array walk would only find base + code out of
    // range, one call and a branch miss a request for nothing.
    if (cells_[walk.slot].base != kHashBase) walk = WalkArrays(request, walk);
    // A hash node's base puts every array slot out of range, so the walk
    // stops at one, and only then does the match look at edges_: once per
    // request where there are no hash nodes.
    if (walk.matched == request.size() || cells_[walk.slot].base != kHashBase) {
      break;
    }
    const std::int64_t t = HashChild(walk.slot, request[walk.matched]);
    if (t < 0) break;
    walk = Walk{walk.matched + 1, t};
  }
  return Match{walk.matched, IdAt(walk.slot)};
}

std::size_t DoubleArrayTrie::memory_bytes() const {
  std::size_t bytes =
      ArrayHeapBytes<Cell>(cells_.capacity()) +
      ArrayHeapBytes<std::uint32_t>(ids_.capacity()) +
      ArrayHeapBytes<std::uint64_t>(ids64_.capacity()) +
      ArrayHeapBytes<std::uint64_t>(states_.words().capacity()) +
      ArrayHeapBytes<Token>(tokens_.capacity()) + free_.memory_bytes() +
      FlatHashTableBytes(children_) + FlatHashTableBytes(edges_) +
      FlatHashTableBytes(root_edges_) + FlatHashTableBytes(hash_children_) +
      VectorHeapBytes<std::int32_t>(root_children_.capacity()) +
      leaves_.memory_bytes() + eviction_buffer_bytes();
  for (const auto& [slot, codes] : children_) {
    if (codes.capacity() > kInlineCodes) {
      bytes += VectorHeapBytes<std::uint32_t>(codes.capacity());
    }
  }
  return bytes;
}

}  // namespace kvprefix
