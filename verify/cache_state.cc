// The reference's cache at a failing request: see cache_state.h.
#include "verify/cache_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "checking/differential.h"
#include "engines/registry.h"
#include "reference/reference_trie.h"

namespace kvprefix::verify {
namespace {

constexpr std::size_t kMaxShownPaths = 8;
constexpr std::size_t kMaxShownEvictingRequests = 4;
constexpr std::size_t kMaxShownPagesPerRequest = 16;

// The pages one request evicted.
struct Eviction {
  std::size_t request;
  checking::EvictedPages pages;
};

// What `cache` holds of `tokens`: their match, but without vllm's cap
// (SPEC §9.2's step 1 never covers a request's last token, so a chain the
// pool holds whole would not show): one token more lifts it.
Match HeldPrefix(const PrefixIndex& cache, TokenSpan tokens) {
  if (cache.options().model != CacheModel::kVllm) {
    return cache.MatchPrefix(tokens);
  }
  std::vector<Token> longer(tokens.begin(), tokens.end());
  longer.push_back(0);
  return cache.MatchPrefix(longer);
}

}  // namespace

std::string DescribeReferenceCache(const ReplayInput& input,
                                   std::size_t request) {
  const auto reference = MakeEngine(ReferenceTrie::kName, input.options);
  std::vector<Eviction> evictions;
  checking::EvictedPages step;
  reference->SetEvictionListener(step.Listener(input.options.page_size));
  for (std::size_t i = 0; i < request; ++i) {
    reference->Access(input.requests[i]);
    if (step.size() > 0) {
      evictions.push_back(Eviction{i, step});
      step.Clear();
    }
  }
  // Every node present was created by an earlier request, and what is
  // present is prefix-closed (SPEC §8), so each leaf ends the cached part
  // of some earlier request: the maximal such parts are the leaves' paths.
  std::vector<TokenSpan> parts;
  for (std::size_t i = 0; i < request; ++i) {
    const TokenSpan tokens = input.requests[i];
    const std::size_t cached = HeldPrefix(*reference, tokens).matched_length;
    if (cached > 0) parts.push_back(tokens.first(cached));
  }
  const auto less = [](TokenSpan a, TokenSpan b) {
    return std::ranges::lexicographical_compare(a, b);
  };
  std::sort(parts.begin(), parts.end(), less);
  // Sorted, a part that is a prefix of another is a prefix of the next one.
  std::vector<TokenSpan> leaves;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool inner =
        i + 1 < parts.size() && parts[i].size() <= parts[i + 1].size() &&
        std::ranges::equal(parts[i], parts[i + 1].first(parts[i].size()));
    if (!inner) leaves.push_back(parts[i]);
  }
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < leaves.size() && i < kMaxShownPaths; ++i) {
    shown.push_back(fmt::format("{} at node {}",
                                checking::FormatTokens(leaves[i]),
                                HeldPrefix(*reference, leaves[i]).cache_node));
  }
  if (leaves.size() > kMaxShownPaths) {
    shown.push_back(fmt::format("... {} paths in all", leaves.size()));
  }
  std::string text = fmt::format(
      "the reference's cache at request {} ({}):\n  holds {} nodes on {} "
      "paths {{{}}}\n",
      request, checking::FormatCacheOptions(input.options),
      reference->node_count(), leaves.size(), fmt::join(shown, ","));
  const std::size_t first = evictions.size() > kMaxShownEvictingRequests
                                ? evictions.size() - kMaxShownEvictingRequests
                                : 0;
  for (std::size_t i = evictions.size(); i-- > first;) {
    text += fmt::format(
        "  request {} {} {}\n", evictions[i].request,
        checking::FormatTokens(input.requests[evictions[i].request]),
        evictions[i].pages.Format(kMaxShownPagesPerRequest));
  }
  if (first > 0) {
    text += fmt::format("  ... {} nodes evicted by requests 0 to {} in all\n",
                        reference->evicted_count(), request - 1);
  } else if (evictions.empty()) {
    text += "  (nothing evicted before it)\n";
  }
  return text;
}

}  // namespace kvprefix::verify
