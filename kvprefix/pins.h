// PinTable: the pins of a cache while requests run (SPEC §10.4), one home
// for every engine that has a request lifecycle of its own (the spec tries
// reference and hash, the vllm block pools, the sglang radix caches).
//
// SPEC §10.4 gives each model a count per entry of the running requests
// holding it: spec's pin count per node of a matched path, vllm's reference
// count per block, sglang's lock count per node. An entry whose count is
// above 0 is never evicted, and each model says what happens when a count
// leaves or returns to 0 (a vllm block leaves or rejoins the free queue; a
// spec or sglang node leaves or rejoins the evictable leaves). SPEC §10.5's
// peak_pinned reads how many entries are pinned. A started request's state
// (what its Admit recorded, for its PrefillEnd and Finish) is kept beside
// the counts, keyed by its RequestId. A PinTable is both: the counts, with
// the two transitions as hooks the engine passes in (OnFirstPin runs when a
// key's count goes 0 -> 1, OnLastUnpin when it goes 1 -> 0), and the table
// of running requests (Admit records, Finish extracts). What the engine
// keeps is only its model's hook bodies and what its Admission holds.
//
// Shapes. Key names an entry: a node ID or slot, a block ID, a small
// unsigned integer. Admission is what one running request needs at its
// finish (a path, a block list, a locked node and held slots); it must be
// movable. Counts says where the counts live:
//   HashedPinCounts<Key>  an absl::flat_hash_map holding only keys with a
//                         pin (for keys spread over a large range, e.g. the
//                         hash trie's 32-bit slots: memory follows the
//                         pinned keys, not the keys ever used);
//   DensePinCounts<Key>   a vector indexed by the key, grown on demand (for
//                         keys that are small dense indices, e.g. blocks
//                         1 ... C or the slots of a node vector: one array
//                         read per count, no hashing, on the hot path of a
//                         replay that pins at every request).
// A count is 64-bit; it is at most the requests running plus one (sglang's
// prefill end locks the new node before it unlocks the old), far below.
//
// Complexity: Pin, Unpin, count and Copy O(1) (expected, hashed), plus the
// hook; Admit and Finish O(1) expected plus the Admission's move; pinned()
// O(1). Memory: the counts (hashed: one table slot per pinned key; dense:
// 8 bytes per key up to the largest pinned) and one table entry per running
// request.
//
// Errors: Unpin of a key with no pin, Finish or running() of a request that
// is not running are caller bugs (an engine's invariant), not checked
// beyond what absl and the standard library check (running() of an absent
// request throws std::out_of_range). Allocation failures throw
// std::bad_alloc.
//
// Thread safety: none of its own; const members may run concurrently,
// everything else needs exclusive access, as the owning engine's calls do.
//
// Sources: SPEC §10.4 (pins, reference and lock counts), §10.5
// (peak_pinned); vLLM v1's BlockPool (ref_cnt, touch / free_blocks move a
// block out of / into the free queue at 0) and SGLang's RadixCache
// (lock_ref, inc_lock_ref / dec_lock_ref move a node's tokens between
// evictable and protected at 0), which the hooks stand for.
#ifndef KVPREFIX_KVPREFIX_PINS_H_
#define KVPREFIX_KVPREFIX_PINS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kvprefix/memory.h"
#include "kvprefix/request.h"

namespace kvprefix {

// A hook that does nothing: Pin or Unpin of a model with no transition.
struct NoPinHook {
  template <typename Key>
  void operator()(Key) const {}
};

// Pin counts in a hash map of the pinned keys (see the file comment).
template <typename Key>
class HashedPinCounts {
 public:
  // The count of `key`: 0 when it has no pin. O(1) expected.
  std::uint64_t Get(Key key) const {
    const auto it = counts_.find(key);
    return it == counts_.end() ? 0 : it->second;
  }
  // Adds 1 to `key`'s count; returns the count before. O(1) expected.
  std::uint64_t Add(Key key) { return counts_[key]++; }
  // Subtracts 1 from `key`'s count (above 0); returns the count after, the
  // key's entry dropped at 0. O(1) expected.
  std::uint64_t Subtract(Key key) {
    const auto it = counts_.find(key);
    const std::uint64_t after = --it->second;
    if (after == 0) counts_.erase(it);
    return after;
  }
  // Sets `key`'s count (to above 0). O(1) expected.
  void Set(Key key, std::uint64_t count) { counts_[key] = count; }
  // The table's heap bytes (kvprefix/memory.h). O(1).
  std::size_t memory_bytes() const { return FlatHashTableBytes(counts_); }

 private:
  absl::flat_hash_map<Key, std::uint64_t> counts_;
};

// Pin counts in a vector indexed by the key (see the file comment).
template <typename Key>
class DensePinCounts {
 public:
  // The count of `key`: 0 when it has no pin (or was never pinned). O(1).
  std::uint64_t Get(Key key) const {
    return key < counts_.size() ? counts_[key] : 0;
  }
  // Adds 1 to `key`'s count; returns the count before. O(1) amortized.
  std::uint64_t Add(Key key) {
    if (key >= counts_.size()) Grow(key);
    return counts_[key]++;
  }
  // Subtracts 1 from `key`'s count (above 0); returns the count after. O(1).
  std::uint64_t Subtract(Key key) { return --counts_[key]; }
  // Sets `key`'s count (to above 0). O(1) amortized.
  void Set(Key key, std::uint64_t count) {
    if (key >= counts_.size()) Grow(key);
    counts_[key] = count;
  }
  // The vector's heap bytes (kvprefix/memory.h). O(1).
  std::size_t memory_bytes() const {
    return VectorHeapBytes<std::uint64_t>(counts_.capacity());
  }

 private:
  // Room for `key`, geometrically, so that a growing key range costs O(1)
  // amortized per key.
  void Grow(Key key) {
    const std::size_t size = static_cast<std::size_t>(key) + 1;
    ReserveGeometric(counts_, size);
    counts_.resize(size, 0);
  }

  std::vector<std::uint64_t> counts_;
};

template <typename Key, typename Admission,
          typename Counts = HashedPinCounts<Key>>
class PinTable {
 public:
  // --- Pins --------------------------------------------------------------

  // Adds one pin to `key`; if it had none, counts it pinned and calls
  // on_first_pin(key) (the model's transition: take the entry out of what
  // can be evicted). O(1) plus the hook.
  template <typename OnFirstPin = NoPinHook>
  void Pin(Key key, OnFirstPin&& on_first_pin = {}) {
    if (counts_.Add(key) != 0) return;
    ++pinned_;
    on_first_pin(key);
  }
  // Removes one pin of `key` (it has one); if that was its last, counts it
  // unpinned and calls on_last_unpin(key) (the model's transition back:
  // the entry may be evicted again). O(1) plus the hook.
  template <typename OnLastUnpin = NoPinHook>
  void Unpin(Key key, OnLastUnpin&& on_last_unpin = {}) {
    if (counts_.Subtract(key) != 0) return;
    --pinned_;
    on_last_unpin(key);
  }
  // Gives `to` (with no pin) the count of `from`, calling no hook: an
  // entry that takes over part of a pinned one, as sglang's split gives its
  // new node the child's lock count (SPEC §9.3). O(1).
  void Copy(Key from, Key to) {
    const std::uint64_t count = counts_.Get(from);
    if (count == 0) return;
    counts_.Set(to, count);
    ++pinned_;
  }
  // The pins of `key`: 0 for none. O(1).
  std::uint64_t count(Key key) const { return counts_.Get(key); }
  bool is_pinned(Key key) const { return counts_.Get(key) != 0; }
  // The keys with a pin. O(1).
  std::uint64_t pinned() const { return pinned_; }

  // --- Running requests -------------------------------------------------

  // Records that request `id` (not running) started with `admission`.
  // O(1) expected.
  void Admit(RequestId id, Admission admission) {
    running_.emplace(id, std::move(admission));
  }
  // The admission of running request `id`, for a step between its Admit
  // and its Finish (sglang's prefill end). Throws std::out_of_range if `id`
  // is not running. O(1) expected.
  Admission& running(RequestId id) { return running_.at(id); }
  // Removes running request `id` and returns its admission (the caller
  // then unpins what it pinned). O(1) expected.
  Admission Finish(RequestId id) {
    auto entry = running_.extract(id);
    return std::move(entry.mapped());
  }
  // Requests running. O(1).
  std::size_t running_count() const { return running_.size(); }

  // The counts' and the running table's heap bytes (their capacities; an
  // Admission's own heap is not counted). O(1).
  std::size_t memory_bytes() const {
    return counts_.memory_bytes() + FlatHashTableBytes(running_);
  }

 private:
  Counts counts_;
  std::uint64_t pinned_ = 0;
  absl::flat_hash_map<RequestId, Admission> running_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_PINS_H_
