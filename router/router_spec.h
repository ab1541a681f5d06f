// The routing policies by name (SPEC §11.5) and their parameters (§11.1):
// the one list of both, read by the document reader (io/replay_document.h),
// the command line (cli/routing.h) and the factory below. A new policy is
// an enumerator and an entry of kRouterPolicies, its file under
// router/policies/, its bit in the parameters it takes, and its line in
// MakeRouter.
#ifndef KVPREFIX_ROUTER_ROUTER_SPEC_H_
#define KVPREFIX_ROUTER_ROUTER_SPEC_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "kvprefix/cache.h"
#include "router/policies/sglang_cache_aware.h"
#include "router/rational.h"
#include "router/router.h"

namespace kvprefix {

enum class RouterPolicy : std::uint8_t {
  kRoundRobin,
  kRandom,
  kLeastLoaded,
  kPowerOfTwo,
  kConsistentHash,
  kPrefixHash,
  kPrecise,
  kLlmd,
  kDynamo,
  kSglangCacheAware,
  kVllmPrefix,
  kVllmKvaware,
};

// SPEC §11.5's twelve policies, in its order; round-robin is the default.
inline constexpr std::array<NamedValue<RouterPolicy>, 12> kRouterPolicies = {{
    {RouterPolicy::kRoundRobin, "round-robin", "k mod N"},
    {RouterPolicy::kRandom, "random", "a random worker"},
    {RouterPolicy::kLeastLoaded, "least-loaded",
     "the first with the fewest requests in flight"},
    {RouterPolicy::kPowerOfTwo, "power-of-two",
     "the less loaded of two random workers"},
    {RouterPolicy::kConsistentHash, "consistent-hash",
     "the ring's owner of the prompt's head"},
    {RouterPolicy::kPrefixHash, "prefix-hash",
     "the ring's owner unless overloaded (SGLang prefix_hash)"},
    {RouterPolicy::kPrecise, "precise", "the longest cached prefix"},
    {RouterPolicy::kLlmd, "llmd", "llm-d's prefix and queue scorers"},
    {RouterPolicy::kDynamo, "dynamo", "Dynamo's KV router cost"},
    {RouterPolicy::kSglangCacheAware, "sglang-cache-aware",
     "SGLang's approximate tree"},
    {RouterPolicy::kVllmPrefix, "vllm-prefix",
     "production-stack's prefix-aware hash trie"},
    {RouterPolicy::kVllmKvaware, "vllm-kvaware",
     "production-stack's KV-aware router"},
}};
static_assert(InValueOrder(kRouterPolicies));

// The kinds of parameter value (§11.1).
enum class ParameterKind : std::uint8_t { kInteger, kDecimal, kName };
// A decimal's range: ≥ 0 (every decimal, written unsigned), above 0, or
// from 0 to 1.
enum class DecimalRange : std::uint8_t { kAtLeastZero, kAboveZero, kUpToOne };

// The policies taking a parameter, one bit per RouterPolicy.
constexpr std::uint16_t PolicyBit(RouterPolicy policy) {
  return static_cast<std::uint16_t>(1u << static_cast<unsigned>(policy));
}

// One parameter of §11.5: its member name, kind, range, defaults (as text,
// read as the option's text is) and the policies that take it.
struct RouterParameter {
  std::string_view name;  // "load_factor"; the option is --load-factor
  ParameterKind kind = ParameterKind::kInteger;
  std::uint64_t min = 0;  // integers: min ... max
  std::uint64_t max = 0;
  DecimalRange range = DecimalRange::kAtLeastZero;  // decimals
  std::array<std::string_view, 2> choices = {};     // names: the two
  std::string_view token_default;  // a document's, token mode's
  std::string_view block_default;  // Mooncake block mode's ("": the same)
  std::uint16_t policies = 0;      // PolicyBit of each taking it
  std::string_view help;
};

inline constexpr std::uint64_t kMaxRouterInt = (std::uint64_t{1} << 31) - 1;
inline constexpr std::uint64_t kMaxRouterU64 = ~std::uint64_t{0};

// Every parameter of §11.5, each once, in its order.
inline constexpr std::array<RouterParameter, 18> kRouterParameters = {{
    {"hash_prefix",
     ParameterKind::kInteger,
     0,
     kMaxRouterInt,
     {},
     {},
     "256",
     "1",
     PolicyBit(RouterPolicy::kConsistentHash) |
         PolicyBit(RouterPolicy::kPrefixHash),
     "K: the key is the first K tokens"},
    {"ring_points",
     ParameterKind::kInteger,
     1,
     kMaxRouterInt,
     {},
     {},
     "150",
     "",
     PolicyBit(RouterPolicy::kConsistentHash) |
         PolicyBit(RouterPolicy::kPrefixHash),
     "V: ring points per worker"},
    {"load_factor",
     ParameterKind::kDecimal,
     0,
     0,
     DecimalRange::kAboveZero,
     {},
     "1.25",
     "",
     PolicyBit(RouterPolicy::kPrefixHash),
     "L: a worker is acceptable up to L times the mean load"},
    {"prefix_weight",
     ParameterKind::kDecimal,
     0,
     0,
     {},
     {},
     "2",
     "",
     PolicyBit(RouterPolicy::kLlmd),
     "weight of the prefix score"},
    {"queue_weight",
     ParameterKind::kDecimal,
     0,
     0,
     {},
     {},
     "1",
     "",
     PolicyBit(RouterPolicy::kLlmd),
     "weight of the queue score"},
    {"prefill_load_scale",
     ParameterKind::kDecimal,
     0,
     0,
     {},
     {},
     "1",
     "",
     PolicyBit(RouterPolicy::kDynamo),
     "σ: scale of the prefill pages"},
    {"overlap_score_credit",
     ParameterKind::kDecimal,
     0,
     0,
     {},
     {},
     "1",
     "",
     PolicyBit(RouterPolicy::kDynamo),
     "c: credit per matched page"},
    {"decode_active_request_weight",
     ParameterKind::kDecimal,
     0,
     0,
     {},
     {},
     "0",
     "",
     PolicyBit(RouterPolicy::kDynamo),
     "ρ: cost per request in flight"},
    {"ties",
     ParameterKind::kName,
     0,
     0,
     {},
     {"random", "first"},
     "random",
     "",
     PolicyBit(RouterPolicy::kDynamo),
     "how equal costs are broken"},
    {"cache_threshold",
     ParameterKind::kDecimal,
     0,
     0,
     DecimalRange::kUpToOne,
     {},
     "0.3",
     "",
     PolicyBit(RouterPolicy::kSglangCacheAware),
     "the matched fraction above which the tenant is chosen"},
    {"balance_abs_threshold",
     ParameterKind::kInteger,
     0,
     kMaxRouterU64,
     {},
     {},
     "64",
     "",
     PolicyBit(RouterPolicy::kSglangCacheAware),
     "imbalanced if the loads differ by more"},
    {"balance_rel_threshold",
     ParameterKind::kDecimal,
     0,
     0,
     {},
     {},
     "1.5",
     "",
     PolicyBit(RouterPolicy::kSglangCacheAware),
     "... and the largest is above this times the smallest"},
    {"max_tree_size",
     ParameterKind::kInteger,
     0,
     kMaxRouterU64,
     {},
     {},
     "67108864",
     "",
     PolicyBit(RouterPolicy::kSglangCacheAware),
     "nodes a worker keeps in the tree at an eviction"},
    {"eviction_interval_us",
     ParameterKind::kInteger,
     0,
     kMaxRouterU64,
     {},
     {},
     "120000000",
     "",
     PolicyBit(RouterPolicy::kSglangCacheAware),
     "µs between evictions of the tree (0: never)"},
    {"fallback",
     ParameterKind::kName,
     0,
     0,
     {},
     {"smallest-tree", "least-loaded"},
     "smallest-tree",
     "",
     PolicyBit(RouterPolicy::kSglangCacheAware),
     "the choice when the match is too short"},
    {"chunk",
     ParameterKind::kInteger,
     1,
     kMaxRouterInt,
     {},
     {},
     "32",
     "1",
     PolicyBit(RouterPolicy::kVllmPrefix),
     "C: tokens per trie node"},
    {"min_match",
     ParameterKind::kInteger,
     0,
     kMaxRouterInt,
     {},
     {},
     "0",
     "",
     PolicyBit(RouterPolicy::kVllmPrefix),
     "below this match, the least loaded"},
    {"kv_aware_threshold",
     ParameterKind::kInteger,
     0,
     kMaxRouterInt,
     {},
     {},
     "2000",
     "4",
     PolicyBit(RouterPolicy::kVllmKvaware),
     "T: the least loaded when the best match is below n − T"},
}};

// The largest N (SPEC §11.1: workers 1 to 2^31 − 1).
inline constexpr std::uint64_t kMaxWorkers = kMaxRouterInt;

// A parameter's value: an integer, a decimal or a name.
using RouterValue = std::variant<std::uint64_t, Rational, std::string>;

// The parameter named `name` (a member name, "load_factor"), or null.
// O(parameters). Thread-safe.
const RouterParameter* FindRouterParameter(std::string_view name);

// Whether `policy` takes `parameter`. O(1).
constexpr bool Takes(RouterPolicy policy, const RouterParameter& parameter) {
  return (parameter.policies & PolicyBit(policy)) != 0;
}

// `text` read as `parameter`'s value (§11.1): an integer as §6 writes one
// (digits without a leading zero; "-0" is 0) within the range, a decimal
// (Rational::FromDecimal) within the range, or one of the names; nullopt
// otherwise. O(length). Thread-safe.
std::optional<RouterValue> ParseRouterValue(const RouterParameter& parameter,
                                            std::string_view text);

// Whether the decimal `value` is within `parameter`'s range. O(1).
bool InDecimalRange(const RouterParameter& parameter, const Rational& value);

// What `parameter` takes, for messages: "an integer from 0 to 2147483647",
// "a decimal above 0" (with no sign or exponent), "\"random\" or
// \"first\"". O(1).
std::string ExpectedRouterValue(const RouterParameter& parameter);

// `value` as SPEC §11.1 writes it: an integer's digits, a decimal's
// shortest exact digits (5/4 is "1.25", 3 is "3"; a decimal parameter's
// value always has such digits), a name as it is. Throws
// std::invalid_argument for a rational with no finite decimal expansion or
// a negative one. O(digits).
std::string RouterValueText(const RouterValue& value);

// A document's (or the command line's) router: the policy, the seed of its
// stream and the parameters given (by member name; the others take their
// defaults when the router is made).
struct RouterSpec {
  RouterPolicy policy = RouterPolicy::kRoundRobin;
  std::uint64_t seed = 0;
  std::map<std::string, RouterValue, std::less<>> parameters = {};
  // Not empty: the router is the plugin at this path (`--router
  // plugin:PATH`, router/plugin_router.h); `policy` is then unused and
  // every parameter given is passed to the plugin (RouterValueText).
  std::string plugin = {};

  friend bool operator==(const RouterSpec&, const RouterSpec&) = default;
};

// SPEC §11.1's members: `workers` (N) and `router`.
struct RoutingSpec {
  std::uint64_t workers = 1;
  RouterSpec router;

  friend bool operator==(const RoutingSpec&, const RoutingSpec&) = default;
};

// What a token is (§11.1: the defaults of hash_prefix, chunk and
// kv_aware_threshold): a token of a document or of token mode, or a
// 512-token block of Mooncake block mode.
enum class TokenUnit : std::uint8_t { kToken, kBlock };

// The value of parameter `name` (a member name) for `spec`'s policy: the
// one given, else its default for `unit`. Throws std::invalid_argument for
// a name that is no parameter, or (as MakeRouter) a given parameter the
// policy does not take. O(parameters).
RouterValue RouterParameterValue(const RouterSpec& spec, std::string_view name,
                                 TokenUnit unit);

// The settings MakeRouter gives sglang-cache-aware for `spec` (its
// parameters, or their defaults for `unit`). Throws as MakeRouter.
// O(parameters).
CacheAwareSettings CacheAwareSettingsFor(const RouterSpec& spec,
                                         TokenUnit unit);

// The router's name in answers and reports: the policy's
// (kRouterPolicies), or "plugin:NAME" for a plugin (PluginRouterName,
// loading it, with its errors). Valid as long as the process. O(1) once
// loaded. Thread-safe.
std::string_view RouterName(const RouterSpec& spec);

// The policy `spec` names for `setup` (N workers, page size, pinned unit),
// with its given parameters and the others' defaults for `unit`; a plugin
// (`spec.plugin`) made by MakePluginRouter with every parameter given as
// text (RouterValueText), throwing what it throws. Throws
// std::invalid_argument if `spec` gives a parameter its policy does not
// take or a value of the wrong kind (the readers reject both first),
// std::bad_alloc if the ring does not fit. O(N · ring_points · log) for
// the ring policies, O(1) otherwise. Thread-safe (the router is not).
std::unique_ptr<Router> MakeRouter(const RouterSpec& spec,
                                   const RouteSetup& setup, TokenUnit unit);

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_ROUTER_SPEC_H_
