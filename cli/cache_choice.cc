// The one place a cache flag goes through: see cache_choice.h.
#include "cli/cache_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "engines/registry.h"

namespace kvprefix::cli {
namespace {

// A member of a replay document that a flag replaces (SPEC §9.4): its
// flag's value and option in CacheArguments, and the document's value.
struct ReplaceableMember {
  std::string_view name;  // "match_limit"
  std::string CacheArguments::*value;
  CLI::Option* CacheArguments::*option;
  std::string_view (*of)(const CacheOptions& document);
};

// Every member a flag replaces but the page size and the capacity, which
// no flag's value makes invalid.
constexpr ReplaceableMember kReplaceableMembers[] = {
    {"model", &CacheArguments::model, &CacheArguments::model_option,
     [](const CacheOptions& document) {
       return NameOf(kCacheModels, document.model);
     }},
    {"policy", &CacheArguments::policy, &CacheArguments::policy_option,
     [](const CacheOptions& document) {
       return EvictionPolicyName(document.policy);
     }},
    {"match_limit", &CacheArguments::match_limit,
     &CacheArguments::match_limit_option,
     [](const CacheOptions& document) {
       return NameOf(kMatchLimits, document.match_limit);
     }},
    {"trigger", &CacheArguments::trigger, &CacheArguments::trigger_option,
     [](const CacheOptions& document) {
       return NameOf(kEvictionTriggers, document.trigger);
     }},
};

// The rule of SPEC §9.4 for a document under flags, for every member of
// kReplaceableMembers alike: a member is the flag's value if the flag was
// given, else the document's if the document set it, else the default (of
// the model so chosen, for the match limit); the combination is then
// checked as a whole, so that a member the document set and a flag made
// invalid is refused, not dropped. The page size: --page-size, else the
// document's.
CacheArguments WithDocument(const CacheArguments& flags,
                            const DocumentCache& document) {
  CacheArguments merged = flags;
  if (!Given(flags.page_size_option)) {
    merged.page_size = document.options.page_size;
  }
  for (const ReplaceableMember& member : kReplaceableMembers) {
    if (!Given(flags.*member.option) && document.places.contains(member.name)) {
      merged.*member.value = member.of(document.options);
    }
  }
  return merged;
}

// True if `member` was set: by its flag, or by `document` (if any).
bool MemberSet(const ReplaceableMember& member, const CacheArguments& flags,
               const std::optional<DocumentCache>& document) {
  return Given(flags.*member.option) ||
         (document && document->places.contains(member.name));
}

// The member named `name`.
const ReplaceableMember& MemberNamed(std::string_view name) {
  return *std::find_if(
      std::begin(kReplaceableMembers), std::end(kReplaceableMembers),
      [name](const ReplaceableMember& member) { return member.name == name; });
}

// "--match-limit" for the member "match_limit".
std::string FlagOf(std::string_view member) {
  std::string flag = "--" + std::string(member);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// The usage error of the first SPEC §9.4 rule `options` break, if any,
// naming the member's flag, or for a member `document` set and no flag
// replaced, its place in the file: "doc.json: $.trigger (set by the
// document, not replaced by a flag): a trigger needs model ...".
void CheckModelOptions(const CacheOptions& options, const CacheArguments& flags,
                       const std::optional<DocumentCache>& document) {
  const auto problem = FindModelOptionsProblem(
      options, MemberSet(MemberNamed("trigger"), flags, document));
  if (!problem) return;
  const ReplaceableMember& member = MemberNamed(problem->member);
  if (!Given(flags.*member.option) && document &&
      document->places.contains(member.name)) {
    throw std::invalid_argument(
        fmt::format("{}: {} (set by the document, not replaced by {}): {}",
                    document->path, document->places.find(member.name)->second,
                    FlagOf(member.name), problem->message));
  }
  throw std::invalid_argument(
      fmt::format("{}: {}", FlagOf(member.name), problem->message));
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
      document ? WithDocument(flags, *document) : flags;
  ChosenCache chosen;
  chosen.options = UnboundedCacheOf(merged);
  CheckModelOptions(chosen.options, flags, document);
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
