#include "router/policies/llmd.h"

#include <algorithm>
#include <optional>

namespace kvprefix {
namespace {

// Step 1: the prefix scores of the matches `peeks` (tokens: with one page
// size for all, (m_w − min)/(max − min) is the same in tokens).
std::vector<Rational> PrefixScores(const std::vector<std::uint64_t>& peeks) {
  std::optional<std::uint64_t> low, high;
  for (const std::uint64_t peek : peeks) {
    if (peek == 0) continue;
    low = low ? std::min(*low, peek) : peek;
    high = high ? std::max(*high, peek) : peek;
  }
  std::vector<Rational> scores(peeks.size());
  for (std::size_t w = 0; w < peeks.size(); ++w) {
    if (peeks[w] == 0) continue;
    scores[w] =
        *high == *low ? Rational(1) : Rational(peeks[w] - *low, *high - *low);
  }
  return scores;
}

}  // namespace

std::size_t PickLargest(const std::vector<Rational>& scores, Stream& stream) {
  const Rational best = *std::ranges::max_element(scores);
  std::vector<std::size_t> tied;
  for (std::size_t w = 0; w < scores.size(); ++w) {
    if (scores[w] == best) tied.push_back(w);
  }
  if (tied.size() == 1) return tied[0];
  return tied[stream.Below(tied.size())];
}

std::size_t LlmdRouter::Choose(const RoutedRequest& request,
                               const WorkerViews& workers) {
  const std::size_t n = workers.size();
  const std::vector<Rational> prefix =
      PrefixScores(PeekMatches(workers, request.tokens));
  std::vector<std::uint64_t> loads(n);
  for (std::size_t w = 0; w < n; ++w) loads[w] = workers.view(w).load();
  const auto [low, high] = std::ranges::minmax(loads);
  std::vector<Rational> scores(n);
  for (std::size_t w = 0; w < n; ++w) {
    const Rational queue =
        high == low ? Rational(1) : Rational(high - loads[w], high - low);
    scores[w] = prefix_weight_ * prefix[w] + queue_weight_ * queue;
  }
  return PickLargest(scores, stream_);
}

}  // namespace kvprefix
