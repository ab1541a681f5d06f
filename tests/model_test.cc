// The models of SPEC §9 (vllm, sglang) and the match limit, for every engine
// that implements each: the shared examples of tests/data/cases/models/
// (answers the real vLLM and SGLang code gave), the documents §9.4 refuses
// (tests/data/cases/models-errors/), the SPEC's own examples, and the
// registry refusing a model an engine does not implement.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engines/all_engines.h"
#include "engines/registry.h"
#include "io/input_error.h"
#include "io/replay_document.h"
#include "kvprefix/replay.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

using Tokens = std::vector<Token>;

using test::ReplayAnswers;

SequenceList ToList(const std::vector<Tokens>& requests) {
  SequenceList list;
  for (const Tokens& request : requests) list.Append(request);
  return list;
}

// Every shared model case, on every engine of its model.
TEST(ModelCasesTest, EveryEngineOfTheModelGivesTheRealSystemsAnswers) {
  const std::vector<ReplayCaseFile> cases = test::LoadModelCases();
  ASSERT_EQ(cases.size(), 30u);
  std::set<CacheModel> models;
  for (const ReplayCaseFile& shared : cases) {
    const CacheOptions& options = shared.input.options;
    models.insert(options.model);
    for (const std::string_view name : EngineNames(options.model)) {
      EXPECT_EQ(ReplayAnswers(name, options, shared.input.requests),
                shared.expected)
          << shared.name << " on " << name;
    }
  }
  EXPECT_EQ(models.size(), 3u);  // spec, vllm and sglang all appear
}

// The documents SPEC §9.4 refuses: an InputError whose location names the
// member.
TEST(ModelCasesTest, TheRefusedDocumentsNameTheMember) {
  const std::string dir = test::SharedCasesDir() + "/models-errors";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    // The file's "document" member, re-read alone.
    const std::string whole = text.str();
    const std::size_t start = whole.find('{', 1);
    const std::size_t end = whole.find('}', start);
    const std::string document = whole.substr(start, end - start + 1);
    const std::string member =
        entry.path().stem() == "vllm-fifo" ? ".policy" : ".trigger";
    try {
      ParseReplayDocument(document);
      ADD_FAILURE() << entry.path() << " was accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.location(), "$" + member) << entry.path();
    }
    ++files;
  }
  EXPECT_EQ(files, 2);
}

CacheOptions Vllm(std::uint64_t capacity = kUnbounded) {
  return {.capacity = capacity,
          .model = CacheModel::kVllm,
          .match_limit = MatchLimit::kAllButLast};
}
CacheOptions Sglang(std::uint64_t capacity = kUnbounded) {
  return {.capacity = capacity, .model = CacheModel::kSglang};
}

// SPEC §9.4's examples, P = 1.
TEST(ModelExamplesTest, TheSpecsExamples) {
  const auto expect = [](const CacheOptions& options,
                         const std::vector<Tokens>& requests,
                         const std::vector<Match>& answers) {
    for (const std::string_view name : EngineNames(options.model)) {
      EXPECT_EQ(ReplayAnswers(name, options, ToList(requests)), answers)
          << name;
    }
  };
  // "vllm, [1,2] twice: (0,0) (1,1)"
  expect(Vllm(), {{1, 2}, {1, 2}}, {{0, 0}, {1, 1}});
  // "C=2, [1] [2] [2] [1,1]: all (0,0), the recomputed [2] took [1]'s block"
  expect(Vllm(2), {{1}, {2}, {2}, {1, 1}}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}});
  // "sglang, C=4, [1,2] [5] [1,9] [7] [5]: (0,0) (0,0) (1,3) (0,0) (0,0)"
  expect(Sglang(4), {{1, 2}, {5}, {1, 9}, {7}, {5}},
         {{0, 0}, {0, 0}, {1, 3}, {0, 0}, {0, 0}});
  // "unbounded, [1,2,3] [1,2,4] [1,5]: (0,0) (2,2) (1,4)"
  expect(Sglang(), {{1, 2, 3}, {1, 2, 4}, {1, 5}}, {{0, 0}, {2, 2}, {1, 4}});
}

// The match limit with model spec shortens step 1 only: the whole request is
// still inserted, so a repeat of [1,2] matches 1 token, and [1,2,3] then 2.
TEST(ModelExamplesTest, SpecAllButLastInsertsTheWholeRequest) {
  for (const std::string_view name : EngineNames(CacheModel::kSpec)) {
    for (const std::uint64_t capacity : {kUnbounded, std::uint64_t{8}}) {
      const CacheOptions options{.capacity = capacity,
                                 .match_limit = MatchLimit::kAllButLast};
      EXPECT_EQ(
          ReplayAnswers(name, options, ToList({{1, 2}, {1, 2}, {1, 2, 3}, {}})),
          (std::vector<Match>{{0, 0}, {1, 1}, {2, 2}, {0, 0}}))
          << name << " capacity " << capacity;
    }
  }
}

// An engine without a model refuses it by name, listing the engines that
// implement it; the registry applies SPEC §9.4's rules too.
TEST(ModelRegistryTest, AnEngineRefusesAModelItDoesNotImplement) {
  try {
    MakeEngine("double-array", Vllm());
    ADD_FAILURE() << "double-array accepted model vllm";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(
        std::string(error.what()),
        "engine 'double-array' does not implement model 'vllm' "
        "(engines that do: " +
            [] {
              std::string names;
              for (const auto name : EngineNames(CacheModel::kVllm)) {
                names += (names.empty() ? "" : ", ") + std::string(name);
              }
              return names;
            }() +
            ")");
  }
  CacheOptions fifo = Vllm(4);
  fifo.policy = EvictionPolicy::kFifo;
  EXPECT_THROW(MakeEngine("reference", fifo), std::invalid_argument);
  CacheOptions all = Vllm(4);
  all.match_limit = MatchLimit::kAll;
  EXPECT_THROW(MakeEngine("reference", all), std::invalid_argument);
  CacheOptions lfu = Sglang(4);
  lfu.policy = EvictionPolicy::kLfu;
  EXPECT_THROW(MakeEngine("reference", lfu), std::invalid_argument);
  EXPECT_EQ(EngineNames(CacheModel::kVllm).front(), "reference");
  EXPECT_EQ(EngineNames(CacheModel::kSglang).front(), "reference");
}

}  // namespace
}  // namespace kvprefix
