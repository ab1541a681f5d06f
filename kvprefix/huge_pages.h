// Transparent huge pages for large buffers.
//
// A fresh process pays for every page it touches: the kernel takes a fault,
// zeroes the page and maps it. On 4 KiB pages that is one fault per 4 KiB;
// with transparent huge pages (THP) one fault maps 2 MiB. On the machines
// kvprefix is measured on, touching 512 MiB of fresh memory takes 0.3-1.5 s
// on 4 KiB pages and 0.04-0.09 s on huge pages (docs/design_history.md has
// what that did to `kvprefix match`). Most distributions ship THP in
// "madvise" mode (/sys/kernel/mm/transparent_hugepage/enabled): only memory
// that asks with madvise(MADV_HUGEPAGE) gets huge pages
// (Documentation/admin-guide/mm/transhuge.rst in the Linux sources).
//
// So large buffers ask. The memory still comes from malloc (glibc serves
// blocks this large with mmap), so free(), realloc() and the accounting of
// memory.h (MallocChunkBytes, and mallinfo2() in tests/memory_test.cc) are
// unchanged: the advice only changes the page size behind the block. A
// block is advised only where it covers whole 2 MiB-aligned huge pages
// (the kernel maps a huge page only there); the at most two partial huge
// pages at its ends keep 4 KiB pages. Where THP is off, unavailable or not
// Linux, the advice fails and is ignored: nothing else changes.
#ifndef KVPREFIX_KVPREFIX_HUGE_PAGES_H_
#define KVPREFIX_KVPREFIX_HUGE_PAGES_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

namespace kvprefix {

// The huge page size THP uses on x86-64 and most arm64 kernels, in bytes.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Asks the kernel to back the whole 2 MiB-aligned huge pages inside
// [data, data + bytes) with transparent huge pages (madvise(MADV_HUGEPAGE)).
// Call it on a block fresh from malloc, before its pages are touched: pages
// already faulted in stay small until khugepaged merges them. Blocks
// smaller than a huge page are left alone (they hold no whole huge page
// worth a system call). Never fails: without THP it does nothing. `data`
// may be null when `bytes` is 0. O(1): one system call when it acts.
// Thread-safe.
void AdviseHugePages(void* data, std::size_t bytes) noexcept;

// A standard allocator (for std::vector, absl::flat_hash_map, ...) that
// allocates as std::allocator<T> does and advises every block of at least
// kHugePageBytes with AdviseHugePages. Stateless: all instances are equal.
// Costs one madvise system call per large block; nothing on small ones.
template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT

  // Room for `n` objects of T, uninitialized. Throws std::bad_alloc.
  T* allocate(std::size_t n) {
    T* data = std::allocator<T>().allocate(n);
    AdviseHugePages(data, n * sizeof(T));
    return data;
  }
  // Frees a block of `n` objects from allocate(n).
  void deallocate(T* data, std::size_t n) noexcept {
    std::allocator<T>().deallocate(data, n);
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

// A std::vector whose large buffers are on huge pages.
template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

// An absl::flat_hash_map (absl's default hash and equality) whose large
// tables are on huge pages.
template <typename K, typename V>
using HugePageHashMap =
    absl::flat_hash_map<K, V, absl::Hash<K>, std::equal_to<K>,
                        HugePageAllocator<std::pair<const K, V>>>;

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_HUGE_PAGES_H_
