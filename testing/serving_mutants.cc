#include "testing/serving_mutants.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "checking/serving_check.h"
#include "engines/registry.h"

namespace kvprefix::test {
namespace {

constexpr ServingBug kBugs[] = {ServingBug::kNone, ServingBug::kSpecIgnoresPins,
                                ServingBug::kSglangInsertsAtFinish,
                                ServingBug::kSpecCachesAtStart,
                                ServingBug::kRefusalKeepsPin};

// The ID a mutant gives the extra request it runs for request `id`: none
// of a replay's (those count from 0).
constexpr RequestId Shadow(RequestId id) { return id | (RequestId{1} << 63); }

// Passes every call on to the reference's lifecycle but where the bug says.
class ServingMutant final : public checking::ServingCacheDecorator {
 public:
  ServingMutant(ServingBug bug, const CacheOptions& options)
      : ServingCacheDecorator(MakeServingCache("reference", options)),
        bug_(bug) {}

  std::string_view name() const override { return ServingMutantName(bug_); }

  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override {
    if (bug_ == ServingBug::kSpecIgnoresPins) {
      // BUG(serving-mutant-spec-ignores-pins): no pin; Finish matches,
      // inserts and evicts at once.
      return {AttemptOutcome::kStart, cache().PeekMatch(prompt)};
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
    cache().Finish(id, stored);
  }

 private:
  ServingBug bug_;
  std::map<RequestId, std::vector<Token>> prompts_;
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
  }
  return options;
}

std::unique_ptr<ServingCache> MakeServingMutant(ServingBug bug,
                                                const CacheOptions& options) {
  return std::make_unique<ServingMutant>(bug, options);
}

}  // namespace kvprefix::test
