// Seeded randomized differential test: every engine against the reference,
// through the one differential harness, on interleaved inserts and matches
// built to share prefixes. The seed is printed; rerun a failure with
// KVPREFIX_TEST_SEED=<seed>. (The RapidCheck suite in tests/property/ does
// the same with shrinking; this test is the plain, always-on version.)
#include "checking/differential.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <random>

#include "testing/shared_prefix_sequences.h"

namespace kvprefix {
namespace {

using checking::DifferentialChecker;
using checking::Operation;

std::uint64_t TestSeed() {
  if (const char* env = std::getenv("KVPREFIX_TEST_SEED")) {
    return std::strtoull(env, nullptr, 10);
  }
  return std::random_device{}();
}

// A variant of `base` that a real client would send: the same, a prefix, an
// extension, or a near-copy with one token changed (sometimes to an extreme).
std::vector<Token> Variant(TokenSpan base, std::mt19937_64& random) {
  std::vector<Token> tokens(base.begin(), base.end());
  static constexpr Token kExtremes[] = {0, -1, INT32_MIN, INT32_MAX, 65536};
  switch (random() % 4) {
    case 0:
      break;
    case 1:
      tokens.resize(tokens.empty() ? 0 : random() % tokens.size());
      break;
    case 2:
      for (int i = random() % 5; i >= 0; --i) tokens.push_back(random() % 8);
      break;
    default:
      if (!tokens.empty()) {
        tokens[random() % tokens.size()] =
            random() % 2 ? kExtremes[random() % 5] : random() % 8;
      }
  }
  return tokens;
}

TEST(DifferentialTest, EveryEngineEqualsTheReferenceOnRandomInterleavings) {
  const std::uint64_t seed = TestSeed();
  std::printf("KVPREFIX_TEST_SEED=%llu\n",
              static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  for (int round = 0; round < 200; ++round) {
    const SequenceList base = test::SharedPrefixSequences(
        random(), 1 + random() % 60, 1 + random() % 40, 2 + random() % 20);
    DifferentialChecker checker;
    for (int step = 0; step < 300; ++step) {
      const auto kind = random() % 3 == 0 ? Operation::Kind::kInsert
                                          : Operation::Kind::kMatch;
      auto report =
          checker.Apply({kind, Variant(base[random() % base.size()], random)});
      ASSERT_FALSE(report.has_value())
          << "KVPREFIX_TEST_SEED=" << seed << " round " << round << "\n"
          << *report;
    }
  }
}

}  // namespace
}  // namespace kvprefix
