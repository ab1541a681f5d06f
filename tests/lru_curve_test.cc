// The one-pass LRU curve (kvprefix/lru_curve.h) equals direct LRU replay
// (SPEC §8) at every capacity.
#include "kvprefix/lru_curve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "io/mooncake.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/replay.h"
#include "optimized/double_array_trie.h"
#include "optimized/radix_trie.h"
#include "reference/reference_trie.h"

namespace kvprefix {
namespace {

using Tokens = std::vector<Token>;

TEST(StampCountsTest, SuffixSumsMatchPlainCountsWhileGrowing) {
  std::mt19937_64 random(5);
  StampCounts counts;
  std::vector<std::int64_t> plain(3000, 0);
  for (int step = 0; step < 20000; ++step) {
    // Stamps grow over time, as requests do, so the tree regrows.
    const std::uint64_t stamp = 1 + random() % (1 + step / 8);
    const std::int64_t delta =
        plain[stamp] > 0 && random() % 2 ? -1 : std::int64_t(random() % 5);
    counts.Add(stamp, delta);
    plain[stamp] += delta;
    const std::uint64_t query = random() % 2600;
    std::int64_t newer = 0;
    for (std::size_t s = query + 1; s < plain.size(); ++s) newer += plain[s];
    ASSERT_EQ(counts.CountNewerThan(query), static_cast<std::uint64_t>(newer))
        << "step " << step;
  }
}

// Matched tokens of a direct LRU replay of `trace` at `capacity`, each match
// capped by `match_limit` (SPEC §9.1).
std::uint64_t ReplayMatched(const SequenceList& trace, std::uint64_t capacity,
                            std::uint64_t page_size,
                            MatchLimit match_limit = MatchLimit::kAll) {
  PagedIndex<ReferenceTrie> cache(CacheOptions{.capacity = capacity,
                                               .policy = EvictionPolicy::kLru,
                                               .page_size = page_size,
                                               .match_limit = match_limit});
  return Replay(cache, trace).matched_tokens;
}

// Checks the curve of `trace` against direct replay at every capacity from 0
// to past the number of distinct prefixes.
void ExpectCurveEqualsReplay(const SequenceList& trace, std::uint64_t page_size,
                             MatchLimit match_limit = MatchLimit::kAll) {
  LruCurve<PagedIndex<ReferenceTrie>> curve(page_size, match_limit);
  for (TokenSpan request : trace) curve.Add(request);
  std::vector<std::uint64_t> capacities;
  for (std::uint64_t c = 0; c <= curve.distinct_prefixes() + 2; ++c) {
    capacities.push_back(c);
  }
  const std::vector<std::uint64_t> matched = curve.MatchedTokens(capacities);
  for (std::uint64_t c : capacities) {
    ASSERT_EQ(matched[c], ReplayMatched(trace, c, page_size, match_limit))
        << "capacity " << c << ", page size " << page_size << ", match limit "
        << NameOf(kMatchLimits, match_limit);
  }
  // At or past the distinct prefixes, the unbounded replay (SPEC §3).
  PagedIndex<ReferenceTrie> unbounded(
      CacheOptions{.page_size = page_size, .match_limit = match_limit});
  EXPECT_EQ(matched.back(), Replay(unbounded, trace).matched_tokens);
}

TEST(LruCurveTest, HandWorkedCapacities) {
  // tests/data/cases/capacity/hand-01: at C = 3 the matches are 0, 2, 0, 2.
  const SequenceList trace = {{1, 2, 3}, {1, 2, 4}, {5}, {1, 2, 3}};
  LruCurve<PagedIndex<ReferenceTrie>> curve;
  for (TokenSpan request : trace) curve.Add(request);
  const std::vector<std::uint64_t> capacities = {0, 1, 2, 3, 4, 5, 1000};
  // Before request 2 the stack (newest first, shallower first among equal
  // stamps) is (1), (1,2), (1,2,3): its matches are hits for C > 0 and C > 1.
  // Before request 4 it is (5), (1), (1,2), (1,2,4), (1,2,3): hits for C > 1,
  // C > 2 and C > 4. So 0, 1, 1+2, 2+2, 2+2, 2+3, 2+3.
  EXPECT_EQ(curve.MatchedTokens(capacities),
            (std::vector<std::uint64_t>{0, 1, 3, 4, 4, 5, 5}));
  EXPECT_EQ(curve.distinct_prefixes(), 5u);
  EXPECT_EQ(curve.request_tokens(), 10u);
  ExpectCurveEqualsReplay(trace, 1);
}

TEST(LruCurveTest, EqualsReplayOnEveryShortListOverTwoTokens) {
  std::vector<Tokens> sequences;
  for (int length = 0; length <= 3; ++length) {
    for (int bits = 0; bits < (1 << length); ++bits) {
      Tokens sequence;
      for (int i = 0; i < length; ++i) sequence.push_back((bits >> i) & 1);
      sequences.push_back(sequence);
    }
  }
  for (std::size_t a = 0; a < sequences.size(); ++a) {
    for (std::size_t b = 0; b < sequences.size(); ++b) {
      for (std::size_t c = 0; c < sequences.size(); ++c) {
        SequenceList trace;
        for (std::size_t i : {a, b, c, a}) trace.Append(sequences[i]);
        ExpectCurveEqualsReplay(trace, 1);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Requests that share prefixes as chat traffic does: each extends, cuts or
// branches off an earlier one.
SequenceList RandomTrace(std::uint64_t seed, int requests, Token alphabet) {
  std::mt19937_64 random(seed);
  std::vector<Tokens> earlier;
  SequenceList trace;
  for (int r = 0; r < requests; ++r) {
    Tokens request;
    if (!earlier.empty() && random() % 4 != 0) {
      const Tokens& source = earlier[random() % earlier.size()];
      request.assign(source.begin(),
                     source.begin() + random() % (source.size() + 1));
    }
    for (int extra = random() % 6; extra > 0; --extra) {
      request.push_back(static_cast<Token>(random() % alphabet));
    }
    earlier.push_back(request);
    trace.Append(request);
  }
  return trace;
}

TEST(LruCurveTest, EqualsReplayOnRandomTracesAndPageSizes) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const SequenceList trace = RandomTrace(seed, 60, seed % 2 ? 2 : 5);
    for (std::uint64_t page_size : {1, 2, 3}) {
      ExpectCurveEqualsReplay(trace, page_size);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// SPEC §9.1 for model spec: the limit caps which path nodes are hits, not
// what the cache touches and holds, so the curve stays one pass and exact.
// By hand, the limit costs the second [1,2] its last token (unlimited: 2).
TEST(LruCurveTest, EqualsReplayUnderTheMatchLimitAllButLast) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const SequenceList trace = RandomTrace(seed, 60, seed % 2 ? 2 : 5);
    for (std::uint64_t page_size : {1, 2, 3}) {
      ExpectCurveEqualsReplay(trace, page_size, MatchLimit::kAllButLast);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // By hand: [1,2] twice at page size 1 matches 1 token, not 2, at any
  // capacity from 2 on, and nothing below.
  SequenceList twice;
  twice.Append(std::vector<Token>{1, 2});
  twice.Append(std::vector<Token>{1, 2});
  LruCurve<PagedIndex<ReferenceTrie>> curve(1, MatchLimit::kAllButLast);
  for (TokenSpan request : twice) curve.Add(request);
  const std::uint64_t capacities[] = {0, 1, 2, 3};
  EXPECT_EQ(curve.MatchedTokens(capacities),
            (std::vector<std::uint64_t>{0, 1, 1, 1}));
}

// The real traces: the curve on radix runs equals direct LRU replays on the
// double-array engine (another engine, per-node) at ten capacities, in block
// mode and on a window of token mode, and the unbounded replay past the
// distinct prefixes.
void ExpectCurveEqualsReplayOnTrace(const SequenceList& trace) {
  LruCurve<PagedIndex<RadixTrie>> curve;
  for (TokenSpan request : trace) curve.Add(request);
  std::vector<std::uint64_t> capacities =
      LogSpacedCapacities(curve.distinct_prefixes(), 10);
  capacities.push_back(curve.distinct_prefixes() + 1);
  const std::vector<std::uint64_t> matched = curve.MatchedTokens(capacities);
  for (std::size_t i = 0; i < capacities.size(); ++i) {
    DoubleArrayTrie cache(CacheOptions{.capacity = capacities[i]});
    const ReplaySummary replayed = Replay(cache, trace);
    EXPECT_EQ(matched[i], replayed.matched_tokens)
        << "capacity " << capacities[i];
    EXPECT_EQ(curve.request_tokens(), replayed.request_tokens);
  }
  DoubleArrayTrie unbounded;
  EXPECT_EQ(matched.back(), Replay(unbounded, trace).matched_tokens);
}

TEST(LruCurveTest, EqualsReplayOnTheMooncakeTracesInBlockMode) {
  for (const char* name :
       {"conversation_trace.jsonl", "synthetic_trace.jsonl"}) {
    SCOPED_TRACE(name);
    ExpectCurveEqualsReplayOnTrace(ReadMooncakeTrace(
        std::string(KVPREFIX_SOURCE_DIR "/data/mooncake/") + name, {}));
  }
}

TEST(LruCurveTest, EqualsReplayOnATokenModeWindow) {
  const SequenceList trace = ReadMooncakeTrace(
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl",
      {.mode = TraceMode::kToken});
  SequenceList window;
  for (std::size_t i = 0; i < 300; ++i) window.Append(trace[i]);
  ExpectCurveEqualsReplayOnTrace(window);
}

// The hit ratio of a direct replay as the curve computes it.
double ReplayHitRatio(const SequenceList& trace, std::uint64_t capacity,
                      std::uint64_t page_size, std::uint64_t request_tokens) {
  return request_tokens == 0
             ? 0.0
             : static_cast<double>(ReplayMatched(trace, capacity, page_size)) /
                   static_cast<double>(request_tokens);
}

// Checks SmallestCapacityReaching against a scan of direct replays at every
// capacity from 0 to past the distinct prefixes, for every hit ratio a
// replay reaches (the exact ties), the doubles just above and below each,
// and 0, 1 and NaN.
void ExpectSmallestCapacitiesEqualAScan(const SequenceList& trace,
                                        std::uint64_t page_size) {
  LruCurve<PagedIndex<ReferenceTrie>> curve(page_size);
  for (TokenSpan request : trace) curve.Add(request);
  std::vector<double> scanned;  // scanned[c]: the replay's hit ratio at c
  for (std::uint64_t c = 0; c <= curve.distinct_prefixes() + 1; ++c) {
    scanned.push_back(
        ReplayHitRatio(trace, c, page_size, curve.request_tokens()));
  }
  std::set<double> targets = {0.0, 1.0};
  for (const double ratio : scanned) {
    targets.insert(ratio);
    targets.insert(std::nextafter(ratio, 2.0));
    if (ratio > 0) targets.insert(std::nextafter(ratio, -1.0));
  }
  for (const double target : targets) {
    std::optional<std::uint64_t> expected;
    for (std::uint64_t c = 0; c < scanned.size(); ++c) {
      if (scanned[c] >= target) {
        expected = c;
        break;
      }
    }
    ASSERT_EQ(curve.SmallestCapacityReaching(target), expected)
        << "target " << target << ", page size " << page_size;
  }
  EXPECT_EQ(
      curve.SmallestCapacityReaching(std::numeric_limits<double>::quiet_NaN()),
      std::nullopt);
}

TEST(LruCurveTest, SmallestCapacityReachingHandWorked) {
  // hand-01 again: 0, 1, 3, 4, 4, 5 of 10 tokens matched at C = 0 ... 5.
  const SequenceList trace = {{1, 2, 3}, {1, 2, 4}, {5}, {1, 2, 3}};
  LruCurve<PagedIndex<ReferenceTrie>> curve;
  for (TokenSpan request : trace) curve.Add(request);
  EXPECT_EQ(curve.SmallestCapacityReaching(0.0), 0u);
  EXPECT_EQ(curve.SmallestCapacityReaching(0.1), 1u);
  EXPECT_EQ(curve.SmallestCapacityReaching(0.3), 2u);   // 3 / 10 is 0.3
  EXPECT_EQ(curve.SmallestCapacityReaching(0.35), 3u);  // 4 tokens
  EXPECT_EQ(curve.SmallestCapacityReaching(0.41), 5u);  // 5 tokens, not 4
  EXPECT_EQ(curve.SmallestCapacityReaching(0.5), 5u);   // the unbounded's
  EXPECT_EQ(curve.SmallestCapacityReaching(0.51), std::nullopt);
  EXPECT_EQ(curve.SmallestCapacityReaching(-1.0), 0u);
  // No request token: every capacity's hit ratio is 0.
  LruCurve<PagedIndex<ReferenceTrie>> empty;
  EXPECT_EQ(empty.SmallestCapacityReaching(0.0), 0u);
  EXPECT_EQ(empty.SmallestCapacityReaching(0.1), std::nullopt);
}

TEST(LruCurveTest, SmallestCapacityReachingEqualsAScanOfReplays) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const SequenceList trace = RandomTrace(seed, 40, seed % 2 ? 2 : 5);
    for (std::uint64_t page_size : {1, 2, 3}) {
      ExpectSmallestCapacitiesEqualAScan(trace, page_size);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // Every trace of three requests (and the first again) of lists of up to
  // three tokens over {0, 1}.
  std::vector<Tokens> sequences;
  for (int length = 0; length <= 3; ++length) {
    for (int bits = 0; bits < (1 << length); ++bits) {
      Tokens sequence;
      for (int i = 0; i < length; ++i) sequence.push_back((bits >> i) & 1);
      sequences.push_back(sequence);
    }
  }
  for (std::size_t a = 0; a < sequences.size(); a += 2) {
    for (std::size_t b = 1; b < sequences.size(); b += 2) {
      for (std::size_t c = 0; c < sequences.size(); ++c) {
        SequenceList trace;
        for (std::size_t i : {a, b, c, a}) trace.Append(sequences[i]);
        ExpectSmallestCapacitiesEqualAScan(trace, 1);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// On the conversation trace in block mode a scan of every capacity would
// replay 182,790 times: instead, the answer C's replay reaches the target
// and C - 1's does not (the hit ratio grows with the capacity).
TEST(LruCurveTest, SmallestCapacityReachingOnTheConversationTrace) {
  const SequenceList trace = ReadMooncakeTrace(
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl", {});
  LruCurve<PagedIndex<RadixTrie>> curve;
  for (TokenSpan request : trace) curve.Add(request);
  for (const double target : {0.1, 0.2, 0.3, 0.35}) {
    SCOPED_TRACE(target);
    const std::optional<std::uint64_t> capacity =
        curve.SmallestCapacityReaching(target);
    ASSERT_TRUE(capacity.has_value());
    ASSERT_GT(*capacity, 0u);
    for (const std::uint64_t c : {*capacity - 1, *capacity}) {
      DoubleArrayTrie cache(CacheOptions{.capacity = c});
      const ReplaySummary replayed = Replay(cache, trace);
      EXPECT_EQ(replayed.hit_ratio() >= target, c == *capacity)
          << "capacity " << c << ": hit ratio " << replayed.hit_ratio();
      EXPECT_EQ(curve.HitRatio(replayed.matched_tokens), replayed.hit_ratio());
    }
  }
  // Above the unbounded hit ratio (0.3664...): no capacity.
  EXPECT_EQ(curve.SmallestCapacityReaching(0.37), std::nullopt);
}

TEST(LruCurveTest, LogSpacedCapacitiesAreExactlyThePointsAskedFor) {
  // 20^(i/9) rounds to 1, 1, 2, 3, 4, 5, 7, 10, 14, 20: 9 capacities for
  // 10 points, until the low end moved up.
  EXPECT_EQ(LogSpacedCapacities(20, 10),
            (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 10, 14, 20}));
  for (const std::uint64_t max :
       {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{7}, std::uint64_t{33},
        std::uint64_t{182790}, std::uint64_t{1} << 40,
        std::numeric_limits<std::uint64_t>::max()}) {
    for (const std::size_t points : {1, 2, 3, 10, 32, 100, 1000}) {
      const std::vector<std::uint64_t> capacities =
          LogSpacedCapacities(max, points);
      ASSERT_EQ(capacities.size(), std::min<std::uint64_t>(points, max))
          << max << ", " << points;
      EXPECT_EQ(capacities.back(), max);
      if (capacities.size() > 1) {
        EXPECT_EQ(capacities.front(), 1u);
      }
      for (std::size_t i = 1; i < capacities.size(); ++i) {
        ASSERT_LT(capacities[i - 1], capacities[i]) << max << ", " << points;
      }
    }
  }
}

TEST(LruCurveTest, LogSpacedCapacitiesEndAtTheMaximum) {
  EXPECT_EQ(LogSpacedCapacities(1000, 4),
            (std::vector<std::uint64_t>{1, 10, 100, 1000}));
  EXPECT_EQ(LogSpacedCapacities(3, 10), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(LogSpacedCapacities(7, 1), (std::vector<std::uint64_t>{7}));
  EXPECT_TRUE(LogSpacedCapacities(0, 5).empty());
  EXPECT_TRUE(LogSpacedCapacities(5, 0).empty());
}

}  // namespace
}  // namespace kvprefix
