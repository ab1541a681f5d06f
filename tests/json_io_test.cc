// Tests of io/json_input and io/json_output: SPEC §4 parsing (valid forms and
// every kind of bad input, with the exact JSON location), SPEC §5 output byte
// for byte, round trips, atomic file replacement, and the library path of the
// seed examples and shared cases through every engine chosen by name.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engines/registry.h"
#include "io/json_input.h"
#include "io/json_kernel.h"
#include "io/json_output.h"
#include "io/mooncake.h"
#include "io/replay_document.h"
#include "kvprefix/batch.h"
#include "testing/bad_inputs.h"
#include "testing/seed_examples.h"
#include "testing/shared_cases.h"

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

class BadInputTest : public ::testing::TestWithParam<test::BadInput> {};

TEST_P(BadInputTest, NamesTheLocationAndTheProblem) {
  const test::BadInput& bad = GetParam();
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
                         ::testing::ValuesIn(test::BadInputs()),
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

// User-written text in a message is escaped and cut, so that the message is
// one line without terminal escapes, and names the byte it is about.
TEST(ParseBatchInputTest, MessagesEscapeUserTextAndNameTheByte) {
  struct Case {
    std::string json;
    std::string location;
    std::string problem;
  };
  const std::string long_name(100, 'n');
  const std::vector<Case> cases = {
      {R"({"cached_sequences":[],"requests":[],"a\n\r\u001b\"\\\u0000b":1})",
       R"($["a\n\r\u001b\"\\\u0000b"])",
       R"(unknown member "a\n\r\u001b\"\\\u0000b")"},
      {R"({"cached_sequences":[],"requests":[],")" + long_name + "\":1}",
       "$." + long_name.substr(0, 40) + "...",
       "unknown member \"" + long_name.substr(0, 40) + "...\""},
      {std::string(R"({"cached_sequences":[],"requests":[]})") +
           std::string(1, '\0'),
       "$", "found '\\u0000' at byte 37"},
      {"{\"cached_sequences\":[],\"requests\":[],\"a\tb\":1}", "byte 39",
       "found '\\t'"},
      {"\xEF\xBB\xBF{\"cached_sequences\":[],\"requests\":[]}", "byte 0",
       "byte order mark"},
      {"{\"cached_sequences\":[],\"requests\":[[1,2]\x1b]}", "$.requests[1]",
       "found '\\u001b' at byte 40"},
  };
  for (const Case& bad : cases) {
    try {
      ParseBatchInput(bad.json);
      ADD_FAILURE() << "accepted: " << bad.json;
    } catch (const InputError& error) {
      const std::string what = error.what();
      EXPECT_EQ(error.location(), bad.location) << what;
      EXPECT_THAT(error.problem(), HasSubstr(bad.problem)) << what;
      EXPECT_EQ(what.find_first_of(std::string("\n\r\x1b\0", 4)),
                std::string::npos)
          << what;
      EXPECT_LT(what.size(), 200u) << what;
    }
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
      test::LoadSeedExamples(KVPREFIX_SOURCE_DIR "/docs/seed");
  ASSERT_EQ(examples.size(), 3u);
  for (const std::string_view name : EngineNames()) {
    for (const auto& example : examples) {
      const BatchInput input = ParseBatchInput(example.input_json);
      const auto index = MakeEngine(name);
      std::string out;
      AppendMatchesJson(input.requests, FindPrefixMatches(*index, input), out);
      EXPECT_EQ(out, example.output_line) << name << ": " << example.input_json;
    }
  }
}

TEST(LibraryPathTest, SharedCasesMatchForEveryEngineChosenByName) {
  const auto cases = test::LoadSharedCases();
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
        AppendMatchesJson(input.requests, FindPrefixMatches(*index, input),
                          out);
      } catch (const std::exception& error) {
        ADD_FAILURE() << name << ": " << shared.name << ": " << error.what();
        continue;
      }
      EXPECT_EQ(out, test::ExpectedOutput(shared))
          << name << ": " << shared.name;
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

TEST_F(WriteFileAtomicallyTest, WritesThroughSymlinksKeepingThem) {
  std::ofstream(dir_ / "target.json") << "old\n";
  fs::create_symlink("target.json", dir_ / "link");
  fs::create_symlink(dir_ / "link", dir_ / "link-to-link");
  WriteFileAtomically((dir_ / "link-to-link").string(), "new\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "link-to-link"));
  EXPECT_EQ(Read(dir_ / "target.json"), "new\n");
  // A dangling link creates its target.
  fs::create_symlink("created.json", dir_ / "dangling");
  WriteFileAtomically((dir_ / "dangling").string(), "made\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling"));
  EXPECT_EQ(Read(dir_ / "created.json"), "made\n");
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 5);
}

// -o /dev/stdout: a link to /proc/self/fd/N names an open file (here a pipe
// and a file opened for appending), which is written, never replaced.
TEST_F(WriteFileAtomicallyTest, WritesOpenFilesBehindProcLinksInPlace) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  fs::create_symlink("/proc/self/fd/" + std::to_string(pipe_fds[1]),
                     dir_ / "to-pipe");
  WriteFileAtomically((dir_ / "to-pipe").string(), "piped");
  close(pipe_fds[1]);
  char buffer[16] = {};
  EXPECT_EQ(read(pipe_fds[0], buffer, sizeof buffer), 5);
  close(pipe_fds[0]);
  EXPECT_EQ(std::string(buffer), "piped");

  const fs::path log = dir_ / "log";
  std::ofstream(log) << "kept\n";
  const int fd = open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  fs::create_symlink("/proc/self/fd/" + std::to_string(fd), dir_ / "to-log");
  WriteFileAtomically((dir_ / "to-log").string(), "added\n");
  close(fd);
  EXPECT_TRUE(fs::is_symlink(dir_ / "to-log"));
  EXPECT_EQ(Read(log), "kept\nadded\n");
}

TEST_F(WriteFileAtomicallyTest, ReplacedFileKeepsItsPermissions) {
  const fs::path target = dir_ / "private.json";
  std::ofstream(target) << "old";
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);
  WriteFileAtomically(target.string(), "new");
  EXPECT_EQ(Read(target), "new");
  EXPECT_EQ(fs::status(target).permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(WriteFileAtomicallyTest, FailureThrowsIoErrorAndLeavesNothing) {
  const fs::path target = dir_ / "missing-folder" / "out.json";
  EXPECT_THROW(WriteFileAtomically(target.string(), "x"), IoError);
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

// ctest runs the JSON tests twice (tests/CMakeLists.txt): with the kernel
// libsimdjson picks for the CPU, and under
// SIMDJSON_FORCE_IMPLEMENTATION=fallback. This checks that each run parses
// with the kernel it claims to, so the second run cannot silently repeat the
// first.
TEST(JsonKernelTest, ParsesWithTheKernelTheRunAsksFor) {
  EXPECT_EQ(ParseBatchInput(R"({"cached_sequences":[[1]],"requests":[[1]]})")
                .requests.total_tokens(),
            1u);
  const std::string active = ActiveJsonKernel();
  if (const char* forced = std::getenv("SIMDJSON_FORCE_IMPLEMENTATION")) {
    EXPECT_EQ(active, forced);
    return;
  }
  // Otherwise the best the CPU runs (listed first).
  EXPECT_EQ(active, SupportedJsonKernels().front());
}

// The message of the InputError `parse` throws ("" if none).
template <typename Parse>
std::string ErrorOf(Parse&& parse) {
  try {
    parse();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

// simdjson's fallback kernel checks UTF-8 only inside strings: a stray
// 0xFF elsewhere was reported as trailing content, a bad token or an
// unbalanced document, while the SIMD kernels report invalid UTF-8 at its
// byte. Every kernel the CPU runs must give the SIMD kernels' message.
TEST(Utf8ErrorTest, IsTheSameWithEveryKernel) {
  const std::string ok = R"("cached_sequences":[[1]],"requests":[[1]])";
  const std::vector<std::pair<std::string, std::string>> documents = {
      {"{" + ok + "}\xff",
       "byte 43: expected UTF-8 text, found invalid byte "
       "0xFF"},
      {"{" + ok + "} x\xff",
       "byte 45: expected UTF-8 text, found invalid "
       "byte 0xFF"},
      {R"({"cached_sequences":[[1,)"
       "\xff"
       R"(]],"requests":[]})",
       "byte 24: expected UTF-8 text, found invalid byte 0xFF"},
      {"{\"req\xc3\x28\":[]}",
       "byte 5: expected UTF-8 text, found invalid byte 0xC3"},
      // An unclosed string comes first in every kernel.
      {"{" + ok + "}\xff \"",
       "$: expected end of input after the root value, found '\\xFF' at "
       "byte 43"},
  };
  const std::string line = R"({"timestamp":0,"input_length":2,"hash_ids":[1)"
                           "\xff"
                           "]}";
  TraceOptions options;
  options.mode = TraceMode::kToken;
  const std::vector<std::string> kernels = SupportedJsonKernels();
  EXPECT_GE(kernels.size(), 2u);  // fallback and at least one SIMD kernel
  for (const std::string& kernel : kernels) {
    const ScopedJsonKernel chosen(kernel);
    ASSERT_EQ(ActiveJsonKernel(), kernel);
    for (const auto& [document, message] : documents) {
      EXPECT_EQ(ErrorOf([&] { ParseBatchInput(document); }), message) << kernel;
      EXPECT_EQ(ErrorOf([&] { ParseReplayDocument(document); }), message)
          << kernel;
    }
    SequenceList out;
    EXPECT_EQ(ErrorOf([&] { AppendTraceLine(line, 7, options, out); }),
              "line 7: byte 45: expected UTF-8 text, found invalid byte 0xFF")
        << kernel;
  }
}

}  // namespace
}  // namespace kvprefix
