// `replay`'s SPEC §11 options: --workers N, --router NAME, --seed S and one
// option per router parameter (the member's name with '-' for '_':
// --load-factor, --hash-prefix, --ties, ...), with §11.1's values, ranges
// and errors. Options given replace the document's members; --router
// replaces the whole router object (its parameters then come from the
// options only); any of them makes a document (or a trace) a routed replay
// (§11.8's answer). --workers may also be a comma-separated list of counts
// and --router "all" or a comma-separated list of names: a table of one
// routed replay per (router, N) (cli/router_table.h).
#ifndef KVPREFIX_CLI_ROUTING_H_
#define KVPREFIX_CLI_ROUTING_H_

#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "router/router_spec.h"

namespace kvprefix::cli {

struct RoutingFlags {
  std::string workers = "1";  // one count, or a comma-separated list
  std::uint64_t seed = 0;
  std::string router;  // one name, "all", or a comma-separated list
  // Per kRouterParameters entry: an integer's value, or a decimal's or a
  // name's text (checked when parsed).
  std::array<std::uint64_t, kRouterParameters.size()> integers = {};
  std::array<std::string, kRouterParameters.size()> texts;
  CLI::Option* workers_option = nullptr;
  CLI::Option* seed_option = nullptr;
  CLI::Option* router_option = nullptr;
  std::array<CLI::Option*, kRouterParameters.size()> parameter_options = {};
};

// The check of a router's name: a policy of kRouterPolicies or
// "plugin:PATH" (a usage error naming both otherwise).
CLI::Validator RouterChoice();

// The router `name` (RouterChoice accepted it) names, with no parameters.
// O(policies).
RouterSpec RouterSpecNamed(const std::string& name);

// Adds the options (each a usage error, exit 2, naming it, outside §11.1's
// kinds and ranges).
void AddRoutingFlags(CLI::App& command, RoutingFlags& flags);

// Adds the parameter options only (--load-factor, --ties, ...), as
// AddRoutingFlags does: for `verify --against POLICY`, whose --workers and
// --seed mean other things. ApplyRoutingFlags applies them alone.
void AddRouterParameterFlags(CLI::App& command, RoutingFlags& flags);

// True if any of them was given. O(parameters).
bool RoutingFlagsGiven(const RoutingFlags& flags);

// `routing` (a document's, or the defaults) with the options given in
// place: --workers, --router (a new router object with only the options'
// parameters), --seed, each parameter. Throws std::invalid_argument (a
// usage error) naming a parameter option the resulting router does not
// take: "--load-factor: router \"round-robin\" takes no such parameter".
// O(parameters).
// Requires !IsRoutingTable(flags).
RoutingSpec ApplyRoutingFlags(const RoutingFlags& flags, RoutingSpec routing);

// True if --workers names more than one count or --router more than one
// router ("all" is all twelve): a table, not one replay. O(option text).
bool IsRoutingTable(const RoutingFlags& flags);

// The table's rows, router-major: for each router of --router in its order
// (all: §11.5's order; none given: round-robin), for each count of
// --workers in its order, `routing` with that router (its parameters the
// options' that it takes), that count and --seed if given. Throws
// std::invalid_argument (a usage error) naming a parameter option that no
// router of the table takes: "--load-factor: no router of the table
// (round-robin, random) takes it". O(rows · parameters).
std::vector<RoutingSpec> RoutingTableRows(const RoutingFlags& flags,
                                          const RoutingSpec& routing);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_ROUTING_H_
