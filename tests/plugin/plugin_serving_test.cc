// Plugins with requests in flight (SPEC §10, kvprefix_plugin.h's "Requests
// in flight"): the model plugins (BlockPool and RadixCache exported by
// plugin_export.h, which fills the seven members for a ServingEngine) serve
// exactly as the reference on the shared serving cases and on random
// documents; a plugin without the members answers one request at a time
// and is refused anything else by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "io/replay_document.h"
#include "plugin/plugin_engine.h"
#include "serve/serving_replay.h"
#include "testing/program_run.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

const std::string kVllm = std::string("plugin:") + KVPREFIX_VLLM_PLUGIN;
const std::string kSglang = std::string("plugin:") + KVPREFIX_SGLANG_PLUGIN;
const std::string kRadix = std::string("plugin:") + KVPREFIX_RADIX_PLUGIN;

const std::string& PluginOf(CacheModel model) {
  return model == CacheModel::kVllm ? kVllm : kSglang;
}

// The answers of `engine` and of the reference, which must be equal.
void ExpectServesAsTheReference(const std::string& engine,
                                const ServeInput& input,
                                const std::string& what) {
  const auto expected_cache =
      MakeServingCache("reference", input.replay.options);
  const auto cache = MakeServingCache(engine, input.replay.options);
  ASSERT_FALSE(cache->one_at_a_time()) << engine;
  const ServeAnswer expected = ServeReplay(input, *expected_cache);
  const ServeAnswer answer = ServeReplay(input, *cache);
  EXPECT_EQ(answer.requests, expected.requests) << what;
  EXPECT_EQ(answer.totals, expected.totals) << what;
}

// The member "document" of a case file: the object after `"document":`,
// to its closing brace (a case's tokens and names hold no brace).
std::string DocumentOf(const std::string& case_text) {
  const std::string key = "\"document\":";
  const std::size_t start = case_text.find(key) + key.size();
  int depth = 0;
  std::size_t end = start;
  do {
    if (case_text[end] == '{') ++depth;
    if (case_text[end] == '}') --depth;
    ++end;
  } while (depth > 0);
  return case_text.substr(start, end - start);
}

TEST(PluginServingTest, ModelPluginsServeTheSharedCasesAsTheReference) {
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(test::SharedCasesDir() + "/serve")) {
    // s*: one worker (§10); r*: routed (§11).
    if (!entry.path().filename().string().starts_with("s")) continue;
    const ServeInput input =
        ParseServeDocument(DocumentOf(test::ReadTextFile(entry.path())));
    const CacheModel model = input.replay.options.model;
    if (model == CacheModel::kSpec) continue;
    ExpectServesAsTheReference(PluginOf(model), input, entry.path().string());
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

TEST(PluginServingTest, ModelPluginsServeRandomDocumentsAsTheReference) {
  std::mt19937_64 random(7);
  const auto below = [&](std::uint64_t n) { return random() % n; };
  for (int run = 0; run < 400; ++run) {
    ServeInput input;
    CacheOptions& options = input.replay.options;
    options.model = below(2) == 0 ? CacheModel::kVllm : CacheModel::kSglang;
    options.capacity = below(5) == 0 ? kUnbounded : below(8);
    options.page_size = 1 + below(2);
    if (options.model == CacheModel::kVllm) {
      options.match_limit = MatchLimit::kAllButLast;
    } else {
      options.trigger = below(2) == 0 ? EvictionTrigger::kOnAllocate
                                      : EvictionTrigger::kAfterInsert;
      options.policy =
          below(2) == 0 ? EvictionPolicy::kLru : EvictionPolicy::kFifo;
    }
    std::uint64_t arrival = 0;
    for (std::uint64_t i = 0, n = below(10); i < n; ++i) {
      std::vector<Token> request(below(6));
      for (Token& token : request) token = static_cast<Token>(1 + below(3));
      input.replay.requests.Append(request);
      arrival += below(3);
      input.arrivals_us.push_back(arrival);
      input.output_lengths.push_back(below(4));
    }
    input.serve = ServeOptions{
        .max_running = 1 + below(3),
        .prefill_us_per_token = below(2),
        .decode_us_per_token = below(3),
        .output = below(2) == 0 ? OutputMode::kNone : OutputMode::kUnique};
    ExpectServesAsTheReference(PluginOf(options.model), input,
                               "run " + std::to_string(run));
  }
}

TEST(PluginServingTest, APluginWithoutTheMembersAnswersOneAtATime) {
  EXPECT_EQ(MakePluginServingCache(KVPREFIX_RADIX_PLUGIN, CacheOptions{}),
            nullptr);
  EXPECT_TRUE(MakeServingCache(kRadix, CacheOptions{})->one_at_a_time());
  test::ScratchDir dir;
  const std::string document = dir.Path("d.json");
  test::WriteTextFile(document, R"({"requests":[[1,2],[1,2]]})");
  const test::ProgramRun refused = test::RunProgram(
      KVPREFIX_CLI, {"replay", document, "--input-format", "requests",
                     "--engine", kRadix, "--max-running", "2"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("'" + kRadix + "' has no request lifecycle"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out, "");
}

// A cache that implements only some of SPEC §10 (no output tokens stored)
// refuses the rest from its admit: a refusal, named, on every route — a
// usage error in replay (exit 2, no output), a skip counted by verify —
// never a crash or a wrong answer.
TEST(PluginServingTest, AnAdmitRefusingTheOptionsIsARefusal) {
  const std::string no_output =
      std::string("plugin:") + KVPREFIX_VLLM_NO_OUTPUT_PLUGIN;
  test::ScratchDir dir;
  const std::string document = dir.Path("d.json");
  test::WriteTextFile(document, R"({"requests":[[1,2],[1,2]],"model":"vllm",)"
                                R"("max_running":2,"output_lengths":[3,0]})");
  const test::ProgramRun refused = test::RunProgram(
      KVPREFIX_CLI, {"replay", document, "--input-format", "requests",
                     "--engine", no_output, "--output-mode", "unique"});
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("refuses this serving replay (admit of request "
                             "0): no-output stores no output tokens"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out, "");
  const test::ProgramRun none =
      test::RunProgram(KVPREFIX_CLI, {"replay", document, "--input-format",
                                      "requests", "--engine", no_output});
  EXPECT_EQ(none.status, 0) << none.err;
  const test::ProgramRun verified = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--engines", no_output, "--format", "requests", "--serving",
       "--model", "vllm", "--runs", "100", "--seed", "1"});
  EXPECT_EQ(verified.status, 0) << verified.out << verified.err;
  EXPECT_NE(verified.out.find("OK: "), std::string::npos) << verified.out;
  EXPECT_NE(verified.out.find("stores no output tokens"), std::string::npos)
      << verified.out;
}

}  // namespace
}  // namespace kvprefix
