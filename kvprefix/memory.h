// Helpers for honest memory_bytes(), and for growing vectors geometrically.
#ifndef KVPREFIX_KVPREFIX_MEMORY_H_
#define KVPREFIX_KVPREFIX_MEMORY_H_

#include <algorithm>
#include <cstddef>
#include <limits>

namespace kvprefix {

// Bytes that one glibc malloc(request) call consumes: the request plus an
// 8-byte chunk header, rounded up to 16, at least 32 (glibc malloc.c,
// request2size on 64-bit). Engines add this for every separately allocated
// object so that memory_bytes() matches the heap growth mallinfo2() reports.
constexpr std::size_t MallocChunkBytes(std::size_t request) {
  return std::max<std::size_t>(32, (request + 8 + 15) & ~std::size_t{15});
}

// The chunk bytes behind a std::vector<T> of the given capacity (0 if none).
template <typename T>
constexpr std::size_t VectorHeapBytes(std::size_t capacity) {
  return capacity == 0 ? 0 : MallocChunkBytes(capacity * sizeof(T));
}

// Control bytes that an Abseil Swiss table clones after its last slot's
// control byte: one probe group less one, where a group is 16 bytes with
// SSE2 and 8 otherwise (Group and NumClonedBytes in
// absl/container/internal/raw_hash_set.h).
#ifdef __SSE2__
inline constexpr std::size_t kSwissTableClonedControlBytes = 16 - 1;
#else
inline constexpr std::size_t kSwissTableClonedControlBytes = 8 - 1;
#endif

// The chunk bytes behind an absl::flat_hash_map or flat_hash_set `table`
// (anything with capacity() and a value_type laid out as its slot), 0 while
// it has no backing array. Abseil allocates one array per table
// (raw_hash_set.h, SlotOffset and AllocSize, as of the 20220623 release the
// project builds with): capacity() + 1 + kSwissTableClonedControlBytes
// control bytes (one per slot, a sentinel, the cloned group), rounded up to
// the slot alignment, then capacity() slots; the allocator rounds the whole
// up to the slot alignment too, which a malloc chunk's 16-byte rounding
// already covers. Excludes what the keys and values own on the heap. O(1).
template <typename Table>
std::size_t FlatHashTableBytes(const Table& table) {
  using Slot = typename Table::value_type;
  const std::size_t capacity = table.capacity();
  if (capacity == 0) return 0;
  const std::size_t control =
      (capacity + 1 + kSwissTableClonedControlBytes + alignof(Slot) - 1) &
      ~(alignof(Slot) - 1);
  return MallocChunkBytes(control + capacity * sizeof(Slot));
}

// Makes room for `needed` elements in `vector` (a std::vector or anything
// with capacity() and reserve()), at least doubling its capacity when it
// grows, but not past `limit` unless `needed` is above it. So a reserve
// before every push stays amortized O(1) per element, as push_back is; a
// plain reserve(size() + 1) allocates exactly one more element, so each
// call copies the whole vector (quadratic over n pushes). Throws what
// reserve() throws (std::bad_alloc, std::length_error); on a throw the
// vector is unchanged. Not thread-safe.
template <typename Vector>
void ReserveGeometric(
    Vector& vector, std::size_t needed,
    std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  if (needed <= vector.capacity()) return;
  vector.reserve(std::max(needed, std::min(2 * vector.capacity(), limit)));
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_MEMORY_H_
