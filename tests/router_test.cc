// Tests of router/ (SPEC §11.3, §11.5): the stream's first draws, the key
// hash and ring, exact decimals, and every policy's steps on given views
// (§11.6's examples and the oracle's hand-worked ones,
// tests/serve/test_serve_oracle.py), through the factory by name.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kvprefix/splitmix64.h"
#include "router/policies/sglang_cache_aware.h"
#include "router/rational.h"
#include "router/router_spec.h"
#include "router/stream.h"

namespace kvprefix {
namespace {

// §11.6's views: each worker's cache given as the sequences it holds (P =
// 1: peek_match is the longest common prefix with any of them), loads,
// pins and unprefilled tokens as stated, else 0.
class GivenViews final : public WorkerViews {
 public:
  struct Worker {
    std::vector<std::vector<Token>> holds;
    std::uint64_t load = 0;
    std::uint64_t pinned = 0;
  };
  explicit GivenViews(std::vector<Worker> workers)
      : workers_(std::move(workers)) {}
  static GivenViews Loads(const std::vector<std::uint64_t>& loads) {
    std::vector<Worker> workers;
    for (const std::uint64_t load : loads) workers.push_back({{}, load, 0});
    return GivenViews(workers);
  }

  std::size_t size() const override { return workers_.size(); }
  WorkerView view(std::size_t w) const override {
    return WorkerView{.queued = workers_[w].load, .pinned = workers_[w].pinned};
  }
  std::uint64_t PeekMatch(std::size_t w, TokenSpan tokens) const override {
    std::uint64_t best = 0;
    for (const auto& held : workers_[w].holds) {
      std::uint64_t j = 0;
      while (j < held.size() && j < tokens.size() && held[j] == tokens[j]) ++j;
      best = std::max(best, j);
    }
    return best;
  }

 private:
  std::vector<Worker> workers_;
};

// The router `name` for N workers (P = 1, model spec) with `parameters`
// (member name to value text, as the command line gives them).
std::unique_ptr<Router> Make(
    std::string_view name, std::size_t workers,
    const std::vector<std::pair<std::string, std::string>>& parameters = {},
    RouteSetup setup = {}) {
  RouterSpec spec{.policy = *ParseNamedValue(kRouterPolicies, name)};
  for (const auto& [member, text] : parameters) {
    spec.parameters[member] =
        *ParseRouterValue(*FindRouterParameter(member), text);
  }
  setup.workers = workers;
  return MakeRouter(spec, setup, TokenUnit::kBlock);
}

std::size_t Choose(Router& router, const std::vector<Token>& tokens,
                   const WorkerViews& views, RequestId k = 0,
                   std::uint64_t arrival_us = 0) {
  return router.Choose({.index = k, .tokens = tokens, .arrival_us = arrival_us},
                       views);
}

TEST(RouterStreamTest, FirstDrawsAndBelow) {
  // §11.3: seed 0's first draw; below(4) three times gives 3, 0, 3.
  Stream stream(0);
  EXPECT_EQ(stream.Draw(), 0xe220a8397b1dcdafULL);
  Stream four(0);
  EXPECT_EQ(four.Below(4), 3u);
  EXPECT_EQ(four.Below(4), 0u);
  EXPECT_EQ(four.Below(4), 3u);
  EXPECT_EQ(four.draws(), 3u);
  // Draw i of seed S is splitmix64(S + i * gamma).
  Stream seeded(12345);
  seeded.Draw();
  EXPECT_EQ(seeded.Draw(), SplitMix64(12345 + kSplitMix64Gamma));
}

TEST(RouterStreamTest, KeyHashTakesTokensAsTwosComplement) {
  const std::vector<Token> none;
  EXPECT_EQ(KeyHash(none), 0u);
  const std::vector<Token> minus_one = {-1};
  EXPECT_EQ(KeyHash(minus_one), SplitMix64(~std::uint64_t{0}));
  const std::vector<Token> two = {7, 8};
  EXPECT_EQ(KeyHash(two), SplitMix64(SplitMix64(7) ^ 8));
}

TEST(RationalTest, DecimalsAreExact) {
  EXPECT_EQ(*Rational::FromDecimal("1.25"), Rational(5, 4));
  EXPECT_EQ(*Rational::FromDecimal("0.3"), Rational(3, 10));
  EXPECT_EQ(*Rational::FromDecimal("2"), Rational(2));
  EXPECT_EQ(*Rational::FromDecimal(".5"), Rational(1, 2));
  EXPECT_EQ(*Rational::FromDecimal("1.000000000000000000000000000000000000000"),
            Rational(1));
  // 0.1 + 0.2 is 0.3 exactly (in binary floating point it is not).
  EXPECT_EQ(*Rational::FromDecimal("0.1") + *Rational::FromDecimal("0.2"),
            *Rational::FromDecimal("0.3"));
  for (const char* bad :
       {"-0", "-1", "1e3", "1.", ".", "", "01", "1.2.3", " 1", "+1", "0x1"}) {
    EXPECT_FALSE(Rational::FromDecimal(bad)) << bad;
  }
  EXPECT_LT(Rational(1, 3), *Rational::FromDecimal("0.3333333333333333334"));
}

TEST(RouterPolicyTest, RoundRobinRandomPowerOfTwo) {
  const GivenViews three = GivenViews::Loads({0, 0, 0});
  const auto round_robin = Make("round-robin", 3);
  std::vector<std::size_t> chosen;
  for (RequestId k = 0; k < 5; ++k) {
    chosen.push_back(Choose(*round_robin, {1}, three, k));
  }
  EXPECT_EQ(chosen, (std::vector<std::size_t>{0, 1, 2, 0, 1}));
  const GivenViews four = GivenViews::Loads({0, 0, 0, 0});
  const auto random = Make("random", 4);
  chosen.clear();
  for (int k = 0; k < 3; ++k) chosen.push_back(Choose(*random, {1}, four));
  EXPECT_EQ(chosen, (std::vector<std::size_t>{3, 0, 3}));
  // i1 = 3, i2 = (3 + 1 + 0) mod 4 = 0; load_3 = 0 <= load_0 = 3 -> 3.
  const auto two = Make("power-of-two", 4);
  EXPECT_EQ(Choose(*two, {1}, GivenViews::Loads({3, 1, 2, 0})), 3u);
  EXPECT_EQ(Choose(*Make("least-loaded", 3), {1}, GivenViews::Loads({2, 1, 1})),
            1u);
}

TEST(RouterPolicyTest, ConsistentHashAndPrefixHash) {
  const auto ring = Make("consistent-hash", 4, {{"hash_prefix", "1"}});
  const GivenViews idle = GivenViews::Loads({0, 0, 0, 0});
  EXPECT_EQ(Choose(*ring, {7}, idle), 0u);
  EXPECT_EQ(Choose(*ring, {7, 8}, idle), 0u);
  EXPECT_EQ(Choose(*ring, {8}, idle), 0u);
  EXPECT_EQ(Choose(*ring, {}, idle), 3u);
  const auto prefix =
      Make("prefix-hash", 4, {{"hash_prefix", "1"}, {"load_factor", "1.25"}});
  EXPECT_EQ(Choose(*prefix, {8}, GivenViews::Loads({0, 0, 0, 0})), 0u);
  EXPECT_EQ(Choose(*prefix, {8}, GivenViews::Loads({5, 0, 0, 0})), 1u);
  EXPECT_EQ(Choose(*prefix, {8}, GivenViews::Loads({0, 5, 0, 0})), 0u);
  EXPECT_EQ(Choose(*prefix, {8}, GivenViews::Loads({2, 0, 1, 1})), 1u);
}

TEST(RouterPolicyTest, PreciseLlmdKvaware) {
  const GivenViews seen({{{{1, 2}}, 2, 0}, {{{1, 2, 3}}, 0, 0}, {{}, 0, 0}});
  const auto precise = Make("precise", 3);
  EXPECT_EQ(Choose(*precise, {1, 2, 3, 4}, seen), 1u);
  EXPECT_EQ(Choose(*precise, {5}, seen), 1u);
  EXPECT_EQ(Choose(*precise, {1, 2}, seen), 1u);
  const auto llmd = Make("llmd", 3);
  EXPECT_EQ(
      Choose(*llmd, {1, 2, 3, 4, 5, 6},
             GivenViews(
                 {{{{1, 2}}, 0, 0}, {{{1, 2, 3, 4, 5}}, 4, 0}, {{}, 1, 0}})),
      1u);
  EXPECT_EQ(Choose(*llmd, {1, 2, 3, 4, 5, 6, 7, 8},
                   GivenViews({{{{1}}, 1, 0}, {{}, 0, 0}, {{}, 0, 0}})),
            0u);
  const auto kvaware = Make("vllm-kvaware", 2, {{"kv_aware_threshold", "4"}});
  const GivenViews held({{{}, 0, 0}, {{{1, 2, 3, 4, 5}}, 3, 0}});
  EXPECT_EQ(Choose(*kvaware, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, held), 0u);
  EXPECT_EQ(Choose(*kvaware, {1, 2, 3, 4, 5, 6, 7, 8, 9}, held), 1u);
}

TEST(RouterPolicyTest, DynamoCostsAndTies) {
  // w0 = max(4 − 3, 0) + (0 + 4 − 3) = 2, w1 = 4 + (2 + 4) = 10 -> 0.
  EXPECT_EQ(Choose(*Make("dynamo", 2), {1, 2, 3, 4},
                   GivenViews({{{{1, 2, 3}}, 0, 0}, {{}, 0, 2}})),
            0u);
  const GivenViews pinned({{{}, 0, 1}, {{}, 0, 1}});
  const auto random = Make("dynamo", 2);
  const auto first = Make("dynamo", 2, {{"ties", "first"}});
  std::vector<std::size_t> random_chosen, first_chosen;
  for (int k = 0; k < 4; ++k) {
    random_chosen.push_back(Choose(*random, {9}, pinned));
    first_chosen.push_back(Choose(*first, {9}, pinned));
  }
  EXPECT_EQ(random_chosen, (std::vector<std::size_t>{0, 1, 0, 1}));
  EXPECT_EQ(first_chosen, (std::vector<std::size_t>{0, 0, 0, 0}));
  // §11.2: sglang's pinned counts tokens, read as pinned / P pages: P = 2,
  // w0 holds [1,2,3,4] (m = 2) with 6 pinned tokens: w0 costs 1 + 4 = 5,
  // w1 3 + 3 = 6 -> 0 (6 pinned pages would cost 8).
  EXPECT_EQ(
      Choose(*Make("dynamo", 2, {}, {.page_size = 2, .pinned_in_tokens = true}),
             {1, 2, 3, 4, 5, 6},
             GivenViews({{{{1, 2, 3, 4}}, 0, 6}, {{}, 0, 0}})),
      0u);
}

TEST(RouterPolicyTest, SglangCacheAwareTree) {
  SglangCacheAwareRouter router(2, {});
  const GivenViews idle = GivenViews::Loads({0, 0});
  const std::vector<std::vector<Token>> requests = {
      {1, 2, 3, 4}, {1, 2, 3, 5}, {1, 9, 9, 9}, {6}, {1, 2, 3, 4, 7}};
  std::vector<std::size_t> chosen;
  for (const auto& tokens : requests) {
    chosen.push_back(Choose(router, tokens, idle));
  }
  EXPECT_EQ(chosen, (std::vector<std::size_t>{0, 0, 1, 1, 0}));
  EXPECT_EQ(router.tree_size(0), 6u);
  EXPECT_EQ(router.tree_size(1), 5u);
  EXPECT_EQ(Choose(router, {1, 2, 3, 4}, GivenViews::Loads({70, 3})), 1u);
  EXPECT_EQ(Choose(router, {1, 2, 3, 4}, GivenViews::Loads({70, 50})), 0u);
  // The fallbacks with no match: smallest tree 0, least loaded 1.
  EXPECT_EQ(
      Choose(*Make("sglang-cache-aware", 2), {1}, GivenViews::Loads({1, 0})),
      0u);
  EXPECT_EQ(
      Choose(*Make("sglang-cache-aware", 2, {{"fallback", "least-loaded"}}),
             {1}, GivenViews::Loads({1, 0})),
      1u);
}

TEST(RouterPolicyTest, SglangCacheAwareEvictionByHand) {
  // test_serve_oracle.py's hand-worked eviction: max_tree_size 2 every 10
  // µs, balance_abs_threshold 0.
  SglangCacheAwareRouter router(2, {.balance_abs_threshold = 0,
                                    .max_tree_size = 2,
                                    .eviction_interval_us = 10});
  const GivenViews idle = GivenViews::Loads({0, 0});
  EXPECT_EQ(Choose(router, {1, 2, 3}, idle, 0, 0), 0u);
  EXPECT_EQ(Choose(router, {4}, idle, 1, 5), 1u);
  EXPECT_EQ(router.tree_size(0), 3u);
  EXPECT_EQ(Choose(router, {1, 2, 3}, idle, 2, 12), 0u);  // evicts [1,2,3]
  EXPECT_EQ(Choose(router, {1, 5}, idle, 3, 13), 0u);
  EXPECT_EQ(router.tree_size(0), 4u);
  // t = 25: worker 0 loses [1,2,3] then [1,2]; loads [1,0] imbalanced -> 1.
  EXPECT_EQ(Choose(router, {1, 5}, GivenViews::Loads({1, 0}), 4, 25), 1u);
  EXPECT_EQ(router.tree_size(0), 2u);
  EXPECT_EQ(router.tree_size(1), 3u);
  // t = 31: worker 1 loses [4]; [1,5] matches in full: tenant 0.
  EXPECT_EQ(Choose(router, {1, 5}, idle, 5, 31), 0u);
  EXPECT_EQ(router.tree_size(1), 2u);
}

TEST(RouterPolicyTest, VllmPrefix) {
  const auto router = Make("vllm-prefix", 2, {{"chunk", "1"}});
  const GivenViews idle = GivenViews::Loads({0, 0});
  std::vector<std::size_t> chosen;
  for (const auto& tokens : std::vector<std::vector<Token>>{
           {1, 2}, {1, 2, 3}, {1, 5}, {1, 2, 3, 4}}) {
    chosen.push_back(Choose(*router, tokens, idle));
  }
  EXPECT_EQ(chosen, (std::vector<std::size_t>{1, 1, 1, 1}));
  // A short last chunk counts C: [1,2,3] matched again is M = 4 >= 4.
  const auto short_chunk =
      Make("vllm-prefix", 2, {{"chunk", "2"}, {"min_match", "4"}});
  EXPECT_EQ(Choose(*short_chunk, {1, 2, 3}, GivenViews::Loads({0, 0})), 0u);
  EXPECT_EQ(Choose(*short_chunk, {1, 2, 3}, GivenViews::Loads({1, 0})), 0u);
}

TEST(RouterSpecTest, ParametersAndDefaults) {
  // Every policy is named once; every parameter belongs to some policy.
  for (const RouterParameter& parameter : kRouterParameters) {
    EXPECT_NE(parameter.policies, 0) << parameter.name;
    EXPECT_TRUE(ParseRouterValue(parameter, parameter.token_default))
        << parameter.name;
  }
  EXPECT_FALSE(ParseRouterValue(*FindRouterParameter("load_factor"), "0"));
  EXPECT_FALSE(
      ParseRouterValue(*FindRouterParameter("cache_threshold"), "1.01"));
  EXPECT_TRUE(ParseRouterValue(*FindRouterParameter("cache_threshold"), "1"));
  EXPECT_FALSE(ParseRouterValue(*FindRouterParameter("chunk"), "0"));
  EXPECT_EQ(ExpectedRouterValue(*FindRouterParameter("ties")),
            "\"random\" or \"first\"");
  // A parameter of another policy is refused by the factory too.
  RouterSpec spec;
  spec.parameters["load_factor"] = *Rational::FromDecimal("2");
  EXPECT_THROW(MakeRouter(spec, {}, TokenUnit::kToken), std::invalid_argument);
}

}  // namespace
}  // namespace kvprefix
