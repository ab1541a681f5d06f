// `kvprefix verify --router ROUTER --against POLICY`: checks a router (a
// plugin, plugin/kvprefix_router_plugin.h, or a built-in policy) decision
// for decision against a policy of SPEC §11.5 (checking::CompareRouter) on
// routed documents: given ones (FILEs, case files, e.g. the shared routing
// cases tests/data/cases/serve/r*) and generated ones (random requests,
// arrivals, durations, models, N, B, the router's seed and the policy's
// parameters). The first document on which a decision differs is shrunk
// (verify/shrink.h's passes on its §10 document, then fewer workers) and
// written as a §11.1 routed document; the report names the decision, the
// two workers chosen and the views both saw.
#ifndef KVPREFIX_VERIFY_ROUTER_RUN_H_
#define KVPREFIX_VERIFY_ROUTER_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "router/router_spec.h"

namespace kvprefix::verify {

struct RouterRunOptions {
  // The router under test: spec.plugin set for a plugin, else a built-in
  // policy (its parameters and seed are replaced by each document's).
  RouterSpec router;
  // The policy it must agree with, and the parameters fixed on the command
  // line (each document's other parameters are drawn, or its own).
  RouterSpec against;
  // Given routed documents (SPEC §11.1; a §10 or §8 document routes over
  // one worker) and case files (a file, or every *.json of a folder). A
  // given document's router is replaced by `against` with its parameters
  // kept when it names the same policy.
  std::vector<std::string> files;
  std::string cases;
  // Generated documents: `runs` (unset: 100, or none when documents are
  // given) from `seed` (unset: random, printed), sizes as GeneratorSize up
  // to `max_size`, on `workers` workers when set (else 1 to 4, drawn).
  std::optional<std::uint64_t> runs = std::nullopt;
  std::optional<std::uint64_t> seed = std::nullopt;
  int max_size = 100;
  std::optional<std::uint64_t> workers = std::nullopt;
  // Seconds, as RunOptions': no generated document starts after
  // time_budget (0: none); shrinking stops after shrink_time or
  // shrink_attempts checks.
  double time_budget = 0;
  double shrink_time = 120;
  std::size_t shrink_attempts = 5000;
  std::string out = "kvprefix-verify-failure.json";
};

// Checks every document in order and prints the report on standard output:
// "OK: N routed documents, D decisions agree with POLICY (--seed S)", or the
// first failure: the document's name, the shrunk disagreement
// (checking::DescribeRouterDisagreement: the decision, the two workers
// chosen, each worker's views and peek, the request) or the router's
// error (a plugin's PluginError: a worker not below N, a failed status),
// the shrink line, and where the shrunk document was written (`out`,
// replayable with `kvprefix replay OUT --input-format requests --router
// ...` and checked again with `verify --router ... --against POLICY OUT`).
// Throws std::runtime_error("verify failed: wrong-decision") (or
// "...: router-error") after printing a failure; std::invalid_argument for
// bad usage (a plugin as `against`, a plugin refusing its setup), InputError
// and IoError for unreadable documents or an unwritable `out` (checked
// before any document). Not thread-safe (prints).
void RunRouter(const RouterRunOptions& options);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_ROUTER_RUN_H_
