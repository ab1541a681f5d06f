// Teeth: the property suite must catch every mutant of testing/mutants.h,
// SPEC §10's serving property every serving mutant of
// testing/serving_mutants.h, and SPEC §11's decision-for-decision check
// (checking::CompareRouter, as router_check_properties_test runs it) every
// routing mutant of testing/routing_mutants.h.
//
// For each mutant, every property of property_checks.h that applies to it
// (an index mutant: AllProperties(); a cache mutant, whose bug needs a
// capacity or pages: CacheProperties(); an LRU curve mutant:
// CurveProperties(), whose correct curves engine_properties_test checks)
// runs with RapidCheck's configured
// number of cases (100 by default); at least one must find a counterexample
// that shrinks to at most kMaxSequences sequences (operations) of at most
// kMaxTokens tokens. Every shrunk counterexample is
// printed, so the log shows what each bug looks like and which properties
// catch it. (The stateful property's shrinks can stop at 5-6 tokens: its
// commands derive from earlier ones, so shortening one alone loses the bug;
// in 40 seeds every mutant still had a small counterexample elsewhere.)
//
// The seed is fixed (kTeethSeed) so ctest is reproducible; set
// RC_PARAMS="seed=..." to try another (scripts/property_campaign.sh does).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/detail/TestListenerAdapter.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "checking/routing_check.h"
#include "checking/serving_check.h"
#include "testing/generators.h"
#include "testing/mutants.h"
#include "testing/property_checks.h"
#include "testing/routing_mutants.h"
#include "testing/serving_mutants.h"

namespace kvprefix::test {
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

// Checks `run` like RC_GTEST_PROP does, but with a silent listener: the
// failures a mutant is expected to cause must not reach RapidCheck's global
// listener, which would print them as reproducible failures at exit.
template <typename Testable>
rc::detail::TestResult Check(const Testable& run, std::string_view id,
                             const rc::detail::TestParams& params) {
  rc::detail::TestListenerAdapter silent;
  return rc::detail::checkTestable(
      run, rc::detail::TestMetadata{std::string(id), std::string(id)}, params,
      silent);
}

bool IsCacheMutant(std::string_view name) {
  const std::vector<std::string_view> cache = CacheMutantNames();
  return std::find(cache.begin(), cache.end(), name) != cache.end() ||
         name == MutantCacheName(MutantCacheBug::kNone);
}

bool IsCurveMutant(std::string_view name) {
  const std::vector<std::string_view> curves = CurveMutantNames();
  return std::find(curves.begin(), curves.end(), name) != curves.end();
}

// The properties that apply to `mutant`.
const std::vector<Property>& PropertiesFor(std::string_view mutant) {
  if (IsCurveMutant(mutant)) return CurveProperties();
  return IsCacheMutant(mutant) ? CacheProperties() : AllProperties();
}

class TeethTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(TeethTest, SuiteFindsSmallCounterexample) {
  const std::string_view mutant = GetParam();
  const rc::detail::TestParams params = TeethParams();
  std::string caught_by;
  bool small_counterexample = false;
  for (const Property& property : PropertiesFor(mutant)) {
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
    const std::string id = fmt::format("{}/{}", mutant, property.name);
    const auto result = Check(run, id, params);
    if (!result.is<rc::detail::FailureResult>()) continue;
    caught_by += fmt::format(" {}", property.name);
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    std::cout << "=== " << id << " (" << counterexample.sequences
              << " sequences, longest " << counterexample.max_tokens
              << " tokens)\n"
              << message.str() << "\n";
    small_counterexample |= counterexample.sequences <= kMaxSequences &&
                            counterexample.max_tokens <= kMaxTokens;
  }
  std::cout << mutant << " caught by:" << caught_by << "\n";
  EXPECT_FALSE(caught_by.empty())
      << "no property finds a counterexample for " << mutant << " (seed "
      << params.seed << ", " << params.maxSuccess << " cases)";
  EXPECT_TRUE(small_counterexample)
      << "no counterexample for " << mutant << " shrinks to " << kMaxSequences
      << " sequences of " << kMaxTokens << " tokens (log above)";
}

std::string TestName(const ::testing::TestParamInfo<std::string_view>& info) {
  std::string name(info.param);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Mutants, TeethTest, ::testing::ValuesIn(MutantNames()),
                         TestName);
// The LRU curve's mutants, caught by CurveProperties().
INSTANTIATE_TEST_SUITE_P(CurveMutants, TeethTest,
                         ::testing::ValuesIn(CurveMutantNames()), TestName);

// `property` checked on the one engine `engine` with TeethParams().
rc::detail::TestResult CheckOn(const Property& property,
                               std::string_view engine) {
  const auto run = [&] {
    InputShape shape;
    property.check({engine}, &shape);
  };
  return Check(run, property.name, TeethParams());
}

// The mutants' correct baselines pass every property, so each mutant's
// failures above come from its bug alone.
TEST(TeethTest, BaselinesPassEveryProperty) {
  for (const std::string_view baseline :
       {MutantName(MutantBug::kNone), MutantCacheName(MutantCacheBug::kNone)}) {
    for (const Property& property : PropertiesFor(baseline)) {
      const auto result = CheckOn(property, baseline);
      std::ostringstream message;
      rc::detail::printResultMessage(result, message);
      EXPECT_TRUE(result.is<rc::detail::SuccessResult>())
          << baseline << " " << property.name << ": " << message.str();
    }
  }
}

// SPEC §10's serving property (checking::CheckServeInput: the whole answer
// is the reference's and the rules of §10 hold, as serving_properties_test
// and the serving fuzz target check them) on GenServeInput's documents,
// moved to the model the mutant's bug shows in, with the mutant of
// testing/serving_mutants.h as the one engine under test (a worker
// mutant's: the reference replayed under the rules it breaks).
rc::detail::TestResult CheckServing(ServingBug bug) {
  const auto make_mutant = [bug](const ServeInput& input) {
    std::vector<std::unique_ptr<ServingCache>> caches;
    caches.push_back(MakeServingMutant(bug, input.replay.options));
    return caches;
  };
  // Moved inside the generator, so that RapidCheck prints the document
  // checked.
  const auto documents = rc::gen::map(GenServeInput(), [bug](ServeInput input) {
    input.replay.options = ServingMutantOptions(bug, input.replay.options);
    return input;
  });
  const auto run = [&] {
    const ServeInput input = *documents;
    if (const auto report = checking::CheckServeInput(
            input, make_mutant, ServingMutantReplay(bug))) {
      RC_FAIL(*report);
    }
  };
  return Check(run, ServingMutantName(bug), TeethParams());
}

class ServingTeethTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(ServingTeethTest, ServingPropertyFindsCounterexample) {
  const auto result = CheckServing(ParseServingMutant(GetParam()));
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  std::cout << "=== " << GetParam() << "\n" << message.str() << "\n";
  EXPECT_TRUE(result.is<rc::detail::FailureResult>())
      << "the serving property finds no counterexample for " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(ServingMutants, ServingTeethTest,
                         ::testing::ValuesIn(ServingMutantNames()), TestName);

TEST(ServingTeethTest, BaselinePassesTheServingProperty) {
  const auto result = CheckServing(ServingBug::kNone);
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  EXPECT_TRUE(result.is<rc::detail::SuccessResult>()) << message.str();
}

// The memory property catches an engine whose memory grows past its
// BytesPerNodeBound (for mutant-fat-node, radix plus a 72-byte record per
// node ID: 64 bytes per node unbounded, 104 as a cache), and passes radix
// itself. Its counterexamples are large by nature (at least kMemoryMinNodes
// nodes), so they are not held to the small-case bound.
TEST(TeethTest, MemoryPropertyCatchesFatNodes) {
  for (std::string_view mutant : MemoryMutantNames()) {
    for (const Property& property : MemoryProperties()) {
      const auto result = CheckOn(property, mutant);
      std::ostringstream message;
      rc::detail::printResultMessage(result, message);
      std::cout << "=== " << mutant << "/" << property.name << "\n"
                << message.str() << "\n";
      EXPECT_TRUE(result.is<rc::detail::FailureResult>())
          << property.name << " passes " << mutant;
    }
  }
  for (const Property& property : MemoryProperties()) {
    EXPECT_TRUE(CheckOn(property, "radix").is<rc::detail::SuccessResult>())
        << property.name;
  }
}

// SPEC §11's check on GenRoutedInput's documents of the policy the mutant
// breaks, with the mutant as the router under test: kRoutingCases of them
// (a document takes about 25 µs; the tree's stamps show only where an
// eviction takes a leaf the refresh would have kept and a later match
// walks there: with the fixed seed, the 6,659th document).
constexpr int kRoutingCases = 20000;

rc::detail::TestResult CheckRouting(RoutingBug bug) {
  const RouterPolicy policy = *RoutingMutantPolicy(bug);
  const auto run = [&] {
    const checking::RoutedInput routed = *GenRoutedInput(policy);
    const auto disagreement =
        checking::CompareRouter(routed, [&](const RouteSetup& setup) {
          return MakeRoutingMutant(bug, routed.routing.router, setup,
                                   TokenUnit::kToken);
        });
    if (disagreement) {
      RC_FAIL(checking::DescribeRouterDisagreement(
          routed, *disagreement, NameOf(kRoutingMutants, bug)));
    }
  };
  rc::detail::TestParams params = TeethParams();
  params.maxSuccess = std::max(params.maxSuccess, kRoutingCases);
  return Check(run, NameOf(kRoutingMutants, bug), params);
}

class RoutingTeethTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(RoutingTeethTest, RouterCheckFindsCounterexample) {
  const auto result = CheckRouting(ParseRoutingMutant(GetParam()));
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  std::cout << "=== " << GetParam() << "\n" << message.str() << "\n";
  EXPECT_TRUE(result.is<rc::detail::FailureResult>())
      << "the routing check finds no counterexample for " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(RoutingMutants, RoutingTeethTest,
                         ::testing::ValuesIn(RoutingMutantNames()), TestName);

}  // namespace
}  // namespace kvprefix::test
