// Tests of what is particular to the radix engine (optimized/radix_trie.h):
// implicit node IDs along split and extended runs, edge splits, matches that
// end inside an edge, SIMD run compares that stop at every offset, arena
// chunk boundaries, deep chains, wide fan-out, extreme tokens and the edge
// capacity limit. The behaviour shared by all engines is in the typed suite.
#include "optimized/radix_trie.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "checking/differential.h"

namespace kvprefix {
namespace {

using checking::DifferentialChecker;
using checking::Operation;

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
  std::uint64_t seed = std::random_device{}();
  if (const char* env = std::getenv("KVPREFIX_TEST_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  }
  std::cout << "seed " << seed << " (rerun with KVPREFIX_TEST_SEED=" << seed
            << ")\n";
  std::mt19937_64 random(seed);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(std::make_unique<EngineAdapter<RadixTrie>>());
    DifferentialChecker checker(std::move(engines));
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
      const auto report = checker.Apply(Operation{kind, std::move(tokens)});
      ASSERT_FALSE(report.has_value()) << "seed " << seed << "\n" << *report;
    }
  }
}

}  // namespace
}  // namespace kvprefix
