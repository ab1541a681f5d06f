// `kvprefix replay`: a serving system's replay of a request trace (SPEC §3),
// on an unbounded index or a cache with a capacity (SPEC §8): each request is
// matched, then inserted (and the cache touched and evicted). Reads a
// Mooncake trace (SPEC §7) and prints the hit summary, or a replay document
// (SPEC §8) and prints every request's match (SPEC §5).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "cli/cache_choice.h"
#include "cli/cache_flags.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/parallel.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/router_table.h"
#include "cli/routing.h"
#include "cli/serving.h"
#include "cli/supervised.h"
#include "engines/registry.h"
#include "io/case_file.h"
#include "io/input_error.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "io/mooncake.h"
#include "io/replay_document.h"
#include "io/serve_answer.h"
#include "kvprefix/replay.h"
#include "plugin/plugin_engine.h"

namespace kvprefix::cli {
namespace {

struct ReplayOptions {
  TraceArguments trace;
  std::string input_format = "mooncake";
  CacheArguments cache;  // --engine too
  std::string matches;   // empty: do not write per-request matches
  std::string output = "-";
  double timeout = 0;  // seconds a plugin's call may take
  CLI::Option* matches_option = nullptr;
  ServeFlags serve;       // SPEC §10
  RoutingFlags routing;   // SPEC §11
  std::string kv_events;  // SPEC §11.11; empty: none
  // A table (--workers 1,2,4 or --router all): cli/router_table.h.
  std::string table_format = "jsonl";
  std::string plot;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  // --table-format, --plot, --jobs: a table's only.
  std::array<CLI::Option*, 3> table_options = {};
};

// Whether the replay serves requests in flight for its options alone: a
// §10 flag, a routing option or --kv-events.
bool ServingFlagsGiven(const ReplayOptions& options) {
  return ServeFlagsGiven(options.serve) || RoutingFlagsGiven(options.routing) ||
         !options.kv_events.empty();
}

// The block events' log, when --kv-events asks for one. A trace read with
// --namespace-field is refused as RunServeReplay refuses a document with
// namespaces: its requests' first tokens are folded with the namespace.
std::unique_ptr<KvEventLog> MaybeEventLog(const ReplayOptions& options) {
  if (options.kv_events.empty()) return nullptr;
  if (Given(options.trace.namespace_field_option)) {
    throw std::invalid_argument(
        "--kv-events: a replay with namespaces (--namespace-field, SPEC "
        "§8.1) has no block events yet: its pages' first tokens stand for "
        "(namespace, token)");
  }
  return std::make_unique<KvEventLog>();
}

// The plugin a run must be supervised for (cli/supervised.h): --engine's
// if it is one, else the first plugin among --router's names, else none
// (the engine's name, which RunSupervised then runs in this process).
std::string SupervisedPlugin(const ReplayOptions& options) {
  if (IsPluginName(options.cache.engine)) return options.cache.engine;
  const std::string_view routers = options.routing.router;
  for (std::size_t begin = 0; begin <= routers.size();) {
    const std::size_t end = std::min(routers.find(',', begin), routers.size());
    const std::string_view name = routers.substr(begin, end - begin);
    if (IsPluginName(name)) return std::string(name);
    begin = end + 1;
  }
  return options.cache.engine;
}

// Writes the block events (before the answer, which thus comes last).
void WriteEvents(const ReplayOptions& options, const KvEventLog* events) {
  if (events != nullptr) WriteOutput(options.kv_events, events->text());
}

// The cache of a serving replay: --engine's, else the model's default
// engine if it has a request lifecycle (and no --kv-events, which only the
// reference caches report), else the reference's (every model's has one).
ChosenCache ServingCache(const ReplayOptions& options, ChosenCache chosen) {
  if (!Given(options.cache.engine_option) &&
      (!HasRequestLifecycle(chosen.engine, chosen.options.model) ||
       !options.kv_events.empty())) {
    chosen.engine = std::string(EngineNames().front());
  }
  return chosen;
}

// A serving replay of a trace (SPEC §10.1): the whole trace is read with its
// timestamps and output lengths, then replayed; prints the settings and
// §10.5's totals (and with --matches each request's answer).
// The trace read whole with its timestamps and output lengths, the §10
// flags applied, and its serving cache (in input.replay.options too).
ServeInput ReadServedTrace(const ReplayOptions& options, ChosenCache& cache) {
  TraceServing serving;
  ServeInput input;
  input.replay.requests = ReadTrace(options.trace, &serving);
  input.arrivals_us = std::move(serving.arrivals_us);
  input.output_lengths = std::move(serving.output_lengths);
  input.serve = ApplyServeFlags(options.serve, {});
  cache = ServingCache(options,
                       ChooseCache(options.cache, SymbolTokens(options.trace)));
  input.replay.options = cache.options;
  return input;
}

TokenUnit TraceUnit(const ReplayOptions& options) {
  return options.trace.mode == "block" ? TokenUnit::kBlock : TokenUnit::kToken;
}

// A table of routed replays (cli/router_table.h) of `input`, its rows from
// the options and `routing` (a document's, or the defaults); `what` names
// the input in the plot's title.
void ReplayTable(const ReplayOptions& options, const ServeInput& input,
                 const ChosenCache& cache, const RoutingSpec& routing,
                 TokenUnit unit, const std::string& what) {
  const ServeOptions& serve = input.serve;
  RunRouterTable(RouterTableRequest{
      .input = input,
      .cache = cache,
      .rows = RoutingTableRows(options.routing, routing),
      .unit = unit,
      .jobs = options.jobs,
      .format = options.table_format,
      .output = options.output,
      .plot = options.plot,
      .title = fmt::format(
          "{}, model {}{}: B = {}, prefill {} µs, decode {} µs per {}", what,
          NameOf(kCacheModels, cache.options.model),
          cache.options.capacity == kUnbounded
              ? std::string()
              : fmt::format(", capacity {}", cache.options.capacity),
          serve.max_running, serve.prefill_us_per_token,
          serve.decode_us_per_token,
          unit == TokenUnit::kBlock ? "block" : "token")});
}

// A table's usage errors found before anything is read: what applies to
// one replay only, and what to a table only.
void CheckTableChoices(const ReplayOptions& options) {
  const bool table = IsRoutingTable(options.routing);
  if (!table) {
    for (const CLI::Option* option : options.table_options) {
      if (Given(option)) {
        throw std::invalid_argument(fmt::format(
            "{} applies to a table of routed replays: give --workers a list "
            "(1,2,4) or --router all (or a list of routers)",
            option->get_name()));
      }
    }
    return;
  }
  if (Given(options.matches_option)) {
    throw std::invalid_argument(
        "--matches does not apply to a table of routed replays (--workers "
        "with a list or --router with several routers)");
  }
  if (!options.kv_events.empty()) {
    throw std::invalid_argument(
        "--kv-events does not apply to a table of routed replays (--workers "
        "with a list or --router with several routers)");
  }
  if (IsPluginName(options.cache.engine)) {
    throw std::invalid_argument(
        "--engine: a table of routed replays does not run a plugin engine "
        "(each worker's cache needs a request lifecycle)");
  }
}

void ServeMooncake(const ReplayOptions& options) {
  Progress progress;
  ChosenCache cache;
  const ServeInput input = ReadServedTrace(options, cache);
  const double read_seconds = progress.Seconds();
  if (IsRoutingTable(options.routing)) {
    return ReplayTable(
        options, input, cache, {}, TraceUnit(options),
        fmt::format(
            "{}, {} mode",
            std::filesystem::path(options.trace.path).filename().string(),
            options.trace.mode));
  }
  // SPEC §11: any routing option makes it a routed replay (N = 1 too).
  const bool routed = RoutingFlagsGiven(options.routing);
  const auto events = MaybeEventLog(options);
  const RoutedAnswer answer = WhileDoing("replaying", [&] {
    if (routed) {
      return RunRoutedReplay(input, ApplyRoutingFlags(options.routing, {}),
                             cache, TraceUnit(options), events.get());
    }
    ServeAnswer one = RunServeReplay(input, cache, events.get());
    return RoutedAnswer{.requests = std::move(one.requests),
                        .totals = one.totals};
  });
  const double replay_seconds = progress.Seconds() - read_seconds;
  progress.Note(fmt::format("served {} requests, {} tokens",
                            answer.totals.requests,
                            answer.totals.request_tokens));
  const std::string line = WhileDoing("formatting the output", [&] {
    std::string engine;
    AppendJsonString(cache.engine, engine);
    std::string text = fmt::format(
        "{{\"engine\":{},\"mode\":\"{}\",\"vocab\":{},{},{},"
        "\"read_seconds\":{:.3f},\"replay_seconds\":{:.3f},",
        engine, options.trace.mode, options.trace.options.vocabulary,
        CacheSummaryJson(cache), ServeSettingsJson(input.serve), read_seconds,
        replay_seconds);
    if (routed) {
      AppendRoutedTotalsJson(answer, text);
    } else {
      text += "\"totals\":";
      AppendServeTotalsJson(answer.totals, text);
    }
    text += "}\n";
    return text;
  });
  if (!options.matches.empty()) {
    std::string lines;
    WhileDoing("formatting the matches", [&] {
      for (std::size_t i = 0; i < answer.requests.size(); ++i) {
        // {"request":i, then the request's answer's members (and worker).
        lines += fmt::format("{{\"request\":{},", i);
        std::string request;
        AppendServedRequestJson(answer.requests[i], request,
                                routed ? &answer.workers_of[i] : nullptr);
        lines.append(request, 1);
        lines += '\n';
      }
    });
    WriteOutput(options.matches, lines);
  }
  WriteEvents(options, events.get());
  WriteOutput(options.output, line);
}

// {"request":i,"request_length":n,"matched_length":m,"cache_node":c}
void AppendMatchLine(std::size_t i, TokenSpan request, const Match& match,
                     std::string& out) {
  fmt::format_to(std::back_inserter(out),
                 "{{\"request\":{},\"request_length\":{},\"matched_length\":{},"
                 "\"cache_node\":{}}}\n",
                 i, request.size(), match.matched_length, match.cache_node);
}

// Throws a usage error if `option` was given: it means nothing with
// --input-format `format`.
void Reject(const CLI::Option* option, std::string_view format) {
  if (option->count() > 0) {
    throw std::invalid_argument(fmt::format(
        "{} does not apply to --input-format {}", option->get_name(), format));
  }
}

// Streams the trace (StreamTrace): each chunk is replayed while the next is
// read. Nothing is written until the whole trace has been replayed: an error
// on any line, however late, leaves stdout and --matches untouched.
void ReplayMooncake(const ReplayOptions& options) {
  if (ServingFlagsGiven(options)) {
    return ServeMooncake(options);
  }
  Progress progress;
  // In block mode a symbol is a hash id: --block-tokens of KV cache.
  const std::uint64_t symbol_tokens = SymbolTokens(options.trace);
  const ChosenCache cache = ChooseCache(options.cache, symbol_tokens);
  const auto index = MakeEngine(cache.engine, cache.options);
  std::string match_lines;
  ReplaySummary summary;
  double replay_seconds = 0;
  const double read_seconds =
      StreamTrace(options.trace, [&](const SequenceList& chunk) {
        const double start = progress.Seconds();
        WhileDoing("replaying", [&] {
          ContinueReplay(
              *index, chunk, summary,
              [&](std::size_t i, TokenSpan request, const Match& match) {
                if (!options.matches.empty()) {
                  AppendMatchLine(i, request, match, match_lines);
                }
                progress.Count("replayed", i + 1);
              });
        });
        replay_seconds += progress.Seconds() - start;
      });
  progress.Note(fmt::format("replayed {} requests, {} tokens; {} nodes",
                            summary.requests, summary.request_tokens,
                            index->node_count()));
  // Both outputs are built before either is written: running out of memory
  // leaves neither.
  const std::string line = WhileDoing("formatting the output", [&] {
    // The engine's name is a plugin's text: a JSON string, escaped.
    std::string engine;
    AppendJsonString(index->name(), engine);
    return fmt::format(
        "{{\"engine\":{},\"mode\":\"{}\",\"vocab\":{},{},\"requests\":{},"
        "\"request_tokens\":{},\"matched_tokens\":{},\"hit_ratio\":{},"
        "\"nodes\":{},\"peak_nodes\":{},\"evictions\":{},\"memory_bytes\":{},"
        "\"read_seconds\":{:.3f},\"replay_seconds\":{:.3f}}}\n",
        engine, options.trace.mode, options.trace.options.vocabulary,
        CacheSummaryJson(cache), summary.requests, summary.request_tokens,
        summary.matched_tokens, summary.hit_ratio(), index->node_count(),
        summary.peak_nodes, index->evicted_count(), index->memory_bytes(),
        read_seconds, replay_seconds);
  });
  if (!options.matches.empty()) WriteOutput(options.matches, match_lines);
  WriteOutput(options.output, line);
}

// --input-format requests: the document's cache, unless an option overrides
// it (ChooseCache).
void ReplayDocument(const ReplayOptions& options) {
  RejectTraceOptionsForDocuments(options.trace);
  Reject(options.matches_option, "requests");
  DocumentPlaces places;
  RoutingSpec routing;
  ServeInput serve_input = ReadNamed(
      options.trace.path, [&places, &routing](const std::string& path) {
        return ReadRoutedDocumentOrCaseFile(path, &places, &routing);
      });
  const ReplayInput& input = serve_input.replay;
  const ChosenCache cache =
      ChooseCache(options.cache, 1,
                  DocumentCache{input.options, places, options.trace.path});
  const bool routed =
      RoutingFlagsGiven(options.routing) || HasRouteMember(places);
  if (IsRoutingTable(options.routing)) {
    serve_input.serve = ApplyServeFlags(options.serve, serve_input.serve);
    serve_input.replay.options = cache.options;
    return ReplayTable(
        options, serve_input, ServingCache(options, cache), routing,
        TokenUnit::kToken,
        std::filesystem::path(options.trace.path).filename().string());
  }
  if (routed || ServingFlagsGiven(options) || HasServeMember(places)) {
    // SPEC §10: a document with any §10 member, or any §10 flag; §11 with
    // any §11 member or option.
    serve_input.serve = ApplyServeFlags(options.serve, serve_input.serve);
    serve_input.replay.options = cache.options;
    const auto events = MaybeEventLog(options);
    std::string json;
    if (routed) {
      const RoutedAnswer answer = WhileDoing("replaying", [&] {
        return RunRoutedReplay(
            serve_input, ApplyRoutingFlags(options.routing, routing),
            ServingCache(options, cache), TokenUnit::kToken, events.get());
      });
      WhileDoing("formatting the output", [&] {
        AppendRoutedAnswerJson(answer, json, /*with_requests=*/true);
      });
    } else {
      const ServeAnswer answer = WhileDoing("replaying", [&] {
        return RunServeReplay(serve_input, ServingCache(options, cache),
                              events.get());
      });
      WhileDoing("formatting the output", [&] {
        AppendServeAnswerJson(answer, json, /*with_requests=*/true);
      });
    }
    WriteEvents(options, events.get());
    return WriteOutput(options.output, json);
  }
  const auto index = MakeEngine(cache.engine, cache.options);
  std::vector<Match> matches;
  WhileDoing("replaying", [&] {
    matches.reserve(input.requests.size());
    Replay(*index, input.requests, input.namespaces,
           [&](std::size_t, TokenSpan, const Match& match) {
             matches.push_back(match);
           });
  });
  std::string json;
  WhileDoing("formatting the output",
             [&] { AppendMatchesJson(input.requests, matches, json); });
  WriteOutput(options.output, json);
}

}  // namespace

void RegisterReplayCommand(CLI::App& app) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* command = app.add_subcommand(
      "replay",
      "Replay requests as a serving system would: match each request, then "
      "insert it (SPEC §3); with --capacity, a cache that touches the "
      "request's path and evicts leaves by --policy (SPEC §8).\n"
      "--input-format mooncake (default): a Mooncake trace (JSON Lines with "
      "input_length and hash_ids); prints one JSON line: engine, mode, "
      "vocab, capacity, policy, page_size, model, match_limit, trigger "
      "(model sglang), capacity_bytes (with --kv-bytes-per-token), "
      "requests, request_tokens, "
      "matched_tokens, hit_ratio (matched/request tokens), nodes, "
      "peak_nodes, evictions, memory_bytes, read_seconds (reading, parsing "
      "and expanding the trace, on a second thread while the replay runs), "
      "replay_seconds. The trace is streamed: memory holds the index and a "
      "few MB of the trace, and nothing is printed unless every line is "
      "good.\n"
      "--input-format requests: a replay document {\"requests\":[[...],...], "
      "\"capacity\":C,\"policy\":\"lru\",\"page_size\":P} (SPEC §8; "
      "\"namespaces\":[...], one string per request, keeps requests of "
      "different namespaces apart, SPEC §8.1; "
      "or a replay case file as `kvprefix verify` writes it; options given "
      "override its cache); prints {\"matches\":[...]} as "
      "`match` does, each request's match before its insert.\n"
      "--workers 1,2,4 (a list) or --router all (or a list): a table of "
      "SPEC §11 routed replays, one per (router, N), --jobs at a time; one "
      "row each (--table-format jsonl or csv): router, workers, requests, "
      "request_tokens, matched_tokens, hit_ratio, imbalance_requests, "
      "imbalance_tokens, imbalance_uncached, refused, waited_for_room, "
      "evicted_pages, peak_pinned, peak_running, peak_queued, mean_wait_us, "
      "p50_wait_us, p99_wait_us, makespan_us (as the single replay's "
      "totals) and replay_seconds; --plot draws hit ratio and imbalance "
      "against N, one line per router.");
  AddTraceArguments(*command, options->trace, /*reads_documents=*/true);
  const char* const input_format_help =
      "What TRACE holds: mooncake (a Mooncake trace) or requests (a SPEC §8 "
      "replay document)";
  AddBlockTokensOption(*command, options->trace);
  AddNamespaceFieldOption(*command, options->trace);
  command
      ->add_option("--input-format", options->input_format, input_format_help)
      ->check(CLI::IsMember({"mooncake", "requests"}))
      ->capture_default_str();
  // The name of 0.2.0, kept working but no longer shown: `curve` has
  // --format for its output, so the input's format is --input-format in both.
  command->add_option("-f,--format", options->input_format, input_format_help)
      ->check(CLI::IsMember({"mooncake", "requests"}))
      ->group("");
  AddCacheEngineOption(*command, options->cache);
  AddCacheOptions(*command, options->cache, /*bounded=*/true);
  options->matches_option = AddOutputOption(
      *command, "--matches", options->matches,
      "--input-format mooncake: also write every request's match as JSON Lines "
      "to this file ({\"request\":i,\"request_length\":n,\"matched_length\":m,"
      "\"cache_node\":c}); - is standard output");
  AddOutputOption(*command, "-o,--output", options->output,
                  "Output file (the summary line, or with --input-format "
                  "requests the matches), replaced atomically; - is standard "
                  "output");
  AddPluginTimeoutOption(*command, options->timeout);
  AddServeFlags(*command, options->serve);
  AddOutputOption(*command, "--kv-events", options->kv_events,
                  "Also write each worker's block events (the pages its "
                  "cache stores and removes, and each arrival with every "
                  "worker's matched length) as JSON Lines to this file "
                  "(SPEC §11.11); a serving replay on the reference caches; "
                  "- is standard output")
      ->group("Serving replay (SPEC §10)");
  AddRoutingFlags(*command, options->routing);
  const char* const table_group = "A table of routed replays (SPEC §11)";
  options->table_options = {
      command
          ->add_option("--table-format", options->table_format,
                       "A table's output: jsonl (one object per row) or csv "
                       "(a header line, then one line per row)")
          ->check(CLI::IsMember({"jsonl", "csv"}))
          ->capture_default_str()
          ->group(table_group),
      command
          ->add_option("--plot", options->plot,
                       "Also draw the table to this file (.png or .svg) "
                       "with matplotlib: hit ratio and imbalance_requests "
                       "against the worker count, one line per router")
          ->check(CLI::Validator(
              [](std::string& path) { return PlotPathProblem(path); }, "FILE"))
          ->group(table_group),
      AddIntegerOption(*command, "--jobs", options->jobs,
                       "A table's replays run at once, each on its own "
                       "thread (default: one per core)",
                       1u, kMaxJobs)
          ->group(table_group)};
  command->callback([options] {
    CheckDistinctOutputs("--matches", options->matches, "--output",
                         options->output);
    CheckDistinctOutputs("--kv-events", options->kv_events, "--output",
                         options->output);
    CheckDistinctOutputs("--kv-events", options->kv_events, "--matches",
                         options->matches);
    CheckDistinctOutputs("--output", options->output, "--plot", options->plot);
    CheckTableChoices(*options);
    RunSupervised(SupervisedPlugin(*options), options->timeout, [&] {
      if (options->input_format == "requests") {
        ReplayDocument(*options);
      } else {
        ReplayMooncake(*options);
      }
    });
  });
}

}  // namespace kvprefix::cli
