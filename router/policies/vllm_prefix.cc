#include "router/policies/vllm_prefix.h"

#include <algorithm>
#include <iterator>

namespace kvprefix {

std::optional<VllmPrefixRouter::Node> VllmPrefixRouter::Step(Node node,
                                                             TokenSpan chunk,
                                                             bool create) {
  for (const Token token : chunk) {
    if (const auto child = edges_.Child(node, token)) {
      node = *child;
    } else if (create) {
      const auto added = static_cast<Node>(workers_.size());
      workers_.emplace_back();
      edges_.Add(node, token, added);
      node = added;
    } else {
      return std::nullopt;
    }
  }
  return node;
}

std::size_t VllmPrefixRouter::Choose(const RoutedRequest& request,
                                     const WorkerViews& workers) {
  const TokenSpan tokens = request.tokens;
  const auto chunk_at = [&](std::size_t start) {
    return tokens.subspan(start,
                          std::min<std::size_t>(chunk_, tokens.size() - start));
  };
  std::optional<std::vector<std::uint32_t>> candidates;  // none: all
  std::uint64_t matched = 0;
  Node node = 0;
  for (std::size_t start = 0; start < tokens.size(); start += chunk_) {
    const auto child = Step(node, chunk_at(start), false);
    if (!child) break;
    const std::vector<std::uint32_t>& here = workers_[*child];
    std::vector<std::uint32_t> both;
    if (candidates) {
      std::ranges::set_intersection(*candidates, here,
                                    std::back_inserter(both));
    } else {
      both = here;
    }
    if (both.empty()) break;
    matched += chunk_;
    candidates = std::move(both);
    node = *child;
  }
  std::size_t chosen = 0;
  if (matched < min_match_) {
    chosen = FirstLeastLoaded(workers);
  } else if (candidates) {
    chosen = (*candidates)[stream_.Below(candidates->size())];
  } else {
    chosen = static_cast<std::size_t>(stream_.Below(workers.size()));
  }
  node = 0;
  for (std::size_t start = 0; start < tokens.size(); start += chunk_) {
    node = *Step(node, chunk_at(start), true);
    auto& here = workers_[node];
    const auto at = std::ranges::lower_bound(here, chosen);
    if (at == here.end() || *at != chosen) {
      here.insert(at, static_cast<std::uint32_t>(chosen));
    }
  }
  return chosen;
}

}  // namespace kvprefix
