// `kvprefix replay` with requests in flight (SPEC §10) through the CLI:
// traces in both modes, the engine rule, errors. The answers themselves are
// checked against the shared cases and the oracle by tests/serve/.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testing/program_run.h"

namespace kvprefix {
namespace {

test::ProgramRun Kvprefix(const std::vector<std::string>& args) {
  return test::RunProgram(KVPREFIX_CLI, args);
}

// Two lines of a Mooncake trace: 2 and 1 blocks, 1,000 output tokens each.
constexpr char kTrace[] =
    R"({"timestamp":0,"input_length":1024,"output_length":1000,"hash_ids":[1,2]})"
    "\n"
    R"({"timestamp":3,"input_length":300,"output_length":1000,"hash_ids":[1]})"
    "\n";

TEST(CliServeTest, TokenModeReplaysTokens) {
  // A serving replay of a trace read it in block mode whatever --mode said
  // (request_tokens 3, not 1,324).
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, kTrace);
  const test::ProgramRun run =
      Kvprefix({"replay", trace, "--mode", "token", "--max-running", "2",
                "--decode-us-per-token", "1"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find(R"("mode":"token")"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(R"("request_tokens":1324,"matched_tokens":300,)"),
            std::string::npos)
      << run.out;
  // The first decodes its 1,000 tokens (1 µs each) and finishes at 1 ms;
  // the second arrives at 3 ms and hits the first's 300 first tokens.
  EXPECT_NE(run.out.find(R"("peak_running":1,)"), std::string::npos) << run.out;
}

TEST(CliServeTest, BlockModeOutputsAreWholeBlocks) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, kTrace);
  const test::ProgramRun run =
      Kvprefix({"replay", trace, "--max-running", "1", "--decode-us-per-token",
                "1000", "--matches", "-"});
  ASSERT_EQ(run.status, 0) << run.err;
  // ceil(1000 / 512) = 2 blocks of decode at 1,000 µs: the first finishes
  // at 2,000 µs, before the second arrives at 3,000 µs and hits its block.
  EXPECT_NE(
      run.out.find(
          R"({"request":0,"matched_length":0,"cache_node":0,"arrival_us":0,"start_us":0,"prefill_end_us":0,"finish_us":2000,)"),
      std::string::npos)
      << run.out;
  EXPECT_NE(
      run.out.find(
          R"({"request":1,"matched_length":1,"cache_node":1,"arrival_us":3000,"start_us":3000,"prefill_end_us":3000,"finish_us":5000,)"),
      std::string::npos)
      << run.out;
}

TEST(CliServeTest, AnEngineWithoutALifecycleAnswersOneAtATimeOnly) {
  test::ScratchDir dir;
  const std::string document = dir.Path("d.json");
  test::WriteTextFile(document,
                      R"({"requests":[[1,2],[1,2]],"max_running":2})");
  const test::ProgramRun refused = Kvprefix(
      {"replay", document, "--input-format", "requests", "--engine", "radix"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("engine 'radix' has no request lifecycle"),
            std::string::npos)
      << refused.err;
  const test::ProgramRun one =
      Kvprefix({"replay", document, "--input-format", "requests", "--engine",
                "radix", "--max-running", "1"});
  const test::ProgramRun reference =
      Kvprefix({"replay", document, "--input-format", "requests", "--engine",
                "reference", "--max-running", "1"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out, reference.out);
}

TEST(CliServeTest, KvEventsWritesEachWorkersPages) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, kTrace);
  const std::string events = dir.Path("events.jsonl");
  // vllm's default engine is hash, which reports no pages: --kv-events
  // takes the reference unless --engine says otherwise.
  const test::ProgramRun run =
      Kvprefix({"replay", trace, "--model", "vllm", "--workers", "2",
                "--kv-events", events});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find(R"("engine":"reference")"), std::string::npos)
      << run.out;
  // Blocks 1, 2 hold their chains at the first request's start on worker 0
  // (round-robin); the second, [1] at 3 ms, matches nothing (all-but-last)
  // and its block holds chain [1] on worker 1.
  EXPECT_EQ(
      test::ReadTextFile(events),
      R"({"time_us":0,"type":"arrival","request":0,"worker":0,"peek":[0,0]})"
      "\n"
      R"({"time_us":0,"worker":0,"type":"stored","block_hash":10451216379200822465,"parent_hash":null,"tokens":[1]})"
      "\n"
      R"({"time_us":0,"worker":0,"type":"stored","block_hash":13608149317741381227,"parent_hash":10451216379200822465,"tokens":[2]})"
      "\n"
      R"({"time_us":3000,"type":"arrival","request":1,"worker":1,"peek":[0,0]})"
      "\n"
      R"({"time_us":3000,"worker":1,"type":"stored","block_hash":10451216379200822465,"parent_hash":null,"tokens":[1]})"
      "\n");
  // Engines that report no pages, and namespaces, are refused by name, and
  // no file is written.
  const std::string not_written = dir.Path("none.jsonl");
  const test::ProgramRun hash =
      Kvprefix({"replay", trace, "--model", "vllm", "--engine", "hash",
                "--kv-events", not_written});
  EXPECT_EQ(hash.status, 2);
  EXPECT_NE(hash.err.find("--kv-events: engine 'hash' does not report its "
                          "pages; --engine reference does"),
            std::string::npos)
      << hash.err;
  const std::string document = dir.Path("d.json");
  test::WriteTextFile(document,
                      R"({"requests":[[1,2]],"namespaces":["lora-a"]})");
  const test::ProgramRun named =
      Kvprefix({"replay", document, "--input-format", "requests", "--kv-events",
                not_written});
  EXPECT_EQ(named.status, 2);
  EXPECT_NE(named.err.find("--kv-events: a replay with namespaces"),
            std::string::npos)
      << named.err;
  EXPECT_FALSE(std::filesystem::exists(not_written));
}

// A trace read with --namespace-field folds namespaces into its first
// tokens: its block events would carry them, so it is refused as a
// document with namespaces is. Before, the events were written, wrong.
TEST(CliServeTest, KvEventsRefusesANamespaceField) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, kTrace);
  const std::string events = dir.Path("events.jsonl");
  const test::ProgramRun run = Kvprefix(
      {"replay", trace, "--namespace-field", "lora", "--kv-events", events});
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("--kv-events: a replay with namespaces "
                         "(--namespace-field"),
            std::string::npos)
      << run.err;
  EXPECT_FALSE(std::filesystem::exists(events));
}

TEST(CliServeTest, ATraceWithoutTimestampsIsAnErrorNamingTheLine) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace,
                      "{\"timestamp\":0,\"input_length\":512,"
                      "\"output_length\":1,\"hash_ids\":[1]}\n"
                      "{\"input_length\":512,\"output_length\":1,"
                      "\"hash_ids\":[1]}\n");
  const test::ProgramRun run =
      Kvprefix({"replay", trace, "--max-running", "4"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("line 2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("timestamp"), std::string::npos) << run.err;
  // Without a §10 option the same trace replays sequentially.
  EXPECT_EQ(Kvprefix({"replay", trace}).status, 0);
}

TEST(CliServeTest, CurveServesEachCapacityAsReplayDoes) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, kTrace);
  const std::vector<std::string> serving = {
      "--model", "vllm", "--max-running", "2", "--decode-us-per-token", "1"};
  std::vector<std::string> curve = {"curve", trace,      "--capacities",
                                    "1,3",   "--format", "csv"};
  curve.insert(curve.end(), serving.begin(), serving.end());
  const test::ProgramRun run = Kvprefix(curve);
  ASSERT_EQ(run.status, 0) << run.err;
  // Capacity 1 refuses the 2-block request; capacity 3 serves both, the
  // second hitting block 1 (the first's blocks are cached at its start).
  EXPECT_EQ(run.out,
            "capacity,capacity_bytes,max_running,matched_tokens,"
            "request_tokens,hit_ratio,waited_for_room,refused,mean_wait_us,"
            "p50_wait_us,p99_wait_us,makespan_us\n"
            "1,,2,0,3,0.0,0,1,0.0,0,0,3002\n"
            "3,,2,0,3,0.0,0,0,0.0,0,0,3002\n");
  std::vector<std::string> replay = {"replay", trace, "--capacity", "3"};
  replay.insert(replay.end(), serving.begin(), serving.end());
  const test::ProgramRun at_3 = Kvprefix(replay);
  EXPECT_NE(at_3.out.find(R"("matched_tokens":0,)"), std::string::npos);
  EXPECT_EQ(
      Kvprefix({"curve", trace, "--points", "3", "--max-running", "2"}).status,
      2);
}

}  // namespace
}  // namespace kvprefix
