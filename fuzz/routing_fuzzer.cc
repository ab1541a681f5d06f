// Fuzz target for SPEC §11's routing: byte 0 picks a policy of §11.5
// (kRouterPolicies[b % 12]), the rest decode into a small routed document
// for it (checking::DecodeRoutingFuzzInput: 1 to 4 workers, the policy's
// parameters drawn around its rules' edges, a seed, then a §10 document of
// checking/serving_check.h's byte format). The target aborts with a report
// ending in the document when:
//  - by default: the routed replay (reference caches of the document's
//    model) is not reproducible (a second replay answers other bytes), a
//    request goes to a worker not below N, or the same document on one
//    worker answers other than §10's replay of it (§11.9: N = 1 is §10);
//  - when KVPREFIX_FUZZ_MUTANT names a routing mutant of
//    testing/routing_mutants.h: that router (its policy instead of byte
//    0's; the baseline keeps byte 0's) disagrees with its policy on a
//    decision (checking::CompareRouter), to show the target has teeth
//    (fuzz/teeth.sh). Any other value, e.g. "list", prints the names on a
//    last line "mutants: ..." and exits with status 2.
// At exit the target prints on stderr how many inputs it checked
// ("routing_fuzzer: checked 812 inputs, skipped 0").
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "checking/fuzz_input.h"
#include "checking/routing_check.h"
#include "engines/registry.h"
#include "fuzz/fuzz_environment.h"
#include "io/json_output.h"
#include "serve/routed_replay.h"
#include "serve/serving_replay.h"
#include "testing/routing_mutants.h"

namespace kvprefix {
namespace {

using fuzz::Environment;
using fuzz::UsageError;

// The mutant KVPREFIX_FUZZ_MUTANT names, nullopt when unset; read once.
const std::optional<test::RoutingBug>& Mutant() {
  static const std::optional<test::RoutingBug> mutant =
      []() -> std::optional<test::RoutingBug> {
    const std::string name = Environment("KVPREFIX_FUZZ_MUTANT");
    if (name.empty()) return std::nullopt;
    try {
      return test::ParseRoutingMutant(name);
    } catch (const std::invalid_argument& error) {
      // fuzz/teeth.sh reads the list from the last line.
      std::string names(NameOf(test::kRoutingMutants, test::RoutingBug::kNone));
      for (const std::string_view mutant : test::RoutingMutantNames()) {
        names += fmt::format(" {}", mutant);
      }
      UsageError(fmt::format("KVPREFIX_FUZZ_MUTANT: {}\nmutants: {}",
                             error.what(), names));
    }
  }();
  return mutant;
}

checking::FuzzTally& Tally() {
  static checking::FuzzTally* const tally = [] {
    auto* created = new checking::FuzzTally;  // outlives the atexit handler
    std::atexit([] {
      std::fprintf(stderr, "%s\n", Tally().Format("routing_fuzzer").c_str());
    });
    return created;
  }();
  return *tally;
}

[[noreturn]] void Fail(const std::string& problem,
                       const checking::RoutedInput& routed) {
  std::string document;
  AppendRoutedDocumentJson(routed.input, routed.routing, document);
  std::fprintf(stderr, "%s%s", problem.c_str(), document.c_str());
  std::abort();
}

RoutedAnswer Replay(const checking::RoutedInput& routed) {
  return RoutedReplay(
      routed.input, routed.routing,
      [&] {
        return MakeServingCache("reference", routed.input.replay.options);
      },
      TokenUnit::kToken);
}

// The default checks (see the top comment).
void CheckReplay(const checking::RoutedInput& routed) {
  const RoutedAnswer first = Replay(routed);
  const RoutedAnswer second = Replay(routed);
  if (first.requests != second.requests ||
      first.workers_of != second.workers_of || first.totals != second.totals) {
    Fail(
        "the routed replay is not reproducible: a second replay of the same "
        "document answers differently\n",
        routed);
  }
  for (RequestId id = 0; id < first.workers_of.size(); ++id) {
    if (first.workers_of[id] >= routed.routing.workers) {
      Fail(fmt::format("request {} went to worker {} of {}\n", id,
                       first.workers_of[id], routed.routing.workers),
           routed);
    }
  }
  if (routed.routing.workers != 1) return;
  const auto cache = MakeServingCache("reference", routed.input.replay.options);
  const ServeAnswer alone = ServeReplay(routed.input, *cache);
  if (alone.requests != first.requests || alone.totals != first.totals) {
    Fail(
        "on one worker the routed replay disagrees with the reference's "
        "SPEC §10 replay (§11.9)\n",
        routed);
  }
}

}  // namespace
}  // namespace kvprefix

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  static const std::optional<test::RoutingBug> mutant = Mutant();
  const std::span<const std::uint8_t> bytes(data, size);
  RouterPolicy policy =
      kRouterPolicies[(size > 0 ? data[0] : 0) % kRouterPolicies.size()].value;
  if (mutant) policy = test::RoutingMutantPolicy(*mutant).value_or(policy);
  const auto routed =
      checking::DecodeRoutingFuzzInput(bytes.subspan(size > 0 ? 1 : 0), policy);
  if (!routed) {
    Tally().TooLong();
    return 0;
  }
  Tally().Checked();
  if (!mutant) {
    CheckReplay(*routed);
    return 0;
  }
  const auto disagreement =
      checking::CompareRouter(*routed, [&](const RouteSetup& setup) {
        return test::MakeRoutingMutant(*mutant, routed->routing.router, setup,
                                       TokenUnit::kToken);
      });
  if (disagreement) {
    const std::string_view name = NameOf(test::kRoutingMutants, *mutant);
    Fail(fmt::format("router '{}' disagrees with the reference policy '{}':\n"
                     "{}",
                     name, NameOf(kRouterPolicies, policy),
                     checking::DescribeRouterDisagreement(*routed,
                                                          *disagreement, name)),
         *routed);
  }
  return 0;
}
