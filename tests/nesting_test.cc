// Bounded nesting in every reader of untrusted structure: SPEC §4
// input, case files (batch and replay), Mooncake trace lines (members used
// or not), SPEC §8 replay documents and verify's reading of an
// implementation's answers, each given values nested 10^6 deep (arrays,
// objects, and both alternating), through the library and through the CLI
// (match, replay, curve, convert mooncake, verify).
// Every one answers with one error naming the location, well under a
// second, in memory linear in the input; where a reader walks values whose
// shape it does not prescribe (unused trace members, verify's answers, the
// bracket walk that locates errors in unbalanced documents), the error is
// "nested deeper than 1024" (kMaxJsonDepth, io/json_limits.h) at the first
// container too deep, and the limit itself is exact. Also: an invalid
// escape is reported at the escape, in member names and in strings.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <variant>

#include "io/case_file.h"
#include "io/input_error.h"
#include "io/json_input.h"
#include "io/json_limits.h"
#include "io/mooncake.h"
#include "io/replay_document.h"
#include "testing/program_run.h"
#include "verify/output_check.h"

namespace kvprefix {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::size_t kDeep = 1'000'000;
// Each reader must answer a 10^6-deep input within this many seconds.
constexpr double kSecondsAllowed = 1.0;

enum class Shape { kArrays, kObjects, kMixed };

std::string ShapeName(Shape shape) {
  switch (shape) {
    case Shape::kArrays:
      return "Arrays";
    case Shape::kObjects:
      return "Objects";
    case Shape::kMixed:
      return "Mixed";
  }
  return "";
}

// Level k (0 = the outermost) of a nested value is an array unless the
// shape says object: objects alternate with arrays in kMixed, arrays first.
bool IsArrayLevel(Shape shape, std::size_t k) {
  return shape == Shape::kArrays || (shape == Shape::kMixed && k % 2 == 0);
}

// A value of `depth` nested containers: [[...[]...]], {"a":{"a":...1...}},
// or [{"a":[{"a":...0...}]}]; `closed` false leaves them all open.
std::string Nested(Shape shape, std::size_t depth, bool closed = true) {
  std::string open;
  std::string close;
  for (std::size_t k = 0; k < depth; ++k) {
    open += IsArrayLevel(shape, k) ? "[" : "{\"a\":";
  }
  if (!closed) return open;
  if (shape != Shape::kArrays) open += "0";
  for (std::size_t k = depth; k-- > 0;)
    close += IsArrayLevel(shape, k) ? "]" : "}";
  return open + close;
}

// The error of a reader on a value of Nested(shape, ...) that starts at
// byte `offset` of its document at `base` ("$.x"), inside `enclosing`
// arrays and objects: at the first container nested deeper than
// kMaxJsonDepth.
std::string TooDeepError(Shape shape, const std::string& base,
                         std::size_t offset, std::size_t enclosing) {
  const std::size_t level = kMaxJsonDepth - enclosing;  // its depth: 1025
  std::string location = base;
  for (std::size_t k = 0; k < level; ++k) {
    location += IsArrayLevel(shape, k) ? "[0]" : ".a";
    offset += IsArrayLevel(shape, k) ? 1 : 5;
  }
  return fmt::format(
      "{}: expected at most 1024 nested arrays and objects, found '{}' at "
      "byte {} nested deeper than 1024",
      location, IsArrayLevel(shape, level) ? '[' : '{', offset);
}

// Runs `read` and returns the what() of the InputError it throws ("" if it
// throws none), failing the test if it takes kSecondsAllowed or more.
std::string ErrorOf(const std::function<void()>& read) {
  const auto start = std::chrono::steady_clock::now();
  std::string what;
  try {
    read();
  } catch (const InputError& error) {
    what = error.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, kSecondsAllowed);
  return what;
}

// The largest resident set so far, in MiB.
long PeakMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

class NestingTest : public ::testing::TestWithParam<Shape> {};

INSTANTIATE_TEST_SUITE_P(EveryShape, NestingTest,
                         ::testing::Values(Shape::kArrays, Shape::kObjects,
                                           Shape::kMixed),
                         [](const auto& info) {
                           return ShapeName(info.param);
                         });

constexpr char kTracePrefix[] = R"({"input_length":1,"hash_ids":[1],"x":)";

// The error for line `line_number` of a trace: kTracePrefix, then a value
// of `shape` too deep.
std::string DeepMemberError(Shape shape, std::size_t line_number) {
  return fmt::format("line {}: ", line_number) +
         TooDeepError(shape, "$.x", std::string(kTracePrefix).size(), 1);
}

// The what() of AppendTraceLine's InputError for `line` ("" if none).
std::string TraceLineError(const std::string& line) {
  SequenceList out;
  return ErrorOf([&] { AppendTraceLine(line, 1, TraceOptions{}, out); });
}

// The reported fault: an unused member nested 10^6 deep crashed the tool
// (recursion), and 20,000 deep took 1.5 s and 610 MB (a location string
// per level).
TEST_P(NestingTest, TraceLineWithDeepUnusedMemberIsRejectedQuickly) {
  const std::string line = kTracePrefix + Nested(GetParam(), kDeep) + "}";
  const long peak_before = PeakMiB();
  EXPECT_EQ(TraceLineError(line), DeepMemberError(GetParam(), 1));
  // Linear memory: the line (a few MB) and the padded copy, nothing per
  // level beyond a bounded stack.
  EXPECT_LT(PeakMiB() - peak_before, 64);
}

TEST_P(NestingTest, TraceFileWithDeepUnusedMemberNamesTheLine) {
  test::ScratchDir dir;
  const std::string path = dir.Path("deep.jsonl");
  test::WriteTextFile(
      path, std::string(R"({"input_length":1,"hash_ids":[1]})") + "\n" +
                kTracePrefix + Nested(GetParam(), kDeep) + "}\n");
  EXPECT_EQ(ErrorOf([&] { ReadMooncakeTrace(path, TraceOptions{}); }),
            DeepMemberError(GetParam(), 2));
}

TEST_P(NestingTest, TraceLineUnclosedDeepIsRejectedQuickly) {
  EXPECT_EQ(TraceLineError(kTracePrefix + Nested(GetParam(), kDeep, false)),
            DeepMemberError(GetParam(), 1));
}

TEST_P(NestingTest, DeepHashIdsAreNotHashIds) {
  const std::string line =
      R"({"input_length":1,"hash_ids":)" + Nested(GetParam(), kDeep) + "}";
  SequenceList out;
  const std::string error =
      ErrorOf([&] { AppendTraceLine(line, 1, TraceOptions{}, out); });
  EXPECT_THAT(error, StartsWith(GetParam() == Shape::kObjects
                                    ? "line 1: $.hash_ids: expected an array"
                                    : "line 1: $.hash_ids[0]: expected an "
                                      "integer"));
}

// Readers of a fixed shape stop at the first value of the wrong kind, at
// most 4 levels down, whatever lies below; unbalanced documents are located
// by the bracket walk, which stops at the limit.
TEST_P(NestingTest, FixedShapeReadersStopAtTheFirstWrongValue) {
  const Shape shape = GetParam();
  const std::string deep = Nested(shape, kDeep);
  const bool array = shape != Shape::kObjects;
  const struct {
    std::string name;
    std::function<void()> read;
    std::string error;  // what() starts with it
  } kReaders[] = {
      {"batch input",
       [&] {
         ParseBatchInput(R"({"cached_sequences":[],"requests":[)" + deep +
                         "]}");
       },
       array ? "$.requests[0][0]: expected an integer"
             : "$.requests[0]: expected an array of tokens, found an object"},
      {"batch input, unknown member",
       [&] { ParseBatchInput(R"({"x":)" + deep + R"(,"requests":[]})"); },
       "$.x: expected \"cached_sequences\", \"requests\", "
       "\"cached_namespaces\" or \"namespaces\", found an unknown"},
      {"case file, expected",
       [&] {
         ParseCaseFile(R"({"cached_sequences":[],"requests":[],"expected":)" +
                       deep + "}");
       },
       array ? "$.expected: expected an object, found an array"
             : "$.expected.a: expected \"matches\", found an unknown member"},
      {"case file, source",
       [&] {
         ParseCaseFile(R"({"source":)" + deep +
                       R"(,"cached_sequences":[],"requests":[]})");
       },
       std::string("$.source: expected a string, found ") +
           (array ? "an array" : "an object")},
      {"replay case file, document",
       [&] { ParseReplayCaseFile(R"({"document":)" + deep + "}"); },
       array ? "$.document: expected an object, found an array"
             : "$.document.a: expected \"requests\", \"capacity\""},
      {"replay document, requests",
       [&] { ParseReplayDocument(R"({"requests":[)" + deep + "]}"); },
       array ? "$.requests[0][0]: expected an integer"
             : "$.requests[0]: expected an array of tokens"},
      {"replay document, capacity",
       [&] {
         ParseReplayDocument(R"({"requests":[],"capacity":)" + deep + "}");
       },
       "$.capacity: expected an unsigned 64-bit integer"},
  };
  for (const auto& reader : kReaders) {
    EXPECT_THAT(ErrorOf(reader.read), StartsWith(reader.error)) << reader.name;
  }
}

TEST_P(NestingTest, UnbalancedDeepDocumentsStopAtTheLimit) {
  const Shape shape = GetParam();
  const std::string open = Nested(shape, kDeep, false);
  const std::string batch = R"({"cached_sequences":[],"requests":)";
  EXPECT_EQ(ErrorOf([&] { ParseBatchInput(batch + open); }),
            TooDeepError(shape, "$.requests", batch.size(), 1));
  const std::string replay = R"({"requests":[],"page_size":)";
  EXPECT_EQ(ErrorOf([&] { ParseReplayDocument(replay + open); }),
            TooDeepError(shape, "$.page_size", replay.size(), 1));
  // A root that is not an object is reported as such first.
  EXPECT_EQ(ErrorOf([&] { ParseCaseFile(open); }),
            shape == Shape::kObjects ? TooDeepError(shape, "$", 0, 0)
                                     : "$: expected an object, found an array");
}

TEST_P(NestingTest, DeepAnswerOfAnImplementationIsWrongShapeAtItsLocation) {
  const std::string prefix = R"({"matches":[)";
  const std::string answer = prefix + Nested(GetParam(), kDeep) + "]}";
  const auto start = std::chrono::steady_clock::now();
  const auto parsed = verify::ParsePrintedMatches(answer, 1);
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count(),
      kSecondsAllowed);
  const auto* failure = std::get_if<verify::Failure>(&parsed);
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->kind, verify::FailureKind::kWrongShape);
  EXPECT_EQ(failure->message,
            TooDeepError(GetParam(), "$.matches[0]", prefix.size(), 2));
}

// The limit is exact: 1024 nested arrays and objects are read, 1025 are not.
TEST(NestingLimitTest, ExactlyTheMaximumDepthIsAccepted) {
  static_assert(kMaxJsonDepth == 1024);
  for (const Shape shape : {Shape::kArrays, Shape::kObjects, Shape::kMixed}) {
    // The line's root object and 1023 levels below it: 1024.
    EXPECT_EQ(TraceLineError(kTracePrefix + Nested(shape, 1023) + "}"), "")
        << ShapeName(shape);
    EXPECT_EQ(TraceLineError(kTracePrefix + Nested(shape, 1024) + "}"),
              DeepMemberError(shape, 1))
        << ShapeName(shape);
    // An answer 1024 deep is merely the wrong shape; 1025 is too deep.
    const auto shallow = verify::ParsePrintedMatches(
        R"({"matches":[)" + Nested(shape, 1022) + "]}", 1);
    ASSERT_TRUE(std::holds_alternative<verify::Failure>(shallow));
    EXPECT_THAT(std::get<verify::Failure>(shallow).message,
                ::testing::Not(HasSubstr("nested deeper")));
  }
}

// An invalid escape is reported at the escape, in member
// names (it was reported at the value after the name) and in strings.
TEST(EscapeErrorTest, PointsAtTheEscape) {
  const std::string high =
      "expected a valid escape, found '\\ud800' at byte {} (a high surrogate "
      "without a low one after it)";
  EXPECT_EQ(ErrorOf([] { ParseBatchInput(R"({"\ud800":1})"); }),
            "$: " + fmt::format(fmt::runtime(high), 2));
  EXPECT_EQ(ErrorOf([] {
              ParseBatchInput(
                  R"({"cached_sequences":[],"requests":[],"x\ud800y":1})");
            }),
            "$: " + fmt::format(fmt::runtime(high), 39));
  EXPECT_EQ(TraceLineError(R"({"input_length":1,"hash_ids":[1],"\ud800":1})"),
            "line 1: $: " + fmt::format(fmt::runtime(high), 34));
  // In an unused member: names and strings at any depth.
  EXPECT_EQ(
      TraceLineError(
          R"({"x":{"a":[{"\udc00":1}]},"input_length":1,"hash_ids":[1]})"),
      "line 1: $.x.a[0]: expected a valid escape, found '\\udc00' at "
      "byte 13 (a low surrogate without a high one before it)");
  EXPECT_EQ(
      TraceLineError(R"({"input_length":1,"hash_ids":[1],"x":["ok","a\qb"]})"),
      "line 1: $.x[1]: expected a valid escape, found '\\q' at byte 45");
  EXPECT_EQ(TraceLineError(R"({"input_length":1,"hash_ids":[1],"x":"\u12G4"})"),
            "line 1: $.x: expected a valid escape, found '\\u12G4' at byte 38 "
            "(\\u not followed by 4 hex digits)");
  // Strings a reader uses: a case file's source, a replay policy.
  EXPECT_EQ(
      ErrorOf([] {
        ParseCaseFile(
            R"({"cached_sequences":[],"requests":[],"source":"ab\ud83d\u0041"})");
      }),
      "$.source: expected a valid escape, found '\\ud83d' at byte 49 (a high "
      "surrogate without a low one after it)");
  EXPECT_EQ(ErrorOf([] {
              ParseReplayDocument(R"({"requests":[],"policy":"\uDFFF"})");
            }),
            "$.policy: expected a valid escape, found '\\uDFFF' at byte 25 (a "
            "low surrogate without a high one before it)");
  // A valid pair and every simple escape are accepted.
  EXPECT_EQ(
      TraceLineError(
          R"({"input_length":1,"hash_ids":[1],"\ud83d\ude00":"\"\\\/\b\f\n\r\t\u00e9"})"),
      "");
  // An implementation's answer: not JSON, and the escape's byte named.
  const auto parsed = verify::ParsePrintedMatches(R"({"matches\ud800":[]})", 0);
  ASSERT_TRUE(std::holds_alternative<verify::Failure>(parsed));
  EXPECT_THAT(std::get<verify::Failure>(parsed).message,
              HasSubstr("at byte 9: found '\\ud800' (a high surrogate"));
}

// The same through the tool: one line on stderr naming the file and the
// location, exit status 2, nothing on stdout and no output file, well under
// a second (the process's start-up included).
class NestingCliTest : public ::testing::TestWithParam<Shape> {
 protected:
  test::ProgramRun Run(const std::vector<std::string>& args) {
    const test::ProgramRun run = test::RunProgram(KVPREFIX_CLI, args);
    EXPECT_LT(run.seconds, kSecondsAllowed);
    return run;
  }
  // Checks that `run` failed with exit status 2 and the one line
  // "kvprefix: <file>: <error>".
  static void ExpectBadInput(const test::ProgramRun& run,
                             const std::string& file,
                             const std::string& error) {
    EXPECT_EQ(run.status, 2) << run.err.substr(0, 300);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, StartsWith("kvprefix: " + file + ": " + error));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1);
  }

  test::ScratchDir dir_;
};

INSTANTIATE_TEST_SUITE_P(EveryShape, NestingCliTest,
                         ::testing::Values(Shape::kArrays, Shape::kObjects,
                                           Shape::kMixed),
                         [](const auto& info) {
                           return ShapeName(info.param);
                         });

TEST_P(NestingCliTest, TraceCommandsRejectDeepUnusedMembers) {
  const std::string trace = dir_.Path("deep.jsonl");
  test::WriteTextFile(trace, kTracePrefix + Nested(GetParam(), kDeep) + "}\n");
  const std::string error = DeepMemberError(GetParam(), 1);
  ExpectBadInput(Run({"replay", trace, "--matches", dir_.Path("m.jsonl")}),
                 trace, error);
  ExpectBadInput(Run({"convert", "mooncake", trace, "--cached-fraction", "0.5",
                      "-o", dir_.Path("in.json")}),
                 trace, error);
  EXPECT_FALSE(std::filesystem::exists(dir_.Path("m.jsonl")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Path("in.json")));
  ExpectBadInput(Run({"verify", "--engines", "all", "--trace", trace}), trace,
                 error);
  ExpectBadInput(Run({"curve", trace, "-o", dir_.Path("c.jsonl")}), trace,
                 error);
  EXPECT_FALSE(std::filesystem::exists(dir_.Path("c.jsonl")));
}

TEST_P(NestingCliTest, MatchAndVerifyRejectDeepInputs) {
  const std::string input = dir_.Path("deep.json");
  const std::string batch = R"({"cached_sequences":[],"requests":)";
  test::WriteTextFile(input, batch + Nested(GetParam(), kDeep, false));
  const std::string error =
      TooDeepError(GetParam(), "$.requests", batch.size(), 1);
  ExpectBadInput(Run({"match", input, "-o", dir_.Path("out.json")}), input,
                 error);
  EXPECT_FALSE(std::filesystem::exists(dir_.Path("out.json")));
  ExpectBadInput(Run({"verify", "--engines", "all", input}), input, error);
  ExpectBadInput(Run({"verify", "--engines", "all", "--cases", input}), input,
                 error);
  // A replay document (SPEC §8), read by replay and curve.
  const std::string document = dir_.Path("deep-document.json");
  const std::string requests = R"({"requests":)";
  test::WriteTextFile(document, requests + Nested(GetParam(), kDeep, false));
  const std::string document_error =
      TooDeepError(GetParam(), "$.requests", requests.size(), 1);
  ExpectBadInput(Run({"replay", document, "--input-format", "requests", "-o",
                      dir_.Path("out.json")}),
                 document, document_error);
  ExpectBadInput(Run({"curve", document, "--input-format", "requests"}),
                 document, document_error);
  EXPECT_FALSE(std::filesystem::exists(dir_.Path("out.json")));
  // A case file whose source is deep: the wrong kind, at once.
  const std::string source = dir_.Path("deep-source.json");
  test::WriteTextFile(source,
                      R"({"cached_sequences":[],"requests":[],"source":)" +
                          Nested(GetParam(), kDeep) + "}");
  ExpectBadInput(Run({"verify", "--engines", "all", "--cases", source}), source,
                 "$.source: expected a string");
}

// An answer of 10^6 levels is over verify's output limit (16 times the
// expected answer plus 1 MiB) before it is parsed; one of 10^5 levels
// (at most 600 KB) is parsed, and too deep.
TEST_P(NestingCliTest, VerifyReportsADeepAnswerAsWrongShape) {
  const std::string prefix = R"({"matches":[)";
  for (const std::size_t depth : {kDeep, kDeep / 10}) {
    const std::string answer = dir_.Path("answer.json");
    test::WriteTextFile(answer, prefix + Nested(GetParam(), depth) + "]}\n");
    const test::ProgramRun run = Run(
        {"verify", "--cmd", "cat >/dev/null; cat " + answer, "--runs", "1",
         "--seed", "1", "--max-size", "0", "--out", dir_.Path("case.json")});
    const std::string kind = depth == kDeep ? "output-limit" : "wrong-shape";
    EXPECT_EQ(run.status, 1) << run.err;
    EXPECT_THAT(run.out,
                HasSubstr("FAILED: " + kind + " on generated input 0"));
    EXPECT_EQ(run.err, "kvprefix: verify failed: " + kind + "\n");
    if (depth != kDeep) {
      EXPECT_THAT(run.out, HasSubstr(TooDeepError(GetParam(), "$.matches[0]",
                                                  prefix.size(), 2)));
    }
  }
}

}  // namespace
}  // namespace kvprefix
