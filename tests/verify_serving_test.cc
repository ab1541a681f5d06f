// `kvprefix verify --format requests --serving` (SPEC §10): generated
// serving documents, the serving checker (whole answers, §10's rules, the
// engines without a request lifecycle skipped and counted), the shrinker's
// serving pass, and the command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "checking/serving_check.h"
#include "io/json_output.h"
#include "io/replay_document.h"
#include "testing/program_run.h"
#include "testing/serving_mutants.h"
#include "verify/checker.h"
#include "verify/inputs.h"
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
    // The §8 document is GeneratedReplayInput's.
    EXPECT_EQ(input.replay,
              GeneratedReplayInput(1, run, 20, GeneratedModel{}, {}).input);
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
  const test::ProgramRun command = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--cmd", "cat", "--format", "requests", "--serving", path});
  EXPECT_EQ(command.status, 2);
  EXPECT_THAT(command.err, HasSubstr("--cmd is not supported with it yet"));
  const test::ProgramRun batch = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--engines", "hash", "--serving", "--runs", "1"});
  EXPECT_EQ(batch.status, 2);
  EXPECT_THAT(batch.err, HasSubstr("--serving: applies to --format requests"));
}

}  // namespace
}  // namespace kvprefix::verify
