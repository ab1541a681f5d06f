#include "router/policies/precise.h"

#include <vector>

namespace kvprefix {

std::size_t PreciseRouter::Choose(const RoutedRequest& request,
                                  const WorkerViews& workers) {
  // m_w = peek / P with one P for all: comparing the peeks is comparing m.
  const std::vector<std::uint64_t> peeks = PeekMatches(workers, request.tokens);
  std::size_t best = 0;
  for (std::size_t w = 1; w < peeks.size(); ++w) {
    if (peeks[w] > peeks[best] ||
        (peeks[w] == peeks[best] &&
         workers.view(w).load() < workers.view(best).load())) {
      best = w;
    }
  }
  return best;
}

}  // namespace kvprefix
