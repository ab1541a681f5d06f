// `kvprefix verify`: its options, parsed with CLI11 into verify::RunOptions;
// the work is verify::Run (verify/run.h).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "checking/differential.h"
#include "checking/implemented_options.h"
#include "cli/cache_choice.h"
#include "cli/cache_flags.h"
#include "cli/commands.h"
#include "cli/routing.h"
#include "cli/supervised.h"
#include "engines/registry.h"
#include "plugin/plugin_engine.h"
#include "verify/router_run.h"
#include "verify/run.h"

namespace kvprefix::cli {
namespace {

// The names --against takes.
std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (const auto& policy : kRouterPolicies) names.emplace_back(policy.name);
  return names;
}

// The options as parsed; `runs` and `seed` count only when given.
struct VerifyFlags {
  verify::RunOptions options;
  std::uint64_t runs = 100;
  std::uint64_t seed = 0;
  std::string format = "batch";
  std::string protocol = "process";
  std::string compare = "all";
  bool no_format_check = false;
  CacheArguments cache;  // --model, --match-limit and --trigger only
  // --models, --match-limits, --policies, --page-sizes, --capacities as
  // given.
  checking::ImplementedOptionValues implemented;
  // --router, --against, --workers and the policy's parameter options.
  std::string router;
  std::string against;
  std::uint64_t workers = 1;
  RoutingFlags parameters;
};

// --model, --match-limit and --trigger as verify::GeneratedModel (unset if
// none was given), checked as replay checks them (ChooseCache: a usage
// error naming the option, in replay's words); a match limit or trigger not
// given is left to the generator to vary.
std::optional<verify::GeneratedModel> GeneratedModelOf(
    const CacheArguments& cache) {
  if (!ModelOptionsGiven(cache)) return std::nullopt;
  const CacheOptions options = ChooseCache(cache, 1).options;
  return verify::GeneratedModel{
      .model = options.model,
      .match_limit = Given(cache.match_limit_option)
                         ? std::optional(options.match_limit)
                         : std::nullopt,
      .trigger = Given(cache.trigger_option) ? std::optional(options.trigger)
                                             : std::nullopt};
}

// CLI::ExistingFile for verify's FILEs, which also says what a missing FILE
// most likely is when it is an engine's name: the second of `--engines radix
// hash`, since --engines takes one comma-separated list.
CLI::Validator ExistingFileOrEngineHint() {
  return CLI::Validator(
      [](std::string& name) {
        std::string problem = CLI::ExistingFile(name);
        if (!problem.empty() && (IsEngineName(name) || name == "all")) {
          problem +=
              " (an engine's name: --engines takes one "
              "comma-separated list, e.g. --engines radix," +
              name + ")";
        }
        return problem;
      },
      "FILE");
}

// The `verify` subcommand of `app`, with its description.
CLI::App* AddVerifySubcommand(CLI::App& app) {
  return app.add_subcommand(
      "verify",
      "Check an implementation against the reference trie: an external "
      "command speaking SPEC §4 JSON on stdin and SPEC §5 on stdout "
      "(--cmd), or built-in engines (--engines). With --format requests "
      "the command reads a SPEC §8 replay document {\"requests\":[...],"
      "\"capacity\":C,\"policy\":\"lru\",\"page_size\":P} and prints "
      "each request's match before its insert, as `kvprefix replay FILE "
      "--input-format requests` does; a document may name a cache model "
      "(\"model\":\"vllm\"|\"sglang\", \"match_limit\", \"trigger\": "
      "SPEC §9.4), and --model makes the generated documents a model's. "
      "With --protocol lines the command "
      "stays running and answers one line per document line (JSON Lines); "
      "with --compare lengths its own node IDs are accepted. Inputs: FILEs, "
      "--cases, --trace (batch only) and generated ones. The first failure is "
      "shrunk and written "
      "to --out; exit 0 all agree, 1 a failure, 2 bad usage or input.");
}

// What is checked: FILEs, --format, --serving and the model of generated
// documents.
void AddInputKindOptions(CLI::App& verify, VerifyFlags& flags) {
  verify
      .add_option("files", flags.options.files,
                  "input files to check: SPEC §4 documents, or replay "
                  "documents with --format requests")
      ->check(ExistingFileOrEngineHint());
  verify
      .add_option("--format", flags.format,
                  "what the implementation reads: batch (SPEC §4 input, "
                  "the batch job) or requests (SPEC §8 replay documents: "
                  "a cache with a capacity, an eviction policy of `kvprefix "
                  "policies` and a page size; about three generated ones in "
                  "four evict)")
      ->check(CLI::IsMember({"batch", "requests"}))
      ->capture_default_str();
  verify.add_flag(
      "--serving", flags.options.serving,
      "--format requests only: SPEC §10 serving documents (arrivals, "
      "output lengths, max_running, rates, output; generated ones carry "
      "them), each engine's or --cmd's whole serving answer compared with "
      "the reference's (what `kvprefix replay DOC --input-format requests` "
      "prints; --cmd reads that command's document and prints that "
      "answer) and, for engines, §10's rules checked; an engine without a "
      "request lifecycle gets only documents with max_running 1 and output "
      "\"none\" (its skips are counted)");
  AddModelOptions(
      verify, flags.cache,
      ModelOptionsHelp{
          .model = "--format requests: the model of the generated documents "
                   "(FILEs and --cases run under their own); default: the "
                   "plain documents, model spec",
          .match_limit = "generated documents; default: varied per document "
                         "for sglang (both about as often), all-but-last for "
                         "vllm, which takes no other, all for spec",
          .trigger = "generated documents, sglang only; default: varied per "
                     "document (both about as often)",
          .show_trigger_default = false});
}

// --models, --match-limits, --policies, --page-sizes and --capacities: the
// options the cache implements.
void AddImplementedOptions(CLI::App& verify, VerifyFlags& flags) {
  const auto add_implemented = [&verify](const char* name,
                                         std::vector<std::string>& values,
                                         const std::string& help) {
    verify
        .add_option(name, values,
                    help +
                        " (comma-separated; --format requests, generated "
                        "documents only; default: all)")
        ->allow_extra_args(false)
        ->type_name("LIST");
  };
  add_implemented("--models", flags.implemented.models,
                  "the models the cache implements (spec, vllm, sglang): "
                  "generated documents are of these only");
  add_implemented("--match-limits", flags.implemented.match_limits,
                  "the match limits the cache implements (all, "
                  "all-but-last): generated documents use these only");
  add_implemented("--policies", flags.implemented.policies,
                  "the eviction policies the cache implements (kvprefix "
                  "policies): generated documents use these only");
  add_implemented("--page-sizes", flags.implemented.page_sizes,
                  "the page sizes the cache implements: generated documents "
                  "use these only");
  add_implemented("--capacities", flags.implemented.capacities,
                  "the capacities the cache implements: unbounded, bounded "
                  "(any) or numbers of nodes; generated documents use these "
                  "only");
}

// The cache under test: --cmd, --protocol, --compare, --engines.
void AddCacheOptions(CLI::App& verify, VerifyFlags& flags) {
  verify.add_option("--cmd", flags.options.command,
                    "command run with /bin/sh -c: once per input, or kept "
                    "running with --protocol lines");
  verify
      .add_option("--protocol", flags.protocol,
                  "how --cmd is run: process (one process per input: the "
                  "document on stdin, the answer on stdout until it exits) "
                  "or lines (one long-lived process per job: one document "
                  "per line on stdin, one answer line each on stdout; a "
                  "process that dies or hangs is reported with its input "
                  "and restarted)")
      ->check(CLI::IsMember({"process", "lines"}))
      ->capture_default_str();
  verify
      .add_option("--compare", flags.compare,
                  "what must agree: all (matched_length, cache_node and, "
                  "for --engines, node IDs, counts and evicted pages) or "
                  "lengths (matched_length and uncached_suffix only, for a "
                  "cache without kvprefix's node IDs: cache_node may be "
                  "left out or hold anything)")
      ->check(CLI::IsMember({"all", "lengths"}))
      ->capture_default_str();
  verify
      .add_option("--engines", flags.options.engines,
                  "engines to check: built-in names, 'all' (the built-in "
                  "engines of each document's model), or plugin:PATH (a "
                  "cache of your own built as a shared library, "
                  "plugin/kvprefix_plugin.h)")
      ->allow_extra_args(false)
      ->delimiter(',');
}

// Where inputs come from: --cases, --trace, --trace-window, --runs, --seed,
// --max-size. Returns --runs and --seed, which count only when given.
std::pair<CLI::Option*, CLI::Option*> AddInputOptions(CLI::App& verify,
                                                      VerifyFlags& flags) {
  verify
      .add_option("--cases", flags.options.cases,
                  "case file, or folder of them (format of tests/data/cases; "
                  "of tests/data/cases/capacity with --format requests)")
      ->check(CLI::ExistingPath);
  verify
      .add_option("--trace", flags.options.trace,
                  "Mooncake trace (JSON Lines): check windows of it "
                  "(--format batch only)")
      ->check(CLI::ExistingFile);
  AddIntegerOption(verify, "--trace-window", flags.options.trace_window,
                   "trace requests per window: first half cached, rest "
                   "requests",
                   std::size_t{2})
      ->capture_default_str();
  CLI::Option* runs = AddIntegerOption(
      verify, "--runs", flags.runs,
      "generated inputs to check (default 100, or 0 when FILEs, --cases or "
      "--trace are given)");
  CLI::Option* seed =
      AddIntegerOption(verify, "--seed", flags.seed,
                       "seed of the generated inputs (default: random)");
  AddIntegerOption(verify, "--max-size", flags.options.max_size,
                   "largest generator size: sequences per input and fresh "
                   "tokens per sequence grow with it; sizes step from 0 to it "
                   "even over a few --runs, then cycle",
                   0, verify::kMaxGeneratorSize)
      ->capture_default_str();
  return {runs, seed};
}

// Budgets and output: --time, --timeout, --jobs, --out, --no-format-check,
// --shrink-attempts, --shrink-time.
void AddBudgetOptions(CLI::App& verify, VerifyFlags& flags) {
  verify
      .add_option("--time", flags.options.time_budget,
                  "seconds budget: start no input after it (alone: "
                  "generate until it runs out); 0: no budget")
      ->check(FiniteNumberIn(0, verify::kMaxSeconds));
  verify
      .add_option("--timeout", flags.options.timeout,
                  "seconds the command, or a plugin, may take per input")
      ->capture_default_str()
      ->check(FiniteNumberIn(verify::kMinTimeout, verify::kMaxSeconds));
  AddIntegerOption(verify, "--jobs", flags.options.jobs,
                   "inputs checked at once (default: one per core)",
                   std::size_t{1}, verify::kMaxJobs);
  AddOutputOption(verify, "--out", flags.options.out,
                  "where the minimal failing case goes");
  verify.add_flag("--no-format-check", flags.no_format_check,
                  "accept any JSON layout, not only SPEC §5's compact bytes");
  AddIntegerOption(verify, "--shrink-attempts", flags.options.shrink_attempts,
                   "most checks spent shrinking a failure")
      ->capture_default_str();
  verify
      .add_option("--shrink-time", flags.options.shrink_time,
                  "most seconds spent shrinking a failure")
      ->capture_default_str()
      ->check(FiniteNumberIn(0, verify::kMaxSeconds));
}

// SPEC §11's router check: --router, --against, --workers and the
// policy's parameter options. Returns --router and --workers.
std::pair<CLI::Option*, CLI::Option*> AddRouterOptions(CLI::App& verify,
                                                       VerifyFlags& flags) {
  constexpr const char* kRouting =
      "Routers (SPEC §11): --router ROUTER --against POLICY";
  CLI::Option* router =
      verify
          .add_option("--router", flags.router,
                      "check this router decision for decision against "
                      "--against: plugin:PATH (your own router built as a "
                      "shared library, plugin/kvprefix_router_plugin.h) or a "
                      "policy's name; on routed documents (FILEs, --cases, "
                      "e.g. tests/data/cases/serve, and generated ones)")
          ->check(RouterChoice())
          ->group(kRouting);
  CLI::Option* against =
      verify
          .add_option("--against", flags.against,
                      "the policy of SPEC §11.5 the router must agree with: " +
                          ChoiceNames(kRouterPolicies, '\''))
          ->check(CLI::IsMember(PolicyNames()))
          ->group(kRouting);
  router->needs(against)
      ->excludes("--cmd")
      ->excludes("--engines")
      ->excludes("--serving")
      ->excludes("--trace");
  against->needs(router);
  CLI::Option* workers =
      AddIntegerOption<std::uint64_t>(
          verify, "--workers", flags.workers,
          "--router: N of every generated document (default: 1 to 4, drawn "
          "per document)",
          1, kMaxWorkers)
          ->group(kRouting);
  workers->needs(router);
  AddRouterParameterFlags(verify, flags.parameters);
  return {router, workers};
}

// `verify --router R --against P`: verify::RunRouter, supervised.
void RunRouterCheck(const VerifyFlags& flags, const CLI::Option& runs,
                    const CLI::Option& seed, const CLI::Option& workers) {
  verify::RouterRunOptions options{
      .router = RouterSpecNamed(flags.router),
      .against = ApplyRoutingFlags(
                     flags.parameters,
                     RoutingSpec{.router = RouterSpecNamed(flags.against)})
                     .router,
      .files = flags.options.files,
      .cases = flags.options.cases,
      .max_size = flags.options.max_size,
      .time_budget = flags.options.time_budget,
      .shrink_time = flags.options.shrink_time,
      .shrink_attempts = flags.options.shrink_attempts,
      .out = flags.options.out};
  if (runs.count() > 0) options.runs = flags.runs;
  if (seed.count() > 0) options.seed = flags.seed;
  if (workers.count() > 0) options.workers = flags.workers;
  // A router plugin runs in the process verify runs in: supervised, so
  // that its crash or exit ends verify with a line naming it, exit 1,
  // never with the plugin's signal or status (0 included).
  RunSupervised(IsPluginName(flags.router) ? flags.router : flags.against,
                flags.options.timeout, [&] { verify::RunRouter(options); });
}

// `verify` without --router: verify::Run with the options as parsed.
void RunVerify(const VerifyFlags& flags, const CLI::Option& runs,
               const CLI::Option& seed) {
  if (RoutingFlagsGiven(flags.parameters)) {
    throw std::invalid_argument(
        "verify: a router parameter option needs --router and --against");
  }
  verify::RunOptions options = flags.options;
  if (runs.count() > 0) options.runs = flags.runs;
  if (seed.count() > 0) options.seed = flags.seed;
  options.check_format = !flags.no_format_check;
  options.format = flags.format == "requests" ? verify::InputFormat::kRequests
                                              : verify::InputFormat::kBatch;
  options.protocol = flags.protocol == "lines" ? verify::Protocol::kLines
                                               : verify::Protocol::kProcess;
  options.comparison = *checking::ParseComparison(flags.compare);
  options.model = GeneratedModelOf(flags.cache);
  options.implemented = checking::ParseImplementedOptions(flags.implemented);
  verify::Run(options);
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App& verify = *AddVerifySubcommand(app);
  AddInputKindOptions(verify, *flags);
  AddImplementedOptions(verify, *flags);
  AddCacheOptions(verify, *flags);
  CLI::Option* runs = nullptr;
  CLI::Option* seed = nullptr;
  std::tie(runs, seed) = AddInputOptions(verify, *flags);
  AddBudgetOptions(verify, *flags);
  CLI::Option* router = nullptr;
  CLI::Option* workers = nullptr;
  std::tie(router, workers) = AddRouterOptions(verify, *flags);
  verify.callback([flags, runs, seed, router, workers] {
    if (router->count() > 0) {
      RunRouterCheck(*flags, *runs, *seed, *workers);
    } else {
      RunVerify(*flags, *runs, *seed);
    }
  });
}

}  // namespace kvprefix::cli
