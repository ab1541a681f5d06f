// SPEC §11's routers, checked decision for decision on random routed
// documents (RapidCheck, testing/generators.h's GenRoutedInput: 1 to 4
// workers, each policy's parameters drawn around its rules' edges) with the
// checker `verify --router` uses (checking::CompareRouter):
//  * every policy made through the mutants' path with no bug (the
//    baseline) agrees with MakeRouter's on every decision, so the teeth
//    test's catches (tests/property/teeth_test.cc: one mutant per policy
//    rule) come from the bugs alone;
//  * a routed document written (AppendRoutedDocumentJson) reads back
//    (ParseRoutedDocument) as the same document and router, so a case file
//    `verify --router` writes replays as checked.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>

#include "checking/routing_check.h"
#include "io/json_output.h"
#include "io/replay_document.h"
#include "testing/generators.h"
#include "testing/routing_mutants.h"

namespace kvprefix {
namespace {

using test::GenRoutedInput;

class RouterCheckProperties : public ::testing::TestWithParam<RouterPolicy> {};

TEST_P(RouterCheckProperties, BaselineAgreesOnEveryDecision) {
  const RouterPolicy policy = GetParam();
  EXPECT_TRUE(rc::check(
      std::string("the baseline agrees with ") +
          std::string(NameOf(kRouterPolicies, policy)),
      [policy] {
        const checking::RoutedInput routed = *GenRoutedInput(policy);
        const auto disagreement =
            checking::CompareRouter(routed, [&](const RouteSetup& setup) {
              return test::MakeRoutingMutant(test::RoutingBug::kNone,
                                             routed.routing.router, setup,
                                             TokenUnit::kToken);
            });
        if (disagreement) {
          RC_FAIL(checking::DescribeRouterDisagreement(routed, *disagreement,
                                                       "the baseline"));
        }
      }));
}

TEST_P(RouterCheckProperties, DocumentReadsBackAsWritten) {
  const RouterPolicy policy = GetParam();
  EXPECT_TRUE(rc::check("a routed document reads back", [policy] {
    const checking::RoutedInput routed = *GenRoutedInput(policy);
    std::string json;
    AppendRoutedDocumentJson(routed.input, routed.routing, json);
    RoutingSpec routing;
    const ServeInput read = ParseRoutedDocument(json, &routing);
    RC_ASSERT(read == routed.input);
    RC_ASSERT(routing == routed.routing);
  }));
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, RouterCheckProperties,
                         ::testing::ValuesIn([] {
                           std::vector<RouterPolicy> policies;
                           for (const auto& policy : kRouterPolicies) {
                             policies.push_back(policy.value);
                           }
                           return policies;
                         }()),
                         [](const auto& info) {
                           std::string name(
                               NameOf(kRouterPolicies, info.param));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace kvprefix
