#include "router/router_spec.h"

#include <stdexcept>
#include <string>

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
    const T* typed = std::get_if<T>(&value);
    if (typed == nullptr) {
      throw std::invalid_argument("router parameter " + std::string(name) +
                                  ": a value of the wrong kind");
    }
    return *typed;
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
    const RouterParameter& parameter = *FindRouterParameter(name);
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

std::unique_ptr<Router> MakeRouter(const RouterSpec& spec,
                                   const RouteSetup& setup, TokenUnit unit) {
  const Parameters p(spec, unit);
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
          setup.workers,
          CacheAwareSettings{
              .cache_threshold = p.Decimal("cache_threshold"),
              .balance_abs_threshold = p.Integer("balance_abs_threshold"),
              .balance_rel_threshold = p.Decimal("balance_rel_threshold"),
              .max_tree_size = p.Integer("max_tree_size"),
              .eviction_interval_us = p.Integer("eviction_interval_us"),
              .least_loaded_fallback = p.NameIs("fallback", "least-loaded")});
    case RouterPolicy::kVllmPrefix:
      return std::make_unique<VllmPrefixRouter>(spec.seed, p.Integer("chunk"),
                                                p.Integer("min_match"));
    case RouterPolicy::kVllmKvaware:
      break;
  }
  return std::make_unique<VllmKvawareRouter>(p.Integer("kv_aware_threshold"));
}

}  // namespace kvprefix
