// Tests of io/json_input and io/json_output: SPEC §4 parsing (valid forms and
// every kind of bad input, with the exact JSON location), SPEC §5 output byte
// for byte, round trips, atomic file replacement, and the library path of the
// seed examples and shared cases through every engine chosen by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/json_input.h"
#include "io/json_output.h"
#include "kvprefix/batch.h"
#include "kvprefix/registry.h"
#include "testing/shared_cases.h"
#include "tests/bad_inputs.h"
#include "tests/seed_examples.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ParseBatchInputTest, ReadsBothMemberOrders) {
  const BatchInput expected{{{1, 2}, {1, 2, 3}, {4}}, {{1, 2, 9}, {4, 5}, {5}}};
  EXPECT_EQ(ParseBatchInput(R"({"cached_sequences":[[1,2],[1,2,3],[4]],)"
                            R"("requests":[[1,2,9],[4,5],[5]]})"),
            expected);
  EXPECT_EQ(ParseBatchInput(R"({"requests":[[1,2,9],[4,5],[5]],)"
                            R"("cached_sequences":[[1,2],[1,2,3],[4]]})"),
            expected);
}

TEST(ParseBatchInputTest, AcceptsWhitespaceEverywhere) {
  EXPECT_EQ(ParseBatchInput(" \n{ \"cached_sequences\" :\t[ [ 1 , 2 ] ] ,\r\n"
                            " \"requests\" : [ [ 3 ] , [ ] ] } \n\n"),
            (BatchInput{{{1, 2}}, {{3}, {}}}));
}

TEST(ParseBatchInputTest, ReadsEmptyArraysAndEmptySequences) {
  EXPECT_EQ(ParseBatchInput(R"({"cached_sequences":[],"requests":[]})"),
            BatchInput{});
  const BatchInput input =
      ParseBatchInput(R"({"cached_sequences":[[]],"requests":[[],[]]})");
  EXPECT_EQ(input.cached_sequences.size(), 1u);
  EXPECT_EQ(input.requests.size(), 2u);
  EXPECT_EQ(input.requests.total_tokens(), 0u);
}

TEST(ParseBatchInputTest, ReadsTheWholeInt32RangeAndNegativeZero) {
  EXPECT_EQ(ParseBatchInput(R"({"cached_sequences":[[-2147483648,2147483647]],)"
                            R"("requests":[[-0,0,-1]]})"),
            (BatchInput{{{INT32_MIN, INT32_MAX}}, {{0, 0, -1}}}));
}

class BadInputTest : public ::testing::TestWithParam<testing::BadInput> {};

TEST_P(BadInputTest, NamesTheLocationAndTheProblem) {
  const testing::BadInput& bad = GetParam();
  try {
    ParseBatchInput(bad.json);
    FAIL() << "accepted: " << bad.json;
  } catch (const InputError& error) {
    EXPECT_EQ(error.location(), bad.location) << error.what();
    EXPECT_THAT(error.problem(), HasSubstr(bad.problem)) << error.what();
    EXPECT_THAT(error.problem(), HasSubstr("expected ")) << error.what();
    EXPECT_THAT(error.problem(), HasSubstr(", found ")) << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKind, BadInputTest,
                         ::testing::ValuesIn(testing::BadInputs()),
                         [](const auto& info) { return info.param.name; });

TEST(ParseBatchInputTest, ErrorsPointIntoLaterSequences) {
  std::string json = R"({"cached_sequences":[],"requests":[)";
  for (int i = 0; i < 3; ++i) json += "[1,2,3],";
  json += "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,1.5]]}";
  try {
    ParseBatchInput(json);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.location(), "$.requests[3][17]");
  }
}

TEST(ReadBatchInputFileTest, MissingFileIsAnIoErrorNamingIt) {
  try {
    ReadBatchInputFile("/nonexistent/kvprefix-input.json");
    FAIL();
  } catch (const IoError& error) {
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/kvprefix-input.json"));
    EXPECT_THAT(error.what(), HasSubstr("No such file"));
  }
}

TEST(AppendMatchesJsonTest, WritesTheSpecExampleByteForByte) {
  const SequenceList requests = {{1, 2, 9}, {4, 5}, {5}};
  const std::vector<Match> matches = {{2, 2}, {1, 4}, {0, 0}};
  std::string out;
  AppendMatchesJson(requests, matches, out);
  EXPECT_EQ(
      out,
      R"({"matches":[{"matched_length":2,"cache_node":2,"uncached_suffix":[9]},)"
      R"({"matched_length":1,"cache_node":4,"uncached_suffix":[5]},)"
      R"({"matched_length":0,"cache_node":0,"uncached_suffix":[5]}]})"
      "\n");
}

TEST(AppendMatchesJsonTest, WritesExtremesAndEmptyLists) {
  const SequenceList requests = {{INT32_MIN, INT32_MAX}, {}};
  const std::vector<Match> matches = {{0, UINT64_MAX}, {0, 0}};
  std::string out;
  AppendMatchesJson(requests, matches, out);
  EXPECT_EQ(
      out,
      R"({"matches":[{"matched_length":0,"cache_node":18446744073709551615,)"
      R"("uncached_suffix":[-2147483648,2147483647]},)"
      R"({"matched_length":0,"cache_node":0,"uncached_suffix":[]}]})"
      "\n");
  out.clear();
  AppendMatchesJson(SequenceList{}, {}, out);
  EXPECT_EQ(out, "{\"matches\":[]}\n");
}

TEST(AppendBatchInputJsonTest, RoundTripsThroughTheParser) {
  const BatchInput input{{{INT32_MIN, -1, 0, 1, INT32_MAX}, {}, {7, 7}},
                         {{}, {123456789}, {-5, 5}}};
  std::string json;
  AppendBatchInputJson(input, json);
  EXPECT_EQ(json,
            R"({"cached_sequences":[[-2147483648,-1,0,1,2147483647],[],[7,7]],)"
            R"("requests":[[],[123456789],[-5,5]]})"
            "\n");
  EXPECT_EQ(ParseBatchInput(json), input);
  json.clear();
  AppendBatchInputJson(BatchInput{}, json);
  EXPECT_EQ(ParseBatchInput(json), BatchInput{});
}

TEST(LibraryPathTest, SeedExamplesAreByteExactForEveryEngine) {
  const auto examples =
      testing::LoadSeedExamples(std::string(KVPREFIX_SHARED_DIR) + "/seed");
  if (examples.empty()) GTEST_SKIP() << KVPREFIX_SHARED_DIR "/seed is absent";
  ASSERT_EQ(examples.size(), 3u);
  for (const std::string_view name : EngineNames()) {
    for (const auto& example : examples) {
      const BatchInput input = ParseBatchInput(example.input_json);
      const auto index = MakeEngine(name);
      std::string out;
      AppendMatchesJson(
          input.requests,
          FindPrefixMatches(*index, input.cached_sequences, input.requests),
          out);
      EXPECT_EQ(out, example.output_line) << name << ": " << example.input_json;
    }
  }
}

TEST(LibraryPathTest, SharedCasesMatchForEveryEngineChosenByName) {
  const std::string dir = testing::SharedCasesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/cases is absent";
  const auto cases = testing::LoadSharedCases(dir);
  ASSERT_GE(cases.size(), 19u);
  for (const std::string_view name : EngineNames()) {
    for (const auto& shared : cases) {
      // Through the writer and the parser too, as the CLI does.
      std::string json;
      AppendBatchInputJson(shared.input, json);
      const BatchInput input = ParseBatchInput(json);
      const auto index = MakeEngine(name);
      std::string out;
      try {
        AppendMatchesJson(
            input.requests,
            FindPrefixMatches(*index, input.cached_sequences, input.requests),
            out);
      } catch (const std::exception& error) {
        ADD_FAILURE() << name << ": " << shared.name << ": " << error.what();
        continue;
      }
      EXPECT_EQ(out, shared.expected_json) << name << ": " << shared.name;
    }
  }
}

class WriteFileAtomicallyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kvprefix_json_io_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const fs::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  fs::path dir_;
};

TEST_F(WriteFileAtomicallyTest, CreatesAndReplacesLeavingNoTemporaryFile) {
  const fs::path target = dir_ / "out.json";
  WriteFileAtomically(target.string(), "first\n");
  EXPECT_EQ(Read(target), "first\n");
  WriteFileAtomically(target.string(), "second");
  EXPECT_EQ(Read(target), "second");
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::owner_read,
            fs::perms::owner_read);
}

TEST_F(WriteFileAtomicallyTest, FailureThrowsIoErrorAndLeavesNothing) {
  const fs::path target = dir_ / "missing-folder" / "out.json";
  EXPECT_THROW(WriteFileAtomically(target.string(), "x"), IoError);
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

}  // namespace
}  // namespace kvprefix
