#include "cli/routing.h"

#include <fmt/format.h>

#include <stdexcept>

#include "cli/option_checks.h"

namespace kvprefix::cli {
namespace {

constexpr const char* kGroup = "Routing across workers (SPEC §11)";

bool Given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

// --load-factor for load_factor.
std::string OptionName(std::string_view member) {
  std::string name = "--";
  for (const char c : member) name += c == '_' ? '-' : c;
  return name;
}

// The check of a decimal or name option: ParseRouterValue's.
CLI::Validator RouterValueIn(const RouterParameter& parameter) {
  return CLI::Validator(
      [&parameter](std::string& text) -> std::string {
        if (ParseRouterValue(parameter, text)) return {};
        return fmt::format("expected {}, found {}",
                           ExpectedRouterValue(parameter), text);
      },
      "");
}

std::string Help(const RouterParameter& parameter) {
  std::string policies;
  for (const auto& policy : kRouterPolicies) {
    if (!Takes(policy.value, parameter)) continue;
    if (!policies.empty()) policies += ", ";
    policies += policy.name;
  }
  std::string help = fmt::format("{} ({}; default {}", parameter.help, policies,
                                 parameter.token_default);
  if (!parameter.block_default.empty()) {
    help += fmt::format(", {} in block mode", parameter.block_default);
  }
  return help + ")";
}

}  // namespace

void AddRoutingFlags(CLI::App& command, RoutingFlags& flags) {
  flags.workers_option =
      AddIntegerOption<std::uint64_t>(
          command, "--workers", flags.workers,
          "Workers N, each with its own cache, queue and --max-running; "
          "requests are routed by --router (SPEC §11)",
          1, kMaxWorkers)
          ->group(kGroup);
  flags.router_option =
      command
          .add_option(
              "--router", flags.router,
              "The routing policy: " + ChoiceNames(kRouterPolicies, '\'') +
                  " (default round-robin); replaces a document's "
                  "whole router object")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                if (ParseNamedValue(kRouterPolicies, text)) return {};
                return fmt::format("expected {}, found {}",
                                   ChoiceNames(kRouterPolicies, '"'), text);
              },
              "NAME"))
          ->group(kGroup);
  flags.seed_option = AddIntegerOption<std::uint64_t>(
                          command, "--seed", flags.seed,
                          "Seed of the router's stream of draws (default 0)")
                          ->group(kGroup);
  for (std::size_t i = 0; i < kRouterParameters.size(); ++i) {
    const RouterParameter& parameter = kRouterParameters[i];
    const std::string name = OptionName(parameter.name);
    CLI::Option* option = nullptr;
    if (parameter.kind == ParameterKind::kInteger) {
      option = AddIntegerOption<std::uint64_t>(command, name, flags.integers[i],
                                               Help(parameter), parameter.min,
                                               parameter.max);
    } else {
      option =
          command.add_option(name, flags.texts[i], Help(parameter))
              ->check(RouterValueIn(parameter))
              ->type_name(parameter.kind == ParameterKind::kDecimal ? "DECIMAL"
                                                                    : "NAME");
    }
    flags.parameter_options[i] = option->group(kGroup);
  }
}

bool RoutingFlagsGiven(const RoutingFlags& flags) {
  if (Given(flags.workers_option) || Given(flags.seed_option) ||
      Given(flags.router_option)) {
    return true;
  }
  for (const CLI::Option* option : flags.parameter_options) {
    if (Given(option)) return true;
  }
  return false;
}

RoutingSpec ApplyRoutingFlags(const RoutingFlags& flags, RoutingSpec routing) {
  if (Given(flags.workers_option)) routing.workers = flags.workers;
  if (Given(flags.router_option)) {
    routing.router =
        RouterSpec{.policy = *ParseNamedValue(kRouterPolicies, flags.router)};
  }
  if (Given(flags.seed_option)) routing.router.seed = flags.seed;
  for (std::size_t i = 0; i < kRouterParameters.size(); ++i) {
    if (!Given(flags.parameter_options[i])) continue;
    const RouterParameter& parameter = kRouterParameters[i];
    if (!Takes(routing.router.policy, parameter)) {
      throw std::invalid_argument(
          fmt::format("{}: router \"{}\" takes no such parameter",
                      flags.parameter_options[i]->get_name(),
                      NameOf(kRouterPolicies, routing.router.policy)));
    }
    routing.router.parameters[std::string(parameter.name)] =
        parameter.kind == ParameterKind::kInteger
            ? RouterValue(flags.integers[i])
            : *ParseRouterValue(parameter, flags.texts[i]);
  }
  return routing;
}

}  // namespace kvprefix::cli
