// `kvprefix replay`: SPEC §3 replay of a Mooncake trace (SPEC §7): each
// request is matched, then inserted; prints the cache-hit summary.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engines/registry.h"
#include "io/input_error.h"
#include "io/json_output.h"
#include "kvprefix/replay.h"

namespace kvprefix::cli {
namespace {

struct ReplayOptions {
  TraceArguments trace;
  std::string engine;
  std::string matches;  // empty: do not write per-request matches
};

// {"request":i,"request_length":n,"matched_length":m,"cache_node":c}
void AppendMatchLine(std::size_t i, TokenSpan request, const Match& match,
                     std::string& out) {
  fmt::format_to(std::back_inserter(out),
                 "{{\"request\":{},\"request_length\":{},\"matched_length\":{},"
                 "\"cache_node\":{}}}\n",
                 i, request.size(), match.matched_length, match.cache_node);
}

void RunReplay(const ReplayOptions& options) {
  Progress progress;
  const SequenceList trace = ReadTrace(options.trace);
  const double read_seconds = progress.Seconds();
  progress.Note(fmt::format("parsed {} requests, {} tokens", trace.size(),
                            trace.total_tokens()));
  const auto index = MakeEngine(options.engine);
  std::string match_lines;
  const ReplaySummary summary = Replay(
      *index, trace, [&](std::size_t i, TokenSpan request, const Match& match) {
        if (!options.matches.empty()) {
          AppendMatchLine(i, request, match, match_lines);
        }
        progress.Count("replayed", i + 1, trace.size());
      });
  const double replay_seconds = progress.Seconds() - read_seconds;
  progress.Note(fmt::format("replayed; {} nodes", index->node_count()));
  if (!options.matches.empty()) {
    WriteFileAtomically(options.matches, match_lines);
  }
  const std::string line = fmt::format(
      "{{\"engine\":\"{}\",\"mode\":\"{}\",\"vocab\":{},\"requests\":{},"
      "\"request_tokens\":{},\"matched_tokens\":{},\"hit_ratio\":{},"
      "\"nodes\":{},\"memory_bytes\":{},\"read_seconds\":{:.3f},"
      "\"replay_seconds\":{:.3f}}}\n",
      index->name(), options.trace.mode, options.trace.options.vocabulary,
      summary.requests, summary.request_tokens, summary.matched_tokens,
      summary.hit_ratio(), index->node_count(), index->memory_bytes(),
      read_seconds, replay_seconds);
  WriteFileAtomically("-", line);
}

}  // namespace

void RegisterReplayCommand(CLI::App& app) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* command = app.add_subcommand(
      "replay",
      "Replay a Mooncake trace (JSON Lines with input_length and hash_ids) "
      "as a serving system would: match each request, then insert it "
      "(SPEC §3). Prints one JSON line: engine, mode, vocab, requests, "
      "request_tokens, matched_tokens, hit_ratio (matched/request tokens), "
      "nodes, memory_bytes, read_seconds, replay_seconds.");
  AddTraceArguments(*command, options->trace);
  AddEngineOption(*command, options->engine);
  command->add_option(
      "--matches", options->matches,
      "Also write every request's match as JSON Lines to this file "
      "({\"request\":i,\"request_length\":n,\"matched_length\":m,"
      "\"cache_node\":c}); - is standard output");
  command->callback([options] { RunReplay(*options); });
}

}  // namespace kvprefix::cli
