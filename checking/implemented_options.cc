// The options a cache implements: see implemented_options.h.
#include "checking/implemented_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>

#include "checking/recipe.h"

namespace kvprefix::checking {
namespace {

// The items of `values`, each split at its commas, in order. Throws
// std::invalid_argument naming `name` and the item for an empty one.
std::vector<std::string_view> Items(const std::vector<std::string>& values,
                                    std::string_view name) {
  std::vector<std::string_view> items;
  for (std::string_view value : values) {
    for (;;) {
      const std::size_t comma = value.find(',');
      const std::string_view item = value.substr(0, comma);
      if (item.empty()) {
        throw std::invalid_argument(fmt::format(
            "{}: item {} is empty (a comma-separated list, e.g. {})", name,
            items.size() + 1, name == "--page-sizes" ? "1,2" : "lru,fifo"));
      }
      items.push_back(item);
      if (comma == std::string_view::npos) break;
      value.remove_prefix(comma + 1);
    }
  }
  return items;
}

// `item` as an integer from `low` to `high`, else std::invalid_argument.
std::uint64_t Integer(std::string_view item, std::uint64_t low,
                      std::uint64_t high, std::string_view name,
                      std::string_view what) {
  std::uint64_t value = 0;
  const auto [end, error] =
      std::from_chars(item.data(), item.data() + item.size(), value);
  if (error != std::errc() || end != item.data() + item.size() || value < low ||
      value > high) {
    throw std::invalid_argument(
        fmt::format("{}: '{}' is not {} (an integer from {} to {})", name, item,
                    what, low, high));
  }
  return value;
}

template <typename T>
void AddOnce(std::vector<T>& list, T value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(value);
  }
}

// The values named by the items of `values` (option `name`), each once, in
// order, read by parse(item) (nullopt: not one of `choices`, an error).
template <typename T, typename Parse>
std::vector<T> ParseNames(const std::vector<std::string>& values,
                          std::string_view name, std::string_view what,
                          Parse parse, const std::string& choices) {
  std::vector<T> list;
  for (std::string_view item : Items(values, name)) {
    const std::optional<T> value = parse(item);
    if (!value) {
      throw std::invalid_argument(fmt::format(
          "{}: unknown {} '{}' (expected {})", name, what, item, choices));
    }
    AddOnce(list, *value);
  }
  return list;
}

template <typename T>
bool Lists(const std::vector<T>& list, T value) {
  return list.empty() ||
         std::find(list.begin(), list.end(), value) != list.end();
}

// True if the model takes the policy and the match limit (SPEC §9.4).
bool Takes(CacheModel model, EvictionPolicy policy, MatchLimit limit) {
  return !FindModelOptionsProblem(
      CacheOptions{.policy = policy, .model = model, .match_limit = limit},
      false);
}
bool Takes(CacheModel model, EvictionPolicy policy) {
  return Takes(model, policy, DefaultMatchLimit(model));
}
bool Takes(CacheModel model, MatchLimit limit) {
  return Takes(model, EvictionPolicy::kLru, limit);
}

// The values of `entries` (kEvictionPolicies, kMatchLimits) that `listed`
// lists (all when it is empty) and `model` takes, in the entries' order;
// value(entry) is an entry's value.
template <typename T, typename Entries, typename Value>
std::vector<T> TakenValues(const std::vector<T>& listed, const Entries& entries,
                           CacheModel model, Value value) {
  std::vector<T> taken;
  for (const auto& entry : entries) {
    if (Lists(listed, value(entry)) && Takes(model, value(entry))) {
      taken.push_back(value(entry));
    }
  }
  return taken;
}

// The names of `values`, given by `name`, joined by `separator`. A loop
// over the vector, not a transform view: clang 14 (the fuzz build) rejects
// libstdc++ 12's views.
template <typename T, typename Name>
std::string JoinNames(const std::vector<T>& values, Name name,
                      std::string_view separator) {
  std::string joined;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) joined += separator;
    joined += name(values[i]);
  }
  return joined;
}

// The policies of `implemented` (all when none is listed) that `model`
// takes.
std::vector<EvictionPolicy> PoliciesFor(const ImplementedOptions& implemented,
                                        CacheModel model) {
  return TakenValues(
      implemented.policies, kEvictionPolicies, model,
      [](const EvictionPolicyEntry& entry) { return entry.policy; });
}

// The match limits of `implemented` (all when none is listed) that `model`
// takes.
std::vector<MatchLimit> MatchLimitsFor(const ImplementedOptions& implemented,
                                       CacheModel model) {
  return TakenValues(
      implemented.match_limits, kMatchLimits, model,
      [](const NamedValue<MatchLimit>& entry) { return entry.value; });
}

// True if `model` can run with a listed policy and match limit.
bool CanRun(const ImplementedOptions& implemented, CacheModel model) {
  return !PoliciesFor(implemented, model).empty() &&
         !MatchLimitsFor(implemented, model).empty();
}

bool CapacityListed(const ImplementedCapacities& capacities,
                    std::uint64_t capacity) {
  if (capacities.empty()) return true;
  if (capacity == kUnbounded) return capacities.unbounded;
  return capacities.any_bounded ||
         std::find(capacities.values.begin(), capacities.values.end(),
                   capacity) != capacities.values.end();
}

// Picks one of `count` choices from `bits`, a different part of them for
// each `salt`, so that the choices of one input vary independently.
std::size_t Pick(std::uint64_t bits, int salt, std::size_t count) {
  const std::uint64_t mixed =
      (bits ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(salt + 1))) *
      0xBF58476D1CE4E5B9ull;
  return static_cast<std::size_t>((mixed >> 32) % count);
}

}  // namespace

ImplementedOptions ParseImplementedOptions(
    const ImplementedOptionValues& values,
    const ImplementedOptionNames& names) {
  ImplementedOptions implemented;
  implemented.models = ParseNames<CacheModel>(
      values.models, names.models, "model",
      [](std::string_view item) { return ParseNamedValue(kCacheModels, item); },
      ChoiceNames(kCacheModels, '\''));
  implemented.match_limits = ParseNames<MatchLimit>(
      values.match_limits, names.match_limits, "match limit",
      [](std::string_view item) { return ParseNamedValue(kMatchLimits, item); },
      ChoiceNames(kMatchLimits, '\''));
  implemented.policies = ParseNames<EvictionPolicy>(
      values.policies, names.policies, "policy",
      [](std::string_view item) { return ParseEvictionPolicy(item); },
      EvictionPolicyChoices('\''));
  for (std::string_view item : Items(values.page_sizes, names.page_sizes)) {
    AddOnce(implemented.page_sizes,
            Integer(item, 1, kMaxPageSize, names.page_sizes, "a page size"));
  }
  ImplementedCapacities& capacities = implemented.capacities;
  for (std::string_view item : Items(values.capacities, names.capacities)) {
    if (item == "unbounded") {
      capacities.unbounded = true;
    } else if (item == "bounded") {
      capacities.any_bounded = true;
    } else {
      AddOnce(capacities.values,
              Integer(item, 0, kUnbounded - 1, names.capacities,
                      "unbounded, bounded or a capacity"));
    }
  }
  // A model listed by name must run; of all models (none listed), those
  // that cannot are left out (spec takes every policy and match limit).
  for (CacheModel model : implemented.models) {
    if (CanRun(implemented, model)) continue;
    const auto& entry = kCacheModels[static_cast<std::size_t>(model)];
    const bool policy = PoliciesFor(implemented, entry.value).empty();
    const auto takes = [&](const ImplementedOptions& all) {
      return policy ? fmt::format("the policies {}",
                                  JoinNames(PoliciesFor(all, entry.value),
                                            EvictionPolicyName, ", "))
                    : fmt::format("the match limits {}",
                                  JoinNames(
                                      MatchLimitsFor(all, entry.value),
                                      [](MatchLimit limit) {
                                        return NameOf(kMatchLimits, limit);
                                      },
                                      ", "));
    };
    throw std::invalid_argument(fmt::format(
        "{}: model \"{}\" takes {} only (SPEC §9.4), which {} leaves out",
        names.models, entry.name, takes(ImplementedOptions{}),
        policy ? names.policies : names.match_limits));
  }
  return implemented;
}

std::string ImplementedOptionsFlags(const ImplementedOptions& implemented) {
  std::vector<std::string> flags;
  if (!implemented.models.empty()) {
    flags.push_back(fmt::format(
        "--models {}",
        JoinNames(
            implemented.models,
            [](CacheModel m) { return NameOf(kCacheModels, m); }, ",")));
  }
  if (!implemented.match_limits.empty()) {
    flags.push_back(fmt::format(
        "--match-limits {}",
        JoinNames(
            implemented.match_limits,
            [](MatchLimit limit) { return NameOf(kMatchLimits, limit); },
            ",")));
  }
  if (!implemented.policies.empty()) {
    flags.push_back(
        fmt::format("--policies {}",
                    JoinNames(implemented.policies, EvictionPolicyName, ",")));
  }
  if (!implemented.page_sizes.empty()) {
    flags.push_back(
        fmt::format("--page-sizes {}", fmt::join(implemented.page_sizes, ",")));
  }
  const ImplementedCapacities& capacities = implemented.capacities;
  if (!capacities.empty()) {
    std::vector<std::string> items;
    if (capacities.unbounded) items.emplace_back("unbounded");
    if (capacities.any_bounded) items.emplace_back("bounded");
    for (std::uint64_t value : capacities.values) {
      items.push_back(std::to_string(value));
    }
    flags.push_back(fmt::format("--capacities {}", fmt::join(items, ",")));
  }
  return fmt::format("{}", fmt::join(flags, " "));
}

bool Implements(const ImplementedOptions& implemented,
                const CacheOptions& options) {
  return Lists(implemented.models, options.model) &&
         Lists(implemented.match_limits, options.match_limit) &&
         Lists(implemented.policies, options.policy) &&
         Lists(implemented.page_sizes, options.page_size) &&
         CapacityListed(implemented.capacities, options.capacity);
}

void RestrictOptions(const ImplementedOptions& implemented, std::uint64_t bits,
                     const SequenceList& requests, CacheOptions& options) {
  if (!Lists(implemented.models, options.model) ||
      !CanRun(implemented, options.model)) {
    std::vector<CacheModel> models;
    for (const auto& entry : kCacheModels) {
      if (Lists(implemented.models, entry.value) &&
          CanRun(implemented, entry.value)) {
        models.push_back(entry.value);
      }
    }
    options.model = models[Pick(bits, 0, models.size())];
    options.trigger = EvictionTrigger::kAfterInsert;
  }
  if (!Lists(implemented.match_limits, options.match_limit) ||
      !Takes(options.model, options.match_limit)) {
    const std::vector<MatchLimit> limits =
        MatchLimitsFor(implemented, options.model);
    options.match_limit = limits[Pick(bits, 5, limits.size())];
  }
  if (!Lists(implemented.policies, options.policy) ||
      !Takes(options.model, options.policy)) {
    const std::vector<EvictionPolicy> policies =
        PoliciesFor(implemented, options.model);
    options.policy = policies[Pick(bits, 1, policies.size())];
  }
  if (!Lists(implemented.page_sizes, options.page_size)) {
    const std::uint64_t page_size =
        implemented.page_sizes[Pick(bits, 2, implemented.page_sizes.size())];
    if (options.bounded()) {
      const std::uint64_t before =
          DistinctPrefixes(requests, options.page_size);
      const std::uint64_t after = DistinctPrefixes(requests, page_size);
      if (before > 0) options.capacity = options.capacity * after / before;
    }
    options.page_size = page_size;
  }
  const ImplementedCapacities& capacities = implemented.capacities;
  if (CapacityListed(capacities, options.capacity)) return;
  // The choices: each listed value, unbounded, and a drawn bounded one.
  const std::size_t count = capacities.values.size() +
                            (capacities.unbounded ? 1 : 0) +
                            (capacities.any_bounded ? 1 : 0);
  const std::size_t choice = Pick(bits, 3, count);
  if (choice < capacities.values.size()) {
    options.capacity = capacities.values[choice];
  } else if (capacities.unbounded && choice == capacities.values.size()) {
    options.capacity = kUnbounded;
  } else {
    const Range tight = CapacityPercent(CapacityBand::kTight);
    options.capacity =
        CapacityOf(DistinctPrefixes(requests, options.page_size),
                   tight.low + Pick(bits, 4, tight.high - tight.low));
  }
}

}  // namespace kvprefix::checking
