// Tests of io/json_input and io/json_output: SPEC §4 parsing (valid forms and
// every kind of bad input, with the exact JSON location), SPEC §5 output byte
// for byte, round trips, atomic file replacement, and the library path of the
// seed examples and shared cases through every engine chosen by name.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include "engines/registry.h"
#include "io/json_fast_input.h"
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

// The fast path (io/json_fast_input.h) against the strict reader on one
// document: whatever the fast path accepts the strict reader accepts with
// the same tokens, and ParseBatchInput gives the strict reader's result or
// its very error. Returns whether the fast path accepted.
bool ExpectFastPathAgrees(const std::string& json) {
  const std::optional<BatchInput> fast = ParseBatchInputFast(json);
  std::optional<BatchInput> strict;
  std::string strict_error;
  try {
    strict = ParseBatchInputStrict(json);
  } catch (const InputError& error) {
    strict_error = error.what();
  }
  if (fast) {
    EXPECT_TRUE(strict.has_value())
        << "fast path accepted, strict reader: " << strict_error << "\n"
        << json;
    if (strict) {
      EXPECT_EQ(*fast, *strict) << json;
    }
  }
  try {
    const BatchInput input = ParseBatchInput(json);
    EXPECT_TRUE(strict.has_value()) << json;
    if (strict) {
      EXPECT_EQ(input, *strict) << json;
    }
  } catch (const InputError& error) {
    EXPECT_EQ(error.what(), strict_error) << json;
  }
  return fast.has_value();
}

TEST(FastPathTest, DeclinesEveryKindOfBadInput) {
  for (const test::BadInput& bad : test::BadInputs()) {
    EXPECT_FALSE(ExpectFastPathAgrees(bad.json)) << bad.name;
  }
}

// Tokens and separators where the fast path's decisions are: digit counts
// around its 8-byte steps and the int32 limits, leading zeros, signs,
// fractions, exponents, separators, keys, and documents ending less than 8
// bytes after a token (the text is not padded).
TEST(FastPathTest, AgreesOnEveryEdgeOfTheTokenForm) {
  const std::vector<std::string> accepted = {
      "0",        "-0",        "7",          "-7",         "1234567",
      "12345678", "123456789", "1000000000", "2147483647", "-2147483648",
      "-1234567", "-12345678", "99999999"};
  for (const std::string& token : accepted) {
    for (const char* after : {"]", " ]", ",1]", " ,\t1\n]", ",0]"}) {
      const std::string json =
          R"({"requests":[[)" + token + after + R"(],"cached_sequences":[]})";
      EXPECT_TRUE(ExpectFastPathAgrees(json)) << json;
    }
  }
  std::vector<std::string> declined = {"00",
                                       "01",
                                       "-00",
                                       "-01",
                                       "-",
                                       "+1",
                                       "1.0",
                                       "1e5",
                                       "1E5",
                                       "-1e0",
                                       "2147483648",
                                       "-2147483649",
                                       "4294967296",
                                       "9999999999",
                                       "10000000000",
                                       "99999999999",
                                       "123456789012345678901",
                                       "1,",
                                       ",1",
                                       "1 2",
                                       "1,,2",
                                       "\"1\"",
                                       "true",
                                       "null",
                                       "[1]",
                                       "{}",
                                       "1-2",
                                       "0x10",
                                       "1\xff",
                                       "\xef\xbb\xbf",
                                       "12345678a",
                                       "1234567a",
                                       "1\v"};
  declined.push_back(std::string(1, '\0'));
  for (const std::string& token : declined) {
    const std::string json =
        R"({"cached_sequences":[[5,)" + token + R"(]],"requests":[]})";
    EXPECT_FALSE(ExpectFastPathAgrees(json)) << json;
  }
  for (const std::string& json : std::vector<std::string>{
           R"({"cached_sequences":[[1]],"requests":[[12345]]})",
           R"({"cached_sequences":[[1]],"requests":[[1]]}  )",
           "{\"cached_sequences\":[],\"requests\":[[-2147483648]]}\n"}) {
    EXPECT_TRUE(ExpectFastPathAgrees(json)) << json;
    // Every prefix that ends before the closing brace is truncated.
    for (std::size_t cut = 0; cut <= json.rfind('}'); ++cut) {
      EXPECT_FALSE(ExpectFastPathAgrees(json.substr(0, cut))) << cut;
    }
  }
  for (const std::string& json : std::vector<std::string>{
           R"({"cached_sequences":[],"requests":[],"requests":[]})",
           R"({"cached_sequences":[],"requests":[],"extra":[]})",
           R"({"cached_sequences":[],"requests":[]}x)",
           R"({"cached_sequences":[],"requests":[]}{})",
           R"({"cached_sequences":[],"requests":[],})",
           R"({"cached_sequences":[],"requests":[[1],]})",
           R"({"cached_sequences":[],"requests":[[1]])",
           R"({"cached_sequences":[],"\u0072equests":[]})",
           R"({"cached_sequences":[],"requests":[[[1]]]})",
           R"({"cached_sequences":[],"requests":[1]})",
           R"({"cached_sequences":[],"requests":{}})",
           R"({"cached_sequences" "requests":[]})",
           R"({"cached_sequences":[]})", "{}", "[]", ""}) {
    EXPECT_FALSE(ExpectFastPathAgrees(json)) << json;
  }
}

// Random documents in the plain form (random whitespace, member order,
// lengths and token sizes; half of them without whitespace) are all taken by
// the fast path; the same documents with a byte inserted, replaced or removed
// are read alike by both paths, accepted or rejected with the strict reader's
// error.
TEST(FastPathTest, AgreesWithTheStrictReaderOnGeneratedDocuments) {
  std::mt19937_64 random(16);
  const auto pick = [&](std::size_t n) {
    return static_cast<std::size_t>(random() % n);
  };
  const std::vector<std::string> spaces = {"",   "",   "",     " ",
                                           "\n", "\t", "\r\n "};
  const auto token = [&]() -> std::string {
    switch (pick(6)) {
      case 0:
        return std::to_string(static_cast<std::int32_t>(random()));
      case 1:
        return std::to_string(pick(10));
      case 2:
        return pick(2) ? "2147483647" : "-2147483648";
      case 3:
        return "-0";
      default:
        return std::to_string(pick(std::size_t{1} << (4 * pick(8) + 1)));
    }
  };
  bool dense = false;  // no whitespace at all in this document
  const auto space = [&] {
    return dense ? std::string() : spaces[pick(spaces.size())];
  };
  const auto sequences = [&]() {
    std::string out = "[" + space();
    const std::size_t count = pick(4);
    for (std::size_t i = 0; i < count; ++i) {
      if (i > 0) out += space() + ",";
      out += space() + "[";
      // Long sequences too: the fast path reads 64 bytes at once there.
      const std::size_t length = pick(2) == 0 ? pick(6) : pick(60);
      for (std::size_t j = 0; j < length; ++j) {
        if (j > 0) out += space() + ",";
        out += space() + token();
      }
      out += space() + "]";
    }
    return out + space() + "]";
  };
  const std::string bytes = "0123456789-+.eE,[]{}\":x \t\n\r\v\xff";
  std::size_t mutants_accepted = 0;
  for (int round = 0; round < 400; ++round) {
    const bool cached_first = pick(2) == 0;
    const std::string first = cached_first ? "cached_sequences" : "requests";
    const std::string second = cached_first ? "requests" : "cached_sequences";
    dense = pick(2) == 0;
    const std::string json =
        space() + "{" + space() + "\"" + first + "\"" + space() + ":" +
        space() + sequences() + space() + "," + space() + "\"" + second + "\"" +
        space() + ":" + space() + sequences() + space() + "}" + space();
    ASSERT_TRUE(ExpectFastPathAgrees(json)) << json;
    for (int mutation = 0; mutation < 40; ++mutation) {
      std::string mutant = json;
      const std::size_t at = pick(mutant.size() + 1);
      const char byte = bytes[pick(bytes.size())];
      switch (pick(3)) {
        case 0:
          mutant.insert(at, 1, byte);
          break;
        case 1:
          if (at < mutant.size()) mutant[at] = byte;
          break;
        default:
          if (at < mutant.size()) mutant.erase(at, 1);
          break;
      }
      mutants_accepted += ExpectFastPathAgrees(mutant);
    }
  }
  // Some mutants are still plain documents (a digit more, a space): the
  // comparison covered acceptance as well as rejection.
  EXPECT_GT(mutants_accepted, 100u);
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

// The failure names the output and the folder where the temporary file
// could not be made, in one line ("cannot create a temporary file for: ..."
// named neither problem nor place).
TEST_F(WriteFileAtomicallyTest, FailureToCreateTheTemporaryFileNamesTheFolder) {
  const fs::path folder = dir_ / "missing-folder";
  const auto message = [](const std::string& path) -> std::string {
    try {
      WriteFileAtomically(path, "x");
    } catch (const IoError& error) {
      return error.what();
    }
    return "no IoError";
  };
  EXPECT_EQ(message((folder / "out.json").string()),
            fmt::format("{}: cannot create a temporary file in {}: No such "
                        "file or directory",
                        (folder / "out.json").string(), folder.string()));
  std::ofstream(dir_ / "file") << "a file, not a folder";
  EXPECT_EQ(message((dir_ / "file" / "out.json").string()),
            fmt::format("{}: cannot create a temporary file in {}: Not a "
                        "directory",
                        (dir_ / "file" / "out.json").string(),
                        (dir_ / "file").string()));
}

// CheckOutputPath throws the very error the write would, creating nothing,
// and accepts what the write accepts (a new file, an existing one, "-",
// /dev/null).
TEST_F(WriteFileAtomicallyTest, CheckOutputPathThrowsWhatTheWriteWould) {
  std::ofstream(dir_ / "file") << "a file, not a folder";
  const auto message = [](const auto& write, const std::string& path) {
    try {
      write(path);
    } catch (const std::exception& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  const auto check = [](const std::string& path) { CheckOutputPath(path); };
  const auto write = [](const std::string& path) {
    WriteFileAtomically(path, "x");
  };
  for (const fs::path& bad :
       {fs::path(), dir_, dir_ / "missing-folder" / "out.json",
        dir_ / "file" / "out.json"}) {
    const std::string checked = message(check, bad.string());
    EXPECT_NE(checked, "no error") << bad;
    EXPECT_EQ(checked, message(write, bad.string())) << bad;
  }
  EXPECT_EQ(message(check, ""), "the output path is empty");
  EXPECT_EQ(message(check, dir_.string()),
            dir_.string() + ": cannot open: Is a directory");
  EXPECT_FALSE(fs::exists(dir_ / "missing-folder"));
  for (const fs::path& good : {dir_ / "new.json", dir_ / "file", fs::path("-"),
                               fs::path("/dev/null")}) {
    EXPECT_EQ(message(check, good.string()), "no error") << good;
  }
  EXPECT_FALSE(fs::exists(dir_ / "new.json"));
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()),
      1);  // only "file"
}

// What SIGXFSZ's handler saw in the middle of a write (see below).
volatile std::sig_atomic_t g_probed = 0;
volatile std::sig_atomic_t g_saw_changed_handlers = 0;
volatile std::sig_atomic_t g_remove_in_flight = 0;

extern "C" void MarkerHandler(int) {}

// Runs inside WriteFileAtomically's write(2) when the file outgrows
// RLIMIT_FSIZE: looks whether SIGINT, SIGTERM and SIGHUP still have the
// test's handler (sigaction is async-signal-safe), and may remove the
// temporary file and end the process there, as the CLI's handler does.
extern "C" void ProbeDuringTheWrite(int) {
  g_probed = 1;
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now = {};
    sigaction(signal_number, nullptr, &now);
    if (now.sa_handler != MarkerHandler) {
      g_saw_changed_handlers = 1;
    }
  }
  if (g_remove_in_flight) {
    RemoveTemporaryFileInFlight();
    _exit(3);  // no destructor runs: only the call above removes the file
  }
}

// Writes 1 MiB to `target` under a 4 KiB RLIMIT_FSIZE with SIGXFSZ caught
// by ProbeDuringTheWrite, so that the handler runs while the temporary file
// exists; restores the limit and SIGXFSZ. The write fails (EFBIG).
void WriteOverTheFileSizeLimit(const fs::path& target) {
  struct sigaction probe = {};
  probe.sa_handler = ProbeDuringTheWrite;
  sigemptyset(&probe.sa_mask);
  struct sigaction previous = {};
  ASSERT_EQ(sigaction(SIGXFSZ, &probe, &previous), 0);
  rlimit limit = {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &limit), 0);
  rlimit small = limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  EXPECT_THROW(WriteFileAtomically(target.string(), std::string(1 << 20, 'x')),
               IoError);
  setrlimit(RLIMIT_FSIZE, &limit);
  sigaction(SIGXFSZ, &previous, nullptr);
}

// The library owns no signal: in the middle of a write (while its temporary
// file exists) SIGINT, SIGTERM and SIGHUP keep the program's handlers. (It
// used to install its own for the time of the write.)
TEST_F(WriteFileAtomicallyTest, LeavesSignalHandlersAlone) {
  struct sigaction marker = {};
  marker.sa_handler = MarkerHandler;
  sigemptyset(&marker.sa_mask);
  std::array<struct sigaction, 3> previous = {};
  const std::array<int, 3> signals = {SIGINT, SIGTERM, SIGHUP};
  for (std::size_t i = 0; i < signals.size(); ++i) {
    ASSERT_EQ(sigaction(signals[i], &marker, &previous[i]), 0);
  }
  g_probed = 0;
  g_saw_changed_handlers = 0;
  WriteOverTheFileSizeLimit(dir_ / "out.json");
  EXPECT_EQ(g_probed, 1) << "SIGXFSZ never came during the write";
  EXPECT_EQ(g_saw_changed_handlers, 0);
  for (std::size_t i = 0; i < signals.size(); ++i) {
    struct sigaction after = {};
    sigaction(signals[i], &previous[i], &after);
    EXPECT_EQ(after.sa_handler, MarkerHandler) << strsignal(signals[i]);
  }
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

// A handler that calls RemoveTemporaryFileInFlight and ends the process in
// the middle of a write leaves no `.out.json.XXXXXX` behind.
TEST_F(WriteFileAtomicallyTest, RemoveTemporaryFileInFlightRemovesIt) {
  // The "fast" death-test style forks: the child writes into dir_ too.
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        g_remove_in_flight = 1;
        WriteOverTheFileSizeLimit(dir_ / "out.json");
      },
      ::testing::ExitedWithCode(3), "");
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
       "$ (a member name), byte 5: expected UTF-8 text, found invalid byte "
       "0xC3"},
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
    // Not a structured binding: clang 14 cannot capture one in a lambda.
    for (const auto& entry : documents) {
      const std::string& document = entry.first;
      EXPECT_EQ(test::InputErrorOf([&] { ParseBatchInput(document); }),
                entry.second)
          << kernel;
      EXPECT_EQ(test::InputErrorOf([&] { ParseReplayDocument(document); }),
                entry.second)
          << kernel;
    }
    SequenceList out;
    EXPECT_EQ(
        test::InputErrorOf([&] { AppendTraceLine(line, 7, options, out); }),
        "line 7: byte 45: expected UTF-8 text, found invalid byte 0xFF")
        << kernel;
  }
}

}  // namespace
}  // namespace kvprefix
