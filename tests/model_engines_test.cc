// The optimized engines of SPEC §9's models against their oracles: BlockPool
// (hash, vllm) against ReferenceBlockPool and RadixCache (radix, sglang)
// against ReferenceRadixCache, on thousands of random request lists over
// small alphabets (so that prefixes share, edges split and chains repeat),
// every page size 1-3, capacities 0-12 and unbounded, both triggers, both
// policies and both match limits; after every request the answers, counts,
// evicted labels and a fresh match must be identical. Then memory: under a
// capacity, memory_bytes() stays bounded over a long stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/registry.h"
#include "models/sglang/radix_cache.h"
#include "models/sglang/reference_radix_cache.h"
#include "models/vllm/block_pool.h"
#include "models/vllm/reference_block_pool.h"

namespace kvprefix {
namespace {

using Tokens = std::vector<Token>;

// A random request list: up to 40 requests of 0-10 tokens over `alphabet`
// tokens, half of them extending or cutting an earlier request so that
// prefixes repeat.
std::vector<Tokens> RandomRequests(std::mt19937_64& random, int alphabet) {
  std::vector<Tokens> requests(1 + random() % 40);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Tokens& request = requests[i];
    if (i > 0 && random() % 2 == 0) {
      request = requests[random() % i];
      request.resize(random() % (request.size() + 1));
    }
    const std::size_t extra = random() % 11;
    for (std::size_t k = 0; k < extra && request.size() < 10; ++k) {
      request.push_back(static_cast<Token>(random() % alphabet) - 1);
    }
  }
  return requests;
}

// Records the labels an engine evicts, sorted (only their multiset is
// specified).
struct EvictedLabels {
  std::vector<Tokens> labels;
  EvictionListener Listener() {
    return [this](TokenSpan tokens) {
      labels.emplace_back(tokens.begin(), tokens.end());
    };
  }
  std::vector<Tokens> Take() {
    std::sort(labels.begin(), labels.end());
    return std::exchange(labels, {});
  }
};

// Replays `requests` on Reference and Fast, built with `options`, checking
// after every request that they agree; every seventh request goes through
// Insert instead of Access. Returns false after the first difference (with
// a failure naming it).
template <typename Reference, typename Fast>
bool Agree(const CacheOptions& options, const std::vector<Tokens>& requests,
           const std::string& what) {
  Reference reference(options);
  Fast fast(options);
  EvictedLabels reference_evicted;
  EvictedLabels fast_evicted;
  reference.SetEvictionListener(reference_evicted.Listener());
  fast.SetEvictionListener(fast_evicted.Listener());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const TokenSpan request(requests[i]);
    const std::string where = what + " request " + std::to_string(i);
    if (i % 7 == 6) {
      EXPECT_EQ(reference.Insert(request), fast.Insert(request)) << where;
    } else {
      const Match expected = reference.Access(request);
      const Match actual = fast.Access(request);
      EXPECT_EQ(actual.matched_length, expected.matched_length) << where;
      EXPECT_EQ(actual.cache_node, expected.cache_node) << where;
    }
    EXPECT_EQ(fast.node_count(), reference.node_count()) << where;
    EXPECT_EQ(fast.evicted_count(), reference.evicted_count()) << where;
    EXPECT_EQ(fast_evicted.Take(), reference_evicted.Take()) << where;
    EXPECT_EQ(fast.MatchPrefix(request), reference.MatchPrefix(request))
        << where;
    if constexpr (requires { fast.size_tokens(); }) {
      EXPECT_EQ(fast.size_tokens(), reference.size_tokens()) << where;
    }
    if (::testing::Test::HasFailure()) return false;
  }
  return true;
}

std::vector<std::uint64_t> Capacities() {
  std::vector<std::uint64_t> capacities;
  for (std::uint64_t c = 0; c <= 12; ++c) capacities.push_back(c);
  capacities.push_back(kUnbounded);
  return capacities;
}

std::string Describe(const CacheOptions& options, std::uint64_t seed) {
  return "P=" + std::to_string(options.page_size) + " C=" +
         (options.bounded() ? std::to_string(options.capacity) : "unbounded") +
         " policy " + std::string(EvictionPolicyName(options.policy)) +
         " limit " + std::string(NameOf(kMatchLimits, options.match_limit)) +
         " trigger " + std::string(NameOf(kEvictionTriggers, options.trigger)) +
         " seed " + std::to_string(seed);
}

// Runs `lists` random lists per configuration; returns the lists run.
template <typename Reference, typename Fast>
int CompareOn(const CacheOptions& options, int lists) {
  int run = 0;
  for (int seed = 0; seed < lists; ++seed) {
    std::mt19937_64 random(seed * 1000003 + options.page_size * 101 +
                           options.capacity % 97);
    const int alphabet = 2 + seed % 2;
    if (!Agree<Reference, Fast>(options, RandomRequests(random, alphabet),
                                Describe(options, seed))) {
      return run;
    }
    ++run;
  }
  return run;
}

TEST(BlockPoolTest, AgreesWithTheReferenceOnRandomLists) {
  int lists = 0;
  for (const std::uint64_t page : {1, 2, 3}) {
    for (const std::uint64_t capacity : Capacities()) {
      const CacheOptions options{.capacity = capacity,
                                 .page_size = page,
                                 .model = CacheModel::kVllm,
                                 .match_limit = MatchLimit::kAllButLast};
      lists += CompareOn<ReferenceBlockPool, BlockPool>(options, 200);
      if (HasFailure()) return;
    }
  }
  EXPECT_EQ(lists, 3 * 14 * 200);
}

TEST(RadixCacheTest, AgreesWithTheReferenceOnRandomLists) {
  int lists = 0;
  for (const std::uint64_t page : {1, 2, 3}) {
    for (const std::uint64_t capacity : Capacities()) {
      for (const EvictionPolicy policy :
           {EvictionPolicy::kLru, EvictionPolicy::kFifo}) {
        for (const auto& limit : kMatchLimits) {
          for (const auto& trigger : kEvictionTriggers) {
            const CacheOptions options{.capacity = capacity,
                                       .policy = policy,
                                       .page_size = page,
                                       .model = CacheModel::kSglang,
                                       .match_limit = limit.value,
                                       .trigger = trigger.value};
            lists += CompareOn<ReferenceRadixCache, RadixCache>(options, 25);
            if (HasFailure()) return;
          }
        }
      }
    }
  }
  EXPECT_EQ(lists, 3 * 14 * 2 * 2 * 2 * 25);
}

// The registry names them as the engines they belong to, after the
// reference, so that `--engine hash --model vllm` and `--engine radix --model
// sglang` select them.
TEST(ModelEnginesTest, TheRegistryListsThem) {
  EXPECT_EQ(EngineNames(CacheModel::kVllm),
            (std::vector<std::string_view>{"reference", "hash"}));
  EXPECT_EQ(EngineNames(CacheModel::kSglang),
            (std::vector<std::string_view>{"reference", "radix"}));
  const CacheOptions sglang{.capacity = 4, .model = CacheModel::kSglang};
  EXPECT_EQ(MakeEngine("radix", sglang)->name(), "radix");
  EXPECT_THROW(MakeEngine("hash", sglang), std::invalid_argument);
}

// The engines refuse another model's options, as their references do.
TEST(ModelEnginesTest, RefuseAnotherModel) {
  EXPECT_THROW(BlockPool(CacheOptions{}), std::invalid_argument);
  EXPECT_THROW(RadixCache(CacheOptions{}), std::invalid_argument);
  EXPECT_THROW(BlockPool(CacheOptions{.page_size = 0,
                                      .model = CacheModel::kVllm,
                                      .match_limit = MatchLimit::kAllButLast}),
               std::invalid_argument);
  EXPECT_THROW(
      RadixCache(CacheOptions{.page_size = 0, .model = CacheModel::kSglang}),
      std::invalid_argument);
}

// A long stream under a capacity: 100k requests of up to 64 tokens over a
// wide alphabet, a third of them repeating an earlier prefix. memory_bytes()
// at any point after the first 20k requests is at most twice its largest
// value during them: what the engine keeps is proportional to the capacity,
// not to the trace (the references' maps only grow).
template <typename Engine>
void ExpectBoundedMemory(const CacheOptions& options) {
  Engine engine(options);
  std::mt19937_64 random(7);
  std::vector<Tokens> recent(64);
  std::size_t early_peak = 0;
  for (int i = 0; i < 100000; ++i) {
    Tokens request;
    if (random() % 3 == 0) {
      request = recent[random() % recent.size()];
      request.resize(random() % (request.size() + 1));
    }
    const std::size_t length = random() % 65;
    while (request.size() < length) {
      request.push_back(static_cast<Token>(random() % 100000));
    }
    engine.Access(request);
    recent[random() % recent.size()] = std::move(request);
    if (i < 20000) {
      early_peak = std::max(early_peak, engine.memory_bytes());
    } else {
      ASSERT_LE(engine.memory_bytes(), 2 * early_peak)
          << Engine::kName << " request " << i;
    }
  }
  EXPECT_GT(engine.evicted_count(), 10000u);  // the capacity was binding
}

TEST(ModelEnginesTest, MemoryStaysBoundedUnderACapacity) {
  for (const std::uint64_t page : {1, 4}) {
    ExpectBoundedMemory<BlockPool>({.capacity = 256,
                                    .page_size = page,
                                    .model = CacheModel::kVllm,
                                    .match_limit = MatchLimit::kAllButLast});
    for (const auto& trigger : kEvictionTriggers) {
      ExpectBoundedMemory<RadixCache>({.capacity = 256,
                                       .page_size = page,
                                       .model = CacheModel::kSglang,
                                       .trigger = trigger.value});
    }
  }
}

}  // namespace
}  // namespace kvprefix
