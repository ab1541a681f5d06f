// The CLI's cache models (SPEC §9): `replay --input-format requests` on the
// shared model cases (tests/data/cases/models/, the real vLLM and SGLang
// answers) for every engine of each case's model, the documents and flags
// SPEC §9.4 refuses (exit status 2, one stderr line naming the member or the
// option), flags overriding a document's model, the summary line's model
// members, and `curve` of the models that are not stack algorithms (one
// replay per capacity) and of spec under the match limit (one pass).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engines/registry.h"
#include "io/case_file.h"
#include "io/json_output.h"
#include "testing/program_run.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;

test::ProgramRun Kvprefix(const std::vector<std::string>& args) {
  return test::RunProgram(KVPREFIX_CLI, args);
}

// The *.json files of shared-cases folder `name`, sorted.
std::vector<std::string> CaseFiles(const std::string& name) {
  std::vector<std::string> files;
  for (const auto& entry :
       fs::directory_iterator(test::SharedCasesDir() + "/" + name)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The text of member `name` in the one-line JSON object `line` (a number,
// a string with its quotes, or null), or "" if it is missing.
std::string JsonMember(const std::string& line, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const std::size_t at = line.find(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size();
  return line.substr(begin, line.find_first_of(",}", begin) - begin);
}

// Exit status 2, nothing on stdout and one stderr line containing `named`.
void ExpectUsageError(const test::ProgramRun& run, const std::string& named) {
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find(named), std::string::npos) << run.err;
}

// Every shared model case, on every engine of its model and on the default
// engine of the model (no --engine), prints the real system's answers.
TEST(CliModelsTest, ReplayOfEveryModelCaseOnEveryEngineOfItsModel) {
  const std::vector<std::string> files = CaseFiles("models");
  ASSERT_EQ(files.size(), 30u);
  for (const std::string& file : files) {
    const ReplayCaseFile shared = ReadReplayCaseFile(file);
    std::string expected;
    AppendMatchesJson(shared.input.requests, shared.expected, expected);
    std::vector<std::vector<std::string>> engines = {{}};
    for (const std::string_view name :
         EngineNames(shared.input.options.model)) {
      engines.push_back({"--engine", std::string(name)});
    }
    for (const std::vector<std::string>& engine : engines) {
      std::vector<std::string> args = {"replay", "--input-format", "requests",
                                       file};
      args.insert(args.end(), engine.begin(), engine.end());
      const test::ProgramRun run = Kvprefix(args);
      EXPECT_EQ(run.status, 0) << file << ": " << run.err;
      EXPECT_EQ(run.out, expected)
          << file << (engine.empty() ? "" : " on " + engine[1]);
    }
  }
}

// The documents SPEC §9.4 refuses: exit status 2, nothing on stdout, one
// stderr line naming the member.
TEST(CliModelsTest, RefusedDocumentsNameTheMember) {
  const std::vector<std::string> files = CaseFiles("models-errors");
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& file : files) {
    const std::string member =
        fs::path(file).stem() == "vllm-fifo" ? ".policy:" : ".trigger:";
    ExpectUsageError(Kvprefix({"replay", "--input-format", "requests", file}),
                     member);
  }
}

// The flags SPEC §9.4 refuses, on both input formats: each a usage error
// naming the option, with FindModelOptionsProblem's words.
TEST(CliModelsTest, RefusedFlagsNameTheOption) {
  const test::ScratchDir dir;
  const std::string document = dir.Path("doc.json");
  test::WriteTextFile(document, R"({"requests":[[1,2],[1,2]]})");
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  for (const std::vector<std::string>& input :
       {std::vector<std::string>{"--input-format", "requests", document},
        std::vector<std::string>{trace, "--mode", "block"}}) {
    const auto replay = [&](std::vector<std::string> flags) {
      std::vector<std::string> args = {"replay"};
      args.insert(args.end(), input.begin(), input.end());
      args.insert(args.end(), flags.begin(), flags.end());
      return Kvprefix(args);
    };
    ExpectUsageError(replay({"--trigger", "on-allocate"}),
                     "kvprefix: --trigger: a trigger needs model \"sglang\"; "
                     "the model is \"spec\"\n");
    ExpectUsageError(replay({"--model", "vllm", "--trigger", "after-insert"}),
                     "--trigger: a trigger needs model \"sglang\"; the model "
                     "is \"vllm\"");
    ExpectUsageError(replay({"--model", "vllm", "--policy", "fifo"}),
                     "kvprefix: --policy: model \"vllm\" has one order, its "
                     "free queue's: the policy is \"lru\", found \"fifo\"\n");
    ExpectUsageError(replay({"--model", "vllm", "--match-limit", "all"}),
                     "--match-limit: model \"vllm\" never matches a "
                     "request's last token");
    ExpectUsageError(replay({"--model", "sglang", "--policy", "lfu"}),
                     "--policy: model \"sglang\" orders edges");
    ExpectUsageError(replay({"--model", "lmcache"}), "--model");
    ExpectUsageError(replay({"--model", "sglang", "--trigger", "before"}),
                     "--trigger");
    ExpectUsageError(replay({"--match-limit", "none"}), "--match-limit");
    ExpectUsageError(replay({"--model", "vllm", "--engine", "radix"}),
                     "engine 'radix' does not implement model 'vllm'");
  }
}

// A flag replaces the document's model, match limit or trigger, and the
// combination is checked again. SPEC §9.4's examples, P = 1: vllm, [1,2]
// twice: (0,0) (1,1); sglang unbounded, [1,2,3] [1,2,4] [1,5]: (0,0) (2,2)
// (1,4); spec all-but-last, [1,2] twice: the second matches [1] only.
TEST(CliModelsTest, FlagsOverrideTheDocumentsModel) {
  const test::ScratchDir dir;
  const std::string twice = dir.Path("twice.json");
  test::WriteTextFile(twice, R"({"requests":[[1,2],[1,2]]})");
  const auto matched = [](const test::ProgramRun& run) {
    EXPECT_EQ(run.status, 0) << run.err;
    return run.out;
  };
  const std::string vllm_answer =
      R"({"matches":[{"matched_length":0,"cache_node":0,"uncached_suffix":[1,2]},)"
      R"({"matched_length":1,"cache_node":1,"uncached_suffix":[2]}]})"
      "\n";
  EXPECT_EQ(matched(Kvprefix({"replay", "--input-format", "requests", twice,
                              "--model", "vllm"})),
            vllm_answer);
  // spec's trie names the node of [1] 1 as well: the first request's nodes
  // are 1 and 2.
  EXPECT_EQ(matched(Kvprefix({"replay", "--input-format", "requests", twice,
                              "--match-limit", "all-but-last"})),
            vllm_answer);
  // The vllm document with --model spec: spec's default match limit, all.
  const std::string vllm = dir.Path("vllm.json");
  test::WriteTextFile(vllm, R"({"requests":[[1,2],[1,2]],"model":"vllm"})");
  EXPECT_EQ(matched(Kvprefix({"replay", "--input-format", "requests", vllm})),
            vllm_answer);
  EXPECT_EQ(
      matched(Kvprefix(
          {"replay", "--input-format", "requests", vllm, "--model", "spec"})),
      R"({"matches":[{"matched_length":0,"cache_node":0,"uncached_suffix":[1,2]},)"
      R"({"matched_length":2,"cache_node":2,"uncached_suffix":[]}]})"
      "\n");
  // --model naming the document's own model keeps the document's match
  // limit (it used to take the model's default: spec matched [1,2]).
  const std::string limited = dir.Path("limited.json");
  test::WriteTextFile(
      limited, R"({"requests":[[1,2],[1,2]],"match_limit":"all-but-last"})");
  EXPECT_EQ(matched(Kvprefix({"replay", "--input-format", "requests", limited,
                              "--model", "spec"})),
            vllm_answer);
  // A member the document set and no flag replaced is named by its place in
  // the file when the model given refuses it (it used to blame --policy,
  // then named no file).
  const std::string lfu = dir.Path("lfu.json");
  test::WriteTextFile(lfu, R"({"requests":[[1,2],[1,2]],"policy":"lfu"})");
  ExpectUsageError(Kvprefix({"replay", "--input-format", "requests", lfu,
                             "--model", "vllm"}),
                   lfu +
                       ": $.policy (set by the document, not replaced by "
                       "--policy): model \"vllm\" has one order");
  EXPECT_EQ(matched(Kvprefix({"replay", "--input-format", "requests", lfu,
                              "--model", "vllm", "--policy", "lru"})),
            vllm_answer);
  // A document's trigger goes with --model sglang; --model vllm refuses the
  // sglang document's trigger (DocumentMembersAFlagMakesInvalidAreRefused),
  // and --model spec --trigger is refused.
  const std::string sglang = dir.Path("sglang.json");
  test::WriteTextFile(sglang,
                      R"({"requests":[[1,2,3],[1,2,4],[1,5]],"model":"sglang",)"
                      R"("trigger":"on-allocate"})");
  const std::string sglang_answer =
      R"({"matches":[{"matched_length":0,"cache_node":0,"uncached_suffix":[1,2,3]},)"
      R"({"matched_length":2,"cache_node":2,"uncached_suffix":[4]},)"
      R"({"matched_length":1,"cache_node":4,"uncached_suffix":[5]}]})"
      "\n";
  EXPECT_EQ(matched(Kvprefix({"replay", "--input-format", "requests", sglang})),
            sglang_answer);
  EXPECT_EQ(
      matched(Kvprefix({"replay", "--input-format", "requests", twice,
                        "--model", "sglang"})),
      R"({"matches":[{"matched_length":0,"cache_node":0,"uncached_suffix":[1,2]},)"
      R"({"matched_length":2,"cache_node":1,"uncached_suffix":[]}]})"
      "\n");
  ExpectUsageError(Kvprefix({"replay", "--input-format", "requests", sglang,
                             "--model", "spec", "--trigger", "on-allocate"}),
                   "--trigger: a trigger needs model \"sglang\"");
}

// Every document member a flag makes invalid is refused the same way (SPEC
// §9.4), in replay and curve, in a document and in a case file: exit 2,
// nothing on stdout, one stderr line naming the member's place. They used to
// be dropped: the match limit "all" answered as all-but-last under --model
// vllm, the trigger as after-insert under --model vllm or spec, while a
// policy was refused.
TEST(CliModelsTest, DocumentMembersAFlagMakesInvalidAreRefused) {
  const test::ScratchDir dir;
  const auto write = [&](const std::string& name, const std::string& json) {
    test::WriteTextFile(dir.Path(name), json);
    return dir.Path(name);
  };
  const std::string all =
      write("all.json", R"({"requests":[[1,2],[1,2]],"match_limit":"all"})");
  const std::string sglang =
      write("sglang.json", R"({"requests":[[1,2,3],[1,2,4],[1,5]],)"
                           R"("model":"sglang","trigger":"on-allocate"})");
  const std::string after =
      write("after.json", R"({"requests":[[1,2]],"model":"sglang","trigger":)"
                          R"("after-insert"})");
  const std::string lfu =
      write("lfu.json", R"({"requests":[[1,2],[1,2]],"policy":"lfu"})");
  const std::string case_file =
      write("case.json",
            R"({"document":{"requests":[[1,2],[1,2]],)"
            R"("match_limit":"all"},"expected":{"matches":[)"
            R"({"matched_length":0,"cache_node":0,"uncached_suffix":[1,2]},)"
            R"({"matched_length":2,"cache_node":2,"uncached_suffix":[]}]}})");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused =
      {{{all, "--model", "vllm"},
        all + ": $.match_limit (set by the document, not replaced by "
              "--match-limit): model \"vllm\" never matches"},
       {{sglang, "--model", "vllm"},
        sglang + ": $.trigger (set by the document, not replaced by "
                 "--trigger): a trigger needs model \"sglang\"; the model is "
                 "\"vllm\""},
       {{sglang, "--model", "spec"}, sglang + ": $.trigger"},
       // Whatever its value (SPEC §9.4: "a trigger member, whatever its
       // value, unless the model is sglang").
       {{after, "--model", "vllm"}, after + ": $.trigger"},
       {{lfu, "--model", "vllm"}, lfu + ": $.policy"},
       {{lfu, "--model", "sglang"}, lfu + ": $.policy"}};
  for (const std::string command : {"replay", "curve"}) {
    for (const auto& [args, message] : refused) {
      std::vector<std::string> line = {command, "--input-format", "requests"};
      line.insert(line.end(), args.begin(), args.end());
      if (command == std::string("curve")) line.push_back("--capacities=1,2");
      SCOPED_TRACE(::testing::PrintToString(line));
      ExpectUsageError(Kvprefix(line), message);
    }
  }
  ExpectUsageError(Kvprefix({"replay", "--input-format", "requests", case_file,
                             "--model", "vllm"}),
                   case_file + ": $.document.match_limit (set by the document");
  // A flag that replaces the member takes its place: the answer is that of
  // the document without the member.
  const std::string twice =
      write("twice.json", R"({"requests":[[1,2],[1,2]]})");
  const std::string plain =
      write("plain.json", R"({"requests":[[1,2,3],[1,2,4],[1,5]],)"
                          R"("model":"sglang"})");
  for (const auto& [document, flags, without] : std::vector<
           std::tuple<std::string, std::vector<std::string>, std::string>>{
           {all, {"--model", "vllm", "--match-limit", "all-but-last"}, twice},
           {sglang, {"--trigger", "after-insert"}, plain}}) {
    std::vector<std::string> replaced = {"replay", "--input-format", "requests",
                                         document};
    replaced.insert(replaced.end(), flags.begin(), flags.end());
    replaced.push_back("--capacity=2");
    const test::ProgramRun with_flag = Kvprefix(replaced);
    replaced[3] = without;
    const test::ProgramRun without_member = Kvprefix(replaced);
    ASSERT_EQ(with_flag.status, 0) << with_flag.err;
    EXPECT_EQ(with_flag.out, without_member.out);
    EXPECT_NE(with_flag.out.find("matched_length"), std::string::npos);
  }
}

// curve checked its flags alone before reading the document, so --trigger
// with an sglang document was refused ("--trigger: a trigger needs model
// \"sglang\"; the model is \"spec\"") where replay took it. Now each
// capacity answers as replay's does.
TEST(CliModelsTest, CurveTakesATriggerForAnSglangDocument) {
  const test::ScratchDir dir;
  const std::string sglang = dir.Path("sglang.json");
  test::WriteTextFile(sglang,
                      R"({"requests":[[1,2,3],[1,2,3],[1,2,4],[1,2,3]],)"
                      R"("model":"sglang"})");
  const test::ProgramRun curve =
      Kvprefix({"curve", "--input-format", "requests", sglang, "--trigger",
                "on-allocate", "--capacities", "2,3,4", "--format", "csv"});
  ASSERT_EQ(curve.status, 0) << curve.err;
  // At C = 2 the first request's 3 pages never fit, so nothing is kept;
  // at 3 request 2 matches 3, request 3 matches [1,2] and its page [4]
  // evicts [3] before it is allocated, so request 4 matches 2: 7; at 4 all
  // fit: 3 + 2 + 3.
  EXPECT_EQ(curve.out,
            "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n"
            "2,,0,12,0\n3,,7,12,0.5833333333333334\n4,,8,12,"
            "0.6666666666666666\n");
}

// The summary line names the model and match limit, and sglang's trigger;
// the conversation trace's block-mode totals are the real systems' (the
// issue's vLLM 12,837 at C = 1000 and SGLang's 59,657 at C = 10,000).
TEST(CliModelsTest, SummaryLineNamesTheModel) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  const test::ProgramRun vllm =
      Kvprefix({"replay", trace, "--mode", "block", "--model", "vllm",
                "--capacity", "1000"});
  ASSERT_EQ(vllm.status, 0) << vllm.err;
  EXPECT_NE(vllm.out.find(R"("engine":"hash",)"),
            std::string::npos);  // vllm's fastest
  EXPECT_NE(vllm.out.find(R"("capacity":1000,"policy":"lru","page_size":1,)"
                          R"("model":"vllm","match_limit":"all-but-last",)"
                          R"("requests":12031,)"),
            std::string::npos)
      << vllm.out;
  EXPECT_EQ(JsonMember(vllm.out, "matched_tokens"), "12837");
  const test::ProgramRun sglang =
      Kvprefix({"replay", trace, "--mode", "block", "--model", "sglang",
                "--capacity", "10000"});
  ASSERT_EQ(sglang.status, 0) << sglang.err;
  EXPECT_NE(sglang.out.find(R"("model":"sglang","match_limit":"all",)"
                            R"("trigger":"after-insert",)"),
            std::string::npos)
      << sglang.out;
  EXPECT_EQ(JsonMember(sglang.out, "matched_tokens"), "59657");
}

// --points' capacities end where the model evicts nothing: for sglang the
// pages of its unbounded tree, not its nodes (former bug: one 8-page edge
// made the curve stop at capacity 1, hit ratio 0, "only 1 distinct
// capacities lie from 1 to the 1 distinct prefixes").
TEST(CliModelsTest, CurvePointsOfSglangReachItsUnboundedPages) {
  const test::ScratchDir dir;
  const std::string twice = dir.Path("twice.json");
  test::WriteTextFile(
      twice,
      R"({"requests":[[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8]],"model":"sglang"})");
  const test::ProgramRun curve =
      Kvprefix({"curve", twice, "--input-format", "requests", "--points", "5"});
  ASSERT_EQ(curve.status, 0) << curve.err;
  const std::size_t last = curve.out.rfind('\n', curve.out.size() - 2);
  const std::string row = curve.out.substr(last + 1);
  EXPECT_EQ(JsonMember(row, "capacity"), "8") << curve.out;
  EXPECT_EQ(JsonMember(row, "matched_tokens"), "8") << curve.out;
}

// A replay document has no Mooncake mode, vocabulary or block size: curve
// refuses those options with one, as replay does (former bug: curve ran
// with --mode and --vocab given, ignoring them).
TEST(CliModelsTest, CurveOfADocumentRefusesTraceOptions) {
  const test::ScratchDir dir;
  const std::string document = dir.Path("document.json");
  test::WriteTextFile(document, R"({"requests":[[1,2,3],[1,2,4]]})");
  for (const std::vector<std::string>& option :
       {std::vector<std::string>{"--mode", "token"},
        std::vector<std::string>{"--vocab", "7"}}) {
    std::vector<std::string> args = {"curve", document, "--input-format",
                                     "requests"};
    args.insert(args.end(), option.begin(), option.end());
    ExpectUsageError(Kvprefix(args),
                     option[0] + " does not apply to --input-format requests");
  }
}

// vllm and sglang are not stack algorithms: curve replays each capacity,
// says so, and every row is replay's at that capacity.
TEST(CliModelsTest, CurveOfVllmAndSglangIsReplayAtEachCapacity) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  for (const std::vector<std::string>& model :
       {std::vector<std::string>{"--model", "vllm"},
        std::vector<std::string>{"--model", "sglang", "--trigger",
                                 "on-allocate", "--policy", "fifo"}}) {
    std::vector<std::string> args = {"curve",        trace,     "--mode",
                                     "block",        "--jobs",  "2",
                                     "--capacities", "300,3000"};
    args.insert(args.end(), model.begin(), model.end());
    const test::ProgramRun curve = Kvprefix(args);
    ASSERT_EQ(curve.status, 0) << curve.err;
    EXPECT_EQ(curve.err, "kvprefix: curve: model " + model[1] +
                             " is not a stack algorithm: one replay per "
                             "capacity, 2 capacities on 2 threads\n");
    std::size_t begin = 0;
    for (const std::string capacity : {"300", "3000"}) {
      const std::size_t end = curve.out.find('\n', begin);
      ASSERT_NE(end, std::string::npos) << curve.out;
      const std::string row = curve.out.substr(begin, end - begin);
      begin = end + 1;
      std::vector<std::string> replay_args = {"replay", trace,        "--mode",
                                              "block",  "--capacity", capacity};
      replay_args.insert(replay_args.end(), model.begin(), model.end());
      const test::ProgramRun replay = Kvprefix(replay_args);
      ASSERT_EQ(replay.status, 0) << replay.err;
      EXPECT_EQ(JsonMember(row, "capacity"), capacity);
      for (const std::string member : {"matched_tokens", "hit_ratio"}) {
        EXPECT_EQ(JsonMember(row, member), JsonMember(replay.out, member))
            << model[1] << " " << member << " at " << capacity;
      }
    }
    EXPECT_EQ(begin, curve.out.size());
  }
}

// spec under all-but-last stays one pass (nothing on stderr) and equals
// replay at each capacity, at page size 1 and 2.
TEST(CliModelsTest, CurveOfSpecUnderTheMatchLimitIsOnePassAndExact) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  const std::vector<std::string> capacities = {"1", "100", "1000", "10000",
                                               "1000000"};
  for (const std::string page_size : {"1", "2"}) {
    const test::ProgramRun curve = Kvprefix(
        {"curve", trace, "--mode", "block", "--match-limit", "all-but-last",
         "--page-size", page_size, "--capacities", "1,100,1000,10000,1000000"});
    ASSERT_EQ(curve.status, 0) << curve.err;
    EXPECT_EQ(curve.err, "");
    std::size_t begin = 0;
    for (const std::string& capacity : capacities) {
      const std::size_t end = curve.out.find('\n', begin);
      ASSERT_NE(end, std::string::npos);
      const std::string row = curve.out.substr(begin, end - begin);
      begin = end + 1;
      const test::ProgramRun replay = Kvprefix(
          {"replay", trace, "--mode", "block", "--match-limit", "all-but-last",
           "--page-size", page_size, "--capacity", capacity});
      ASSERT_EQ(replay.status, 0) << replay.err;
      EXPECT_EQ(JsonMember(row, "matched_tokens"),
                JsonMember(replay.out, "matched_tokens"))
          << "page size " << page_size << " at " << capacity;
    }
  }
}

// --target-hit-ratio under vllm and sglang (refused before: "needs --model
// spec") finds the capacity by a bisection of replays, says what it assumed
// and checked on stderr, and the capacity it prints is the first that
// `replay --capacity` gives the target at, one less missing it.
TEST(CliModelsTest, CurveFindsATargetsCapacityByReplaysForEveryModel) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  const std::vector<std::pair<std::vector<std::string>, std::string>> models = {
      {{"--model", "vllm"}, "1245"},
      {{"--model", "sglang", "--trigger", "on-allocate"}, "1322"}};
  for (const auto& [model, expected] : models) {
    for (const std::string jobs : {"1", "3"}) {
      std::vector<std::string> args = {"curve", trace,    "--target-hit-ratio",
                                       "0.1",   "--jobs", jobs};
      args.insert(args.end(), model.begin(), model.end());
      const test::ProgramRun curve = Kvprefix(args);
      ASSERT_EQ(curve.status, 0) << curve.err;
      const std::string capacity = JsonMember(curve.out, "capacity");
      EXPECT_EQ(capacity, expected) << model[1] << " --jobs " << jobs;
      EXPECT_NE(curve.err.find("capacity " + expected +
                               " by bisection (" /* count */),
                std::string::npos)
          << curve.err;
      EXPECT_NE(curve.err.find("assuming the hit ratio grows with capacity "
                               "(model " +
                               model[1] + " is not a stack algorithm)"),
                std::string::npos)
          << curve.err;
      EXPECT_EQ(curve.err.find("the assumption fails"), std::string::npos);
      for (const std::string& at :
           {capacity, std::to_string(std::stoull(capacity) - 1)}) {
        std::vector<std::string> replay_args = {"replay", trace, "--capacity",
                                                at};
        replay_args.insert(replay_args.end(), model.begin(), model.end());
        const test::ProgramRun replay = Kvprefix(replay_args);
        ASSERT_EQ(replay.status, 0) << replay.err;
        const double ratio = std::stod(JsonMember(replay.out, "hit_ratio"));
        if (at == capacity) {
          EXPECT_GE(ratio, 0.1);
          EXPECT_EQ(JsonMember(replay.out, "hit_ratio"),
                    JsonMember(curve.out, "hit_ratio"));
          EXPECT_NE(curve.err.find("capacity " + at + " hits " +
                                   JsonMember(replay.out, "hit_ratio")),
                    std::string::npos)
              << curve.err;
        } else {
          EXPECT_LT(ratio, 0.1);
          EXPECT_NE(
              curve.err.find("checked: capacity " + at + " hits " +
                             JsonMember(replay.out, "hit_ratio") + " < 0.1"),
              std::string::npos)
              << curve.err;
        }
      }
    }
  }
  // Unreachable: the unbounded cache's, as for lru.
  const test::ProgramRun unreachable = Kvprefix(
      {"curve", trace, "--model", "vllm", "--target-hit-ratio", "0.99"});
  ASSERT_EQ(unreachable.status, 0) << unreachable.err;
  EXPECT_EQ(JsonMember(unreachable.out, "capacity"), "null");
  const test::ProgramRun unbounded =
      Kvprefix({"replay", trace, "--model", "vllm"});
  EXPECT_EQ(JsonMember(unreachable.out, "matched_tokens"),
            JsonMember(unbounded.out, "matched_tokens"));
  EXPECT_NE(unreachable.err.find("--target-hit-ratio 0.99: unreachable"),
            std::string::npos)
      << unreachable.err;
}

// curve's own refusals for the models: the §9.4 rules hold there too.
TEST(CliModelsTest, CurveRefusesWhatTheModelsCannotDo) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  ExpectUsageError(Kvprefix({"curve", trace, "--trigger", "on-allocate"}),
                   "--trigger: a trigger needs model \"sglang\"");
  ExpectUsageError(
      Kvprefix({"curve", trace, "--model", "vllm", "--policy", "fifo"}),
      "--policy: model \"vllm\" has one order");
}

// --- match --model, --match-limit (the batch job under a model) ----------

// `match` of a SPEC §4 input of `cached` and `requests` (written to a file)
// with `flags`: its stdout, checked to exit 0.
std::string MatchOutput(const test::ScratchDir& dir, const SequenceList& cached,
                        const SequenceList& requests,
                        std::vector<std::string> flags) {
  const std::string file = dir.Path("input.json");
  std::string json;
  AppendBatchInputJson(BatchInput{cached, requests}, json);
  test::WriteTextFile(file, json);
  std::vector<std::string> args = {"match", file};
  args.insert(args.end(), flags.begin(), flags.end());
  const test::ProgramRun run = Kvprefix(args);
  EXPECT_EQ(run.status, 0) << run.err;
  return run.out;
}

// SPEC §5's output answering `requests` with `matches`.
std::string Answers(const SequenceList& requests,
                    const std::vector<Match>& matches) {
  std::string json;
  AppendMatchesJson(requests, matches, json);
  return json;
}

// Worked by hand from SPEC §9.2, the cached sequences served in order on an
// unbounded pool (new block IDs from 1): [1,2] takes blocks 1 ([1]) and 2
// ([1,2]); [1] matches nothing (its only token is its last) and takes
// block 3, a second holder of [1]; [2] takes block 4. Then [1,2] hits
// block 1 only (the cap: 1 of 2 tokens), [2,5] block 4, [1,2,3] blocks 1
// and 2. The trie (spec) names the same prefixes nodes 1, 2 and 3 ([2]) and
// matches [1,2] whole.
TEST(CliModelsTest, MatchUnderVllmCapsAndAnswersBlockIds) {
  const test::ScratchDir dir;
  const SequenceList cached({{1, 2}, {1}, {2}});
  const SequenceList requests({{1, 2}, {2, 5}, {1, 2, 3}, {}});
  const auto match = [&](std::vector<std::string> flags) {
    return MatchOutput(dir, cached, requests, std::move(flags));
  };
  EXPECT_EQ(match({"--model", "vllm"}),
            Answers(requests, {{1, 1}, {1, 4}, {2, 2}, {0, 0}}));
  EXPECT_EQ(match({}), Answers(requests, {{2, 2}, {1, 3}, {2, 2}, {0, 0}}));
  // SPEC §9.3: [1] splits [1,2]'s edge (new node 2 holds [1], node 1 keeps
  // [2]); [2] is node 3. [1,2] ends at node 1; under all-but-last its key
  // [1] ends at node 2.
  EXPECT_EQ(match({"--model", "sglang"}),
            Answers(requests, {{2, 1}, {1, 3}, {2, 1}, {0, 0}}));
  EXPECT_EQ(match({"--model", "sglang", "--match-limit", "all-but-last"}),
            Answers(requests, {{1, 2}, {1, 3}, {2, 1}, {0, 0}}));
  // Pages of 2: [1,2,3]'s partial page takes block 2 and holds nothing, so
  // [5,6] is block 3 where the trie's page node is 2.
  const SequenceList paged_cached({{1, 2, 3}, {5, 6}});
  const SequenceList paged({{5, 6, 7}, {1, 2, 9}});
  EXPECT_EQ(MatchOutput(dir, paged_cached, paged,
                        {"--model", "vllm", "--page-size", "2"}),
            Answers(paged, {{2, 3}, {2, 1}}));
  EXPECT_EQ(MatchOutput(dir, paged_cached, paged, {"--page-size", "2"}),
            Answers(paged, {{2, 2}, {2, 1}}));
}

// SPEC §9.1 with model spec: a full hit of n tokens is cut to n - 1, then
// to whole pages: [1,2,3,4] matches 3 tokens (node 3), with pages of 2 one
// page (node 1); [1,2,3,4,5] keeps its 4 either way.
TEST(CliModelsTest, MatchLimitOfSpecCapsAFullHit) {
  const test::ScratchDir dir;
  const SequenceList cached({{1, 2, 3, 4}});
  const SequenceList requests({{1, 2, 3, 4}, {1, 2, 3, 4, 5}});
  EXPECT_EQ(
      MatchOutput(dir, cached, requests, {"--match-limit", "all-but-last"}),
      Answers(requests, {{3, 3}, {4, 4}}));
  EXPECT_EQ(MatchOutput(dir, cached, requests,
                        {"--match-limit", "all-but-last", "--page-size", "2"}),
            Answers(requests, {{2, 1}, {4, 2}}));
  EXPECT_EQ(MatchOutput(dir, cached, requests, {}),
            Answers(requests, {{4, 4}, {4, 4}}));
}

// An engine without the model is refused by name (the registry's words);
// SPEC §9.4's combinations are refused as replay refuses them; the batch
// job evicts nothing, so it has no --trigger.
TEST(CliModelsTest, MatchRefusesWhatTheModelsCannotDo) {
  const test::ScratchDir dir;
  const std::string input = dir.Path("input.json");
  test::WriteTextFile(input, R"({"cached_sequences":[[1]],"requests":[[1]]})");
  ExpectUsageError(
      Kvprefix({"match", input, "--model", "vllm", "--engine", "radix"}),
      "kvprefix: engine 'radix' does not implement model 'vllm' (engines "
      "that do: reference, hash)\n");
  ExpectUsageError(
      Kvprefix({"match", input, "--model", "vllm", "--match-limit", "all"}),
      "kvprefix: --match-limit: model \"vllm\" never matches");
  ExpectUsageError(Kvprefix({"match", input, "--model", "sglang", "--trigger",
                             "on-allocate"}),
                   "--trigger");
}

// Every engine of each model, and each match limit the model takes, answers
// the examples as the model's default engine does, and the reference too.
TEST(CliModelsTest, MatchOfEveryEngineOfEachModelAgreesOnTheExamples) {
  std::vector<std::string> examples;
  for (const auto& entry :
       fs::directory_iterator(KVPREFIX_SOURCE_DIR "/examples")) {
    if (entry.path().extension() == ".json") examples.push_back(entry.path());
  }
  ASSERT_GE(examples.size(), 4u);
  for (const std::string& example : examples) {
    for (const auto& [model, limits] :
         std::vector<std::pair<CacheModel, std::vector<std::string>>>{
             {CacheModel::kSpec, {"all", "all-but-last"}},
             {CacheModel::kVllm, {"all-but-last"}},
             {CacheModel::kSglang, {"all", "all-but-last"}}}) {
      for (const std::string& limit : limits) {
        for (const std::string page_size : {"1", "2"}) {
          const std::vector<std::string> args = {
              "match",         example,
              "--model",       std::string(NameOf(kCacheModels, model)),
              "--match-limit", limit,
              "--page-size",   page_size};
          const test::ProgramRun by_default = Kvprefix(args);
          ASSERT_EQ(by_default.status, 0) << by_default.err;
          for (std::string_view engine : EngineNames(model)) {
            std::vector<std::string> with_engine = args;
            with_engine.insert(with_engine.end(),
                               {"--engine", std::string(engine)});
            const test::ProgramRun run = Kvprefix(with_engine);
            EXPECT_EQ(run.status, 0) << run.err;
            EXPECT_EQ(run.out, by_default.out)
                << example << " " << NameOf(kCacheModels, model) << " " << limit
                << " P=" << page_size << " on " << engine;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kvprefix
