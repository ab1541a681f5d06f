// `kvprefix curve`: the hit ratio of a trace at many capacities: for LRU
// exactly in one pass (SPEC §8, "The LRU curve"; kvprefix/lru_curve.h), on
// the radix engine, which reports whole runs; for any other policy, which is
// not a stack algorithm, by one bounded replay per capacity, as `replay`
// runs it, on every core. Optionally drawn with matplotlib.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli/cache_options.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/parallel.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "engines/registry.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "io/replay_document.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/replay.h"
#include "optimized/radix_trie.h"

namespace kvprefix::cli {
namespace {

constexpr std::size_t kDefaultPoints = 32;
// The points of the line --plot draws unless --points says: enough for a
// smooth line on a log axis, still O(points) to evaluate.
constexpr std::size_t kPlotPoints = 256;
// The most --jobs.
constexpr unsigned kMaxJobs = 1024;

struct CurveOptions {
  TraceArguments trace;
  std::string input_format = "mooncake";
  CacheArguments cache;  // --policy, --page-size and --kv-bytes-per-token
  std::string capacities;
  std::size_t points = kDefaultPoints;
  std::string target_hit_ratios;
  std::string format = "jsonl";
  std::string output = "-";
  std::string plot;
  // Replays at once for a policy that is not a stack algorithm.
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  CLI::Option* capacities_option = nullptr;
  CLI::Option* points_option = nullptr;
  CLI::Option* target_option = nullptr;
};

// The comma-separated capacities of --capacities, in nodes.
std::vector<std::uint64_t> ParseCapacityList(const std::string& list,
                                             UInt128 node_bytes) {
  std::vector<std::uint64_t> capacities;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = list.find(',', begin);
    capacities.push_back(
        ParseCapacity(std::string_view(list).substr(begin, end - begin),
                      "--capacities", node_bytes));
    if (end == std::string::npos) return capacities;
    begin = end + 1;
  }
}

// The comma-separated hit ratios of --target-hit-ratio, each a decimal
// from 0 to 1 as --cached-fraction takes one (ParseDecimalFraction, SPEC
// §6 "Numbers": no sign, exponent, hex or leading zero), checked on its
// digits, so that 1.0000000000000000000001 is refused, not rounded to 1. An
// empty item is a mistake, not skipped. A positive target below the
// smallest double is the smallest positive double: every hit ratio above
// 0 is at least 2^-64, so the answer is the same.
std::vector<double> ParseHitRatioList(const std::string& list) {
  std::vector<double> ratios;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = list.find(',', begin);
    const std::string_view item =
        std::string_view(list).substr(begin, end - begin);
    const std::optional<DecimalFraction> fraction = ParseDecimalFraction(item);
    if (!fraction) {
      throw std::invalid_argument(fmt::format(
          "--target-hit-ratio: {}, found '{}'{}", kDecimalFractionExpected,
          EscapeForMessage(item, 1024),
          item.size() == list.size()
              ? ""
              : fmt::format(" in '{}'", EscapeForMessage(list, 1024))));
    }
    double ratio = 1;
    if (!fraction->one) {
      // Digits only now: from_chars reads them all, in any locale.
      const std::from_chars_result read =
          std::from_chars(item.data(), item.data() + item.size(), ratio);
      if (read.ec == std::errc::result_out_of_range) {
        ratio = std::numeric_limits<double>::denorm_min();
      }
    }
    ratios.push_back(ratio);
    if (end == std::string::npos) return ratios;
    begin = end + 1;
  }
}

// What one node of the curve is, for the plot's capacity axis: "tokens",
// "pages of 16 tokens", "hash ids, 512-token blocks", "pages of 4 hash ids,
// 512-token blocks".
std::string NodeUnit(bool block_mode, std::uint64_t block_tokens,
                     std::uint64_t page_size) {
  const std::string symbols = block_mode ? "hash ids" : "tokens";
  std::string unit = page_size == 1
                         ? symbols
                         : fmt::format("pages of {} {}", page_size, symbols);
  if (block_mode) unit += fmt::format(", {}-token blocks", block_tokens);
  return unit;
}

// For each of `capacities`, the matched tokens of `replay --capacity C` with
// the rest of `cache` (policy, page size, model, match limit, trigger) of
// `requests` (CurveEngineName's engine): one bounded replay per capacity, on
// min(jobs, capacities) threads, each taking the next capacity and replaying it
// on an engine of its own; `requests` is shared, read-only. Progress counts the
// requests replayed at all capacities together, shown from this thread.
// Rethrows the first exception of any thread (std::bad_alloc: the caller's
// WhileDoing names it) once all have ended.
std::vector<std::uint64_t> ReplayEachCapacity(
    const SequenceList& requests, std::span<const std::uint64_t> capacities,
    const CacheOptions& cache, unsigned jobs, Progress& progress) {
  std::vector<std::uint64_t> matched(capacities.size());
  std::atomic<std::uint64_t> replayed = 0;
  const std::thread::id progress_thread = std::this_thread::get_id();
  ForEachInParallel(capacities.size(), jobs, [&](std::size_t i) {
    CacheOptions options = cache;
    options.capacity = capacities[i];
    const auto engine = MakeEngine(ModelEngineName(cache.model), options);
    matched[i] =
        Replay(*engine, requests, [&](std::size_t, TokenSpan, const Match&) {
          const std::uint64_t done =
              replayed.fetch_add(1, std::memory_order_relaxed) + 1;
          if (std::this_thread::get_id() == progress_thread) {
            progress.Count("replayed", done);
          }
        }).matched_tokens;
  });
  return matched;
}

// "LRU" for lru: how the plot's axis names the policy.
std::string UpperCase(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return upper;
}

// For lru, one pass over the requests: a Mooncake trace is streamed
// (StreamTrace), so memory holds the trie and a window of the trace; a
// replay document is read whole first, as its page size comes with it. For
// any other policy the requests are read whole, once, and replayed once per
// capacity (ReplayEachCapacity).
void RunCurve(const CurveOptions& options) {
  const bool given_capacities = options.capacities_option->count() > 0;
  const bool given_points = options.points_option->count() > 0;
  const bool given_targets = options.target_option->count() > 0;
  if (given_capacities && given_points) {
    throw std::invalid_argument("give --capacities or --points, not both");
  }
  // With targets the output is one line per target: --capacities and
  // --points only choose what --plot draws.
  if (given_targets && options.plot.empty() &&
      (given_capacities || given_points)) {
    throw std::invalid_argument(fmt::format(
        "{} with --target-hit-ratio only sets what --plot draws (the output "
        "is one line per target): give --plot or leave it out",
        given_capacities ? "--capacities" : "--points"));
  }
  Progress progress;
  std::optional<ReplayInput> document;
  CacheArguments cache = options.cache;
  const bool requests = options.input_format == "requests";
  if (requests) RejectTraceOptionsForDocuments(options.trace);
  // KV tokens of one symbol before paging: a hash id is a block.
  const std::uint64_t symbol_tokens =
      requests ? 1 : SymbolTokens(options.trace);
  const std::vector<double> targets =
      given_targets ? ParseHitRatioList(options.target_hit_ratios)
                    : std::vector<double>{};
  // Checked before the pass: a Mooncake trace's policy before it is read.
  const auto check_targets = [&](const CacheOptions& model) {
    if (given_targets && model.model != CacheModel::kSpec) {
      throw std::invalid_argument(fmt::format(
          "--target-hit-ratio needs --model spec and --policy lru, a stack "
          "algorithm, whose hit ratio never falls as the capacity grows; "
          "model {} is not one",
          NameOf(kCacheModels, model.model)));
    }
    if (given_targets && model.policy != EvictionPolicy::kLru) {
      throw std::invalid_argument(fmt::format(
          "--target-hit-ratio needs --policy lru, a stack algorithm, whose "
          "hit ratio never falls as the capacity grows; {} is not one",
          EvictionPolicyName(model.policy)));
    }
  };
  // The cache of every replay but its capacity (curve has no --capacity).
  CacheOptions model = ToCacheOptions(cache, symbol_tokens);
  if (requests) {
    document = ReadNamed(options.trace.path, [](const std::string& path) {
      return ReadReplayDocumentFile(path);
    });
    cache = ForReplayDocument(options.cache, document->options);
    // The document's policy and model options unless given.
    model = ReplayDocumentCache(options.cache, document->options,
                                options.trace.path);
    model.capacity = kUnbounded;
  }
  const EvictionPolicy policy = model.policy;
  check_targets(model);
  const UInt128 node_bytes = NodeBytes(cache, symbol_tokens);
  // Checked before the pass, so that a typo costs nothing.
  // Given, even as "": an empty list is a mistake, not the default points.
  const std::vector<std::uint64_t> requested =
      given_capacities ? ParseCapacityList(options.capacities, node_bytes)
                       : std::vector<std::uint64_t>{};

  // LRU's curve comes from its stack distances (LruCurve), under either
  // match limit, which changes which path nodes count and not what the cache
  // holds (SPEC §9.4); no other policy, and neither vllm nor sglang, is a
  // stack algorithm, so each capacity is replayed.
  const bool one_pass =
      model.model == CacheModel::kSpec && policy == EvictionPolicy::kLru;
  std::optional<LruCurve<PagedIndex<RadixTrie>>> curve;
  SequenceList whole_trace;  // another policy's Mooncake trace, read once
  const SequenceList* replayed = nullptr;  // what another policy replays
  std::uint64_t request_count = 0;
  std::uint64_t request_tokens = 0;
  std::uint64_t distinct_prefixes = 0;
  const auto note_totals = [&] {
    progress.Note(fmt::format("{} requests, {} tokens; {} distinct prefixes",
                              request_count, request_tokens,
                              distinct_prefixes));
  };
  if (one_pass) {
    curve.emplace(cache.page_size, model.match_limit);
    const auto add_all = [&](const SequenceList& requests) {
      WhileDoing("computing the curve", [&] {
        for (const TokenSpan request : requests) {
          curve->Add(request);
          progress.Count("replayed", curve->requests());
        }
      });
    };
    if (document) {
      add_all(document->requests);
    } else {
      StreamTrace(options.trace, add_all);
    }
    request_count = curve->requests();
    request_tokens = curve->request_tokens();
    distinct_prefixes = curve->distinct_prefixes();
    note_totals();
  } else {
    if (!document) whole_trace = ReadTrace(options.trace);
    replayed = document ? &document->requests : &whole_trace;
    request_count = replayed->size();
    request_tokens = replayed->total_tokens();
    // The capacity past which the model evicts nothing: where --points'
    // capacities end, and the plot's title. vllm's unbounded pool holds
    // node_count blocks; sglang's capacity counts pages while its
    // node_count counts nodes (edges of any number of pages), and its tree
    // holds each distinct page prefix once: a spec trie's nodes at the page
    // size. One more replay, so only when wanted.
    if (!given_capacities || !options.plot.empty()) {
      WhileDoing("computing the curve", [&] {
        CacheOptions counted = model;
        if (model.model == CacheModel::kSglang) {
          counted.model = CacheModel::kSpec;
          counted.match_limit = MatchLimit::kAll;
          counted.trigger = EvictionTrigger::kAfterInsert;
        }
        const auto unbounded =
            MakeEngine(ModelEngineName(counted.model), counted);
        Replay(*unbounded, *replayed,
               [&](std::size_t i, TokenSpan, const Match&) {
                 progress.Count("replayed", i + 1);
               });
        distinct_prefixes = unbounded->node_count();
      });
      note_totals();
    }
  }
  const auto hit_ratio = [&](std::uint64_t matched) {
    return ReplaySummary{.request_tokens = request_tokens,
                         .matched_tokens = matched}
        .hit_ratio();
  };
  // The matched tokens at each of `capacities`, as `replay --capacity C
  // --policy <policy>` finds them.
  const auto matched_tokens = [&](std::span<const std::uint64_t> capacities) {
    if (one_pass) return curve->MatchedTokens(capacities);
    const std::size_t threads =
        std::min<std::size_t>(options.jobs, capacities.size());
    const std::string capacity_count = fmt::format(
        "{} capacit{} on {} thread{}", capacities.size(),
        capacities.size() == 1 ? "y" : "ies", threads, threads == 1 ? "" : "s");
    if (model.model == CacheModel::kSpec) {
      fmt::print(stderr,
                 "kvprefix: curve: {} is not a stack algorithm: replaying "
                 "once per capacity ({})\n",
                 EvictionPolicyName(policy), capacity_count);
    } else {
      fmt::print(stderr,
                 "kvprefix: curve: model {} is not a stack algorithm: one "
                 "replay per capacity, {}\n",
                 NameOf(kCacheModels, model.model), capacity_count);
    }
    return ReplayEachCapacity(*replayed, capacities, model, options.jobs,
                              progress);
  };

  // Each row: capacity,capacity_bytes,matched_tokens,request_tokens,
  // hit_ratio, after target_hit_ratio in target rows. `mark` says what the
  // row is to the plot (plot.h): "point" (a log-spaced capacity nobody
  // asked for), "capacity" (one asked for), "line" (only drawn) or
  // "target". A capacity of nullopt is an unreachable target's.
  std::string csv;
  std::string jsonl;
  std::string plot_csv;
  const auto append_row = [&](std::optional<std::uint64_t> capacity,
                              std::uint64_t matched, std::string_view mark,
                              std::optional<double> target) {
    const std::optional<std::uint64_t> bytes =
        capacity ? CapacityBytes(*capacity, node_bytes) : std::nullopt;
    const std::string capacity_text = capacity ? std::to_string(*capacity) : "";
    const std::string bytes_text = bytes ? std::to_string(*bytes) : "";
    const std::string target_text =
        target ? fmt::format("{}", *target) : std::string();
    const double ratio = hit_ratio(matched);
    const std::string fields =
        fmt::format("{},{},{},{},{}", capacity_text, bytes_text, matched,
                    request_tokens, ratio);
    plot_csv += fmt::format("{},{},{}\n", fields, mark, target_text);
    const bool printed =
        targets.empty() ? mark == "point" || mark == "capacity" : bool(target);
    if (!printed) return;
    csv += target ? fmt::format("{},{}\n", target_text, fields) : fields + "\n";
    jsonl += fmt::format(
        "{{{}\"capacity\":{},\"capacity_bytes\":{},\"matched_tokens\":{},"
        "\"request_tokens\":{},\"hit_ratio\":{}}}\n",
        target ? fmt::format("\"target_hit_ratio\":{},", target_text) : "",
        capacity ? capacity_text : "null", bytes ? bytes_text : "null", matched,
        request_tokens, ratio);
  };
  // Said on stderr once the output is written.
  std::vector<std::string> notes;
  WhileDoing("computing the curve", [&] {
    csv = targets.empty() ? "" : "target_hit_ratio,";
    csv += "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n";
    plot_csv =
        "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio,"
        "mark,target_hit_ratio\n";
    std::vector<std::uint64_t> capacities = requested;
    if (!given_capacities && (targets.empty() || given_points)) {
      capacities = LogSpacedCapacities(distinct_prefixes, options.points);
      if (capacities.size() < options.points) {
        notes.push_back(fmt::format(
            "--points {}: {} line{}: only {} distinct capacities lie from 1 "
            "to the {} distinct prefixes, past which every capacity hits as "
            "much",
            options.points, capacities.size(),
            capacities.size() == 1 ? "" : "s", capacities.size(),
            distinct_prefixes));
      }
    }
    const std::vector<std::uint64_t> matched = matched_tokens(capacities);
    const std::string_view mark =
        given_capacities || given_points ? "capacity" : "point";
    for (std::size_t i = 0; i < capacities.size(); ++i) {
      append_row(capacities[i], matched[i], mark, std::nullopt);
    }
    if (!options.plot.empty()) {
      // Another policy's line joins the capacities replayed: 256 more
      // replays would cost more than the curve itself.
      const std::vector<std::uint64_t> line =
          one_pass ? LogSpacedCapacities(distinct_prefixes, kPlotPoints)
                   : capacities;
      const std::vector<std::uint64_t> line_matched =
          one_pass ? matched_tokens(line) : matched;
      for (std::size_t i = 0; i < line.size(); ++i) {
        append_row(line[i], line_matched[i], "line", std::nullopt);
      }
    }
    // Targets come with lru only (check_targets).
    for (const double target : targets) {
      const std::uint64_t unbounded[] = {kUnbounded};
      const std::uint64_t best = curve->MatchedTokens(unbounded)[0];
      const std::optional<std::uint64_t> capacity =
          curve->SmallestCapacityReaching(target);
      const std::uint64_t at[] = {capacity.value_or(kUnbounded)};
      append_row(capacity, curve->MatchedTokens(at)[0], "target", target);
      if (!capacity) {
        const std::uint64_t reached =
            curve->SmallestCapacityReaching(hit_ratio(best)).value_or(0);
        notes.push_back(fmt::format(
            "--target-hit-ratio {}: unreachable: no capacity hits more than "
            "the unbounded cache's {} (reached from {} on)",
            target, hit_ratio(best),
            reached == 1 ? "1 node" : fmt::format("{} nodes", reached)));
      }
    }
  });
  const auto write_output = [&] {
    WriteFileAtomically(options.output, options.format == "csv" ? csv : jsonl);
  };
  if (options.plot.empty()) {
    write_output();
  } else {
    const bool block_mode = !requests && options.trace.mode == "block";
    const std::string mode = requests
                                 ? std::string("replay document")
                                 : fmt::format("{} mode", options.trace.mode);
    const std::string image = DrawCurve(
        options.plot, plot_csv,
        fmt::format(
            "{}, {}, page size {}: {} requests, {} distinct prefixes",
            std::filesystem::path(options.trace.path).filename().string(), mode,
            cache.page_size, request_count, distinct_prefixes),
        fmt::format(
            "{} capacity (nodes = {})",
            model.model == CacheModel::kSpec
                ? UpperCase(EvictionPolicyName(policy))
                : fmt::format("{} {}", NameOf(kCacheModels, model.model),
                              UpperCase(EvictionPolicyName(policy))),
            NodeUnit(block_mode, symbol_tokens, cache.page_size)),
        one_pass ? "LRU (exact, one pass)" : "a replay per capacity");
    // Neither file is left new when the other cannot be written.
    WritePlotWithOutput(options.plot, image, write_output);
  }
  for (const std::string& note : notes) {
    fmt::print(stderr, "kvprefix: {}\n", note);
  }
}

}  // namespace

void RegisterCurveCommand(CLI::App& app) {
  auto options = std::make_shared<CurveOptions>();
  CLI::App* command = app.add_subcommand(
      "curve",
      "The hit ratio at many capacities: for each capacity C, the matched "
      "and request tokens and the hit ratio that `replay --capacity C "
      "--policy P` gives; exact for lru in one pass (SPEC §8, \"The LRU "
      "curve\"), for any other --policy (not a stack algorithm) by one "
      "replay per capacity, --jobs at a time, said on stderr; so too for "
      "--model vllm and sglang (SPEC §9), while spec with --match-limit "
      "all-but-last stays one pass. One line per "
      "capacity (jsonl: {\"capacity\":C,"
      "\"capacity_bytes\":B|null,\"matched_tokens\":M,\"request_tokens\":R,"
      "\"hit_ratio\":M/R}; csv: the same columns).\n"
      "With --target-hit-ratio, one line per target instead, in the order "
      "given: the smallest capacity whose hit ratio is at least the target, "
      "exact from every stack distance ({\"target_hit_ratio\":T,"
      "\"capacity\":C,...} with the columns above; csv: a first column "
      "target_hit_ratio; lru only). A target above the unbounded cache's hit "
      "ratio "
      "is unreachable: capacity and capacity_bytes null (empty in csv), "
      "matched_tokens and hit_ratio the unbounded cache's, a note on "
      "stderr, and exit status 0.");
  AddTraceArguments(*command, options->trace, /*reads_documents=*/true);
  AddBlockTokensOption(*command, options->trace);
  command
      ->add_option("--input-format", options->input_format,
                   "What TRACE holds: mooncake (a Mooncake trace) or "
                   "requests (a SPEC §8 replay document; its capacity is "
                   "ignored, its policy, page size, model, match limit and "
                   "trigger used unless the option is given)")
      ->check(CLI::IsMember({"mooncake", "requests"}))
      ->capture_default_str();
  AddCacheOptions(*command, options->cache, /*bounded=*/false);
  AddPolicyOption(*command, options->cache,
                  ". lru's curve is exact in one pass; any other policy "
                  "replays the trace once per capacity");
  AddIntegerOption(*command, "--jobs", options->jobs,
                   "Replays run at once, each on its own thread, for a "
                   "--policy other than lru (default: one per core)",
                   1u, kMaxJobs);
  AddKvBytesPerTokenOption(
      *command, options->cache,
      "KV-cache bytes of one token (e.g. 131072 for Llama-3-8B in fp16): "
      "adds capacity_bytes and lets --capacities take sizes such as 8GiB");
  AddModelOptions(*command, options->cache);
  options->capacities_option = command->add_option(
      "--capacities", options->capacities,
      "Comma-separated capacities, each as replay's --capacity takes it: "
      "node counts, or sizes such as 8GiB with --kv-bytes-per-token; with "
      "--target-hit-ratio, only marked on the --plot (and refused without it)");
  options->points_option =
      AddIntegerOption(*command, "--points", options->points,
                       "Capacities log-spaced from 1 to the number of "
                       "distinct prefixes (the unbounded trie's nodes): "
                       "exactly N, or all of them, with a note on stderr, "
                       "if there are fewer; with --target-hit-ratio, only "
                       "marked on the --plot (and refused without it)",
                       std::size_t{1}, kMaxCurvePoints)
          ->capture_default_str();
  options->target_option = command->add_option(
      "--target-hit-ratio", options->target_hit_ratios,
      "Comma-separated hit ratios, decimals from 0 to 1 such as 0.3,0.35 "
      "(plain decimals: no sign or exponent): print the smallest "
      "capacity reaching each (see above) instead of the curve");
  command
      ->add_option("--format", options->format, "Output format: jsonl or csv")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();
  AddOutputOption(*command, "-o,--output", options->output,
                  "Output file, replaced atomically; - is standard output");
  command
      ->add_option(
          "--plot", options->plot,
          "Also draw the curve to this file (.png or .svg) with matplotlib "
          "(Debian package python3-matplotlib), marking the capacities of "
          "--capacities or --points and the --target-hit-ratio answers")
      // A wrong suffix is a usage error (exit 2), found before the trace is
      // replayed.
      ->check(CLI::Validator(
          [](std::string& path) { return PlotPathProblem(path); }, "FILE"));
  command->callback([options] {
    CheckDistinctOutputs("--output", options->output, "--plot", options->plot);
    RunCurve(*options);
  });
}

}  // namespace kvprefix::cli
