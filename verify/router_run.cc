#include "verify/router_run.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <utility>

#include "checking/routing_check.h"
#include "io/case_file.h"
#include "io/json_output.h"
#include "plugin/plugin_engine.h"
#include "verify/inputs.h"
#include "verify/shrink.h"

namespace kvprefix::verify {
namespace {

using checking::RoutedInput;

struct NamedRouted {
  std::string name;
  RoutedInput routed;
};

// `against` with `document`'s parameters kept where it names the same
// policy (the command line's fixed ones win), and its seed.
RouterSpec Against(const RouterSpec& against, const RouterSpec& document) {
  RouterSpec spec = against;
  spec.seed = document.seed;
  if (document.policy == against.policy && document.plugin.empty()) {
    for (const auto& [name, value] : document.parameters) {
      spec.parameters.emplace(name, value);
    }
  }
  return spec;
}

std::vector<NamedRouted> GivenDocuments(const RouterRunOptions& options) {
  std::vector<std::string> paths = options.files;
  std::vector<std::string> names;
  for (const std::string& path : paths) names.push_back("file " + path);
  if (!options.cases.empty()) {
    for (std::string& path : CaseFilePaths(options.cases)) {
      names.push_back("case " +
                      std::filesystem::path(path).filename().string());
      paths.push_back(std::move(path));
    }
  }
  std::vector<NamedRouted> documents;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    DocumentPlaces places;
    RoutingSpec routing;
    // A case file's answer may be any kind's: its document alone is read.
    ServeInput input =
        i < options.files.size()
            ? ReadRoutedDocumentOrCaseFile(paths[i], &places, &routing)
            : ReadRoutedCaseDocument(paths[i], &routing);
    routing.router = Against(options.against, routing.router);
    documents.push_back({names[i], {std::move(input), std::move(routing)}});
  }
  return documents;
}

// Generated document number `run`: GeneratedServeInput's §10 document of a
// model drawn from seed + run, N (options.workers, or 1 to 4) and the
// policy's parameters (checking::RandomRouterSpec, the fixed ones kept).
NamedRouted Generated(const RouterRunOptions& options, std::uint64_t seed,
                      std::uint64_t run, int size) {
  std::mt19937_64 random((seed + run) ^ 0x7011'7e57'7011'7e57ull);
  const auto draw = [&random](std::uint64_t below) { return random() % below; };
  const GeneratedModel model{.model = kCacheModels[draw(3)].value};
  NamedServeInput document = GeneratedServeInput(
      seed, run, size, model, checking::ImplementedOptions{});
  RoutingSpec routing{.workers = options.workers.value_or(1 + draw(4)),
                      .router = checking::RandomRouterSpec(
                          options.against.policy, draw, options.against)};
  return {fmt::format("generated routed document {} (--seed {}, size {})", run,
                      seed, size),
          {std::move(document.input), std::move(routing)}};
}

// The router under test for a document: the plugin (or policy) with the
// document's seed and parameters.
std::unique_ptr<Router> UnderTest(const RouterRunOptions& options,
                                  const RoutingSpec& routing,
                                  const RouteSetup& setup) {
  RouterSpec spec = routing.router;
  spec.plugin = options.router.plugin;
  if (spec.plugin.empty()) {
    spec.policy = options.router.policy;
    if (spec.policy != routing.router.policy) spec.parameters.clear();
  }
  return MakeRouter(spec, setup, TokenUnit::kToken);
}

// One document's check, as verify's checkers report: a wrong decision
// (kWrongAnswer, with the decision in `request`) or the router's error
// (kCrash). Documents a replay refuses (a shrinking step may make one)
// pass.
std::optional<Failure> Check(const RouterRunOptions& options,
                             const RoutedInput& routed,
                             std::string_view router_name,
                             std::uint64_t* decisions = nullptr) {
  try {
    const auto disagreement =
        checking::CompareRouter(routed, [&](const RouteSetup& setup) {
          return UnderTest(options, routed.routing, setup);
        });
    if (!disagreement) {
      if (decisions != nullptr) {
        *decisions += routed.input.replay.requests.size();
      }
      return std::nullopt;
    }
    return Failure{.kind = FailureKind::kWrongAnswer,
                   .message = checking::DescribeRouterDisagreement(
                       routed, *disagreement, router_name),
                   .request = disagreement->request};
  } catch (const PluginError& error) {
    return Failure{.kind = FailureKind::kCrash,
                   .message = std::string(error.what()) + "\n"};
  } catch (const std::overflow_error& error) {
    return Failure{.kind = FailureKind::kCrash,
                   .message = std::string(error.what()) + "\n"};
  }
}

// What ShrinkRouted found: the smallest failing document, its failure, the
// checks made and how many of them failed (0: nothing smaller fails).
struct RoutedShrink {
  RoutedInput routed;
  Failure failure;
  std::size_t attempts = 0;
  std::size_t accepted = 0;
};

// Shrinks the failing `routed`: its §10 document (verify/shrink.h), then
// fewer workers (each smaller N that still fails, the document shrunk
// again).
RoutedShrink ShrinkRouted(const RouterRunOptions& options, RoutedInput routed,
                          Failure failure, std::string_view router_name) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options.shrink_time));
  std::size_t attempts = 0;
  std::size_t accepted = 0;
  const auto same_kind =
      [&](const RoutedInput& candidate) -> std::optional<Failure> {
    try {
      auto found = Check(options, candidate, router_name);
      if (found && found->kind == failure.kind) return found;
    } catch (const std::invalid_argument&) {
      // A document the replay refuses: not a failing candidate.
    }
    return std::nullopt;
  };
  for (bool progress = true; progress;) {
    progress = false;
    const RoutingSpec routing = routed.routing;
    const ServeShrinkResult shrunk = Shrink(
        routed.input, failure,
        [&](const ServeInput& input) {
          return same_kind(RoutedInput{input, routing});
        },
        ShrinkOptions{.max_attempts = options.shrink_attempts - attempts,
                      .deadline = deadline});
    attempts += shrunk.attempts;
    accepted += shrunk.accepted;
    routed.input = shrunk.input;
    failure = shrunk.failure;
    for (std::uint64_t n = 1; n < routed.routing.workers; ++n) {
      if (attempts >= options.shrink_attempts ||
          std::chrono::steady_clock::now() >= deadline) {
        break;
      }
      RoutedInput fewer = routed;
      fewer.routing.workers = n;
      ++attempts;
      if (auto found = same_kind(fewer)) {
        ++accepted;
        routed = std::move(fewer);
        failure = std::move(*found);
        progress = true;
        break;
      }
    }
  }
  return {std::move(routed), std::move(failure), attempts, accepted};
}

}  // namespace

void RunRouter(const RouterRunOptions& options) {
  if (!options.against.plugin.empty()) {
    throw std::invalid_argument(
        "verify: --against: expected a policy of SPEC §11.5, not a plugin");
  }
  CheckOutputPath(options.out);
  const std::string router_name(RouterName(options.router));
  const std::string_view policy_name =
      NameOf(kRouterPolicies, options.against.policy);
  std::vector<NamedRouted> given = GivenDocuments(options);
  const std::uint64_t seed = options.seed.value_or(std::random_device{}());
  const std::uint64_t runs = options.runs.value_or(
      given.empty() ? (options.time_budget > 0 ? UINT64_MAX : 100) : 0);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t checked = 0;
  std::uint64_t decisions = 0;
  const auto check_one = [&](NamedRouted document) {
    auto failure = Check(options, document.routed, router_name, &decisions);
    ++checked;
    if (!failure) return;
    const RoutedShrink shrink =
        ShrinkRouted(options, document.routed, *failure, router_name);
    const RoutedInput& shrunk = shrink.routed;
    std::string text;
    AppendRoutedDocumentJson(shrunk.input, shrunk.routing, text);
    WriteFileAtomically(options.out, text);
    const bool wrong = shrink.failure.kind == FailureKind::kWrongAnswer;
    // The shrinker is greedy: a smaller failing document may exist that no
    // single step reaches.
    const std::string how =
        shrink.accepted == 0
            ? fmt::format(
                  "not shrunk: none of the {} smaller documents "
                  "tried fails",
                  shrink.attempts)
            : fmt::format(
                  "shrunk in {} checks from {} on {} workers to {} "
                  "on {} workers",
                  shrink.attempts, DescribeSize(document.routed.input),
                  document.routed.routing.workers, DescribeSize(shrunk.input),
                  shrunk.routing.workers);
    std::fputs(
        fmt::format("FAIL: {} on {} (--against {}, {} workers); {}:\n"
                    "{}written to {}: replay it with `kvprefix replay {} "
                    "--input-format requests --router {}`\n",
                    wrong ? "a decision differs" : "the router fails",
                    document.name, policy_name, document.routed.routing.workers,
                    how, shrink.failure.message, options.out, options.out,
                    options.router.plugin.empty()
                        ? router_name
                        : "plugin:" + options.router.plugin)
            .c_str(),
        stdout);
    std::fflush(stdout);
    throw std::runtime_error(wrong ? "verify failed: wrong-decision"
                                   : "verify failed: router-error");
  };
  for (NamedRouted& document : given) check_one(std::move(document));
  for (std::uint64_t run = 0; run < runs; ++run) {
    if (options.time_budget > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                .count() >= options.time_budget) {
      break;
    }
    check_one(Generated(options, seed, run,
                        GeneratorSize(run, runs, options.max_size)));
  }
  std::fputs(fmt::format("OK: {} routed documents, {} decisions: {} agrees "
                         "with {} on every one{}\n",
                         checked, decisions, router_name, policy_name,
                         runs > 0 ? fmt::format(" (--seed {})", seed) : "")
                 .c_str(),
             stdout);
}

}  // namespace kvprefix::verify
