// Checking a router against a policy of SPEC §11.5, decision for decision:
// a routed replay (serve/routed_replay.h) over the reference caches of the
// document's model in which, at every request's arrival, both the router
// under test and the policy are asked on the same views (§11.2); the first
// request they route differently stops the replay and is reported with the
// views both saw. While they agree the request goes where both send it, so
// every decision is judged on the views the policy itself would have made.
// `kvprefix verify --router plugin:PATH --against POLICY`
// (verify/router_run.h), the property suite
// (tests/property/router_check_properties_test.cc) and the routing fuzz target
// (fuzz/routing_fuzzer.cc) use it the same way.
//
// How routing fuzz bytes decode (DecodeRoutingFuzzInput): byte 0's bits 0-1
// give N = 1 + (b & 3), the next byte the router's seed, then one byte per
// parameter the policy takes, in kRouterParameters order, each drawing its
// value as RandomRouterSpec does (draw(k) = byte % k); the rest is a §10
// serving fuzz input (DecodeServeFuzzInput, checking/serving_check.h).
#ifndef KVPREFIX_CHECKING_ROUTING_CHECK_H_
#define KVPREFIX_CHECKING_ROUTING_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvprefix/request.h"
#include "router/router.h"
#include "router/router_spec.h"

namespace kvprefix::checking {

// A SPEC §11.1 routed replay document: a §10 document, N and the router.
struct RoutedInput {
  ServeInput input;
  RoutingSpec routing;

  friend bool operator==(const RoutedInput&, const RoutedInput&) = default;
};

// Makes the router under test for a replay's setup (N, P, pinned unit).
using MakeRouterUnderTest =
    std::function<std::unique_ptr<Router>(const RouteSetup& setup)>;

// The first decision on which the router under test and the policy differ.
struct RouterDisagreement {
  RequestId request = 0;     // its index in the document: decision `request`
  std::size_t chosen = 0;    // the router under test's worker
  std::size_t expected = 0;  // the policy's
  // What both saw: each worker's counts and peek_match of the request.
  std::vector<WorkerView> views = {};
  std::vector<std::uint64_t> peeks = {};
};

// Replays `routed` (its workers: reference caches of input.replay.options)
// with the router `make_router` makes and routed.routing.router's policy
// (MakeRouter, defaults for `unit`) side by side, as the top comment says.
// Returns the first disagreement (a worker not below N counts as one), or
// nullopt when every decision agrees. Throws what the routers and the
// caches throw (a plugin's PluginError), std::invalid_argument if the
// policy is a plugin. O(requests · (N + both routers' costs)) plus the
// caches'. Thread-safe if make_router is.
std::optional<RouterDisagreement> CompareRouter(
    const RoutedInput& routed, const MakeRouterUnderTest& make_router,
    TokenUnit unit = TokenUnit::kToken);

// The report of `disagreement`, lines ending in '\n': "decision 3 (request
// 3 of 5, arrival 7 µs): NAME chose worker 1, least-loaded chose worker
// 0", then one line per worker with its views ("  worker 0: running 1,
// queued 1, pinned 2, unprefilled_tokens 3, cached_pages 4, peek_match 2
// tokens"), then the request's tokens. O(N + n).
std::string DescribeRouterDisagreement(const RoutedInput& routed,
                                       const RouterDisagreement& disagreement,
                                       std::string_view router_name);

// The policy `policy` with parameters drawn for a check: each parameter it
// takes from a few values around its rules' edges (integers min to min +
// 4; decimals 0, 0.25, 0.5, 1, 1.5, 2 within the range; either name),
// left at its default about one time in five, except those in `fixed`
// (kept as given); the seed from draw. `draw(k)` returns a value below k.
// O(parameters).
RouterSpec RandomRouterSpec(
    RouterPolicy policy,
    const std::function<std::uint64_t(std::uint64_t)>& draw,
    const RouterSpec& fixed = {});

// Decodes `bytes` for `policy` as the top comment says (the parameters of
// `fixed` kept); nullopt as DecodeServeFuzzInput. Deterministic.
// O(bytes). Thread-safe.
std::optional<RoutedInput> DecodeRoutingFuzzInput(
    std::span<const std::uint8_t> bytes, RouterPolicy policy,
    const RouterSpec& fixed = {});

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_ROUTING_CHECK_H_
