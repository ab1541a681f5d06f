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
