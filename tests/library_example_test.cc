// The README's library example, compiled and checked, so the README cannot
// drift from the API.
#include <gtest/gtest.h>

#include <vector>

#include "engines/registry.h"
#include "kvprefix/batch.h"
#include "optimized/radix_trie.h"

namespace kvprefix {
namespace {

TEST(LibraryExampleTest, ReadmeExampleGivesTheSeedAnswers) {
  kvprefix::RadixTrie index;
  index.Insert(std::vector<kvprefix::Token>{1, 2, 3});
  kvprefix::Match m = index.MatchPrefix(std::vector<kvprefix::Token>{1, 2, 9});
  EXPECT_EQ(m.matched_length, 2u);
  EXPECT_EQ(m.cache_node, 2u);

  kvprefix::SequenceList cached = {{1, 2}, {1, 2, 3}, {4}};
  kvprefix::SequenceList requests = {{1, 2, 9}, {4, 5}, {5}};
  auto engine = kvprefix::MakeEngine("double-array");
  std::vector<kvprefix::Match> matches =
      kvprefix::FindPrefixMatches(*engine, cached, requests);
  EXPECT_EQ(matches, (std::vector<Match>{{2, 2}, {1, 4}, {0, 0}}));
}

TEST(LibraryExampleTest, UnknownEngineNamesTheValidOnes) {
  try {
    MakeEngine("btree");
    FAIL() << "MakeEngine accepted an unknown name";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "unknown engine 'btree' (available: reference, hash, "
                 "double-array, radix, or plugin:PATH)");
  }
}

}  // namespace
}  // namespace kvprefix
