// Tests of io/replay_document (SPEC §8 replay documents) and of replay case
// files: what is accepted, the default cache, every kind of bad document
// with its location, and writing that reads back.
#include "io/replay_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/case_file.h"
#include "io/input_error.h"
#include "io/json_output.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

TEST(ReplayDocumentTest, ReadsEveryMemberInAnyOrder) {
  const ReplayInput read = ParseReplayDocument(
      R"({"page_size":3,"policy":"fifo","capacity":18446744073709551614,)"
      R"( "requests":[[1,2,3],[],[-2147483648,2147483647]]})");
  EXPECT_EQ(read.requests,
            (SequenceList{{1, 2, 3}, {}, {INT32_MIN, INT32_MAX}}));
  EXPECT_EQ(read.options, (CacheOptions{.capacity = 18446744073709551614u,
                                        .policy = EvictionPolicy::kFifo,
                                        .page_size = 3}));
}

TEST(ReplayDocumentTest, DefaultsAreAnUnboundedLruCacheOfTokens) {
  const ReplayInput read = ParseReplayDocument(R"({"requests":[[5]]})");
  EXPECT_EQ(read.options, CacheOptions{});
  EXPECT_FALSE(read.options.bounded());
  // 2^64 - 1 is a capacity no trie reaches: the same as none.
  EXPECT_EQ(
      ParseReplayDocument(R"({"requests":[],"capacity":18446744073709551615})")
          .options,
      CacheOptions{});
  EXPECT_EQ(
      ParseReplayDocument(R"({"requests":[],"capacity":0})").options.capacity,
      0u);
}

// Each bad document, where it is reported and what it says.
TEST(ReplayDocumentTest, RejectsBadDocumentsAtTheirLocation) {
  const struct {
    const char* json;
    const char* location;
    const char* problem;
  } kBad[] = {
      {R"({"capacity":3})", "$",
       "expected member \"requests\", found an object without it"},
      {R"({"requests":[],"size":3})", "$.size", "unknown member"},
      {R"({"requests":[],"requests":[]})", "$.requests", "a second time"},
      {R"({"requests":[],"capacity":null})", "$.capacity", "null"},
      {R"({"requests":[],"capacity":-1})", "$.capacity", "-1"},
      {R"({"requests":[],"capacity":18446744073709551616})", "$.capacity",
       "18446744073709551616"},
      {R"({"requests":[],"capacity":1.5})", "$.capacity", "fraction"},
      {R"({"requests":[],"capacity":"10"})", "$.capacity", "string"},
      {R"({"requests":[],"policy":"LRU"})", "$.policy",
       "expected \"lru\", \"fifo\" or \"lfu\", found \"LRU\""},
      {R"({"requests":[],"policy":1})", "$.policy", "a string"},
      {R"({"requests":[],"policy":null})", "$.policy", "null"},
      {R"({"requests":[],"page_size":0})", "$.page_size",
       "an integer from 1 to 2147483647"},
      {R"({"requests":[],"page_size":2147483648})", "$.page_size",
       "2147483648"},
      {R"({"requests":[[1,true]]})", "$.requests[0][1]", "true"},
      {R"({"requests":[[2147483648]]})", "$.requests[0][0]", "2147483648"},
      {R"({"requests":[]} x)", "$", "end of input after the root value"},
      {R"({"requests":[[1])", "", "end of input"},
      {R"([])", "$", "object"},
  };
  for (const auto& bad : kBad) {
    try {
      ParseReplayDocument(bad.json);
      ADD_FAILURE() << "accepted " << bad.json;
    } catch (const InputError& error) {
      if (bad.location[0] != '\0') {
        EXPECT_EQ(error.location(), bad.location) << bad.json;
      }
      EXPECT_THAT(error.what(), ::testing::HasSubstr(bad.problem)) << bad.json;
    }
  }
}

TEST(ReplayDocumentTest, WrittenDocumentsReadBack) {
  for (const ReplayInput& input :
       {ReplayInput{{{1, 2}, {}, {INT32_MIN}}, {}},
        ReplayInput{{{7}}, {.capacity = 0, .policy = EvictionPolicy::kFifo}},
        ReplayInput{{}, {.capacity = 12, .page_size = 2147483647}}}) {
    std::string json;
    AppendReplayDocumentJson(input, json);
    EXPECT_EQ(json.back(), '\n');
    EXPECT_EQ(ParseReplayDocument(json), input) << json;
  }
  std::string json;
  AppendReplayDocumentJson({{{1, 2}}, {.capacity = 3}}, json);
  EXPECT_EQ(json,
            R"({"requests":[[1,2]],"capacity":3,"policy":"lru","page_size":1})"
            "\n");
}

TEST(ReplayCaseFileTest, FormatReadsBack) {
  const ReplayInput input{{{1, 2, 3}, {1, 2, 4}}, {.capacity = 3}};
  const std::vector<Match> expected = {{0, 0}, {2, 2}};
  const ReplayCaseFile read =
      ParseReplayCaseFile(FormatReplayCaseFile(input, expected, "a \"note\""));
  EXPECT_EQ(read.input, input);
  EXPECT_EQ(read.expected, expected);
  EXPECT_EQ(read.source, "a \"note\"");
}

TEST(ReplayCaseFileTest, ChecksTheExpectedMatchesAgainstTheRequests) {
  EXPECT_THROW(
      ParseReplayCaseFile(
          R"({"document":{"requests":[[1]]},"expected":{"matches":[]}})"),
      InputError);
  try {
    ParseReplayCaseFile(
        R"({"document":{"requests":[[1]],"capacity":-3},)"
        R"("expected":{"matches":[{"matched_length":0,"cache_node":0,)"
        R"("uncached_suffix":[1]}]}})");
    ADD_FAILURE() << "accepted a negative capacity";
  } catch (const InputError& error) {
    EXPECT_EQ(error.location(), "$.document.capacity");
  }
}

TEST(ReplayCaseFileTest, TheCapacityCasesAllRead) {
  const std::vector<ReplayCaseFile> cases = test::LoadCapacityCases();
  ASSERT_EQ(cases.size(), 16u);
  EXPECT_EQ(cases[12].name, "hand-01-lru-capacity-3.json");
  EXPECT_EQ(cases[12].input.options.capacity, 3u);
  EXPECT_EQ(cases[13].input.options.page_size, 2u);
  for (const ReplayCaseFile& shared : cases) {
    EXPECT_EQ(shared.expected.size(), shared.input.requests.size())
        << shared.name;
  }
}

}  // namespace
}  // namespace kvprefix
