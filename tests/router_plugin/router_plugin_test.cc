// Router plugins through the CLI: `replay --router plugin:PATH` replays as
// the policy the plugin implements, and a plugin doing what can never be
// right stops the run with an error naming it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "router/router_spec.h"
#include "testing/program_run.h"

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
}

}  // namespace
}  // namespace kvprefix
