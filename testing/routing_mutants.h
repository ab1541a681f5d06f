// Routing mutants: routers of SPEC §11.5 each breaking one rule of its
// policy, for tests only. Each is the real policy (router/policies/) built
// with one change, so the bug is the only difference: a subclass hook, a
// setting moved by less than any value it is compared with, or a few lines
// of the policy rewritten with the bug. The property suite
// (tests/property/router_check_properties_test.cc), the routing fuzz target
// (fuzz/routing_fuzzer.cc, KVPREFIX_FUZZ_MUTANT; fuzz/teeth.sh) and `verify
// --router` (through tests/router_plugin/'s exported plugin) must catch
// each one with checking::CompareRouter against RoutingMutantPolicy; the
// baseline (every policy as MakeRouter makes it, each against itself
// through the same path) must pass. Each bug is marked "BUG(<mutant
// name>)" in routing_mutants.cc.
//
// Thread safety: as Router (one caller at a time).
#ifndef KVPREFIX_TESTING_ROUTING_MUTANTS_H_
#define KVPREFIX_TESTING_ROUTING_MUTANTS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "kvprefix/cache.h"
#include "router/router.h"
#include "router/router_spec.h"

namespace kvprefix::test {

// The rule a routing mutant breaks.
enum class RoutingBug : std::uint8_t {
  kNone,  // correct: the baseline (any policy, as MakeRouter makes it)
  // precise: equal matches go to the first worker, not the least loaded.
  kTiesByIndex,
  // sglang-cache-aware: the tenant is chosen when M/n ≥ cache_threshold
  // (SGLang's and §11.5's strict >).
  kThresholdAtLeast,
  // dynamo: prefill_w = σ · raw_w, without − c · m_w.
  kNoOverlapCredit,
  // power-of-two: i1 only if load_i1 < load_i2 (§11.5's ≤).
  kStrictPowerOfTwo,
  // consistent-hash: a key past every point goes to the last point's
  // worker, not the first's (the ring does not wrap).
  kRingWithoutWrap,
  // sglang-cache-aware: step 3 stamps nothing (the tenant's matched path
  // is not refreshed), so eviction takes the wrong leaves.
  kStampsNotRefreshed,
};

inline constexpr std::array<NamedValue<RoutingBug>, 7> kRoutingMutants = {{
    {RoutingBug::kNone, "routing-mutant-baseline", "every policy, correct"},
    {RoutingBug::kTiesByIndex, "routing-mutant-precise-ties-by-index",
     "precise"},
    {RoutingBug::kThresholdAtLeast, "routing-mutant-cache-aware-threshold-ge",
     "sglang-cache-aware"},
    {RoutingBug::kNoOverlapCredit, "routing-mutant-dynamo-no-overlap-credit",
     "dynamo"},
    {RoutingBug::kStrictPowerOfTwo, "routing-mutant-power-of-two-strict",
     "power-of-two"},
    {RoutingBug::kRingWithoutWrap, "routing-mutant-ring-without-wrap",
     "consistent-hash"},
    {RoutingBug::kStampsNotRefreshed,
     "routing-mutant-tree-stamps-not-refreshed", "sglang-cache-aware"},
}};
static_assert(InValueOrder(kRoutingMutants));

// Every routing mutant's name but the baseline's, in RoutingBug order.
std::vector<std::string_view> RoutingMutantNames();

// The bug named `name` (the baseline's too); throws std::invalid_argument
// listing the names for any other.
RoutingBug ParseRoutingMutant(std::string_view name);

// The policy the mutant breaks (its help in kRoutingMutants); the baseline
// is any policy: nullopt. O(1).
std::optional<RouterPolicy> RoutingMutantPolicy(RoutingBug bug);

// The router `spec` names (its policy must be RoutingMutantPolicy(bug), any
// for the baseline) for `setup` and `unit`, carrying `bug`. Throws as
// MakeRouter, std::invalid_argument for a policy the mutant does not
// break.
std::unique_ptr<Router> MakeRoutingMutant(RoutingBug bug,
                                          const RouterSpec& spec,
                                          const RouteSetup& setup,
                                          TokenUnit unit);

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_ROUTING_MUTANTS_H_
