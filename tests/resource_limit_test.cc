// Running out of memory (SPEC §6): every subcommand that reads
// input (match, replay, curve, convert mooncake, verify), run in a
// child process under an address-space limit (RLIMIT_AS, set in the child
// before exec) on an input too large for it, exits with status 1 and one
// line "kvprefix: out of memory while <what it was doing>", prints nothing
// on stdout, creates no output file and leaves an existing one untouched.
// Before the fix, `match` reported simdjson's allocation failure as bad
// input (exit 2, "$: expected valid JSON, found Error allocating memory").
// The limits sweep from just above what the tool needs to start to well
// below what the input needs, so that each phase (reading, parsing, the
// engine, formatting the output) gets its turn to fail.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "testing/program_run.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMiB = 1 << 20;
constexpr char kPrevious[] = "previous contents\n";

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // sanitizers reserve terabytes of shadow
#else
constexpr bool kSanitized = false;
#endif

// The smallest address space, in MiB, in which `kvprefix engines` runs: the
// tool's own start-up (its shared libraries).
std::uint64_t StartupMiB() {
  std::uint64_t low = 1;
  std::uint64_t high = 1024;
  while (low < high) {
    const std::uint64_t middle = (low + high) / 2;
    const auto run = test::RunProgram(KVPREFIX_CLI, {"engines"},
                                      {.address_space_bytes = middle * kMiB});
    if (run.status == 0) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

// `sequences` arrays of 1000 distinct seven-digit tokens each (8 bytes of
// JSON per token), comma-separated: every token a new node.
std::string LargeSequences(std::size_t sequences) {
  std::string json;
  int token = 1000000;
  for (std::size_t i = 0; i < sequences; ++i) {
    json += i == 0 ? "[" : ",[";
    for (int j = 0; j < 1000; ++j) {
      json += std::to_string(token++);
      json += j + 1 < 1000 ? "," : "]";
    }
  }
  return json;
}

// A SPEC §4 input of LargeSequences(sequences) and one request.
std::string LargeBatchInput(std::size_t sequences) {
  return R"({"cached_sequences":[)" + LargeSequences(sequences) +
         R"(],"requests":[[1000000,1000001,5]]})";
}

// LargeBatchInput(sequences) as a case file, with the expected answer.
std::string LargeCaseFile(std::size_t sequences) {
  std::string json = LargeBatchInput(sequences);
  json.pop_back();
  return json + R"(,"expected":{"matches":[{"matched_length":2,"cache_node":2,)"
                R"("uncached_suffix":[5]}]}})";
}

// A Mooncake trace whose token-mode expansion is large: `lines` requests of
// 100 blocks (51,200 tokens) each, all blocks distinct.
std::string LargeTokenTrace(std::size_t lines) {
  std::string text;
  std::size_t id = 0;
  for (std::size_t i = 0; i < lines; ++i) {
    text +=
        R"({"timestamp":0,"input_length":51200,"output_length":1,"hash_ids":[)";
    for (int b = 0; b < 100; ++b) {
      text += std::to_string(id++);
      text += b + 1 < 100 ? "," : "]}\n";
    }
  }
  return text;
}

class ResourceLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "RLIMIT_AS and sanitizers do not mix";
    startup_mib_ = StartupMiB();
    ASSERT_LT(startup_mib_, 512u);
  }

  // Runs `args` (OUTPUT stands for an output file) under each limit of
  // `extras_mib` (MiB above the tool's start-up). Each run must succeed or
  // fail as SPEC §6 says; at least `min_failures` of them must run out.
  void ExpectCleanFailures(const std::vector<std::string>& args,
                           const std::vector<std::uint64_t>& extras_mib,
                           int min_failures) {
    const std::string output = dir_.Path("output");
    int failures = 0;
    int runs = 0;
    for (const std::uint64_t extra : extras_mib) {
      // Half the runs start with an existing output file, half without.
      const bool existing = runs++ % 2 == 1;
      fs::remove(output);
      if (existing) test::WriteTextFile(output, kPrevious);
      std::vector<std::string> run_args;
      for (const std::string& arg : args) {
        run_args.push_back(arg == "OUTPUT" ? output : arg);
      }
      const test::ProgramRun run = test::RunProgram(
          KVPREFIX_CLI, run_args,
          {.address_space_bytes = (startup_mib_ + extra) * kMiB});
      const std::string context = fmt::format(
          "{} under {} + {} MiB", fmt::join(args, " "), startup_mib_, extra);
      ASSERT_EQ(run.signal, 0) << context << ": killed by a signal\n"
                               << run.err;
      if (run.status == 0) continue;
      ++failures;
      EXPECT_EQ(run.status, 1) << context << "\n" << run.err;
      EXPECT_TRUE(std::regex_match(
          run.err, std::regex("kvprefix: out of memory while [^\n]+\n")))
          << context << "\n"
          << run.err;
      EXPECT_EQ(run.out, "") << context;
      if (existing) {
        EXPECT_EQ(test::ReadTextFile(output), kPrevious) << context;
      } else {
        EXPECT_FALSE(fs::exists(output)) << context;
      }
      // No temporary file of an atomic write is left behind either.
      for (const auto& entry : fs::directory_iterator(dir_.Path("."))) {
        EXPECT_FALSE(entry.path().filename().string().starts_with(".output."))
            << context << ": " << entry.path();
      }
    }
    EXPECT_GE(failures, min_failures);
  }

  test::ScratchDir dir_;
  std::uint64_t startup_mib_ = 0;
};

// From too little to read the input to enough for most of the work.
const std::vector<std::uint64_t> kSweep = {2, 4, 8, 16, 32, 64, 128, 256};

// 3,000 sequences: 24 MB of JSON, 3 million nodes.
TEST_F(ResourceLimitTest, MatchRunsOutOfMemoryCleanly) {
  const std::string input = dir_.Path("input.json");
  test::WriteTextFile(input, LargeBatchInput(3000));
  // Five of the eight limits: the fast path (io/json_fast_input.h) reads
  // this input in less than 256 MiB above start-up.
  ExpectCleanFailures({"match", input, "-o", "OUTPUT"}, kSweep, 5);
  // The reference engine needs more than reading: it runs out while
  // matching.
  ExpectCleanFailures({"match", input, "--engine", "reference", "-o", "OUTPUT"},
                      {144, 176}, 1);
  // From standard input too.
  const test::ProgramRun run = test::RunProgram(
      KVPREFIX_CLI, {"match"},
      {.stdin_path = input, .address_space_bytes = (startup_mib_ + 32) * kMiB});
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.err, ::testing::StartsWith(
                           "kvprefix: out of memory while reading <stdin>"));
}

// 600 requests of 51,200 tokens in token mode: 30.7 million tokens.
TEST_F(ResourceLimitTest, ReplayRunsOutOfMemoryCleanly) {
  const std::string trace = dir_.Path("trace.jsonl");
  test::WriteTextFile(trace, LargeTokenTrace(600));
  ExpectCleanFailures({"replay", trace, "--mode", "token", "--vocab", "1000000",
                       "--matches", "OUTPUT"},
                      kSweep, 6);
}

// A SPEC §8 replay document of 3,000 requests (--input-format requests).
TEST_F(ResourceLimitTest, ReplayDocumentRunsOutOfMemoryCleanly) {
  const std::string document = dir_.Path("document.json");
  test::WriteTextFile(document,
                      R"({"requests":[)" + LargeSequences(3000) + "]}");
  ExpectCleanFailures(
      {"replay", document, "--input-format", "requests", "-o", "OUTPUT"},
      kSweep, 6);
}

TEST_F(ResourceLimitTest, ConvertRunsOutOfMemoryCleanly) {
  const std::string trace = dir_.Path("trace.jsonl");
  test::WriteTextFile(trace, LargeTokenTrace(600));
  ExpectCleanFailures({"convert", "mooncake", trace, "--mode", "token",
                       "--cached-fraction", "0.5", "-o", "OUTPUT"},
                      kSweep, 6);
}

TEST_F(ResourceLimitTest, CurveRunsOutOfMemoryCleanly) {
  const std::string trace = dir_.Path("trace.jsonl");
  test::WriteTextFile(trace, LargeTokenTrace(600));
  ExpectCleanFailures({"curve", trace, "--mode", "token", "--vocab", "1000000",
                       "--points", "8", "-o", "OUTPUT"},
                      kSweep, 6);
}

// Streaming: replay and curve hold the index and a window of the
// trace, not the expanded trace. Token mode of the conversation trace is
// 145 million tokens, 580 MB expanded; before streaming, replay peaked at
// 0.93 GB of RSS (1.1 GB with a capacity of half its distinct prefixes) and
// ran out of memory under these limits ("out of memory while reading").
// Now the radix index (364 MB unbounded; a bounded cache needs more per
// node) and a few MB of window fit, and the answers are those of the
// unlimited run, pinned here.
TEST_F(ResourceLimitTest, StreamedTokenModeReplayAndCurveFitInHalfTheOldPeak) {
  constexpr std::uint64_t kLimit = 512 * kMiB;
  constexpr std::uint64_t kBoundedLimit = 768 * kMiB;
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  // The summary up to memory_bytes (the rest are sizes and timings).
  const auto counts = [](const std::string& out) {
    return out.substr(0, out.find(",\"memory_bytes\""));
  };
  const test::ProgramRun replay =
      test::RunProgram(KVPREFIX_CLI, {"replay", trace, "--mode", "token"},
                       {.address_space_bytes = kLimit});
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(counts(replay.out),
            R"({"engine":"radix","mode":"token","vocab":128256,)"
            R"("capacity":null,"policy":"lru","page_size":1,"model":"spec",)"
            R"("match_limit":"all","requests":12031,)"
            R"("request_tokens":144793823,"matched_tokens":54098632,)"
            R"("hit_ratio":0.37362527543733687,"nodes":90695191,)"
            R"("peak_nodes":90695191,"evictions":0)");
  // Half the distinct prefixes.
  const test::ProgramRun bounded = test::RunProgram(
      KVPREFIX_CLI,
      {"replay", trace, "--mode", "token", "--capacity", "45347595"},
      {.address_space_bytes = kBoundedLimit});
  ASSERT_EQ(bounded.status, 0) << bounded.err;
  EXPECT_EQ(
      counts(bounded.out),
      R"({"engine":"radix","mode":"token","vocab":128256,)"
      R"("capacity":45347595,"policy":"lru","page_size":1,"model":"spec",)"
      R"("match_limit":"all",)"
      R"("requests":12031,"request_tokens":144793823,)"
      R"("matched_tokens":53611667,"hit_ratio":0.3702621140129714,)"
      R"("nodes":45347595,"peak_nodes":45347595,"evictions":45834561)");
  const test::ProgramRun curve = test::RunProgram(
      KVPREFIX_CLI, {"curve", trace, "--mode", "token", "--points", "4"},
      {.address_space_bytes = kLimit});
  ASSERT_EQ(curve.status, 0) << curve.err;
  EXPECT_EQ(curve.out,
            R"({"capacity":1,"capacity_bytes":null,"matched_tokens":12030,)"
            R"("request_tokens":144793823,"hit_ratio":8.308365474955379e-05})"
            "\n"
            R"({"capacity":449,"capacity_bytes":null,)"
            R"("matched_tokens":5401470,"request_tokens":144793823,)"
            R"("hit_ratio":0.037304560982549646})"
            "\n"
            R"({"capacity":201863,"capacity_bytes":null,)"
            R"("matched_tokens":6222612,"request_tokens":144793823,)"
            R"("hit_ratio":0.04297567307135747})"
            "\n"
            R"({"capacity":90695191,"capacity_bytes":null,)"
            R"("matched_tokens":54098632,"request_tokens":144793823,)"
            R"("hit_ratio":0.37362527543733687})"
            "\n");
}

// verify writes its --out case file only for a finding; running out of
// memory is none.
TEST_F(ResourceLimitTest, VerifyRunsOutOfMemoryCleanly) {
  const std::string input = dir_.Path("input.json");
  test::WriteTextFile(input, LargeBatchInput(3000));
  ExpectCleanFailures({"verify", "--engines", "all", input, "--out", "OUTPUT"},
                      kSweep, 6);
  const std::string case_file = dir_.Path("case.json");
  test::WriteTextFile(case_file, LargeCaseFile(3000));
  ExpectCleanFailures(
      {"verify", "--engines", "all", "--cases", case_file, "--out", "OUTPUT"},
      kSweep, 6);
}

}  // namespace
}  // namespace kvprefix
