// Tests of io/mooncake: splitmix64, block and token mode expansion, trace
// line errors, streaming in chunks (ForEachTraceChunk), and replay of the real
// conversation trace in block mode against an independent computation of its
// hit ratio.
#include "io/mooncake.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "engines/registry.h"
#include "hwy/targets.h"
#include "kvprefix/replay.h"
#include "testing/bad_inputs.h"
#include "testing/program_run.h"

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

// Token mode takes splitmix64 mod V without a division (io/block_tokens.h's
// Remainder, vectorized); it must equal SPEC §7's formula for any V, including
// 1, powers of two, 2^31 and primes, and hash ids whose h * 512 wraps around
// 2^64.
TEST(AppendTraceLineTest, TokenModeIsSpecFormulaForEveryVocabulary) {
  const std::vector<std::uint64_t> ids = {0,
                                          1,
                                          7,
                                          2147483647,
                                          (std::uint64_t{1} << 40) + 3,
                                          std::uint64_t{1} << 62,
                                          9223372036854775807ULL};
  std::string line = R"({"input_length":)" + std::to_string(512 * ids.size()) +
                     R"(,"hash_ids":[)";
  for (std::size_t b = 0; b < ids.size(); ++b) {
    if (b > 0) line += ',';
    line += std::to_string(ids[b]);
  }
  line += "]}";
  for (const std::uint32_t vocabulary : {1U, 2U, 3U, 1000U, 65536U, 128256U,
                                         1000003U, 2147483647U, 2147483648U}) {
    const SequenceList tokens =
        ParseLine(line, {TraceMode::kToken, vocabulary});
    ASSERT_EQ(tokens.total_tokens(), 512 * ids.size());
    for (std::size_t b = 0; b < ids.size(); ++b) {
      for (std::uint64_t j = 0; j < 512; ++j) {
        const auto expected =
            static_cast<Token>(SplitMix64(ids[b] * 512 + j) % vocabulary);
        ASSERT_EQ(tokens[0][b * 512 + j], expected)
            << "V=" << vocabulary << " h=" << ids[b] << " j=" << j;
      }
    }
  }
}

// A last block of 1..512 tokens: the vectorized expansion (io/block_tokens.cc)
// computes whole vectors and must keep exactly the first `count`, for every
// count modulo the lane count (2, 4 or 8 lanes) and for V = 1 and 2^31; on
// every instruction set this CPU runs (AVX-512, AVX2, SSE4, SSSE3, scalar:
// each has its own code), not only the best one, which dispatch picks.
void ExpectPartialBlocksAreSpecFormula() {
  const std::uint64_t id = 9223372036854775807ULL;
  for (const std::uint32_t vocabulary : {1U, 128256U, 2147483648U}) {
    for (std::uint64_t last = 1; last <= 17; ++last) {
      for (const std::uint64_t count : {last, 512 - last + 1}) {
        const std::string line =
            R"({"input_length":)" + std::to_string(512 + count) +
            R"(,"hash_ids":[5,)" + std::to_string(id) + "]}";
        const SequenceList tokens =
            ParseLine(line, {TraceMode::kToken, vocabulary});
        ASSERT_EQ(tokens.total_tokens(), 512 + count);
        for (std::uint64_t j = 0; j < count; ++j) {
          ASSERT_EQ(tokens[0][512 + j],
                    static_cast<Token>(SplitMix64(id * 512 + j) % vocabulary))
              << "V=" << vocabulary << " count=" << count << " j=" << j;
        }
      }
    }
  }
}

TEST(AppendTraceLineTest, TokenModePartialLastBlockIsSpecFormula) {
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  EXPECT_GE(targets.size(), 2u);  // at least one SIMD target and scalar
  for (const std::int64_t target : targets) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    ExpectPartialBlocksAreSpecFormula();
  }
  hwy::SetSupportedTargetsForTest(0);  // back to the CPU's own
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
  const test::ScratchDir dir;
  const fs::path path = dir.Path("trace.jsonl");
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

// A temporary file removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& contents)
      : path_((fs::temp_directory_path() /
               ("kvprefix_mooncake_stream_" + std::to_string(getpid()) + "_" +
                std::to_string(counter_++)))
                  .string()) {
    std::ofstream(path_, std::ios::binary) << contents;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { fs::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// The chunkings every streaming test runs: the default (in the
// background), on the caller's thread, one request per chunk both ways, and
// odd limits.
std::vector<TraceChunking> Chunkings() {
  return {{},
          {.background = false},
          {.tokens = 1, .requests = 1},
          {.tokens = 1, .requests = 1, .background = false},
          {.tokens = 5000, .requests = 7},
          {.tokens = std::size_t{1} << 40, .requests = 100}};
}

// Streams `path` and checks each chunk against `whole` (ReadMooncakeTrace's
// answer) and against the chunk limits; returns the requests streamed.
std::size_t ExpectChunksAreTheTrace(const std::string& path,
                                    const TraceOptions& options,
                                    const TraceChunking& chunking,
                                    const SequenceList& whole) {
  std::size_t longest = 0;
  for (const TokenSpan request : whole) {
    longest = std::max(longest, request.size());
  }
  std::size_t next = 0;
  std::size_t chunks = 0;
  bool last_was_short = false;
  const double seconds = ForEachTraceChunk(
      path, options,
      [&](const SequenceList& chunk) {
        // Only the last chunk may close before a limit.
        EXPECT_FALSE(last_was_short) << "a short chunk before the end";
        ++chunks;
        EXPECT_FALSE(chunk.empty());
        EXPECT_LE(chunk.size(), chunking.requests);
        EXPECT_LT(chunk.total_tokens(), chunking.tokens + longest);
        last_was_short = chunk.size() < chunking.requests &&
                         chunk.total_tokens() < chunking.tokens;
        for (const TokenSpan request : chunk) {
          ASSERT_LT(next, whole.size());
          const TokenSpan expected = whole[next++];
          ASSERT_TRUE(std::equal(request.begin(), request.end(),
                                 expected.begin(), expected.end()))
              << "request " << next - 1;
        }
      },
      chunking);
  EXPECT_GE(seconds, 0.0);
  EXPECT_EQ(chunks == 0, whole.empty());
  return next;
}

TEST(ForEachTraceChunkTest, ChunksAreTheTraceInOrder) {
  const std::string conversation =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  const std::string synthetic =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  // Token mode on the first 1,500 lines of each trace (11 and 22 million
  // tokens: many chunks), block mode on the whole traces.
  std::vector<std::unique_ptr<TempFile>> heads;
  for (const std::string& path : {conversation, synthetic}) {
    std::ifstream file(path);
    std::string head;
    std::string line;
    for (int i = 0; i < 1500 && std::getline(file, line); ++i) {
      head += line + "\n";
    }
    heads.push_back(std::make_unique<TempFile>(head));
  }
  const struct {
    std::string path;
    TraceOptions options;
    std::size_t requests;
  } traces[] = {
      {conversation, {}, 12031},
      {synthetic, {}, 3993},
      {heads[0]->path(), {TraceMode::kToken, kDefaultVocabulary}, 1500},
      {heads[1]->path(), {TraceMode::kToken, 1000}, 1500},
  };
  for (const auto& trace : traces) {
    const SequenceList whole = ReadMooncakeTrace(trace.path, trace.options);
    ASSERT_EQ(whole.size(), trace.requests);
    for (const TraceChunking& chunking : Chunkings()) {
      EXPECT_EQ(
          ExpectChunksAreTheTrace(trace.path, trace.options, chunking, whole),
          trace.requests)
          << trace.path << " tokens " << chunking.tokens << " requests "
          << chunking.requests << " background " << chunking.background;
    }
  }
}

// The line reader's buffer (256 KiB) must grow for a longer line, and lines
// may end in CRLF, be blank, or lack the last '\n'.
TEST(ForEachTraceChunkTest, LongLinesBlankLinesAndNoFinalNewline) {
  const std::string long_member(700000, 'x');
  const TempFile trace(R"({"input_length":1,"hash_ids":[3]})"
                       "\r\n\n  \n"
                       R"({"note":")" +
                       long_member +
                       R"(","input_length":600,"hash_ids":[4,5]})"
                       "\n"
                       R"({"input_length":2,"hash_ids":[6]})");
  const SequenceList expected = {{3}, {4, 5}, {6}};
  EXPECT_EQ(ReadMooncakeTrace(trace.path(), {}), expected);
  for (const TraceChunking& chunking : Chunkings()) {
    EXPECT_EQ(ExpectChunksAreTheTrace(trace.path(), {}, chunking, expected),
              3u);
  }
  const TempFile empty("");
  EXPECT_EQ(ReadMooncakeTrace(empty.path(), {}), SequenceList{});
  for (const TraceChunking& chunking : Chunkings()) {
    EXPECT_EQ(ExpectChunksAreTheTrace(empty.path(), {}, chunking, {}), 0u);
  }
}

// `lines` good lines of 3 blocks each, then a bad one, then good ones.
std::string TraceWithBadLine(std::size_t lines) {
  std::string text;
  for (std::size_t i = 0; i < lines; ++i) {
    text += fmt::format(R"({{"input_length":1500,"hash_ids":[{},{},{}]}})",
                        i % 10, 3 * i + 100, 3 * i + 101) +
            "\n";
  }
  text += R"({"input_length":1500,"hash_ids":[1,2,"3"]})"
          "\n";
  for (int i = 0; i < 5; ++i)
    text += R"({"input_length":1,"hash_ids":[1]})"
            "\n";
  return text;
}

// A streaming reader hands over every request before a bad line, then
// throws the line's error, whatever the chunks and threads; nothing after
// it is consumed. (A caller that must not print a partial result keeps its
// output until the stream has ended.)
TEST(ForEachTraceChunkTest, ABadLateLineIsThrownAfterEveryRequestBeforeIt) {
  const TempFile trace(TraceWithBadLine(2000));
  for (const TraceMode mode : {TraceMode::kBlock, TraceMode::kToken}) {
    for (const TraceChunking& chunking : Chunkings()) {
      std::size_t requests = 0;
      try {
        ForEachTraceChunk(
            trace.path(), {mode, 1000},
            [&](const SequenceList& chunk) { requests += chunk.size(); },
            chunking);
        ADD_FAILURE() << "accepted a bad line 2001";
      } catch (const InputError& error) {
        EXPECT_EQ(error.location(), "line 2001: $.hash_ids[2]");
        EXPECT_THAT(error.problem(), HasSubstr("found a string"));
      }
      EXPECT_EQ(requests, 2000u) << "tokens " << chunking.tokens;
    }
  }
  EXPECT_THROW(ForEachTraceChunk(
                   trace.path() + ".missing", {},
                   [](const SequenceList&) { ADD_FAILURE() << "consumed"; }),
               IoError);
  EXPECT_THROW(ForEachTraceChunk(
                   trace.path(), {TraceMode::kToken, 0},
                   [](const SequenceList&) { ADD_FAILURE() << "consumed"; }),
               std::invalid_argument);
}

// --- SPEC §10.1: a trace's arrivals and output lengths ---------------------

TEST(AppendTraceLineTest, ServingFieldsGiveArrivalsAndOutputLengths) {
  for (const TraceMode mode : {TraceMode::kBlock, TraceMode::kToken}) {
    const TraceOptions options{.mode = mode, .serving = true};
    SequenceList out;
    TraceServing serving;
    for (
        const char* line :
        {R"({"timestamp":0,"input_length":1,"output_length":0,"hash_ids":[1]})",
         R"({"output_length":1,"timestamp":2,"input_length":1,"hash_ids":[1]})",
         R"({"timestamp":2,"input_length":1,"output_length":512,"hash_ids":[1]})",
         R"({"timestamp":9007199254740,"input_length":1,"output_length":513,)"
         R"("hash_ids":[1]})",
         R"({"timestamp":9007199254740,"input_length":1,)"
         R"("output_length":9007199254740992,"hash_ids":[1]})"}) {
      AppendTraceLine(line, 1, options, out, nullptr, &serving);
    }
    EXPECT_EQ(out.size(), 5u);
    EXPECT_EQ(serving.arrivals_us,
              (std::vector<std::uint64_t>{0, 2000, 2000, 9007199254740000,
                                          9007199254740000}));
    // Block mode: ⌈output_length / 512⌉ blocks; token mode: tokens.
    EXPECT_EQ(
        serving.output_lengths,
        mode == TraceMode::kBlock
            ? (std::vector<std::uint64_t>{0, 1, 1, 2, std::uint64_t{1} << 44})
            : (std::vector<std::uint64_t>{0, 1, 512, 513,
                                          std::uint64_t{1} << 53}));
  }
}

TEST(AppendTraceLineTest, ServingFieldErrorsNameTheLineAndMember) {
  const TraceOptions options{.serving = true};
  const std::string tokens = R"("input_length":1,"hash_ids":[1])";
  // The messages' common beginnings.
  const std::string timestamp_range =
      "line 7: $.timestamp: expected an integer from 0 to 9007199254740, "
      "found ";
  const std::string output_range =
      "line 7: $.output_length: expected an integer from 0 to "
      "9007199254740992, found ";
  const std::string missing = "line 7: $: expected member ";
  const std::string twice = "expected each member once, found ";
  const struct {
    std::string members;  // besides the tokens
    std::string error;
  } kBad[] = {
      {R"("output_length":1)",
       missing + "\"timestamp\", found an object without it"},
      {R"("timestamp":1)",
       missing + "\"output_length\", found an object without it"},
      {R"("timestamp":-1,"output_length":1)", timestamp_range + "-1"},
      {R"("timestamp":9007199254741,"output_length":1)",
       timestamp_range + "9007199254741"},
      {R"("timestamp":1.5,"output_length":1)",
       timestamp_range + "1.5 (a number with a fraction)"},
      {R"("timestamp":null,"output_length":1)", timestamp_range + "null"},
      {R"("timestamp":"1","output_length":1)", timestamp_range + "a string"},
      {R"("timestamp":1,"output_length":-3)", output_range + "-3"},
      {R"("timestamp":1,"output_length":9007199254740993)",
       output_range + "9007199254740993"},
      {R"("timestamp":1,"output_length":[])", output_range + "an array"},
      {R"("timestamp":1,"timestamp":1,"output_length":1)",
       "line 7: $.timestamp: " + twice + "\"timestamp\" a second time"},
      {R"("timestamp":1,"output_length":1,"output_length":1)",
       "line 7: $.output_length: " + twice + "\"output_length\" a second time"},
      // Smaller than the last arrival in `serving`, 5 ms.
      {R"("timestamp":4,"output_length":1)",
       "line 7: $.timestamp: expected a timestamp of at least 5 (the one of "
       "the line before it), found 4"},
  };
  for (const auto& bad : kBad) {
    const std::string line = "{" + bad.members + "," + tokens + "}";
    SequenceList out;
    TraceServing serving{{5000}, {0}};
    EXPECT_EQ(test::InputErrorOf([&] {
                AppendTraceLine(line, 7, options, out, nullptr, &serving);
              }),
              bad.error)
        << line;
    EXPECT_TRUE(out.empty()) << line;
    EXPECT_EQ(serving, (TraceServing{{5000}, {0}})) << line;
  }
  // Without `serving` the fields are ignored, whatever they hold.
  SequenceList out;
  AppendTraceLine(R"({"timestamp":-4,"output_length":null,)" + tokens + "}", 1,
                  {}, out);
  AppendTraceLine("{" + tokens + "}", 2, {}, out);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_THROW(AppendTraceLine("{" + tokens + "}", 1, options, out),
               std::invalid_argument);
  EXPECT_THROW(
      ReadMooncakeTrace("-", {.namespace_field = "timestamp", .serving = true}),
      std::invalid_argument);
}

// Appends the serving fields of `chunk` to `out`, checking that it has one
// of each per request.
void AppendChunkServing(const TraceChunk& chunk, TraceServing& out) {
  EXPECT_EQ(chunk.serving.arrivals_us.size(), chunk.requests.size());
  EXPECT_EQ(chunk.serving.output_lengths.size(), chunk.requests.size());
  out.arrivals_us.insert(out.arrivals_us.end(),
                         chunk.serving.arrivals_us.begin(),
                         chunk.serving.arrivals_us.end());
  out.output_lengths.insert(out.output_lengths.end(),
                            chunk.serving.output_lengths.begin(),
                            chunk.serving.output_lengths.end());
}

// Timestamps are checked against the line before, blank lines skipped but
// counted, by every reader; without `serving` they are not read at all.
TEST(ReadMooncakeTraceTest, ServingTimestampsMustNotDecrease) {
  const TempFile trace(
      R"({"timestamp":5,"output_length":3,"input_length":1,"hash_ids":[1]})"
      "\n\n"
      R"({"timestamp":5,"output_length":600,"input_length":1,"hash_ids":[2]})"
      "\n"
      R"({"timestamp":3,"output_length":0,"input_length":1,"hash_ids":[3]})"
      "\n");
  const std::string error =
      "line 4: $.timestamp: expected a timestamp of at least 5 (the one of "
      "the line before it), found 3";
  TraceServing serving;
  EXPECT_EQ(test::InputErrorOf([&] {
              ReadMooncakeTrace(trace.path(), {.serving = true}, &serving);
            }),
            error);
  EXPECT_EQ(ReadMooncakeTrace(trace.path(), {}, &serving),
            (SequenceList{{1}, {2}, {3}}));
  EXPECT_EQ(serving, TraceServing{});  // not asked for: nothing read
  for (const TraceChunking& chunking : Chunkings()) {
    TraceServing streamed;
    EXPECT_EQ(test::InputErrorOf([&] {
                ForEachServeTraceChunk(
                    trace.path(), {.serving = true},
                    [&](const TraceChunk& chunk) {
                      AppendChunkServing(chunk, streamed);
                    },
                    chunking);
              }),
              error)
        << "requests " << chunking.requests;
    // Both requests before the bad line were consumed, with their fields.
    EXPECT_EQ(streamed, (TraceServing{{5000, 5000}, {1, 2}}))
        << "requests " << chunking.requests;
  }
}

// The real traces carry both fields on every line, non-decreasing: every
// reader gives each line's timestamp × 1000 and ⌈output_length / 512⌉ (read
// here with nlohmann-json), streamed or whole.
TEST(ForEachServeTraceChunkTest, TheRealTracesServingFieldsAreTheirLines) {
  for (const std::string path :
       {KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl",
        KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl"}) {
    TraceServing expected;
    std::ifstream file(path);
    for (std::string line; std::getline(file, line);) {
      if (line.empty()) continue;
      const auto json = nlohmann::json::parse(line);
      expected.arrivals_us.push_back(json.at("timestamp").get<std::uint64_t>() *
                                     1000);
      expected.output_lengths.push_back(
          (json.at("output_length").get<std::uint64_t>() + 511) / 512);
    }
    const TraceOptions options{.serving = true};
    TraceServing whole;
    const SequenceList requests = ReadMooncakeTrace(path, options, &whole);
    EXPECT_EQ(requests, ReadMooncakeTrace(path, {}));
    EXPECT_EQ(whole, expected) << path;
    for (const TraceChunking& chunking : Chunkings()) {
      TraceServing streamed;
      std::size_t streamed_requests = 0;
      ForEachServeTraceChunk(
          path, options,
          [&](const TraceChunk& chunk) {
            streamed_requests += chunk.requests.size();
            AppendChunkServing(chunk, streamed);
          },
          chunking);
      EXPECT_EQ(streamed_requests, requests.size());
      EXPECT_EQ(streamed, expected) << path << " " << chunking.requests;
    }
  }
}

// When the consumer throws, the reader thread is stopped and joined (the
// test would hang or crash otherwise) and the consumer's exception comes
// out unchanged.
TEST(ForEachTraceChunkTest, AConsumerErrorStopsTheReader) {
  const TempFile trace(TraceWithBadLine(2000));
  for (const TraceChunking& chunking : Chunkings()) {
    int chunks = 0;
    EXPECT_THROW(ForEachTraceChunk(
                     trace.path(), {TraceMode::kToken, 1000},
                     [&](const SequenceList&) {
                       if (++chunks == 2) throw std::length_error("full");
                     },
                     chunking),
                 std::length_error);
    EXPECT_EQ(chunks, 2);
  }
}

}  // namespace
}  // namespace kvprefix
