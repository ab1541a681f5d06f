// `kvprefix replay --workers 1,2,3 --router all`: the table of SPEC §11
// routed replays (cli/router_table.h). Each row must be the single replay
// of its (router, N); the output is written whole or not at all; the chart
// is a PNG.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "testing/program_run.h"

namespace kvprefix {
namespace {

test::ProgramRun Kvprefix(const std::vector<std::string>& args) {
  return test::RunProgram(KVPREFIX_CLI, args);
}

// 40 requests, 2 ms apart, over 4 conversations in an irregular order,
// whose prompts grow by a block a turn (turn t: blocks 100c+1 ... 100c+t),
// each with 700 output tokens (2 blocks): requests overlap, share
// prefixes, and the routers disagree. `sticky_matched`: the blocks matched
// when every turn finds its conversation's previous turn cached (t − 1 for
// turn t).
std::string Trace(int* sticky_matched = nullptr) {
  std::string trace;
  int turns[4] = {};
  int matched = 0;
  for (int i = 0; i < 40; ++i) {
    const int conversation = (i * i + i / 5) % 4;
    const int turn = ++turns[conversation];
    matched += turn - 1;
    std::string blocks;
    for (int b = 1; b <= turn; ++b) {
      blocks += (b == 1 ? "" : ",") + std::to_string(100 * conversation + b);
    }
    trace += "{\"timestamp\":" + std::to_string(2 * i) +
             ",\"input_length\":" + std::to_string(512 * turn) +
             ",\"output_length\":700,\"hash_ids\":[" + blocks + "]}\n";
  }
  if (sticky_matched != nullptr) *sticky_matched = matched;
  return trace;
}

const std::vector<std::string> kServing = {"--max-running",
                                           "2",
                                           "--prefill-us-per-token",
                                           "300",
                                           "--decode-us-per-token",
                                           "900",
                                           "--model",
                                           "vllm"};

// A JSON line's members (values as written; strings with their quotes).
std::map<std::string, std::string> Members(const std::string& json) {
  std::map<std::string, std::string> members;
  static const std::regex member(R"re("(\w+)":("[^"]*"|[^,}\[{]+))re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), member);
       it != std::sregex_iterator(); ++it) {
    members.emplace((*it)[1], (*it)[2]);  // the first occurrence wins
  }
  return members;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Replay(const std::string& trace,
                                std::vector<std::string> args) {
  std::vector<std::string> all = {"replay", trace};
  all.insert(all.end(), kServing.begin(), kServing.end());
  all.insert(all.end(), args.begin(), args.end());
  return all;
}

TEST(CliRouterTableTest, EveryRowIsTheSingleReplayOfItsRouterAndN) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, Trace());
  const test::ProgramRun table =
      Kvprefix(Replay(trace, {"--capacity", "12", "--workers", "1,2,3",
                              "--router", "all", "--jobs", "2"}));
  ASSERT_EQ(table.status, 0) << table.err;
  const std::vector<std::string> rows = Lines(table.out);
  ASSERT_EQ(rows.size(), 36u);  // 12 routers x 3 counts, router-major
  std::map<std::string, int> hit_ratios;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::map<std::string, std::string> row = Members(rows[i]);
    ASSERT_EQ(row.size(), 20u) << rows[i];
    EXPECT_EQ(row["workers"], std::to_string(i % 3 + 1));
    const std::string router =
        row["router"].substr(1, row["router"].size() - 2);
    const test::ProgramRun one =
        Kvprefix(Replay(trace, {"--capacity", "12", "--workers", row["workers"],
                                "--router", router}));
    ASSERT_EQ(one.status, 0) << one.err;
    // The single replay's totals: everything after "totals".
    std::map<std::string, std::string> totals =
        Members(one.out.substr(one.out.find("\"totals\":")));
    row.erase("replay_seconds");
    for (const auto& [column, value] : row) {
      EXPECT_EQ(value, totals[column])
          << router << " N=" << row["workers"] << " " << column;
    }
    ++hit_ratios[row["hit_ratio"]];
  }
  // The table is not one row repeated: the routers disagree.
  EXPECT_GE(hit_ratios.size(), 4u);

  // CSV: the same rows under a header.
  const test::ProgramRun csv =
      Kvprefix(Replay(trace, {"--capacity", "12", "--workers", "1,2,3",
                              "--router", "all", "--table-format", "csv"}));
  ASSERT_EQ(csv.status, 0) << csv.err;
  const std::vector<std::string> csv_rows = Lines(csv.out);
  ASSERT_EQ(csv_rows.size(), 37u);
  EXPECT_EQ(csv_rows[0],
            "router,workers,requests,request_tokens,matched_tokens,hit_ratio,"
            "imbalance_requests,imbalance_tokens,imbalance_uncached,refused,"
            "waited_for_room,evicted_pages,peak_pinned,peak_running,"
            "peak_queued,mean_wait_us,p50_wait_us,p99_wait_us,makespan_us,"
            "replay_seconds");
  const std::map<std::string, std::string> first = Members(rows[4]);
  EXPECT_EQ(
      csv_rows[5].substr(0, csv_rows[5].rfind(',')),
      "random,2," + first.at("requests") + "," + first.at("request_tokens") +
          "," + first.at("matched_tokens") + "," + first.at("hit_ratio") + "," +
          first.at("imbalance_requests") + "," + first.at("imbalance_tokens") +
          "," + first.at("imbalance_uncached") + "," + first.at("refused") +
          "," + first.at("waited_for_room") + "," + first.at("evicted_pages") +
          "," + first.at("peak_pinned") + "," + first.at("peak_running") + "," +
          first.at("peak_queued") + "," + first.at("mean_wait_us") + "," +
          first.at("p50_wait_us") + "," + first.at("p99_wait_us") + "," +
          first.at("makespan_us"));
}

TEST(CliRouterTableTest, RoundRobinSpreadsAndConsistentHashSticks) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  int sticky_matched = 0;
  test::WriteTextFile(trace, Trace(&sticky_matched));
  const test::ProgramRun table = Kvprefix(
      Replay(trace, {"--workers", "4,2", "--router",
                     "round-robin,consistent-hash", "--hash-prefix", "1"}));
  ASSERT_EQ(table.status, 0) << table.err;
  const std::vector<std::string> rows = Lines(table.out);
  ASSERT_EQ(rows.size(), 4u);
  // Rows in the order given: round-robin N=4, N=2, then consistent-hash.
  EXPECT_EQ(Members(rows[0])["router"], "\"round-robin\"");
  EXPECT_EQ(Members(rows[0])["workers"], "4");
  EXPECT_EQ(Members(rows[1])["workers"], "2");
  EXPECT_EQ(Members(rows[2])["router"], "\"consistent-hash\"");
  // 40 requests: 10 per worker of 4 (§11.9's ⌈(R − w)/N⌉), 20 of 2.
  EXPECT_EQ(Members(rows[0])["imbalance_requests"], "1.0");
  EXPECT_EQ(Members(rows[1])["imbalance_requests"], "1.0");
  // Keyed on the first block, a conversation stays on one worker, whose
  // unbounded cache holds its previous turn: each turn hits all but its new
  // block, at every N.
  for (const std::size_t i : {2, 3}) {
    EXPECT_EQ(Members(rows[i])["matched_tokens"],
              std::to_string(sticky_matched));
  }
  // Round-robin scatters the conversations: fewer hits.
  EXPECT_LT(std::stoi(Members(rows[0])["matched_tokens"]), sticky_matched);
}

TEST(CliRouterTableTest, NothingIsWrittenOnABadOption) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, Trace());
  const std::string output = dir.Path("table.csv");
  const std::string plot = dir.Path("table.png");
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--workers", "1,0"},
       "kvprefix: --workers: expected an integer from 1 to 2147483647, found "
       "0 in '1,0'"},
      {{"--workers", "2,", "--router", "precise"},
       "kvprefix: --workers: expected an integer from 1 to 2147483647, found  "
       "in '2,'"},
      {{"--router", "all,precise"}, "found all in 'all,precise'"},
      {{"--workers", "1,2", "--router", "round-robin,random", "--load-factor",
        "2"},
       "kvprefix: --load-factor: no router of the table (round-robin, "
       "random) takes it"},
      {{"--workers", "2", "--router", "precise", "--load-factor", "2"},
       "kvprefix: --load-factor: router \"precise\" takes no such parameter"},
      {{"--workers", "2", "--plot", plot},
       "kvprefix: --plot applies to a table of routed replays"},
      {{"--workers", "1,2", "--plot", dir.Path("table.jpg")},
       "kvprefix: --plot: expected a .png or .svg file"},
      {{"--workers", "1,2", "--matches", dir.Path("m.jsonl")},
       "kvprefix: --matches does not apply to a table"},
      {{"--workers", "1,2", "--jobs", "0"},
       "kvprefix: --jobs: expected an integer from 1 to 1024, found 0"},
      {{"--router", "all", "--table-format", "xml"},
       "kvprefix: --table-format: xml not in {jsonl,csv}"},
  };
  for (const auto& [args, message] : bad) {
    test::WriteTextFile(output, "old");
    std::vector<std::string> all = args;
    all.insert(all.end(), {"-o", output});
    const test::ProgramRun run = Kvprefix(Replay(trace, all));
    EXPECT_EQ(run.status, 2) << args[0] << " " << args[1];
    EXPECT_EQ(run.out, "");
    EXPECT_NE(run.err.find(message), std::string::npos)
        << run.err << "\nexpected: " << message;
    EXPECT_EQ(test::ReadTextFile(output), "old");
    EXPECT_FALSE(std::ifstream(plot).good());
  }
}

TEST(CliRouterTableTest, PlotIsAPngWrittenWithTheTable) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, Trace());
  const std::string output = dir.Path("table.csv");
  const std::string plot = dir.Path("table.png");
  const test::ProgramRun run = Kvprefix(
      Replay(trace, {"--workers", "1,2,4", "--router", "all", "--table-format",
                     "csv", "-o", output, "--plot", plot}));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(Lines(test::ReadTextFile(output)).size(), 37u);
  const std::string image = test::ReadTextFile(plot);
  ASSERT_GT(image.size(), 1000u);
  EXPECT_EQ(image.substr(0, 8), "\x89PNG\r\n\x1a\n");
}

}  // namespace
}  // namespace kvprefix
