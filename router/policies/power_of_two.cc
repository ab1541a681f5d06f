#include "router/policies/power_of_two.h"

namespace kvprefix {

std::size_t PowerOfTwoRouter::Choose(const RoutedRequest&,
                                     const WorkerViews& workers) {
  const std::uint64_t n = workers.size();
  if (n == 1) return 0;
  const std::uint64_t first = stream_.Below(n);
  const std::uint64_t second = (first + 1 + stream_.Below(n - 1)) % n;
  return workers.view(first).load() <= workers.view(second).load() ? first
                                                                   : second;
}

}  // namespace kvprefix
