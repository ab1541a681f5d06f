// Checks that the workload generators (testing/generators.h) really produce
// the inputs that find bugs: matches ending at the root, at branch points,
// inside longer cached sequences and past every cached sequence, each often;
// duplicates, empty sequences, strict prefixes, extreme tokens and tokens
// equal in their low 16 bits. Fractions are measured over a fixed set of
// seeds, so the numbers are reproducible.
#include "testing/generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>

#include "reference/reference_trie.h"

namespace kvprefix::testing {
namespace {

constexpr int kCases = 400;
constexpr double kMinFraction = 0.10;

// Case i of the sample: seeds 1..kCases at sizes cycling over 0..99, as a
// default RapidCheck run does.
BatchCase SampleCase(int i) { return GenerateBatchCase(i + 1, i % 100); }

TEST(ClassifyMatchEndTest, SeedExample) {
  const Sequences cached = {{1, 2}, {1, 2, 3}, {4}, {5, 6}, {5, 7}};
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{1, 2, 9}, 2),
            MatchEnd::kInsideSequence);
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{4, 5}, 1),
            MatchEnd::kPastSequences);
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{9}, 0), MatchEnd::kRoot);
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{5, 8}, 1),
            MatchEnd::kBranchPoint);
}

TEST(GeneratorsTest, SameSeedSameCase) {
  const BatchCase first = GenerateBatchCase(7, 50);
  const BatchCase again = GenerateBatchCase(7, 50);
  EXPECT_EQ(first.cached_sequences, again.cached_sequences);
  EXPECT_EQ(first.requests, again.requests);
  const BatchCase other = GenerateBatchCase(8, 50);
  EXPECT_NE(first.cached_sequences, other.cached_sequences);
}

// Every class of match end is at least 10% of all requests generated, and
// at least 10% of first requests: the property BatchAgreesWithReference
// tags each case by its first request's class.
TEST(GeneratorsTest, MatchEndsAreSpread) {
  std::array<int, 4> all{};
  std::array<int, 4> first{};
  int requests = 0;
  for (int i = 0; i < kCases; ++i) {
    const BatchCase batch = SampleCase(i);
    ReferenceTrie trie;
    for (const Sequence& sequence : batch.cached_sequences) {
      trie.Insert(sequence);
    }
    ASSERT_FALSE(batch.requests.empty());
    for (const Sequence& request : batch.requests) {
      const std::size_t matched = trie.MatchPrefix(request).matched_length;
      const int end = static_cast<int>(
          ClassifyMatchEnd(batch.cached_sequences, request, matched));
      ++all[end];
      if (&request == &batch.requests.front()) ++first[end];
      ++requests;
    }
  }
  for (MatchEnd end : {MatchEnd::kRoot, MatchEnd::kPastSequences,
                       MatchEnd::kBranchPoint, MatchEnd::kInsideSequence}) {
    const double of_all =
        static_cast<double>(all[static_cast<int>(end)]) / requests;
    const double of_first =
        static_cast<double>(first[static_cast<int>(end)]) / kCases;
    std::cout << MatchEndName(end) << ": " << of_all * 100 << "% of "
              << requests << " requests, " << of_first * 100 << "% of "
              << kCases << " first requests\n";
    EXPECT_GE(of_all, kMinFraction) << MatchEndName(end);
    EXPECT_GE(of_first, kMinFraction) << MatchEndName(end);
  }
}

bool HasDuplicate(const Sequences& sequences) {
  const std::set<Sequence> distinct(sequences.begin(), sequences.end());
  return distinct.size() < sequences.size();
}

bool HasEmpty(const Sequences& sequences) {
  return std::any_of(sequences.begin(), sequences.end(),
                     [](const Sequence& s) { return s.empty(); });
}

bool HasStrictPrefixPair(const Sequences& sequences) {
  for (const Sequence& a : sequences) {
    for (const Sequence& b : sequences) {
      if (!a.empty() && a.size() < b.size() &&
          std::equal(a.begin(), a.end(), b.begin())) {
        return true;
      }
    }
  }
  return false;
}

std::set<Token> Tokens(const BatchCase& batch) {
  std::set<Token> tokens;
  for (const Sequences* list : {&batch.cached_sequences, &batch.requests}) {
    for (const Sequence& sequence : *list) {
      tokens.insert(sequence.begin(), sequence.end());
    }
  }
  return tokens;
}

bool HasExtremeToken(const BatchCase& batch) {
  const std::set<Token> tokens = Tokens(batch);
  return tokens.contains(std::numeric_limits<Token>::min()) ||
         tokens.contains(std::numeric_limits<Token>::max()) ||
         tokens.contains(-1);
}

bool HasLow16Collision(const BatchCase& batch) {
  std::set<std::uint16_t> low;
  for (Token token : Tokens(batch)) {
    if (!low.insert(static_cast<std::uint16_t>(token)).second) return true;
  }
  return false;
}

// Each bug-finding shape appears in at least 10% of cases.
TEST(GeneratorsTest, HardShapesAreFrequent) {
  struct Shape {
    const char* name;
    bool (*present)(const BatchCase&);
    int cases = 0;
  };
  Shape shapes[] = {
      {"duplicate cached sequences",
       [](const BatchCase& b) { return HasDuplicate(b.cached_sequences); }},
      {"empty sequence",
       [](const BatchCase& b) {
         return HasEmpty(b.cached_sequences) || HasEmpty(b.requests);
       }},
      {"cached sequence that is a strict prefix of another",
       [](const BatchCase& b) {
         return HasStrictPrefixPair(b.cached_sequences);
       }},
      {"INT32_MIN, INT32_MAX or -1", &HasExtremeToken},
      {"distinct tokens equal in their low 16 bits", &HasLow16Collision},
  };
  for (int i = 0; i < kCases; ++i) {
    const BatchCase batch = SampleCase(i);
    for (Shape& shape : shapes) shape.cases += shape.present(batch);
  }
  for (const Shape& shape : shapes) {
    const double fraction = static_cast<double>(shape.cases) / kCases;
    std::cout << shape.name << ": " << fraction * 100 << "% of cases\n";
    EXPECT_GE(fraction, kMinFraction) << shape.name;
  }
}

}  // namespace
}  // namespace kvprefix::testing
