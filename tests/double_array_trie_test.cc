// Tests of what is particular to the double-array engine
// (optimized/double_array_trie.h): relocation moving every sibling and
// re-pointing the moved nodes' children, the token-to-code mapping at the
// int32 extremes and beyond the direct range (hashed codes that collide),
// the slot capacity limit, wide fan-out, deep chains, memory bounded on
// adversarial token distributions, the capacity-bounded cache (SPEC §8:
// hand-worked cases, slot reuse, memory proportional to the nodes present)
// and seeded randomized differential tests against the reference, bounded
// and paged too. The behaviour shared by all engines, the capacity case
// documents included, is in the typed suites.
//
// Every comparison with the reference goes through the differential
// harness (checking/differential.h, via testing/engine_checker.h). The
// randomized tests print their seed; rerun one with
// KVPREFIX_TEST_SEED=<seed>.
#include "optimized/double_array_trie.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "checking/differential.h"
#include "optimized/radix_trie.h"
#include "testing/engine_checker.h"
#include "testing/shared_prefix_sequences.h"

namespace kvprefix {
namespace {

using checking::DifferentialChecker;
using checking::EvictedPages;
using checking::Operation;
using test::Agrees;

Match MatchOf(const DoubleArrayTrie& trie, std::vector<Token> request) {
  return trie.MatchPrefix(request);
}

NodeId InsertOf(DoubleArrayTrie& trie, std::vector<Token> sequence) {
  return trie.Insert(sequence);
}

TEST(DoubleArrayTrieTest, SeedExample) {
  DoubleArrayTrie trie;
  EXPECT_EQ(InsertOf(trie, {1, 2}), 2u);
  EXPECT_EQ(InsertOf(trie, {1, 2, 3}), 3u);
  EXPECT_EQ(InsertOf(trie, {4}), 4u);
  EXPECT_EQ(MatchOf(trie, {1, 2, 9}), (Match{2, 2}));
  EXPECT_EQ(MatchOf(trie, {4, 5}), (Match{1, 4}));
  EXPECT_EQ(MatchOf(trie, {5}), (Match{0, 0}));
  EXPECT_EQ(MatchOf(trie, {}), (Match{0, 0}));
  EXPECT_EQ(trie.node_count(), 4u);
}

// Former bug in double-array libraries: on a conflict, relocating only the
// new child (or forgetting to re-point the moved nodes' children) loses
// edges. Node [0] gets children 10, 11, 12 (each with a child of its own),
// the root gets a larger family, then [0, 20] needs a slot the root's family
// holds: cedar's rule moves the smaller family, [0]'s three children, and
// all three and their children must stay reachable.
TEST(DoubleArrayTrieTest, RelocationMovesEverySiblingAndFixesTheirChildren) {
  DoubleArrayTrie trie;
  const std::vector<std::vector<Token>> before = {
      {0, 10, 5}, {0, 11, 6}, {0, 12, 7}, {9}, {10}, {11}, {12}, {13}, {14}};
  for (const auto& sequence : before) trie.Insert(sequence);
  const std::uint64_t moved_before = trie.relocated_nodes();

  // Find a token whose edge from [0] collides with another node's slot and
  // forces [0]'s family to move; the layout decides which token that is.
  NodeId created = 0;
  Token token = 20;
  for (std::uint64_t moved = moved_before; token < 2000; ++token) {
    const std::uint64_t nodes = trie.node_count();
    created = InsertOf(trie, {0, token});
    ASSERT_EQ(trie.node_count(), nodes + 1);
    if (trie.relocated_nodes() - moved >= 3) break;  // a whole family moved
    moved = trie.relocated_nodes();
  }
  ASSERT_LT(token, 2000) << "no insert relocated the family of [0]";
  EXPECT_EQ(MatchOf(trie, {0, token}), (Match{2, created}));
  // Every earlier sequence keeps its full path and node IDs (creation order:
  // [0]=1, [0,10]=2, [0,10,5]=3, [0,11]=4, ...).
  EXPECT_EQ(MatchOf(trie, {0, 10, 5, 99}), (Match{3, 3}));
  EXPECT_EQ(MatchOf(trie, {0, 11, 6}), (Match{3, 5}));
  EXPECT_EQ(MatchOf(trie, {0, 12, 7}), (Match{3, 7}));
  EXPECT_EQ(MatchOf(trie, {0, 12}), (Match{2, 6}));
  for (Token root_child = 9; root_child <= 14; ++root_child) {
    EXPECT_EQ(MatchOf(trie, {root_child}),
              (Match{1, static_cast<NodeId>(root_child - 1)}));
  }
  // Still consistent with the reference after many more relocations.
  DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>();
  for (const auto& sequence : before) {
    ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kInsert, sequence})));
  }
  for (Token t = 20; t < 600; ++t) {
    ASSERT_TRUE(
        Agrees(checker.Apply({Operation::Kind::kInsert, {0, t % 37, t}})));
    ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kInsert, {t % 23, t}})));
    for (const auto& sequence : before) {
      ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kMatch, sequence})));
    }
  }
}

// Former bug: a family spread over the vocabulary was placed at the end of
// the used slots and left a hole as wide as its spread, and the new branch's
// chain started at the end again, so no hole was ever filled. A
// tree-of-thought-shaped trie (a 512-token problem, then 4-way branching
// with 32..64-token steps over a 128,256-token vocabulary) took 614 bytes
// per node; its array now stays within a few times the node count.
TEST(DoubleArrayTrieTest, BranchingEveryStepDoesNotLeaveVocabularyWideHoles) {
  constexpr std::size_t kBranching = 4;
  constexpr std::size_t kDepth = 6;
  std::mt19937_64 random(2014);
  const auto tokens = [&](std::size_t count) {
    std::vector<Token> out(count);
    for (Token& token : out) token = static_cast<Token>(random() % 128256);
    return out;
  };
  // steps[level][i]: the step of the i-th node of that level.
  std::vector<std::vector<std::vector<Token>>> steps(kDepth);
  for (std::size_t level = 0, width = kBranching; level < kDepth;
       ++level, width *= kBranching) {
    for (std::size_t i = 0; i < width; ++i) {
      steps[level].push_back(tokens(32 + random() % 33));
    }
  }
  const std::vector<Token> problem = tokens(512);
  DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>();
  const DoubleArrayTrie& trie = test::EngineOf<DoubleArrayTrie>(checker);
  std::size_t leaves = 1;
  for (std::size_t level = 0; level < kDepth; ++level) leaves *= kBranching;
  for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
    std::vector<Token> path = problem;
    for (std::size_t level = 0, node = 0, digits = leaf; level < kDepth;
         ++level, digits /= kBranching) {
      node = node * kBranching + digits % kBranching;
      path.insert(path.end(), steps[level][node].begin(),
                  steps[level][node].end());
    }
    ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kInsert, path})));
    ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kMatch, path})));
  }
  ASSERT_GT(trie.node_count(), 60000u);
  const double bytes_per_node = static_cast<double>(trie.memory_bytes()) /
                                static_cast<double>(trie.node_count());
  EXPECT_LT(bytes_per_node, 40.0);
  EXPECT_LT(trie.slot_count(), 3 * trie.node_count());
}

TEST(DoubleArrayTrieTest, ExtremeTokensAndCodesBeyondTheDirectRange) {
  constexpr Token kDirect = DoubleArrayTrie::kDirectTokens;
  const std::vector<Token> extremes = {
      INT32_MIN,   INT32_MIN + 1, -2,       -1, 0, 1, kDirect - 1, kDirect,
      kDirect + 1, INT32_MAX - 1, INT32_MAX};
  DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>();
  for (Token a : extremes) {
    for (Token b : extremes) {
      ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kInsert, {a, b, a}})));
    }
  }
  // Thousands of codes beyond the direct range, as siblings and as chains.
  std::mt19937_64 random(7);
  for (int i = 0; i < 3000; ++i) {
    const Token wild = static_cast<Token>(random());
    ASSERT_TRUE(
        Agrees(checker.Apply({Operation::Kind::kInsert, {-1, wild, wild}})));
    ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kInsert, {wild, 5}})));
  }
  for (Token a : extremes) {
    for (Token b : extremes) {
      ASSERT_TRUE(
          Agrees(checker.Apply({Operation::Kind::kMatch, {a, b, a, b}})));
    }
  }
  // A token that was never inserted has no code: the match stops there.
  ASSERT_TRUE(
      Agrees(checker.Apply({Operation::Kind::kMatch, {-1, 123456789, 5}})));
  ASSERT_TRUE(
      Agrees(checker.Apply({Operation::Kind::kMatch, {INT32_MIN, -12345}})));
}

TEST(DoubleArrayTrieTest, UnknownTokenStopsTheMatch) {
  DoubleArrayTrie trie;
  const NodeId five = InsertOf(trie, {5});
  InsertOf(trie, {5, -7});
  EXPECT_EQ(MatchOf(trie, {5, -8, -7}), (Match{1, five}));
  EXPECT_EQ(MatchOf(trie, {-8}), (Match{0, kRootNode}));
}

TEST(DoubleArrayTrieTest, SlotLimitThrowsCapacityErrorBeforeWrapping) {
  DoubleArrayTrie trie(/*max_slots=*/2000);
  std::vector<Token> chain(5000);
  std::iota(chain.begin(), chain.end(), 0);
  try {
    trie.Insert(chain);
    FAIL() << "a 5000-node chain fit in 2000 slots";
  } catch (const CapacityError& error) {
    EXPECT_NE(std::string(error.what()).find("limit is 2000"),
              std::string::npos)
        << error.what();
  }
  // The nodes created before the throw form a valid prefix of the chain.
  const std::uint64_t kept = trie.node_count();
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 2000u);
  EXPECT_EQ(trie.MatchPrefix(chain), (Match{kept, kept}));
  EXPECT_LE(trie.slot_count(), 2000u);
  EXPECT_THROW(DoubleArrayTrie(1), std::invalid_argument);
  EXPECT_THROW(DoubleArrayTrie(DoubleArrayTrie::kMaxSlots + 1),
               std::invalid_argument);
}

TEST(DoubleArrayTrieTest, HundredThousandRootChildren) {
  DoubleArrayTrie trie;
  constexpr Token kChildren = 100000;
  for (Token t = 0; t < kChildren; ++t) {
    ASSERT_EQ(InsertOf(trie, {t, t % 97, t % 5}),
              static_cast<NodeId>(3 * t + 3));
  }
  for (Token t = 0; t < kChildren; ++t) {
    ASSERT_EQ(MatchOf(trie, {t, t % 97, t % 5, 1}),
              (Match{3, static_cast<NodeId>(3 * t + 3)}));
  }
  EXPECT_EQ(MatchOf(trie, {kChildren}), (Match{0, kRootNode}));
  // Relocations moved small families, never the root's 100,000 children
  // over and over.
  EXPECT_LT(trie.relocated_nodes(), 10u * kChildren);
}

// Distinct first tokens spread over the vocabulary make the root a hash
// node at once; past 65,536 nodes and 1,024 hashed children the unbounded
// root indexes its children by token (root_children_). Every answer before
// and after the index exists, including children added after it, tokens
// outside the direct range (left to edges_) and first tokens never seen,
// is the reference's.
TEST(DoubleArrayTrieTest, RootChildrenIndexedByTokenAnswerAsTheReference) {
  DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>();
  std::vector<Token> firsts(1 << 18);
  std::iota(firsts.begin(), firsts.end(), 0);
  std::mt19937 random(2026);
  std::shuffle(firsts.begin(), firsts.end(), random);
  const auto insert = [&](std::vector<Token> sequence) {
    return Agrees(checker.Apply({Operation::Kind::kInsert, sequence}));
  };
  const auto match = [&](std::vector<Token> request) {
    return Agrees(checker.Apply({Operation::Kind::kMatch, request}));
  };
  for (std::size_t i = 0; i < 50000; ++i) {
    const Token first = firsts[i];
    ASSERT_TRUE(insert({first, static_cast<Token>(i % 7)}));
    if (i % 1000 == 0) {
      // Outside the direct range: hashed codes, always edges_'.
      ASSERT_TRUE(insert({static_cast<Token>(1 << 18) + first, 3}));
      ASSERT_TRUE(insert({-1 - first, 4}));
    }
    if (i % 97 == 0) {
      ASSERT_TRUE(match({firsts[i / 2], static_cast<Token>((i / 2) % 7), 9}));
      ASSERT_TRUE(match({firsts[60000 + i % 1000]}));  // never inserted
    }
  }
  for (std::size_t i = 0; i < 50000; i += 7) {
    ASSERT_TRUE(match({firsts[i], static_cast<Token>(i % 7)}));
    ASSERT_TRUE(match({firsts[i], static_cast<Token>(i % 7 + 1)}));
  }
  ASSERT_TRUE(match({static_cast<Token>(1 << 18) + firsts[3000], 3}));
  ASSERT_TRUE(match({-1 - firsts[3000], 4}));
  ASSERT_TRUE(match({static_cast<Token>(1 << 18) + firsts[3001], 3}));
  EXPECT_GE(test::EngineOf<DoubleArrayTrie>(checker).node_count(), 100000u);
}

TEST(DoubleArrayTrieTest, FiveThousandChildrenAtOneNode) {
  DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>();
  std::mt19937_64 random(11);
  for (Token t = 0; t < 6000; ++t) {
    // Interleave deep siblings with chains elsewhere so slots conflict.
    ASSERT_TRUE(Agrees(
        checker.Apply({Operation::Kind::kInsert, {1, 2, t * 37 % 200000}})));
    ASSERT_TRUE(
        Agrees(checker.Apply({Operation::Kind::kInsert,
                              {static_cast<Token>(random() % 50), t, t}})));
  }
  for (Token t = 0; t < 6000; ++t) {
    ASSERT_TRUE(Agrees(
        checker.Apply({Operation::Kind::kMatch, {1, 2, t * 37 % 200000, 4}})));
  }
}

TEST(DoubleArrayTrieTest, DeepChainAndLongSequence) {
  DoubleArrayTrie trie;
  std::vector<Token> chain(100000, 7);  // one token repeated: 100,000 levels
  EXPECT_EQ(trie.Insert(chain), 100000u);
  std::vector<Token> longer(200000);
  std::iota(longer.begin(), longer.end(), -100000);
  EXPECT_EQ(trie.Insert(longer), 300000u);
  chain.push_back(8);
  EXPECT_EQ(trie.MatchPrefix(chain), (Match{100000, 100000}));
  EXPECT_EQ(trie.Insert(chain), 300001u);
  EXPECT_EQ(trie.MatchPrefix(longer), (Match{200000, 300000}));
  longer[150000] = 1 << 30;
  EXPECT_EQ(trie.MatchPrefix(longer), (Match{150000, 250000}));
}

// Minor page faults of this process so far.
long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// The arrays grow by realloc, which moves a large block with mremap instead
// of copying it. Advising each grown block for transparent huge pages once
// defeated that: every growth copied and faulted in the whole block again
// (token-mode replay of the synthetic trace: 1.06 million faults instead of
// 70,000, 3.9 s instead of 0.7 s). Building 4 million nodes must fault in
// each page of the engine about once, not once per growth.
TEST(DoubleArrayTrieTest, GrowingTheArraysDoesNotFaultThemInAgain) {
  std::mt19937 random(7);
  std::vector<Token> sequence(2000);
  DoubleArrayTrie trie;
  const long before = MinorFaults();
  for (int i = 0; i < 2000; ++i) {
    for (Token& token : sequence) token = static_cast<Token>(random() % 50000);
    trie.Insert(sequence);
  }
  const long faults = MinorFaults() - before;
  const long pages = static_cast<long>(trie.memory_bytes() / 4096);
  EXPECT_GT(trie.node_count(), 3'900'000u);
  EXPECT_LT(faults, 2 * pages)
      << faults << " faults for " << pages << " pages of memory_bytes()";
}

TEST(DoubleArrayTrieTest, RandomizedDifferentialAgainstTheReference) {
  const std::uint64_t seed = test::TestSeed();
  std::mt19937_64 random(seed);
  for (int round = 0; round < 40; ++round) {
    // Alphabets from tiny (deep sharing, many relocations) to wide.
    const std::uint32_t alphabet = round % 2 ? 2 + random() % 6 : 300000;
    const SequenceList base = test::SharedPrefixSequences(
        random(), 1 + random() % 300, 1 + random() % 60, alphabet);
    DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>();
    for (TokenSpan sequence : base) {
      const auto kind = random() % 3 == 0 ? Operation::Kind::kMatch
                                          : Operation::Kind::kInsert;
      std::vector<Token> tokens(sequence.begin(), sequence.end());
      if (random() % 8 == 0 && !tokens.empty()) {
        tokens[random() % tokens.size()] = static_cast<Token>(random());
      }
      ASSERT_TRUE(Agrees(checker.Apply({kind, tokens}))) << "seed " << seed;
    }
    for (TokenSpan sequence : base) {
      ASSERT_TRUE(Agrees(checker.Apply(
          {Operation::Kind::kMatch, {sequence.begin(), sequence.end()}})))
          << "seed " << seed;
    }
  }
}

// ---------------------------------------------------------------------------
// Hashed codes. Tokens outside [0, kDirectTokens) share 2^29 codes, so two
// siblings may collide; the engine then keeps both under a hash node.

// Two distinct tokens outside the direct range with one code, found by a
// birthday search (about 2^15 tries).
std::pair<Token, Token> CollidingTokens(std::uint64_t seed) {
  std::mt19937_64 random(seed);
  absl::flat_hash_map<std::uint32_t, Token> seen;
  for (;;) {
    const auto token = static_cast<Token>(random() | (1u << 30));
    const auto [it, added] =
        seen.emplace(DoubleArrayTrie::TokenCode(token), token);
    if (!added && it->second != token) return {it->second, token};
  }
}

TEST(DoubleArrayTrieTest, SiblingsWithCollidingHashedCodes) {
  const auto [a, b] = CollidingTokens(1);
  ASSERT_EQ(DoubleArrayTrie::TokenCode(a), DoubleArrayTrie::TokenCode(b));
  ASSERT_GE(DoubleArrayTrie::TokenCode(a), DoubleArrayTrie::kDirectTokens + 1);
  DoubleArrayTrie trie;
  EXPECT_EQ(InsertOf(trie, {5, a}), 2u);
  EXPECT_EQ(MatchOf(trie, {5, b}), (Match{1, 1}));  // same code, other label
  EXPECT_EQ(InsertOf(trie, {5, b}), 3u);
  EXPECT_EQ(InsertOf(trie, {a, b, a}), 6u);  // as a chain, too
  EXPECT_EQ(InsertOf(trie, {a, a}), 7u);
  EXPECT_EQ(MatchOf(trie, {5, a, 1}), (Match{2, 2}));
  EXPECT_EQ(MatchOf(trie, {5, b, 1}), (Match{2, 3}));
  EXPECT_EQ(MatchOf(trie, {a, b, a}), (Match{3, 6}));
  EXPECT_EQ(MatchOf(trie, {a, a}), (Match{2, 7}));
  EXPECT_EQ(MatchOf(trie, {b}), (Match{0, 0}));
  EXPECT_GE(trie.hash_node_count(), 1u);
}

// ---------------------------------------------------------------------------
// Memory bounded on any input: <= 64 bytes per node and <= 4x
// the radix engine on the same input, on token distributions that once cost
// the double array 6.9 KB per node (families whose codes spread over 2^18).

struct MemoryCase {
  const char* name;
  std::vector<std::vector<Token>> sequences;
};

// [parent(p), child(p, c)] for p < parents, c < children.
template <typename P, typename C>
std::vector<std::vector<Token>> ParentsAndChildren(int parents, int children,
                                                   P parent, C child) {
  std::vector<std::vector<Token>> out;
  for (int p = 0; p < parents; ++p) {
    for (int c = 0; c < children; ++c) out.push_back({parent(p), child(p, c)});
  }
  return out;
}

std::vector<MemoryCase> AdversarialMemoryCases() {
  std::mt19937_64 random(16);
  const auto any = [&](int, int = 0) { return static_cast<Token>(random()); };
  const auto mult = [](int shift) {
    return [shift](int k, int c = -1) {
      return static_cast<Token>((c < 0 ? k : c) * (1 << shift));
    };
  };
  const auto alternating = [](int k, int c = -1) {
    const int v = (c < 0 ? k : c) * 871;
    return static_cast<Token>(v % 2 ? -v : v);
  };
  std::vector<MemoryCase> cases;
  cases.push_back({"300x300 multiples of 2^16",
                   ParentsAndChildren(300, 300, mult(16), mult(16))});
  cases.push_back({"300x300 multiples of 2^18",
                   ParentsAndChildren(300, 300, mult(18), mult(18))});
  cases.push_back({"300x300 alternating signs",
                   ParentsAndChildren(300, 300, alternating, alternating)});
  std::vector<Token> parents(1000);
  for (Token& parent : parents) parent = static_cast<Token>(random());
  cases.push_back({"1000x100 sparse over int32",
                   ParentsAndChildren(
                       1000, 100, [&](int p) { return parents[p]; }, any)});
  cases.push_back({"1000x100 direct range",
                   ParentsAndChildren(
                       1000, 100, [](int p) { return p; },
                       [&](int, int) {
                         return static_cast<Token>(random() % (1u << 18));
                       })});
  cases.push_back({"1x100000 sparse over int32",
                   ParentsAndChildren(
                       1, 100000, [](int) { return 7; }, any)});
  // A random recursive tree: node i hangs under a random earlier node.
  MemoryCase tree{"random tree, 100000 nodes", {{}}};
  for (int i = 1; i <= 100000; ++i) {
    std::vector<Token> path = tree.sequences[random() % tree.sequences.size()];
    path.push_back(static_cast<Token>(random()));
    tree.sequences.push_back(std::move(path));
  }
  cases.push_back(std::move(tree));
  // A random deep tree: each sequence extends a random prefix of an earlier
  // one by 1..64 tokens, sparse over int32 or multiples of 2^16.
  for (const bool sparse : {true, false}) {
    MemoryCase deep{sparse ? "random deep tree, sparse over int32"
                           : "random deep tree, multiples of 2^16",
                    {}};
    for (int i = 0; i < 4000; ++i) {
      std::vector<Token> sequence;
      if (!deep.sequences.empty()) {
        const auto& base = deep.sequences[random() % deep.sequences.size()];
        sequence.assign(base.begin(),
                        base.begin() + random() % (base.size() + 1));
      }
      for (std::size_t n = 1 + random() % 64; n > 0; --n) {
        sequence.push_back(sparse
                               ? static_cast<Token>(random())
                               : static_cast<Token>((random() % 30000) << 16));
      }
      deep.sequences.push_back(std::move(sequence));
    }
    cases.push_back(std::move(deep));
  }
  return cases;
}

TEST(DoubleArrayTrieTest, MemoryBoundedOnAdversarialTokenDistributions) {
  for (const MemoryCase& memory_case : AdversarialMemoryCases()) {
    const char* name = memory_case.name;
    // Built through the harness, so every insert's node and the node
    // counts are the reference's.
    DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>();
    const DoubleArrayTrie& trie = test::EngineOf<DoubleArrayTrie>(checker);
    RadixTrie radix;
    for (const auto& sequence : memory_case.sequences) {
      ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kInsert, sequence})))
          << name;
      radix.Insert(sequence);
    }
    ASSERT_GT(trie.node_count(), 80000u) << name;
    const double per_node = static_cast<double>(trie.memory_bytes()) /
                            static_cast<double>(trie.node_count());
    const double to_radix = static_cast<double>(trie.memory_bytes()) /
                            static_cast<double>(radix.memory_bytes());
    std::printf("%-40s %8llu nodes %6.1f bytes/node %5.2fx radix\n", name,
                static_cast<unsigned long long>(trie.node_count()), per_node,
                to_radix);
    EXPECT_LE(per_node, 64.0) << name;
    EXPECT_LE(to_radix, 4.0) << name;
    // Answers still right.
    for (std::size_t i = 0; i < memory_case.sequences.size(); i += 97) {
      ASSERT_TRUE(Agrees(
          checker.Apply({Operation::Kind::kMatch, memory_case.sequences[i]})))
          << name;
    }
  }
}

// ---------------------------------------------------------------------------
// Capacity (SPEC §8).

CacheOptions Bounded(std::uint64_t capacity,
                     EvictionPolicy policy = EvictionPolicy::kLru,
                     std::uint64_t page_size = 1) {
  return CacheOptions{
      .capacity = capacity, .policy = policy, .page_size = page_size};
}

TEST(DoubleArrayTrieBoundedTest, OptionsAndConstruction) {
  EXPECT_THROW(DoubleArrayTrie(Bounded(3, EvictionPolicy::kLru, 2)),
               std::invalid_argument);
  DoubleArrayTrie unbounded{CacheOptions{}};
  EXPECT_FALSE(unbounded.options().bounded());
  const DoubleArrayTrie fifo(Bounded(7, EvictionPolicy::kFifo));
  EXPECT_EQ(fifo.options(), Bounded(7, EvictionPolicy::kFifo));
  EXPECT_EQ(fifo.node_count(), 0u);
  EXPECT_EQ(fifo.evicted_count(), 0u);
  // A capacity no request reaches behaves as the unbounded index.
  DoubleArrayTrie large(Bounded(kUnbounded - 1));
  EXPECT_EQ(InsertOf(large, {1, 2}), 2u);
  EXPECT_EQ(InsertOf(large, {1, 2, 3}), 3u);
  EXPECT_EQ(MatchOf(large, {1, 2, 9}), (Match{2, 2}));
}

// C = 0 stores nothing, yet every node is created (IDs advance), evicted
// and reported.
TEST(DoubleArrayTrieBoundedTest, CapacityZero) {
  DoubleArrayTrie trie(Bounded(0));
  EvictedPages evicted;
  trie.SetEvictionListener(evicted.Listener(1));
  EXPECT_EQ(InsertOf(trie, {1, 2, 3}), kRootNode);
  EXPECT_EQ(trie.node_count(), 0u);
  EXPECT_EQ(trie.evicted_count(), 3u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[1],[2],[3]}");
  const std::vector<Token> request = {1, 2};
  EXPECT_EQ(trie.Access(request), (Match{0, kRootNode}));
  EXPECT_EQ(trie.evicted_count(), 5u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[1],[2]}");
  EXPECT_EQ(InsertOf(trie, {}), kRootNode);
  EXPECT_EQ(MatchOf(trie, {1}), (Match{0, kRootNode}));
  // IDs were used up: with C = 1 the next node would be 6. Check on a
  // second cache with the same history.
  DoubleArrayTrie one(Bounded(1));
  InsertOf(one, {1, 2, 3});           // keeps [1] = 1; 2 and 3 never stored
  InsertOf(one, {1, 2});              // [1,2] = 4, never stored
  EXPECT_EQ(InsertOf(one, {5}), 5u);  // evicts [1]
  EXPECT_EQ(MatchOf(one, {5}), (Match{1, 5}));
  EXPECT_EQ(MatchOf(one, {1}), (Match{0, kRootNode}));
}

// "A request longer than C keeps only its first C nodes", after every other
// node has gone; the rest get IDs and are reported, never stored. Only
// under the policies whose order guarantees it (kKeepsFirstCapacityNodes,
// kvprefix/cache_model.h); LfuMayEvictTheRequestsOwnNewNodes runs the same
// requests under lfu.
TEST(DoubleArrayTrieBoundedTest, RequestLongerThanCapacity) {
  int policies_run = 0;
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    const EvictionPolicy policy = entry.policy;
    if (!VisitPolicy(policy, []<typename P>(P) {
          return P::kKeepsFirstCapacityNodes;
        })) {
      continue;
    }
    ++policies_run;
    DoubleArrayTrie trie(Bounded(3, policy));
    EvictedPages evicted;
    trie.SetEvictionListener(evicted.Listener(1));
    EXPECT_EQ(InsertOf(trie, {9}), 1u);
    EXPECT_EQ(InsertOf(trie, {1, 2, 3, 4, 5}), 4u);  // IDs 2..6, keeps 2..4
    EXPECT_EQ(trie.node_count(), 3u);
    EXPECT_EQ(trie.evicted_count(), 3u);
    EXPECT_EQ(test::TakeSorted(evicted), "evicted {[4],[5],[9]}");
    EXPECT_EQ(MatchOf(trie, {1, 2, 3, 4}), (Match{3, 4}));
    EXPECT_EQ(MatchOf(trie, {9}), (Match{0, kRootNode}));
    // Fully matched but longer than C: only the tail beyond C is new.
    EXPECT_EQ(InsertOf(trie, {1, 2, 3, 4}), 4u);  // [1,2,3,4] = 7, dropped
    EXPECT_EQ(trie.evicted_count(), 4u);
    EXPECT_EQ(InsertOf(trie, {6}), 8u);  // evicts [1,2,3] under both policies
    EXPECT_EQ(MatchOf(trie, {1, 2, 3}), (Match{2, 3}));
    EXPECT_EQ(MatchOf(trie, {6}), (Match{1, 8}));
  }
  EXPECT_GE(policies_run, 2);  // lru and fifo at least
}

// The requests of RequestLongerThanCapacity under lfu, C = 3: every node is
// stored, then step 4 runs by (count, stamp), so a request's new nodes
// (count 1) may go before an older, more used leaf, down to all of them.
TEST(DoubleArrayTrieBoundedTest, LfuMayEvictTheRequestsOwnNewNodes) {
  DoubleArrayTrie trie(Bounded(3, EvictionPolicy::kLfu));
  EvictedPages evicted;
  trie.SetEvictionListener(evicted.Listener(1));
  EXPECT_EQ(InsertOf(trie, {9}), 1u);  // (count 1, stamp 1)
  // IDs 2..6, all (1, 2): [9] goes first (stamp 1), then [..5] and [..4].
  EXPECT_EQ(InsertOf(trie, {1, 2, 3, 4, 5}), 4u);
  EXPECT_EQ(trie.node_count(), 3u);
  EXPECT_EQ(trie.evicted_count(), 3u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[4],[5],[9]}");
  // [1], [1,2], [1,2,3] touched to (2, 3); the new [1,2,3,4] = 7 is (1, 3),
  // the only leaf, and goes: the answer is the deepest node left, ID 4.
  EXPECT_EQ(InsertOf(trie, {1, 2, 3, 4}), 4u);
  EXPECT_EQ(trie.evicted_count(), 4u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[4]}");
  // [6] = 8 is (1, 4), below the leaf [1,2,3] at (2, 3): it goes at once,
  // where lru and fifo evict [1,2,3] instead.
  const std::vector<Token> six = {6};
  EXPECT_EQ(trie.Access(six), (Match{0, kRootNode}));
  EXPECT_EQ(trie.evicted_count(), 5u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[6]}");
  EXPECT_EQ(MatchOf(trie, {6}), (Match{0, kRootNode}));
  EXPECT_EQ(MatchOf(trie, {1, 2, 3, 4}), (Match{3, 4}));
  // A new node starts at count 1, below every leaf touched twice: [6]
  // (ID 9) goes again, and so does [1,6] (ID 10, (1, 6)) below [1,2,3]
  // at (2, 3), though its parent [1] (ID 2) is now at (3, 6).
  EXPECT_EQ(InsertOf(trie, {6}), kRootNode);
  EXPECT_EQ(InsertOf(trie, {1, 6}), 2u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[6],[6]}");
  EXPECT_EQ(MatchOf(trie, {1, 6}), (Match{1, 2}));
  EXPECT_EQ(trie.node_count(), 3u);
  EXPECT_EQ(trie.evicted_count(), 7u);
}

// C = 2: [1], [1], then [2,3,4]. lfu keeps the twice-used [1] and evicts
// the new [2,3,4]'s tail (count 1), deepest first: [1] and [2] (IDs 1, 2)
// stay. lru and fifo keep the new request's first C nodes, [2] and [2,3]
// (IDs 2, 3), evict [1] and never store [2,3,4] (ID 4).
TEST(DoubleArrayTrieBoundedTest, LfuKeepsTheFrequentPrefix) {
  DoubleArrayTrie lfu(Bounded(2, EvictionPolicy::kLfu));
  EvictedPages evicted;
  lfu.SetEvictionListener(evicted.Listener(1));
  EXPECT_EQ(InsertOf(lfu, {1}), 1u);
  EXPECT_EQ(InsertOf(lfu, {1}), 1u);
  EXPECT_EQ(InsertOf(lfu, {2, 3, 4}), 2u);
  EXPECT_EQ(lfu.node_count(), 2u);
  EXPECT_EQ(lfu.evicted_count(), 2u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[3],[4]}");
  EXPECT_EQ(MatchOf(lfu, {1}), (Match{1, 1}));
  EXPECT_EQ(MatchOf(lfu, {2, 3, 4}), (Match{1, 2}));
  for (const EvictionPolicy policy :
       {EvictionPolicy::kLru, EvictionPolicy::kFifo}) {
    DoubleArrayTrie trie(Bounded(2, policy));
    InsertOf(trie, {1});
    InsertOf(trie, {1});
    EXPECT_EQ(InsertOf(trie, {2, 3, 4}), 3u);
    EXPECT_EQ(MatchOf(trie, {1}), (Match{0, kRootNode}));
    EXPECT_EQ(MatchOf(trie, {2, 3, 4}), (Match{2, 3}));
    EXPECT_EQ(trie.evicted_count(), 2u);
  }
}

// C = 2: [1], [2], touch [1], then [3]. LRU evicts [2] (least recently
// used), FIFO evicts [1] (oldest).
TEST(DoubleArrayTrieBoundedTest, LruAndFifoDiffer) {
  DoubleArrayTrie lru(Bounded(2, EvictionPolicy::kLru));
  DoubleArrayTrie fifo(Bounded(2, EvictionPolicy::kFifo));
  for (DoubleArrayTrie* trie : {&lru, &fifo}) {
    InsertOf(*trie, {1});
    InsertOf(*trie, {2});
    InsertOf(*trie, {1});
    EXPECT_EQ(InsertOf(*trie, {3}), 3u);
  }
  EXPECT_EQ(MatchOf(lru, {1}), (Match{1, 1}));
  EXPECT_EQ(MatchOf(lru, {2}), (Match{0, 0}));
  EXPECT_EQ(MatchOf(fifo, {1}), (Match{0, 0}));
  EXPECT_EQ(MatchOf(fifo, {2}), (Match{1, 2}));
  // A prefix evicted and inserted again gets a new ID.
  EXPECT_EQ(InsertOf(fifo, {1}), 4u);
}

// A parent with several children keeps a children_ entry (the codes of its
// children); evicting one child edits the entry, evicting the last removes
// it, and the parent, now a leaf, is evicted by its own key later.
TEST(DoubleArrayTrieBoundedTest, EvictingAChildOfANodeWithAChildrenEntry) {
  DoubleArrayTrie trie(Bounded(5, EvictionPolicy::kLru));
  EvictedPages evicted;
  trie.SetEvictionListener(evicted.Listener(1));
  InsertOf(trie, {1, 2});  // [1] = 1, [1,2] = 2 (at slot [1] + 1)
  InsertOf(trie, {1, 3});  // [1,3] = 3: [1] now has an entry
  InsertOf(trie, {1, 4});  // [1,4] = 4
  InsertOf(trie, {1, 2});  // touch [1,2]
  EXPECT_EQ(InsertOf(trie, {7}), 5u);
  EXPECT_EQ(InsertOf(trie, {8}), 6u);  // evicts [1,3] (stamp 2)
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[3]}");
  EXPECT_EQ(MatchOf(trie, {1, 3}), (Match{1, 1}));
  EXPECT_EQ(MatchOf(trie, {1, 2}), (Match{2, 2}));
  EXPECT_EQ(MatchOf(trie, {1, 4}), (Match{2, 4}));
  EXPECT_EQ(InsertOf(trie, {9}), 7u);   // evicts [1,4] (stamp 3)
  EXPECT_EQ(InsertOf(trie, {10}), 8u);  // evicts [1,2] (stamp 4): [1] a leaf
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[2],[4]}");
  EXPECT_EQ(MatchOf(trie, {1, 2}), (Match{1, 1}));
  EXPECT_EQ(InsertOf(trie, {11}), 9u);  // evicts [1] (stamp 4)
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[1]}");
  EXPECT_EQ(MatchOf(trie, {1}), (Match{0, 0}));
  EXPECT_EQ(InsertOf(trie, {1, 3}), 11u);  // new IDs 10, 11
  EXPECT_EQ(trie.node_count(), 5u);
}

// A family spread over the code range is a hash node (its children in
// edges_); its children go one by one and it becomes a plain leaf again.
TEST(DoubleArrayTrieBoundedTest, HashNodeChildrenEvictedUntilItIsALeaf) {
  DoubleArrayTrie trie(Bounded(101, EvictionPolicy::kFifo));
  for (Token t = 0; t < 100; ++t) InsertOf(trie, {5, t * 65536});
  EXPECT_EQ(trie.node_count(), 101u);
  EXPECT_EQ(trie.hash_node_count(), 1u);
  EXPECT_EQ(trie.hashed_edge_count(), 100u);
  // FIFO: a growing chain [6, 1, 2, ...] evicts the oldest leaves,
  // [5, 0], [5, 2^16], ..., then [5] itself (ID 1, a leaf by then). The
  // first step evicts two and may make the root a hash node too (a hash
  // node never moves, so its parent's family cannot make room for [6]).
  std::vector<Token> chain = {6, 1};
  EXPECT_EQ(trie.Insert(chain), 103u);
  const std::size_t hash_nodes = trie.hash_node_count();
  const std::size_t hashed_edges = trie.hashed_edge_count();
  for (Token k = 2; k <= 99; ++k) {
    chain.push_back(k);
    EXPECT_EQ(trie.Insert(chain), static_cast<NodeId>(102 + k));
  }
  EXPECT_EQ(trie.hash_node_count(), hash_nodes - 1);
  EXPECT_EQ(trie.hashed_edge_count(), hashed_edges - 98);
  EXPECT_EQ(MatchOf(trie, {5, 99 * 65536}), (Match{1, 1}));
  chain.push_back(100);
  EXPECT_EQ(trie.Insert(chain), 202u);
  EXPECT_EQ(MatchOf(trie, {5}), (Match{0, 0}));
  EXPECT_EQ(MatchOf(trie, chain), (Match{101, 202}));
  EXPECT_EQ(trie.evicted_count(), 101u);
}

// Requests sharing prefixes heavily: most extend a random prefix of an
// earlier request by 0..max_tail tokens of `alphabet`.
std::vector<std::vector<Token>> SharingRequests(
    std::mt19937_64& random, std::size_t count,
    const std::vector<Token>& alphabet, std::size_t max_tail) {
  std::vector<std::vector<Token>> out;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<Token> request;
    if (!out.empty() && random() % 5 != 0) {
      const auto& base = out[random() % out.size()];
      request.assign(base.begin(), base.begin() + random() % (base.size() + 1));
    }
    for (std::size_t n = random() % (max_tail + 1); n > 0; --n) {
      request.push_back(alphabet[random() % alphabet.size()]);
    }
    out.push_back(std::move(request));
  }
  return out;
}

std::vector<Token> SmallAlphabet(std::size_t size) {
  std::vector<Token> out(size);
  std::iota(out.begin(), out.end(), 0);
  return out;
}

std::vector<Token> AdversarialAlphabet() {
  const auto [a, b] = CollidingTokens(2);
  return {INT32_MIN, -1,      0,       1,       INT32_MAX, 1 << 16,
          3 << 16,   7 << 16, 1 << 18, 5 << 18, a,         b};
}

std::vector<Token> WideAlphabet(std::mt19937_64& random) {
  std::vector<Token> out(400);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = i % 2 ? static_cast<Token>(random())
                   : static_cast<Token>(random() % 300000);
  }
  return out;
}

// Seeded: rerun a failure with KVPREFIX_TEST_SEED=<printed seed>.
TEST(DoubleArrayTrieBoundedTest, RandomizedDifferentialAgainstTheReference) {
  const std::uint64_t seed = test::TestSeed();
  std::mt19937_64 random(seed);
  std::vector<std::uint64_t> capacities(65);
  std::iota(capacities.begin(), capacities.end(), 0);
  capacities.insert(capacities.end(), {100, 257, 1000, 4000});
  for (const std::uint64_t capacity : capacities) {
    for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
      const EvictionPolicy policy = entry.policy;
      const int kind = static_cast<int>(random() % 4);
      const std::vector<Token> alphabet =
          kind == 0   ? SmallAlphabet(2 + random() % 3)
          : kind == 1 ? SmallAlphabet(2 + random() % 30)
          : kind == 2 ? AdversarialAlphabet()
                      : WideAlphabet(random);
      const std::size_t count = capacity >= 1000 ? 1500 : 300;
      DifferentialChecker checker =
          test::CheckerOf<DoubleArrayTrie>(Bounded(capacity, policy));
      for (const auto& request :
           SharingRequests(random, count, alphabet, 4 + random() % 40)) {
        const Operation::Kind operation = random() % 8 == 0
                                              ? Operation::Kind::kInsert
                                              : Operation::Kind::kAccess;
        ASSERT_TRUE(Agrees(checker.Apply({operation, request})))
            << "seed " << seed << ", alphabet kind " << kind;
        ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kMatch, request})))
            << "seed " << seed;
      }
    }
  }
}

// The same through PagedIndex: pages of 2 and 3 tokens, each page one
// symbol of the engine, released through the eviction listener.
TEST(DoubleArrayTrieBoundedTest, PagedDifferentialAgainstTheReference) {
  const std::uint64_t seed = test::TestSeed();
  std::mt19937_64 random(seed);
  for (const std::uint64_t page_size : {2, 3}) {
    for (const std::uint64_t capacity : {0, 1, 2, 3, 5, 8, 13, 40, 200}) {
      for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
        const EvictionPolicy policy = entry.policy;
        const std::vector<Token> alphabet =
            random() % 2 ? SmallAlphabet(2) : AdversarialAlphabet();
        DifferentialChecker checker = test::CheckerOf<DoubleArrayTrie>(
            Bounded(capacity, policy, page_size));
        for (const auto& request :
             SharingRequests(random, 400, alphabet, 3 * page_size * 4)) {
          const Operation::Kind operation = random() % 8 == 0
                                                ? Operation::Kind::kInsert
                                                : Operation::Kind::kAccess;
          ASSERT_TRUE(Agrees(checker.Apply({operation, request})))
              << "seed " << seed;
          ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kMatch, request})))
              << "seed " << seed;
        }
      }
    }
  }
}

// Relocation moves nodes between slots; their IDs, stamps and labels must
// move with them and the leaf heap must follow. Many families over a small
// alphabet under a capacity relocate often; every step is checked.
TEST(DoubleArrayTrieBoundedTest, RelocationsUnderEvictionKeepStampsAndIds) {
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    DifferentialChecker checker =
        test::CheckerOf<DoubleArrayTrie>(Bounded(300, entry.policy));
    std::mt19937_64 random(14);
    const auto access = [&](std::vector<Token> request) {
      return Agrees(checker.Apply({Operation::Kind::kAccess, request}));
    };
    for (Token t = 20; t < 3000; ++t) {
      ASSERT_TRUE(access({0, static_cast<Token>(t % 37), t}));
      ASSERT_TRUE(access({static_cast<Token>(t % 23), t}));
      ASSERT_TRUE(access({static_cast<Token>(random() % 4), 10,
                          static_cast<Token>(random() % 8)}));
    }
    EXPECT_GT(test::EngineOf<DoubleArrayTrie>(checker).relocated_nodes(), 100u);
  }
}

// Evicted slots are free again: a long stream at a small capacity keeps
// the array, and all memory, proportional to the nodes present.
TEST(DoubleArrayTrieBoundedTest, LongStreamMemoryStaysProportional) {
  constexpr std::uint64_t kCapacity = 1000;
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    const EvictionPolicy policy = entry.policy;
    DoubleArrayTrie trie(Bounded(kCapacity, policy));
    std::mt19937_64 random(100000);
    std::vector<std::vector<Token>> recent;
    std::size_t early_bytes = 0;
    for (int i = 0; i < 100000; ++i) {
      std::vector<Token> request;
      if (!recent.empty() && random() % 3 != 0) {
        const auto& base = recent[random() % recent.size()];
        request.assign(base.begin(),
                       base.begin() + random() % (base.size() + 1));
      }
      for (std::size_t n = 1 + random() % 30; n > 0; --n) {
        request.push_back(random() % 2 ? static_cast<Token>(random())
                                       : static_cast<Token>(random() % 5000));
      }
      trie.Access(request);
      ASSERT_LE(trie.node_count(), kCapacity);
      if (recent.size() < 64) {
        recent.push_back(std::move(request));
      } else {
        recent[random() % recent.size()] = std::move(request);
      }
      if (i == 10000) early_bytes = trie.memory_bytes();
    }
    EXPECT_GT(trie.evicted_count(), 100u * kCapacity);
    const std::size_t bytes = trie.memory_bytes();
    std::printf("%s: %zu slots, %zu bytes (%zu after 10,000 requests)\n",
                std::string(EvictionPolicyName(policy)).c_str(),
                trie.slot_count(), bytes, early_bytes);
    // The density rule: at most 1.25 slots per node plus 1,024, grown by
    // 1/16 at a time (2,418 slots for 1,001 nodes), with room to spare.
    EXPECT_LE(trie.slot_count(), 3000u);
    EXPECT_LE(bytes, 200u * kCapacity);
    EXPECT_LE(bytes, early_bytes + early_bytes / 4);
  }
}

}  // namespace
}  // namespace kvprefix
