// A user's GoogleTest suite checking their own cache (my_trie.h) against
// kvprefix's reference through the installed checking library: generated
// batch jobs (SPEC §2) and generated online streams of inserts, matches and
// accesses, the fuzz target's inputs (SPEC §3). The correct trie must pass;
// the variant with a bug must be caught, and the report must name the
// request, the expected and the actual answer (it is printed, for the log).
#include "my_trie.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "checking/differential.h"
#include "checking/fuzz_input.h"
#include "checking/implemented_options.h"
#include "checking/random_input.h"
#include "kvprefix/prefix_index.h"
#include "my_lru_trie.h"

namespace {

using kvprefix::checking::DifferentialChecker;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr int kSeeds = 300;

// Engines for the harness: the trie under test, wrapped as kvprefix's
// run-time engine interface.
template <typename Trie>
std::vector<std::unique_ptr<kvprefix::PrefixIndex>> Engines(
    const kvprefix::CacheOptions& = {}) {
  std::vector<std::unique_ptr<kvprefix::PrefixIndex>> engines;
  engines.push_back(std::make_unique<kvprefix::EngineAdapter<Trie>>());
  return engines;
}

// The first disagreement on generated batch jobs, seeds 0 .. kSeeds - 1 at
// sizes 1 to 100.
template <typename Trie>
std::optional<std::string> CheckBatches() {
  for (int seed = 0; seed < kSeeds; ++seed) {
    DifferentialChecker checker(Engines<Trie>());
    if (auto report = checker.ApplyBatch(
            kvprefix::checking::RandomBatchInput(seed, 1 + seed % 100))) {
      return "seed " + std::to_string(seed) + ": " + *report;
    }
  }
  return std::nullopt;
}

// The first disagreement on online operation streams decoded from random
// bytes (the fuzz target's inputs), checked unbounded: the trie never
// evicts.
template <typename Trie>
std::optional<std::string> CheckOperationStreams() {
  std::mt19937_64 random(1);
  for (int run = 0; run < kSeeds; ++run) {
    std::vector<std::uint8_t> bytes(random() % 512);
    for (std::uint8_t& byte : bytes) byte = random();
    if (auto report = kvprefix::checking::CheckFuzzInput(bytes, Engines<Trie>,
                                                         {.unbounded = true})) {
      return report;
    }
  }
  return std::nullopt;
}

// Checks MyLruTrie, a cache of lru and page size 1 only, on the fuzz
// target's inputs (random bytes, every option), the options made ones it
// takes when `implemented` lists them; prints and returns what was checked
// and skipped.
kvprefix::checking::FuzzTally CheckLruTrie(
    const kvprefix::checking::ImplementedOptions& implemented) {
  kvprefix::checking::FuzzTally tally;
  std::mt19937_64 random(1);
  for (int run = 0; run < kSeeds; ++run) {
    std::vector<std::uint8_t> bytes(random() % 512);
    for (std::uint8_t& byte : bytes) byte = random();
    const auto report = kvprefix::checking::CheckFuzzInput(
        bytes,
        [](const kvprefix::CacheOptions& options) {
          std::vector<std::unique_ptr<kvprefix::PrefixIndex>> engines;
          engines.push_back(
              std::make_unique<kvprefix::EngineAdapter<MyLruTrie>>(options));
          return engines;
        },
        {.implemented = implemented, .tally = &tally});
    EXPECT_EQ(report, std::nullopt) << *report;
  }
  std::cout << tally.Format("my_lru_trie") << "\n";
  return tally;
}

TEST(MyLruTrieTest, ChecksOnlyTheOptionsItImplements) {
  const kvprefix::checking::FuzzTally tally = CheckLruTrie(
      kvprefix::checking::ParseImplementedOptions({.models = {"spec"},
                                                   .match_limits = {"all"},
                                                   .policies = {"lru"},
                                                   .page_sizes = {"1"}}));
  EXPECT_EQ(tally.checked(), kSeeds);
  EXPECT_EQ(tally.skipped(), 0);
}

TEST(MyLruTrieTest, WhatItRefusesIsSkippedAndCounted) {
  const kvprefix::checking::FuzzTally tally = CheckLruTrie({});
  EXPECT_GT(tally.skipped(), 0);
  EXPECT_GT(tally.checked(), 0);
  EXPECT_EQ(tally.checked() + tally.skipped(), kSeeds);
  EXPECT_THAT(tally.Format("my_lru_trie"),
              HasSubstr("refused, the first: my-lru-trie implements the "
                        "policy lru and page size 1 only"));
}

TEST(MyTrieTest, AgreesWithTheReferenceOnGeneratedBatches) {
  const auto report = CheckBatches<MyTrie<false>>();
  EXPECT_EQ(report, std::nullopt) << *report;
}

TEST(MyTrieTest, AgreesWithTheReferenceOnOperationStreams) {
  const auto report = CheckOperationStreams<MyTrie<false>>();
  EXPECT_EQ(report, std::nullopt) << *report;
}

TEST(MyTrieTest, SixteenBitVariantIsCaughtOnGeneratedBatches) {
  const auto report = CheckBatches<MyTrie<true>>();
  ASSERT_TRUE(report.has_value());
  std::cout << *report;
  EXPECT_THAT(
      *report,
      HasSubstr("engine 'my-trie-16-bit' disagrees with the reference"));
  // The operation that disagreed (last of those listed), the reference's
  // answer and the trie's.
  EXPECT_THAT(*report, MatchesRegex("(.|\n)*  #[0-9]+ (insert|match) "
                                    "\\[[^\n]*\\]\n"
                                    "  expected \\(reference\\): [^\n]+\n"
                                    "  actual \\(my-trie-16-bit\\): "
                                    "[^\n]+\n"));
}

TEST(MyTrieTest, SixteenBitVariantIsCaughtOnOperationStreams) {
  const auto report = CheckOperationStreams<MyTrie<true>>();
  ASSERT_TRUE(report.has_value());
  std::cout << *report;
  EXPECT_THAT(*report, HasSubstr("engine 'my-trie-16-bit' disagrees"));
  EXPECT_THAT(*report, HasSubstr("every engine's answer to the last "
                                 "operation:\n  reference: "));
}

}  // namespace
