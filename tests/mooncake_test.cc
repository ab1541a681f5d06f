// Tests of io/mooncake: splitmix64, block and token mode expansion, trace
// line errors, and replay of the real conversation trace in block mode
// against an independent computation of its hit ratio.
#include "io/mooncake.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "engines/registry.h"
#include "kvprefix/replay.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(SplitMix64Test, MatchesPublishedVectors) {
  // The first outputs of the splitmix64 generator (state += golden gamma,
  // then mix) from seed 0 and seed 1234567, as in Vigna's splitmix64.c.
  constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
  static_assert(SplitMix64(0) == 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(SplitMix64(kGamma), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(SplitMix64(1234567), 6457827717110365317ULL);
  EXPECT_EQ(SplitMix64(1234567 + kGamma), 3203168211198807973ULL);
  EXPECT_EQ(SplitMix64(1234567 + 2 * kGamma), 9817491932198370423ULL);
}

SequenceList ParseLine(std::string_view line, TraceOptions options) {
  SequenceList out;
  AppendTraceLine(line, 1, options, out);
  return out;
}

TEST(AppendTraceLineTest, BlockModeMakesOneTokenPerHashId) {
  EXPECT_EQ(ParseLine(R"({"timestamp": 0, "input_length": 1100, )"
                      R"("output_length": 9, "hash_ids": [5, 6, 2147483647]})",
                      {}),
            (SequenceList{{5, 6, 2147483647}}));
  EXPECT_EQ(ParseLine(R"({"input_length":0,"hash_ids":[]})", {}),
            (SequenceList{{}}));
}

TEST(AppendTraceLineTest, TokenModeExpandsEachBlock) {
  const TraceOptions options{TraceMode::kToken, kDefaultVocabulary};
  const SequenceList tokens =
      ParseLine(R"({"input_length":1100,"hash_ids":[5,6,7]})", options);
  ASSERT_EQ(tokens.size(), 1u);
  const TokenSpan request = tokens[0];
  ASSERT_EQ(request.size(), 1100u);  // 512 + 512 + 76
  // splitmix64(h * 512 + j) mod 128256, computed independently in Python.
  EXPECT_EQ(request[0], 63242);     // h=5, j=0
  EXPECT_EQ(request[1], 104159);    // h=5, j=1
  EXPECT_EQ(request[511], 66134);   // h=5, j=511
  EXPECT_EQ(request[1024], 27385);  // h=7, j=0
  EXPECT_EQ(request[1099], 84186);  // h=7, j=75
  EXPECT_EQ(
      ParseLine(R"({"input_length":512,"hash_ids":[1]})", options)[0].size(),
      512u);
  EXPECT_EQ(
      ParseLine(R"({"input_length":513,"hash_ids":[1,2]})", options)[0].size(),
      513u);
}

TEST(AppendTraceLineTest, EqualBlocksGiveEqualTokenRuns) {
  const TraceOptions options{TraceMode::kToken, 50};
  const SequenceList a =
      ParseLine(R"({"input_length":600,"hash_ids":[9,1]})", options);
  const SequenceList b =
      ParseLine(R"({"input_length":700,"hash_ids":[9,2]})", options);
  EXPECT_TRUE(std::equal(a[0].begin(), a[0].begin() + 512, b[0].begin()));
  for (const Token token : a[0]) EXPECT_TRUE(token >= 0 && token < 50);
  const SequenceList ones =
      ParseLine(R"({"input_length":3,"hash_ids":[4]})", {TraceMode::kToken, 1});
  EXPECT_EQ(ones, (SequenceList{{0, 0, 0}}));
}

struct BadLine {
  std::string json;
  TraceMode mode;
  std::string location;
  std::string problem;
};

void ExpectEachRejected(const std::vector<BadLine>& bad) {
  for (const BadLine& line : bad) {
    SequenceList out;
    try {
      AppendTraceLine(line.json, 1, {line.mode, 1000}, out);
      ADD_FAILURE() << "accepted: " << line.json;
    } catch (const InputError& error) {
      EXPECT_EQ(error.location(), line.location) << error.what();
      EXPECT_THAT(error.problem(), HasSubstr(line.problem)) << error.what();
    }
  }
}

TEST(AppendTraceLineTest, BadLinesNameLineAndMember) {
  const std::vector<BadLine> bad = {
      {R"({"input_length":5})", TraceMode::kBlock, "line 1: $", "\"hash_ids\""},
      {R"({"hash_ids":[1]})", TraceMode::kBlock, "line 1: $",
       "\"input_length\""},
      {R"({"input_length":5,"hash_ids":[1,-2]})", TraceMode::kBlock,
       "line 1: $.hash_ids[1]", "found -2"},
      {R"({"input_length":5,"hash_ids":[2147483648]})", TraceMode::kBlock,
       "line 1: $.hash_ids[0]", "found 2147483648"},
      {R"({"input_length":5,"hash_ids":[1.5]})", TraceMode::kToken,
       "line 1: $.hash_ids[0]", "fraction"},
      {R"({"input_length":5,"hash_ids":"1"})", TraceMode::kBlock,
       "line 1: $.hash_ids", "found a string"},
      {R"({"input_length":513,"hash_ids":[1]})", TraceMode::kBlock,
       "line 1: $.input_length", "expected 1 to 512 tokens for 1 hash ids"},
      {R"({"input_length":512,"hash_ids":[1,2]})", TraceMode::kToken,
       "line 1: $.input_length", "expected 513 to 1024 tokens"},
      {R"({"input_length":-1,"hash_ids":[1]})", TraceMode::kBlock,
       "line 1: $.input_length", "found -1"},
      {R"({"input_length":5,"hash_ids":[1],"hash_ids":[2]})", TraceMode::kBlock,
       "line 1: $.hash_ids", "second time"},
      {R"({"input_length":5,"hash_ids":[1]} 7)", TraceMode::kBlock, "line 1: $",
       "found '7' at byte 34"},
      {R"({"input_length":5,"hash_ids":[1)", TraceMode::kBlock,
       "line 1: $.hash_ids[0]", "found end of input"},
      {R"([1,2])", TraceMode::kBlock, "line 1: $", "expected an object"},
  };
  ExpectEachRejected(bad);
}

// Members kvprefix does not use must still be valid JSON: On Demand parsing
// would skip them unchecked.
TEST(AppendTraceLineTest, InvalidJsonInUnusedMembersIsRejected) {
  const std::vector<BadLine> bad = {
      {R"({"input_length":10,"hash_ids":[1],"x":tru})", TraceMode::kBlock,
       "line 1: $.x", "expected true or false, found 'tru' at byte 38"},
      {R"({"x":nul,"input_length":10,"hash_ids":[1]})", TraceMode::kBlock,
       "line 1: $.x", "expected null, found 'nul' at byte 5"},
      {R"({"input_length":10,"hash_ids":[1],"x":1.2.3})", TraceMode::kBlock,
       "line 1: $.x", "found '1.2.3' at byte 38"},
      {R"({"input_length":10,"hash_ids":[1],"x":01})", TraceMode::kBlock,
       "line 1: $.x", "found '01' at byte 38"},
      {R"({"input_length":10,"hash_ids":[1],"x":NaN})", TraceMode::kBlock,
       "line 1: $.x", "found 'NaN' at byte 38"},
      {R"({"input_length":10,"hash_ids":[1],"x":[1,}]})", TraceMode::kBlock,
       "line 1: $.x[1]", "found '}' at byte 41"},
      {R"({"input_length":10,"hash_ids":[1],"x":{"a" 1}})", TraceMode::kBlock,
       "line 1: $.x", "found '1' at byte 43"},
      {R"({"input_length":10,"hash_ids":[1],"x":{"y":[true,"\uZZZZ"]}})",
       TraceMode::kBlock, "line 1: $.x.y[1]",
       "expected a valid escape, found '\\uZZZZ' at byte 50"},
      {R"({"input_length":10,"hash_ids":[1],"x":}})", TraceMode::kBlock,
       "line 1: $.x", "found '}' at byte 38"},
  };
  ExpectEachRejected(bad);
  // Valid unused members of every kind are accepted.
  SequenceList out;
  AppendTraceLine(
      R"({"t":0,"o":-1.5e3,"s":"\u00e9\n","n":null,"b":[true,false,{}],)"
      R"("input_length":10,"hash_ids":[1]})",
      1, {TraceMode::kBlock, 1000}, out);
  EXPECT_EQ(out.size(), 1u);
}

TEST(ReadMooncakeTraceTest, SkipsBlankLinesAndCountsThemInErrors) {
  const fs::path path = fs::temp_directory_path() /
                        ("kvprefix_mooncake_test_" + std::to_string(getpid()));
  std::ofstream(path) << R"({"input_length":1,"hash_ids":[3]})"
                         "\n\n"
                      << R"({"input_length":2,"hash_ids":[3]})"
                         "\n";
  EXPECT_EQ(ReadMooncakeTrace(path.string(), {}), (SequenceList{{3}, {3}}));
  std::ofstream(path, std::ios::app)
      << R"({"input_length":2,"hash_ids":[3,true]})";
  try {
    ReadMooncakeTrace(path.string(), {});
    ADD_FAILURE() << "accepted a bad fourth line";
  } catch (const InputError& error) {
    EXPECT_EQ(error.location(), "line 4: $.hash_ids[1]");
    EXPECT_THAT(error.problem(), HasSubstr("found true"));
  }
  fs::remove(path);
  EXPECT_THROW(ReadMooncakeTrace(path.string(), {}), IoError);
}

// The hit of each request computed without a trie: the set of every prefix
// of hash_ids seen so far; a request's hit is its longest prefix in the set.
// Reads the trace with nlohmann-json, independently of io/mooncake.
struct BlockHits {
  std::uint64_t request_blocks = 0;
  std::uint64_t matched_blocks = 0;
};

BlockHits IndependentBlockHits(const std::string& path) {
  std::set<std::vector<std::int64_t>> seen_prefixes;
  BlockHits hits;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    if (line.empty()) continue;
    const auto ids = nlohmann::json::parse(line)
                         .at("hash_ids")
                         .get<std::vector<std::int64_t>>();
    std::size_t hit = 0;
    while (hit < ids.size() &&
           seen_prefixes.count({ids.begin(), ids.begin() + hit + 1}) != 0) {
      ++hit;
    }
    for (std::size_t length = hit + 1; length <= ids.size(); ++length) {
      seen_prefixes.insert({ids.begin(), ids.begin() + length});
    }
    hits.request_blocks += ids.size();
    hits.matched_blocks += hit;
  }
  return hits;
}

TEST(MooncakeReplayTest, ConversationBlockModeHitRatioIsTheOneTheDataImplies) {
  const std::string path =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  const SequenceList trace = ReadMooncakeTrace(path, {});
  ASSERT_EQ(trace.size(), 12031u);
  const BlockHits expected = IndependentBlockHits(path);
  for (const std::string_view name : EngineNames()) {
    const auto index = MakeEngine(name);
    const ReplaySummary summary = Replay(*index, trace);
    EXPECT_EQ(summary.requests, 12031u) << name;
    EXPECT_EQ(summary.request_tokens, expected.request_blocks) << name;
    EXPECT_EQ(summary.matched_tokens, expected.matched_blocks) << name;
  }
  const double ratio = static_cast<double>(expected.matched_blocks) /
                       static_cast<double>(expected.request_blocks);
  ::testing::Test::RecordProperty("block_hit_ratio", std::to_string(ratio));
  // The Mooncake paper (Table 2) reports roughly 40% for this trace.
  EXPECT_GT(ratio, 0.3);
  EXPECT_LT(ratio, 0.5);
}

}  // namespace
}  // namespace kvprefix
