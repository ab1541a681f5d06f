// checking/serving_check.h: the serving fuzz inputs' decoding, the rule
// checker of SPEC §10 and the whole-answer comparison; io's §10 document
// writer (AppendServeDocumentJson) they report with; and the serving
// mutants of testing/serving_mutants.h.
#include "checking/serving_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "io/json_output.h"
#include "io/replay_document.h"
#include "serve/serving_replay.h"
#include "testing/serving_mutants.h"

namespace kvprefix {
namespace {

using ::testing::HasSubstr;

TEST(ServeDocumentWriterTest, WritesNonDefaultMembersAndReadsBack) {
  ServeInput input;
  input.replay = {{{1, 2}, {3}}, {.capacity = 3}};
  std::string json;
  AppendServeDocumentJson(input, json);
  EXPECT_EQ(json, R"({"requests":[[1,2],[3]],"capacity":3,"policy":"lru",)"
                  R"("page_size":1})"
                  "\n");
  input.arrivals_us = {0, 7};
  input.output_lengths = {kMaxServeTime, 0};
  input.serve = {.max_running = 2,
                 .prefill_us_per_token = 1,
                 .decode_us_per_token = kMaxServeRate,
                 .overhead_us = 3,
                 .output = OutputMode::kUnique};
  json.clear();
  AppendServeDocumentJson(input, json);
  EXPECT_EQ(json,
            R"({"requests":[[1,2],[3]],"capacity":3,"policy":"lru",)"
            R"("page_size":1,"arrivals_us":[0,7],)"
            R"("output_lengths":[9007199254740992,0],"max_running":2,)"
            R"("prefill_us_per_token":1,"decode_us_per_token":4294967296,)"
            R"("overhead_us":3,"output":"unique"})"
            "\n");
  EXPECT_EQ(ParseServeDocument(json), input);
}

TEST(ServeFuzzInputTest, EmptyInputIsSpecWithCapacityZeroAndNoRequest) {
  const auto input = checking::DecodeServeFuzzInput({});
  ASSERT_TRUE(input.has_value());
  EXPECT_EQ(input->replay.options,
            (CacheOptions{.capacity = 0, .page_size = 1}));
  EXPECT_EQ(input->replay.requests.size(), 0u);
  EXPECT_EQ(input->serve, ServeOptions{});
}

TEST(ServeFuzzInputTest, DecodesEveryByte) {
  // sglang, all-but-last, on-allocate, fifo, unique, 4 tokens; pages of 3,
  // capacity 5; B = 4, prefill 1, decode 2, overhead 3; then a request of
  // 3 tokens, arrival +1, output 2, and one of 0 tokens, arrival +3, 7.
  const std::vector<std::uint8_t> bytes = {
      0x80 | 0x40 | 0x10 | 0x08 | 0x04 | 0x02,
      (5 << 2) | 2,
      0xC0 | 0x20 | 0x04 | 0x03,
      (2 << 5) | (1 << 3) | 3,
      0,
      5,
      0xFF,
      (7 << 5) | (3 << 3)};
  const auto input = checking::DecodeServeFuzzInput(bytes);
  ASSERT_TRUE(input.has_value());
  EXPECT_EQ(input->replay.options,
            (CacheOptions{.capacity = 5,
                          .policy = EvictionPolicy::kFifo,
                          .page_size = 3,
                          .model = CacheModel::kSglang,
                          .match_limit = MatchLimit::kAllButLast,
                          .trigger = EvictionTrigger::kOnAllocate}));
  EXPECT_EQ(input->replay.requests, (SequenceList{{1, 2, 4}, {}}));
  EXPECT_EQ(input->arrivals_us, (std::vector<std::uint64_t>{1, 4}));
  EXPECT_EQ(input->output_lengths, (std::vector<std::uint64_t>{2, 7}));
  EXPECT_EQ(input->serve, (ServeOptions{.max_running = 4,
                                        .prefill_us_per_token = 1,
                                        .decode_us_per_token = 2,
                                        .overhead_us = 3,
                                        .output = OutputMode::kUnique}));
  // vllm keeps its match limit and policy whatever the bits say; unbounded.
  const auto vllm =
      checking::DecodeServeFuzzInput(std::vector<std::uint8_t>{0x31, 0x80, 0});
  EXPECT_EQ(vllm->replay.options,
            (CacheOptions{.model = CacheModel::kVllm,
                          .match_limit = MatchLimit::kAllButLast}));
  EXPECT_FALSE(
      checking::DecodeServeFuzzInput(
          std::vector<std::uint8_t>(checking::kMaxServeFuzzInputBytes + 1, 0))
          .has_value());
}

// Caps at kMaxServeFuzzRequests requests, and every decoded document is
// one the replay takes.
TEST(ServeFuzzInputTest, DecodedDocumentsReplay) {
  std::vector<std::uint8_t> bytes(600);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::uint8_t>(i * 37 + 11);
  }
  for (std::size_t cut = 0; cut < bytes.size(); cut += 23) {
    const auto input = checking::DecodeServeFuzzInput(
        std::span<const std::uint8_t>(bytes).subspan(cut));
    ASSERT_TRUE(input.has_value());
    EXPECT_LE(input->replay.requests.size(), checking::kMaxServeFuzzRequests);
    EXPECT_EQ(checking::CheckServeInput(*input, checking::BuiltInServingCaches),
              std::nullopt);
  }
}

// A spec cache that makes request 1 wait once, where SPEC §10.4 lets only
// vllm and sglang "on-allocate" wait.
class WaitingSpec final : public checking::ServingCacheDecorator {
 public:
  explicit WaitingSpec(const CacheOptions& options)
      : ServingCacheDecorator(MakeServingCache("reference", options)) {}
  std::string_view name() const override { return "waiting-spec"; }
  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override {
    if (id == 1 && !waited_) {
      waited_ = true;
      return {AttemptOutcome::kWait, {}};
    }
    return cache().Admit(id, prompt, stored_length);
  }

 private:
  bool waited_ = false;
};

ServeInput TwoRequests() {
  ServeInput input;
  input.replay = {{{1, 2}, {1, 2}}, {.capacity = 4}};
  input.arrivals_us = {0, 1};
  input.output_lengths = {5, 0};
  input.serve = {.max_running = 2, .decode_us_per_token = 1};
  return input;
}

TEST(RuleCheckingCacheTest, NamesARuleBroken) {
  checking::RuleCheckingCache cache(
      std::make_unique<WaitingSpec>(TwoRequests().replay.options));
  ServeReplay(TwoRequests(), cache);
  ASSERT_TRUE(cache.problem().has_value());
  EXPECT_EQ(*cache.problem(),
            "request 1 waited: only vllm and sglang \"on-allocate\" with a "
            "capacity ever wait or refuse (SPEC §10.4)");
}

TEST(RuleCheckingCacheTest, TheReferenceKeepsTheRules) {
  checking::RuleCheckingCache cache(
      MakeServingCache("reference", TwoRequests().replay.options));
  const ServeAnswer answer = ServeReplay(TwoRequests(), cache);
  cache.CheckEnd();
  EXPECT_EQ(cache.problem(), std::nullopt);
  EXPECT_EQ(answer.requests[1].match, Match{});  // cached at 5, not before
}

TEST(CheckServeInputTest, ReportsTheRequestBothAnswersAndTheDocument) {
  const auto mutant = [](const ServeInput& input) {
    std::vector<std::unique_ptr<ServingCache>> caches;
    caches.push_back(test::MakeServingMutant(
        test::ServingBug::kSpecCachesAtStart, input.replay.options));
    return caches;
  };
  const auto report = checking::CheckServeInput(TwoRequests(), mutant);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(
      *report,
      "engine 'serving-mutant-spec-caches-at-start' disagrees with the "
      "reference on request 1 of 2\n"
      "  reference: {\"matched_length\":0,\"cache_node\":0,\"arrival_us\":1,"
      "\"start_us\":1,\"prefill_end_us\":1,\"finish_us\":1,\"wait_us\":0,"
      "\"refused\":false,\"waited_for_room\":false}\n"
      "  serving-mutant-spec-caches-at-start: {\"matched_length\":2,"
      "\"cache_node\":2,\"arrival_us\":1,\"start_us\":1,\"prefill_end_us\":1,"
      "\"finish_us\":1,\"wait_us\":0,\"refused\":false,"
      "\"waited_for_room\":false}\n"
      "on this SPEC §10 document (kvprefix replay DOC --input-format "
      "requests):\n"
      "{\"requests\":[[1,2],[1,2]],\"capacity\":4,\"policy\":\"lru\","
      "\"page_size\":1,\"arrivals_us\":[0,1],\"output_lengths\":[5,0],"
      "\"max_running\":2,\"decode_us_per_token\":1}\n");
}

TEST(CheckServeInputTest, OneAtATimeEnginesOnlyGetSection10_7Documents) {
  ServeInput input = TwoRequests();
  EXPECT_FALSE(checking::SequentialServeInput(input));
  std::vector<std::string> names;
  for (const auto& cache : checking::BuiltInServingCaches(input)) {
    names.emplace_back(cache->name());
  }
  EXPECT_EQ(names, std::vector<std::string>{"hash"});
  input.serve.max_running = 1;
  EXPECT_TRUE(checking::SequentialServeInput(input));
  EXPECT_EQ(checking::BuiltInServingCaches(input).size(),
            EngineNames(CacheModel::kSpec).size() - 1);
  EXPECT_EQ(checking::CheckServeInput(input, checking::BuiltInServingCaches),
            std::nullopt);
}

TEST(ServingMutantsTest, NamesParseAndUnknownOnesAreRefused) {
  for (const std::string_view name : test::ServingMutantNames()) {
    EXPECT_EQ(test::ServingMutantName(test::ParseServingMutant(name)), name);
  }
  EXPECT_EQ(test::ServingMutantNames().size(), 7u);
  try {
    test::ParseServingMutant("x");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("serving-mutant-baseline, "
                                        "serving-mutant-spec-ignores-pins"));
  }
}

}  // namespace
}  // namespace kvprefix
