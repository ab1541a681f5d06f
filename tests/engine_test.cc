// The conformance suite: one typed GoogleTest suite instantiated for every
// engine in engines/all_engines.h, the reference included (which checks the
// suite itself). Expected values come from the contract (SPEC §1-§3), the
// shared regression cases, or an independent brute-force model; never from
// another engine.
#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <cstdint>
#include <vector>

#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "testing/engine_types.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

using ::kvprefix::test::EngineTypeName;
using ::kvprefix::test::GtestTypes;

template <typename E>
std::vector<Match> RunBatch(const SequenceList& cached,
                            const SequenceList& requests) {
  E engine;
  return FindPrefixMatches(engine, cached, requests);
}

std::vector<Token> Repeat(Token token, std::size_t count) {
  return std::vector<Token>(count, token);
}

template <typename E>
class EngineTest : public ::testing::Test {};
TYPED_TEST_SUITE_P(EngineTest);

TYPED_TEST_P(EngineTest, SeedExamples) {
  EXPECT_EQ(
      RunBatch<TypeParam>({{1, 2}, {1, 2, 3}, {4}}, {{1, 2, 9}, {4, 5}, {5}}),
      (std::vector<Match>{{2, 2}, {1, 4}, {0, 0}}));
  EXPECT_EQ(RunBatch<TypeParam>({{7}, {7}}, {{7, 8}}),
            (std::vector<Match>{{1, 1}}));
  EXPECT_EQ(RunBatch<TypeParam>({{9}}, {{2, 2, 2}}),
            (std::vector<Match>{{0, 0}}));
}

TYPED_TEST_P(EngineTest, SharedCases) {
  const auto cases = test::LoadSharedCases();
  ASSERT_GE(cases.size(), 19u);
  for (const auto& shared : cases) {
    EXPECT_EQ(RunBatch<TypeParam>(shared.input.cached_sequences,
                                  shared.input.requests),
              shared.expected)
        << shared.name << " (" << shared.source << ")";
  }
}

TYPED_TEST_P(EngineTest, EmptySequenceCreatesNoNodeAndEmptyRequestHitsRoot) {
  TypeParam engine;
  EXPECT_EQ(engine.Insert({}), kRootNode);
  EXPECT_EQ(engine.node_count(), 0u);
  EXPECT_EQ(engine.MatchPrefix({}), (Match{0, kRootNode}));
  const std::vector<Token> one = {3};
  EXPECT_EQ(engine.MatchPrefix(one), (Match{0, kRootNode}));
  EXPECT_EQ(engine.Insert(one), 1u);
  EXPECT_EQ(engine.MatchPrefix({}), (Match{0, kRootNode}));
}

TYPED_TEST_P(EngineTest, DuplicatesAndSharedPrefixesCreateNoNodes) {
  TypeParam engine;
  const std::vector<Token> abc = {1, 2, 3}, ab = {1, 2}, abd = {1, 2, 4};
  EXPECT_EQ(engine.Insert(abc), 3u);
  EXPECT_EQ(engine.Insert(abc), 3u);
  EXPECT_EQ(engine.Insert(ab), 2u);
  EXPECT_EQ(engine.node_count(), 3u);
  EXPECT_EQ(engine.Insert(abd), 4u);
  EXPECT_EQ(engine.node_count(), 4u);
  EXPECT_EQ(engine.MatchPrefix(abd), (Match{3, 4}));
  EXPECT_EQ(engine.MatchPrefix(ab), (Match{2, 2}));
}

// SPEC §1: IDs follow creation order, so IDs along a path need not be
// consecutive: after [1,2],[1,3],[9],[1,2,3,4] the path 1,2,3,4 is 1,2,5,6.
TYPED_TEST_P(EngineTest, IdsFollowCreationOrderAcrossBranches) {
  TypeParam engine;
  for (const auto& sequence :
       std::vector<std::vector<Token>>{{1, 2}, {1, 3}, {9}, {1, 2, 3, 4}}) {
    engine.Insert(sequence);
  }
  EXPECT_EQ(engine.node_count(), 6u);
  const std::vector<Token> path = {1, 2, 3, 4};
  const std::array<NodeId, 5> ids = {0, 1, 2, 5, 6};
  for (std::size_t length = 0; length <= path.size(); ++length) {
    EXPECT_EQ(engine.MatchPrefix(TokenSpan(path).first(length)),
              (Match{length, ids[length]}));
  }
  const std::vector<Token> extended = {1, 2, 3, 4, 5};
  EXPECT_EQ(engine.Insert(extended), 7u);
  EXPECT_EQ(engine.MatchPrefix(std::vector<Token>{1, 3, 7}), (Match{2, 3}));
}

TYPED_TEST_P(EngineTest, MatchEndsInsideALongerSequenceOrPastIt) {
  TypeParam engine;
  engine.Insert(std::vector<Token>{10, 20, 30, 40, 50});
  EXPECT_EQ(engine.MatchPrefix(std::vector<Token>{10, 20, 99}), (Match{2, 2}));
  EXPECT_EQ(engine.MatchPrefix(std::vector<Token>{10, 20, 30, 40, 50, 60}),
            (Match{5, 5}));
  EXPECT_EQ(engine.MatchPrefix(std::vector<Token>{20}), (Match{0, 0}));
}

// Tokens that differ only in high bits, at byte boundaries, or in sign must
// stay distinct: every engine that maps or truncates tokens is tested here.
TYPED_TEST_P(EngineTest, FullInt32RangeKeepsTokensDistinct) {
  const std::vector<Token> tokens = {
      INT32_MIN, INT32_MIN + 1, -65536,     -256,          -1,       0,
      1,         255,           256,        65535,         65536,    65537,
      1 << 24,   (1 << 24) + 1, 0x7FFF0000, INT32_MAX - 1, INT32_MAX};
  TypeParam engine;
  for (Token token : tokens) {
    engine.Insert(std::vector<Token>{token, token});
  }
  ASSERT_EQ(engine.node_count(), 2 * tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(engine.MatchPrefix(std::vector<Token>{tokens[i], tokens[i], 7}),
              (Match{2, 2 * i + 2}))
        << "token " << tokens[i];
    const Token other = tokens[(i + 1) % tokens.size()];
    EXPECT_EQ(engine.MatchPrefix(std::vector<Token>{tokens[i], other}),
              (Match{1, 2 * i + 1}))
        << "token " << tokens[i] << " then " << other;
  }
}

TYPED_TEST_P(EngineTest, MatchNeverModifiesTheIndex) {
  TypeParam engine;
  engine.Insert(std::vector<Token>{1, 2, 3});
  const auto nodes = engine.node_count();
  const auto bytes = engine.memory_bytes();
  for (Token token = -5; token < 5; ++token) {
    engine.MatchPrefix(std::vector<Token>{1, token, token});
  }
  EXPECT_EQ(engine.node_count(), nodes);
  EXPECT_EQ(engine.memory_bytes(), bytes);
  EXPECT_EQ(engine.Insert(std::vector<Token>{1, 4}), 4u);
}

// --- Exhaustive small world -------------------------------------------------
// Every set of cached sequences over a 2-token alphabet of length <= 3 (15
// sequences, 2^15 sets, inserted in canonical order) against every request
// of length <= 4. The oracle is a brute-force model independent of any trie:
// a table from each distinct prefix to the ID it got when first inserted.

constexpr int kMaxCachedLength = 3;
constexpr int kMaxRequestLength = 4;

// All sequences over {a, b} of length 0..max_length, shortest first.
std::vector<std::vector<Token>> AllSequences(Token a, Token b, int max_length) {
  std::vector<std::vector<Token>> all;
  for (int length = 0; length <= max_length; ++length) {
    for (int bits = 0; bits < (1 << length); ++bits) {
      std::vector<Token> sequence;
      for (int i = 0; i < length; ++i) {
        sequence.push_back((bits >> i) & 1 ? b : a);
      }
      all.push_back(sequence);
    }
  }
  return all;
}

// The brute-force model: prefixes are encoded as 1 followed by their bits.
class PrefixTableModel {
 public:
  explicit PrefixTableModel(Token b) : b_(b) {}
  void Insert(const std::vector<Token>& sequence) {
    unsigned code = 1;
    for (Token token : sequence) {
      code = code << 1 | (token == b_);
      if (ids_[code] == 0) ids_[code] = ++last_id_;
    }
  }
  Match MatchPrefix(const std::vector<Token>& request) const {
    Match match;
    unsigned code = 1;
    for (Token token : request) {
      code = code << 1 | (token == b_);
      if (ids_[code] == 0) break;
      match = {match.matched_length + 1, ids_[code]};
    }
    return match;
  }
  NodeId node_count() const { return last_id_; }

 private:
  Token b_;
  std::array<NodeId, 1 << (kMaxRequestLength + 1)> ids_{};
  NodeId last_id_ = 0;
};

constexpr std::array<std::array<Token, 2>, 2> kAlphabets = {
    {{0, 1}, {INT32_MIN, -1}}};

// Calls check(b, cached, requests, set) for both alphabets {a, b} and every
// set of cached sequences; stops at the first fatal failure.
template <typename Check>
void ForEachSmallWorld(Check&& check) {
  for (const auto& [a, b] : kAlphabets) {
    const auto cached = AllSequences(a, b, kMaxCachedLength);
    const auto requests = AllSequences(a, b, kMaxRequestLength);
    for (unsigned set = 0; set < (1u << cached.size()); ++set) {
      check(b, cached, requests, set);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TYPED_TEST_P(EngineTest, ExhaustiveSmallWorldBatch) {
  ForEachSmallWorld(
      [](Token b, const auto& cached, const auto& requests, unsigned set) {
        TypeParam engine;
        PrefixTableModel model(b);
        for (std::size_t i = 0; i < cached.size(); ++i) {
          if (set >> i & 1) {
            engine.Insert(cached[i]);
            model.Insert(cached[i]);
          }
        }
        ASSERT_EQ(engine.node_count(), model.node_count()) << "set " << set;
        for (const auto& request : requests) {
          ASSERT_EQ(engine.MatchPrefix(request), model.MatchPrefix(request))
              << "b " << b << " set " << set;
        }
      });
}

TYPED_TEST_P(EngineTest, ExhaustiveSmallWorldInterleaved) {
  ForEachSmallWorld(
      [](Token b, const auto& cached, const auto& requests, unsigned set) {
        TypeParam engine;
        PrefixTableModel model(b);
        // Insert longest first this time, so later inserts end inside edges,
        // and match every request after every insert.
        for (std::size_t i = cached.size(); i-- > 0;) {
          if (!(set >> i & 1)) continue;
          model.Insert(cached[i]);
          ASSERT_EQ(engine.Insert(cached[i]),
                    model.MatchPrefix(cached[i]).cache_node)
              << "set " << set;
          for (const auto& request : requests) {
            ASSERT_EQ(engine.MatchPrefix(request), model.MatchPrefix(request))
                << "b " << b << " set " << set;
          }
        }
      });
}

// --- Scale: no recursion, no quadratic paths ---------------------------------

TYPED_TEST_P(EngineTest, LongSequenceOf200kTokens) {
  std::vector<Token> sequence(200000);
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    sequence[i] = static_cast<Token>(i * 7919 % 1000003);
  }
  TypeParam engine;
  EXPECT_EQ(engine.Insert(sequence), 200000u);
  EXPECT_EQ(engine.MatchPrefix(sequence), (Match{200000, 200000}));
  auto diverging = sequence;
  diverging[150000] = -1;
  EXPECT_EQ(engine.MatchPrefix(diverging), (Match{150000, 150000}));
  EXPECT_EQ(engine.Insert(diverging), 250000u);
  EXPECT_EQ(engine.MatchPrefix(diverging), (Match{200000, 250000}));
  EXPECT_EQ(engine.MatchPrefix(sequence), (Match{200000, 200000}));
}

TYPED_TEST_P(EngineTest, DeepChainOf100kSameTokens) {
  TypeParam engine;
  EXPECT_EQ(engine.Insert(Repeat(7, 100000)), 100000u);
  EXPECT_EQ(engine.Insert(Repeat(7, 50000)), 50000u);
  EXPECT_EQ(engine.Insert(Repeat(7, 100001)), 100001u);
  EXPECT_EQ(engine.MatchPrefix(Repeat(7, 100005)), (Match{100001, 100001}));
  auto branch = Repeat(7, 60000);
  branch.push_back(8);
  EXPECT_EQ(engine.Insert(branch), 100002u);
  EXPECT_EQ(engine.MatchPrefix(branch), (Match{60001, 100002}));
  EXPECT_EQ(engine.node_count(), 100002u);
}

// A chain grown one token per insert: every insert extends the node the last
// one created, the case where a radix engine must not extend an edge whose
// IDs would stop being consecutive, and must not copy the edge each time.
TYPED_TEST_P(EngineTest, ChainGrownOneTokenPerInsert) {
  TypeParam engine;
  std::vector<Token> chain;
  engine.Insert(std::vector<Token>{9});  // so chain IDs are not 1, 2, 3, ...
  for (NodeId id = 2; id <= 20001; ++id) {
    chain.push_back(static_cast<Token>(id % 3));
    ASSERT_EQ(engine.Insert(chain), id);
  }
  EXPECT_EQ(engine.MatchPrefix(chain), (Match{20000, 20001}));
  chain.back() = 5;
  EXPECT_EQ(engine.MatchPrefix(chain), (Match{19999, 20000}));
}

TYPED_TEST_P(EngineTest, HundredThousandRootChildren) {
  TypeParam engine;
  constexpr std::uint32_t kChildren = 100000;
  auto token_of = [](std::uint32_t i) {
    return static_cast<Token>(i * 2654435761u);  // distinct, all 32 bits used
  };
  for (std::uint32_t i = 0; i < kChildren; ++i) {
    ASSERT_EQ(engine.Insert(std::vector<Token>{token_of(i), 5}), 2 * i + 2);
  }
  for (std::uint32_t i = 0; i < kChildren; ++i) {
    ASSERT_EQ(engine.MatchPrefix(std::vector<Token>{token_of(i), 5, 5}),
              (Match{2, 2 * i + 2}));
  }
}

TYPED_TEST_P(EngineTest, FiveThousandChildrenBelowOneNode) {
  TypeParam engine;
  engine.Insert(std::vector<Token>{5, 5, 5});
  for (Token child = 0; child < 5000; ++child) {
    engine.Insert(std::vector<Token>{5, 5, 5, child * 977 - 2000000});
  }
  EXPECT_EQ(engine.node_count(), 5003u);
  for (Token child = 0; child < 5000; ++child) {
    ASSERT_EQ(engine.MatchPrefix(
                  std::vector<Token>{5, 5, 5, child * 977 - 2000000, 1}),
              (Match{4, static_cast<NodeId>(child) + 4}));
  }
  EXPECT_EQ(engine.MatchPrefix(std::vector<Token>{5, 5, 5, 1}), (Match{3, 3}));
}

REGISTER_TYPED_TEST_SUITE_P(
    EngineTest, SeedExamples, SharedCases,
    EmptySequenceCreatesNoNodeAndEmptyRequestHitsRoot,
    DuplicatesAndSharedPrefixesCreateNoNodes,
    IdsFollowCreationOrderAcrossBranches,
    MatchEndsInsideALongerSequenceOrPastIt, FullInt32RangeKeepsTokensDistinct,
    MatchNeverModifiesTheIndex, ExhaustiveSmallWorldBatch,
    ExhaustiveSmallWorldInterleaved, LongSequenceOf200kTokens,
    DeepChainOf100kSameTokens, ChainGrownOneTokenPerInsert,
    HundredThousandRootChildren, FiveThousandChildrenBelowOneNode);
INSTANTIATE_TYPED_TEST_SUITE_P(Engine, EngineTest, GtestTypes<AllEngines>::type,
                               EngineTypeName);

}  // namespace
}  // namespace kvprefix
