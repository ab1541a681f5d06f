#include "testing/serving_mutants.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "checking/serving_check.h"
#include "engines/registry.h"
#include "kvprefix/page_events.h"
#include "serve/serving_loop.h"
#include "serve/serving_rules.h"

namespace kvprefix::test {
namespace {

constexpr ServingBug kBugs[] = {ServingBug::kNone,
                                ServingBug::kSpecIgnoresPins,
                                ServingBug::kSglangInsertsAtFinish,
                                ServingBug::kSpecCachesAtStart,
                                ServingBug::kRefusalKeepsPin,
                                ServingBug::kVllmCachesAtFinish,
                                ServingBug::kSkipsWaitingHead,
                                ServingBug::kArrivalsBeforeFinishes};

// BUG(serving-mutant-skips-waiting-head): the start loop goes past a
// waiting request.
struct SkipsWaitingHeadRules : Section10Rules {
  static constexpr bool kWaitingHeadBlocks = false;
};
// BUG(serving-mutant-arrivals-before-finishes): an instant's arrivals are
// attempted before its finishes.
struct ArrivalsBeforeFinishesRules : Section10Rules {
  static constexpr bool kEventsBeforeArrivals = false;
};

// The ID a mutant gives the extra request it runs for request `id`: none
// of a replay's (those count from 0).
constexpr RequestId Shadow(RequestId id) { return id | (RequestId{1} << 63); }

// Passes every call on to the reference's lifecycle but where the bug says.
class ServingMutant final : public checking::ServingCacheDecorator,
                            private PageEventListener {
 public:
  ServingMutant(ServingBug bug, const CacheOptions& options)
      : ServingCacheDecorator(MakeServingCache("reference", options)),
        bug_(bug) {
    if (bug_ == ServingBug::kVllmCachesAtFinish) {
      cache().SetPageEventListener(this);
    }
  }

  std::string_view name() const override { return ServingMutantName(bug_); }
  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override {
    if (bug_ == ServingBug::kSpecIgnoresPins) {
      // BUG(serving-mutant-spec-ignores-pins): no pin; Finish matches,
      // inserts and evicts at once.
      return {AttemptOutcome::kStart, cache().PeekMatch(prompt)};
    }
    if (bug_ == ServingBug::kVllmCachesAtFinish) {
      return AdmitUncached(id, prompt, stored_length);
    }
    const Attempt attempt = cache().Admit(id, prompt, stored_length);
    if (bug_ == ServingBug::kSpecCachesAtStart &&
        attempt.outcome == AttemptOutcome::kStart) {
      // BUG(serving-mutant-spec-caches-at-start): the prompt is inserted
      // (touched, evicted to C) at the attempt.
      cache().Admit(Shadow(id), prompt, prompt.size());
      cache().Finish(Shadow(id), prompt);
    }
    if (bug_ == ServingBug::kRefusalKeepsPin &&
        attempt.outcome == AttemptOutcome::kRefuse) {
      // BUG(serving-mutant-refusal-keeps-pin): the refused request's first
      // page stays admitted for ever.
      const TokenSpan first = prompt.first(
          std::min<std::size_t>(prompt.size(), cache().options().page_size));
      cache().Admit(Shadow(id), first, first.size());
    }
    return attempt;
  }

  void PrefillEnd(RequestId id, TokenSpan prompt) override {
    if (bug_ == ServingBug::kSglangInsertsAtFinish) {
      // BUG(serving-mutant-sglang-inserts-at-finish): nothing now.
      prompts_[id].assign(prompt.begin(), prompt.end());
      return;
    }
    cache().PrefillEnd(id, prompt);
  }

  void Finish(RequestId id, TokenSpan stored) override {
    if (bug_ == ServingBug::kSpecIgnoresPins) {
      cache().Admit(Shadow(id), stored, stored.size());
      cache().Finish(Shadow(id), stored);
      return;
    }
    if (bug_ == ServingBug::kSglangInsertsAtFinish) {
      const auto prompt = prompts_.extract(id);
      cache().PrefillEnd(id, prompt.mapped());
    }
    if (bug_ == ServingBug::kVllmCachesAtFinish) {
      FinishUncached(id, stored);
      return;
    }
    cache().Finish(id, stored);
  }

 private:
  // BUG(serving-mutant-vllm-caches-at-finish): a request's match stops at
  // the first page held only by blocks that running requests allocated (as
  // if those held no chain until their finish); the pages past it are
  // admitted as tokens nobody has (negative), so that it allocates blocks
  // of its own for them.
  Attempt AdmitUncached(RequestId id, TokenSpan prompt,
                        std::uint64_t stored_length) {
    const std::size_t page = cache().options().page_size;
    const std::size_t matched = cache().PeekMatch(prompt).matched_length;
    std::size_t visible = 0;
    while (visible < matched && HeldByFinished(prompt.first(visible + page))) {
      visible += page;
    }
    std::vector<Token> admitted(prompt.begin(), prompt.end());
    for (std::size_t i = visible; visible < matched && i < prompt.size(); ++i) {
      admitted[i] = -1 - static_cast<Token>(hidden_tokens_++ % (1U << 30));
    }
    admitting_ = id;
    const Attempt attempt = cache().Admit(id, admitted, stored_length);
    admitting_.reset();
    if (attempt.outcome == AttemptOutcome::kStart) {
      running_.insert(id);
      prompts_[id] = std::move(admitted);
    }
    return attempt;
  }
  void FinishUncached(RequestId id, TokenSpan stored) {
    running_.erase(id);
    std::vector<Token> admitted = prompts_.extract(id).mapped();
    admitted.insert(admitted.end(), stored.begin() + admitted.size(),
                    stored.end());
    cache().Finish(id, admitted);
  }
  // True if a block that no running request allocated holds `prefix`.
  bool HeldByFinished(TokenSpan prefix) const {
    return std::ranges::any_of(pages_, [&](const auto& held) {
      return !running_.contains(held.second.owner) &&
             std::ranges::equal(held.second.prefix, prefix);
    });
  }
  // The reference's pages: each block's whole prefix and the request whose
  // attempt made it (kNoOwner: a finish's).
  std::uint64_t Stored(std::uint64_t parent, TokenSpan page) override {
    Page held{.prefix = {}, .owner = admitting_.value_or(kNoOwner)};
    if (parent != kRoot) held.prefix = pages_.at(parent).prefix;
    held.prefix.insert(held.prefix.end(), page.begin(), page.end());
    pages_.emplace(++last_handle_, std::move(held));
    return last_handle_;
  }
  void Removed(std::uint64_t handle) override { pages_.erase(handle); }

  static constexpr RequestId kNoOwner = ~RequestId{0};
  struct Page {
    std::vector<Token> prefix;
    RequestId owner;
  };
  std::map<std::uint64_t, Page> pages_;
  std::uint64_t last_handle_ = kRoot;
  std::optional<RequestId> admitting_;
  std::set<RequestId> running_;

  ServingBug bug_;
  // A request's prompt as its PrefillEnd or Admit left it for its finish.
  std::map<RequestId, std::vector<Token>> prompts_;
  std::uint32_t hidden_tokens_ = 0;
};

}  // namespace

std::string_view ServingMutantName(ServingBug bug) {
  switch (bug) {
    case ServingBug::kNone:
      return "serving-mutant-baseline";
    case ServingBug::kSpecIgnoresPins:
      return "serving-mutant-spec-ignores-pins";
    case ServingBug::kSglangInsertsAtFinish:
      return "serving-mutant-sglang-inserts-at-finish";
    case ServingBug::kSpecCachesAtStart:
      return "serving-mutant-spec-caches-at-start";
    case ServingBug::kRefusalKeepsPin:
      return "serving-mutant-refusal-keeps-pin";
    case ServingBug::kVllmCachesAtFinish:
      return "serving-mutant-vllm-caches-at-finish";
    case ServingBug::kSkipsWaitingHead:
      return "serving-mutant-skips-waiting-head";
    case ServingBug::kArrivalsBeforeFinishes:
      return "serving-mutant-arrivals-before-finishes";
  }
  return "";
}

std::vector<std::string_view> ServingMutantNames() {
  std::vector<std::string_view> names;
  for (const ServingBug bug : kBugs) {
    if (bug != ServingBug::kNone) names.push_back(ServingMutantName(bug));
  }
  return names;
}

ServingBug ParseServingMutant(std::string_view name) {
  std::string names;
  for (const ServingBug bug : kBugs) {
    if (ServingMutantName(bug) == name) return bug;
    names += names.empty() ? "" : ", ";
    names += ServingMutantName(bug);
  }
  throw std::invalid_argument("unknown serving mutant '" + std::string(name) +
                              "' (serving mutants: " + names + ")");
}

CacheOptions ServingMutantOptions(ServingBug bug, CacheOptions options) {
  switch (bug) {
    case ServingBug::kNone:
      return options;
    case ServingBug::kSpecIgnoresPins:
    case ServingBug::kSpecCachesAtStart:
      if (options.model == CacheModel::kVllm) {
        options.match_limit = MatchLimit::kAll;
      }
      options.model = CacheModel::kSpec;
      options.trigger = EvictionTrigger::kAfterInsert;
      return options;
    case ServingBug::kSglangInsertsAtFinish:
    case ServingBug::kRefusalKeepsPin:
      if (options.policy != EvictionPolicy::kFifo) {
        options.policy = EvictionPolicy::kLru;
      }
      if (options.model == CacheModel::kVllm) {
        options.match_limit = MatchLimit::kAll;
      }
      options.model = CacheModel::kSglang;
      options.trigger = EvictionTrigger::kOnAllocate;
      return options;
    case ServingBug::kArrivalsBeforeFinishes:
      return options;
    case ServingBug::kVllmCachesAtFinish:
    case ServingBug::kSkipsWaitingHead:
      options.model = CacheModel::kVllm;
      options.policy = EvictionPolicy::kLru;
      options.match_limit = MatchLimit::kAllButLast;
      options.trigger = EvictionTrigger::kAfterInsert;
      return options;
  }
  return options;
}

std::unique_ptr<ServingCache> MakeServingMutant(ServingBug bug,
                                                const CacheOptions& options) {
  return std::make_unique<ServingMutant>(bug, options);
}

checking::ServeReplayer ServingMutantReplay(ServingBug bug) {
  switch (bug) {
    case ServingBug::kSkipsWaitingHead:
      return [](const ServeInput& input, ServingCache& cache) {
        return ServeReplayUnder<SkipsWaitingHeadRules>(input, cache);
      };
    case ServingBug::kArrivalsBeforeFinishes:
      return [](const ServeInput& input, ServingCache& cache) {
        return ServeReplayUnder<ArrivalsBeforeFinishesRules>(input, cache);
      };
    default:
      return nullptr;
  }
}

}  // namespace kvprefix::test
