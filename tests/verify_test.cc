// Tests `kvprefix verify`: the built CLI against deliberately wrong Python
// implementations in tests/verify/ (each caught, classified and shrunk), a
// correct one (passes), for the batch job and for replay documents
// (--format requests, SPEC §8), and the verify library's parts directly
// (subprocess plumbing, strict output parsing, shrinking of mutant engines
// and caches), plus the checks of the CLI's numeric options (convert's
// --cached-fraction too) and of case files.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <variant>

#include "checking/differential.h"
#include "checking/random_input.h"
#include "checking/recipe.h"
#include "engines/registry.h"
#include "io/case_file.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "kvprefix/batch.h"
#include "reference/reference_trie.h"
#include "testing/model_mutants.h"
#include "testing/mutants.h"
#include "testing/own_node_ids_engine.h"
#include "testing/program_run.h"
#include "testing/shared_cases.h"
#include "verify/cache_state.h"
#include "verify/checker.h"
#include "verify/inputs.h"
#include "verify/isolation.h"
#include "verify/output_check.h"
#include "verify/run.h"
#include "verify/shrink.h"
#include "verify/statistics.h"
#include "verify/subprocess.h"

namespace kvprefix::verify {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The CLI under test; KVPREFIX_CLI in the environment overrides the build's.
std::string Cli() {
  const char* cli = std::getenv("KVPREFIX_CLI");
  return cli != nullptr ? cli : KVPREFIX_CLI;
}

// A --cmd value running tests/verify/<script>; -S skips site-packages, which
// halves Python's start-up time (the scripts need only the standard library).
std::string Script(const std::string& name) {
  return "/usr/bin/python3 -S " KVPREFIX_SOURCE_DIR "/tests/verify/" + name;
}

// The path of `name` in this program's scratch folder, removed at exit.
std::string TempPath(const std::string& name) {
  static const test::ScratchDir dir;
  return dir.Path(name);
}

struct CliRun {
  int exit_status;
  std::string output;  // standard output and error
};

// Runs `kvprefix <arguments>` through the shell.
CliRun RunCli(const std::string& arguments) {
  const std::string log = TempPath("verify.log");
  const std::string command = Cli() + " " + arguments + " > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream file(log);
  std::stringstream output;
  output << file.rdbuf();
  EXPECT_TRUE(WIFEXITED(status)) << command;
  return CliRun{WEXITSTATUS(status), output.str()};
}

CliRun RunVerify(const std::string& arguments) {
  return RunCli("verify " + arguments);
}

std::string Quote(const std::string& text) { return "'" + text + "'"; }

// Checks that `command` fails as `kind`, the case going to `out`, and
// returns the run.
CliRun ExpectCommandCaught(const std::string& command, const std::string& out,
                           const std::string& kind,
                           const std::string& extra_flags) {
  const CliRun run = RunVerify("--cmd " + Quote(command) + " --seed 1 --out " +
                               out + " " + extra_flags);
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("FAILED: " + kind + " on ")) << run.output;
  EXPECT_THAT(run.output, HasSubstr("kvprefix: verify failed: " + kind));
  return run;
}

// Checks that `script` fails as `kind` and returns the written case file.
CaseFile ExpectCaught(const std::string& script, const std::string& kind,
                      const std::string& extra_flags = "") {
  const std::string out = TempPath(script + ".case.json");
  ExpectCommandCaught(Script(script), out, kind, extra_flags);
  return ReadCaseFile(out);
}

void ExpectShrunk(const CaseFile& shrunk) {
  const BatchInput& input = shrunk.input;
  EXPECT_LE(input.cached_sequences.size() + input.requests.size(), 3u);
  for (const SequenceList* list : {&input.cached_sequences, &input.requests}) {
    for (TokenSpan sequence : *list) EXPECT_LE(sequence.size(), 4u);
  }
  // The case file carries the reference's answer.
  ReferenceTrie reference;
  EXPECT_EQ(shrunk.expected, FindPrefixMatches(reference, input));
}

TEST(VerifyCliTest, CorrectPythonImplementationPasses1000Runs) {
  const CliRun run = RunVerify("--cmd " + Quote(Script("prefix_cache.py")) +
                               " --runs 1000 --seed 7 --max-size 40");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 1000 inputs agree"));
}

TEST(VerifyCliTest, CorrectPythonImplementationPassesSharedCases) {
  const std::string dir = test::SharedCasesDir();
  const CliRun run = RunVerify("--cmd " + Quote(Script("prefix_cache.py")) +
                               " --cases " + dir);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr(fmt::format("OK: {} inputs agree",
                                    test::LoadSharedCases().size())));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("warning")));
}

TEST(VerifyCliTest, CorrectPythonImplementationPassesTraceWindows) {
  const fs::path trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  // 12,031 requests in windows of 1,000: 13 inputs.
  const CliRun run =
      RunVerify("--cmd " + Quote(Script("prefix_cache.py")) + " --trace " +
                trace.string() + " --trace-window 1000");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 13 inputs agree"));
}

TEST(VerifyCliTest, OffByOneAtMatchEndIsWrongAnswerShrunk) {
  const CaseFile shrunk = ExpectCaught("off_by_one.py", "wrong-answer");
  ExpectShrunk(shrunk);
  // The minimal case replays: still wrong for the bug, right for the truth.
  const std::string out = TempPath("off_by_one.py.case.json");
  EXPECT_EQ(RunVerify("--cmd " + Quote(Script("off_by_one.py")) + " --cases " +
                      out + " --out " + out + ".again")
                .exit_status,
            1);
  EXPECT_EQ(
      RunVerify("--cmd " + Quote(Script("prefix_cache.py")) + " --cases " + out)
          .exit_status,
      0);
}

// The replay line's command, `--cases FILE` with --out FILE, rewrote the
// case that still failed as it was: only its source changed, from where
// the case came from to "... on case FILE". It is left as it is now; a
// case that shrinks further is still written.
TEST(VerifyCliTest, ReplayingACaseThatFailsAsItIsLeavesItAsItIs) {
  const std::string out = TempPath("off_by_one.py.case.json");
  ExpectCaught("off_by_one.py", "wrong-answer");
  const std::string before = test::ReadTextFile(out);
  const CliRun again = RunVerify("--cmd " + Quote(Script("off_by_one.py")) +
                                 " --cases " + out + " --out " + out);
  EXPECT_EQ(again.exit_status, 1) << again.output;
  EXPECT_THAT(again.output, HasSubstr("the case in " + out +
                                      " fails as it is: not rewritten\n"
                                      "replay: kvprefix verify --cmd "));
  EXPECT_EQ(test::ReadTextFile(out), before);
  EXPECT_THAT(before, HasSubstr("on generated input"));
}

// An input no candidate can replace (dropping the request or its token
// passes) was reported "shrunk in 3 checks from 1 sequences (1 tokens) to
// 1 sequences (1 tokens)".
TEST(VerifyCliTest, MinimalFailingInputIsReportedNotShrunk) {
  const std::string input = TempPath("minimal.json");
  std::ofstream(input) << R"({"cached_sequences":[],"requests":[[0]]})";
  const CliRun run =
      ExpectCommandCaught(Script("off_by_one.py"),
                          TempPath("minimal.case.json"), "wrong-answer", input);
  EXPECT_THAT(run.output, HasSubstr("\nnot shrunk: none of the 3 smaller "
                                    "inputs tried fails\n"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("shrunk in")));
}

// A case whose expected answer is not the reference's is bad input (exit
// 2) naming the case and the first request that differs, before anything
// is checked; it used to be a warning, and verify exited 0. By hand: [1,2]
// cached, [1,2,3] matches 2 tokens at node 2.
TEST(VerifyCliTest, StaleExpectedAnswerIsBadInput) {
  const std::string stale = TempPath("stale.case.json");
  std::ofstream(stale)
      << R"({"cached_sequences":[[1,2]],"requests":[[1,2,3]],"expected":)"
         R"({"matches":[{"matched_length":1,"cache_node":1,)"
         R"("uncached_suffix":[2,3]}]}})";
  const CliRun run = RunVerify("--engines all --cases " + stale);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("stale.case.json: its expected answer differs from "
                        "the reference's at request 0: expected "
                        "matched_length 1, cache_node 1; the reference 2, 2"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("OK:")));
}

// A bad --out was found only after the whole check and the shrinking: the
// FAILED report came first, then "the output path is empty" (exit 2) or
// the write error. Now verify stops before it generates anything, and a
// good --out is created only for a failure.
TEST(VerifyCliTest, BadOutPathIsFoundBeforeAnyCheck) {
  const std::string off_by_one =
      "--cmd " + Quote(Script("off_by_one.py")) + " --seed 1 --runs 2 --out ";
  const CliRun empty = RunVerify(off_by_one + "''");
  EXPECT_EQ(empty.exit_status, 2);
  EXPECT_EQ(empty.output,
            "kvprefix: --out: the output path is empty (run with --help for "
            "usage)\n");
  const std::string folder = TempPath("out-folder");
  fs::create_directories(folder);
  const CliRun directory = RunVerify(off_by_one + folder);
  EXPECT_EQ(directory.exit_status, 1);
  EXPECT_EQ(directory.output,
            "kvprefix: " + folder + ": cannot open: Is a directory\n");
  fs::remove(folder);
  const std::string missing = TempPath("no-folder");
  const CliRun no_folder = RunVerify(off_by_one + missing + "/c.json");
  EXPECT_EQ(no_folder.exit_status, 1);
  EXPECT_EQ(no_folder.output, "kvprefix: " + missing +
                                  "/c.json: cannot create a temporary file "
                                  "in " +
                                  missing + ": No such file or directory\n");
  EXPECT_FALSE(fs::exists(missing));
  // A good path is not created by the check: a passing run leaves none.
  const std::string unused = TempPath("unused.json");
  fs::remove(unused);
  const CliRun passing = RunVerify("--cmd " + Quote(Script("prefix_cache.py")) +
                                   " --seed 1 --runs 2 --out " + unused);
  EXPECT_EQ(passing.exit_status, 0) << passing.output;
  EXPECT_FALSE(fs::exists(unused));
}

TEST(VerifyCliTest, DuplicatesAsNewNodesIsWrongAnswerShrunk) {
  const CaseFile shrunk = ExpectCaught("duplicate_nodes.py", "wrong-answer");
  ExpectShrunk(shrunk);
  // Only a duplicated cached sequence shows this bug.
  ASSERT_EQ(shrunk.input.cached_sequences.size(), 2u);
  EXPECT_TRUE(std::ranges::equal(shrunk.input.cached_sequences[0],
                                 shrunk.input.cached_sequences[1]));
}

// --- Long-lived commands (--protocol lines) ----------------------------------

// A --cmd value running tests/verify/<script> in its lines mode (--lines),
// first appending a line to `starts` (when given): one line per start.
std::string LinesScript(const std::string& script,
                        const std::string& starts = "") {
  const std::string command = Script(script) + " --lines";
  return starts.empty() ? command
                        : "echo start >> " + starts + "; exec " + command;
}

// How many times a command of LinesScript(_, starts) was started.
int CountStarts(const std::string& starts) {
  std::ifstream file(starts);
  int lines = 0;
  for (std::string line; std::getline(file, line);) ++lines;
  return lines;
}

TEST(VerifyLinesTest, CorrectPythonImplementationPassesInOneProcess) {
  const std::string starts = TempPath("lines-starts.txt");
  fs::remove(starts);
  const CliRun run =
      RunVerify("--cmd " + Quote(LinesScript("prefix_cache.py", starts)) +
                " --protocol lines --runs 1000 --seed 7 --max-size 40 "
                "--jobs 1");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 1000 inputs agree"));
  EXPECT_EQ(CountStarts(starts), 1);
  // One process per job at most.
  fs::remove(starts);
  const CliRun jobs =
      RunVerify("--cmd " + Quote(LinesScript("prefix_cache.py", starts)) +
                " --protocol lines --runs 300 --seed 8 --jobs 3");
  EXPECT_EQ(jobs.exit_status, 0) << jobs.output;
  EXPECT_THAT(jobs.output, HasSubstr("OK: 300 inputs agree"));
  EXPECT_GE(CountStarts(starts), 1);
  EXPECT_LE(CountStarts(starts), 3);
}

TEST(VerifyLinesTest, CorrectPythonCachePassesReplayDocumentsAndCases) {
  const CliRun generated =
      RunVerify("--cmd " + Quote(LinesScript("replay_cache.py")) +
                " --protocol lines --format requests --runs 300 --seed 7");
  EXPECT_EQ(generated.exit_status, 0) << generated.output;
  EXPECT_THAT(generated.output, HasSubstr("OK: 300 inputs agree"));
  const CliRun cases = RunVerify(
      "--cmd " + Quote(LinesScript("prefix_cache.py")) +
      " --protocol lines --cases " + test::SharedCasesDir() + " --trace " +
      KVPREFIX_SOURCE_DIR
      "/data/mooncake/conversation_trace.jsonl "
      "--trace-window 1000");
  EXPECT_EQ(cases.exit_status, 0) << cases.output;
  EXPECT_THAT(cases.output,
              HasSubstr(fmt::format("OK: {} inputs agree",
                                    test::LoadSharedCases().size() + 13)));
}

TEST(VerifyLinesTest, OffByOneIsCaughtAndShrunkInLinesMode) {
  const std::string out = TempPath("off_by_one.lines.case.json");
  const CliRun run = ExpectCommandCaught(LinesScript("off_by_one.py"), out,
                                         "wrong-answer", "--protocol lines");
  ExpectShrunk(ReadCaseFile(out));
  EXPECT_THAT(run.output, HasSubstr("shrunk in "));
  // The replay line names the protocol, and replays the failure.
  EXPECT_THAT(run.output, HasSubstr("replay: kvprefix verify --cmd " +
                                    Quote(LinesScript("off_by_one.py")) +
                                    " --protocol lines --cases"));
  EXPECT_EQ(
      RunVerify("--cmd " + Quote(LinesScript("off_by_one.py")) +
                " --protocol lines --cases " + out + " --out " + out + ".again")
          .exit_status,
      1);
}

TEST(VerifyLinesTest, ReplayBugIsCaughtAndShrunkInLinesMode) {
  const std::string out = TempPath("no_touch.lines.case.json");
  ExpectCommandCaught(LinesScript("replay_no_touch_on_hit.py"), out,
                      "wrong-answer", "--protocol lines --format requests");
  EXPECT_LE(ReadReplayCaseFile(out).input.requests.size(), 6u);
}

// A command that dies on one input is reported with that input (shrunk:
// every candidate goes to a running process, a new one after each death)
// and the run goes on with a new process.
TEST(VerifyLinesTest, DyingCommandIsReportedWithTheInputThatKilledIt) {
  const std::string out = TempPath("dies.lines.case.json");
  const std::string starts = TempPath("dies-starts.txt");
  fs::remove(starts);
  const CliRun run =
      ExpectCommandCaught(LinesScript("dies_on_token.py", starts), out, "crash",
                          "--protocol lines --jobs 1");
  EXPECT_THAT(run.output, HasSubstr("killed by signal 9 (Killed) before "
                                    "answering this line"));
  const CaseFile shrunk = ReadCaseFile(out);
  ASSERT_EQ(shrunk.input.requests.size(), 1u);
  EXPECT_EQ(shrunk.input.cached_sequences.size(), 0u);
  EXPECT_TRUE(
      std::ranges::equal(shrunk.input.requests[0], std::vector<Token>{3}));
  EXPECT_THAT(run.output, HasSubstr("\"requests\":[[3]]"));
  // A process for the first inputs, then a new one after every death.
  EXPECT_GT(CountStarts(starts), 2);
  // The exit of an uncaught exception is a crash too, shrunk to its input.
  const CliRun exits = ExpectCommandCaught(LinesScript("crash_on_empty.py"),
                                           TempPath("crash.lines.json"),
                                           "crash", "--protocol lines");
  EXPECT_THAT(exits.output, HasSubstr("exited with status 1 before answering "
                                      "this line"));
  EXPECT_THAT(exits.output, HasSubstr("IndexError"));
  EXPECT_THAT(exits.output, HasSubstr("\"requests\":[[]]"));
}

// The checker directly: one process serves input after input; a death is
// checked again on a new process (which dies too), reported on its input,
// and the next input gets a new process that stays.
TEST(VerifyLinesTest, CheckerKeepsOneProcessAndRestartsItAfterADeath) {
  const std::string starts = TempPath("checker-starts.txt");
  fs::remove(starts);
  const Checker check = MakeCommandChecker(
      CommandOptions{.command = LinesScript("dies_on_token.py", starts),
                     .protocol = Protocol::kLines});
  BatchInput good;
  good.cached_sequences = {{1, 2}, {1, 4}};
  good.requests = {{1, 2, 5}, {7}};
  BatchInput deadly;
  deadly.requests = {{1, 3}};
  EXPECT_FALSE(check(good));
  EXPECT_FALSE(check(good));
  EXPECT_EQ(CountStarts(starts), 1);
  const std::optional<Failure> death = check(deadly);
  ASSERT_TRUE(death);
  EXPECT_EQ(death->kind, FailureKind::kCrash);
  EXPECT_THAT(death->message, HasSubstr("killed by signal 9"));
  EXPECT_FALSE(death->depends_on_earlier_input);
  EXPECT_EQ(CountStarts(starts), 2);
  EXPECT_FALSE(check(good));
  EXPECT_FALSE(check(good));
  EXPECT_EQ(CountStarts(starts), 3);
}

TEST(VerifyLinesTest, TwoAnswerLinesAreNotJson) {
  const CliRun run = ExpectCommandCaught(LinesScript("answers_twice.py"),
                                         TempPath("twice.lines.json"),
                                         "not-json", "--protocol lines");
  EXPECT_THAT(run.output, HasSubstr("more than one line answered this line: "
                                    "after the answer line came"));
  // The same script is not-json one process per input too.
  ExpectCaught("answers_twice.py", "not-json");
}

// A cache kept from one line to the next: the failure is reported with its
// input, which passes alone, so it is not shrunk.
TEST(VerifyLinesTest, StateKeptBetweenLinesIsReportedAsSuch) {
  const std::string out = TempPath("kept.lines.json");
  const CliRun run =
      ExpectCommandCaught(LinesScript("keeps_cache_between_lines.py"), out,
                          "wrong-answer", "--protocol lines --jobs 1");
  EXPECT_THAT(run.output,
              HasSubstr("(a new process answers this input right: the "
                        "failure depends on the lines before it"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("shrunk in")));
  // Alone, the case passes: per process, and in lines mode.
  EXPECT_EQ(RunVerify("--cmd " + Quote(Script("keeps_cache_between_lines.py")) +
                      " --cases " + out)
                .exit_status,
            0);
  EXPECT_EQ(
      RunVerify("--cmd " + Quote(LinesScript("keeps_cache_between_lines.py")) +
                " --protocol lines --cases " + out)
          .exit_status,
      0);
}

TEST(VerifyLinesTest, NoAnswerLineIsTimeoutOrCrash) {
  // Reads and never answers: a timeout, and the hint for a command that
  // waits for the end of its input.
  const CliRun silent =
      ExpectCommandCaught("cat > /dev/null", TempPath("silent.lines.json"),
                          "timeout", "--protocol lines --runs 1 --timeout 0.5");
  EXPECT_THAT(silent.output, HasSubstr("no answer line within 500 ms"));
  EXPECT_THAT(silent.output,
              HasSubstr("without waiting for the end of its input"));
  // A command of one document per process waits for the end of its input.
  const CliRun one_document = ExpectCommandCaught(
      Script("prefix_cache.py"), TempPath("one-document.lines.json"), "timeout",
      "--protocol lines --runs 1 --timeout 0.5");
  EXPECT_THAT(one_document.output,
              HasSubstr("without waiting for the end of its input"));
  // Exits without a word.
  const CliRun exits =
      ExpectCommandCaught("true", TempPath("true.lines.json"), "crash",
                          "--protocol lines --runs 1");
  EXPECT_THAT(exits.output, HasSubstr("exited with status 0"));
  // Half a line, then the end of its output.
  const CliRun half = ExpectCommandCaught(
      "head -c 1 > /dev/null; printf \"{\\\"matches\\\"\"",
      TempPath("half.lines.json"), "crash", "--protocol lines --runs 1");
  EXPECT_THAT(half.output,
              HasSubstr("exited with status 0 after 10 bytes of its answer "
                        "line, before its newline"));
}

// The same through --protocol lines, as the issue met them.
TEST(VerifyLinesTest, AnswersNestedTooDeepOrOutOfRangeArePlacedBySpec6) {
  const CliRun deep = ExpectCommandCaught(
      LinesScript("answers_too_deep.py"), TempPath("deep.lines.json"),
      "wrong-shape", "--protocol lines --runs 1");
  EXPECT_THAT(deep.output,
              HasSubstr(": expected at most 1024 nested arrays and objects, "
                        "found '[' at byte 1024 nested deeper than 1024\n"));
  const CliRun huge = ExpectCommandCaught(
      LinesScript("answers_huge_length.py"), TempPath("huge.lines.json"),
      "wrong-shape", "--protocol lines --runs 20");
  EXPECT_THAT(huge.output,
              HasSubstr("\n$.matches[0].matched_length: expected an integer "
                        "from 0 to 18446744073709551615, found "
                        "18446744073709551616\n"));
}

TEST(VerifyLinesTest, ProtocolIsForCommandsOnly) {
  const CliRun run = RunVerify("--engines all --protocol lines --runs 1");
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_EQ(run.output,
            "kvprefix: verify: --protocol: applies to --cmd only (engines "
            "run in process)\n");
  EXPECT_EQ(RunVerify("--cmd true --protocol pipes --runs 1").exit_status, 2);
}

TEST(LineProcessTest, ExchangesLinesAndSeesExtraOutput) {
  LineProcess cat("cat");
  const LineExchange first = cat.Exchange("one\n", SubprocessOptions{});
  EXPECT_EQ(first.kind, LineExchange::Kind::kAnswered);
  EXPECT_EQ(first.line, "one\n");
  EXPECT_TRUE(first.after.empty());
  EXPECT_TRUE(cat.usable());
  // A line far beyond a pipe buffer comes back whole: no deadlock.
  const std::string big = std::string(1 << 20, 'x') + "\n";
  EXPECT_EQ(cat.Exchange(big, SubprocessOptions{}).line, big);
  const LineExchange two = cat.Exchange("a\nb\n", SubprocessOptions{});
  EXPECT_EQ(two.line, "a\n");
  EXPECT_EQ(two.after, "b\n");
  EXPECT_FALSE(cat.usable());

  // Output printed late, after the answer, is found before the next line.
  LineProcess late("read line; echo \"$line\"; sleep 0.2; echo late; cat");
  EXPECT_EQ(late.Exchange("x\n", SubprocessOptions{}).line, "x\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const LineExchange next = late.Exchange("y\n", SubprocessOptions{});
  EXPECT_EQ(next.before, "late\n");
  EXPECT_EQ(next.line, "y\n");
  EXPECT_FALSE(late.usable());
}

TEST(LineProcessTest, ReportsDeathTimeoutAndFlood) {
  LineProcess dies("read line; echo oops >&2; exit 7");
  const LineExchange death = dies.Exchange("x\n", SubprocessOptions{});
  EXPECT_EQ(death.kind, LineExchange::Kind::kClosed);
  EXPECT_EQ(death.exit, ExitKind::kExited);
  EXPECT_EQ(death.exit_status, 7);
  EXPECT_EQ(death.stderr_tail, "oops\n");
  EXPECT_FALSE(dies.usable());

  LineProcess killed("read line; kill -9 $$");
  const LineExchange signal = killed.Exchange("x\n", SubprocessOptions{});
  EXPECT_EQ(signal.kind, LineExchange::Kind::kClosed);
  EXPECT_EQ(signal.exit, ExitKind::kSignaled);
  EXPECT_EQ(signal.signal, 9);

  // A silent command's group, its children included, is killed.
  const auto start = std::chrono::steady_clock::now();
  LineProcess silent("sleep 100 & cat > /dev/null");
  const LineExchange timeout = silent.Exchange(
      "x\n", SubprocessOptions{.timeout = std::chrono::milliseconds(200)});
  EXPECT_EQ(timeout.kind, LineExchange::Kind::kTimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));

  LineProcess flood("yes | tr -d '\\n'");
  const LineExchange flooded =
      flood.Exchange("x\n", SubprocessOptions{.max_output_bytes = 1 << 16});
  EXPECT_EQ(flooded.kind, LineExchange::Kind::kOutputLimit);
  EXPECT_FALSE(flood.usable());
}

// --- Answers without kvprefix's node IDs (--compare lengths) ---------------

TEST(VerifyCompareTest, OwnNodeIdsFailByDefaultAndPassWithLengths) {
  const CliRun wrong = ExpectCommandCaught(
      Script("own_node_ids.py"), TempPath("own-ids.json"), "wrong-answer", "");
  EXPECT_THAT(wrong.output, HasSubstr("cache_node 1001"));
  const CliRun process = RunVerify("--cmd " + Quote(Script("own_node_ids.py")) +
                                   " --compare lengths --runs 300 --seed 1");
  EXPECT_EQ(process.exit_status, 0) << process.output;
  EXPECT_THAT(process.output, HasSubstr("OK: 300 inputs agree"));
  const CliRun lines =
      RunVerify("--cmd " + Quote(LinesScript("own_node_ids.py")) +
                " --protocol lines --compare lengths --runs 300 --seed 1");
  EXPECT_EQ(lines.exit_status, 0) << lines.output;
  EXPECT_THAT(lines.output, HasSubstr("OK: 300 inputs agree"));
}

TEST(VerifyCompareTest, WrongLengthFailsWithLengthsWithoutNodeIds) {
  const CliRun run = ExpectCommandCaught(Script("off_by_one.py"),
                                         TempPath("off-by-one-lengths.json"),
                                         "wrong-answer", "--compare lengths");
  EXPECT_THAT(run.output,
              HasSubstr("expected matched_length 0, uncached_suffix [0]\n"
                        "  actual   matched_length 1, uncached_suffix []\n"));
  EXPECT_THAT(run.output, HasSubstr("--compare lengths --cases"));
}

TEST(OutputCheckTest, LengthsTakeAnyCacheNodeOrNone) {
  const SequenceList requests = {{1, 2, 9}, {5}};
  const std::vector<Match> expected = {{2, 2}, {0, 0}};
  const std::string omitted =
      "{\"matches\":[{\"matched_length\":2,\"uncached_suffix\":[9]},"
      "{\"matched_length\":0,\"uncached_suffix\":[5]}]}\n";
  const std::string any =
      "{\"matches\":[{\"matched_length\":2,\"cache_node\":\"n-17\","
      "\"uncached_suffix\":[9]},{\"matched_length\":0,\"cache_node\":null,"
      "\"uncached_suffix\":[5]}]}\n";
  const std::string wrong_id =
      "{\"matches\":[{\"matched_length\":2,\"cache_node\":7,"
      "\"uncached_suffix\":[9]},{\"matched_length\":0,\"cache_node\":0,"
      "\"uncached_suffix\":[5]}]}\n";
  for (const std::string& text : {omitted, any, wrong_id}) {
    EXPECT_FALSE(CheckPrintedMatches(text, requests, expected, true,
                                     checking::Comparison::kLengths))
        << text;
    EXPECT_TRUE(CheckPrintedMatches(text, requests, expected, true)) << text;
  }
  EXPECT_EQ(CheckPrintedMatches(omitted, requests, expected, true)->kind,
            FailureKind::kWrongShape);
  EXPECT_EQ(CheckPrintedMatches(wrong_id, requests, expected, true)->kind,
            FailureKind::kWrongAnswer);
  // The layout is still checked: the cache_node as printed, in its place.
  const std::string spaced =
      "{\"matches\":[{\"matched_length\":2,\"cache_node\": \"n-17\","
      "\"uncached_suffix\":[9]},{\"matched_length\":0,"
      "\"uncached_suffix\":[5]}]}\n";
  EXPECT_EQ(CheckPrintedMatches(spaced, requests, expected, true,
                                checking::Comparison::kLengths)
                ->kind,
            FailureKind::kFormat);
  // A wrong length fails, shown without node IDs.
  const std::string wrong_length =
      "{\"matches\":[{\"matched_length\":1,\"cache_node\":2,"
      "\"uncached_suffix\":[2,9]},{\"matched_length\":0,"
      "\"uncached_suffix\":[5]}]}\n";
  const auto failure = CheckPrintedMatches(
      wrong_length, requests, expected, true, checking::Comparison::kLengths);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, FailureKind::kWrongAnswer);
  EXPECT_THAT(failure->message,
              HasSubstr("expected matched_length 2, uncached_suffix [9]\n"
                        "  actual   matched_length 1, uncached_suffix [2,9]"));
  EXPECT_THAT(failure->message, ::testing::Not(HasSubstr("cache_node")));
  // matched_length and uncached_suffix stay required and typed.
  EXPECT_EQ(CheckPrintedMatches("{\"matches\":[{\"matched_length\":2},"
                                "{\"matched_length\":0}]}",
                                requests, expected, true,
                                checking::Comparison::kLengths)
                ->kind,
            FailureKind::kWrongShape);
}

TEST(VerifyCompareTest, EngineWithOwnNodeIdsPassesWithLengthsOnly) {
  const EngineFactory own = [](const CacheOptions& options) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(std::make_unique<test::OwnNodeIdsEngine>(options));
    return engines;
  };
  const Checker all = MakeEngineChecker(own);
  const Checker lengths =
      MakeEngineChecker(own, checking::Comparison::kLengths);
  const ReplayChecker replay_all = MakeReplayEngineChecker(own);
  const ReplayChecker replay_lengths =
      MakeReplayEngineChecker(own, checking::Comparison::kLengths);
  int evicting = 0;
  for (std::uint64_t run = 0; run < 200; ++run) {
    const int size = GeneratorSize(run, 200, 100);
    const BatchInput input = GeneratedInput(1, run, size).input;
    EXPECT_FALSE(lengths(input)) << run;
    const ReplayInput document = GeneratedReplayInput(1, run, size).input;
    EXPECT_FALSE(replay_lengths(document)) << run;
    if (!input.cached_sequences.empty()) {
      const std::optional<Failure> failure = all(input);
      ASSERT_TRUE(failure) << run;
      EXPECT_THAT(failure->message,
                  HasSubstr("actual (own-node-ids): insert returns node 1"));
    }
    if (!document.requests.empty()) {
      EXPECT_TRUE(replay_all(document)) << run;
    }
    evicting += document.options.bounded() ? 1 : 0;
  }
  EXPECT_GT(evicting, 50);
}

// A wrong length fails under both comparisons; the lengths report shows no
// node IDs.
TEST(VerifyCompareTest, MutantEnginesFailUnderBothComparisons) {
  int caught = 0;
  for (std::string_view name : test::IndexMutantNames()) {
    if (name == test::MutantName(test::MutantBug::kNone)) continue;
    const EngineFactory mutant = [name](const CacheOptions&) {
      std::vector<std::unique_ptr<PrefixIndex>> engines;
      engines.push_back(test::MakeMutant(name));
      return engines;
    };
    const Checker all = MakeEngineChecker(mutant);
    const Checker lengths =
        MakeEngineChecker(mutant, checking::Comparison::kLengths);
    std::optional<Failure> failure;
    for (std::uint64_t seed = 0; seed < 4000 && !failure; ++seed) {
      const BatchInput input =
          checking::RandomBatchInput(seed, static_cast<int>(seed % 101));
      failure = lengths(input);
      if (failure) {
        EXPECT_TRUE(all(input)) << name;
        EXPECT_THAT(failure->message, HasSubstr("(matched_length "));
        EXPECT_THAT(failure->message, ::testing::Not(HasSubstr("cache_node")))
            << name;
      }
    }
    // Some mutants get only node IDs wrong: those are no finding here.
    if (!failure) std::cout << name << ": right lengths throughout\n";
    caught += failure ? 1 : 0;
  }
  EXPECT_GT(caught, 0);
}

// --- Replay documents (--format requests, SPEC §8) --------------------------

// A --cmd value and flags checking tests/verify/<script> on replay documents.
std::string RequestsFlags(const std::string& script) {
  return "--cmd " + Quote(Script(script)) + " --format requests";
}

TEST(VerifyRequestsTest, CorrectPythonCachePassesGeneratedDocuments) {
  const CliRun run = RunVerify(RequestsFlags("replay_cache.py") +
                               " --runs 300 --seed 7 --max-size 60");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("generating replay documents with --seed 7"));
  EXPECT_THAT(run.output, HasSubstr("OK: 300 inputs agree"));
}

TEST(VerifyRequestsTest, CorrectPythonCachePassesCapacityCases) {
  const std::string dir = test::SharedCasesDir() + "/capacity";
  const CliRun run =
      RunVerify(RequestsFlags("replay_cache.py") + " --cases " + dir);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr(fmt::format("OK: {} inputs agree",
                                    test::LoadCapacityCases().size())));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("warning")));
}

// The documents verify generates exercise eviction: about three in four
// evict (a capacity below the requests' distinct prefixes; the rest check
// that a large capacity evicts nothing), every policy of kEvictionPolicies
// and page sizes 1 to 3 each come often. Runs 0-999 of seed 1: 760 evict,
// 355 lru, 323 fifo and 322 lfu, page sizes 495/258/247.
TEST(VerifyRequestsTest, GeneratedDocumentsEvictWithEveryPolicyAndPages) {
  constexpr int kRuns = 1000;
  constexpr int kPolicies = kEvictionPolicies.size();
  int evicting = 0;
  std::array<int, kEvictionPolicies.size()> policies{};
  std::array<int, 4> page_sizes{};
  for (int run = 0; run < kRuns; ++run) {
    const ReplayInput input =
        GeneratedReplayInput(1, run, GeneratorSize(run, UINT64_MAX, 100)).input;
    const std::uint64_t distinct =
        checking::DistinctPrefixes(input.requests, input.options.page_size);
    evicting += input.options.capacity < distinct ? 1 : 0;
    ++policies[EvictionPolicyIndex(input.options.policy)];
    ASSERT_GE(input.options.page_size, 1u);
    ASSERT_LE(input.options.page_size, 3u);
    ++page_sizes[input.options.page_size];
  }
  std::cout << "evicting " << evicting << ", page sizes " << page_sizes[1]
            << "/" << page_sizes[2] << "/" << page_sizes[3] << " of " << kRuns
            << "\n";
  EXPECT_GT(evicting, kRuns * 4 / 10);
  EXPECT_LT(evicting, kRuns * 9 / 10);
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    const int count = policies[EvictionPolicyIndex(entry.policy)];
    std::cout << entry.name << " " << count << "\n";
    EXPECT_GT(count, kRuns * 8 / 10 / kPolicies) << entry.name;
    EXPECT_LT(count, kRuns * 12 / 10 / kPolicies) << entry.name;
  }
  EXPECT_GT(page_sizes[1], kRuns * 4 / 10);
  EXPECT_GT(page_sizes[2], kRuns * 2 / 10);
  EXPECT_GT(page_sizes[3], kRuns * 2 / 10);
}

// Checks that the wrong cache `script` fails as wrong-answer on generated
// documents and is shrunk to a small document that still needs eviction,
// printed and saved with the reference's answer; the saved case, as it is,
// still fails for the bug, passes for replay_cache.py and is replayed by
// `kvprefix replay --format requests` (which rejected its "document"
// member). Returns the run.
CliRun ExpectReplayBugCaughtAndShrunk(const std::string& script) {
  const std::string out = TempPath(script + ".case.json");
  const CliRun run =
      RunVerify(RequestsFlags(script) + " --seed 1 --out " + out + " --jobs 2");
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("FAILED: wrong-answer on generated replay document"));
  EXPECT_THAT(run.output, HasSubstr("case: {\"document\":{\"requests\":"));
  EXPECT_THAT(run.output, HasSubstr("kvprefix: verify failed: wrong-answer"));
  std::cout << run.output;
  const ReplayCaseFile shrunk = ReadReplayCaseFile(out);
  const ReplayInput& input = shrunk.input;
  EXPECT_LE(input.requests.size(), 6u) << script;
  for (TokenSpan request : input.requests) EXPECT_LE(request.size(), 6u);
  // Every one of these bugs needs an eviction to show.
  EXPECT_LT(input.options.capacity,
            checking::DistinctPrefixes(input.requests, input.options.page_size))
      << script;
  EXPECT_EQ(shrunk.expected, ReferenceMatches(input));
  EXPECT_EQ(RunVerify(RequestsFlags(script) + " --cases " + out + " --out " +
                      out + ".again")
                .exit_status,
            1);
  EXPECT_EQ(RunVerify(RequestsFlags("replay_cache.py") + " --cases " + out)
                .exit_status,
            0);
  std::string expected;
  AppendMatchesJson(input.requests, shrunk.expected, expected);
  const std::string answer = out + ".answer";
  const CliRun replay =
      RunCli("replay " + out + " --format requests -o " + answer);
  EXPECT_EQ(replay.exit_status, 0) << replay.output;
  std::ifstream file(answer);
  std::stringstream printed;
  printed << file.rdbuf();
  EXPECT_EQ(printed.str(), expected) << script;
  return run;
}

// Also: the failure report shows the reference's cache at the wrong
// request, what it held and what the requests before it evicted. Seed 1's
// first failing document is an lfu one (runs 0-10 pass: the bug needs a hit
// before an eviction), shrunk to capacity 1. Worked by hand: [1] (node 1,
// count 1), [1] (a hit: count 2), then [0] (node 2, count 1: one too many,
// so the leaf of the smaller count, node 2, goes); the wrong cache left
// node 1 at count 1 and stamp 1, evicted it instead, so request 4 misses.
// And the case file is taken as it is from a folder and as a FILE too.
TEST(VerifyRequestsTest, NoTouchOnHitIsCaughtAndShrunk) {
  const CliRun run =
      ExpectReplayBugCaughtAndShrunk("replay_no_touch_on_hit.py");
  EXPECT_THAT(run.output,
              HasSubstr("request 3 of 4, tokens [1]:\n"
                        "  expected matched_length 1, cache_node 1, "
                        "uncached_suffix []\n"
                        "  actual   matched_length 0, cache_node 0, "
                        "uncached_suffix [1]\n"
                        "the reference's cache at request 3 (capacity 1, "
                        "lfu, page size 1):\n"
                        "  holds 1 nodes on 1 paths {[1] at node 1}\n"
                        "  request 2 [0] evicted {[0]}\n"));
  const std::string out = TempPath("replay_no_touch_on_hit.py.case.json");
  const std::string dir = TempPath("written-cases");
  fs::create_directories(dir);
  fs::copy_file(out, dir + "/case.json", fs::copy_options::overwrite_existing);
  for (const std::string& given : {"--cases " + dir, out}) {
    const CliRun again =
        RunVerify(RequestsFlags("replay_cache.py") + " " + given);
    EXPECT_EQ(again.exit_status, 0) << given << "\n" << again.output;
    EXPECT_THAT(again.output, HasSubstr("OK: 1 inputs agree")) << given;
  }
}

TEST(VerifyRequestsTest, EvictingANonLeafIsCaughtAndShrunk) {
  ExpectReplayBugCaughtAndShrunk("replay_evicts_non_leaf.py");
}

TEST(VerifyRequestsTest, EvictingTheHeadOfAChainIsCaughtAndShrunk) {
  ExpectReplayBugCaughtAndShrunk("replay_evicts_chain_head.py");
}

TEST(VerifyRequestsTest, KeepingCPlusOneNodesIsCaughtAndShrunk) {
  ExpectReplayBugCaughtAndShrunk("replay_keeps_c_plus_one.py");
}

TEST(VerifyRequestsTest, ReusingAnIdIsCaughtAndShrunk) {
  ExpectReplayBugCaughtAndShrunk("replay_reuses_id.py");
}

// Big caches are shown bounded: 8 paths, 4 evicting requests, 16 pages.
TEST(CacheStateTest, BigCachesAreShownBounded) {
  // Requests [0] ... [19] at capacity 10: request i creates node i + 1, and
  // from request 10 on each evicts the oldest, [i - 10].
  ReplayInput input;
  for (Token token = 0; token < 21; ++token)
    input.requests.Append(std::vector<Token>{token});
  input.options.capacity = 10;
  EXPECT_EQ(DescribeReferenceCache(input, 20),
            "the reference's cache at request 20 (capacity 10, lru, page "
            "size 1):\n"
            "  holds 10 nodes on 10 paths {[10] at node 11,[11] at node 12,"
            "[12] at node 13,[13] at node 14,[14] at node 15,[15] at node 16,"
            "[16] at node 17,[17] at node 18,... 10 paths in all}\n"
            "  request 19 [19] evicted {[9]}\n"
            "  request 18 [18] evicted {[8]}\n"
            "  request 17 [17] evicted {[7]}\n"
            "  request 16 [16] evicted {[6]}\n"
            "  ... 10 nodes evicted by requests 0 to 19 in all\n");
  // Capacity 0: the 20 nodes of [0, ..., 19] go at once, deepest first.
  ReplayInput none;
  std::vector<Token> tokens(20);
  for (Token token = 0; token < 20; ++token) tokens[token] = token;
  none.requests.Append(tokens);
  none.requests.Append(tokens);
  none.options.capacity = 0;
  EXPECT_EQ(DescribeReferenceCache(none, 1),
            "the reference's cache at request 1 (capacity 0, lru, page size "
            "1):\n"
            "  holds 0 nodes on 0 paths {}\n"
            "  request 0 [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19] "
            "evicted {[19],[18],[17],[16],[15],[14],[13],[12],[11],[10],[9],"
            "[8],[7],[6],[5],[4],... 20 pages in all}\n");
  EXPECT_EQ(DescribeReferenceCache(none, 0),
            "the reference's cache at request 0 (capacity 0, lru, page size "
            "1):\n"
            "  holds 0 nodes on 0 paths {}\n"
            "  (nothing evicted before it)\n");
}

// A vllm document's cache was described with the block pool's matches,
// which never cover a request's last token, so a pool holding the chain
// [0] whole showed "holds 1 nodes on 0 paths {}".
TEST(CacheStateTest, VllmChainsAreShownWhole) {
  ReplayInput input{.requests = SequenceList({{0}, {0}}),
                    .options = {.capacity = 1,
                                .model = CacheModel::kVllm,
                                .match_limit = MatchLimit::kAllButLast}};
  EXPECT_EQ(DescribeReferenceCache(input, 1),
            "the reference's cache at request 1 (capacity 1, lru, page size "
            "1, model vllm, match limit all-but-last):\n"
            "  holds 1 nodes on 1 paths {[0] at node 1}\n"
            "  (nothing evicted before it)\n");
}

// `kvprefix replay --format requests` reads a replay case file as strictly
// as verify does, naming the file once and the place in it.
TEST(VerifyRequestsTest, ReplayReadsCaseFilesStrictly) {
  // A bad case file is named once, with the place in it.
  const std::string bad = TempPath("bad-replay-case.json");
  WriteFileAtomically(bad,
                      "{\"document\":{\"requests\":[[1]]},\"expected\":"
                      "{\"matches\":[]}}");
  const CliRun run = RunCli("replay " + bad + " --format requests");
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("kvprefix: " + bad +
                        ": $.expected.matches: expected 1 matches"));
}

// A replay document (or replay case file) checked without --format requests
// says why it is rejected and what to add.
TEST(VerifyCliTest, ReplayDocumentWithoutFormatRequestsGetsAHint) {
  const std::string bounded = TempPath("hint-bounded.json");
  WriteFileAtomically(bounded, "{\"requests\":[[1,2]],\"capacity\":3}");
  const std::string plain = TempPath("hint-plain.json");
  WriteFileAtomically(plain, "{\"requests\":[[1,2]]}");
  const std::string hint =
      "(a replay document, SPEC §8? verify reads those with --format "
      "requests)";
  CliRun run = RunVerify("--engines all " + bounded);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("kvprefix: " + bounded +
                        ": $.capacity: expected "
                        "\"cached_sequences\", \"requests\", "
                        "\"cached_namespaces\" or \"namespaces\", found an "
                        "unknown member \"capacity\" " +
                        hint));
  run = RunVerify("--engines all " + plain);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("kvprefix: " + plain +
                                    ": $: expected member "
                                    "\"cached_sequences\", found an object "
                                    "without it " +
                                    hint));
  const std::string replay_case = TempPath("hint-case.json");
  WriteFileAtomically(replay_case,
                      "{\"document\":{\"requests\":[[1]]},\"expected\":{"
                      "\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
                      "\"uncached_suffix\":[1]}]}}");
  run = RunVerify("--engines all --cases " + replay_case);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr(": $.document: "));
  EXPECT_THAT(run.output, HasSubstr("(a replay case file, SPEC §8? verify "
                                    "reads those with --format requests)"));
  // The same documents pass with --format requests; other errors get no hint.
  EXPECT_EQ(
      RunVerify("--engines all --format requests " + bounded + " " + plain)
          .exit_status,
      0);
  const std::string batch = TempPath("hint-batch.json");
  WriteFileAtomically(batch, "{\"cached_sequences\":[[1.5]],\"requests\":[]}");
  run = RunVerify("--engines all " + batch);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("--format requests")));
}

TEST(VerifyRequestsTest, BatchImplementationIsWrongShapeOnAReplayDocument) {
  // prefix_cache.py reads "cached_sequences", which a replay document lacks.
  const CliRun run = RunVerify(RequestsFlags("prefix_cache.py") +
                               " --runs 1 --out " + TempPath("batch.json"));
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("FAILED: crash"));
  EXPECT_THAT(run.output, HasSubstr("KeyError: 'cached_sequences'"));
}

TEST(VerifyRequestsTest, EnginesAgreeOnDocumentsAndFiles) {
  const std::string file = TempPath("replay-document.json");
  WriteFileAtomically(file,
                      "{\"requests\":[[1,2,3],[1,2,4],[5],[1,2,3]],"
                      "\"capacity\":3}");
  CliRun run = RunVerify("--engines all --format requests " + file);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 1 inputs agree"));
  run = RunVerify("--engines all --format requests --runs 500 --seed 3");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 500 inputs agree"));
}

TEST(VerifyRequestsTest, BadDocumentAndTraceAreUsageErrors) {
  const std::string file = TempPath("bad-document.json");
  WriteFileAtomically(file, "{\"requests\":[[1]],\"policy\":\"mru\"}");
  CliRun run = RunVerify("--engines all --format requests " + file);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr(file + ": $.policy: expected \"lru\", "
                                           "\"fifo\" or \"lfu\", found "
                                           "\"mru\""));
  run = RunVerify("--engines all --format requests --trace " KVPREFIX_SOURCE_DIR
                  "/data/mooncake/conversation_trace.jsonl");
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--trace applies to --format batch only"));
  run = RunVerify("--engines all --format lru --runs 1");
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--format"));
}

TEST(VerifyCliTest, CrashOnEmptyRequestIsCrashShrunkToIt) {
  const CaseFile shrunk = ExpectCaught("crash_on_empty.py", "crash");
  ASSERT_EQ(shrunk.input.requests.size(), 1u);
  EXPECT_TRUE(shrunk.input.requests[0].empty());
  EXPECT_EQ(shrunk.input.cached_sequences.size(), 0u);
}

TEST(VerifyCliTest, CrashReportQuotesStandardError) {
  const CliRun run = RunVerify("--cmd " + Quote(Script("crash_on_empty.py")) +
                               " --out " + TempPath("crash.json"));
  EXPECT_THAT(run.output, HasSubstr("exit status 1"));
  EXPECT_THAT(run.output, HasSubstr("IndexError"));
}

// The command's standard error and the command itself were printed raw:
// an escape sequence in either reached the terminal. Each quoted stderr
// line has its control characters escaped, and the replay line quotes a
// command holding one as $'...', which bash reads back as the command.
TEST(VerifyCliTest, ReportEscapesControlCharacters) {
  const std::string command =
      "printf \"\\033[31mRED\\nnext\\n\" >&2; exit 1 #\x1b[2J";
  const CliRun run = ExpectCommandCaught(command, TempPath("escaped\x1b.json"),
                                         "crash", "--runs 1");
  EXPECT_EQ(run.output.find('\x1b'), std::string::npos) << run.output;
  EXPECT_THAT(run.output, HasSubstr("\n  | \\u001b[31mRED\n  | next\n"));
  const std::string quoted =
      R"($'printf "\\033[31mRED\\nnext\\n" >&2; exit 1 #\x1b[2J')";
  EXPECT_THAT(run.output, HasSubstr("replay: kvprefix verify --cmd " + quoted +
                                    " --cases "));
  const std::string script = TempPath("quoted-back.sh");
  const std::string back = TempPath("quoted-back.txt");
  std::ofstream(script) << "printf %s " << quoted << "\n";
  ASSERT_EQ(std::system(("bash " + script + " > " + back).c_str()), 0);
  std::ifstream file(back, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), {}), command);
}

TEST(VerifyCliTest, SignalIsCrash) {
  const CliRun run = RunVerify("--cmd " + Quote(Script("segfault.py")) +
                               " --out " + TempPath("segfault.json"));
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_THAT(run.output, HasSubstr("FAILED: crash"));
  EXPECT_THAT(run.output, HasSubstr("signal 11"));
}

TEST(VerifyCliTest, GarbageIsNotJson) {
  ExpectCaught("garbage.py", "not-json");
}

TEST(VerifyCliTest, WrongTypeIsWrongShapeWithLocation) {
  const CliRun run = RunVerify("--cmd " + Quote(Script("wrong_shape.py")) +
                               " --out " + TempPath("shape.json"));
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_THAT(run.output, HasSubstr("FAILED: wrong-shape"));
  EXPECT_THAT(run.output,
              HasSubstr("$.matches[0].cache_node: expected an integer from 0 "
                        "to 18446744073709551615, found \"node 0\""));
}

TEST(VerifyCliTest, SleepingForeverIsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  ExpectCaught("sleeps_forever.py", "timeout", "--timeout 0.5");
  // Not shrunk (each try would cost the timeout): one timeout only.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(VerifyCliTest, EndlessOutputIsOutputLimit) {
  ExpectCaught("floods_output.py", "output-limit");
}

TEST(VerifyCliTest, SpacedJsonIsFormatUnlessFormatCheckIsOff) {
  ExpectCaught("spaced_output.py", "format");
  const CliRun run = RunVerify("--cmd " + Quote(Script("spaced_output.py")) +
                               " --runs 20 --no-format-check");
  EXPECT_EQ(run.exit_status, 0) << run.output;
}

TEST(VerifyCliTest, ProgramThatReadsNoInputDoesNotKillVerify) {
  // 8 MB of input to a program that exits at once: writes fail with EPIPE,
  // which must not kill kvprefix.
  BatchInput input;
  for (int i = 0; i < 200; ++i) {
    input.cached_sequences.Append(std::vector<Token>(4000, i));
  }
  input.requests.Append(std::vector<Token>{1});
  std::string json;
  AppendBatchInputJson(input, json);
  const std::string file = TempPath("big-input.json");
  WriteFileAtomically(file, json);
  const CliRun run =
      RunVerify("--cmd true " + file + " --out " + TempPath("true.json"));
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("FAILED: not-json"));
}

TEST(VerifyCliTest, EnginesAllAgreeOnAFileAndGeneratedInputs) {
  const std::string file = TempPath("seed-input.json");
  WriteFileAtomically(file,
                      "{\"cached_sequences\":[[1,2],[1,2,3],[4]],"
                      "\"requests\":[[1,2,9],[4,5],[5]]}");
  CliRun run = RunVerify("--engines all " + file);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 1 inputs agree"));
  run = RunVerify("--engines all --runs 300 --seed 3");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 300 inputs agree"));
}

// After "OK", what the inputs exercised. Worked by hand: cached [1,2,3],
// [1,2,4], [5,6]; requests [1,2,3] (full hit at a leaf), [1] (full hit at
// node 1, whose one child makes it the inside of a radix edge), [7] (empty),
// [5,6,7] (at the leaf [5,6]), [1,2] (full hit at a branch). Replay: the
// document of SPEC §8's example (matches: empty, 2 tokens at node 2 with the
// one child [3], empty, 2 tokens at the leaf node 2; 3 nodes evicted) and an
// unbounded fifo one of page size 2 (empty, then a full hit at a leaf).
TEST(VerifyCliTest, OkRunPrintsWhatTheInputsExercised) {
  const std::string file = TempPath("exercised.json");
  WriteFileAtomically(file,
                      "{\"cached_sequences\":[[1,2,3],[1,2,4],[5,6]],"
                      "\"requests\":[[1,2,3],[1],[7],[5,6,7],[1,2]]}");
  CliRun run = RunVerify("--engines all " + file);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output,
              ::testing::MatchesRegex(
                  "OK: 1 inputs agree with the reference \\([0-9.]+ s\\)\n"
                  "exercised: 5 requests: 20.0% empty matches, 60.0% full "
                  "hits, 20.0% end inside an edge\n"));
  const std::string bounded = TempPath("exercised-bounded.json");
  WriteFileAtomically(bounded,
                      "{\"requests\":[[1,2,3],[1,2,4],[5],[1,2,3]],"
                      "\"capacity\":3}");
  const std::string paged = TempPath("exercised-paged.json");
  WriteFileAtomically(paged,
                      "{\"requests\":[[1,2],[1,2]],\"policy\":\"fifo\","
                      "\"page_size\":2}");
  run = RunVerify("--engines all --format requests " + bounded + " " + paged);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 2 inputs agree with the reference"));
  EXPECT_THAT(run.output,
              HasSubstr(" s)\nexercised: 6 requests: 50.0% empty matches, "
                        "16.7% full hits, 16.7% end inside an edge\n"
                        "exercised: 2 replay documents: 50.0% evict (3 "
                        "nodes), policy lru 50.0% fifo 50.0% lfu 0.0%, page "
                        "size 1 50.0% 2 50.0%\n"));
}

// The statistics of a vllm or sglang document were the spec trie's: its
// matches past the match limit and its evictions, and "inside an edge" of
// trie nodes the model has not. Now the model's reference answers, under
// the match limit, and edges are counted for spec requests only.
TEST(InputStatisticsTest, ModelDocumentsAreCountedByTheirModel) {
  const CacheOptions vllm{.model = CacheModel::kVllm,
                          .match_limit = MatchLimit::kAllButLast};
  InputStatistics statistics;
  // Unbounded: [1,2,3] hits blocks 1 and 2, all the limit lets it (2 of 3
  // tokens): a full hit. The trie matched 2 of 3: none.
  statistics.Add(ReplayInput{SequenceList({{1, 2}, {1, 2, 3}}), vllm});
  // Capacity 1: [1,2] needs 2 blocks and is refused, evicting nothing; the
  // trie of capacity 1 evicted [1,2]'s leaf.
  CacheOptions refusing = vllm;
  refusing.capacity = 1;
  statistics.Add(ReplayInput{SequenceList({{1, 2}}), refusing});
  EXPECT_EQ(statistics.Format(),
            "exercised: 3 requests: 66.7% empty matches, 33.3% full hits\n"
            "exercised: 2 replay documents: 0.0% evict (0 nodes), policy lru "
            "100.0% fifo 0.0% lfu 0.0%, page size 1 100.0%\n");
  // Model spec under all-but-last: [1,2,3]'s step 1 covers [1,2], all it
  // may: a full hit, ending at node 2, a leaf then.
  InputStatistics spec;
  spec.Add(ReplayInput{SequenceList({{1, 2}, {1, 2, 3}}),
                       {.match_limit = MatchLimit::kAllButLast}});
  statistics.Merge(spec);
  EXPECT_EQ(statistics.Format().substr(0, statistics.Format().find('\n') + 1),
            "exercised: 5 requests: 60.0% empty matches, 40.0% full hits, "
            "0.0% end inside an edge (of the 2 of model spec)\n");
}

// Every policy of kEvictionPolicies gets its share of the documents, a
// policy no document used too (0.0%), and Merge adds them up: one lru
// document here and two fifo ones there, each of two requests on an
// unbounded cache of page size 1 (so nothing evicts).
TEST(InputStatisticsTest, CountsEveryPolicyOfTheList) {
  InputStatistics lru, fifo, merged;
  lru.Add(ReplayInput{{{1}, {1}}, {}});
  ASSERT_EQ(lru.Format().substr(lru.Format().find("policy")),
            "policy lru 100.0% fifo 0.0% lfu 0.0%, page size 1 100.0%\n");
  for (int i = 0; i < 2; ++i) {
    fifo.Add(ReplayInput{{{1}, {2}}, {.policy = EvictionPolicy::kFifo}});
  }
  merged.Merge(lru);
  merged.Merge(fifo);
  EXPECT_EQ(merged.policy_documents[EvictionPolicyIndex(EvictionPolicy::kLru)],
            1u);
  EXPECT_EQ(merged.policy_documents[EvictionPolicyIndex(EvictionPolicy::kFifo)],
            2u);
  EXPECT_EQ(merged.Format(),
            "exercised: 6 requests: 83.3% empty matches, 16.7% full hits, "
            "0.0% end inside an edge\n"
            "exercised: 3 replay documents: 0.0% evict (0 nodes), policy lru "
            "33.3% fifo 66.7% lfu 0.0%, page size 1 100.0%\n");
}

// Sizes step from 0 to --max-size over the first runs, then cycle; they
// used to be the run index, so --runs 10 never went past size 9.
TEST(InputsTest, GeneratorSizesSpanZeroToMaxSize) {
  std::vector<int> sizes;
  for (std::uint64_t run = 0; run < 12; ++run) {
    sizes.push_back(GeneratorSize(run, 10, 100));
  }
  EXPECT_EQ(sizes,
            (std::vector<int>{0, 11, 22, 33, 44, 55, 66, 77, 88, 100, 0, 11}));
  // Enough runs (or a time budget, no count): every size in turn.
  EXPECT_EQ(GeneratorSize(0, UINT64_MAX, 100), 0);
  EXPECT_EQ(GeneratorSize(57, UINT64_MAX, 100), 57);
  EXPECT_EQ(GeneratorSize(100, 1000, 100), 100);
  EXPECT_EQ(GeneratorSize(101, 1000, 100), 0);
  EXPECT_EQ(GeneratorSize(0, 1, 100), 100);  // one input: the largest
  EXPECT_EQ(GeneratorSize(1, 2, 10000), 10000);
  EXPECT_EQ(GeneratorSize(5, 10, 0), 0);
  EXPECT_EQ(GeneratedInput(1, 9, GeneratorSize(9, 10, 100)).name,
            "generated input 9 (--seed 1, size 100)");
}

// verify named it "generated input 47 (...)", kvprefix.testing "generated
// replay document 47 (...)"; verify's own progress line says "generating
// replay documents".
TEST(InputsTest, GeneratedReplayDocumentsAreNamedAsInPython) {
  EXPECT_EQ(GeneratedReplayInput(1, 47, 47).name,
            "generated replay document 47 (--seed 1, size 47)");
}

// full_node_table.py drops inserts past 500 nodes; of the first 10 inputs
// of seed 1, only one of size 88 has that many (1,803 nodes; at sizes 0 to
// 9 the most was 443), so only sizes up to --max-size catch it.
TEST(VerifyCliTest, FewRunsReachMaxSize) {
  const CliRun run =
      // Not shrunk: each check of a big input starts Python again.
      RunVerify("--cmd " + Quote(Script("full_node_table.py")) +
                " --runs 10 --seed 1 --shrink-attempts 0 --out " +
                TempPath("full-table.json"));
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("FAILED: wrong-answer on generated input 8 (--seed 1, "
                        "size 88)"));
}

// The line counts verify/README.md gives for the Python implementations it
// shows ("A 69-line Python implementation ... cat tests/verify/X.py") are
// those of the files.
TEST(VerifyDocsTest, ReadmeLineCountsAreTheScripts) {
  std::ifstream readme(KVPREFIX_SOURCE_DIR "/verify/README.md");
  std::stringstream text;
  text << readme.rdbuf();
  const std::string contents = text.str();
  // "N-line" on the comment line above "cat tests/verify/X.py", or after
  // it on the same line.
  const std::regex claim(
      "(\\d+)-line[^\\n]*\\n[^\\n]*cat (tests/verify/[a-z_]+\\.py)|"
      "cat (tests/verify/[a-z_]+\\.py)[^\\n]*?(\\d+)-line");
  int claims = 0;
  for (std::sregex_iterator it(contents.begin(), contents.end(), claim), end;
       it != end; ++it) {
    const bool above = (*it)[1].matched;
    const std::string path = (*it)[above ? 2 : 3].str();
    std::ifstream script(KVPREFIX_SOURCE_DIR "/" + path);
    ASSERT_TRUE(script) << path;
    int lines = 0;
    for (std::string line; std::getline(script, line);) ++lines;
    EXPECT_EQ((*it)[above ? 1 : 4].str(), std::to_string(lines)) << path;
    ++claims;
  }
  EXPECT_EQ(claims, 2);  // prefix_cache.py and replay_cache.py
}

TEST(VerifyCliTest, BadUsageAndBadInputExitWithStatus2) {
  const std::string file = TempPath("bad-input.json");
  WriteFileAtomically(file, "{\"cached_sequences\":[[1.5]],\"requests\":[]}");
  EXPECT_EQ(RunVerify("--engines all " + file).exit_status, 2);
  EXPECT_EQ(RunVerify("--engines nosuchengine --runs 1").exit_status, 2);
  EXPECT_EQ(RunVerify("--runs 1").exit_status,
            2);  // neither --cmd nor --engines
  EXPECT_EQ(RunVerify("--cmd true --engines all --runs 1").exit_status, 2);
}

TEST(VerifyCliTest, BadCaseFileIsExit2NamingThePathAsGiven) {
  const std::string file = TempPath("huge-token-case.json");
  WriteFileAtomically(file,
                      "{\"cached_sequences\":[],\"requests\":[[4294967297]],"
                      "\"expected\":{\"matches\":[{\"matched_length\":0,"
                      "\"cache_node\":0,\"uncached_suffix\":[1]}]}}");
  CliRun run = RunVerify("--engines all --cases " + file);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("kvprefix: " + file + ": $.requests[0][0]: expected"));
  run = RunVerify("--engines all --cases /dev/null");
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("kvprefix: /dev/null: $: expected a JSON object, "
                        "found end of input"));
}

TEST(VerifyCliTest, EmptyCasesFolderIsExit2NotGeneratedInputs) {
  const std::string dir = TempPath("no-cases");
  fs::create_directories(dir);
  const CliRun run = RunVerify("--engines all --cases " + dir);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("no case files (*.json) in " + dir));
}

TEST(VerifyCliTest, BadTraceErrorNamesTheFile) {
  const std::string trace = TempPath("bad-trace.jsonl");
  WriteFileAtomically(trace, "{\"input_length\":512,\"hash_ids\":[\"x\"]}\n");
  const CliRun run = RunVerify("--engines all --trace " + trace);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("kvprefix: " + trace + ": line 1: $.hash_ids[0]"));
}

// Former bugs: NaN, infinity and out-of-range values of the CLI's
// floating-point options, and of --trace-window, are usage errors (exit
// status 2) instead of being cast into nonsense, and no run reports success
// without checking anything.
// A block-mode Mooncake trace of `requests` lines, request i being the
// blocks [1, i]: neighbours share their first block.
std::string WriteTrace(std::size_t requests) {
  const std::string path = TempPath(fmt::format("trace-{}.jsonl", requests));
  std::string text;
  for (std::size_t i = 0; i < requests; ++i) {
    text += fmt::format(
        "{{\"timestamp\":{},\"input_length\":1024,\"output_length\":1,"
        "\"hash_ids\":[1,{}]}}\n",
        i, i + 2);
  }
  WriteFileAtomically(path, text);
  return path;
}

void ExpectUsageError(const std::string& arguments,
                      const std::string& message) {
  const CliRun run = RunCli(arguments);
  EXPECT_EQ(run.exit_status, 2) << arguments << "\n" << run.output;
  EXPECT_THAT(run.output, HasSubstr(message)) << arguments;
}

TEST(CliOptionsTest, CachedFractionMustBeAFiniteNumberFrom0To1) {
  const std::string trace = WriteTrace(4);
  for (const char* fraction :
       {"nan", "-nan", "NaN", "inf", "-inf", "-0.5", "1.5", "1e400", "x"}) {
    ExpectUsageError(fmt::format("convert mooncake -f {} {} -o {}", fraction,
                                 trace, TempPath("never.json")),
                     "--cached-fraction: expected a decimal from 0 to 1");
  }
  const std::string output = TempPath("converted.json");
  const CliRun run =
      RunCli(fmt::format("convert mooncake -f 0.5 {} -o {}", trace, output));
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const BatchInput input = ReadBatchInputFile(output);
  EXPECT_EQ(input.cached_sequences.size(), 2u);
  EXPECT_EQ(input.requests.size(), 2u);
}

TEST(CliOptionsTest, VerifyDurationsMustBeFiniteAndInRange) {
  for (const char* value : {"nan", "inf", "-1", "1e10", "1e300"}) {
    for (const char* option : {"--timeout", "--time", "--shrink-time"}) {
      ExpectUsageError(
          fmt::format("verify --engines all --runs 1 {} {}", option, value),
          fmt::format("{}: expected a number from", option));
    }
  }
  // Below a millisecond a timeout used to become 0 ms: every run timed out.
  ExpectUsageError("verify --cmd cat --runs 1 --timeout 0.0001",
                   "--timeout: expected a number from 0.001 to 1000000");
  ExpectUsageError("verify --cmd cat --runs 1 --timeout 0",
                   "--timeout: expected a number from 0.001");
}

TEST(CliOptionsTest, VerifyNeverReportsSuccessWithoutChecking) {
  // A budget spent before the first input still checks one.
  CliRun run = RunCli("verify --engines all --runs 5 --seed 1 --time 1e-6");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("inputs agree"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("OK: 0 inputs")));
  ExpectUsageError("verify --engines all --runs 0", "nothing to check");
}

TEST(CliOptionsTest, TraceWindowAtLeastTheTraceIsOneInput) {
  const std::string trace = WriteTrace(300);
  for (const char* window : {"300", "1000", "18446744073709551615"}) {
    const CliRun run = RunCli(fmt::format(
        "verify --engines all --trace {} --trace-window {}", trace, window));
    EXPECT_EQ(run.exit_status, 0) << run.output;
    EXPECT_THAT(run.output, HasSubstr("OK: 1 inputs agree")) << window;
  }
  const CliRun run = RunCli(
      fmt::format("verify --engines all --trace {} --trace-window 100", trace));
  EXPECT_THAT(run.output, HasSubstr("OK: 3 inputs agree"));
  for (const char* window : {"0", "1"}) {
    const CliRun bad = RunCli(fmt::format(
        "verify --engines all --trace {} --trace-window {}", trace, window));
    EXPECT_EQ(bad.exit_status, 2) << window << "\n" << bad.output;
    EXPECT_THAT(bad.output, HasSubstr("--trace-window")) << window;
  }
}

TEST(SubprocessTest, LargeInputAndOutputDoNotDeadlock) {
  const std::string input(32 << 20, 'x');  // far beyond a 64 KiB pipe buffer
  const SubprocessResult result =
      RunSubprocess("cat; echo done >&2", input, SubprocessOptions{});
  EXPECT_EQ(result.kind, ExitKind::kExited);
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_EQ(result.stdout_data.size(), input.size());
  EXPECT_EQ(result.stderr_data, "done\n");
}

// A command that closes its input while input is left: the write fails
// with EPIPE, and its SIGPIPE neither kills the caller (SIGPIPE at its
// default action, which is to die) nor stays pending, and the disposition is
// left as it was (RunSubprocess used to need SIGPIPE ignored process-wide).
TEST(SubprocessTest, CommandThatStopsReadingLeavesSigpipeAlone) {
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  struct sigaction previous = {};
  ASSERT_EQ(::sigaction(SIGPIPE, &default_action, &previous), 0);
  const std::string input(8 << 20, 'x');  // far beyond a pipe buffer
  const SubprocessResult result =
      RunSubprocess("exec 0<&-; sleep 0.2; exit 5", input, {});
  struct sigaction after = {};
  ::sigaction(SIGPIPE, &previous, &after);
  EXPECT_EQ(result.kind, ExitKind::kExited);
  EXPECT_EQ(result.exit_status, 5);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

// verify::Run changes no signal disposition (it used to ignore SIGPIPE for
// the rest of the process).
TEST(VerifyRunTest, LeavesSigpipeDispositionAlone) {
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  struct sigaction previous = {};
  ASSERT_EQ(::sigaction(SIGPIPE, &default_action, &previous), 0);
  RunOptions options;
  options.engines = {"radix"};
  options.runs = 3;
  options.seed = 1;
  options.jobs = 1;
  options.out = TempPath("run-failure.json");
  verify::Run(options);
  struct sigaction after = {};
  ::sigaction(SIGPIPE, &previous, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
}

TEST(SubprocessTest, TimeoutKillsTheWholeProcessGroup) {
  // The shell's child keeps the pipe open; only a group kill ends it.
  const SubprocessResult result = RunSubprocess(
      "sleep 100 & sleep 100", "",
      SubprocessOptions{.timeout = std::chrono::milliseconds(200)});
  EXPECT_EQ(result.kind, ExitKind::kTimedOut);
  EXPECT_LT(result.elapsed, std::chrono::seconds(5));
}

// Former bug: a background child holding stdout open made a finished,
// correct answer a timeout, and outlived the run.
TEST(SubprocessTest, BackgroundChildHoldingThePipeIsNotATimeout) {
  const SubprocessResult result =
      RunSubprocess("sleep 30 & echo $!; echo answer; exit 4", "",
                    SubprocessOptions{.timeout = std::chrono::seconds(20)});
  EXPECT_EQ(result.kind, ExitKind::kExited);
  EXPECT_EQ(result.exit_status, 4);
  EXPECT_LT(result.elapsed, std::chrono::seconds(5));
  std::istringstream lines(result.stdout_data);
  std::string background_pid;
  std::string answer;
  std::getline(lines, background_pid);
  std::getline(lines, answer);
  EXPECT_EQ(answer, "answer");
  // The background sleep was killed: gone, or a zombie awaiting its reaper.
  const fs::path stat = "/proc/" + background_pid + "/stat";
  std::string state;
  for (int i = 0; i < 200 && fs::exists(stat); ++i) {
    std::ifstream file(stat);
    std::getline(file, state);
    if (state.find(") Z") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(!fs::exists(stat) || state.find(") Z") != std::string::npos)
      << state;
}

TEST(VerifyCliTest, BackgroundChildOfTheCommandIsNoTimeout) {
  const CliRun run =
      RunVerify("--cmd " + Quote("sleep 30 & " + Script("prefix_cache.py")) +
                " --runs 4 --seed 2 --timeout 20");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 4 inputs agree"));
}

TEST(SubprocessTest, ReportsExitStatusAndSignal) {
  EXPECT_EQ(RunSubprocess("exit 3", "", {}).exit_status, 3);
  const SubprocessResult killed = RunSubprocess("kill -9 $$", "", {});
  EXPECT_EQ(killed.kind, ExitKind::kSignaled);
  EXPECT_EQ(killed.signal, 9);
}

TEST(OutputCheckTest, AcceptsAnyLayoutButReportsFormat) {
  const SequenceList requests = {{1, 2, 9}};
  const std::vector<Match> expected = {{2, 2}};
  const std::string spaced =
      "{ \"matches\" : [ {\"cache_node\": 2, \"matched_length\": 2, "
      "\"uncached_suffix\": [9]} ] }";
  EXPECT_FALSE(CheckPrintedMatches(spaced, requests, expected, false));
  const auto failure = CheckPrintedMatches(spaced, requests, expected, true);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, FailureKind::kFormat);
  EXPECT_FALSE(CheckPrintedMatches(
      "{\"matches\":[{\"matched_length\":2,\"cache_node\":2,"
      "\"uncached_suffix\":[9]}]}\n",
      requests, expected, true));
}

TEST(OutputCheckTest, ClassifiesShapeErrorsWithTheirLocation) {
  struct Example {
    std::string text;
    FailureKind kind;
    std::string message;
  };
  const std::vector<Example> examples = {
      {"", FailureKind::kNotJson, "not one JSON document"},
      {"{\"matches\":[]} {}", FailureKind::kNotJson, "not one JSON document"},
      {"[]", FailureKind::kWrongShape, "$: expected an object"},
      {"{\"matches\":[]}", FailureKind::kWrongShape,
       "$.matches: expected 1 matches (one per request), found 0"},
      {"{\"matches\":[{\"matched_length\":0,\"cache_node\":0}]}",
       FailureKind::kWrongShape,
       "$.matches[0]: missing member \"uncached_suffix\""},
      {"{\"matches\":[{\"matched_length\":0,\"matched_length\":0,"
       "\"cache_node\":0,\"uncached_suffix\":[]}]}",
       FailureKind::kWrongShape, "duplicated member \"matched_length\""},
      {"{\"matches\":[{\"matched_length\":1.0,\"cache_node\":0,"
       "\"uncached_suffix\":[]}]}",
       FailureKind::kWrongShape,
       "$.matches[0].matched_length: expected an integer from 0 to "
       "18446744073709551615, found 1.0"},
      {"{\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
       "\"uncached_suffix\":[2147483648]}]}",
       FailureKind::kWrongShape,
       "$.matches[0].uncached_suffix[0]: expected an integer from "
       "-2147483648 to 2147483647, found 2147483648"},
      {"{\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
       "\"uncached_suffix\":[7]}],\"extra\":1}",
       FailureKind::kWrongShape, "$: unknown member \"extra\""},
  };
  for (const Example& example : examples) {
    const auto parsed = ParsePrintedMatches(example.text, 1);
    ASSERT_TRUE(std::holds_alternative<Failure>(parsed)) << example.text;
    EXPECT_EQ(std::get<Failure>(parsed).kind, example.kind) << example.text;
    EXPECT_THAT(std::get<Failure>(parsed).message, HasSubstr(example.message));
  }
}

// SPEC §6 for an answer verify reads: text nested too deep gets the depth
// rule first, and a number no 64-bit type holds is a value out of range at
// its JSON location. Former bugs: 200,000 unclosed '[' were "improper
// structure", and matched_length 18446744073709551616 "not one JSON
// document", with neither location nor range.
TEST(OutputCheckTest, DepthFirstAndOutOfRangeNumbersByLocation) {
  const auto message = [](const std::string& text,
                          checking::Comparison comparison =
                              checking::Comparison::kAll) {
    const auto parsed = ParsePrintedMatches(text, 1, comparison);
    EXPECT_TRUE(std::holds_alternative<Failure>(parsed)) << text;
    if (!std::holds_alternative<Failure>(parsed)) return std::string();
    EXPECT_EQ(std::get<Failure>(parsed).kind, FailureKind::kWrongShape);
    return std::get<Failure>(parsed).message;
  };
  EXPECT_EQ(
      message(std::string(200000, '[')),
      "$" +
          [] {
            std::string path;
            for (int i = 0; i < 1024; ++i) path += "[0]";
            return path;
          }() +
          ": expected at most 1024 nested arrays and objects, found "
          "'[' at byte 1024 nested deeper than 1024");
  EXPECT_EQ(message("{\"matches\":[{\"matched_length\":18446744073709551616,"
                    "\"cache_node\":0,\"uncached_suffix\":[]}]}"),
            "$.matches[0].matched_length: expected an integer from 0 to "
            "18446744073709551615, found 18446744073709551616");
  EXPECT_EQ(message("{\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
                    "\"uncached_suffix\":[1,-99999999999999999999]}]}"),
            "$.matches[0].uncached_suffix[1]: expected an integer from "
            "-2147483648 to 2147483647, found -99999999999999999999");
  EXPECT_EQ(message("{\"matches\":[{\"matched_length\":0,\"cache_node\":1e999,"
                    "\"uncached_suffix\":[]}]}"),
            "$.matches[0].cache_node: expected an integer from 0 to "
            "18446744073709551615, found 1e999");
  // Under --compare lengths cache_node may hold any JSON value: a large
  // number is one, kept as printed.
  const auto lengths = ParsePrintedMatches(
      "{\"matches\":[{\"matched_length\":0,\"cache_node\":"
      "123456789012345678901234567890,\"uncached_suffix\":[]}]}",
      1, checking::Comparison::kLengths);
  ASSERT_TRUE(std::holds_alternative<std::vector<PrintedMatch>>(lengths));
  EXPECT_EQ(std::get<std::vector<PrintedMatch>>(lengths)[0].cache_node_json,
            "123456789012345678901234567890");
  // A number JSON does not allow is still not JSON.
  const auto leading_zero = ParsePrintedMatches(
      "{\"matches\":[{\"matched_length\":01,\"cache_node\":0,"
      "\"uncached_suffix\":[]}]}",
      1);
  ASSERT_TRUE(std::holds_alternative<Failure>(leading_zero));
  EXPECT_EQ(std::get<Failure>(leading_zero).kind, FailureKind::kNotJson);
}

TEST(OutputCheckTest, WrongAnswerNamesTheRequest) {
  const SequenceList requests = {{4}, {1, 2, 9}};
  const std::vector<Match> expected = {{0, 0}, {2, 2}};
  const auto failure = CheckPrintedMatches(
      "{\"matches\":[{\"matched_length\":0,\"cache_node\":0,"
      "\"uncached_suffix\":[4]},{\"matched_length\":2,\"cache_node\":3,"
      "\"uncached_suffix\":[9]}]}\n",
      requests, expected, true);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, FailureKind::kWrongAnswer);
  EXPECT_THAT(failure->message, HasSubstr("request 1 of 2, tokens [1,2,9]"));
  EXPECT_THAT(failure->message,
              HasSubstr("expected matched_length 2, cache_node 2"));
  EXPECT_THAT(failure->message,
              HasSubstr("actual   matched_length 2, cache_node 3"));
}

// Every index mutant engine is caught on generated inputs and shrinks to a
// small case that still fails (the --engines path, without processes).
TEST(ShrinkTest, MutantEnginesShrinkToSmallCases) {
  for (std::string_view name : test::IndexMutantNames()) {
    if (name == test::MutantName(test::MutantBug::kNone)) continue;
    const Checker check = MakeEngineChecker([name](const CacheOptions&) {
      std::vector<std::unique_ptr<PrefixIndex>> engines;
      engines.push_back(test::MakeMutant(name));
      return engines;
    });
    std::optional<Failure> failure;
    BatchInput input;
    for (std::uint64_t seed = 0; seed < 2000 && !failure; ++seed) {
      // The inputs `kvprefix verify` generates.
      input = checking::RandomBatchInput(seed, static_cast<int>(seed % 101));
      failure = check(input);
    }
    ASSERT_TRUE(failure) << name << " was never caught";
    const ShrinkResult shrunk = Shrink(input, *failure, check, {});
    EXPECT_EQ(shrunk.failure.kind, failure->kind) << name;
    EXPECT_TRUE(check(shrunk.input)) << name << ": the shrunk case passes";
    EXPECT_LE(
        shrunk.input.cached_sequences.size() + shrunk.input.requests.size(), 4u)
        << name;
    EXPECT_LE(
        shrunk.input.cached_sequences.total_tokens() +
            shrunk.input.requests.total_tokens(),
        input.cached_sequences.total_tokens() + input.requests.total_tokens())
        << name;
  }
}

// A replay checker of the mutant engine `name` (testing/mutants.h,
// testing/model_mutants.h) alone, built with each document's options.
ReplayChecker MutantChecker(std::string_view name) {
  return MakeReplayEngineChecker([name](const CacheOptions& options) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(test::MakeMutant(name, options));
    return engines;
  });
}

// Every cache mutant is caught on the replay documents `kvprefix verify
// --format requests` generates and shrinks to a small document that still
// fails (the --engines path).
TEST(ShrinkTest, CacheMutantsShrinkToSmallDocuments) {
  for (std::string_view name : test::CacheMutantNames()) {
    const ReplayChecker check = MutantChecker(name);
    std::optional<Failure> failure;
    ReplayInput input;
    for (std::uint64_t run = 0; run < 2000 && !failure; ++run) {
      input = GeneratedReplayInput(1, run, GeneratorSize(run, UINT64_MAX, 100))
                  .input;
      failure = check(input);
    }
    ASSERT_TRUE(failure) << name << " was never caught";
    const ReplayShrinkResult shrunk = Shrink(input, *failure, check, {});
    EXPECT_EQ(shrunk.failure.kind, failure->kind) << name;
    EXPECT_TRUE(check(shrunk.input)) << name << ": the shrunk case passes";
    // A missed touch needs a hit, then an eviction that ranks the hit node
    // against another: 5 requests is 1-minimal for it.
    EXPECT_LE(shrunk.input.requests.size(), 6u) << name;
    EXPECT_LE(shrunk.input.requests.total_tokens(),
              input.requests.total_tokens())
        << name;
    EXPECT_LE(shrunk.input.options.capacity, input.options.capacity) << name;
    EXPECT_LE(shrunk.input.options.page_size, input.options.page_size) << name;
    std::cout << name << ": " << shrunk.input.requests.size()
              << " requests, capacity " << shrunk.input.options.capacity
              << ", page size " << shrunk.input.options.page_size << "\n";
  }
}

// Generated documents for a chosen model are valid for it and, checked
// with every engine of the model, agree with the reference; sglang's cover
// both match limits and both triggers.
TEST(VerifyInputsTest, GeneratedDocumentsForEachModel) {
  const ReplayChecker check = MakeReplayEngineChecker(EnginesByName({"all"}));
  for (CacheModel model :
       {CacheModel::kSpec, CacheModel::kVllm, CacheModel::kSglang}) {
    std::set<std::pair<MatchLimit, EvictionTrigger>> seen;
    for (std::uint64_t run = 0; run < 60; ++run) {
      const ReplayInput input =
          GeneratedReplayInput(1, run, static_cast<int>(run), model).input;
      ASSERT_EQ(input.options.model, model);
      EXPECT_FALSE(FindModelOptionsProblem(input.options, false))
          << NameOf(kCacheModels, model) << " run " << run;
      seen.emplace(input.options.match_limit, input.options.trigger);
      const auto failure = check(input);
      EXPECT_FALSE(failure) << failure->message;
    }
    EXPECT_EQ(seen.size(), model == CacheModel::kSglang ? 4u : 1u);
  }
}

// Every model mutant is caught on the generated documents of its model and
// shrinks to a small document that still fails.
TEST(ShrinkTest, ModelMutantsShrinkToSmallDocuments) {
  for (std::string_view name : test::ModelMutantNames()) {
    const CacheModel model = *test::ModelMutantModel(name);
    const ReplayChecker check = MutantChecker(name);
    std::optional<Failure> failure;
    ReplayInput input;
    for (std::uint64_t run = 0; run < 2000 && !failure; ++run) {
      input = GeneratedReplayInput(1, run, GeneratorSize(run, UINT64_MAX, 100),
                                   model)
                  .input;
      failure = check(input);
    }
    ASSERT_TRUE(failure) << name << " was never caught";
    const ReplayShrinkResult shrunk = Shrink(input, *failure, check, {});
    EXPECT_TRUE(check(shrunk.input)) << name << ": the shrunk case passes";
    EXPECT_LE(shrunk.input.requests.size(), 6u) << name;
    std::cout << name << ": " << shrunk.input.requests.size()
              << " requests, capacity " << shrunk.input.options.capacity
              << ", page size " << shrunk.input.options.page_size << ", "
              << NameOf(kMatchLimits, shrunk.input.options.match_limit) << ", "
              << NameOf(kEvictionTriggers, shrunk.input.options.trigger)
              << "\n";
  }
}

// About one generated replay document in four carries namespaces (SPEC
// §8.1): "" and others, one per request, with equal tokens in two
// namespaces (the copy AddRandomNamespaces adds); the rest have none, as
// before, and so do generated batch inputs.
TEST(VerifyInputsTest, GeneratedInputsCarryNamespacesOnSomeRuns) {
  int replays = 0;
  std::set<std::string> names;
  for (std::uint64_t run = 0; run < 400; ++run) {
    const int size = GeneratorSize(run, 400, 100);
    const ReplayInput replay = GeneratedReplayInput(1, run, size).input;
    if (!replay.namespaces.empty()) {
      ++replays;
      ASSERT_EQ(replay.namespaces.size(), replay.requests.size()) << run;
      names.insert(replay.namespaces.begin(), replay.namespaces.end());
      bool equal_apart = false;  // equal requests in two namespaces
      for (std::size_t i = 0; i + 1 < replay.requests.size(); ++i) {
        equal_apart |=
            std::ranges::equal(replay.requests[i], replay.requests[i + 1]) &&
            replay.namespaces[i] != replay.namespaces[i + 1];
      }
      EXPECT_TRUE(equal_apart) << run;
    }
    // Batch inputs keep none (the plugin tests' generated inputs).
    EXPECT_TRUE(GeneratedInput(1, run, size).input.namespaces.empty());
  }
  EXPECT_GT(replays, 60) << "of 400";
  EXPECT_LT(replays, 140) << "of 400";
  EXPECT_EQ(names, (std::set<std::string>{"", "lora-a", "salt-b"}));
}

// The namespace mutant (a cache that ignores namespaces) is caught on the
// generated replay documents and shrinks to a small one; its correct
// baseline passes every one of them.
TEST(ShrinkTest, NamespaceMutantIsCaughtOnGeneratedDocuments) {
  const ReplayChecker baseline = MutantChecker("mutant-namespace-baseline");
  for (std::uint64_t run = 0; run < 300; ++run) {
    const auto failure = baseline(
        GeneratedReplayInput(1, run, GeneratorSize(run, 300, 100)).input);
    ASSERT_FALSE(failure) << run << ": " << failure->message;
  }
  for (std::string_view name : test::NamespaceMutantNames()) {
    const ReplayChecker check = MutantChecker(name);
    std::optional<Failure> failure;
    ReplayInput input;
    std::uint64_t run = 0;
    for (; run < 300 && !failure; ++run) {
      input = GeneratedReplayInput(1, run, GeneratorSize(run, 300, 100)).input;
      failure = check(input);
    }
    ASSERT_TRUE(failure) << name << " was never caught";
    EXPECT_LT(run, 20u) << name;
    EXPECT_EQ(failure->kind, FailureKind::kWrongAnswer) << failure->message;
    const ReplayShrinkResult shrunk = Shrink(input, *failure, check, {});
    EXPECT_TRUE(check(shrunk.input)) << name;
    // Two equal requests in two namespaces are the whole bug.
    EXPECT_EQ(shrunk.input.requests.size(), 2u) << name;
    EXPECT_EQ(shrunk.input.namespaces.size(), 2u) << name;
    std::cout << name << ": caught at generated document " << run - 1
              << ", shrunk to " << shrunk.input.requests.size()
              << " requests\n";
  }
}

// The same through the CLI with a --cmd program that ignores namespaces:
// caught on generated replay documents, while replay_cache.py, which folds
// them, passes (the tests above).
TEST(VerifyCliTest, ProgramIgnoringNamespacesIsCaught) {
  for (const std::string& flags :
       {RequestsFlags("ignores_namespaces.py --replay")}) {
    const std::string out = TempPath("ns-" + std::to_string(flags.size()));
    const CliRun run = RunVerify(flags + " --runs 200 --seed 1 --out " + out);
    EXPECT_EQ(run.exit_status, 1) << run.output;
    EXPECT_THAT(run.output, HasSubstr("FAILED: wrong-answer on "))
        << run.output;
    EXPECT_THAT(test::ReadTextFile(out), HasSubstr("namespaces")) << flags;
  }
}

// "all" stands for the engines of the input's model (SPEC §9): for vllm
// those of EngineNames(kVllm) but the reference, not every engine (the
// others refuse the model, and every document would be skipped).
TEST(VerifyCompareTest, AllEnginesFollowTheModel) {
  const EngineFactory make = EnginesByName({"all"});
  for (CacheModel model :
       {CacheModel::kSpec, CacheModel::kVllm, CacheModel::kSglang}) {
    std::vector<std::string_view> want;
    for (std::string_view name : EngineNames(model)) {
      if (name != ReferenceTrie::kName) want.push_back(name);
    }
    std::vector<std::string_view> got;
    for (const auto& engine : make(CacheOptions{.model = model,
                              .match_limit = DefaultMatchLimit(model)})) {
      got.push_back(engine->name());
    }
    EXPECT_EQ(got, want) << NameOf(kCacheModels, model);
  }
}

// The shrinker tries the simpler SPEC §9 options: a split that leaves the
// tail's access time stale shows with either trigger and match limit, so a
// failing on-allocate, all-but-last document shrinks to after-insert and
// all; the mutant implements sglang only, so the model stays (model spec is
// refused, another failure kind).
TEST(ShrinkTest, ModelOptionsShrinkTowardTheDefaults) {
  const std::string_view name =
      test::SglangMutantName(test::SglangBug::kNoSplitTouch);
  const ReplayChecker check = MutantChecker(name);
  ReplayInput input{
      .requests = SequenceList({{1, 1}, {2}, {1, 2}, {2}, {1, 1}}),
      .options = {.capacity = 3,
                  .model = CacheModel::kSglang,
                  .match_limit = MatchLimit::kAllButLast,
                  .trigger = EvictionTrigger::kOnAllocate}};
  const std::optional<Failure> failure = check(input);
  ASSERT_TRUE(failure);
  ReplayInput defaults = input;
  defaults.options.match_limit = MatchLimit::kAll;
  defaults.options.trigger = EvictionTrigger::kAfterInsert;
  ASSERT_TRUE(check(defaults)) << "the premise: it fails there too";
  const ReplayShrinkResult shrunk = Shrink(input, *failure, check, {});
  EXPECT_EQ(shrunk.failure.kind, FailureKind::kWrongAnswer);
  EXPECT_EQ(shrunk.input.options.model, CacheModel::kSglang);
  EXPECT_EQ(shrunk.input.options.trigger, EvictionTrigger::kAfterInsert);
  EXPECT_EQ(shrunk.input.options.match_limit, MatchLimit::kAll);
  EXPECT_TRUE(check(shrunk.input));
}

// --- verify --model, --match-limit, --trigger ------------------------------

// Fixed options stand in every generated document, the others vary as for
// the model alone, and the name carries the flags that regenerate it.
TEST(VerifyInputsTest, GeneratedDocumentsTakeTheFixedOptions) {
  const GeneratedModel on_allocate{.model = CacheModel::kSglang,
                                   .trigger = EvictionTrigger::kOnAllocate};
  std::set<MatchLimit> limits;
  for (std::uint64_t run = 0; run < 40; ++run) {
    const NamedReplayInput generated =
        GeneratedReplayInput(1, run, static_cast<int>(run), on_allocate);
    EXPECT_EQ(generated.input.options.trigger, EvictionTrigger::kOnAllocate);
    EXPECT_NE(generated.input.options.policy, EvictionPolicy::kLfu);
    limits.insert(generated.input.options.match_limit);
    // Documents as GeneratedReplayInput(..., kSglang) makes them, but the
    // trigger.
    ReplayInput varied =
        GeneratedReplayInput(1, run, static_cast<int>(run), CacheModel::kSglang)
            .input;
    varied.options.trigger = EvictionTrigger::kOnAllocate;
    EXPECT_EQ(generated.input, varied) << run;
  }
  EXPECT_EQ(limits.size(), 2u);
  EXPECT_EQ(GeneratedReplayInput(1, 3, 3, on_allocate).name,
            "generated replay document 3 (--seed 1, size 3, --model sglang "
            "--trigger on-allocate)");
  EXPECT_EQ(GeneratedReplayInput(1, 3, 3, CacheModel::kVllm).name,
            "generated replay document 3 (--seed 1, size 3, --model vllm)");
  // Model spec with nothing fixed is the plain document, named as before.
  EXPECT_EQ(GeneratedReplayInput(1, 3, 3, GeneratedModel{}).name,
            GeneratedReplayInput(1, 3, 3).name);
  EXPECT_EQ(GeneratedReplayInput(1, 3, 3, GeneratedModel{}).input,
            GeneratedReplayInput(1, 3, 3).input);
  const GeneratedModel spec_limited{.model = CacheModel::kSpec,
                                    .match_limit = MatchLimit::kAllButLast};
  EXPECT_EQ(
      GeneratedReplayInput(1, 3, 3, spec_limited).input.options.match_limit,
      MatchLimit::kAllButLast);
  EXPECT_EQ(GeneratedModelFlags(spec_limited),
            "--model spec --match-limit all-but-last");
  EXPECT_THROW(
      CheckGeneratedModel(GeneratedModel{.model = CacheModel::kVllm,
                                         .match_limit = MatchLimit::kAll}),
      std::invalid_argument);
  EXPECT_THROW(CheckGeneratedModel(
                   GeneratedModel{.model = CacheModel::kSpec,
                                  .trigger = EvictionTrigger::kAfterInsert}),
               std::invalid_argument);
}

// The evicts-shortfall mutant breaks on-allocate's eviction only: documents
// fixed to on-allocate catch it, documents fixed to after-insert never do.
TEST(ShrinkTest, FixedTriggerDecidesWhetherAnSglangMutantIsCaught) {
  const std::string_view name =
      test::SglangMutantName(test::SglangBug::kEvictsShortfall);
  const ReplayChecker check = MutantChecker(name);
  const auto first_failure = [&](EvictionTrigger trigger) {
    const GeneratedModel model{.model = CacheModel::kSglang,
                               .trigger = trigger};
    for (std::uint64_t run = 0; run < 1000; ++run) {
      const ReplayInput input =
          GeneratedReplayInput(1, run, GeneratorSize(run, 1000, 100), model)
              .input;
      if (check(input)) return std::optional<ReplayInput>(input);
    }
    return std::optional<ReplayInput>();
  };
  EXPECT_FALSE(first_failure(EvictionTrigger::kAfterInsert));
  const std::optional<ReplayInput> caught =
      first_failure(EvictionTrigger::kOnAllocate);
  ASSERT_TRUE(caught);
  const ReplayShrinkResult shrunk = Shrink(*caught, *check(*caught), check, {});
  EXPECT_EQ(shrunk.input.options.trigger, EvictionTrigger::kOnAllocate);
  EXPECT_LE(shrunk.input.requests.size(), 6u);
}

// verify generates documents of the model the flags name, and every engine
// of the model agrees on all of them: none is skipped as refused.
TEST(VerifyModelsCliTest, GeneratesDocumentsOfTheModel) {
  for (const std::string& model :
       {std::string("--model vllm"),
        std::string("--model sglang --trigger on-allocate")}) {
    const CliRun run = RunVerify("--format requests " + model +
                                 " --engines all --runs 200 --seed 1");
    EXPECT_EQ(run.exit_status, 0) << run.output;
    EXPECT_THAT(run.output,
                HasSubstr("generating replay documents with --seed 1 " + model +
                          "\nOK: 200 inputs agree with the reference"));
    EXPECT_THAT(run.output, ::testing::Not(HasSubstr("skipped")));
    // A vllm block or an sglang node is no trie node: no edge statistics.
    EXPECT_THAT(run.output, ::testing::Not(HasSubstr("inside an edge")));
  }
}

// A SPEC §8 cache under --model vllm fails and shrinks to a small document
// that is still vllm's. The command is kvprefix's own spec replay given
// the document without its "model" member: a §8 cache that honours the
// match limit (`replay --model spec` would drop it too, and the shrinker
// would then rightly end at a spec document under all-but-last).
TEST(VerifyModelsCliTest, SpecCacheFailsUnderVllmAndShrinksToAVllmCase) {
  const std::string out = TempPath("spec-under-vllm.case.json");
  const std::string command = "sed s/,.model.:.vllm.// | " + Cli() +
                              " replay - --input-format requests";
  const CliRun run =
      ExpectCommandCaught(command, out, "wrong-answer",
                          "--format requests --model vllm --runs 200");
  EXPECT_THAT(run.output,
              HasSubstr("FAILED: wrong-answer on generated replay document "));
  EXPECT_THAT(run.output, HasSubstr(", --model vllm)\n"));
  const ReplayCaseFile shrunk = ReadReplayCaseFile(out);
  EXPECT_EQ(shrunk.input.options.model, CacheModel::kVllm);
  EXPECT_LE(shrunk.input.requests.size(), 4u);
  EXPECT_EQ(shrunk.expected, ReferenceMatches(shrunk.input));
  std::ifstream file(out);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("\"model\":\"vllm\""));
  // The case replays as written, without the model flags.
  EXPECT_EQ(
      RunVerify("--format requests --engines all --cases " + out).exit_status,
      0);
}

// A given document keeps its own model: a spec fifo document (a policy vllm
// refuses) is checked as it is beside vllm's generated ones; with nothing
// generated the flags would change nothing, a usage error.
TEST(VerifyModelsCliTest, GivenDocumentsKeepTheirModel) {
  const std::string file = TempPath("fifo-document.json");
  WriteFileAtomically(file, R"({"requests":[[1,2],[1,3],[1,2]],"capacity":2,)"
                            R"("policy":"fifo"})");
  const CliRun run = RunVerify(
      "--format requests --model vllm --engines all "
      "--runs 5 --seed 1 " +
      file);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("OK: 6 inputs agree with the reference"));
  EXPECT_THAT(run.output, HasSubstr("policy lru 83.3% fifo 16.7%"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("skipped")));
  const CliRun alone =
      RunVerify("--format requests --model vllm --engines all " + file);
  EXPECT_EQ(alone.exit_status, 2);
  EXPECT_EQ(alone.output,
            "kvprefix: verify: --model, --match-limit, --trigger: apply to "
            "generated documents only, and none are (FILEs or --cases "
            "without --runs); a given document runs under its own "
            "\"model\"\n");
}

// The flags' mistakes are usage errors in replay's words, naming the
// option; --format batch has no model.
TEST(VerifyModelsCliTest, FlagMistakesAreUsageErrors) {
  const auto expect = [](const std::string& flags, const std::string& error) {
    const CliRun run = RunVerify("--engines all --runs 1 " + flags);
    EXPECT_EQ(run.exit_status, 2) << flags;
    EXPECT_THAT(run.output, HasSubstr(error)) << flags;
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1)
        << run.output;
  };
  expect("--format requests --model lmcache", "--model: lmcache not in");
  expect("--format requests --model sglang --trigger soon",
         "--trigger: soon not in");
  expect("--format requests --trigger on-allocate",
         "kvprefix: --trigger: a trigger needs model \"sglang\"; the model "
         "is \"spec\"\n");
  expect("--format requests --model vllm --trigger after-insert",
         "kvprefix: --trigger: a trigger needs model \"sglang\"; the model "
         "is \"vllm\"\n");
  expect("--format requests --model vllm --match-limit all",
         "kvprefix: --match-limit: model \"vllm\" never matches");
  expect("--model vllm",
         "kvprefix: verify: --model, --match-limit, --trigger: apply to "
         "--format requests only (SPEC §4's batch job has no cache model)\n");
  expect("--format batch --match-limit all-but-last",
         "apply to --format requests only");
}

// The shrinker brings the policy toward the first of kEvictionPolicies (the
// default) when the failure stays: the mutant that keeps C + 1 nodes fails
// under every policy, so a failing fifo document shrinks to an lru one.
TEST(ShrinkTest, PolicyShrinksTowardTheFirstOfTheList) {
  const ReplayChecker check =
      MakeReplayEngineChecker([](const CacheOptions& options) {
        std::vector<std::unique_ptr<PrefixIndex>> engines;
        engines.push_back(test::MakeMutant(
            test::MutantCacheName(test::MutantCacheBug::kKeepsOneExtra),
            options));
        return engines;
      });
  std::optional<Failure> failure;
  ReplayInput input;
  for (std::uint64_t run = 0; run < 2000 && !failure; ++run) {
    input =
        GeneratedReplayInput(1, run, GeneratorSize(run, UINT64_MAX, 100)).input;
    if (input.options.policy == kEvictionPolicies[0].policy) continue;
    failure = check(input);
  }
  ASSERT_TRUE(failure) << "no failing document under another policy";
  const ReplayShrinkResult shrunk = Shrink(input, *failure, check, {});
  EXPECT_EQ(shrunk.failure.kind, failure->kind);
  EXPECT_EQ(shrunk.input.options.policy, kEvictionPolicies[0].policy)
      << EvictionPolicyName(shrunk.input.options.policy);
  EXPECT_TRUE(check(shrunk.input));
}

// RunInChild (verify/isolation.h): how a child ends, as the parent sees it.
TEST(IsolationTest, ChildsResultAndExceptionsReachTheParent) {
  const ChildResult result = RunInChild(
      2, std::chrono::seconds(10),
      [](ChildProgress&) { return std::string("answer\0with a NUL", 17); });
  EXPECT_EQ(result.end, ChildResult::End::kFinished);
  EXPECT_EQ(result.payload, std::string("answer\0with a NUL", 17));
  try {
    RunInChild(1, std::chrono::seconds(10), [](ChildProgress&) -> std::string {
      throw std::invalid_argument("verify: a usage error in the child");
    });
    ADD_FAILURE() << "nothing thrown";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "verify: a usage error in the child");
  }
}

TEST(IsolationTest, CrashNamesTheInputInFlightAndThoseBeforeIt) {
  const ChildResult result =
      RunInChild(3, std::chrono::seconds(10), [](ChildProgress& progress) {
        progress.SetPassed(40);
        progress.Begin(2, 40);
        progress.Begin(0, 41);
        std::raise(SIGSEGV);
        return std::string();
      });
  EXPECT_EQ(result.end, ChildResult::End::kSignaled);
  EXPECT_EQ(result.signal, SIGSEGV);
  EXPECT_EQ(result.input, 41u);  // the crashing thread's
  EXPECT_EQ(result.in_flight, std::vector<std::uint64_t>({40, 41}));
  EXPECT_EQ(result.passed, 40u);
  EXPECT_EQ(result.plugin_call, "");
  const Failure failure = ChildFailure(result, std::chrono::seconds(10));
  EXPECT_EQ(failure.kind, FailureKind::kCrash);
  EXPECT_EQ(
      failure.message,
      "the checking process was killed by signal 11 (Segmentation fault), "
      "outside any plugin call (memory a plugin corrupted?)");
}

TEST(IsolationTest, AnInputInFlightPastTheTimeoutIsKilled) {
  const auto start = std::chrono::steady_clock::now();
  const ChildResult result = RunInChild(1, std::chrono::milliseconds(100),
                                        [](ChildProgress& progress) {
                                          progress.Begin(0, 6);
                                          progress.End(0);
                                          progress.Begin(0, 7);
                                          for (;;) pause();
                                          return std::string();
                                        });
  EXPECT_EQ(result.end, ChildResult::End::kTimedOut);
  EXPECT_EQ(result.input, 7u);
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(100));
  EXPECT_EQ(ChildFailure(result, std::chrono::milliseconds(100)).kind,
            FailureKind::kTimeout);
}

TEST(IsolationTest, AnExitInTheMiddleOfACheckIsACrash) {
  const ChildResult result =
      RunInChild(1, std::chrono::seconds(10), [](ChildProgress&) {
        _exit(3);
        return std::string();
      });
  EXPECT_EQ(result.end, ChildResult::End::kExited);
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_EQ(ChildFailure(result, std::chrono::seconds(10)).message,
            "the checking process exited with status 3 before it finished, "
            "outside any plugin call (a plugin that calls exit?)");
}

TEST(IsolationTest, FailuresCrossThePipeWhole) {
  EXPECT_EQ(DecodeFailure(EncodeFailure(std::nullopt)), std::nullopt);
  const std::optional<Failure> failure = DecodeFailure(EncodeFailure(
      Failure{FailureKind::kWrongAnswer, "two\nlines", std::size_t{5}}));
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->kind, FailureKind::kWrongAnswer);
  EXPECT_EQ(failure->message, "two\nlines");
  EXPECT_EQ(failure->request, std::size_t{5});
}

// A command had no way to refuse an input whose options its cache does not
// implement: whatever it answered was judged a wrong answer (or a crash).
// The refusal answer {"refused":"..."} is a skip, with either protocol,
// counted after the OK line with the first refusal.
TEST(VerifyRefusalTest, ACommandsRefusalIsASkipWithEitherProtocol) {
  for (const std::string& flags :
       {"--cmd " + Quote(Script("replay_refuses_lfu.py")) + " --runs 12",
        "--cmd " + Quote(LinesScript("replay_refuses_lfu.py")) +
            " --protocol lines --runs 60"}) {
    const CliRun run = RunVerify(flags + " --format requests --seed 1");
    EXPECT_EQ(run.exit_status, 0) << run.output;
    const std::regex counts(
        "OK: ([0-9]+) inputs agree with the reference[^]*\nskipped: "
        "([0-9]+) inputs whose cache the command refuses, the first: the "
        "command refuses capacity [0-9]+, lfu, page size [0-9]: "
        "replay_refuses_lfu.py implements the policies lru and fifo only, "
        "not lfu\n");
    std::smatch found;
    ASSERT_TRUE(std::regex_search(run.output, found, counts)) << run.output;
    EXPECT_GT(std::stoi(found[1]), 0);
    EXPECT_GT(std::stoi(found[2]), 0);
    EXPECT_EQ(std::stoi(found[1]) + std::stoi(found[2]),
              flags.ends_with("12") ? 12 : 60);
    if (flags.ends_with("60")) {
      // As kvprefix.testing.check checks and skips the same documents
      // (pytest test_a_refusal_is_a_skip_counted_with_its_reason).
      EXPECT_EQ(found[1], "39");
      EXPECT_EQ(found[2], "21");
    }
  }
}

// verify --seed 1 on the replay documents of `flags` with
// tests/verify/replay_refuses_lfu.py, which refuses lfu, as a long-lived
// command.
CliRun VerifyRefusingLfu(const std::string& flags) {
  return RunVerify("--cmd " + Quote(LinesScript("replay_refuses_lfu.py")) +
                   " --protocol lines --format requests --seed 1 " + flags);
}

// Refusing every input checked nothing: no success.
TEST(VerifyRefusalTest, RefusingEveryInputIsNoSuccess) {
  const CliRun run = VerifyRefusingLfu("--policies lfu --runs 5");
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("verify: nothing checked: the command refuses the "
                        "cache of each of the 5 inputs, the first: the "
                        "command refuses "));
}

// verify generated every option, with no flag to generate only what a
// cache takes (a plugin of two policies saw a third of its inputs
// skipped): --policies, --page-sizes, --capacities and --models generate
// only those, say so with the seed, and name each document with them.
TEST(VerifyRefusalTest, ImplementedOptionsGenerateOnlyThose) {
  const CliRun run = VerifyRefusingLfu("--policies lru,fifo --runs 100");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("generating replay documents with --seed 1 "
                        "--policies lru,fifo\nOK: 100 inputs agree"));
  EXPECT_THAT(run.output, HasSubstr("lfu 0.0%"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("skipped")));
  const CliRun unbounded = RunVerify(
      "--engines radix --format requests --models spec --policies lru "
      "--page-sizes 1 --capacities unbounded --runs 50 --seed 1");
  EXPECT_EQ(unbounded.exit_status, 0) << unbounded.output;
  EXPECT_THAT(unbounded.output,
              HasSubstr("50 replay documents: 0.0% evict (0 nodes), policy lru "
                        "100.0% fifo 0.0% lfu 0.0%, page size 1 100.0%"));
  const NamedReplayInput named =
      GeneratedReplayInput(1, 3, 3, GeneratedModel{},
                           checking::ParseImplementedOptions(
                               {.models = {"sglang"}, .page_sizes = {"2"}}));
  EXPECT_EQ(named.name,
            "generated replay document 3 (--seed 1, size 3, --models sglang "
            "--page-sizes 2)");
  EXPECT_EQ(named.input.options.model, CacheModel::kSglang);
  EXPECT_EQ(named.input.options.page_size, 2u);
}

TEST(VerifyRefusalTest, ImplementedOptionsUsageErrors) {
  const std::string engines = "--engines radix --runs 3 --seed 1 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--format requests --policies lr",
       "kvprefix: --policies: unknown policy 'lr' (expected 'lru', 'fifo' or "
       "'lfu')"},
      {"--format requests --models vllm --policies fifo",
       "kvprefix: --models: model \"vllm\" takes the policies lru only "
       "(SPEC §9.4), which --policies leaves out"},
      {"--policies lru",
       "kvprefix: verify: --models, --match-limits, --policies, --page-sizes, "
       "--capacities: apply to --format requests only"},
      {"--format requests --match-limit all --match-limits all",
       "kvprefix: verify: --match-limit and --match-limits: give one"},
      {"--format requests --model vllm --models spec",
       "kvprefix: verify: --model and --models: give one"},
  };
  for (const auto& [flags, message] : cases) {
    const CliRun run = RunVerify(engines + flags);
    EXPECT_EQ(run.exit_status, 2) << flags << "\n" << run.output;
    EXPECT_THAT(run.output, HasSubstr(message)) << flags;
  }
}

TEST(VerifyRefusalTest, ParseRefusalReadsOnlyTheRefusalAnswer) {
  EXPECT_EQ(ParseRefusal("{\"refused\":\"lru only\"}\n"), "lru only");
  EXPECT_EQ(ParseRefusal(" { \"refused\" : \"\" } "), "");
  EXPECT_EQ(ParseRefusal("{\"matches\":[]}\n"), std::nullopt);
  EXPECT_EQ(ParseRefusal("{\"refused\":1}"), std::nullopt);
  EXPECT_EQ(ParseRefusal("{\"refused\":\"a\",\"matches\":[]}"), std::nullopt);
  EXPECT_EQ(ParseRefusal("[\"refused\"]"), std::nullopt);
}

}  // namespace
}  // namespace kvprefix::verify
