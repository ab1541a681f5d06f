// Namespaces (SPEC §8.1): the folder that keeps requests of different
// namespaces apart, the shared namespace cases (tests/data/cases/namespaces/
// and namespaces-batch/, SPEC §8.1's examples) through the library on every
// engine of each case's model and through the CLI, the LRU curve's stack
// property with namespaces, the documents' and traces' namespaces and their
// errors.
#include "kvprefix/namespaces.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "io/case_file.h"
#include "io/input_error.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "io/mooncake.h"
#include "io/replay_document.h"
#include "kvprefix/batch.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/replay.h"
#include "optimized/radix_trie.h"
#include "testing/bad_inputs.h"
#include "testing/program_run.h"
#include "testing/shared_cases.h"
#include "verify/checker.h"
#include "verify/shrink.h"

namespace kvprefix {
namespace {

test::ProgramRun Kvprefix(const std::vector<std::string>& args) {
  return test::RunProgram(KVPREFIX_CLI, args);
}

std::vector<ReplayCaseFile> NamespaceCases() {
  return ReadReplayCaseFolder(test::SharedCasesDir() + "/namespaces");
}

std::vector<CaseFile> NamespaceBatchCases() {
  return ReadCaseFolder(test::SharedCasesDir() + "/namespaces-batch");
}

TEST(NamespaceFolderTest, DefaultIsZeroOthersInOrderOfFirstUse) {
  NamespaceFolder folder;
  EXPECT_EQ(folder.Intern(""), 0u);
  EXPECT_EQ(folder.Intern("b"), 1u);
  EXPECT_EQ(folder.Intern("a"), 2u);
  EXPECT_EQ(folder.Intern("b"), 1u);
  EXPECT_EQ(folder.Intern(std::string(kMaxNamespaceBytes, 'x')), 3u);
  EXPECT_THROW(folder.Intern(std::string(kMaxNamespaceBytes + 1, 'x')),
               std::invalid_argument);
}

TEST(NamespaceFolderTest, FoldsOnlyTheFirstTokenByNamespaceAndToken) {
  NamespaceFolder folder;
  const SequenceList folded =
      folder.Folded(SequenceList{{7, 8}, {7, 8}, {7, 9}, {}, {-5}},
                    std::vector<std::string>{"a", "b", "a", "b", ""});
  // Symbols 0, 1, 2 in order of first use; the rest of a request unchanged.
  EXPECT_EQ(folded, (SequenceList{{0, 8}, {1, 8}, {0, 9}, {}, {2}}));
  EXPECT_EQ(folder.Find("a", 7), Token{0});
  EXPECT_EQ(folder.Find("", -5), Token{2});
  EXPECT_EQ(folder.Find("a", 8), std::nullopt);
  EXPECT_EQ(folder.Find("c", 7), std::nullopt);
  // No namespaces: every sequence in "".
  EXPECT_EQ(folder.Folded(SequenceList{{-5, 1}}, {}), (SequenceList{{2, 1}}));
  EXPECT_THROW(
      folder.Folded(SequenceList{{1}}, std::vector<std::string>{"a", "b"}),
      std::invalid_argument);
}

TEST(NamespaceFolderTest, OnlyTheDefaultNamespaceFoldsNothing) {
  EXPECT_FALSE(HasNamespaces({}));
  EXPECT_FALSE(HasNamespaces(std::vector<std::string>{"", ""}));
  EXPECT_TRUE(HasNamespaces(std::vector<std::string>{"", "a"}));
  SequenceList requests{{5, 6}};
  FoldNamespaces(requests, std::vector<std::string>{""});
  EXPECT_EQ(requests, (SequenceList{{5, 6}}));
  FoldNamespaces(requests, std::vector<std::string>{"a"});
  EXPECT_EQ(requests, (SequenceList{{0, 6}}));
}

// Every namespace case through the library: Replay with the document's
// namespaces on every engine of its model answers the expected matches.
TEST(NamespaceCasesTest, EveryCaseOnEveryEngineOfItsModel) {
  const std::vector<ReplayCaseFile> cases = NamespaceCases();
  ASSERT_EQ(cases.size(), 7u);
  for (const ReplayCaseFile& shared : cases) {
    ASSERT_FALSE(shared.input.namespaces.empty()) << shared.name;
    for (const std::string_view engine :
         EngineNames(shared.input.options.model)) {
      SCOPED_TRACE(shared.name + " on " + std::string(engine));
      const auto index = MakeEngine(engine, shared.input.options);
      std::vector<Match> matches;
      Replay(
          *index, shared.input.requests, shared.input.namespaces,
          [&](std::size_t i, TokenSpan request, const Match& match) {
            // The request as given, not as folded.
            EXPECT_TRUE(std::ranges::equal(request, shared.input.requests[i]));
            matches.push_back(match);
          });
      EXPECT_EQ(matches, shared.expected);
    }
  }
}

TEST(NamespaceCasesTest, BatchCasesOnEveryEngine) {
  const std::vector<CaseFile> cases = NamespaceBatchCases();
  ASSERT_EQ(cases.size(), 1u);
  for (const CaseFile& shared : cases) {
    for (const std::string_view engine : EngineNames()) {
      SCOPED_TRACE(shared.name + " on " + std::string(engine));
      const auto index = MakeEngine(engine);
      EXPECT_EQ(FindPrefixMatches(*index, shared.input), shared.expected);
    }
  }
}

// Each case through `kvprefix replay` (every engine of its model) and each
// batch case through `kvprefix match`: the expected bytes, exit status 0.
TEST(NamespaceCasesTest, EveryCaseThroughTheCli) {
  for (const ReplayCaseFile& shared : NamespaceCases()) {
    std::string expected;
    AppendMatchesJson(shared.input.requests, shared.expected, expected);
    const std::string file =
        test::SharedCasesDir() + "/namespaces/" + shared.name;
    for (const std::string_view engine :
         EngineNames(shared.input.options.model)) {
      const test::ProgramRun run =
          Kvprefix({"replay", "--input-format", "requests", file, "--engine",
                    std::string(engine)});
      EXPECT_EQ(run.status, 0) << file << ": " << run.err;
      EXPECT_EQ(run.out, expected) << file << " on " << engine;
    }
  }
  const test::ScratchDir dir;
  for (const CaseFile& shared : NamespaceBatchCases()) {
    std::string expected;
    AppendMatchesJson(shared.input.requests, shared.expected, expected);
    // `match` reads the SPEC §4 input, not the case file.
    std::string input;
    AppendBatchInputJson(shared.input, input);
    const std::string file = dir.Path(shared.name);
    test::WriteTextFile(file, input);
    for (const std::string_view engine : EngineNames()) {
      const test::ProgramRun run =
          Kvprefix({"match", file, "--engine", std::string(engine)});
      EXPECT_EQ(run.status, 0) << run.err;
      EXPECT_EQ(run.out, expected) << shared.name << " on " << engine;
    }
  }
}

// Random requests over few tokens in three namespaces (some default).
ReplayInput RandomNamespacedRequests(std::uint32_t seed) {
  std::mt19937 random(seed);
  ReplayInput input;
  const std::vector<std::string> names = {"", "a", "lora-7"};
  for (int i = 0; i < 300; ++i) {
    std::vector<Token> request(random() % 7);
    for (Token& token : request) token = static_cast<Token>(random() % 3);
    input.requests.Append(request);
    input.namespaces.push_back(names[random() % names.size()]);
  }
  return input;
}

// SPEC §8.1: LRU stays a stack algorithm with namespaces. The curve of the
// folded requests equals a direct replay with the namespaces at every
// capacity, page sizes 1 and 2.
TEST(NamespaceCurveTest, CurveEqualsReplayAtEveryCapacity) {
  for (const std::uint32_t seed : {1u, 2u, 3u}) {
    for (const std::uint64_t page_size : {1u, 2u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", page size " +
                   std::to_string(page_size));
      const ReplayInput input = RandomNamespacedRequests(seed);
      SequenceList folded = input.requests;
      FoldNamespaces(folded, input.namespaces);
      LruCurve<PagedIndex<RadixTrie>> curve(page_size);
      for (TokenSpan request : folded) curve.Add(request);
      std::vector<std::uint64_t> capacities;
      for (std::uint64_t c = 0; c <= curve.distinct_prefixes() + 1; ++c) {
        capacities.push_back(c);
      }
      const std::vector<std::uint64_t> matched =
          curve.MatchedTokens(capacities);
      for (std::size_t i = 0; i < capacities.size(); ++i) {
        const auto cache = MakeEngine(
            "hash", {.capacity = capacities[i], .page_size = page_size});
        EXPECT_EQ(matched[i],
                  Replay(*cache, input.requests, input.namespaces,
                         [](std::size_t, TokenSpan, const Match&) {})
                      .matched_tokens)
            << "capacity " << capacities[i];
      }
    }
  }
}

// The default namespace alone is today's replay, on every engine.
TEST(NamespaceCurveTest, DefaultNamespaceIsTodaysReplay) {
  ReplayInput input = RandomNamespacedRequests(4);
  std::ranges::fill(input.namespaces, "");
  for (const std::string_view engine : EngineNames()) {
    const auto with = MakeEngine(engine, {.capacity = 20});
    const auto without = MakeEngine(engine, {.capacity = 20});
    std::vector<Match> a;
    std::vector<Match> b;
    Replay(*with, input.requests, input.namespaces,
           [&](std::size_t, TokenSpan, const Match& m) { a.push_back(m); });
    Replay(*without, input.requests,
           [&](std::size_t, TokenSpan, const Match& m) { b.push_back(m); });
    EXPECT_EQ(a, b) << engine;
  }
}

TEST(NamespaceDocumentTest, ReadsAndWritesNamespaces) {
  const ReplayInput input = ParseReplayDocument(
      R"({"namespaces":["a","","\u00e9"],"requests":[[1],[2],[3]]})");
  EXPECT_EQ(input.namespaces, (std::vector<std::string>{"a", "", "\xC3\xA9"}));
  std::string json;
  AppendReplayDocumentJson(input, json);
  EXPECT_EQ(json,
            "{\"requests\":[[1],[2],[3]],\"policy\":\"lru\",\"page_size\":1,"
            "\"namespaces\":[\"a\",\"\",\"\xC3\xA9\"]}\n");
  EXPECT_EQ(ParseReplayDocument(json), input);
  const BatchInput batch = ParseBatchInput(
      R"({"cached_sequences":[[1]],"requests":[],"cached_namespaces":["x"],)"
      R"("namespaces":[]})");
  EXPECT_EQ(batch.cached_namespaces, std::vector<std::string>{"x"});
  std::string batch_json;
  AppendBatchInputJson(batch, batch_json);
  EXPECT_EQ(batch_json,
            "{\"cached_sequences\":[[1]],\"requests\":[],"
            "\"cached_namespaces\":[\"x\"]}\n");
  EXPECT_EQ(ParseBatchInput(batch_json), batch);
}

TEST(NamespaceDocumentTest, ErrorsNameThePlace) {
  EXPECT_EQ(
      test::InputErrorOf([] {
        ParseReplayDocument(
            R"({"requests":[[1],[2],[3],[4]],"namespaces":["a","b","c",7]})");
      }),
      "$.namespaces[3]: expected a string, found 7");
  EXPECT_EQ(test::InputErrorOf([] {
              ParseReplayDocument(
                  R"({"requests":[[1],[2],[3]],"namespaces":["a","b"]})");
            }),
            "$.namespaces: expected 3 namespaces (one per request), found 2");
  EXPECT_EQ(test::InputErrorOf([] {
              ParseReplayDocument(R"({"requests":[[1]],"namespaces":[]})");
            }),
            "$.namespaces: expected 1 namespace (one per request), found 0");
  EXPECT_EQ(
      test::InputErrorOf([] {
        ParseReplayDocument(R"({"requests":[[1]],"namespaces":[")" +
                            std::string(257, 'x') + R"("]})");
      }),
      "$.namespaces[0]: expected a namespace of at most 256 bytes, found 257 "
      "bytes");
  EXPECT_EQ(test::InputErrorOf([] {
              ParseReplayDocument(R"({"requests":[[1]],"namespaces":"a"})");
            }),
            "$.namespaces: expected an array of namespaces (strings), found "
            "a string");
  EXPECT_EQ(
      test::InputErrorOf([] {
        ParseReplayDocument("{\"requests\":[[1]],\"namespaces\":[\"\xFF\"]}");
      }),
      "$.namespaces[0], byte 33: expected UTF-8 text, found invalid byte "
      "0xFF");
  EXPECT_EQ(test::InputErrorOf([] {
              ParseBatchInput(R"({"cached_sequences":[[1]],"requests":[],)"
                              R"("cached_namespaces":["a","b"]})");
            }),
            "$.cached_namespaces: expected 1 namespace (one per cached "
            "sequence), found 2");
}

TEST(NamespaceTraceTest, TheFieldIsAStringOrAnIntegerAbsentIsDefault) {
  const TraceOptions options{.namespace_field = "salt"};
  NamespaceFolder folder;
  SequenceList out;
  for (const char* line :
       {R"({"input_length":512,"hash_ids":[5],"salt":"a"})",
        R"({"input_length":512,"hash_ids":[5],"salt":7})",
        R"({"input_length":512,"hash_ids":[5],"salt":"7"})",
        R"({"input_length":512,"hash_ids":[5]})",
        R"({"salt":"","input_length":1024,"hash_ids":[5,6]})",
        R"({"input_length":512,"hash_ids":[5],"salt":-0})",
        R"({"input_length":0,"hash_ids":[],"salt":"b"})"}) {
    AppendTraceLine(line, 1, options, out, &folder);
  }
  // "a" -> 0; 7 and "7" -> 1; absent and "" -> 2; -0 is "0" -> 3.
  EXPECT_EQ(out, (SequenceList{{0}, {1}, {1}, {2}, {2, 6}, {3}, {}}));
  EXPECT_THROW(
      AppendTraceLine(R"({"input_length":1,"hash_ids":[5]})", 1, options, out),
      std::invalid_argument);
  const auto error = [&](const std::string& line) {
    return test::InputErrorOf(
        [&] { AppendTraceLine(line, 4, options, out, &folder); });
  };
  EXPECT_EQ(error(R"({"input_length":1,"hash_ids":[5],"salt":1.5})"),
            "line 4: $.salt: expected a namespace (a string or an integer), "
            "found 1.5 (a number with a fraction)");
  EXPECT_EQ(error(R"({"input_length":1,"hash_ids":[5],"salt":"a","salt":"b"})"),
            "line 4: $.salt: expected each member once, found \"salt\" a "
            "second time");
  EXPECT_EQ(error(R"({"input_length":1,"hash_ids":[5],"salt":")" +
                  std::string(300, 'y') + "\"}"),
            "line 4: $.salt: expected a namespace of at most 256 bytes, found "
            "300 bytes");
}

// Regression: an invalid UTF-8 namespace was reported by its byte alone
// ("byte 50: expected UTF-8 text ..."), naming no member; now the string's
// JSON location (a document's $.namespaces[i] or $.cached_namespaces[i], a
// trace line's field) comes first, then the byte, exit 2.
TEST(NamespaceErrorTest, InvalidUtf8IsLocatedByMemberAndByte) {
  EXPECT_EQ(test::InputErrorOf([] {
              ParseReplayDocument(
                  "{\"requests\":[[1,2],[1,2],[3]],"
                  "\"namespaces\":[\"a\",\"b\xFF\xFE\",\"c\"]}");
            }),
            "$.namespaces[1], byte 50: expected UTF-8 text, found invalid "
            "byte 0xFF");
  EXPECT_EQ(test::InputErrorOf([] {
              ParseBatchInput(
                  "{\"cached_sequences\":[[1],[2]],\"requests\":[[1]],"
                  "\"cached_namespaces\":[\"x\",\"\xC3\"]}");
            }),
            "$.cached_namespaces[1], byte 73: expected UTF-8 text, found "
            "invalid byte 0xC3");
  SequenceList out;
  NamespaceFolder folder;
  EXPECT_EQ(test::InputErrorOf([&] {
              AppendTraceLine(
                  "{\"hash_ids\":[1,2],\"input_length\":1024,\"ns\":\"b\xFF\"}",
                  2, TraceOptions{.namespace_field = "ns"}, out, &folder);
            }),
            "line 2: $.ns, byte 45: expected UTF-8 text, found invalid byte "
            "0xFF");
  // Through the CLI: the file, the location and the byte, exit 2, nothing
  // on standard output.
  const test::ScratchDir dir;
  const std::string trace = dir.Path("bad.jsonl");
  test::WriteTextFile(
      trace,
      "{\"hash_ids\":[1,2],\"input_length\":1024,\"ns\":\"ok\"}\n"
      "{\"hash_ids\":[1,2],\"input_length\":1024,\"ns\":\"b\xFF\"}\n");
  const test::ProgramRun run =
      Kvprefix({"replay", trace, "--namespace-field", "ns"});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "kvprefix: " + trace +
                         ": line 2: $.ns, byte 45: expected UTF-8 text, "
                         "found invalid byte 0xFF\n");
}

TEST(NamespaceTraceTest, ReplayAndCurveTakeTheField) {
  const test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace,
                      R"({"input_length":1024,"hash_ids":[1,2],"salt":"a"}
{"input_length":1024,"hash_ids":[1,2],"salt":"b"}
{"input_length":1536,"hash_ids":[1,2,3],"salt":"a"}
)");
  const test::ProgramRun replay =
      Kvprefix({"replay", trace, "--namespace-field", "salt", "--matches", "-",
                "-o", dir.Path("summary.json")});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(replay.out,
            "{\"request\":0,\"request_length\":2,\"matched_length\":0,"
            "\"cache_node\":0}\n"
            "{\"request\":1,\"request_length\":2,\"matched_length\":0,"
            "\"cache_node\":0}\n"
            "{\"request\":2,\"request_length\":3,\"matched_length\":2,"
            "\"cache_node\":2}\n");
  // Unbounded: 2 of 7 blocks matched; capacity 2 keeps only "b"'s two.
  const test::ProgramRun curve = Kvprefix(
      {"curve", trace, "--namespace-field", "salt", "--capacities", "2,4"});
  EXPECT_EQ(curve.status, 0) << curve.err;
  EXPECT_EQ(curve.out,
            "{\"capacity\":2,\"capacity_bytes\":null,\"matched_tokens\":0,"
            "\"request_tokens\":7,\"hit_ratio\":0}\n"
            "{\"capacity\":4,\"capacity_bytes\":null,\"matched_tokens\":2,"
            "\"request_tokens\":7,\"hit_ratio\":0.2857142857142857}\n");
  const test::ProgramRun refused =
      Kvprefix({"replay", "--input-format", "requests", trace,
                "--namespace-field", "salt"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.out, "");
  EXPECT_EQ(refused.err,
            "kvprefix: --namespace-field does not apply to --input-format "
            "requests\n");
}

// verify's reference applies a document's namespaces (the in-process
// checkers fold them before the engines: tests/data/cases/namespaces).
TEST(NamespaceVerifyTest, ReferenceMatchesApplyTheNamespaces) {
  for (const ReplayCaseFile& shared : NamespaceCases()) {
    if (shared.input.options.model != CacheModel::kSpec) continue;
    EXPECT_EQ(verify::ReferenceMatches(shared.input), shared.expected)
        << shared.name;
  }
  for (const CaseFile& shared : NamespaceBatchCases()) {
    EXPECT_EQ(verify::ReferenceMatches(shared.input), shared.expected);
  }
}

// The shrinker drops namespaces a failure does not need: all of them at
// once, else one namespace at a time (renamed to "").
TEST(NamespaceVerifyTest, ShrinkerDropsNamespaces) {
  const verify::Failure failure{verify::FailureKind::kWrongAnswer, "wrong"};
  ReplayInput failing;
  failing.requests = SequenceList{{1, 2}, {1, 2}, {3}};
  failing.namespaces = {"a", "b", "c"};
  // Fails on any input with a request: the namespaces go entirely.
  const verify::ReplayChecker always = [&](const ReplayInput& input) {
    return input.requests.size() > 0 ? std::optional(failure) : std::nullopt;
  };
  const verify::ReplayShrinkResult dropped =
      verify::Shrink(failing, failure, always, {});
  EXPECT_TRUE(dropped.input.namespaces.empty());
  EXPECT_EQ(dropped.input.requests.size(), 1u);
  // Fails only while some request is in "b": "b" stays, the rest go.
  const verify::ReplayChecker needs_b = [&](const ReplayInput& input) {
    return std::ranges::count(input.namespaces, "b") > 0
               ? std::optional(failure)
               : std::nullopt;
  };
  const verify::ReplayShrinkResult kept =
      verify::Shrink(failing, failure, needs_b, {});
  EXPECT_EQ(kept.input.namespaces, std::vector<std::string>{"b"});
  EXPECT_EQ(kept.input.requests, SequenceList{{}});
}

}  // namespace
}  // namespace kvprefix
