#include "router/router.h"

namespace kvprefix {

std::size_t FirstLeastLoaded(const WorkerViews& workers) {
  std::size_t best = 0;
  std::uint64_t best_load = workers.view(0).load();
  for (std::size_t w = 1; w < workers.size(); ++w) {
    const std::uint64_t load = workers.view(w).load();
    if (load < best_load) {
      best = w;
      best_load = load;
    }
  }
  return best;
}

std::vector<std::uint64_t> PeekMatches(const WorkerViews& workers,
                                       TokenSpan tokens) {
  std::vector<std::uint64_t> peeks(workers.size());
  for (std::size_t w = 0; w < peeks.size(); ++w) {
    peeks[w] = workers.PeekMatch(w, tokens);
  }
  return peeks;
}

Rational MatchedPages(const WorkerViews& workers, std::size_t w,
                      TokenSpan tokens, std::uint64_t page_size) {
  return Rational(workers.PeekMatch(w, tokens), page_size);
}

}  // namespace kvprefix
