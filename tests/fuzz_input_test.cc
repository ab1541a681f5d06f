// The differential fuzz inputs of the exported checking library: how bytes
// decode (the format fuzz/corpus/differential_fuzzer/ is written in), and
// the check a user's fuzz target calls.
#include "checking/fuzz_input.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checking/implemented_options.h"
#include "engines/registry.h"
#include "testing/mutants.h"
#include "testing/own_node_ids_engine.h"

namespace kvprefix {
namespace {

using checking::CheckFuzzInput;
using checking::DecodeFuzzInput;
using checking::FuzzInput;
using checking::Operation;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The input whose reads, in order, take `reads`: every read takes bytes
// from the end.
std::vector<std::uint8_t> FromReads(std::vector<std::uint8_t> reads) {
  std::reverse(reads.begin(), reads.end());
  return reads;
}

TEST(FuzzInputTest, EmptyInputIsUnboundedWithNoOperation) {
  const auto input = DecodeFuzzInput({});
  ASSERT_TRUE(input.has_value());
  EXPECT_FALSE(input->options.bounded());
  EXPECT_EQ(input->options.page_size, 1u);
  EXPECT_TRUE(input->operations.empty());
}

// The alphabet byte's high bits pick SPEC §9's options, valid for the
// model: bits 6-7 the model, bit 4 all-but-last, bit 5 on-allocate.
TEST(FuzzInputTest, AlphabetByteHighBitsPickTheModel) {
  struct Case {
    std::uint8_t alphabet;
    std::uint8_t cache;
    CacheModel model;
    MatchLimit limit;
    EvictionTrigger trigger;
    EvictionPolicy policy;
  };
  const Case cases[] = {
      {0x03, 0x04, CacheModel::kSpec, MatchLimit::kAll,
       EvictionTrigger::kAfterInsert, EvictionPolicy::kFifo},
      {0xD3, 0x00, CacheModel::kSpec, MatchLimit::kAllButLast,
       EvictionTrigger::kAfterInsert, EvictionPolicy::kLru},
      // vllm: all-but-last always, lru always, no trigger.
      {0x63, 0x04, CacheModel::kVllm, MatchLimit::kAllButLast,
       EvictionTrigger::kAfterInsert, EvictionPolicy::kLru},
      {0xB3, 0x04, CacheModel::kSglang, MatchLimit::kAllButLast,
       EvictionTrigger::kOnAllocate, EvictionPolicy::kFifo},
      {0x83, 0x00, CacheModel::kSglang, MatchLimit::kAll,
       EvictionTrigger::kAfterInsert, EvictionPolicy::kLru},
  };
  for (const Case& c : cases) {
    const auto input = DecodeFuzzInput(FromReads({c.alphabet, c.cache}));
    ASSERT_TRUE(input.has_value());
    EXPECT_EQ(input->options.model, c.model) << int{c.alphabet};
    EXPECT_EQ(input->options.match_limit, c.limit) << int{c.alphabet};
    EXPECT_EQ(input->options.trigger, c.trigger) << int{c.alphabet};
    EXPECT_EQ(input->options.policy, c.policy) << int{c.alphabet};
    EXPECT_FALSE(FindModelOptionsProblem(input->options, false));
  }
}

TEST(FuzzInputTest, DecodesCacheByteAndOperations) {
  const std::vector<std::uint8_t> bytes = FromReads({
      3,                       // alphabet 0..3
      0x0D,                    // bounded, fifo, page size 2
      7,                       // capacity 7
      0x10,                    // insert, 2 fresh tokens
      5, 0xE0,                 // 5 % 4 = 1, kFuzzExtremeTokens[0]
      0x0D,                    // match, derived, 1 fresh token
      1,                       // (one earlier operation: no index) cut 1
      0xFF, 0x80, 0, 0, 0x05,  // a raw int32: 0x80000005 + INT32_MIN = 5
  });
  const auto input = DecodeFuzzInput(bytes);
  ASSERT_TRUE(input.has_value());
  EXPECT_EQ(input->options.capacity, 7u);
  EXPECT_EQ(input->options.policy, EvictionPolicy::kFifo);
  EXPECT_EQ(input->options.page_size, 2u);
  ASSERT_EQ(input->operations.size(), 2u);
  EXPECT_EQ(input->operations[0].kind, Operation::Kind::kInsert);
  EXPECT_THAT(input->operations[0].tokens,
              ElementsAre(1, std::numeric_limits<Token>::min()));
  EXPECT_EQ(input->operations[1].kind, Operation::Kind::kMatch);
  EXPECT_THAT(input->operations[1].tokens, ElementsAre(1, 5));
}

TEST(FuzzInputTest, WideCapacityAndDerivedIndex) {
  const std::vector<std::uint8_t> bytes = FromReads({
      0,                 // alphabet {0}
      0x08,              // bounded, lru, page size 1
      0xFF, 0x01, 0x02,  // capacity 0x0102
      0x1A,              // access, 3 fresh tokens
      0, 0, 0xEC,        // 0, 0, 65536
      0x08,              // insert, 1 fresh token
      0xE4,              // -1
      0x07,              // access, derived, no fresh token
      0,                 // earlier operation 0 of 2
      2,                 // cut 2 % 4: its first 2 tokens
  });
  const auto input = DecodeFuzzInput(bytes);
  ASSERT_TRUE(input.has_value());
  EXPECT_EQ(input->options.capacity, 0x0102u);
  EXPECT_EQ(input->options.policy, EvictionPolicy::kLru);
  ASSERT_EQ(input->operations.size(), 3u);
  EXPECT_EQ(input->operations[0].kind, Operation::Kind::kAccess);
  EXPECT_THAT(input->operations[0].tokens, ElementsAre(0, 0, 65536));
  EXPECT_THAT(input->operations[1].tokens, ElementsAre(-1));
  EXPECT_EQ(input->operations[2].kind, Operation::Kind::kAccess);
  EXPECT_THAT(input->operations[2].tokens, ElementsAre(0, 0));
}

TEST(FuzzInputTest, LongInputIsNotDecoded) {
  const std::vector<std::uint8_t> longest(checking::kMaxFuzzInputBytes, 0x01);
  EXPECT_TRUE(DecodeFuzzInput(longest).has_value());
  const std::vector<std::uint8_t> longer(checking::kMaxFuzzInputBytes + 1,
                                         0x01);
  EXPECT_FALSE(DecodeFuzzInput(longer).has_value());
  // Every byte an operation (a match of no token): decoding stops at the
  // operation limit.
  EXPECT_EQ(DecodeFuzzInput(longest)->operations.size(),
            checking::kMaxFuzzOperations);
}

// The harness report's lines for an engine that matched 1 token where the
// reference matched none.
std::string MatchedOneInsteadOfNone(std::string_view engine) {
  return fmt::format(
      "expected (reference): (matched_length 0, cache_node 0)\n  actual ({}): "
      "(matched_length 1, cache_node 1)\n",
      engine);
}

// insert [65536], then match [0]: a trie keyed on 16 bits matches 1 token.
const std::vector<std::uint8_t> kToken16BitInput =
    FromReads({0, 0, 0x08, 0xEC, 0x09, 0xE5});

TEST(FuzzInputTest, CheckCatchesWrongEngineAndNamesEveryAnswer) {
  const auto report =
      CheckFuzzInput(kToken16BitInput, [](const CacheOptions& options) {
        std::vector<std::unique_ptr<PrefixIndex>> engines;
        engines.push_back(MakeEngine("hash", options));
        engines.push_back(test::MakeMutant(
            test::MutantName(test::MutantBug::kToken16Bit), options));
        return engines;
      });
  ASSERT_TRUE(report.has_value());
  EXPECT_THAT(*report, HasSubstr("engine 'mutant-token-16-bit' disagrees"));
  EXPECT_THAT(*report, HasSubstr("#1 match [0]\n"));
  EXPECT_THAT(*report,
              HasSubstr(MatchedOneInsteadOfNone("mutant-token-16-bit")));
  EXPECT_THAT(*report, HasSubstr("every engine's answer to the last "
                                 "operation:\n  reference: matched_length 0, "
                                 "cache_node 0\n  hash: matched_length 0, "
                                 "cache_node 0\n  mutant-token-16-bit: "
                                 "matched_length 1, cache_node 1\n"));
}

// Alphabet bit 3: every operation reads a namespace byte (SPEC §8.1);
// insert [1] in "lora-a", then match [1] in "salt-b", which must match
// nothing: a cache that ignores namespaces matches 1 token.
const std::vector<std::uint8_t> kTwoNamespacesInput = FromReads({
    0x09,        // alphabet {0, 1}, namespaces
    0,           // unbounded, page size 1
    0x08, 1, 1,  // insert, 1 fresh token, in kFuzzNamespaces[1]: [1]
    0x09, 2, 1,  // match, 1 fresh token, in kFuzzNamespaces[2]: [1]
});

TEST(FuzzInputTest, NamespacesAreDecodedAndFolded) {
  const auto input = DecodeFuzzInput(kTwoNamespacesInput);
  ASSERT_TRUE(input.has_value());
  ASSERT_EQ(input->operations.size(), 2u);
  EXPECT_EQ(input->operations[0].name_space, "lora-a");
  EXPECT_EQ(input->operations[1].name_space, "salt-b");
  EXPECT_THAT(input->operations[1].tokens, ElementsAre(1));
  // Folded for every engine: the correct ones and the namespace baseline,
  // which folds by itself, agree with the reference.
  EXPECT_EQ(CheckFuzzInput(kTwoNamespacesInput,
                           checking::NamedEngines({"hash", "radix"})),
            std::nullopt);
  const auto mutant = [](std::string_view name) {
    return [name](const CacheOptions& options) {
      std::vector<std::unique_ptr<PrefixIndex>> engines;
      engines.push_back(test::MakeMutant(name, options));
      return engines;
    };
  };
  EXPECT_EQ(
      CheckFuzzInput(kTwoNamespacesInput, mutant("mutant-namespace-baseline")),
      std::nullopt);
  const auto report =
      CheckFuzzInput(kTwoNamespacesInput, mutant("mutant-namespace-blind"));
  ASSERT_TRUE(report.has_value());
  EXPECT_THAT(*report, HasSubstr("#1 match [1] in \"salt-b\"\n"));
  EXPECT_THAT(*report,
              HasSubstr(MatchedOneInsteadOfNone("mutant-namespace-blind")));
  EXPECT_THAT(*report, HasSubstr("  mutant-namespace-blind: matched_length "
                                 "1, cache_node 1\n"));
}

TEST(FuzzInputTest, CheckPassesCorrectEngines) {
  EXPECT_EQ(CheckFuzzInput(kToken16BitInput,
                           checking::NamedEngines({"hash", "radix"})),
            std::nullopt);
}

TEST(FuzzInputTest, LengthsComparisonTakesACachesOwnNodeIds) {
  const checking::EngineFactory own_ids = [](const CacheOptions& options) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(std::make_unique<test::OwnNodeIdsEngine>(options));
    return engines;
  };
  const auto report = CheckFuzzInput(kToken16BitInput, own_ids);
  ASSERT_TRUE(report.has_value());
  EXPECT_THAT(*report, HasSubstr("actual (own-node-ids): insert returns node "
                                 "1001"));
  EXPECT_EQ(CheckFuzzInput(kToken16BitInput, own_ids,
                           {.comparison = checking::Comparison::kLengths}),
            std::nullopt);
  // A wrong length is still caught.
  const checking::EngineFactory wrong = [](const CacheOptions& options) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(test::MakeMutant(
        test::MutantName(test::MutantBug::kToken16Bit), options));
    return engines;
  };
  EXPECT_TRUE(CheckFuzzInput(kToken16BitInput, wrong,
                             {.comparison = checking::Comparison::kLengths})
                  .has_value());
}

TEST(FuzzInputTest, UnboundedCheckIgnoresCacheByte) {
  // capacity 0, so a bounded cache keeps nothing: an unbounded engine
  // answers match [1] with 1 token, and is right only if checked unbounded.
  const std::vector<std::uint8_t> bytes =
      FromReads({1, 0x08, 0, 0x08, 1, 0x09, 1});
  const checking::EngineFactory unbounded_trie = [](const CacheOptions&) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(MakeEngine("hash"));
    return engines;
  };
  EXPECT_TRUE(CheckFuzzInput(bytes, unbounded_trie).has_value());
  EXPECT_EQ(CheckFuzzInput(bytes, unbounded_trie, {.unbounded = true}),
            std::nullopt);
}

// The cache byte's policy number n = bit 2 + 2 * (bits 4-7) picks
// kEvictionPolicies[n % 3]: lru, fifo, lfu, then lru again.
TEST(FuzzInputTest, CacheByteNumbersEveryPolicy) {
  const std::vector<std::pair<std::uint8_t, EvictionPolicy>> bytes = {
      {0x00, EvictionPolicy::kLru},
      {0x04, EvictionPolicy::kFifo},
      {0x10, EvictionPolicy::kLfu},
      {0x14, EvictionPolicy::kLru}};
  for (const auto& [byte, policy] : bytes) {
    const auto input = DecodeFuzzInput(FromReads({0, byte}));
    ASSERT_TRUE(input.has_value());
    EXPECT_EQ(input->options.policy, policy) << int{byte};
  }
}

// A cache that does not implement a policy refuses it, as MakeEngine does
// for a plugin whose create answers KVPREFIX_INVALID_ARGUMENT: such an input
// is skipped, not a finding, while the same operations under a policy the
// cache takes are checked (and this cache's bug found).
TEST(FuzzInputTest, InputsWhoseOptionsAnEngineRefusesAreSkipped) {
  const std::vector<std::uint8_t> lfu =
      FromReads({0, 0x10, 0x08, 0xEC, 0x09, 0xE5});
  ASSERT_EQ(DecodeFuzzInput(lfu)->options.policy, EvictionPolicy::kLfu);
  const checking::EngineFactory refuses_lfu = [](const CacheOptions& options) {
    if (options.policy == EvictionPolicy::kLfu) {
      throw std::invalid_argument("lru and fifo only");
    }
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(test::MakeMutant(
        test::MutantName(test::MutantBug::kToken16Bit), options));
    return engines;
  };
  EXPECT_EQ(CheckFuzzInput(lfu, refuses_lfu), std::nullopt);
  EXPECT_TRUE(CheckFuzzInput(kToken16BitInput, refuses_lfu).has_value());
}

// The fuzzer said nothing of the inputs it skipped, and could not be told
// what a cache implements: the tally counts what was checked and skipped
// (and why), and `implemented` makes every input one the cache takes.
TEST(FuzzInputTest, TallyCountsSkippedInputsAndImplementedOptionsAvoidThem) {
  const checking::EngineFactory lru_page_1 = [](const CacheOptions& options) {
    if (options.policy != EvictionPolicy::kLru || options.page_size != 1) {
      throw std::invalid_argument("lru and page size 1 only");
    }
    return checking::NamedEngines({"radix"})(options);
  };
  const auto run = [&](const checking::ImplementedOptions& implemented) {
    checking::FuzzTally tally;
    std::mt19937_64 random(7);
    for (int i = 0; i < 200; ++i) {
      std::vector<std::uint8_t> bytes(random() % 300);
      for (std::uint8_t& byte : bytes) byte = random();
      EXPECT_EQ(CheckFuzzInput(bytes, lru_page_1,
                               {.implemented = implemented, .tally = &tally}),
                std::nullopt);
    }
    CheckFuzzInput(std::vector<std::uint8_t>(checking::kMaxFuzzInputBytes + 1),
                   lru_page_1, {.implemented = implemented, .tally = &tally});
    return tally;
  };
  const checking::FuzzTally all = run({});
  EXPECT_GT(all.skipped(), 100u);
  EXPECT_EQ(all.checked() + all.skipped(), 201u);
  EXPECT_THAT(all.Format("t"),
              HasSubstr("refused, the first: lru and page size 1 only; 1 "
                        "longer than 16384 bytes)"));
  const checking::FuzzTally restricted = run(checking::ParseImplementedOptions(
      {.models = {"spec"}, .policies = {"lru"}, .page_sizes = {"1"}}));
  EXPECT_EQ(restricted.checked(), 200u);
  EXPECT_EQ(restricted.skipped(), 1u);  // the long one only
  EXPECT_EQ(restricted.Format("t"),
            "t: checked 200 inputs, skipped 1 (0 refused; 1 longer than "
            "16384 bytes)");
}

TEST(ImplementedOptionsTest, RestrictKeepsToTheListsAndChangesOnlyTheRest) {
  const checking::ImplementedOptions implemented =
      checking::ParseImplementedOptions({.models = {"spec,sglang"},
                                         .policies = {"fifo"},
                                         .page_sizes = {"1", "4"},
                                         .capacities = {"bounded"}});
  EXPECT_EQ(checking::ImplementedOptionsFlags(implemented),
            "--models spec,sglang --policies fifo --page-sizes 1,4 "
            "--capacities bounded");
  const SequenceList requests{{1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 9}};
  for (std::uint64_t bits = 0; bits < 64; ++bits) {
    CacheOptions options{.model = CacheModel::kVllm,
                         .match_limit = MatchLimit::kAllButLast};
    checking::RestrictOptions(implemented, bits * 0x9E3779B97F4A7C15ull,
                              requests, options);
    EXPECT_TRUE(checking::Implements(implemented, options)) << bits;
    EXPECT_EQ(FindModelOptionsProblem(options, false), std::nullopt);
    EXPECT_EQ(options.policy, EvictionPolicy::kFifo);
    EXPECT_TRUE(options.bounded());
  }
  // What is listed already stays as it is.
  CacheOptions listed{
      .capacity = 3, .policy = EvictionPolicy::kFifo, .page_size = 4};
  const CacheOptions before = listed;
  checking::RestrictOptions(implemented, 5, requests, listed);
  EXPECT_EQ(listed, before);
}

TEST(ImplementedOptionsTest, BadListsAreRefusedNamingTheOption) {
  const auto problem = [](const checking::ImplementedOptionValues& values) {
    try {
      checking::ParseImplementedOptions(values);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_EQ(problem({.policies = {"lr"}}),
            "--policies: unknown policy 'lr' (expected 'lru', 'fifo' or "
            "'lfu')");
  EXPECT_EQ(problem({.page_sizes = {"1,,2"}}),
            "--page-sizes: item 2 is empty (a comma-separated list, e.g. 1,2)");
  EXPECT_EQ(problem({.page_sizes = {"0"}}),
            "--page-sizes: '0' is not a page size (an integer from 1 to "
            "2147483647)");
  EXPECT_EQ(problem({.models = {"vllm"}, .policies = {"fifo"}}),
            "--models: model \"vllm\" takes the policies lru only (SPEC §9.4), "
            "which --policies leaves out");
  EXPECT_EQ(problem({.models = {"vllm"}, .match_limits = {"all"}}),
            "--models: model \"vllm\" takes the match limits all-but-last "
            "only (SPEC §9.4), which --match-limits leaves out");
  EXPECT_EQ(problem({.capacities = {"some"}}),
            "--capacities: 'some' is not unbounded, bounded or a capacity (an "
            "integer from 0 to 18446744073709551614)");
}

TEST(FuzzInputTest, ParsesEngineLists) {
  EXPECT_THAT(checking::ParseEngineList("hash"), ElementsAre("hash"));
  EXPECT_THAT(checking::ParseEngineList("hash,radix,hash"),
              ElementsAre("hash", "radix", "hash"));
  EXPECT_THAT(checking::ParseEngineList("plugin:/a/b.so"),
              ElementsAre("plugin:/a/b.so"));
  for (const char* bad : {"", ",", "hash,", ",hash", "hash,,radix"}) {
    EXPECT_THROW(checking::ParseEngineList(bad), std::invalid_argument) << bad;
  }
}

TEST(FuzzInputTest, NamedEnginesThrowsOnUnknownName) {
  const checking::EngineFactory factory = checking::NamedEngines({"nope"});
  EXPECT_THROW(factory(CacheOptions{}), std::invalid_argument);
  const auto engines = checking::NamedEngines({"radix", "hash"})({});
  ASSERT_EQ(engines.size(), 2u);
  EXPECT_EQ(engines[0]->name(), "radix");
  EXPECT_EQ(engines[1]->name(), "hash");
}

}  // namespace
}  // namespace kvprefix
