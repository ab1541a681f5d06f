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
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli/byte_sizes.h"
#include "cli/cache_choice.h"
#include "cli/cache_flags.h"
#include "cli/capacity_search.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/parallel.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/serve_curve.h"
#include "cli/serving.h"
#include "engines/registry.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "io/replay_document.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/namespaces.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/replay.h"
#include "optimized/radix_trie.h"

namespace kvprefix::cli {
namespace {

constexpr std::size_t kDefaultPoints = 32;
// The points of the line --plot draws unless --points says: enough for a
// smooth line on a log axis, still O(points) to evaluate.
constexpr std::size_t kPlotPoints = 256;
struct CurveOptions {
  TraceArguments trace;
  std::string input_format = "mooncake";
  // --policy, --page-size, --kv-bytes-per-token and the model's
  CacheArguments cache;
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
  ServeFlags serve;  // SPEC §10: a serving replay per capacity
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

// "LRU" for lru: how the plot's axis names the policy.
std::string UpperCase(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return upper;
}

// The usage errors of --capacities, --points and --target-hit-ratio
// together, found before anything is read.
void CheckCurveChoices(const CurveOptions& options) {
  const bool given_capacities = Given(options.capacities_option);
  const bool given_points = Given(options.points_option);
  if (given_capacities && given_points) {
    throw std::invalid_argument("give --capacities or --points, not both");
  }
  // With targets the output is one line per target: --capacities and
  // --points only choose what --plot draws.
  if (Given(options.target_option) && options.plot.empty() &&
      (given_capacities || given_points)) {
    throw std::invalid_argument(fmt::format(
        "{} with --target-hit-ratio only sets what --plot draws (the output "
        "is one line per target): give --plot or leave it out",
        given_capacities ? "--capacities" : "--points"));
  }
}

// What a curve is computed from: the trace's or document's cache (its
// capacity unbounded: curve has no --capacity) and, for a replay document,
// its requests.
struct CurveSource {
  ChosenCache cache;
  std::uint64_t symbol_tokens = 1;  // KV tokens of one symbol before paging
  std::optional<ReplayInput> document;
};

// The source of `options`' curve: a replay document is read here (its page
// size comes with it), a Mooncake trace later.
CurveSource ReadCurveSource(const CurveOptions& options) {
  CurveSource source;
  if (options.input_format != "requests") {
    // A hash id is a block.
    source.symbol_tokens = SymbolTokens(options.trace);
    source.cache = ChooseCache(options.cache, source.symbol_tokens);
    return source;
  }
  // The flags are checked with the document's members (ChooseCache), not
  // alone: `--trigger` is right for an sglang document.
  DocumentPlaces places;
  source.document =
      ReadNamed(options.trace.path, [&places](const std::string& path) {
        return ReadReplayDocumentFile(path, &places);
      });
  // A curve needs no request's tokens but its engine's (SPEC §8.1).
  FoldNamespaces(source.document->requests, source.document->namespaces);
  source.cache = ChooseCache(
      options.cache, 1,
      DocumentCache{source.document->options, places, options.trace.path});
  source.cache.options.capacity = kUnbounded;
  return source;
}

// The requests' totals and what answers for any capacity: for model spec
// with lru the stack distances of one pass (LruCurve), under either match
// limit, which changes which path nodes count and not what the cache holds
// (SPEC §9.4); else the requests, replayed once per capacity.
struct CurveData {
  bool one_pass = false;
  std::optional<LruCurve<PagedIndex<RadixTrie>>> lru;
  SequenceList requests;  // replayed per capacity (not one_pass)
  std::uint64_t request_count = 0;
  std::uint64_t request_tokens = 0;
  std::uint64_t distinct_prefixes = 0;
};

// One pass over the requests: a Mooncake trace is streamed (StreamTrace),
// so memory holds the trie and a window of the trace.
void AddToLruCurve(const CurveOptions& options, const CurveSource& source,
                   CurveData& data, Progress& progress) {
  data.lru.emplace(source.cache.options.page_size,
                   source.cache.options.match_limit);
  const auto add_all = [&](const SequenceList& requests) {
    WhileDoing("computing the curve", [&] {
      for (const TokenSpan request : requests) {
        data.lru->Add(request);
        progress.Count("replayed", data.lru->requests());
      }
    });
  };
  if (source.document) {
    add_all(source.document->requests);
  } else {
    StreamTrace(options.trace, add_all);
  }
  data.request_count = data.lru->requests();
  data.request_tokens = data.lru->request_tokens();
  data.distinct_prefixes = data.lru->distinct_prefixes();
}

// ReplayedCallback counting on `progress`.
ReplayedCallback CountOn(Progress& progress) {
  return [&progress](std::uint64_t done) { progress.Count("replayed", done); };
}

// CountDistinctPrefixes, counted on `progress`, naming what ran out of
// memory.
std::uint64_t CountDistinctPrefixesShown(const SequenceList& requests,
                                         const CacheOptions& model,
                                         Progress& progress) {
  return WhileDoing("computing the curve", [&] {
    return CountDistinctPrefixes(requests, model, CountOn(progress));
  });
}

// The curve's data: one pass, or the requests read whole, once.
CurveData ReadCurveData(const CurveOptions& options, CurveSource& source,
                        Progress& progress) {
  CurveData data;
  const CacheOptions& model = source.cache.options;
  data.one_pass =
      model.model == CacheModel::kSpec && model.policy == EvictionPolicy::kLru;
  const auto note_totals = [&] {
    progress.Note(fmt::format("{} requests, {} tokens; {} distinct prefixes",
                              data.request_count, data.request_tokens,
                              data.distinct_prefixes));
  };
  if (data.one_pass) {
    AddToLruCurve(options, source, data, progress);
    note_totals();
    return data;
  }
  data.requests = source.document ? std::move(source.document->requests)
                                  : ReadTrace(options.trace);
  data.request_count = data.requests.size();
  data.request_tokens = data.requests.total_tokens();
  // Where --points' capacities and a target's bisection end, and the
  // plot's title: one more replay, so only when wanted.
  if (!Given(options.capacities_option) || !options.plot.empty() ||
      Given(options.target_option)) {
    data.distinct_prefixes =
        CountDistinctPrefixesShown(data.requests, model, progress);
    note_totals();
  }
  return data;
}

// The matched tokens at each of `capacities`, as `replay --capacity C` with
// `model`'s policy and options finds them: from the stack distances, or one
// replay per capacity (said on stderr).
std::vector<std::uint64_t> MatchedTokens(
    const CurveOptions& options, CurveData& data, const CacheOptions& model,
    std::span<const std::uint64_t> capacities, Progress& progress) {
  if (data.one_pass) return data.lru->MatchedTokens(capacities);
  if (capacities.empty()) return {};  // targets alone
  const std::size_t threads =
      std::min<std::size_t>(options.jobs, capacities.size());
  const std::string capacity_count = fmt::format(
      "{} capacit{} on {} thread{}", capacities.size(),
      capacities.size() == 1 ? "y" : "ies", threads, threads == 1 ? "" : "s");
  if (model.model == CacheModel::kSpec) {
    fmt::print(stderr,
               "kvprefix: curve: {} is not a stack algorithm: replaying "
               "once per capacity ({})\n",
               EvictionPolicyName(model.policy), capacity_count);
  } else {
    fmt::print(stderr,
               "kvprefix: curve: model {} is not a stack algorithm: one "
               "replay per capacity, {}\n",
               NameOf(kCacheModels, model.model), capacity_count);
  }
  return ReplayEachCapacity(data.requests, capacities, model, options.jobs,
                            CountOn(progress));
}

// The output's rows, as csv, jsonl and the plot's csv. Each row:
// capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio, after
// target_hit_ratio in target rows.
class CurveRows {
 public:
  CurveRows(bool targets, std::uint64_t request_tokens, UInt128 node_bytes)
      : targets_(targets),
        request_tokens_(request_tokens),
        node_bytes_(node_bytes) {
    csv = targets ? "target_hit_ratio," : "";
    csv += "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n";
    plot_csv =
        "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio,"
        "mark,target_hit_ratio\n";
  }

  double HitRatio(std::uint64_t matched) const {
    return ReplaySummary{.request_tokens = request_tokens_,
                         .matched_tokens = matched}
        .hit_ratio();
  }

  // `mark` says what the row is to the plot (plot.h): "point" (a
  // log-spaced capacity nobody asked for), "capacity" (one asked for),
  // "line" (only drawn) or "target". A capacity of nullopt is an
  // unreachable target's.
  void Append(std::optional<std::uint64_t> capacity, std::uint64_t matched,
              std::string_view mark, std::optional<double> target) {
    const std::optional<std::uint64_t> bytes =
        capacity ? CapacityBytes(*capacity, node_bytes_) : std::nullopt;
    const std::string capacity_text = capacity ? std::to_string(*capacity) : "";
    const std::string bytes_text = bytes ? std::to_string(*bytes) : "";
    const std::string target_text =
        target ? fmt::format("{}", *target) : std::string();
    const double ratio = HitRatio(matched);
    const std::string fields =
        fmt::format("{},{},{},{},{}", capacity_text, bytes_text, matched,
                    request_tokens_, ratio);
    plot_csv += fmt::format("{},{},{}\n", fields, mark, target_text);
    const bool printed =
        targets_ ? bool(target) : mark == "point" || mark == "capacity";
    if (!printed) return;
    csv += target ? fmt::format("{},{}\n", target_text, fields) : fields + "\n";
    jsonl += fmt::format(
        "{{{}\"capacity\":{},\"capacity_bytes\":{},\"matched_tokens\":{},"
        "\"request_tokens\":{},\"hit_ratio\":{}}}\n",
        target ? fmt::format("\"target_hit_ratio\":{},", target_text) : "",
        capacity ? capacity_text : "null", bytes ? bytes_text : "null", matched,
        request_tokens_, ratio);
  }

  std::string csv;
  std::string jsonl;
  std::string plot_csv;

 private:
  bool targets_;
  std::uint64_t request_tokens_;
  UInt128 node_bytes_;
};

// The capacities of the curve's lines: --capacities', else --points
// log-spaced ones (with a note when fewer exist); none with targets alone.
std::vector<std::uint64_t> CurveCapacities(const CurveOptions& options,
                                           const CurveData& data,
                                           UInt128 node_bytes,
                                           std::vector<std::string>& notes) {
  // Given, even as "": an empty list is a mistake, not the default points.
  if (Given(options.capacities_option)) {
    return ParseCapacityList(options.capacities, node_bytes);
  }
  if (Given(options.target_option) && !Given(options.points_option)) return {};
  std::vector<std::uint64_t> capacities =
      LogSpacedCapacities(data.distinct_prefixes, options.points);
  if (capacities.size() < options.points) {
    notes.push_back(fmt::format(
        "--points {}: {} line{}: only {} distinct capacities lie from 1 "
        "to the {} distinct prefixes, past which every capacity hits as "
        "much",
        options.points, capacities.size(), capacities.size() == 1 ? "" : "s",
        capacities.size(), data.distinct_prefixes));
  }
  return capacities;
}

// The note of an unreachable target: the unbounded cache's hit ratio and
// the capacity it is reached from, found as `how` says ("" for lru).
std::string UnreachableNote(double target, double best, std::uint64_t reached,
                            std::string_view how) {
  return fmt::format(
      "--target-hit-ratio {}: unreachable: no capacity hits more than the "
      "unbounded cache's {} (reached from {} on{})",
      target, best, reached == 1 ? "1 node" : fmt::format("{} nodes", reached),
      how);
}

// One row per --target-hit-ratio, from the stack distances for lru, else by
// replays (cli/capacity_search.h's TargetBisection, which says on stderr
// what it assumed and checked), and a note for each unreachable one.
void AppendTargetRows(const CurveOptions& options,
                      std::span<const double> targets, CurveData& data,
                      const CacheOptions& model, CurveRows& rows,
                      std::vector<std::string>& notes, Progress& progress) {
  if (targets.empty()) return;
  if (!data.one_pass) {
    TargetBisection bisection(data.requests, model, data.distinct_prefixes,
                              data.request_tokens, options.jobs,
                              CountOn(progress));
    const std::uint64_t best = bisection.Matched(data.distinct_prefixes);
    for (const double target : targets) {
      const std::optional<std::uint64_t> capacity =
          bisection.SmallestReaching(target);
      rows.Append(capacity, capacity ? bisection.Matched(*capacity) : best,
                  "target", target);
      if (capacity) {
        notes.push_back(bisection.Check(target, *capacity));
      } else {
        notes.push_back(UnreachableNote(
            target, rows.HitRatio(best),
            *bisection.SmallestReaching(rows.HitRatio(best)),
            ", by bisection, assuming the hit ratio grows with capacity"));
      }
    }
    return;
  }
  for (const double target : targets) {
    const std::uint64_t unbounded[] = {kUnbounded};
    const std::uint64_t best = data.lru->MatchedTokens(unbounded)[0];
    const std::optional<std::uint64_t> capacity =
        data.lru->SmallestCapacityReaching(target);
    const std::uint64_t at[] = {capacity.value_or(kUnbounded)};
    rows.Append(capacity, data.lru->MatchedTokens(at)[0], "target", target);
    if (!capacity) {
      notes.push_back(UnreachableNote(
          target, rows.HitRatio(best),
          data.lru->SmallestCapacityReaching(rows.HitRatio(best)).value_or(0),
          ""));
    }
  }
}

// Writes the output, and with --plot the drawing with it.
void WriteCurve(const CurveOptions& options, const CurveSource& source,
                const CurveData& data, const CurveRows& rows) {
  const auto write_output = [&] {
    WriteFileAtomically(options.output,
                        options.format == "csv" ? rows.csv : rows.jsonl);
  };
  if (options.plot.empty()) return write_output();
  const CacheOptions& model = source.cache.options;
  const bool requests = source.document.has_value();
  const bool block_mode = !requests && options.trace.mode == "block";
  const std::string mode = requests
                               ? std::string("replay document")
                               : fmt::format("{} mode", options.trace.mode);
  const std::string policy = UpperCase(EvictionPolicyName(model.policy));
  const std::string image = DrawCurve(
      options.plot, rows.plot_csv,
      fmt::format("{}, {}, page size {}: {} requests, {} distinct prefixes",
                  std::filesystem::path(options.trace.path).filename().string(),
                  mode, model.page_size, data.request_count,
                  data.distinct_prefixes),
      fmt::format(
          "{} capacity (nodes = {})",
          model.model == CacheModel::kSpec
              ? policy
              : fmt::format("{} {}", NameOf(kCacheModels, model.model), policy),
          NodeUnit(block_mode, source.symbol_tokens, model.page_size)),
      data.one_pass ? "LRU (exact, one pass)" : "a replay per capacity");
  // Neither file is left new when the other cannot be written.
  WritePlotWithOutput(options.plot, image, write_output);
}

// `curve --max-running B ...`: a serving replay per capacity of
// --capacities (serve_curve.h). Which of curve's options it takes.
void RunCurveServing(const CurveOptions& options) {
  const auto refuse = [](std::string_view what) {
    throw std::invalid_argument(fmt::format(
        "{} does not apply with the serving options (--max-running, ...): "
        "a serving curve replays each capacity of --capacities",
        what));
  };
  if (options.input_format != "mooncake") refuse("--input-format requests");
  if (Given(options.target_option)) refuse("--target-hit-ratio");
  if (Given(options.points_option)) refuse("--points");
  if (!options.plot.empty()) refuse("--plot");
  if (!Given(options.capacities_option)) {
    throw std::invalid_argument(
        "the serving options (--max-running, ...) need --capacities");
  }
  const std::uint64_t symbol_tokens = SymbolTokens(options.trace);
  ChosenCache cache = ChooseCache(options.cache, symbol_tokens);
  if (!HasRequestLifecycle(cache.engine, cache.options.model)) {
    cache.engine = std::string(EngineNames().front());
  }
  RunServeCurve(ServeCurveRequest{
      .trace = options.trace,
      .cache = cache,
      .serve = options.serve,
      .capacities = ParseCapacityList(options.capacities, cache.node_bytes),
      .jobs = options.jobs,
      .format = options.format,
      .output = options.output});
}

// The curve of `options`, its targets or both, and the notes said on stderr
// once the output is written.
void RunCurve(const CurveOptions& options) {
  if (ServeFlagsGiven(options.serve)) return RunCurveServing(options);
  CheckCurveChoices(options);
  if (options.input_format == "requests") {
    RejectTraceOptionsForDocuments(options.trace);
  }
  const std::vector<double> targets =
      Given(options.target_option)
          ? ParseHitRatioList(options.target_hit_ratios)
          : std::vector<double>{};
  Progress progress;
  CurveSource source = ReadCurveSource(options);
  const CacheOptions model = source.cache.options;
  // Checked before the pass, so that a typo costs nothing.
  if (Given(options.capacities_option)) {
    ParseCapacityList(options.capacities, source.cache.node_bytes);
  }
  CurveData data = ReadCurveData(options, source, progress);
  CurveRows rows(!targets.empty(), data.request_tokens,
                 source.cache.node_bytes);
  std::vector<std::string> notes;
  WhileDoing("computing the curve", [&] {
    const std::vector<std::uint64_t> capacities =
        CurveCapacities(options, data, source.cache.node_bytes, notes);
    const std::vector<std::uint64_t> matched =
        MatchedTokens(options, data, model, capacities, progress);
    const std::string_view mark =
        Given(options.capacities_option) || Given(options.points_option)
            ? "capacity"
            : "point";
    for (std::size_t i = 0; i < capacities.size(); ++i) {
      rows.Append(capacities[i], matched[i], mark, std::nullopt);
    }
    if (!options.plot.empty()) {
      // Another policy's line joins the capacities replayed: 256 more
      // replays would cost more than the curve itself.
      const std::vector<std::uint64_t> line =
          data.one_pass
              ? LogSpacedCapacities(data.distinct_prefixes, kPlotPoints)
              : capacities;
      const std::vector<std::uint64_t> line_matched =
          data.one_pass ? data.lru->MatchedTokens(line) : matched;
      for (std::size_t i = 0; i < line.size(); ++i) {
        rows.Append(line[i], line_matched[i], "line", std::nullopt);
      }
    }
    AppendTargetRows(options, targets, data, model, rows, notes, progress);
  });
  WriteCurve(options, source, data, rows);
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
      "given: the smallest capacity whose hit ratio is at least the target "
      "({\"target_hit_ratio\":T,\"capacity\":C,...} with the columns "
      "above; csv: a first column target_hit_ratio): for lru exact from every "
      "stack distance; for any other policy and for --model vllm and sglang, "
      "which are not stack algorithms, by a bisection over capacity of "
      "replays (--jobs at a time) that assumes the hit ratio grows with "
      "capacity, which these caches do not promise: a note on stderr gives "
      "the replays at the capacity and one below, and says so if the "
      "capacities replayed show the hit ratio falling. A target above the "
      "unbounded cache's hit ratio is unreachable: capacity and "
      "capacity_bytes null (empty in csv), matched_tokens and hit_ratio the "
      "unbounded cache's, a note on stderr, and exit status 0.\n"
      "With --max-running B (and the other serving options, SPEC §10), one "
      "serving replay of the trace per capacity of --capacities: one line "
      "each with the hit ratio and the waits at that concurrency "
      "({\"capacity\":C,\"capacity_bytes\":B|null,\"max_running\":B,"
      "\"matched_tokens\":M,\"request_tokens\":R,\"hit_ratio\":M/R,"
      "\"waited_for_room\":W,\"refused\":F,\"mean_wait_us\":..,"
      "\"p50_wait_us\":..,\"p99_wait_us\":..,\"makespan_us\":..}).");
  AddTraceArguments(*command, options->trace, /*reads_documents=*/true);
  AddBlockTokensOption(*command, options->trace);
  AddNamespaceFieldOption(*command, options->trace);
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
                   "cache other than lru's (another --policy, --model vllm "
                   "or sglang; default: one per core)",
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
      "capacity reaching each (see above; by bisection of replays, assuming "
      "the hit ratio grows with capacity, for a cache other than lru's) "
      "instead of the curve");
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
  AddServeFlags(*command, options->serve);
  command->callback([options] {
    CheckDistinctOutputs("--output", options->output, "--plot", options->plot);
    RunCurve(*options);
  });
}

}  // namespace kvprefix::cli
