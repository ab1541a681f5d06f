// `kvprefix match`: the batch job of SPEC §2 on a SPEC §4 input file,
// answering per SPEC §5.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli/cache_options.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "engines/registry.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "kvprefix/batch.h"

namespace kvprefix::cli {
namespace {

struct MatchOptions {
  std::string input = "-";
  std::string engine;
  CacheArguments cache;  // --page-size only: the batch job has no capacity
  std::string output = "-";
};

void RunMatch(const MatchOptions& options) {
  Progress progress;
  const BatchInput input = ReadNamed(options.input, ReadBatchInputFile);
  progress.Note(fmt::format("parsed {} cached sequences, {} requests",
                            input.cached_sequences.size(),
                            input.requests.size()));
  const auto index =
      MakeEngine(options.engine, ToCacheOptions(options.cache, 1));
  const auto matches = FindPrefixMatches(*index, input);
  progress.Note(fmt::format("matched; {} nodes", index->node_count()));
  std::string json;
  AppendMatchesJson(input.requests, matches, json);
  WriteFileAtomically(options.output, json);
}

}  // namespace

void RegisterMatchCommand(CLI::App& app) {
  auto options = std::make_shared<MatchOptions>();
  CLI::App* command = app.add_subcommand(
      "match",
      "Insert every cached sequence, then match every request (SPEC §2).\n"
      "Input: {\"cached_sequences\":[[...],...],\"requests\":[[...],...]}.\n"
      "Output: {\"matches\":[{\"matched_length\":N,\"cache_node\":N,"
      "\"uncached_suffix\":[...]},...]}");
  command
      ->add_option("FILE", options->input,
                   "SPEC §4 JSON input; - reads standard input")
      ->capture_default_str();
  AddEngineOption(*command, options->engine);
  AddCacheOptions(*command, options->cache, /*bounded=*/false);
  command
      ->add_option("-o,--output", options->output,
                   "Output file, replaced atomically (never left partial); "
                   "- is standard output")
      ->capture_default_str();
  command->callback([options] { RunMatch(*options); });
}

}  // namespace kvprefix::cli
