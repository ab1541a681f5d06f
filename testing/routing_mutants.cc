#include "testing/routing_mutants.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kvprefix/splitmix64.h"
#include "router/policies/consistent_hash.h"
#include "router/policies/sglang_cache_aware.h"
#include "router/stream.h"

namespace kvprefix::test {
namespace {

// BUG(routing-mutant-precise-ties-by-index): the first largest match;
// equal matches never look at the loads.
class TiesByIndex final : public Router {
 public:
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override {
    const std::vector<std::uint64_t> peeks =
        PeekMatches(workers, request.tokens);
    return static_cast<std::size_t>(std::ranges::max_element(peeks) -
                                    peeks.begin());
  }
};

// BUG(routing-mutant-power-of-two-strict): `<` where §11.5 has `≤`.
class StrictPowerOfTwo final : public Router {
 public:
  explicit StrictPowerOfTwo(std::uint64_t seed) : stream_(seed) {}
  std::size_t Choose(const RoutedRequest&,
                     const WorkerViews& workers) override {
    const std::uint64_t n = workers.size();
    if (n == 1) return 0;
    const std::uint64_t first = stream_.Below(n);
    const std::uint64_t second = (first + 1 + stream_.Below(n - 1)) % n;
    return workers.view(first).load() < workers.view(second).load() ? first
                                                                    : second;
  }

 private:
  Stream stream_;
};

// BUG(routing-mutant-ring-without-wrap): a key hashed past the ring's last
// point goes to that point's worker instead of the first point's.
class RingWithoutWrap final : public Router {
 public:
  RingWithoutWrap(std::size_t workers, std::uint64_t hash_prefix,
                  std::uint64_t ring_points)
      : ring_(workers, ring_points), hash_prefix_(hash_prefix) {
    // The last point: the largest (position, worker, point).
    std::tuple<std::uint64_t, std::size_t, std::uint64_t> last = {0, 0, 0};
    for (std::size_t w = 0; w < workers; ++w) {
      for (std::uint64_t v = 0; v < ring_points; ++v) {
        last = std::max(last, {SplitMix64((std::uint64_t{w} << 32) + v), w, v});
      }
    }
    last_position_ = std::get<0>(last);
    last_worker_ = std::get<1>(last);
  }
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews&) override {
    const TokenSpan key = RingKey(request.tokens, hash_prefix_);
    if (KeyHash(key) > last_position_) return last_worker_;
    return ring_.Owner(key);
  }

 private:
  Ring ring_;
  std::uint64_t hash_prefix_;
  std::uint64_t last_position_ = 0;
  std::size_t last_worker_ = 0;
};

// BUG(routing-mutant-tree-stamps-not-refreshed): step 3 stamps nothing.
class StampsNotRefreshed final : public SglangCacheAwareRouter {
 public:
  using SglangCacheAwareRouter::SglangCacheAwareRouter;

 protected:
  void RefreshMatch(Node, std::size_t, std::uint64_t) override {}
};

std::uint64_t Integer(const RouterSpec& spec, std::string_view name,
                      TokenUnit unit) {
  return std::get<std::uint64_t>(RouterParameterValue(spec, name, unit));
}

}  // namespace

std::vector<std::string_view> RoutingMutantNames() {
  std::vector<std::string_view> names;
  for (const auto& mutant : kRoutingMutants) {
    if (mutant.value != RoutingBug::kNone) names.push_back(mutant.name);
  }
  return names;
}

RoutingBug ParseRoutingMutant(std::string_view name) {
  if (const auto bug = ParseNamedValue(kRoutingMutants, name)) return *bug;
  throw std::invalid_argument(
      "unknown routing mutant '" + std::string(name) +
      "' (routing mutants: " + ChoiceNames(kRoutingMutants, '\'') + ")");
}

std::optional<RouterPolicy> RoutingMutantPolicy(RoutingBug bug) {
  if (bug == RoutingBug::kNone) return std::nullopt;
  return ParseNamedValue(kRouterPolicies,
                         kRoutingMutants[static_cast<std::size_t>(bug)].help);
}

std::unique_ptr<Router> MakeRoutingMutant(RoutingBug bug,
                                          const RouterSpec& spec,
                                          const RouteSetup& setup,
                                          TokenUnit unit) {
  if (const auto policy = RoutingMutantPolicy(bug);
      policy && *policy != spec.policy) {
    throw std::invalid_argument(
        std::string(NameOf(kRoutingMutants, bug)) + " breaks " +
        std::string(NameOf(kRouterPolicies, *policy)) + ", not " +
        std::string(NameOf(kRouterPolicies, spec.policy)));
  }
  switch (bug) {
    case RoutingBug::kNone:
      return MakeRouter(spec, setup, unit);
    case RoutingBug::kTiesByIndex:
      return std::make_unique<TiesByIndex>();
    case RoutingBug::kThresholdAtLeast: {
      // BUG(routing-mutant-cache-aware-threshold-ge): M/n > t − δ, with δ
      // below the gap between t = p/q and any M/n ≠ t with n < 2^31 (at
      // least 1/(q n)): exactly M/n ≥ t.
      CacheAwareSettings settings = CacheAwareSettingsFor(spec, unit);
      settings.cache_threshold =
          settings.cache_threshold -
          Rational(1,
                   settings.cache_threshold.denominator() * (Int128{1} << 32));
      return std::make_unique<SglangCacheAwareRouter>(setup.workers, settings);
    }
    case RoutingBug::kNoOverlapCredit: {
      // BUG(routing-mutant-dynamo-no-overlap-credit): c = 0 whatever given.
      RouterSpec without = spec;
      without.parameters["overlap_score_credit"] = Rational(0);
      return MakeRouter(without, setup, unit);
    }
    case RoutingBug::kStrictPowerOfTwo:
      return std::make_unique<StrictPowerOfTwo>(spec.seed);
    case RoutingBug::kRingWithoutWrap:
      return std::make_unique<RingWithoutWrap>(
          setup.workers, Integer(spec, "hash_prefix", unit),
          Integer(spec, "ring_points", unit));
    case RoutingBug::kStampsNotRefreshed:
      return std::make_unique<StampsNotRefreshed>(
          setup.workers, CacheAwareSettingsFor(spec, unit));
  }
  throw std::invalid_argument("unknown routing bug");
}

}  // namespace kvprefix::test
