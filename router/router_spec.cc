#include "router/router_spec.h"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "router/plugin_router.h"
#include "router/policies/consistent_hash.h"
#include "router/policies/dynamo.h"
#include "router/policies/least_loaded.h"
#include "router/policies/llmd.h"
#include "router/policies/power_of_two.h"
#include "router/policies/precise.h"
#include "router/policies/prefix_hash.h"
#include "router/policies/random.h"
#include "router/policies/round_robin.h"
#include "router/policies/sglang_cache_aware.h"
#include "router/policies/vllm_kvaware.h"
#include "router/policies/vllm_prefix.h"

namespace kvprefix {
namespace {

// An integer as §6 writes one (digits without a leading zero; "-0" is 0):
// a decimal without a fraction.
std::optional<Int128> ParseInteger(std::string_view text) {
  if (text == "-0") return 0;
  if (text.find('.') != std::string_view::npos) return std::nullopt;
  const std::optional<Rational> value = Rational::FromDecimal(text);
  if (!value) return std::nullopt;
  return value->numerator();
}

// The parameters of `spec`'s policy, given or defaulted for `unit`.
class Parameters {
 public:
  Parameters(const RouterSpec& spec, TokenUnit unit)
      : spec_(spec), unit_(unit) {
    if (!spec.plugin.empty()) return;  // a plugin takes any
    for (const auto& [name, value] : spec.parameters) {
      const RouterParameter* parameter = FindRouterParameter(name);
      if (parameter == nullptr || !Takes(spec.policy, *parameter)) {
        throw std::invalid_argument(
            "router " + std::string(NameOf(kRouterPolicies, spec.policy)) +
            " takes no parameter " + name);
      }
    }
  }

  template <typename T>
  T Get(std::string_view name) const {
    const auto given = spec_.parameters.find(name);
    const RouterValue value =
        given != spec_.parameters.end() ? given->second : Default(name);
    if constexpr (std::is_same_v<T, RouterValue>) {
      return value;
    } else {
      const T* typed = std::get_if<T>(&value);
      if (typed == nullptr) {
        throw std::invalid_argument("router parameter " + std::string(name) +
                                    ": a value of the wrong kind");
      }
      return *typed;
    }
  }
  std::uint64_t Integer(std::string_view name) const {
    return Get<std::uint64_t>(name);
  }
  Rational Decimal(std::string_view name) const { return Get<Rational>(name); }
  bool NameIs(std::string_view name, std::string_view choice) const {
    return Get<std::string>(name) == choice;
  }

 private:
  RouterValue Default(std::string_view name) const {
    const RouterParameter* found = FindRouterParameter(name);
    if (found == nullptr) {
      throw std::invalid_argument("no router parameter " + std::string(name));
    }
    const RouterParameter& parameter = *found;
    const std::string_view text =
        unit_ == TokenUnit::kBlock && !parameter.block_default.empty()
            ? parameter.block_default
            : parameter.token_default;
    return *ParseRouterValue(parameter, text);
  }

  const RouterSpec& spec_;
  TokenUnit unit_;
};

}  // namespace

const RouterParameter* FindRouterParameter(std::string_view name) {
  for (const RouterParameter& parameter : kRouterParameters) {
    if (parameter.name == name) return &parameter;
  }
  return nullptr;
}

bool InDecimalRange(const RouterParameter& parameter, const Rational& value) {
  switch (parameter.range) {
    case DecimalRange::kAboveZero:
      return value > 0;
    case DecimalRange::kUpToOne:
      return value <= 1;
    default:
      return value >= 0;
  }
}

std::optional<RouterValue> ParseRouterValue(const RouterParameter& parameter,
                                            std::string_view text) {
  switch (parameter.kind) {
    case ParameterKind::kInteger: {
      const auto value = ParseInteger(text);
      if (!value || *value < parameter.min || *value > parameter.max) break;
      return static_cast<std::uint64_t>(*value);
    }
    case ParameterKind::kDecimal: {
      const auto value = Rational::FromDecimal(text);
      if (!value || !InDecimalRange(parameter, *value)) break;
      return *value;
    }
    case ParameterKind::kName:
      for (const std::string_view choice : parameter.choices) {
        if (choice == text) return std::string(text);
      }
      break;
  }
  return std::nullopt;
}

std::string ExpectedRouterValue(const RouterParameter& parameter) {
  switch (parameter.kind) {
    case ParameterKind::kInteger:
      return "an integer from " + std::to_string(parameter.min) + " to " +
             std::to_string(parameter.max);
    case ParameterKind::kDecimal: {
      const char* range =
          parameter.range == DecimalRange::kAboveZero ? " above 0"
          : parameter.range == DecimalRange::kUpToOne ? " from 0 to 1"
                                                      : "";
      return std::string("a decimal") + range +
             " (digits, optionally '.' and digits; no sign or exponent)";
    }
    case ParameterKind::kName:
      break;
  }
  std::string names = "\"";
  names.append(parameter.choices[0]).append("\" or \"");
  return names.append(parameter.choices[1]).append("\"");
}

std::string RouterValueText(const RouterValue& value) {
  if (const auto* integer = std::get_if<std::uint64_t>(&value)) {
    return std::to_string(*integer);
  }
  if (const auto* name = std::get_if<std::string>(&value)) return *name;
  const Rational& decimal = std::get<Rational>(value);
  // The smallest k with 10^k a multiple of the denominator: the digits are
  // numerator · 10^k / denominator, with k of them after the point.
  Int128 scale = 1;
  int places = 0;
  while (scale % decimal.denominator() != 0) {
    if (places == 38) break;
    scale *= 10;
    ++places;
  }
  if (scale % decimal.denominator() != 0 || decimal.numerator() < 0) {
    throw std::invalid_argument("not a decimal of at most 38 places");
  }
  Int128 digits = decimal.numerator() * (scale / decimal.denominator());
  std::string text;
  for (int i = 0; digits != 0 || i <= places; ++i) {
    if (i == places && places > 0) text.insert(text.begin(), '.');
    text.insert(text.begin(), static_cast<char>('0' + digits % 10));
    digits /= 10;
  }
  return text;
}

RouterValue RouterParameterValue(const RouterSpec& spec, std::string_view name,
                                 TokenUnit unit) {
  return Parameters(spec, unit).Get<RouterValue>(name);
}

CacheAwareSettings CacheAwareSettingsFor(const RouterSpec& spec,
                                         TokenUnit unit) {
  const Parameters p(spec, unit);
  return CacheAwareSettings{
      .cache_threshold = p.Decimal("cache_threshold"),
      .balance_abs_threshold = p.Integer("balance_abs_threshold"),
      .balance_rel_threshold = p.Decimal("balance_rel_threshold"),
      .max_tree_size = p.Integer("max_tree_size"),
      .eviction_interval_us = p.Integer("eviction_interval_us"),
      .least_loaded_fallback = p.NameIs("fallback", "least-loaded")};
}

std::string_view RouterName(const RouterSpec& spec) {
  if (!spec.plugin.empty()) return PluginRouterName(spec.plugin);
  return NameOf(kRouterPolicies, spec.policy);
}

std::unique_ptr<Router> MakeRouter(const RouterSpec& spec,
                                   const RouteSetup& setup, TokenUnit unit) {
  const Parameters p(spec, unit);
  if (!spec.plugin.empty()) {
    RouterPluginSetup plugin_setup{.route = setup,
                                   .seed = spec.seed,
                                   .block_tokens = unit == TokenUnit::kBlock};
    for (const auto& [name, value] : spec.parameters) {
      plugin_setup.parameters.emplace(name, RouterValueText(value));
    }
    return MakePluginRouter(spec.plugin, plugin_setup);
  }
  switch (spec.policy) {
    case RouterPolicy::kRoundRobin:
      return std::make_unique<RoundRobinRouter>();
    case RouterPolicy::kRandom:
      return std::make_unique<RandomRouter>(spec.seed);
    case RouterPolicy::kLeastLoaded:
      return std::make_unique<LeastLoadedRouter>();
    case RouterPolicy::kPowerOfTwo:
      return std::make_unique<PowerOfTwoRouter>(spec.seed);
    case RouterPolicy::kConsistentHash:
      return std::make_unique<ConsistentHashRouter>(
          setup.workers, p.Integer("hash_prefix"), p.Integer("ring_points"));
    case RouterPolicy::kPrefixHash:
      return std::make_unique<PrefixHashRouter>(
          setup.workers, p.Integer("hash_prefix"), p.Integer("ring_points"),
          p.Decimal("load_factor"));
    case RouterPolicy::kPrecise:
      return std::make_unique<PreciseRouter>();
    case RouterPolicy::kLlmd:
      return std::make_unique<LlmdRouter>(spec.seed, p.Decimal("prefix_weight"),
                                          p.Decimal("queue_weight"));
    case RouterPolicy::kDynamo:
      return std::make_unique<DynamoRouter>(
          spec.seed, setup,
          DynamoWeights{
              .prefill_load_scale = p.Decimal("prefill_load_scale"),
              .overlap_score_credit = p.Decimal("overlap_score_credit"),
              .decode_active_request_weight =
                  p.Decimal("decode_active_request_weight"),
              .random_ties = p.NameIs("ties", "random")});
    case RouterPolicy::kSglangCacheAware:
      return std::make_unique<SglangCacheAwareRouter>(
          setup.workers, CacheAwareSettingsFor(spec, unit));
    case RouterPolicy::kVllmPrefix:
      return std::make_unique<VllmPrefixRouter>(spec.seed, p.Integer("chunk"),
                                                p.Integer("min_match"));
    case RouterPolicy::kVllmKvaware:
      break;
  }
  return std::make_unique<VllmKvawareRouter>(p.Integer("kv_aware_threshold"));
}

}  // namespace kvprefix
