// DoubleArrayTrie: see the design essay in the header.
#include "optimized/double_array_trie.h"

#include <algorithm>
#include <bit>
#include <new>
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
// Slots allocated for a new index; the arrays then grow by 1/16.
constexpr std::size_t kInitialSlots = 1024;

// Heap bytes of an absl::flat_hash_map / flat_hash_set backing array: one
// control byte per slot plus a cloned group of 16, then the slots
// (absl/container/internal/raw_hash_set.h, Abseil 20220623).
template <typename Map>
std::size_t HashTableHeapBytes(const Map& map) {
  if (map.capacity() == 0) return 0;
  const std::size_t control = (map.capacity() + 1 + 15 + 7) & ~std::size_t{7};
  return MallocChunkBytes(control +
                          map.capacity() * sizeof(typename Map::value_type));
}

}  // namespace

template <typename T>
void DoubleArrayTrie::ReallocArray<T>::Reallocate(std::size_t capacity) {
  static_assert(std::is_trivially_copyable_v<T>);
  void* grown = std::realloc(data_.get(), capacity * sizeof(T));
  if (grown == nullptr) throw std::bad_alloc();
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

DoubleArrayTrie::DoubleArrayTrie(std::size_t max_slots)
    : max_slots_(max_slots) {
  if (max_slots < 2 || max_slots > kMaxSlots) {
    throw std::invalid_argument("double-array: max_slots " +
                                std::to_string(max_slots) +
                                " is outside [2, 2^30]");
  }
  EnsureSize(1);
  free_.Clear(0);  // the root; its check stays -1 so no edge lands on it
  ids_[0] = kRootNode;
}

std::uint32_t DoubleArrayTrie::AssignCode(Token token) {
  std::uint32_t code = CodeOf(token);
  if (code != 0) return code;
  const std::size_t next = kDirectTokens + 1 + extra_codes_.size();
  if (next >= kMaxSlots) {
    throw CapacityError("double-array: more than " +
                        std::to_string(kMaxSlots - kDirectTokens - 1) +
                        " distinct tokens outside [0, " +
                        std::to_string(kDirectTokens) +
                        "); token codes are limited to 30 bits");
  }
  code = static_cast<std::uint32_t>(next);
  extra_codes_.emplace(token, code);
  return code;
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
  ids_.Reallocate(capacity);
  std::fill(cells_.data() + size_, cells_.data() + capacity, Cell{0, -1});
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

std::int64_t DoubleArrayTrie::FindBase(const Codes& codes) {
  const auto [min_it, max_it] = std::minmax_element(codes.begin(), codes.end());
  const std::int64_t min_code = *min_it;
  const std::int64_t max_code = *max_it;
  const std::int64_t used_end = static_cast<std::int64_t>(used_end_);
  const auto fits = [&](std::int64_t base) {
    return std::all_of(codes.begin(), codes.end(),
                       [&](std::uint32_t code) { return IsFree(base + code); });
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
    const std::int64_t base = static_cast<std::int64_t>(f) - min_code;
    if (f == SlotBitmap::kNone || base + max_code >= used_end) break;
    if (fits(base)) return base;
  }
  // Else the largest code at the first free slots from used_end_ on (the
  // others below it, >= 1), so the used part grows by a few slots, not by
  // the family's spread; else all codes from used_end_ on, which always
  // fits (every slot >= used_end_ is free, and used_end_ >= 1).
  std::int64_t base = used_end - min_code;
  for (std::int64_t top = std::max(used_end, max_code - min_code + 1),
                    tries = 0;
       tries < kMaxTopTries; ++tries, ++top) {
    if (fits(top - max_code)) {
      base = top - max_code;
      break;
    }
  }
  EnsureSize(static_cast<std::size_t>(base + max_code) + 1);
  return base;
}

std::int64_t DoubleArrayTrie::CreateNode(std::int64_t t, std::int64_t parent) {
  Occupy(t);
  cells_[t] = Cell{0, static_cast<std::int32_t>(parent)};
  ids_[t] = static_cast<std::uint32_t>(++node_count_);
  return t;
}

std::int64_t DoubleArrayTrie::AddChildToLeaf(std::int64_t s,
                                             std::uint32_t code) {
  const std::int64_t f = NextFree(s + 1);
  cells_[s].base = static_cast<std::int32_t>(f - code);
  if (f != s + 1) children_[static_cast<std::int32_t>(s)].push_back(code);
  return CreateNode(f, s);
}

void DoubleArrayTrie::AppendChildren(std::int64_t s, Codes& out) const {
  if (auto it = children_.find(s); it != children_.end()) {
    out.insert(out.end(), it->second.begin(), it->second.end());
  } else if (static_cast<std::size_t>(s) + 1 < size_ &&
             cells_[s + 1].check == s) {
    out.push_back(static_cast<std::uint32_t>(s + 1 - cells_[s].base));
  }
}

std::size_t DoubleArrayTrie::ChildCount(std::int64_t s) const {
  if (auto it = children_.find(static_cast<std::int32_t>(s));
      it != children_.end()) {
    return it->second.size();
  }
  return static_cast<std::size_t>(s) + 1 < size_ && cells_[s + 1].check == s;
}

std::int64_t DoubleArrayTrie::AddChild(std::int64_t& s, std::uint32_t code) {
  const std::size_t siblings = ChildCount(s);
  if (siblings == 0) return AddChildToLeaf(s, code);

  std::int64_t target = std::int64_t{cells_[s].base} + code;
  // A target far past the used slots would leave a hole as wide as the
  // distance; a small family moves to where the holes are instead.
  if (target < 1 ||
      (static_cast<std::size_t>(target) >= used_end_ + kMaxTopTries &&
       siblings <= kMaxFamilyToCompact)) {
    return MoveChildren(s, code, s) + code;
  }
  if (!IsFree(target)) {
    // cedar's rule: move the smaller sibling set. The occupant's parent p is
    // never s (else the edge would exist) and the root is never an occupant.
    const std::int64_t p = cells_[target].check;
    if (ChildCount(p) > siblings) return MoveChildren(s, code, s) + code;
    MoveChildren(p, 0, s);  // frees target; s may be one of p's children
    target = std::int64_t{cells_[s].base} + code;
  }
  EnsureSize(static_cast<std::size_t>(target) + 1);
  // Record the new sibling. Without an entry, s has not moved and its one
  // child is still at s + 1.
  auto [entry, created] = children_.try_emplace(static_cast<std::int32_t>(s));
  if (created) {
    entry->second.push_back(static_cast<std::uint32_t>(s + 1 - cells_[s].base));
  }
  entry->second.push_back(code);
  return CreateNode(target, s);
}

std::int64_t DoubleArrayTrie::MoveChildren(std::int64_t n,
                                           std::uint32_t extra_code,
                                           std::int64_t& tracked) {
  Codes codes;
  AppendChildren(n, codes);
  const std::size_t moved = codes.size();
  if (extra_code != 0) codes.push_back(extra_code);
  const std::int64_t base = FindBase(codes);
  const std::int64_t old_base = cells_[n].base;
  for (std::size_t i = 0; i < moved; ++i) {
    const std::int64_t from = old_base + codes[i];
    MoveNode(from, base + codes[i], n);
    if (tracked == from) tracked = base + codes[i];
  }
  cells_[n].base = static_cast<std::int32_t>(base);
  children_.insert_or_assign(static_cast<std::int32_t>(n), std::move(codes));
  relocated_nodes_ += moved;
  if (extra_code != 0) CreateNode(base + extra_code, n);
  return base;
}

void DoubleArrayTrie::MoveNode(std::int64_t from, std::int64_t to,
                               std::int64_t parent) {
  const std::int32_t base = cells_[from].base;
  Occupy(to);
  cells_[to] = Cell{base, static_cast<std::int32_t>(parent)};
  ids_[to] = ids_[from];
  // Re-point the children of the moved node. A child list kept by position
  // (the single child at from + 1) no longer holds at `to`: make it an entry.
  if (auto it = children_.find(from); it != children_.end()) {
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
  }
  cells_[from] = Cell{0, -1};
  free_.Set(from);
}

NodeId DoubleArrayTrie::Insert(TokenSpan sequence) {
  std::int64_t s = 0;
  std::size_t i = 0;
  for (; i < sequence.size(); ++i) {
    const std::uint32_t code = CodeOf(sequence[i]);
    const std::int64_t t = code == 0 ? -1 : Child(s, code);
    if (t < 0) break;
    s = t;
  }
  if (i < sequence.size()) {
    s = AddChild(s, CodeForInsert(sequence[i]));
    // Every later node is a fresh leaf: the fast path, O(1) per token.
    for (++i; i < sequence.size(); ++i) {
      s = AddChildToLeaf(s, CodeForInsert(sequence[i]));
    }
  }
  return ids_[s];
}

Match DoubleArrayTrie::MatchPrefix(TokenSpan request) const {
  const Cell* cells = cells_.data();
  std::int64_t s = 0;
  std::size_t matched = 0;
  for (Token token : request) {
    const std::uint32_t code = CodeOf(token);
    if (code == 0) break;
    const std::int64_t t = std::int64_t{cells[s].base} + code;
    if (static_cast<std::uint64_t>(t) >= size_ || cells[t].check != s) break;
    s = t;
    ++matched;
  }
  return Match{matched, ids_[s]};
}

std::size_t DoubleArrayTrie::memory_bytes() const {
  std::size_t bytes =
      MallocChunkBytes(cells_.capacity() * sizeof(Cell)) +
      MallocChunkBytes(ids_.capacity() * sizeof(std::uint32_t)) +
      free_.memory_bytes() + HashTableHeapBytes(extra_codes_) +
      HashTableHeapBytes(children_);
  for (const auto& [slot, codes] : children_) {
    if (codes.capacity() > kInlineCodes) {
      bytes += VectorHeapBytes<std::uint32_t>(codes.capacity());
    }
  }
  return bytes;
}

}  // namespace kvprefix
