// Tests of io/case_file: reading case files as strictly as SPEC §4 input
// (with the same locations and messages), writing them so that they read
// back, and the shared regression cases themselves.
#include "io/case_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/input_error.h"
#include "io/json_output.h"
#include "testing/program_run.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

using ::testing::HasSubstr;

TEST(CaseFileTest, ReadsMembersInAnyOrder) {
  const CaseFile read = ParseCaseFile(
      R"({"source":"a \"report\"","expected":{"matches":[)"
      R"({"uncached_suffix":[9],"cache_node":2,"matched_length":2}]},)"
      R"("requests":[[1,2,9]],"cached_sequences":[[1,2]]})");
  EXPECT_EQ(read.input, (BatchInput{{{1, 2}}, {{1, 2, 9}}}));
  EXPECT_EQ(read.expected, (std::vector<Match>{{2, 2}}));
  EXPECT_EQ(read.source, "a \"report\"");
  EXPECT_EQ(ParseCaseFile(R"({"cached_sequences":[],"requests":[],)"
                          R"("expected":{"matches":[]}})")
                .source,
            "");
}

TEST(CaseFileTest, FormatReadsBackWithAnySource) {
  const BatchInput input{{{1, 2}, {INT32_MIN}}, {{1, 2, 9}, {}}};
  const std::vector<Match> expected = {{2, 2}, {0, 0}};
  const std::string source = "quote \" backslash \\ newline \n tab \t é";
  const std::string text = FormatCaseFile(input, expected, source);
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line: " << text;
  const CaseFile read = ParseCaseFile(text);
  EXPECT_EQ(read.input, input);
  EXPECT_EQ(read.expected, expected);
  EXPECT_EQ(read.source, source);
  // Bytes that are not UTF-8 become U+FFFD: the file stays valid JSON.
  EXPECT_EQ(ParseCaseFile(FormatCaseFile(input, expected, "a\xff")).source,
            "a\xEF\xBF\xBD");
}

// Former bug: case files were read with nlohmann's get<Token>(), which
// converts instead of rejecting: [[4294967297]] was sent as [[1]]. They are
// now read by io's simdjson readers, with the messages of SPEC §4 input.
TEST(CaseFileTest, RejectsWhatTheProductRejectsNamingFileAndLocation) {
  struct Example {
    std::string text;
    std::string message;  // after "<file>: "
  };
  const std::string expected = ",\"expected\":{\"matches\":[]}}";
  const std::vector<Example> examples = {
      {"{\"cached_sequences\":[[4294967297]],\"requests\":[]" + expected,
       "$.cached_sequences[0][0]: expected an integer from -2147483648 to "
       "2147483647, found 4294967297"},
      {"{\"cached_sequences\":[[0,-2147483649]],\"requests\":[]" + expected,
       "$.cached_sequences[0][1]: expected an integer from -2147483648 to "
       "2147483647, found -2147483649"},
      {"{\"cached_sequences\":[],\"requests\":[[true]]" + expected,
       "$.requests[0][0]: expected an integer from -2147483648 to "
       "2147483647, found true"},
      {"{\"cached_sequences\":[[1.5]],\"requests\":[]" + expected,
       "$.cached_sequences[0][0]: expected an integer from -2147483648 to "
       "2147483647, found 1.5"},
      {"{\"cached_sequences\":[],\"cached_sequences\":[[1]],"
       "\"requests\":[]" +
           expected,
       "$.cached_sequences: expected each member once, found "
       "\"cached_sequences\" a second time"},
      {"{\"cached_sequences\":[],\"requests\":[[1]],\"expected\":{"
       "\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
       "\"cache_node\":0,\"uncached_suffix\":[1]}]}}",
       "$.expected.matches[0].cache_node: expected each member once, found "
       "\"cache_node\" a second time"},
      {"{\"cached_sequences\":[],\"requests\":[[1]],\"expected\":{"
       "\"matches\":[{\"matched_length\":true,\"cache_node\":0,"
       "\"uncached_suffix\":[1]}]}}",
       "$.expected.matches[0].matched_length: expected an unsigned 64-bit "
       "integer, found true"},
      {"{\"cached_sequences\":[],\"requests\":[[1]],\"expected\":{"
       "\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
       "\"uncached_suffix\":[4294967297]}]}}",
       "$.expected.matches[0].uncached_suffix[0]: expected an integer"},
      {"{\"cached_sequences\":[],\"requests\":[[1]],\"expected\":{"
       "\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
       "\"uncached_suffix\":[2]}]}}",
       "$.expected.matches[0]: expected an uncached_suffix that is the "
       "request's tail"},
      {"{\"cached_sequences\":[],\"requests\":[[1]]" + expected,
       "$.expected.matches: expected 1 matches (one per request), found 0"},
      {"{\"cached_sequences\":[],\"requests\":[],\"expected\":5}",
       "$.expected: expected an object, found 5"},
      {"{\"cached_sequences\":[],\"requests\":[]}",
       "$: expected member \"expected\", found an object without it"},
      {"{\"cached_sequences\":[],\"requests\":[],\"extra\":1" + expected,
       "$.extra: expected \"cached_sequences\", \"requests\", \"expected\", "
       "\"cached_namespaces\", \"namespaces\" or \"source\", found an unknown "
       "member \"extra\""},
      {"{\"cached_sequences\":[],\"requests\":[],\"source\":7" + expected,
       "$.source: expected a string, found 7"},
      {"{\"cached_sequences\":[],\"requests\":[]" + expected + " x",
       "$: expected end of input after the root value, found 'x' at byte"},
      {"", "$: expected a JSON object, found end of input"},
  };
  const test::ScratchDir dir;
  const std::string path = dir.Path("bad-case.json");
  for (const Example& example : examples) {
    WriteFileAtomically(path, example.text);
    try {
      ReadCaseFile(path);
      ADD_FAILURE() << "accepted " << example.text;
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), HasSubstr(path + ": " + example.message))
          << example.text;
    }
  }
}

TEST(CaseFileTest, MissingFileIsAnIoErrorNamingIt) {
  const test::ScratchDir dir;
  const std::string path = dir.Path("no-such-case.json");
  try {
    ReadCaseFile(path);
    ADD_FAILURE() << "read a missing file";
  } catch (const IoError& error) {
    EXPECT_THAT(error.what(), HasSubstr(path));
  }
}

TEST(CaseFileTest, SharedCasesAreSortedAndWellFormed) {
  const std::vector<CaseFile> cases = test::LoadSharedCases();
  ASSERT_GE(cases.size(), 19u);
  for (std::size_t i = 1; i < cases.size(); ++i) {
    EXPECT_LT(cases[i - 1].name, cases[i].name);
  }
  for (const CaseFile& shared : cases) {
    EXPECT_FALSE(shared.source.empty()) << shared.name;
    EXPECT_EQ(shared.expected.size(), shared.input.requests.size());
  }
}

}  // namespace
}  // namespace kvprefix
