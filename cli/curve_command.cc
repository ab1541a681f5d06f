// `kvprefix curve`: the exact LRU hit ratio of a trace at many capacities,
// in one pass (SPEC §8, "The LRU curve"; kvprefix/lru_curve.h), on the radix
// engine, which reports whole runs; optionally drawn with matplotlib.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cache_options.h"
#include "cli/commands.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "io/json_output.h"
#include "io/replay_document.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/paged_index.h"
#include "optimized/radix_trie.h"

namespace kvprefix::cli {
namespace {

constexpr std::size_t kDefaultPoints = 32;

struct CurveOptions {
  TraceArguments trace;
  std::string input_format = "mooncake";
  CacheArguments cache;  // --page-size and --kv-bytes-per-token
  std::string capacities;
  std::size_t points = kDefaultPoints;
  std::string format = "jsonl";
  std::string output = "-";
  std::string plot;
  CLI::Option* capacities_option = nullptr;
  CLI::Option* points_option = nullptr;
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

// One pass over the requests: a Mooncake trace is streamed (StreamTrace),
// so memory holds the trie and a window of the trace; a replay document is
// read whole first, as its page size comes with it.
void RunCurve(const CurveOptions& options) {
  if (options.capacities_option->count() > 0 &&
      options.points_option->count() > 0) {
    throw std::invalid_argument("give --capacities or --points, not both");
  }
  Progress progress;
  std::optional<ReplayInput> document;
  CacheArguments cache = options.cache;
  // KV tokens of one symbol before paging: a hash id is a 512-token block.
  std::uint64_t symbol_tokens =
      options.trace.mode == "block" ? kMooncakeBlockTokens : 1;
  if (options.input_format == "requests") {
    document = ReadNamed(options.trace.path, [](const std::string& path) {
      return ReadReplayDocumentFile(path);
    });
    cache = ForReplayDocument(options.cache, document->options);
    symbol_tokens = 1;
  }
  const UInt128 node_bytes = NodeBytes(cache, symbol_tokens);
  // Checked before the pass, so that a typo costs nothing.
  // Given, even as "": an empty list is a mistake, not the default points.
  std::vector<std::uint64_t> capacities =
      options.capacities_option->count() == 0
          ? std::vector<std::uint64_t>{}
          : ParseCapacityList(options.capacities, node_bytes);

  LruCurve<PagedIndex<RadixTrie>> curve(cache.page_size);
  const auto add_all = [&](const SequenceList& requests) {
    WhileDoing("computing the curve", [&] {
      for (const TokenSpan request : requests) {
        curve.Add(request);
        progress.Count("replayed", curve.requests());
      }
    });
  };
  if (document) {
    add_all(document->requests);
  } else {
    StreamTrace(options.trace, add_all);
  }
  progress.Note(fmt::format("{} requests, {} tokens; {} distinct prefixes",
                            curve.requests(), curve.request_tokens(),
                            curve.distinct_prefixes()));
  const std::vector<std::uint64_t> matched =
      WhileDoing("computing the curve", [&] {
        if (capacities.empty()) {
          capacities =
              LogSpacedCapacities(curve.distinct_prefixes(), options.points);
        }
        return curve.MatchedTokens(capacities);
      });

  // Both forms are built (the plot reads the CSV); they are small.
  std::string csv =
      "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n";
  std::string jsonl;
  WhileDoing("formatting the output", [&] {
    for (std::size_t i = 0; i < capacities.size(); ++i) {
      const UInt128 bytes = capacities[i] * node_bytes;
      const bool known =
          node_bytes != 0 && bytes <= std::numeric_limits<std::uint64_t>::max();
      const std::string bytes_text =
          known ? std::to_string(static_cast<std::uint64_t>(bytes)) : "";
      const double ratio =
          curve.request_tokens() == 0
              ? 0.0
              : static_cast<double>(matched[i]) /
                    static_cast<double>(curve.request_tokens());
      csv += fmt::format("{},{},{},{},{}\n", capacities[i], bytes_text,
                         matched[i], curve.request_tokens(), ratio);
      jsonl += fmt::format(
          "{{\"capacity\":{},\"capacity_bytes\":{},\"matched_tokens\":{},"
          "\"request_tokens\":{},\"hit_ratio\":{}}}\n",
          capacities[i], known ? bytes_text : "null", matched[i],
          curve.request_tokens(), ratio);
    }
  });
  if (!options.plot.empty()) {
    DrawCurve(
        options.plot, csv,
        fmt::format(
            "{}: {} requests, {} distinct prefixes, page size {}",
            std::filesystem::path(options.trace.path).filename().string(),
            curve.requests(), curve.distinct_prefixes(), cache.page_size));
  }
  WriteFileAtomically(options.output, options.format == "csv" ? csv : jsonl);
}

}  // namespace

void RegisterCurveCommand(CLI::App& app) {
  auto options = std::make_shared<CurveOptions>();
  CLI::App* command = app.add_subcommand(
      "curve",
      "The exact LRU hit ratio at many capacities in one pass (SPEC §8, "
      "\"The LRU curve\"): for each capacity C, the matched and request "
      "tokens and the hit ratio that `replay --capacity C --policy lru` "
      "gives. One line per capacity (jsonl: {\"capacity\":C,"
      "\"capacity_bytes\":B|null,\"matched_tokens\":M,\"request_tokens\":R,"
      "\"hit_ratio\":M/R}; csv: the same columns).");
  AddTraceArguments(*command, options->trace);
  command
      ->add_option("--input-format", options->input_format,
                   "What TRACE holds: mooncake (a Mooncake trace) or "
                   "requests (a SPEC §8 replay document; its capacity and "
                   "policy are ignored, its page size used)")
      ->check(CLI::IsMember({"mooncake", "requests"}))
      ->capture_default_str();
  AddCacheOptions(*command, options->cache, /*bounded=*/false);
  AddKvBytesPerTokenOption(
      *command, options->cache,
      "KV-cache bytes of one token (e.g. 131072 for Llama-3-8B in fp16): "
      "adds capacity_bytes and lets --capacities take sizes such as 8GiB");
  options->capacities_option = command->add_option(
      "--capacities", options->capacities,
      "Comma-separated capacities, each as replay's --capacity takes it: "
      "node counts, or sizes such as 8GiB with --kv-bytes-per-token");
  options->points_option =
      AddIntegerOption(*command, "--points", options->points,
                       "Capacities log-spaced from 1 to the number of "
                       "distinct prefixes (the unbounded trie's nodes)",
                       std::size_t{1}, kMaxCurvePoints)
          ->capture_default_str();
  command
      ->add_option("--format", options->format, "Output format: jsonl or csv")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();
  command
      ->add_option("-o,--output", options->output,
                   "Output file, replaced atomically; - is standard output")
      ->capture_default_str();
  command
      ->add_option(
          "--plot", options->plot,
          "Also draw the curve to this file (.png or .svg) with matplotlib "
          "(Debian package python3-matplotlib)")
      // A wrong suffix is a usage error (exit 2), found before the trace is
      // replayed.
      ->check(CLI::Validator(
          [](std::string& path) { return PlotPathProblem(path); }, "FILE"));
  command->callback([options] { RunCurve(*options); });
}

}  // namespace kvprefix::cli
