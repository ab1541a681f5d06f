// `kvprefix verify --format requests --serving` (SPEC §10): generated
// serving documents, the serving checker (whole answers, §10's rules, the
// engines without a request lifecycle skipped and counted), the shrinker's
// serving pass, and the command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "checking/random_input.h"
#include "checking/serving_check.h"
#include "io/json_output.h"
#include "io/replay_document.h"
#include "testing/program_run.h"
#include "testing/serving_mutants.h"
#include "verify/checker.h"
#include "verify/inputs.h"
#include "verify/output_check.h"
#include "verify/shrink.h"

namespace kvprefix::verify {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GeneratedServeInputTest, CarriesSection10MembersDeterministically) {
  std::size_t several_running = 0;
  std::size_t unique = 0;
  for (std::uint64_t run = 0; run < 40; ++run) {
    const NamedServeInput generated =
        GeneratedServeInput(1, run, 20, GeneratedModel{}, {});
    const ServeInput& input = generated.input;
    EXPECT_EQ(GeneratedServeInput(1, run, 20, GeneratedModel{}, {}).input,
              input);
    // The §8 document is GeneratedReplayInput's, without its namespaces.
    ReplayInput replay =
        GeneratedReplayInput(1, run, 20, GeneratedModel{}, {}).input;
    checking::RemoveRandomNamespaces(1 + run, replay);
    EXPECT_EQ(input.replay, replay);
    EXPECT_EQ(input.arrivals_us.size(), input.replay.requests.size());
    EXPECT_EQ(input.output_lengths.size(), input.replay.requests.size());
    for (std::size_t i = 1; i < input.arrivals_us.size(); ++i) {
      EXPECT_LE(input.arrivals_us[i - 1], input.arrivals_us[i]);
    }
    EXPECT_GE(input.serve.max_running, 1u);
    EXPECT_LE(input.serve.max_running, 4u);
    several_running += input.serve.max_running > 1;
    unique += input.serve.output == OutputMode::kUnique;
    // Written and read back as a §10 document.
    std::string json;
    AppendServeDocumentJson(input, json);
    EXPECT_EQ(ParseServeDocument(json), input);
  }
  EXPECT_EQ(GeneratedServeInput(1, 3, 3, GeneratedModel{}, {}).name,
            "generated serving document 3 (--seed 1, size 3)");
  EXPECT_GT(several_running, 20u);
  EXPECT_GT(unique, 10u);
}

ServeInput TwoAtOnce(std::uint64_t max_running, OutputMode output) {
  ServeInput input;
  input.replay = {{{1, 2}, {1, 2}}, {.capacity = 4}};
  input.arrivals_us = {0, 1};
  input.output_lengths = {5, 0};
  input.serve = {
      .max_running = max_running, .decode_us_per_token = 1, .output = output};
  return input;
}

TEST(ServeEngineCheckerTest, OneAtATimeEnginesAreGivenSection10_7Only) {
  const auto skips = std::make_shared<ServeSkips>();
  const ServeChecker check = MakeServeEngineChecker({"double-array"}, skips);
  EXPECT_EQ(check(TwoAtOnce(1, OutputMode::kNone)), std::nullopt);
  const auto refused = check(TwoAtOnce(2, OutputMode::kNone));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->kind, FailureKind::kRefused);
  EXPECT_EQ(refused->message,
            "engine 'double-array' has no request lifecycle: it takes only "
            "serving documents with max_running 1 and output \"none\" (SPEC "
            "§10.7)");
  check(TwoAtOnce(1, OutputMode::kUnique));
  EXPECT_EQ(skips->Format(),
            "skipped for double-array: 2 serving documents with max_running "
            "above 1 or output \"unique\" (no request lifecycle: it answers "
            "one request at a time, exact only for SPEC §10.7's documents)\n");
  // "all": hash has a lifecycle and is checked; radix and double-array are
  // skipped.
  const auto all_skips = std::make_shared<ServeSkips>();
  EXPECT_EQ(MakeServeEngineChecker(
                {"all"}, all_skips)(TwoAtOnce(2, OutputMode::kUnique)),
            std::nullopt);
  EXPECT_THAT(all_skips->Format(), HasSubstr("skipped for radix: 1 "));
  EXPECT_THAT(all_skips->Format(), Not(HasSubstr("hash")));
  EXPECT_THROW(MakeServeEngineChecker({"nope"}, skips), std::invalid_argument);
}

// The serving pass shrinks max_running, output lengths, rates and
// arrivals as far as the failure allows.
TEST(ServeShrinkTest, ShrinksTheWorkerAndArrivalsTogether) {
  const auto check = [](const ServeInput& input) -> std::optional<Failure> {
    const auto report =
        checking::CheckServeInput(input, [](const ServeInput& document) {
          std::vector<std::unique_ptr<ServingCache>> caches;
          caches.push_back(test::MakeServingMutant(
              test::ServingBug::kSpecCachesAtStart, document.replay.options));
          return caches;
        });
    if (!report) return std::nullopt;
    return Failure{FailureKind::kWrongAnswer, *report};
  };
  ServeInput failing;
  failing.replay = {{{5, 6, 7}, {9}, {5, 6, 7, 8}, {3, 3}}, {}};
  failing.arrivals_us = {2, 4, 7, 20};
  failing.output_lengths = {4, 1, 3, 2};
  failing.serve = {.max_running = 4,
                   .prefill_us_per_token = 2,
                   .decode_us_per_token = 3,
                   .overhead_us = 1,
                   .output = OutputMode::kUnique};
  const auto failure = check(failing);
  ASSERT_TRUE(failure.has_value());
  const ServeShrinkResult shrunk = Shrink(failing, *failure, check, {});
  std::string json;
  AppendServeDocumentJson(shrunk.input, json);
  // Two requests starting together, the second hitting the first's prompt
  // that the mutant cached at its start.
  EXPECT_EQ(json, R"({"requests":[[0],[0]],"policy":"lru",)"
                  R"("page_size":1,"arrivals_us":[0,0],"output_lengths":[0,0],)"
                  R"("max_running":2})"
                  "\n");
  EXPECT_THAT(
      DescribeShrink(failing, shrunk),
      HasSubstr(
          "from 4 requests (10 tokens; unbounded, page size 1), "
          "max_running 4 to 2 requests (2 tokens; unbounded, page size 1), "
          "max_running 2"));
}

TEST(VerifyServingCliTest, EnginesAgreeAndSkipsAreCounted) {
  const test::ProgramRun run =
      test::RunProgram(KVPREFIX_CLI, {"verify", "--engines", "all", "--format",
                                      "requests", "--serving", "--runs", "100",
                                      "--seed", "1", "--jobs", "1"});
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("generating serving documents with --seed 1\n"
                                 "OK: 100 inputs agree with the reference"));
  EXPECT_THAT(run.out, HasSubstr("skipped for double-array: "));
  EXPECT_THAT(run.out, HasSubstr("skipped for radix: "));
}

TEST(VerifyServingCliTest, GivenDocumentsAndUsageErrors) {
  const test::ScratchDir dir;
  const std::string path = dir.Path("doc.json");
  test::WriteTextFile(
      path, R"({"requests":[[1,2],[1,2],[1,2]],"capacity":3,)"
            R"("max_running":2,"arrivals_us":[0,1,5],"output_lengths":[5,0,0],)"
            R"("decode_us_per_token":1})");
  const test::ProgramRun run = test::RunProgram(
      KVPREFIX_CLI, {"verify", "--engines", "hash,radix", "--format",
                     "requests", "--serving", path});
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("OK: 1 inputs agree with the reference"));
  // radix, without a request lifecycle, is not given max_running 2.
  EXPECT_THAT(run.out, HasSubstr("skipped for radix: 1 serving documents"));
  const test::ProgramRun batch = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--engines", "hash", "--serving", "--runs", "1"});
  EXPECT_EQ(batch.status, 2);
  EXPECT_THAT(batch.err, HasSubstr("--serving: applies to --format requests"));
}

// `kvprefix replay` itself as the command: the serving answer it prints is
// the reference's, in either protocol (a shell loop makes it a lines one).
TEST(VerifyServingCliTest, CommandPrintingTheServingAnswerAgrees) {
  const std::string replay =
      std::string(KVPREFIX_CLI) + " replay /dev/stdin --input-format requests";
  const test::ProgramRun process = test::RunProgram(
      KVPREFIX_CLI, {"verify", "--cmd", replay, "--format", "requests",
                     "--serving", "--runs", "30", "--seed", "1"});
  EXPECT_EQ(process.status, 0) << process.out << process.err;
  EXPECT_THAT(process.out, HasSubstr("OK: 30 inputs agree with the reference"));
  const test::ProgramRun lines = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--cmd",
       "while read -r line; do printf '%s\\n' \"$line\" | " + replay + "; done",
       "--protocol", "lines", "--format", "requests", "--serving", "--runs",
       "30", "--seed", "1", "--jobs", "1"});
  EXPECT_EQ(lines.status, 0) << lines.out << lines.err;
  EXPECT_THAT(lines.out, HasSubstr("OK: 30 inputs agree with the reference"));
}

// The shared §10 cases (tests/data/cases/serve/s*.json, whose "expected"
// is §10.5's answer and which carry a "why") are read by verify --serving
// and by replay; a document with every §10 default, which `kvprefix
// replay` answers with §5's matches, agrees too (both were failures: the
// case reader asked for §5's "matches" and knew no "why", and verify asked
// for §10.5's answer only).
TEST(VerifyServingCliTest, SharedCasesAndSection8DocumentsAgree) {
  std::vector<std::string> arguments = {
      "verify",
      "--cmd",
      std::string(KVPREFIX_CLI) + " replay /dev/stdin --input-format requests",
      "--format",
      "requests",
      "--serving"};
  std::size_t cases = 0;
  const std::string folder =
      std::string(KVPREFIX_SOURCE_DIR) + "/tests/data/cases/serve";
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().filename().string().starts_with("s")) {
      arguments.push_back(entry.path().string());
      ++cases;
    }
  }
  ASSERT_GE(cases, 19u);
  const test::ScratchDir dir;
  const std::string plain = dir.Path("plain.json");
  test::WriteTextFile(plain, R"({"requests":[[1,2],[1,2]],"max_running":1})");
  arguments.push_back(plain);
  const test::ProgramRun run = test::RunProgram(KVPREFIX_CLI, arguments);
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("OK: " + std::to_string(cases + 1) +
                                 " inputs agree with the reference"));
  const test::ProgramRun replay = test::RunProgram(
      KVPREFIX_CLI, {"replay", folder + "/s10_max_running.json",
                     "--input-format", "requests"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_THAT(replay.out, HasSubstr(R"("totals":{"requests":3,)"));
}

// A command that ignores the document's max_running (a simulator without
// concurrency) is caught, named by the JSON location of the first value
// that differs, and shrunk to two empty requests arriving together.
TEST(VerifyServingCliTest, CommandIgnoringConcurrencyIsCaughtAndShrunk) {
  const test::ScratchDir dir;
  const std::string out = dir.Path("failure.json");
  const test::ProgramRun run = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--cmd",
       std::string(KVPREFIX_CLI) +
           " replay /dev/stdin --input-format requests --max-running 1",
       "--format", "requests", "--serving", "--runs", "100", "--seed", "1",
       "--out", out});
  EXPECT_EQ(run.status, 1) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("FAILED: wrong-answer on generated serving "
                                 "document"));
  EXPECT_THAT(run.out,
              HasSubstr("$.totals.peak_running: expected 2, found 1\n"));
  EXPECT_THAT(run.out, HasSubstr("minimal failing SPEC §10 document written"));
  EXPECT_EQ(test::ReadTextFile(out),
            R"({"requests":[[],[]],"capacity":0,"policy":"lru",)"
            R"("page_size":1,"arrivals_us":[0,0],"output_lengths":[0,0],)"
            R"("max_running":2})"
            "\n");
}

TEST(CheckPrintedJsonAnswerTest, NamesTheFirstDifferenceByItsLocation) {
  const std::string canonical =
      R"({"requests":[{"matched_length":1,"cache_node":4,"refused":false}],)"
      R"("totals":{"hit_ratio":0.5,"makespan_us":0}})"
      "\n";
  EXPECT_EQ(CheckPrintedJsonAnswer(canonical, canonical, true, "§10.5"),
            std::nullopt);
  // A double as a number (5e-1 is 0.5), any layout, when the bytes are not
  // checked.
  const std::string spaced =
      R"({ "totals": {"makespan_us": 0, "hit_ratio": 5e-1},)"
      R"( "requests": [{"refused": false, "cache_node": 4,)"
      R"( "matched_length": 1}] })";
  EXPECT_EQ(CheckPrintedJsonAnswer(spaced, canonical, false, "§10.5"),
            std::nullopt);
  const auto format = CheckPrintedJsonAnswer(spaced, canonical, true, "§10.5");
  ASSERT_TRUE(format.has_value());
  EXPECT_EQ(format->kind, FailureKind::kFormat);
  EXPECT_THAT(format->message, HasSubstr("SPEC §10.5's compact form"));
  const auto check = [&](std::string text) {
    return CheckPrintedJsonAnswer(text, canonical, false, "§10.5");
  };
  const auto wrong = check(
      R"({"requests":[{"matched_length":2,"cache_node":4,"refused":false}],)"
      R"("totals":{"hit_ratio":0.5,"makespan_us":0}})");
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(wrong->kind, FailureKind::kWrongAnswer);
  EXPECT_EQ(wrong->message,
            "$.requests[0].matched_length: expected 1, found 2");
  const auto missing = check(R"({"requests":[{"matched_length":1,)"
                             R"("cache_node":4}],"totals":{}})");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->kind, FailureKind::kWrongShape);
  EXPECT_EQ(missing->message, "$.requests[0]: missing member \"refused\"");
  const auto extra = check(R"({"requests":[],"totals":{},"x":1})");
  ASSERT_TRUE(extra.has_value());
  EXPECT_EQ(extra->message, "$: unknown member \"x\"");
  const auto length = check(R"({"requests":[],"totals":{}})");
  ASSERT_TRUE(length.has_value());
  EXPECT_EQ(length->message, "$.requests: expected 1 entries, found 0");
  const auto type =
      check(R"({"requests":[{"matched_length":1,"cache_node":4,"refused":0}],)"
            R"("totals":{"hit_ratio":0.5,"makespan_us":0}})");
  ASSERT_TRUE(type.has_value());
  EXPECT_EQ(type->message,
            "$.requests[0].refused: expected true or false, found 0");
  // An integer's place takes an unsigned integer, whatever else is printed
  // (a fraction, a negative number, one past 64 bits): a wrong shape.
  for (const std::string value : {"0.5", "-1", "18446744073709551616"}) {
    const auto integer =
        check(R"({"requests":[{"matched_length":)" + value +
              R"(,"cache_node":4,"refused":false}],)"
              R"("totals":{"hit_ratio":0.5,"makespan_us":0}})");
    ASSERT_TRUE(integer.has_value()) << value;
    EXPECT_EQ(integer->kind, FailureKind::kWrongShape) << value;
    EXPECT_EQ(integer->message,
              "$.requests[0].matched_length: expected an integer from 0 to "
              "18446744073709551615, found " +
                  value);
  }
  const auto deep = check(std::string(5000, '['));
  ASSERT_TRUE(deep.has_value());
  EXPECT_EQ(deep->kind, FailureKind::kWrongShape);
  EXPECT_THAT(deep->message, HasSubstr("nested deeper than"));
  // A cache with node IDs of its own: cache_node neither compared nor
  // required.
  EXPECT_EQ(CheckPrintedJsonAnswer(
                R"({"requests":[{"matched_length":1,"refused":false}],)"
                R"("totals":{"hit_ratio":0.5,"makespan_us":0}})",
                canonical, true, "§10.5", "cache_node"),
            std::nullopt);
}

}  // namespace
}  // namespace kvprefix::verify
