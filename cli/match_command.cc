// `kvprefix match`: the batch job of SPEC §2 on a SPEC §4 input file,
// answering per SPEC §5. The cached sequences are inserted in order (an
// engine inserts exclusively); the requests are then matched and their
// answers formatted on every core (matches are const and thread-safe), in
// contiguous chunks written in request order, so the bytes are the same
// whatever the number of threads.
//
// Under --model vllm or sglang (SPEC §9, unbounded) the cache is built as
// the model builds it, each cached sequence served as a request is (an
// engine's Insert under a model is its Access for the effect), and each
// request gets the model's match step changing nothing (ModelMatch), so
// cache_node is the model's ID: vllm's block, sglang's node. SPEC §9 says
// only "The batch job (§2) is unchanged"; this reading is cli/README.md's.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/cache_choice.h"
#include "cli/cache_flags.h"
#include "cli/commands.h"
#include "cli/parallel.h"
#include "cli/progress.h"
#include "cli/supervised.h"
#include "engines/registry.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "kvprefix/batch.h"
#include "kvprefix/huge_pages.h"

namespace kvprefix::cli {
namespace {

struct MatchOptions {
  std::string input = "-";
  // --engine, --page-size, --model and --match-limit: the batch job has no
  // capacity, so nothing to evict and no trigger.
  CacheArguments cache;
  std::string output = "-";
  double timeout = 0;  // seconds a plugin's call may take
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
};

// What step 1 of `index`'s model answers for `request`, changing nothing
// (SPEC §9): vllm's MatchPrefix is its step 1, the cap to n - 1 tokens
// included (SPEC §9.2); the others' MatchPrefix matches the whole request,
// so the match limit cuts the key first (SPEC §9.1 for spec, §9.3's match
// key for sglang). Thread-safe as MatchPrefix.
Match ModelMatch(const PrefixIndex& index, TokenSpan request) {
  const CacheOptions& options = index.options();
  if (options.model == CacheModel::kVllm) return index.MatchPrefix(request);
  return index.MatchPrefix(request.first(MatchLimitTokens(
      options.match_limit, request.size(), options.page_size)));
}

// Chunks per thread: enough that an unlucky chunk of long requests does not
// leave the other threads idle at the end.
constexpr std::size_t kChunksPerThread = 8;
// The most --threads.
constexpr unsigned kMaxThreads = 1024;

// Matches every request of `engine_requests` (the requests as the engine
// sees them: `requests` folded with their namespaces, or `requests`
// themselves) against `index` and formats the answers for `requests` (SPEC
// §5) on `threads` threads. Returns the output as pieces in order: its head,
// one piece per chunk of consecutive requests (balanced by tokens), its
// tail.
std::vector<std::string> MatchAndFormat(const PrefixIndex& index,
                                        const SequenceList& engine_requests,
                                        const SequenceList& requests,
                                        unsigned threads) {
  const std::size_t chunks =
      std::min<std::size_t>(requests.size(), threads * kChunksPerThread);
  // Chunk c is requests [starts[c], starts[c + 1]): about equal in tokens
  // (the work of both matching and formatting), at least one request each.
  std::vector<std::size_t> starts = {0};
  const double per_chunk =
      static_cast<double>(requests.total_tokens() + requests.size()) /
      static_cast<double>(std::max<std::size_t>(chunks, 1));
  double filled = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    filled += static_cast<double>(requests[i].size() + 1);
    if (filled >= per_chunk * static_cast<double>(starts.size()) &&
        i + 1 < requests.size() && starts.size() < chunks) {
      starts.push_back(i + 1);
    }
  }
  starts.push_back(requests.size());
  std::vector<std::string> pieces(starts.size() + 1);
  pieces.front() = "{\"matches\":[";
  pieces.back() = "]}\n";
  // Matches are const and thread-safe; each chunk writes only its piece.
  // std::bad_alloc propagates: main() reports it once the threads end.
  ForEachInParallel(starts.size() - 1, threads, [&](std::size_t c) {
    // Match the chunk first: its answers' size is then known closely
    // enough to format into one buffer on huge pages, where growing by
    // doubling would copy and fault in 4 KiB pages (~22k faults for an
    // 89 MB answer).
    std::vector<Match> matches;
    matches.reserve(starts[c + 1] - starts[c]);
    std::size_t suffix_tokens = 0;
    for (std::size_t i = starts[c]; i < starts[c + 1]; ++i) {
      matches.push_back(ModelMatch(index, engine_requests[i]));
      suffix_tokens += requests[i].size() - matches.back().matched_length;
    }
    std::string& out = pieces[c + 1];
    out.reserve(MatchJsonBytesEstimate(matches.size(), suffix_tokens));
    AdviseHugePages(out.data(), out.capacity());
    for (std::size_t i = starts[c]; i < starts[c + 1]; ++i) {
      if (i != 0) out += ',';
      AppendMatchJson(requests[i], matches[i - starts[c]], out);
    }
  });
  return pieces;
}

void RunMatch(const MatchOptions& options) {
  Progress progress;
  const BatchInput input = ReadNamed(options.input, ReadBatchInputFile);
  progress.Note(fmt::format("parsed {} cached sequences, {} requests",
                            input.cached_sequences.size(),
                            input.requests.size()));
  const ChosenCache cache = ChooseCache(options.cache, 1);
  const auto index = MakeEngine(cache.engine, cache.options);
  // SPEC §8.1: the sequences with their namespaces folded in, if any.
  const std::optional<BatchInput> folded =
      WhileDoing("folding the namespaces", [&] { return FoldedBatch(input); });
  const BatchInput& sequences = folded ? *folded : input;
  WhileDoing("inserting the cached sequences", [&] {
    for (TokenSpan sequence : sequences.cached_sequences) {
      index->Insert(sequence);
    }
  });
  progress.Note(fmt::format("inserted; {} nodes", index->node_count()));
  const std::vector<std::string> pieces = WhileDoing("matching", [&] {
    return MatchAndFormat(*index, sequences.requests, input.requests,
                          options.threads);
  });
  progress.Note("matched and formatted");
  const std::vector<std::string_view> views(pieces.begin(), pieces.end());
  WriteOutput(options.output, views);
}

}  // namespace

void RegisterMatchCommand(CLI::App& app) {
  auto options = std::make_shared<MatchOptions>();
  CLI::App* command = app.add_subcommand(
      "match",
      "Insert every cached sequence, then match every request (SPEC §2).\n"
      "Input: {\"cached_sequences\":[[...],...],\"requests\":[[...],...]}, "
      "optionally with \"cached_namespaces\" and \"namespaces\", one string "
      "per sequence (SPEC §8.1: sequences of different namespaces never "
      "match).\n"
      "Output: {\"matches\":[{\"matched_length\":N,\"cache_node\":N,"
      "\"uncached_suffix\":[...]},...]}\n"
      "With --model vllm or sglang (SPEC §9, unbounded) the cache is built as "
      "the model serves each cached sequence as a request, and each request "
      "gets the model's match, changing nothing: cache_node is vLLM's block "
      "ID or SGLang's node ID (for a match inside an edge, the ID the split "
      "would give). --match-limit all-but-last caps every match at n - 1 "
      "tokens, in whole pages (vllm always).");
  command
      ->add_option("FILE", options->input,
                   "SPEC §4 JSON input; - reads standard input")
      ->capture_default_str();
  AddCacheEngineOption(*command, options->cache);
  AddCacheOptions(*command, options->cache, /*bounded=*/false);
  AddModelOptions(
      *command, options->cache,
      ModelOptionsHelp{.model = "unbounded; without --engine, the model's "
                                "fastest engine (hash for vllm, radix for "
                                "sglang)",
                       .trigger = ""});
  AddIntegerOption(*command, "-j,--threads", options->threads,
                   "Threads that match and format the requests (the output "
                   "is the same for any number); default: every core",
                   1u, kMaxThreads)
      ->capture_default_str();
  AddOutputOption(*command, "-o,--output", options->output,
                  "Output file, replaced atomically (never left partial); "
                  "- is standard output");
  AddPluginTimeoutOption(*command, options->timeout);
  command->callback([options] {
    RunSupervised(options->cache.engine, options->timeout,
                  [&] { RunMatch(*options); });
  });
}

}  // namespace kvprefix::cli
