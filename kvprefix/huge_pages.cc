// Transparent huge pages for large buffers: see the header.
#include "kvprefix/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kvprefix {

void AdviseHugePages(void* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first =
      (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePageBytes - 1);
  if (bytes < kHugePageBytes || first >= last) return;
  // The result is ignored on purpose: EINVAL (THP not built in or "never"),
  // ENOMEM or EAGAIN leave the block on small pages, which is correct.
  static_cast<void>(
      madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE));
#else
  static_cast<void>(data);
  static_cast<void>(bytes);
#endif
}

}  // namespace kvprefix
