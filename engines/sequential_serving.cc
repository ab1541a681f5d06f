#include "engines/sequential_serving.h"

namespace kvprefix {

SequentialServingCache::SequentialServingCache(
    std::unique_ptr<PrefixIndex> index)
    : index_(std::move(index)),
      evicted_tokens_(std::make_shared<std::uint64_t>(0)) {
  index_->SetEvictionListener([evicted = evicted_tokens_](TokenSpan tokens) {
    *evicted += tokens.size();
  });
}

Attempt SequentialServingCache::Admit(RequestId, TokenSpan prompt,
                                      std::uint64_t) {
  const CacheOptions& options = index_->options();
  const std::uint64_t page = options.page_size;
  const std::uint64_t pages = (prompt.size() + page - 1) / page;
  // §10.4: "A request never fits, and is refused, exactly when it cannot
  // fit with nothing else running: vllm N > C; sglang on-allocate L > C·P."
  bool refused = false;
  switch (options.model) {
    case CacheModel::kSpec:
      break;
    case CacheModel::kVllm:
      refused = pages > options.capacity;
      break;
    case CacheModel::kSglang:  // ceil(n / P) > C exactly when n > C·P
      refused = options.trigger == EvictionTrigger::kOnAllocate &&
                pages > options.capacity;
      break;
  }
  const Match match = index_->Access(prompt);
  if (refused) return Attempt{.outcome = AttemptOutcome::kRefuse, .match = {}};
  switch (options.model) {
    case CacheModel::kSpec:
      pinned_ = match.matched_length / page;
      break;
    case CacheModel::kVllm:
      pinned_ = pages;
      break;
    case CacheModel::kSglang:
      pinned_ = options.trigger == EvictionTrigger::kOnAllocate
                    ? prompt.size()
                    : match.matched_length;
      break;
  }
  return Attempt{.outcome = AttemptOutcome::kStart, .match = match};
}

Match SequentialServingCache::PeekMatch(TokenSpan request) const {
  const CacheOptions& options = index_->options();
  if (options.model == CacheModel::kVllm) return index_->MatchPrefix(request);
  return index_->MatchPrefix(request.first(MatchLimitTokens(
      options.match_limit, request.size(), options.page_size)));
}

std::uint64_t SequentialServingCache::cached_pages() const {
  return index_->node_count();
}

std::uint64_t SequentialServingCache::evicted_pages() const {
  if (index_->options().model != CacheModel::kSglang) {
    return index_->evicted_count();
  }
  return *evicted_tokens_ / index_->options().page_size;
}

}  // namespace kvprefix
