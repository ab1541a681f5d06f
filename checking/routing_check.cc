#include "checking/routing_check.h"

#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <utility>

#include "checking/serving_check.h"
#include "engines/registry.h"
#include "serve/routed_replay.h"

namespace kvprefix::checking {
namespace {

// Thrown by SideBySide to stop the replay at the first disagreement.
struct Disagreed {};

// Asks both routers, on the same views, and goes where both send a
// request; records the first disagreement and stops the replay there.
class SideBySide final : public Router {
 public:
  SideBySide(std::unique_ptr<Router> under_test, std::unique_ptr<Router> policy,
             std::optional<RouterDisagreement>& disagreement)
      : under_test_(std::move(under_test)),
        policy_(std::move(policy)),
        disagreement_(disagreement) {}

  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override {
    const std::size_t chosen = under_test_->Choose(request, workers);
    const std::size_t expected = policy_->Choose(request, workers);
    if (chosen == expected) return expected;
    RouterDisagreement found{.request = request.index,
                             .chosen = chosen,
                             .expected = expected,
                             .peeks = PeekMatches(workers, request.tokens)};
    for (std::size_t w = 0; w < workers.size(); ++w) {
      found.views.push_back(workers.view(w));
    }
    disagreement_ = std::move(found);
    throw Disagreed{};
  }

 private:
  std::unique_ptr<Router> under_test_;
  std::unique_ptr<Router> policy_;
  std::optional<RouterDisagreement>& disagreement_;
};

// Decimal values a drawn parameter takes: the edges of the policies'
// comparisons (0, 1), a fraction a short request's match reaches (0.25,
// 0.5), and the defaults' neighbours.
constexpr std::array<std::string_view, 6> kDrawnDecimals = {"0", "0.25", "0.5",
                                                            "1", "1.5",  "2"};

}  // namespace

std::optional<RouterDisagreement> CompareRouter(
    const RoutedInput& routed, const MakeRouterUnderTest& make_router,
    TokenUnit unit) {
  if (!routed.routing.router.plugin.empty()) {
    throw std::invalid_argument("the policy to check against is a plugin");
  }
  std::optional<RouterDisagreement> disagreement;
  try {
    RoutedReplay(
        routed.input, routed.routing.workers, "side by side",
        [&](const RouteSetup& setup) {
          return std::make_unique<SideBySide>(
              make_router(setup),
              MakeRouter(routed.routing.router, setup, unit), disagreement);
        },
        [&] {
          return MakeServingCache("reference", routed.input.replay.options);
        });
  } catch (const Disagreed&) {
  }
  return disagreement;
}

std::string DescribeRouterDisagreement(const RoutedInput& routed,
                                       const RouterDisagreement& disagreement,
                                       std::string_view router_name) {
  const RequestId k = disagreement.request;
  const auto& arrivals = routed.input.arrivals_us;
  std::string text = fmt::format(
      "decision {} (request {} of {}, arrival {} µs): {} chose worker {}, {} "
      "chose worker {}\n",
      k, k, routed.input.replay.requests.size(),
      arrivals.empty() ? 0 : arrivals[k], router_name, disagreement.chosen,
      NameOf(kRouterPolicies, routed.routing.router.policy),
      disagreement.expected);
  for (std::size_t w = 0; w < disagreement.views.size(); ++w) {
    const WorkerView& view = disagreement.views[w];
    text += fmt::format(
        "  worker {}: running {}, queued {}, pinned {}, unprefilled_tokens {}, "
        "cached_pages {}, peek_match {} tokens\n",
        w, view.running, view.queued, view.pinned, view.unprefilled_tokens,
        view.cached_pages, disagreement.peeks[w]);
  }
  text += fmt::format("  request {}: {} tokens [{}]\n", k,
                      routed.input.replay.requests[k].size(),
                      fmt::join(routed.input.replay.requests[k], ","));
  return text;
}

RouterSpec RandomRouterSpec(
    RouterPolicy policy,
    const std::function<std::uint64_t(std::uint64_t)>& draw,
    const RouterSpec& fixed) {
  RouterSpec spec{.policy = policy, .seed = draw(256)};
  for (const RouterParameter& parameter : kRouterParameters) {
    if (!Takes(policy, parameter)) continue;
    const std::string name(parameter.name);
    const std::uint64_t pick = draw(20);
    if (const auto given = fixed.parameters.find(name);
        given != fixed.parameters.end()) {
      spec.parameters[name] = given->second;
      continue;
    }
    if (pick < 4) continue;  // the default
    switch (parameter.kind) {
      case ParameterKind::kInteger:
        spec.parameters[name] = parameter.min + pick % 5;
        break;
      case ParameterKind::kDecimal: {
        std::vector<Rational> values;
        for (const std::string_view text : kDrawnDecimals) {
          const Rational value = *Rational::FromDecimal(text);
          if (InDecimalRange(parameter, value)) values.push_back(value);
        }
        spec.parameters[name] = values[pick % values.size()];
        break;
      }
      case ParameterKind::kName:
        spec.parameters[name] = std::string(parameter.choices[pick % 2]);
        break;
    }
  }
  return spec;
}

std::optional<RoutedInput> DecodeRoutingFuzzInput(
    std::span<const std::uint8_t> bytes, RouterPolicy policy,
    const RouterSpec& fixed) {
  std::size_t at = 0;
  const auto next = [&]() -> std::uint64_t {
    return at < bytes.size() ? bytes[at++] : 0;
  };
  const std::uint64_t workers = 1 + (next() & 3);
  RouterSpec spec = RandomRouterSpec(
      policy, [&](std::uint64_t below) { return next() % below; }, fixed);
  std::optional<ServeInput> input =
      DecodeServeFuzzInput(bytes.subspan(std::min(at, bytes.size())));
  if (!input) return std::nullopt;
  return RoutedInput{
      .input = std::move(*input),
      .routing = {.workers = workers, .router = std::move(spec)}};
}

}  // namespace kvprefix::checking
