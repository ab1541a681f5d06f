// Router plugins through the CLI: `replay --router plugin:PATH` replays as
// the policy the plugin implements, `verify --router plugin:PATH --against
// POLICY` passes a correct plugin (the C example, every policy exported from
// C++) and catches, shrinks and writes a wrong one (the example's bug, a
// routing mutant exported), and a plugin doing what can never be right
// stops the run with an error naming it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "router/router_spec.h"
#include "testing/program_run.h"
#include "testing/routing_mutants.h"

namespace kvprefix {
namespace {

const std::string kTrace = std::string(KVPREFIX_SOURCE_DIR) +
                           "/data/mooncake/conversation_trace.jsonl";
const std::string kCases =
    std::string(KVPREFIX_SOURCE_DIR) + "/tests/data/cases/serve";

test::ProgramRun Kvprefix(const std::vector<std::string>& args) {
  return test::RunProgram(KVPREFIX_CLI, args);
}

std::string Plugin(const char* path) { return std::string("plugin:") + path; }

// The answer without its timings and router name.
std::string Comparable(std::string json) {
  for (const std::string key :
       {"\"read_seconds\":", "\"replay_seconds\":", "\"router\":"}) {
    const std::size_t at = json.find(key);
    if (at == std::string::npos) continue;
    json.erase(at, json.find(',', at) - at);
  }
  return json;
}

TEST(RouterPluginTest, ReplaysAsThePolicyItImplements) {
  const std::vector<std::string> replay = {"replay",
                                           kTrace,
                                           "--max-running",
                                           "4",
                                           "--decode-us-per-token",
                                           "1000",
                                           "--workers",
                                           "4"};
  auto with = [&](const std::string& router) {
    std::vector<std::string> args = replay;
    args.insert(args.end(), {"--router", router});
    return Kvprefix(args);
  };
  const test::ProgramRun builtin = with("least-loaded");
  const test::ProgramRun plugin = with(Plugin(KVPREFIX_LEASTLOADED));
  ASSERT_EQ(builtin.status, 0) << builtin.err;
  ASSERT_EQ(plugin.status, 0) << plugin.err;
  EXPECT_NE(plugin.out.find("\"router\":\"plugin:leastloaded\""),
            std::string::npos);
  EXPECT_EQ(Comparable(plugin.out), Comparable(builtin.out));
  // The wrong one routes differently on this trace.
  const test::ProgramRun wrong = with(Plugin(KVPREFIX_LEASTLOADED_WRONG));
  ASSERT_EQ(wrong.status, 0) << wrong.err;
  EXPECT_NE(Comparable(wrong.out), Comparable(builtin.out));
}

TEST(RouterPluginTest, VerifyPassesTheExampleOnGeneratedAndSharedCases) {
  const test::ProgramRun run =
      Kvprefix({"verify", "--router", Plugin(KVPREFIX_LEASTLOADED), "--against",
                "least-loaded", "--runs", "300", "--seed", "1"});
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("OK: 300 routed documents"), std::string::npos)
      << run.out;
  const test::ProgramRun cases =
      Kvprefix({"verify", "--router", Plugin(KVPREFIX_LEASTLOADED), "--against",
                "least-loaded", "--cases", kCases});
  EXPECT_EQ(cases.status, 0) << cases.out << cases.err;
  EXPECT_NE(cases.out.find("OK: 35 routed documents"), std::string::npos)
      << cases.out;
}

TEST(RouterPluginTest, VerifyCatchesShrinksAndWritesTheWrongExample) {
  const test::ScratchDir dir;
  const std::string out = dir.path() + "/fail.json";
  const test::ProgramRun run = Kvprefix(
      {"verify", "--router", Plugin(KVPREFIX_LEASTLOADED_WRONG), "--against",
       "least-loaded", "--runs", "300", "--seed", "1", "--out", out});
  EXPECT_EQ(run.status, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("FAIL: a decision differs on generated routed "
                         "document 5 (--seed 1, size 5)"),
            std::string::npos)
      << run.out;
  // Shrunk to two empty requests on two workers: the second decision, where
  // worker 0's one request waits in its queue.
  EXPECT_NE(run.out.find("to 2 requests (0 tokens; capacity 0, lru, page size "
                         "1), max_running 1 on 2 workers"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("decision 1 (request 1 of 2, arrival 0 µs): "
                         "plugin:leastloaded chose worker 0, least-loaded "
                         "chose worker 1\n  worker 0: running 0, queued 1,"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.err.find("verify failed: wrong-decision"), std::string::npos);
  // The written document fails again, and replays.
  const test::ProgramRun again =
      Kvprefix({"verify", "--router", Plugin(KVPREFIX_LEASTLOADED_WRONG),
                "--against", "least-loaded", out, "--out", out + ".2"});
  EXPECT_EQ(again.status, 1) << again.out << again.err;
  // Former bug: an input nothing could shrink was reported "shrunk in N
  // checks from 2 requests ... to 2 requests ...".
  EXPECT_NE(again.out.find("; not shrunk: none of the "), std::string::npos)
      << again.out;
  EXPECT_EQ(again.out.find("shrunk in"), std::string::npos) << again.out;
  const test::ProgramRun replay =
      Kvprefix({"replay", out, "--input-format", "requests", "--router",
                Plugin(KVPREFIX_LEASTLOADED_WRONG)});
  EXPECT_EQ(replay.status, 0) << replay.err;
}

// Every policy exported from C++ agrees with itself across the C boundary
// (its seed and parameters passed as text); each routing mutant exported
// the same way is caught.
TEST(RouterPluginTest, ExportedPoliciesPassAndMutantsFail) {
  for (const auto& policy : kRouterPolicies) {
    setenv("KVPREFIX_TEST_POLICY", std::string(policy.name).c_str(), 1);
    unsetenv("KVPREFIX_TEST_ROUTING_MUTANT");
    const test::ProgramRun run = Kvprefix(
        {"verify", "--router", Plugin(KVPREFIX_POLICY_ROUTER), "--against",
         std::string(policy.name), "--runs", "200", "--seed", "3"});
    EXPECT_EQ(run.status, 0) << policy.name << "\n" << run.out << run.err;
  }
  const test::ScratchDir dir;
  for (const std::string_view name : test::RoutingMutantNames()) {
    const std::string policy(
        NameOf(kRouterPolicies,
               *test::RoutingMutantPolicy(test::ParseRoutingMutant(name))));
    setenv("KVPREFIX_TEST_POLICY", policy.c_str(), 1);
    setenv("KVPREFIX_TEST_ROUTING_MUTANT", std::string(name).c_str(), 1);
    const test::ProgramRun run =
        Kvprefix({"verify", "--router", Plugin(KVPREFIX_POLICY_ROUTER),
                  "--against", policy, "--runs", "20000", "--seed", "1",
                  "--out", dir.path() + "/mutant.json"});
    EXPECT_EQ(run.status, 1) << name << "\n" << run.out << run.err;
    EXPECT_NE(run.out.find("FAIL: a decision differs"), std::string::npos)
        << name << "\n"
        << run.out;
  }
  unsetenv("KVPREFIX_TEST_POLICY");
  unsetenv("KVPREFIX_TEST_ROUTING_MUTANT");
}

TEST(RouterPluginTest, ImpossibleAnswersNameThePlugin) {
  const auto replay = [](const char* plugin) {
    return Kvprefix(
        {"replay", kTrace, "--workers", "3", "--router", Plugin(plugin)});
  };
  EXPECT_EQ(replay(KVPREFIX_FAULTY_ROUTER_none).status, 0);
  const test::ProgramRun bad_worker = replay(KVPREFIX_FAULTY_ROUTER_bad_worker);
  EXPECT_EQ(bad_worker.status, 1);
  EXPECT_NE(bad_worker.err.find("router plugin 'faulty' (" +
                                std::string(KVPREFIX_FAULTY_ROUTER_bad_worker) +
                                "): choose returned worker 3 for request 2 of "
                                "3 workers"),
            std::string::npos)
      << bad_worker.err;
  const test::ProgramRun error = replay(KVPREFIX_FAULTY_ROUTER_error);
  EXPECT_EQ(error.status, 1);
  EXPECT_NE(error.err.find("): choose failed: my index is broken"),
            std::string::npos)
      << error.err;
  const test::ProgramRun bad_peek = replay(KVPREFIX_FAULTY_ROUTER_bad_peek);
  EXPECT_EQ(bad_peek.status, 1);
  EXPECT_NE(bad_peek.err.find("): choose of request 0: peek_match of worker 3 "
                              "of 3 workers"),
            std::string::npos)
      << bad_peek.err;
  const test::ProgramRun refuse = replay(KVPREFIX_FAULTY_ROUTER_refuse);
  EXPECT_EQ(refuse.status, 2);
  EXPECT_NE(refuse.err.find("refuses its setup: no setup suits me"),
            std::string::npos)
      << refuse.err;
  // verify reports a plugin's impossible answer as the router's failure.
  const test::ScratchDir dir;
  const test::ProgramRun verify =
      Kvprefix({"verify", "--router", Plugin(KVPREFIX_FAULTY_ROUTER_error),
                "--against", "round-robin", "--runs", "50", "--seed", "1",
                "--out", dir.path() + "/fail.json"});
  EXPECT_EQ(verify.status, 1) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("FAIL: the router fails"), std::string::npos)
      << verify.out;
}

// A router plugin's crash or exit() ends replay and verify with a line
// naming it and exit status 1 (cli/supervised.h): before, its signal (139)
// or its status (0, with no output and no verdict) ended them.
TEST(RouterPluginTest, ACrashOrAnExitIsReportedNamingThePlugin) {
  for (const char* plugin :
       {KVPREFIX_FAULTY_ROUTER_crash, KVPREFIX_FAULTY_ROUTER_exit}) {
    const test::ProgramRun replay = Kvprefix(
        {"replay", kTrace, "--workers", "3", "--router", Plugin(plugin)});
    EXPECT_EQ(replay.status, 1) << plugin << ": " << replay.err;
    EXPECT_NE(replay.err.find("the process running " + Plugin(plugin)),
              std::string::npos)
        << replay.err;
    EXPECT_EQ(replay.out, "");
    const test::ProgramRun verify =
        Kvprefix({"verify", "--router", Plugin(plugin), "--against",
                  "round-robin", "--runs", "20", "--seed", "1"});
    EXPECT_EQ(verify.status, 1) << plugin << ": " << verify.err;
    EXPECT_NE(verify.err.find("the process running " + Plugin(plugin)),
              std::string::npos)
        << verify.err;
  }
}

// A router table quotes a plugin's name as CSV and JSON need (its name is
// the plugin's text): before, `odd,"name` split a CSV row and broke JSON.
TEST(RouterPluginTest, ATableQuotesAPluginsName) {
  const std::string plugin = Plugin(KVPREFIX_FAULTY_ROUTER_odd_name);
  const test::ProgramRun csv =
      Kvprefix({"replay", kTrace, "--workers", "2,3", "--router", plugin,
                "--table-format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find("\n\"plugin:odd,\"\"name\",2,"), std::string::npos)
      << csv.out;
  const test::ProgramRun jsonl =
      Kvprefix({"replay", kTrace, "--workers", "2,3", "--router", plugin});
  ASSERT_EQ(jsonl.status, 0) << jsonl.err;
  EXPECT_EQ(jsonl.out.rfind(R"({"router":"plugin:odd,\"name","workers":2,)", 0),
            0u)
      << jsonl.out;
}

}  // namespace
}  // namespace kvprefix
