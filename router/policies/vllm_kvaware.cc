#include "router/policies/vllm_kvaware.h"

#include <algorithm>
#include <vector>

namespace kvprefix {

std::size_t VllmKvawareRouter::Choose(const RoutedRequest& request,
                                      const WorkerViews& workers) {
  const std::vector<std::uint64_t> peeks = PeekMatches(workers, request.tokens);
  const auto best = std::ranges::max_element(peeks);  // the first largest
  const std::uint64_t best_match = *best;
  // M* < n − T, without going below 0.
  if (best_match + threshold_ < request.tokens.size()) {
    return FirstLeastLoaded(workers);
  }
  return static_cast<std::size_t>(best - peeks.begin());
}

}  // namespace kvprefix
