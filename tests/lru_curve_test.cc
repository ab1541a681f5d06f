// The one-pass LRU curve (kvprefix/lru_curve.h) equals direct LRU replay
// (SPEC §8) at every capacity.
#include "kvprefix/lru_curve.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
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

// Matched tokens of a direct LRU replay of `trace` at `capacity`.
std::uint64_t ReplayMatched(const SequenceList& trace, std::uint64_t capacity,
                            std::uint64_t page_size) {
  PagedIndex<ReferenceTrie> cache(CacheOptions{.capacity = capacity,
                                               .policy = EvictionPolicy::kLru,
                                               .page_size = page_size});
  return Replay(cache, trace).matched_tokens;
}

// Checks the curve of `trace` against direct replay at every capacity from 0
// to past the number of distinct prefixes.
void ExpectCurveEqualsReplay(const SequenceList& trace,
                             std::uint64_t page_size) {
  LruCurve<PagedIndex<ReferenceTrie>> curve(page_size);
  for (TokenSpan request : trace) curve.Add(request);
  std::vector<std::uint64_t> capacities;
  for (std::uint64_t c = 0; c <= curve.distinct_prefixes() + 2; ++c) {
    capacities.push_back(c);
  }
  const std::vector<std::uint64_t> matched = curve.MatchedTokens(capacities);
  for (std::uint64_t c : capacities) {
    ASSERT_EQ(matched[c], ReplayMatched(trace, c, page_size))
        << "capacity " << c << ", page size " << page_size;
  }
  // At or past the distinct prefixes, the unbounded replay (SPEC §3).
  PagedIndex<ReferenceTrie> unbounded(CacheOptions{.page_size = page_size});
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
