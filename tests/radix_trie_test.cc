// Tests of what is particular to the radix engine (optimized/radix_trie.h):
// implicit node IDs along split and extended runs, edge splits, matches that
// end inside an edge, SIMD run compares that stop at every offset, arena
// chunk boundaries, deep chains, wide fan-out, extreme tokens and the edge
// capacity limit; and, as a bounded cache (SPEC §8), run-tail eviction,
// recency splits, lfu's counts (whole requests stored, then evicted from;
// no in-place growth of the newest run), fresh IDs after eviction,
// requests longer than the capacity, arena compaction, memory proportional
// to the capacity, randomized differential tests against the reference
// (tokens and pages, every policy) and the LRU curve from radix's per-edge
// runs. The behaviour shared by all
// engines, the capacity case documents included, is in the typed suites.
//
// Every comparison with the reference goes through the differential
// harness (checking/differential.h, via testing/engine_checker.h). The
// randomized tests print their seed; rerun one with
// KVPREFIX_TEST_SEED=<seed>.
#include "optimized/radix_trie.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "checking/differential.h"
#include "checking/recipe.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/replay.h"
#include "reference/reference_trie.h"
#include "testing/engine_checker.h"
#include "testing/property_checks.h"

namespace kvprefix {
namespace {

using checking::DifferentialChecker;
using checking::Operation;
using test::Agrees;

// A braced token list as a span argument: trie.Insert(Tokens{1, 2}).
using Tokens = std::vector<Token>;

TEST(RadixTrieTest, IdsAlongPathNeedNotBeConsecutive) {
  // [3,4] must become a new child edge below node 2: the IDs on path
  // 1,2,3,4 are 1,2,5,6, so extending the run [2] in place would be wrong.
  RadixTrie trie;
  EXPECT_EQ(trie.Insert(Tokens{1, 2}), 2u);
  EXPECT_EQ(trie.Insert(Tokens{1, 3}), 3u);
  EXPECT_EQ(trie.Insert(Tokens{9}), 4u);
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 3, 4}), 6u);
  EXPECT_EQ(trie.node_count(), 6u);
  EXPECT_EQ(trie.edge_count(), 5u);  // [1] [2] [3] [9] [3,4]
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 4}), (Match{4, 6}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3}), (Match{3, 5}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2}), (Match{2, 2}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 3, 4}), (Match{2, 3}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{9, 9}), (Match{1, 4}));
}

TEST(RadixTrieTest, NewestLeafIsExtendedInPlace) {
  RadixTrie trie;
  EXPECT_EQ(trie.Insert(Tokens{1, 2}), 2u);
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 3}), 3u);
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 3, 4, 5}), 5u);
  EXPECT_EQ(trie.edge_count(), 1u);
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 4, 5, 6}), (Match{5, 5}));
  // Once another run was written, the old leaf gets a child edge instead.
  EXPECT_EQ(trie.Insert(Tokens{7}), 6u);
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 3, 4, 5, 6}), 7u);
  EXPECT_EQ(trie.edge_count(), 3u);
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 4, 5, 6}), (Match{6, 7}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{7, 6}), (Match{1, 6}));
}

TEST(RadixTrieTest, SplitKeepsSiblingsBelowTheCut) {
  RadixTrie trie;
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 3, 4}), 4u);
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 3, 5}), 5u);
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 3, 6}), 6u);
  EXPECT_EQ(trie.Insert(Tokens{1, 9}), 7u);     // cuts [1,2,3] after [1]
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 8}), 8u);  // cuts [2,3] after [2]
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 4}), (Match{4, 4}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 5}), (Match{4, 5}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 6}), (Match{4, 6}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 7}), (Match{3, 3}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 9, 9}), (Match{2, 7}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 8}), (Match{3, 8}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1}), (Match{1, 1}));
  EXPECT_EQ(trie.node_count(), 8u);
}

TEST(RadixTrieTest, SplitsInTheMiddleOfLongEdgesKeepIds) {
  // One 3,000-token run (crossing arena chunks), cut at many depths: node
  // k of the run keeps ID k whatever the cuts, and every branch gets the
  // next ID.
  std::vector<Token> run(3000);
  std::iota(run.begin(), run.end(), 100);
  RadixTrie trie;
  EXPECT_EQ(trie.Insert(run), 3000u);
  NodeId next = 3000;
  for (std::size_t cut : {1500, 700, 2999, 1, 256, 257, 768, 1499, 1501}) {
    std::vector<Token> branch(run.begin(), run.begin() + cut);
    branch.push_back(-7);
    EXPECT_EQ(trie.Insert(branch), ++next) << "cut " << cut;
    EXPECT_EQ(trie.MatchPrefix(branch), (Match{cut + 1, next}));
  }
  for (std::size_t length = 0; length <= run.size(); length += 37) {
    std::vector<Token> prefix(run.begin(), run.begin() + length);
    prefix.push_back(0);  // not on the run: stops after `length` tokens
    EXPECT_EQ(trie.MatchPrefix(prefix), (Match{length, length}));
  }
  EXPECT_EQ(trie.MatchPrefix(run), (Match{3000, 3000}));
}

TEST(RadixTrieTest, CompareStopsAtEveryOffsetOfARun) {
  // The SIMD compare handles 4 vectors, then one vector, then single
  // tokens: a mismatch at each offset 0..299 must be found exactly, and an
  // insert there must neither create nor skip nodes.
  std::vector<Token> run(300, 5);
  RadixTrie trie;
  trie.Insert(run);
  for (std::size_t offset = 0; offset < run.size(); ++offset) {
    std::vector<Token> request = run;
    request[offset] = 6;
    EXPECT_EQ(trie.MatchPrefix(request), (Match{offset, offset}));
    request.resize(offset + 1);
    EXPECT_EQ(trie.MatchPrefix(request), (Match{offset, offset}));
  }
  for (std::size_t length = 0; length <= run.size(); ++length) {
    EXPECT_EQ(trie.MatchPrefix(TokenSpan(run).first(length)),
              (Match{length, length}));
  }
}

TEST(RadixTrieTest, MatchEndingInsideAnEdgeNeitherSplitsNorInserts) {
  RadixTrie trie;
  trie.Insert(std::vector<Token>{5, 6, 7, 8});
  const std::size_t bytes = trie.memory_bytes();
  EXPECT_EQ(trie.MatchPrefix(Tokens{5, 6}), (Match{2, 2}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{5, 6, 9}), (Match{2, 2}));
  EXPECT_EQ(trie.edge_count(), 1u);
  // Inserting a prefix of a run returns its node and changes nothing.
  EXPECT_EQ(trie.Insert(Tokens{5, 6}), 2u);
  EXPECT_EQ(trie.Insert(Tokens{}), kRootNode);
  EXPECT_EQ(trie.edge_count(), 1u);
  EXPECT_EQ(trie.node_count(), 4u);
  EXPECT_EQ(trie.memory_bytes(), bytes);
}

TEST(RadixTrieTest, HundredThousandDeepChain) {
  const std::vector<Token> chain(100000, 42);
  RadixTrie trie;
  EXPECT_EQ(trie.Insert(chain), 100000u);
  for (std::size_t length : {1, 99999, 100000}) {
    EXPECT_EQ(trie.Insert(TokenSpan(chain).first(length)), length);
  }
  std::vector<Token> longer(200000, 42);
  EXPECT_EQ(trie.MatchPrefix(longer), (Match{100000, 100000}));
  longer[50000] = 43;
  EXPECT_EQ(trie.MatchPrefix(longer), (Match{50000, 50000}));
  EXPECT_EQ(trie.node_count(), 100000u);
}

TEST(RadixTrieTest, ChainOfThousandsOfEdgesDeep) {
  // Alternating with another insert stops in-place extension, so the chain
  // [x], [x,x], [x,x,x], ... becomes one edge per token.
  constexpr std::size_t kDepth = 3000;
  RadixTrie trie;
  std::vector<Token> chain;
  for (std::size_t depth = 1; depth <= kDepth; ++depth) {
    chain.push_back(INT32_MIN);
    EXPECT_EQ(trie.Insert(chain), 2 * depth - 1);
    EXPECT_EQ(trie.Insert(Tokens{static_cast<Token>(depth)}), 2 * depth);
  }
  EXPECT_EQ(trie.edge_count(), 2 * kDepth);
  chain.push_back(INT32_MIN);
  EXPECT_EQ(trie.MatchPrefix(chain), (Match{kDepth, 2 * kDepth - 1}));
  EXPECT_EQ(trie.MatchPrefix(TokenSpan(chain).first(10)), (Match{10, 19}));
}

TEST(RadixTrieTest, HundredThousandRootChildren) {
  RadixTrie trie;
  for (Token token = 0; token < 100000; ++token) {
    ASSERT_EQ(trie.Insert(Tokens{token * 3 - 150000, token}),
              2 * static_cast<NodeId>(token) + 2);
  }
  for (Token token = 0; token < 100000; token += 7) {
    ASSERT_EQ(trie.MatchPrefix(Tokens{token * 3 - 150000, token, 1}),
              (Match{2, 2 * static_cast<NodeId>(token) + 2}));
    ASSERT_EQ(trie.MatchPrefix(Tokens{token * 3 - 150000 + 1}), (Match{0, 0}));
    ASSERT_EQ(trie.MatchPrefix(Tokens{token * 3 - 150000 + 3, 0}),
              (Match{1, 2 * static_cast<NodeId>(token) + 3}));
  }
}

TEST(RadixTrieTest, FiveThousandChildrenBelowASplitNode) {
  RadixTrie trie;
  for (Token token = 0; token < 5000; ++token) {
    trie.Insert(Tokens{1, 2, 3, -token});
  }
  EXPECT_EQ(trie.Insert(Tokens{1, 2, 4}), 5004u);  // cuts [1,2,3] after [1,2]
  for (Token token = 0; token < 5000; token += 13) {
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, -token, 0}),
              (Match{4, static_cast<NodeId>(token) + 4}));
  }
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 4, 0}), (Match{3, 5004}));
}

TEST(RadixTrieTest, ExtremeTokensAreDistinct) {
  RadixTrie trie;
  const std::vector<Token> tokens = {INT32_MIN, -1, 0, INT32_MAX, 1};
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(trie.Insert(Tokens{tokens[i], tokens[i]}), 2 * i + 2);
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(trie.MatchPrefix(Tokens{tokens[i], tokens[i], tokens[i]}),
              (Match{2, 2 * i + 2}));
    EXPECT_EQ(
        trie.MatchPrefix(Tokens{tokens[i], tokens[(i + 1) % tokens.size()]}),
        (Match{1, 2 * i + 1}));
  }
}

TEST(RadixTrieTest, CapacityErrorBeforeExceedingEdgeLimit) {
  RadixTrie trie(/*max_edges=*/2);
  trie.Insert(Tokens{1, 2});
  trie.Insert(Tokens{3});
  EXPECT_EQ(trie.Insert(Tokens{3, 4, 5}), 5u);  // extends the newest leaf
  EXPECT_EQ(trie.edge_count(), 2u);
  EXPECT_THROW(trie.Insert(Tokens{1, 7}), CapacityError);  // split + new edge
  EXPECT_THROW(trie.Insert(Tokens{6}), CapacityError);
  // The failed inserts changed nothing.
  EXPECT_EQ(trie.node_count(), 5u);
  EXPECT_EQ(trie.edge_count(), 2u);
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 7}), (Match{1, 1}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2}), (Match{2, 2}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{6}), (Match{0, 0}));
  EXPECT_EQ(trie.Insert(Tokens{3, 4}), 4u);  // needs no new edge
  // A run longer than the first arena chunks needs several edges.
  RadixTrie small(/*max_edges=*/1);
  EXPECT_THROW(small.Insert(std::vector<Token>(1000, 1)), CapacityError);
  EXPECT_EQ(small.node_count(), 0u);
  EXPECT_EQ(small.Insert(std::vector<Token>(RadixTrie::kFirstChunkTokens, 1)),
            RadixTrie::kFirstChunkTokens);
}

TEST(RadixTrieTest, MemoryBytesCountsArenaPerNode) {
  // Long runs: about 4 bytes a node plus what the partly used chunk wastes.
  RadixTrie trie;
  std::mt19937_64 random(1);
  std::vector<Token> sequence(2000);
  for (int i = 0; i < 500; ++i) {
    for (Token& token : sequence) token = static_cast<Token>(random());
    trie.Insert(sequence);
  }
  EXPECT_EQ(trie.node_count(), 1000000u);
  EXPECT_GE(trie.memory_bytes(), 4 * trie.node_count());
  EXPECT_LE(trie.memory_bytes(),
            4 * trie.node_count() + 4 * RadixTrie::kMaxChunkTokens + 100000);
}

// Random online workloads of long, related sequences over a tiny alphabet:
// runs are split at every depth, extended in place or by child edges, cross
// arena chunks, and compares stop at every SIMD offset.
TEST(RadixTrieTest, RandomizedDifferentialAgainstReference) {
  const std::uint64_t seed = test::TestSeed();
  std::mt19937_64 random(seed);
  for (int round = 0; round < 20; ++round) {
    DifferentialChecker checker = test::CheckerOf<RadixTrie>();
    std::vector<std::vector<Token>> seen = {{}};
    const Token alphabet[] = {0, 1, -1, INT32_MIN, INT32_MAX};
    const std::size_t letters = 1 + random() % 5;
    for (int step = 0; step < 300; ++step) {
      const std::vector<Token>& base = seen[random() % seen.size()];
      std::vector<Token> tokens(base.begin(),
                                base.begin() + random() % (base.size() + 1));
      const std::size_t tail =
          random() % 4 == 0 ? random() % 600 : random() % 40;
      for (std::size_t i = 0; i < tail; ++i) {
        tokens.push_back(alphabet[random() % letters]);
      }
      const auto kind = random() % 3 == 0 ? Operation::Kind::kMatch
                                          : Operation::Kind::kInsert;
      if (kind == Operation::Kind::kInsert) seen.push_back(tokens);
      ASSERT_TRUE(Agrees(checker.Apply(Operation{kind, std::move(tokens)})))
          << "seed " << seed;
    }
  }
}

// ---------------------------------------------------------------------------
// A cache with a capacity (SPEC §8).

// A bounded engine with what its eviction listener reported: every call's
// tokens, in order.
template <typename E>
class Recorded {
 public:
  explicit Recorded(const CacheOptions& options) : engine_(options) {
    engine_.SetEvictionListener([this](TokenSpan tokens) {
      calls_.emplace_back(tokens.begin(), tokens.end());
    });
  }
  Recorded(const Recorded&) = delete;
  Recorded& operator=(const Recorded&) = delete;

  E& operator*() { return engine_; }
  E* operator->() { return &engine_; }
  // The calls since the last TakeCalls().
  std::vector<Tokens> TakeCalls() { return std::exchange(calls_, {}); }

 private:
  E engine_;
  std::vector<Tokens> calls_;
};

static_assert(PrefixCacheEngine<RadixTrie>);

CacheOptions Lru(std::uint64_t capacity) {
  return CacheOptions{.capacity = capacity, .policy = EvictionPolicy::kLru};
}
CacheOptions Fifo(std::uint64_t capacity) {
  return CacheOptions{.capacity = capacity, .policy = EvictionPolicy::kFifo};
}
CacheOptions Lfu(std::uint64_t capacity) {
  return CacheOptions{.capacity = capacity, .policy = EvictionPolicy::kLfu};
}

// All tokens of the calls, sorted: the multiset the listener contract fixes.
Tokens Multiset(const std::vector<Tokens>& calls) {
  Tokens all;
  for (const Tokens& call : calls)
    all.insert(all.end(), call.begin(), call.end());
  std::sort(all.begin(), all.end());
  return all;
}

TEST(RadixTrieCacheTest, UnboundedOptionsAreThePlainTrie) {
  RadixTrie trie(CacheOptions{});
  EXPECT_FALSE(trie.options().bounded());
  EXPECT_EQ(trie.Access(Tokens{1, 2}), (Match{0, 0}));
  EXPECT_EQ(trie.Access(Tokens{1, 2, 3}), (Match{2, 2}));
  EXPECT_EQ(trie.node_count(), 3u);
  EXPECT_EQ(trie.evicted_count(), 0u);
  EXPECT_THROW(RadixTrie(CacheOptions{.page_size = 2}), std::invalid_argument);
  EXPECT_THROW(RadixTrie(CacheOptions{.capacity = 5, .page_size = 0}),
               std::invalid_argument);
}

TEST(RadixTrieCacheTest, LruEvictsARunTailThenCrossesTheRecencySplit) {
  // [1,2] is touched again after [1..5] was inserted: the run is split
  // there, so the tail [3,4,5] keeps stamp 1 while [1,2] has stamp 2.
  // Four evictions then take [3,4,5] in one step and [2] in another.
  Recorded<RadixTrie> cache(Lru(5));
  EXPECT_EQ(cache->Access(Tokens{1, 2, 3, 4, 5}), (Match{0, 0}));
  EXPECT_EQ(cache->edge_count(), 1u);
  EXPECT_EQ(cache->Access(Tokens{1, 2}), (Match{2, 2}));
  EXPECT_EQ(cache->edge_count(), 2u);  // the recency split
  EXPECT_EQ(cache->node_count(), 5u);
  EXPECT_EQ(cache->Access(Tokens{6, 7, 8, 9}), (Match{0, 0}));
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{3, 4, 5}, {2}}));
  EXPECT_EQ(cache->node_count(), 5u);
  EXPECT_EQ(cache->evicted_count(), 4u);
  EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3}), (Match{1, 1}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{6, 7, 8, 9}), (Match{4, 9}));
}

TEST(RadixTrieCacheTest, FifoEvictsFourTailTokensOfOneRunAtOnce) {
  // The same requests under fifo: no recency split, and the run [1..5]
  // holds the smallest IDs, so its tail [2..5] goes in one step.
  Recorded<RadixTrie> cache(Fifo(5));
  cache->Access(Tokens{1, 2, 3, 4, 5});
  EXPECT_EQ(cache->Access(Tokens{1, 2}), (Match{2, 2}));
  EXPECT_EQ(cache->edge_count(), 1u);
  cache->Access(Tokens{6, 7, 8, 9});
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{2, 3, 4, 5}}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3}), (Match{1, 1}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{6, 7, 8, 9}), (Match{4, 9}));
}

TEST(RadixTrieCacheTest, TouchEndingInsideAnEdgeProtectsOnlyTheUpperPart) {
  // A chain whose upper part was touched later than its tail: the tail is
  // evicted first, the upper part survives.
  Recorded<RadixTrie> cache(Lru(5));
  cache->Access(Tokens{1, 2, 3, 4});                      // IDs 1-4, stamp 1
  cache->Access(Tokens{5});                               // ID 5, stamp 2
  EXPECT_EQ(cache->Access(Tokens{1, 2}), (Match{2, 2}));  // stamp 3
  EXPECT_EQ(cache->Access(Tokens{1, 2}), (Match{2, 2}));  // no new split
  EXPECT_EQ(cache->edge_count(), 3u);
  cache->Access(Tokens{6, 7, 8});  // IDs 6-8: three over capacity
  // Leaves by stamp: [3,4] (1), [5] (2). [3,4] goes whole, then [5].
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{3, 4}, {5}}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3, 4}), (Match{2, 2}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{5}), (Match{0, 0}));
  EXPECT_EQ(cache->node_count(), 5u);
  EXPECT_EQ(cache->Insert(Tokens{1, 2}), 2u);
}

TEST(RadixTrieCacheTest, ReinsertedPrefixGetsNewIdsAndANewChildEdge) {
  Recorded<RadixTrie> cache(Lru(3));
  EXPECT_EQ(cache->Access(Tokens{1, 2, 3}), (Match{0, 0}));  // IDs 1-3
  EXPECT_EQ(cache->Access(Tokens{4}), (Match{0, 0}));        // ID 4
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{3}}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3}), (Match{2, 2}));
  // Node 3 is gone; token 3 below node 2 now gets ID 5, a new child edge
  // of the run [1,2] (its IDs 2 and 5 are not consecutive).
  EXPECT_EQ(cache->Access(Tokens{1, 2, 3}), (Match{2, 2}));
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{4}}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3}), (Match{3, 5}));
  EXPECT_EQ(cache->Insert(Tokens{1, 2, 3}), 5u);
  EXPECT_EQ(cache->edge_count(), 2u);
  EXPECT_EQ(cache->evicted_count(), 2u);
  // The new edge is the newest run: it may grow in place (IDs 6, 7 follow
  // 5), once the cache has room for it.
  Recorded<RadixTrie> roomy(Lru(5));
  roomy->Access(Tokens{1, 2, 3});
  roomy->Access(Tokens{4, 5, 6});  // 6 nodes: evicts node 3
  EXPECT_EQ(roomy.TakeCalls(), (std::vector<Tokens>{{3}}));
  EXPECT_EQ(roomy->Insert(Tokens{1, 2, 3}), 7u);     // evicts node 6
  EXPECT_EQ(roomy->edge_count(), 3u);                // [1,2] [3] [4,5]
  EXPECT_EQ(roomy->Insert(Tokens{1, 2, 3, 8}), 8u);  // evicts node 5
  EXPECT_EQ(roomy->edge_count(), 3u);                // [3] became [3,8]
  EXPECT_EQ(roomy.TakeCalls(), (std::vector<Tokens>{{6}, {5}}));
  EXPECT_EQ(roomy->MatchPrefix(Tokens{1, 2, 3, 8}), (Match{4, 8}));
}

TEST(RadixTrieCacheTest, CapacityZeroStoresNothing) {
  for (const CacheOptions& options : {Lru(0), Fifo(0)}) {
    Recorded<RadixTrie> cache(options);
    EXPECT_EQ(cache->Access(Tokens{1, 2, 3}), (Match{0, 0}));
    EXPECT_EQ(cache->Insert(Tokens{1, 2}), kRootNode);
    EXPECT_EQ(cache->Access(Tokens{}), (Match{0, 0}));
    EXPECT_EQ(cache->Access(Tokens{1, 2, 3}), (Match{0, 0}));
    EXPECT_EQ(cache->node_count(), 0u);
    EXPECT_EQ(cache->edge_count(), 0u);
    EXPECT_EQ(cache->evicted_count(), 8u);
    EXPECT_EQ(cache.TakeCalls(),
              (std::vector<Tokens>{{1, 2, 3}, {1, 2}, {1, 2, 3}}));
    EXPECT_EQ(cache->memory_bytes(), RadixTrie(options).memory_bytes());
  }
}

TEST(RadixTrieCacheTest, RequestLongerThanCapacityKeepsItsFirstNodes) {
  for (const CacheOptions& options : {Lru(3), Fifo(3)}) {
    SCOPED_TRACE(EvictionPolicyName(options.policy));
    Recorded<RadixTrie> cache(options);
    EXPECT_EQ(cache->Insert(Tokens{7, 8}), 2u);
    // Nodes 3-7; [4,5] (6, 7) and then [7,8] (1, 2) are evicted, but IDs
    // 6 and 7 are used up.
    EXPECT_EQ(cache->Insert(Tokens{1, 2, 3, 4, 5}), 5u);
    EXPECT_EQ(Multiset(cache.TakeCalls()), (Tokens{4, 5, 7, 8}));
    EXPECT_EQ(cache->node_count(), 3u);
    EXPECT_EQ(cache->evicted_count(), 4u);
    EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3, 4, 5}), (Match{3, 5}));
    EXPECT_EQ(cache->MatchPrefix(Tokens{7}), (Match{0, 0}));
    // Both policies then evict node 5 (oldest stamp, smallest leaf ID).
    EXPECT_EQ(cache->Insert(Tokens{9}), 8u);
    EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{3}}));
    EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3}), (Match{2, 4}));
    // A long request that matches all C nodes stores nothing new.
    EXPECT_EQ(cache->Access(Tokens{1, 2, 3, 3}), (Match{2, 4}));
    EXPECT_EQ(cache->node_count(), 3u);
  }
}

TEST(RadixTrieCacheTest, LruAndFifoDiffer) {
  RadixTrie lru(Lru(2));
  RadixTrie fifo(Fifo(2));
  for (RadixTrie* cache : {&lru, &fifo}) {
    cache->Access(Tokens{1});  // node 1
    cache->Access(Tokens{2});  // node 2
    cache->Access(Tokens{1});  // touches node 1
    cache->Access(Tokens{3});  // node 3: lru evicts 2, fifo evicts 1
  }
  EXPECT_EQ(lru.MatchPrefix(Tokens{1}), (Match{1, 1}));
  EXPECT_EQ(lru.MatchPrefix(Tokens{2}), (Match{0, 0}));
  EXPECT_EQ(fifo.MatchPrefix(Tokens{1}), (Match{0, 0}));
  EXPECT_EQ(fifo.MatchPrefix(Tokens{2}), (Match{1, 2}));
  EXPECT_EQ(lru.MatchPrefix(Tokens{3}), (Match{1, 3}));
  EXPECT_EQ(fifo.MatchPrefix(Tokens{3}), (Match{1, 3}));
}

TEST(RadixTrieCacheTest, LfuKeepsTheMoreFrequentNodes) {
  // SPEC §8's example: [1] has count 2 when [2,3,4] arrives with count 1,
  // so lfu evicts the new run's tail [3,4] in one step (lru would keep the
  // request's first two nodes and evict [1]). The whole request was stored
  // first: Insert's answer is what is left of its path, node 2.
  Recorded<RadixTrie> cache(Lfu(2));
  EXPECT_EQ(cache->Insert(Tokens{1}), 1u);
  EXPECT_EQ(cache->Insert(Tokens{1}), 1u);
  EXPECT_EQ(cache->Insert(Tokens{2, 3, 4}), 2u);
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{3, 4}}));
  EXPECT_EQ(cache->node_count(), 2u);
  EXPECT_EQ(cache->evicted_count(), 2u);
  EXPECT_EQ(cache->MatchPrefix(Tokens{1}), (Match{1, 1}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{2, 3, 4}), (Match{1, 2}));
  // A request whose every node goes: [2] (count 2 now) and [1] (count 2,
  // older) both beat [5]'s count 1, so Insert reaches no node.
  EXPECT_EQ(cache->Access(Tokens{2}), (Match{1, 2}));
  EXPECT_EQ(cache->Insert(Tokens{5}), kRootNode);
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{5}}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{5}), (Match{0, 0}));
  // Per-edge runs are lru's alone.
  EXPECT_THROW(cache->Access(Tokens{1}, [](std::uint64_t, std::uint64_t) {}),
               std::logic_error);
}

TEST(RadixTrieCacheTest, LfuEvictsARunTailThenCrossesTheCountSplit) {
  // The requests of LruEvictsARunTailThenCrossesTheRecencySplit under lfu:
  // [1,2] (count 2) is split from [3,4,5] (count 1); [6,7,8,9] comes with
  // count 1 and a newer stamp. Four evictions take [3,4,5] whole; then
  // [1,2] is a leaf of count 2, above [6,7,8,9]'s (1, 3), so the last one
  // is node 9, the new run's tail, not node 2 as under lru.
  Recorded<RadixTrie> cache(Lfu(5));
  EXPECT_EQ(cache->Access(Tokens{1, 2, 3, 4, 5}), (Match{0, 0}));
  EXPECT_EQ(cache->Access(Tokens{1, 2}), (Match{2, 2}));
  EXPECT_EQ(cache->edge_count(), 2u);  // the split where the touch ends
  EXPECT_EQ(cache->Access(Tokens{6, 7, 8, 9}), (Match{0, 0}));
  EXPECT_EQ(cache.TakeCalls(), (std::vector<Tokens>{{3, 4, 5}, {9}}));
  EXPECT_EQ(cache->node_count(), 5u);
  EXPECT_EQ(cache->evicted_count(), 4u);
  EXPECT_EQ(cache->MatchPrefix(Tokens{1, 2, 3}), (Match{2, 2}));
  EXPECT_EQ(cache->MatchPrefix(Tokens{6, 7, 8, 9}), (Match{3, 8}));
}

TEST(RadixTrieCacheTest, LfuGivesNewNodesBelowTheNewestRunTheirOwnEdge) {
  // [1,2,3] continues the newest run [1,2]: lru extends it in place (one
  // stamp for all three), lfu may not ([1,2] has count 2, [3] count 1).
  // The next insert then evicts by those states: lru two nodes of the one
  // run [1,2,3] (stamp 2, older than [4,5]); lfu [3] (1, 2), after which
  // [1,2] (2, 2) ranks above [4,5] (1, 3), which loses node 5.
  Recorded<RadixTrie> lru(Lru(3));
  Recorded<RadixTrie> lfu(Lfu(3));
  for (Recorded<RadixTrie>* cache : {&lru, &lfu}) {
    EXPECT_EQ((*cache)->Insert(Tokens{1, 2}), 2u);
    EXPECT_EQ((*cache)->Insert(Tokens{1, 2, 3}), 3u);
  }
  EXPECT_EQ(lru->edge_count(), 1u);
  EXPECT_EQ(lfu->edge_count(), 2u);
  EXPECT_EQ(lru->Insert(Tokens{4, 5}), 5u);
  EXPECT_EQ(lfu->Insert(Tokens{4, 5}), 4u);
  EXPECT_EQ(lru.TakeCalls(), (std::vector<Tokens>{{2, 3}}));
  EXPECT_EQ(lfu.TakeCalls(), (std::vector<Tokens>{{3}, {5}}));
  EXPECT_EQ(lru->MatchPrefix(Tokens{1, 2}), (Match{1, 1}));
  EXPECT_EQ(lfu->MatchPrefix(Tokens{1, 2}), (Match{2, 2}));
  EXPECT_EQ(lfu->MatchPrefix(Tokens{4, 5}), (Match{1, 4}));
}

TEST(RadixTrieCacheTest, CapacityErrorLeavesTheCacheUnchanged) {
  RadixTrie cache(Lru(100), /*max_edges=*/2);
  cache.Access(Tokens{1, 2, 3});
  cache.Access(Tokens{4});
  // A recency split needs a third edge.
  EXPECT_THROW(cache.Access(Tokens{1, 2}), CapacityError);
  EXPECT_EQ(cache.node_count(), 4u);
  EXPECT_EQ(cache.edge_count(), 2u);
  EXPECT_EQ(cache.Access(Tokens{1, 2, 3}), (Match{3, 3}));
  // The limit counts edges before the insert's evictions; an edge that
  // eviction removes is free for later inserts.
  RadixTrie small(Lru(2), /*max_edges=*/2);
  small.Access(Tokens{1});
  small.Access(Tokens{2});
  EXPECT_THROW(small.Access(Tokens{3}), CapacityError);
  EXPECT_EQ(small.Access(Tokens{2, 3}), (Match{1, 2}));  // ID 3, in place
  EXPECT_EQ(small.edge_count(), 1u);                     // [1] was evicted
  EXPECT_EQ(small.Access(Tokens{4}), (Match{0, 0}));     // ID 4; evicts 3
  EXPECT_EQ(small.MatchPrefix(Tokens{4}), (Match{1, 4}));
  EXPECT_EQ(small.MatchPrefix(Tokens{2, 3}), (Match{1, 2}));
  EXPECT_EQ(small.edge_count(), 2u);
}

// One randomized workload step for the differential tests: a prefix of an
// earlier request plus a random tail over a small alphabet (extreme tokens
// included), sometimes longer than the capacity.
class RequestStream {
 public:
  explicit RequestStream(std::mt19937_64& random)
      : random_(random), letters_(1 + random() % 5) {}

  // The next request: tails up to `long_tail` tokens, one time in eight.
  Tokens Next(std::size_t long_tail) {
    const Tokens& base = seen_[random_() % seen_.size()];
    Tokens tokens(base.begin(), base.begin() + random_() % (base.size() + 1));
    const std::size_t tail =
        random_() % 8 == 0 ? random_() % (long_tail + 1) : random_() % 6;
    for (std::size_t i = 0; i < tail; ++i) {
      tokens.push_back(kAlphabet[random_() % letters_]);
    }
    seen_.push_back(tokens);
    if (seen_.size() > 64) seen_.erase(seen_.begin() + 1);  // keep {} first
    return tokens;
  }

 private:
  static constexpr Token kAlphabet[] = {0, 1, -1, INT32_MIN, INT32_MAX};
  std::mt19937_64& random_;
  std::size_t letters_;
  std::vector<Tokens> seen_ = {{}};
};

CacheOptions RandomOptions(std::mt19937_64& random) {
  static constexpr std::uint64_t kLarge[] = {200, 1000, 100000, kUnbounded - 1};
  const std::uint64_t capacity =
      random() % 8 == 0 ? kLarge[random() % 4] : random() % 65;
  // Every policy of the list, lfu's general path included.
  return CacheOptions{
      .capacity = capacity,
      .policy = kEvictionPolicies[random() % kEvictionPolicies.size()].policy};
}

// SPEC §8 against the oracle, through the harness: Access (SPEC §8 steps
// 1-4), Insert (its returned node) and MatchPrefix on random streams, with
// node_count, evicted_count and the evicted pages compared after every step.
TEST(RadixTrieCacheTest, RandomizedDifferentialAgainstReference) {
  const std::uint64_t seed = test::TestSeed();
  std::mt19937_64 random(seed);
  std::uint64_t compactions = 0;
  for (int round = 0; round < 300; ++round) {
    const CacheOptions options = RandomOptions(random);
    DifferentialChecker checker = test::CheckerOf<RadixTrie>(options);
    RequestStream stream(random);
    for (int step = 0; step < 200; ++step) {
      Tokens request = stream.Next(/*long_tail=*/100);
      const std::uint64_t kind = random() % 6;
      const Operation::Kind operation = kind == 0   ? Operation::Kind::kInsert
                                        : kind == 1 ? Operation::Kind::kMatch
                                                    : Operation::Kind::kAccess;
      ASSERT_TRUE(Agrees(checker.Apply({operation, std::move(request)})))
          << "seed " << seed << " round " << round;
    }
    compactions += test::EngineOf<RadixTrie>(checker).compactions();
  }
  EXPECT_GT(compactions, 0u);  // the stream reaches arena compaction
}

// Access(request, on_run) reports whole edges as runs: the one-pass LRU
// curve over radix equals the curve over the reference (one run per node,
// both through test::CurveMatchedTokens) at every capacity, for tokens and
// pages; at sampled capacities radix's direct LRU replay agrees with the
// reference's through the harness, and the curve gives its matched tokens.
TEST(RadixTrieCacheTest, LruCurveRunsMatchReferenceAndReplay) {
  const std::uint64_t seed = test::TestSeed();
  std::mt19937_64 random(seed);
  for (int round = 0; round < 30; ++round) {
    const std::uint64_t page_size = 1 + round % 2;
    RequestStream stream(random);
    SequenceList trace;
    for (int step = 0; step < 120; ++step) {
      trace.Append(stream.Next(/*long_tail=*/60));
    }
    const std::uint64_t distinct = checking::DistinctPrefixes(trace, page_size);
    std::vector<std::uint64_t> capacities(distinct + 2);
    std::iota(capacities.begin(), capacities.end(), 0);
    const std::vector<std::uint64_t> curve = test::CurveMatchedTokens(
        RadixTrie::kName, trace, page_size, capacities);
    ASSERT_EQ(curve, test::CurveMatchedTokens(ReferenceTrie::kName, trace,
                                              page_size, capacities))
        << "seed " << seed << " round " << round;
    for (std::uint64_t capacity = 0; capacity < capacities.size();
         capacity += 1 + distinct / 7) {
      const CacheOptions options{.capacity = capacity,
                                 .policy = EvictionPolicy::kLru,
                                 .page_size = page_size};
      DifferentialChecker checker = test::CheckerOf<RadixTrie>(options);
      ASSERT_TRUE(Agrees(checker.ApplyReplay({trace, options})))
          << "seed " << seed << " round " << round;
      PagedIndex<RadixTrie> replay(options);
      ASSERT_EQ(curve[capacity], Replay(replay, trace).matched_tokens)
          << "seed " << seed << " capacity " << capacity;
    }
  }
  RadixTrie fifo(Fifo(10));
  EXPECT_THROW(fifo.Access(Tokens{1}, [](std::uint64_t, std::uint64_t) {}),
               std::logic_error);
}

// A page hash that sends every page to one bucket: pages must be told
// apart by their content.
struct CollidingPageHash {
  std::size_t operator()(TokenSpan) const { return 42; }
};

// PagedIndex over radix against the reference through the harness, pages
// of 2 and 3 tokens with trailing partial pages; radix's pages all collide.
TEST(RadixTrieCacheTest, PagedRandomizedDifferentialAgainstReference) {
  const std::uint64_t seed = test::TestSeed();
  std::mt19937_64 random(seed);
  for (int round = 0; round < 200; ++round) {
    CacheOptions options = RandomOptions(random);
    options.page_size = 2 + random() % 2;
    DifferentialChecker checker =
        test::CheckerOf<RadixTrie, CollidingPageHash>(options);
    RequestStream stream(random);
    for (int step = 0; step < 150; ++step) {
      Tokens request = stream.Next(/*long_tail=*/150);
      const Operation::Kind operation = random() % 5 == 0
                                            ? Operation::Kind::kInsert
                                            : Operation::Kind::kAccess;
      ASSERT_TRUE(Agrees(checker.Apply({operation, std::move(request)})))
          << "seed " << seed << " round " << round;
    }
  }
}

// Long runs in a cache far smaller than the stream: the arena is compacted
// again and again, answers stay the reference's, and the newest run still
// grows in place after a compaction.
TEST(RadixTrieCacheTest, ArenaCompactionPreservesAnswers) {
  std::mt19937_64 random(7);
  for (const CacheOptions& options : {Lru(1500), Fifo(1500)}) {
    DifferentialChecker checker = test::CheckerOf<RadixTrie>(options);
    const RadixTrie& actual = test::EngineOf<RadixTrie>(checker);
    Tokens shared(700);
    for (Token& token : shared) token = static_cast<Token>(random() % 3);
    for (int step = 0; step < 400; ++step) {
      Tokens request(shared.begin(),
                     shared.begin() + random() % (shared.size() + 1));
      const std::size_t tail = random() % 400;
      for (std::size_t i = 0; i < tail; ++i) {
        request.push_back(static_cast<Token>(random() % 3));
      }
      ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kAccess, request})))
          << "step " << step;
      if (step % 50 == 49) {
        // Continue the newest run: one more node, in place.
        const std::uint64_t edges = actual.edge_count();
        request.push_back(5);
        if (request.size() <= options.capacity) {
          ASSERT_TRUE(
              Agrees(checker.Apply({Operation::Kind::kInsert, request})));
          EXPECT_LE(actual.edge_count(), edges);
        }
      }
    }
    EXPECT_GE(actual.compactions(), 20u);
    for (std::size_t length = 0; length <= shared.size(); ++length) {
      const TokenSpan prefix = TokenSpan(shared).first(length);
      ASSERT_TRUE(Agrees(checker.Apply(
          {Operation::Kind::kMatch, {prefix.begin(), prefix.end()}})));
    }
  }
}

// 100,000 random requests through a cache of 1,000 nodes: memory follows
// the nodes present, not the 10 million tokens that went through.
TEST(RadixTrieCacheTest, MemoryStaysProportionalToCapacity) {
  for (const CacheOptions& options : {Lru(1000), Fifo(1000)}) {
    std::mt19937_64 random(11);
    RadixTrie cache(options);
    std::vector<Tokens> recent = {{}};
    std::size_t peak = 0;
    std::size_t tokens = 0;
    for (int step = 0; step < 100000; ++step) {
      const Tokens& base = recent[random() % recent.size()];
      Tokens request(base.begin(), base.begin() + random() % (base.size() + 1));
      const std::size_t tail = random() % 200;
      for (std::size_t i = 0; i < tail; ++i) {
        request.push_back(static_cast<Token>(random()));
      }
      tokens += request.size();
      cache.Access(request);
      if (recent.size() == 16) recent.erase(recent.begin() + 1);
      recent.push_back(std::move(request));
      peak = std::max(peak, cache.memory_bytes());
    }
    EXPECT_GT(tokens, 10'000'000u);
    EXPECT_GT(cache.evicted_count(), 5'000'000u);
    // 4 bytes a node, about 50 an edge, the dead tokens compaction waits
    // for and a partly used chunk: about 21 KB measured, whatever the
    // stream's length.
    EXPECT_LT(peak, 48'000u) << EvictionPolicyName(options.policy);
  }
}

// Bytes in use by the program's heap, mmap'ed chunks included.
std::size_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// memory_bytes() agrees with the heap growth mallinfo2() sees, within 15%
// (as tests/memory_test.cc checks for unbounded builds), for a cache that
// evicted and compacted.
TEST(RadixTrieCacheTest, MemoryBytesIsHonestWhenBounded) {
  for (const CacheOptions& options : {Lru(300'000), Fifo(300'000)}) {
    std::mt19937_64 random(3);
    std::vector<Tokens> prefixes(7);
    for (Tokens& prefix : prefixes) {
      prefix.resize(400 + random() % 2000);
      for (Token& token : prefix) token = static_cast<Token>(random() % 128256);
    }
    const std::size_t before = HeapInUse();
    auto cache = std::make_unique<RadixTrie>(options);
    Tokens request;
    for (int step = 0; step < 2000; ++step) {
      const Tokens& prefix = prefixes[random() % prefixes.size()];
      request.assign(prefix.begin(), prefix.end());
      const std::size_t tail = random() % 4000;
      for (std::size_t i = 0; i < tail; ++i) {
        request.push_back(static_cast<Token>(random() % 128256));
      }
      cache->Access(request);
    }
    const std::size_t growth = HeapInUse() - before;
    ASSERT_GT(cache->evicted_count(), 0u);
    ASSERT_GT(cache->compactions(), 0u);
    EXPECT_NEAR(static_cast<double>(cache->memory_bytes()) /
                    static_cast<double>(growth),
                1.0, 0.15)
        << "memory_bytes() " << cache->memory_bytes() << " vs heap growth "
        << growth;
  }
}

}  // namespace
}  // namespace kvprefix
