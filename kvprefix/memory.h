// Helpers for honest memory_bytes(): what glibc malloc really hands out.
#ifndef KVPREFIX_KVPREFIX_MEMORY_H_
#define KVPREFIX_KVPREFIX_MEMORY_H_

#include <algorithm>
#include <cstddef>

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

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_MEMORY_H_
