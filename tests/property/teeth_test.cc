// Teeth: the property suite must catch every mutant of testing/mutants.h.
//
// For each mutant, every property of property_checks.h runs with
// RapidCheck's configured number of cases (100 by default); at least one
// must find a counterexample, and every counterexample must shrink to at
// most kMaxSequences sequences of at most kMaxTokens tokens. The shrunk
// counterexamples are printed, so the log shows what each bug looks like.
//
// The seed is fixed (kTeethSeed) so ctest is reproducible; set
// RC_PARAMS="seed=..." to try another (scripts/property-campaign.sh does).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "testing/mutants.h"
#include "tests/property/property_checks.h"

namespace kvprefix::testing {
namespace {

constexpr std::uint64_t kTeethSeed = 20261129;
constexpr std::size_t kMaxSequences = 4;
constexpr std::size_t kMaxTokens = 4;

rc::detail::TestParams TeethParams() {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* rc_params = std::getenv("RC_PARAMS");
  if (rc_params == nullptr ||
      std::string_view(rc_params).find("seed=") == std::string_view::npos) {
    params.seed = kTeethSeed;
  }
  return params;
}

class TeethTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(TeethTest, SuiteFindsSmallCounterexample) {
  const std::string_view mutant = GetParam();
  const rc::detail::TestParams params = TeethParams();
  std::string caught_by;
  for (const Property& property : AllProperties()) {
    // The last input a property fails on is the shrunk counterexample:
    // shrinking accepts every failing candidate and goes on from it.
    InputShape counterexample;
    const auto run = [&] {
      InputShape shape;
      try {
        property.check({mutant}, &shape);
      } catch (...) {
        counterexample = shape;
        throw;
      }
    };
    const std::string id =
        std::string(mutant) + "/" + std::string(property.name);
    const auto result = rc::detail::checkTestable(
        run, rc::detail::TestMetadata{id, id}, params);
    if (!result.is<rc::detail::FailureResult>()) continue;
    caught_by += " " + std::string(property.name);
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    std::cout << "=== " << id << " (" << counterexample.sequences
              << " sequences, longest " << counterexample.max_tokens
              << " tokens)\n"
              << message.str() << "\n";
    EXPECT_LE(counterexample.sequences, kMaxSequences) << message.str();
    EXPECT_LE(counterexample.max_tokens, kMaxTokens) << message.str();
  }
  std::cout << mutant << " caught by:" << caught_by << "\n";
  EXPECT_FALSE(caught_by.empty())
      << "no property finds a counterexample for " << mutant << " (seed "
      << params.seed << ", " << params.maxSuccess << " cases)";
}

INSTANTIATE_TEST_SUITE_P(
    Mutants, TeethTest, ::testing::ValuesIn(MutantNames()),
    [](const ::testing::TestParamInfo<std::string_view>& info) {
      std::string name(info.param);
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name;
    });

// The mutants' correct baseline passes every property, so each mutant's
// failures above come from its bug alone.
TEST(TeethTest, BaselinePassesEveryProperty) {
  for (const Property& property : AllProperties()) {
    const auto run = [&] {
      InputShape shape;
      property.check({MutantName(MutantBug::kNone)}, &shape);
    };
    const auto result = rc::detail::checkTestable(
        run, rc::detail::TestMetadata{}, TeethParams());
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    EXPECT_TRUE(result.is<rc::detail::SuccessResult>())
        << property.name << ": " << message.str();
  }
}

}  // namespace
}  // namespace kvprefix::testing
