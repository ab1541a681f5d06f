// PageMap: the children of a tree of pages, (parent slot, page) -> child
// slot, shared by the models' optimized engines (BlockPool's chains,
// RadixCache's edges by their first page).
//
// One absl::flat_hash_map keyed by (parent slot, the page's hash) holds the
// first slot of each key; slots whose pages collide under one key are chained
// through next_[slot]. Find compares the page's tokens with each candidate's
// (SPEC §9.2: chains are the same "never by a hash alone"), so a collision
// costs a compare, never a wrong answer. A page of one token hashes to the
// token itself, which never collides.
//
// The pages themselves live in the engine (PageMap stores none): Find takes
// page_of(slot) -> TokenSpan to read a candidate's page.
//
// Thread safety: const members may run concurrently; the rest need exclusive
// access.
#ifndef KVPREFIX_KVPREFIX_PAGE_MAP_H_
#define KVPREFIX_KVPREFIX_PAGE_MAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"
#include "kvprefix/memory.h"
#include "kvprefix/types.h"

namespace kvprefix {

class PageMap {
 public:
  using Slot = std::uint64_t;
  // No slot: Find's answer for a page not in the map.
  static constexpr Slot kNone = std::numeric_limits<Slot>::max();

  // The child of `parent` whose page equals `page` (token by token), or
  // kNone. page_of(Slot) -> TokenSpan gives a stored child's page. O(|page|)
  // expected.
  template <typename PageOf>
  Slot Find(Slot parent, TokenSpan page, PageOf&& page_of) const {
    const auto it = heads_.find(Key(parent, page));
    if (it == heads_.end()) return kNone;
    // A one-token page is its own key: no other page shares it, and reading
    // the stored page would cost a cache miss for nothing.
    if (page.size() == 1) return it->second;
    for (Slot slot = it->second; slot != kNone; slot = next_[slot]) {
      const TokenSpan stored = page_of(slot);
      if (std::equal(stored.begin(), stored.end(), page.begin(), page.end())) {
        return slot;
      }
    }
    return kNone;
  }

  // Records `slot` as the child of `parent` with page `page`. Requires that
  // no child of `parent` has that page. O(|page|) expected, amortized.
  // Throws std::bad_alloc.
  void Insert(Slot parent, TokenSpan page, Slot slot) {
    if (slot >= next_.size()) ReserveAndResize(slot + 1);
    auto [it, added] = heads_.try_emplace(Key(parent, page), slot);
    next_[slot] = added ? kNone : std::exchange(it->second, slot);
  }

  // Forgets `slot`, the child of `parent` with page `page`. Requires it to
  // be recorded so. O(|page| + colliding slots) expected.
  void Erase(Slot parent, TokenSpan page, Slot slot) {
    const auto it = heads_.find(Key(parent, page));
    if (it->second == slot) {
      if (next_[slot] == kNone) {
        heads_.erase(it);
      } else {
        it->second = next_[slot];
      }
      return;
    }
    Slot before = it->second;
    while (next_[before] != slot) before = next_[before];
    next_[before] = next_[slot];
  }

  // Heap bytes: the hash table and the collision links. O(1).
  std::size_t memory_bytes() const {
    return FlatHashTableBytes(heads_) + VectorHeapBytes<Slot>(next_.capacity());
  }

 private:
  static std::pair<Slot, std::uint64_t> Key(Slot parent, TokenSpan page) {
    const std::uint64_t hash = page.size() == 1
                                   ? static_cast<std::uint32_t>(page[0])
                                   : absl::HashOf(absl::MakeConstSpan(page));
    return {parent, hash};
  }

  void ReserveAndResize(std::size_t size) {
    ReserveGeometric(next_, size);
    next_.resize(size, kNone);
  }

  absl::flat_hash_map<std::pair<Slot, std::uint64_t>, Slot> heads_;
  std::vector<Slot> next_;  // [slot] the next slot under the same key
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_PAGE_MAP_H_
