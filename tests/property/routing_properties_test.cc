// SPEC §11.9's properties of the routing replay, on random §10 documents
// (testing::GenServeInput) routed by any policy of §11.5 with its defaults
// and a random seed, over 1 to 5 workers of the reference model:
//  1. one worker is §10's replay;
//  2. the same document and seed give the same bytes;
//  3. round-robin's counts, ⌈(R − w)/N⌉;
//  4. consistent-hash's stickiness: the same key, the same worker;
//  5. each worker's requests and totals are §10's replay of its requests;
//  6. with instant finishes, strictly increasing arrivals and unbounded
//     caches, precise, dynamo (both tie rules) and llmd keep the one-worker
//     matched tokens at every N.
// §11.9's seventh (vllm-prefix's candidate set) reads the policy's own
// trie, and is left to router_test's cases and the differential checks.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engines/registry.h"
#include "io/serve_answer.h"
#include "router/router_spec.h"
#include "serve/routed_replay.h"
#include "serve/serving_replay.h"
#include "testing/generators.h"

namespace kvprefix {
namespace {

using test::GenServeInput;

rc::Gen<RouterPolicy> GenPolicy() {
  std::vector<RouterPolicy> policies;
  for (const auto& entry : kRouterPolicies) policies.push_back(entry.value);
  return rc::gen::elementOf(policies);
}

// N workers (`fewest` to 5) routed by `policy` with its defaults and a
// random seed.
rc::Gen<RoutingSpec> GenRouting(RouterPolicy policy, std::uint64_t fewest = 1) {
  return rc::gen::apply(
      [policy](std::uint64_t workers, std::uint64_t seed) {
        return RoutingSpec{workers, RouterSpec{policy, seed, {}}};
      },
      rc::gen::inRange<std::uint64_t>(fewest, 6),
      rc::gen::arbitrary<std::uint64_t>());
}

RoutedAnswer Route(const ServeInput& input, const RoutingSpec& routing) {
  const CacheOptions options = input.replay.options;
  return RoutedReplay(
      input, routing, [&] { return MakeServingCache("reference", options); },
      TokenUnit::kToken);
}

ServeAnswer Serve(const ServeInput& input) {
  const auto cache = MakeServingCache("reference", input.replay.options);
  return ServeReplay(input, *cache);
}

// The document cut to the requests of `kept` (their namespaces, arrivals
// and output lengths with them), in order.
ServeInput Cut(const ServeInput& input, const std::vector<std::size_t>& kept) {
  ServeInput cut = input;
  cut.replay.requests = SequenceList();
  cut.replay.namespaces.clear();
  cut.arrivals_us.clear();
  cut.output_lengths.clear();
  for (const std::size_t i : kept) {
    cut.replay.requests.Append(input.replay.requests[i]);
    if (!input.replay.namespaces.empty()) {
      cut.replay.namespaces.push_back(input.replay.namespaces[i]);
    }
    if (!input.arrivals_us.empty())
      cut.arrivals_us.push_back(input.arrivals_us[i]);
    if (!input.output_lengths.empty()) {
      cut.output_lengths.push_back(input.output_lengths[i]);
    }
  }
  return cut;
}

// §11.9.1 and §11.9.5: every worker is §10's replay of its own requests
// (with one worker, of the whole document).
RC_GTEST_PROP(RoutingProperties, EachWorkerIsTheServingReplayOfItsRequests,
              ()) {
  const ServeInput input = *GenServeInput();
  const RouterPolicy policy = *GenPolicy();
  const RoutingSpec routing = *GenRouting(policy);
  RC_TAG(routing.workers == 1 ? "one worker" : "several workers");
  const RoutedAnswer answer = Route(input, routing);
  const std::size_t requests = input.replay.requests.size();
  RC_ASSERT(answer.requests.size() == requests);
  RC_ASSERT(answer.workers_of.size() == requests);
  RC_ASSERT(answer.per_worker.size() == routing.workers);
  std::vector<std::vector<std::size_t>> routed(routing.workers);
  for (std::size_t i = 0; i < requests; ++i) {
    RC_ASSERT(answer.workers_of[i] < routing.workers);
    routed[answer.workers_of[i]].push_back(i);
  }
  for (std::size_t w = 0; w < routing.workers; ++w) {
    const ServeAnswer own = Serve(Cut(input, routed[w]));
    for (std::size_t j = 0; j < routed[w].size(); ++j) {
      RC_ASSERT(answer.requests[routed[w][j]] == own.requests[j]);
    }
    RC_ASSERT(answer.per_worker[w] == own.totals);
  }
  if (routing.workers == 1) RC_ASSERT(answer.totals == answer.per_worker[0]);
}

// §11.9.2: the same document, parameters and seed, the same bytes.
RC_GTEST_PROP(RoutingProperties, SameSeedSameBytes, ()) {
  const ServeInput input = *GenServeInput();
  const RoutingSpec routing = *GenRouting(*GenPolicy());
  std::string first;
  std::string second;
  AppendRoutedAnswerJson(Route(input, routing), first, true);
  AppendRoutedAnswerJson(Route(input, routing), second, true);
  RC_ASSERT(first == second);
}

// §11.9.3: round-robin gives worker w exactly ⌈(R − w)/N⌉ of R requests.
RC_GTEST_PROP(RoutingProperties, RoundRobinCounts, ()) {
  const ServeInput input = *GenServeInput();
  const RoutingSpec routing = *GenRouting(RouterPolicy::kRoundRobin, 2);
  const RoutedAnswer answer = Route(input, routing);
  const std::uint64_t r = input.replay.requests.size();
  const std::uint64_t n = routing.workers;
  std::vector<std::uint64_t> counts(n);
  for (const std::size_t w : answer.workers_of) ++counts[w];
  for (std::uint64_t w = 0; w < n; ++w) {
    RC_ASSERT(counts[w] == (r > w ? (r - w + n - 1) / n : 0));
    RC_ASSERT(answer.per_worker[w].requests == counts[w]);
  }
}

// §11.9.4: consistent-hash sends the requests with the same key (the first
// K tokens, in the same namespace) to the same worker.
RC_GTEST_PROP(RoutingProperties, ConsistentHashIsSticky, ()) {
  const ServeInput input = *GenServeInput();
  RoutingSpec routing = *GenRouting(RouterPolicy::kConsistentHash, 2);
  const std::uint64_t k = *rc::gen::inRange<std::uint64_t>(0, 4);
  routing.router.parameters["hash_prefix"] = k;
  const RoutedAnswer answer = Route(input, routing);
  std::map<std::pair<std::string, std::vector<Token>>, std::size_t> worker_of;
  for (std::size_t i = 0; i < answer.workers_of.size(); ++i) {
    const TokenSpan tokens = input.replay.requests[i];
    std::pair<std::string, std::vector<Token>> key = {
        input.replay.namespaces.empty() ? "" : input.replay.namespaces[i],
        {tokens.begin(),
         tokens.begin() + std::min<std::size_t>(k, tokens.size())}};
    const auto [it, first] =
        worker_of.emplace(std::move(key), answer.workers_of[i]);
    RC_ASSERT(it->second == answer.workers_of[i]);
  }
}

// §11.9.6: instant finishes, strictly increasing arrivals, unbounded
// caches: the prefix-aware policies keep the one-worker matched tokens.
RC_GTEST_PROP(RoutingProperties, PrefixAwareKeepTheOneWorkerHits, ()) {
  ServeInput input = *GenServeInput();
  input.replay.options.capacity = kUnbounded;
  input.serve.prefill_us_per_token = 0;
  input.serve.decode_us_per_token = 0;
  input.serve.overhead_us = 0;
  input.arrivals_us.clear();
  for (std::size_t i = 0; i < input.replay.requests.size(); ++i) {
    input.arrivals_us.push_back(i);
  }
  const RouterPolicy policy = *rc::gen::element(
      RouterPolicy::kPrecise, RouterPolicy::kDynamo, RouterPolicy::kLlmd);
  RoutingSpec routing = *GenRouting(policy, 2);
  if (policy == RouterPolicy::kDynamo) {
    routing.router.parameters["ties"] =
        std::string(*rc::gen::element("random", "first"));
  }
  const RoutedAnswer one = Route(input, {1, routing.router});
  const RoutedAnswer many = Route(input, routing);
  RC_ASSERT(many.totals.matched_tokens == one.totals.matched_tokens);
}

}  // namespace
}  // namespace kvprefix
