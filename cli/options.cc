// Options shared by several subcommands (see commands.h).
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "kvprefix/registry.h"

namespace kvprefix::cli {

void AddEngineOption(CLI::App& command, std::string& engine) {
  std::vector<std::string> names;
  for (const std::string_view name : EngineNames()) names.emplace_back(name);
  engine = std::string(DefaultEngineName());
  command
      .add_option("-e,--engine", engine,
                  "Prefix-index engine (see `kvprefix engines`)")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
}

void AddTraceOptions(CLI::App& command, TraceOptions& options) {
  const std::map<std::string, TraceMode> modes = {
      {"block", TraceMode::kBlock}, {"token", TraceMode::kToken}};
  command
      .add_option("-m,--mode", options.mode,
                  "block: one token per 512-token block (token = hash id); "
                  "token: each block expands to its tokens, "
                  "splitmix64(hash_id*512+j) mod V")
      ->transform(CLI::CheckedTransformer(modes))
      ->default_str("block");
  command
      .add_option("--vocab", options.vocabulary,
                  "Vocabulary size V for token mode")
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{1} << 31))
      ->capture_default_str();
}

const char* ModeName(TraceMode mode) {
  return mode == TraceMode::kBlock ? "block" : "token";
}

}  // namespace kvprefix::cli
