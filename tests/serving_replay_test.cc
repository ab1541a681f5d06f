// SPEC §10's serving replay on the reference engines: §10.8's examples,
// each answer (matched_length, cache_node, start_us, finish_us) as the SPEC
// gives it, and totals worked by hand.
#include "serve/serving_replay.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "engines/registry.h"
#include "kvprefix/request.h"

namespace kvprefix {
namespace {

using Row = std::tuple<std::size_t, NodeId, std::uint64_t, std::uint64_t>;

ServeInput Document(std::vector<std::vector<Token>> requests,
                    CacheOptions options) {
  ServeInput input;
  for (const auto& request : requests) input.replay.requests.Append(request);
  input.replay.options = options;
  return input;
}

ServeAnswer Serve(const ServeInput& input) {
  const auto cache = MakeServingCache("reference", input.replay.options);
  return ServeReplay(input, *cache);
}

std::vector<Row> Rows(const ServeAnswer& answer) {
  std::vector<Row> rows;
  for (const ServedRequest& request : answer.requests) {
    rows.emplace_back(request.match.matched_length, request.match.cache_node,
                      request.start_us, request.finish_us);
  }
  return rows;
}

const CacheOptions kVllm{.model = CacheModel::kVllm,
                         .match_limit = MatchLimit::kAllButLast};

CacheOptions Sglang(std::uint64_t capacity) {
  return CacheOptions{.capacity = capacity,
                      .model = CacheModel::kSglang,
                      .trigger = EvictionTrigger::kOnAllocate};
}

TEST(ServingReplayTest, SpecTwoRunningStartTogether) {
  ServeInput input = Document({{1, 2}, {1, 2}, {1, 2}}, {});
  input.serve.max_running = 2;
  EXPECT_EQ(Rows(Serve(input)),
            (std::vector<Row>{{0, 0, 0, 0}, {0, 0, 0, 0}, {2, 2, 0, 0}}));
}

TEST(ServingReplayTest, SpecInsertedAtFinish) {
  ServeInput input = Document({{1, 2}, {1, 2}, {1, 2}}, {});
  input.serve.max_running = 2;
  input.arrivals_us = {0, 1, 5};
  input.output_lengths = {5, 0, 0};
  input.serve.decode_us_per_token = 1;
  EXPECT_EQ(Rows(Serve(input)),
            (std::vector<Row>{{0, 0, 0, 5}, {0, 0, 1, 1}, {2, 2, 5, 5}}));
}

TEST(ServingReplayTest, VllmCachedAtStart) {
  ServeInput input = Document({{1, 2, 3}, {1, 2, 3}}, kVllm);
  input.serve.max_running = 2;
  input.arrivals_us = {0, 1};
  input.output_lengths = {10, 0};
  input.serve.decode_us_per_token = 1;
  EXPECT_EQ(Rows(Serve(input)),
            (std::vector<Row>{{0, 0, 0, 10}, {2, 2, 1, 1}}));
}

TEST(ServingReplayTest, SglangPromptInsertedAtPrefillEnd) {
  ServeInput input =
      Document({{1, 2, 3}, {1, 2, 3, 4}, {1, 2, 3, 5}}, Sglang(kUnbounded));
  input.serve.max_running = 3;
  input.serve.prefill_us_per_token = 1;
  input.serve.decode_us_per_token = 1;
  input.arrivals_us = {0, 2, 3};
  input.output_lengths = {10, 10, 0};
  EXPECT_EQ(Rows(Serve(input)),
            (std::vector<Row>{{0, 0, 0, 13}, {0, 0, 2, 16}, {3, 1, 3, 4}}));
}

TEST(ServingReplayTest, VllmWaitingHeadIsNeverSkipped) {
  CacheOptions options = kVllm;
  options.capacity = 4;
  ServeInput input = Document({{1, 2, 3}, {4, 5, 6}, {7}}, options);
  input.serve.max_running = 4;
  input.arrivals_us = {0, 1, 2};
  input.output_lengths = {10, 0, 0};
  input.serve.decode_us_per_token = 1;
  const ServeAnswer answer = Serve(input);
  EXPECT_EQ(Rows(answer),
            (std::vector<Row>{{0, 0, 0, 10}, {0, 0, 10, 10}, {0, 0, 10, 10}}));
  EXPECT_TRUE(answer.requests[1].waited_for_room);
  // [7] is never attempted before [4,5,6] starts: it never waited for room.
  EXPECT_FALSE(answer.requests[2].waited_for_room);
  EXPECT_EQ(answer.totals.waited_for_room, 1U);
  EXPECT_EQ(answer.totals.total_wait_us, 9U + 8U);
  EXPECT_EQ(answer.totals.p50_wait_us, 8U);
  EXPECT_EQ(answer.totals.p99_wait_us, 9U);
  EXPECT_EQ(answer.totals.makespan_us, 10U);
  EXPECT_EQ(answer.totals.peak_queued, 2U);
}

TEST(ServingReplayTest, VllmRefusesWhatNeverFits) {
  CacheOptions options = kVllm;
  options.capacity = 3;
  ServeInput input = Document({{1, 2}, {1, 2, 3, 4}, {1, 2, 5}}, options);
  input.serve.max_running = 2;
  const ServeAnswer answer = Serve(input);
  EXPECT_EQ(Rows(answer),
            (std::vector<Row>{{0, 0, 0, 0}, {0, 0, 0, 0}, {2, 2, 0, 0}}));
  EXPECT_TRUE(answer.requests[1].refused);
  EXPECT_EQ(answer.totals.refused, 1U);
}

TEST(ServingReplayTest, SglangRefusalEvictsEveryUnlockedLeaf) {
  ServeInput input = Document({{1, 2}, {3, 4, 5, 6, 7}, {1, 2}}, Sglang(4));
  const ServeAnswer answer = Serve(input);
  EXPECT_EQ(Rows(answer),
            (std::vector<Row>{{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}));
  EXPECT_TRUE(answer.requests[1].refused);
  EXPECT_EQ(answer.totals.evicted_pages, 2U);
}

TEST(ServingReplayTest, VllmServiceTimes) {
  ServeInput input = Document({{1, 2, 3, 4}, {1, 2, 3, 4, 5}}, kVllm);
  input.arrivals_us = {0, 100};
  input.output_lengths = {2, 3};
  input.serve.prefill_us_per_token = 7;
  input.serve.decode_us_per_token = 11;
  input.serve.overhead_us = 13;
  EXPECT_EQ(Rows(Serve(input)),
            (std::vector<Row>{{0, 0, 0, 63}, {4, 4, 100, 153}}));
}

}  // namespace
}  // namespace kvprefix
