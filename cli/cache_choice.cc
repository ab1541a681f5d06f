// The one place a cache flag goes through: see cache_choice.h.
#include "cli/cache_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "engines/registry.h"

namespace kvprefix::cli {
namespace {

// "--match-limit" for the member "match_limit" FindModelOptionsProblem names.
std::string OptionOfMember(std::string_view member) {
  std::string option = "--" + std::string(member);
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

// What a usage error about `member` names: its option, or, for a member the
// replay document at path `document` (empty: none) set and no option
// replaced, the member's place in that file.
std::string SourceOfMember(std::string_view member, const CacheArguments& flags,
                           std::string_view document) {
  const CLI::Option* option = member == "policy" ? flags.policy_option
                              : member == "match_limit"
                                  ? flags.match_limit_option
                                  : flags.trigger_option;
  if (!document.empty() && !Given(option)) {
    return fmt::format("{}: $.{} (replace it with {})", document, member,
                       OptionOfMember(member));
  }
  return OptionOfMember(member);
}

// The usage error of the first SPEC §9.4 rule `options` break, if any.
void CheckModelOptions(const CacheOptions& options, const CacheArguments& flags,
                       std::string_view document) {
  if (const auto problem =
          FindModelOptionsProblem(options, Given(flags.trigger_option))) {
    throw std::invalid_argument(
        fmt::format("{}: {}", SourceOfMember(problem->member, flags, document),
                    problem->message));
  }
}

// `flags` with the document's cache standing in for the flags not given:
// its page size, policy and model; its match limit if the model is its
// own; its trigger under sglang.
CacheArguments WithDocument(const CacheArguments& flags,
                            const CacheOptions& document) {
  CacheArguments merged = flags;
  if (!Given(flags.page_size_option)) merged.page_size = document.page_size;
  if (!Given(flags.policy_option)) {
    merged.policy = EvictionPolicyName(document.policy);
  }
  // A model given keeps the document's match limit only if it is the
  // document's model (another takes its own default).
  if (!Given(flags.model_option)) {
    merged.model = NameOf(kCacheModels, document.model);
  }
  const CacheModel model = ParseNamedValue(kCacheModels, merged.model).value();
  if (!Given(flags.match_limit_option) && model == document.model) {
    merged.match_limit = NameOf(kMatchLimits, document.match_limit);
  }
  if (!Given(flags.trigger_option)) {
    merged.trigger = NameOf(kEvictionTriggers, model == CacheModel::kSglang
                                                   ? document.trigger
                                                   : CacheOptions{}.trigger);
  }
  return merged;
}

// The cache of `flags` but its capacity. The flags' checks admit only the
// names the parsers know.
CacheOptions UnboundedCacheOf(const CacheArguments& flags) {
  CacheOptions options{.policy = ParseEvictionPolicy(flags.policy).value(),
                       .page_size = flags.page_size};
  options.model = ParseNamedValue(kCacheModels, flags.model).value();
  options.match_limit =
      flags.match_limit.empty()
          ? DefaultMatchLimit(options.model)
          : ParseNamedValue(kMatchLimits, flags.match_limit).value();
  options.trigger = ParseNamedValue(kEvictionTriggers, flags.trigger).value();
  return options;
}

}  // namespace

ChosenCache ChooseCache(const CacheArguments& flags,
                        std::uint64_t symbol_tokens,
                        const std::optional<DocumentCache>& document) {
  const CacheArguments merged =
      document ? WithDocument(flags, document->options) : flags;
  ChosenCache chosen;
  chosen.options = UnboundedCacheOf(merged);
  CheckModelOptions(chosen.options, flags,
                    document ? document->path : std::string_view());
  chosen.node_bytes = static_cast<UInt128>(merged.kv_bytes_per_token) *
                      symbol_tokens * merged.page_size;
  // Given, even as "": an empty capacity is a mistake, not "unbounded".
  if (Given(flags.capacity_option)) {
    chosen.options.capacity =
        ParseCapacity(flags.capacity, "--capacity", chosen.node_bytes);
  } else if (document) {
    chosen.options.capacity = document->options.capacity;
  }
  chosen.engine = Given(flags.engine_option)
                      ? flags.engine
                      : std::string(ModelEngineName(chosen.options.model));
  return chosen;
}

std::string_view ModelEngineName(CacheModel model) {
  const std::vector<std::string_view> names = EngineNames(model);
  if (std::find(names.begin(), names.end(), DefaultEngineName()) !=
      names.end()) {
    return DefaultEngineName();
  }
  return names.back();
}

std::string CacheSummaryJson(const ChosenCache& cache) {
  const CacheOptions& options = cache.options;
  std::string json = options.bounded()
                         ? fmt::format("\"capacity\":{}", options.capacity)
                         : std::string("\"capacity\":null");
  json += fmt::format(",\"policy\":\"{}\",\"page_size\":{}",
                      EvictionPolicyName(options.policy), options.page_size);
  json += fmt::format(",\"model\":\"{}\",\"match_limit\":\"{}\"",
                      NameOf(kCacheModels, options.model),
                      NameOf(kMatchLimits, options.match_limit));
  if (options.model == CacheModel::kSglang) {
    json += fmt::format(",\"trigger\":\"{}\"",
                        NameOf(kEvictionTriggers, options.trigger));
  }
  if (cache.node_bytes != 0 && options.bounded()) {
    const std::optional<std::uint64_t> bytes =
        CapacityBytes(options.capacity, cache.node_bytes);
    json += bytes ? fmt::format(",\"capacity_bytes\":{}", *bytes)
                  : std::string(",\"capacity_bytes\":null");
  }
  return json;
}

}  // namespace kvprefix::cli
