#include "cli/routing.h"

#include <fmt/format.h>

#include <functional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "cli/option_checks.h"
#include "plugin/plugin_engine.h"

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

// The comma-separated items of `list` ("" is one empty item).
std::vector<std::string_view> Items(std::string_view list) {
  std::vector<std::string_view> items;
  for (std::size_t begin = 0;;) {
    const std::size_t end = list.find(',', begin);
    items.push_back(list.substr(begin, end - begin));
    if (end == std::string_view::npos) return items;
    begin = end + 1;
  }
}

// The check of an option taking one item or a comma-separated list of
// them: "" if every item passes `problem` (which returns "" or "expected
// ..., found <item>"); else the first item's problem, followed for a list
// by " in '<list>'". `everything`, if not empty, is accepted too as the
// whole text.
CLI::Validator ListOf(std::function<std::string(std::string_view)> problem,
                      std::string type, std::string everything = "") {
  return CLI::Validator(
      [problem, everything](std::string& text) -> std::string {
        if (!everything.empty() && text == everything) return {};
        for (const std::string_view item : Items(text)) {
          const std::string found = problem(item);
          if (found.empty()) continue;
          return item.size() == text.size()
                     ? found
                     : fmt::format("{} in '{}'", found, text);
        }
        return {};
      },
      std::move(type));
}

std::string WorkerCountProblem(std::string_view item) {
  const auto value = ParseDecimalInteger(item);
  if (value && InRange(*value, std::uint64_t{1}, kMaxWorkers)) return {};
  return fmt::format("expected an integer from 1 to {}, found {}", kMaxWorkers,
                     item);
}

std::vector<std::uint64_t> WorkerCounts(const std::string& list) {
  std::vector<std::uint64_t> counts;
  for (const std::string_view item : Items(list)) {
    counts.push_back(ParseDecimalInteger(item)->magnitude);
  }
  return counts;
}

// --router's routers: all twelve policies for "all".
std::vector<RouterSpec> Routers(const std::string& list) {
  std::vector<RouterSpec> routers;
  if (list == "all") {
    for (const auto& policy : kRouterPolicies) {
      routers.push_back(RouterSpec{.policy = policy.value});
    }
    return routers;
  }
  for (const std::string_view item : Items(list)) {
    routers.push_back(RouterSpecNamed(std::string(item)));
  }
  return routers;
}

// The check of one router's name: a policy or plugin:PATH.
std::string RouterProblem(std::string_view item) {
  if (ParseNamedValue(kRouterPolicies, item)) return {};
  if (IsPluginName(item)) return {};
  return fmt::format("expected {} or plugin:PATH (or \"all\"), found {}",
                     ChoiceNames(kRouterPolicies, '"'), item);
}

}  // namespace

CLI::Validator RouterChoice() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return RouterProblem(text); },
      "NAME");
}

RouterSpec RouterSpecNamed(const std::string& name) {
  if (IsPluginName(name)) {
    return RouterSpec{.plugin = name.substr(kPluginPrefix.size())};
  }
  return RouterSpec{.policy = *ParseNamedValue(kRouterPolicies, name)};
}

void AddRoutingFlags(CLI::App& command, RoutingFlags& flags) {
  // "INTEGER in [min - max]" first: CliOptionsTest's strict integer checks
  // find it.
  flags.workers_option =
      command
          .add_option(
              "--workers", flags.workers,
              "Workers N, each with its own cache, queue and --max-running; "
              "requests are routed by --router (SPEC §11). A comma-separated "
              "list (1,2,4,8,16) makes a table: one routed replay per "
              "(router, N), --jobs at a time")
          ->check(ListOf(WorkerCountProblem, ""))
          ->type_name(fmt::format("INTEGER in [1 - {}],...", kMaxWorkers))
          ->group(kGroup);
  flags.router_option =
      command
          .add_option(
              "--router", flags.router,
              "The routing policy: " + ChoiceNames(kRouterPolicies, '\'') +
                  " (default round-robin), or plugin:PATH (your own "
                  "router built as a shared library, "
                  "plugin/kvprefix_router_plugin.h; it gets every parameter "
                  "option given); replaces a document's whole router "
                  "object. 'all', or a comma-separated list of them, makes "
                  "a table: one routed replay per (router, N), each router "
                  "taking the parameter options it has")
          ->check(ListOf(RouterProblem, "NAME", "all"))
          ->group(kGroup);
  flags.seed_option = AddIntegerOption<std::uint64_t>(
                          command, "--seed", flags.seed,
                          "Seed of the router's stream of draws (default 0)")
                          ->group(kGroup);
  AddRouterParameterFlags(command, flags);
}

void AddRouterParameterFlags(CLI::App& command, RoutingFlags& flags) {
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
  return RoutingTableRows(flags, routing).front();
}

bool IsRoutingTable(const RoutingFlags& flags) {
  return (Given(flags.workers_option) &&
          WorkerCounts(flags.workers).size() > 1) ||
         (Given(flags.router_option) && Routers(flags.router).size() > 1);
}

std::vector<RoutingSpec> RoutingTableRows(const RoutingFlags& flags,
                                          const RoutingSpec& routing) {
  const std::vector<RouterSpec> routers = Given(flags.router_option)
                                              ? Routers(flags.router)
                                              : std::vector{routing.router};
  const std::vector<std::uint64_t> counts = Given(flags.workers_option)
                                                ? WorkerCounts(flags.workers)
                                                : std::vector{routing.workers};
  std::vector<RoutingSpec> rows;
  std::vector<bool> taken(kRouterParameters.size());
  for (const RouterSpec& router : routers) {
    RoutingSpec row = routing;
    if (Given(flags.router_option)) row.router = router;
    if (Given(flags.seed_option)) row.router.seed = flags.seed;
    for (std::size_t i = 0; i < kRouterParameters.size(); ++i) {
      const RouterParameter& parameter = kRouterParameters[i];
      // A plugin gets every parameter option given.
      if (!Given(flags.parameter_options[i]) ||
          (router.plugin.empty() && !Takes(router.policy, parameter))) {
        continue;
      }
      taken[i] = true;
      row.router.parameters[std::string(parameter.name)] =
          parameter.kind == ParameterKind::kInteger
              ? RouterValue(flags.integers[i])
              : *ParseRouterValue(parameter, flags.texts[i]);
    }
    for (const std::uint64_t count : counts) {
      row.workers = count;
      rows.push_back(row);
    }
  }
  for (std::size_t i = 0; i < kRouterParameters.size(); ++i) {
    if (!Given(flags.parameter_options[i]) || taken[i]) continue;
    const std::string& option = flags.parameter_options[i]->get_name();
    if (routers.size() == 1) {
      throw std::invalid_argument(
          fmt::format("{}: router \"{}\" takes no such parameter", option,
                      NameOf(kRouterPolicies, routers.front().policy)));
    }
    std::string names;
    for (const RouterSpec& router : routers) {
      if (!names.empty()) names += ", ";
      names += NameOf(kRouterPolicies, router.policy);
    }
    throw std::invalid_argument(
        fmt::format("{}: no router of the table ({}) takes it", option, names));
  }
  return rows;
}

}  // namespace kvprefix::cli
