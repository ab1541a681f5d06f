// Options shared by several subcommands (see commands.h).
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "engines/registry.h"

namespace kvprefix::cli {

void AddEngineOption(CLI::App& command, std::string& engine) {
  std::string names;
  for (const std::string_view name : EngineNames()) {
    names += names.empty() ? "" : ", ";
    names += name;
  }
  engine = std::string(DefaultEngineName());
  command
      .add_option("-e,--engine", engine,
                  "Prefix-index engine: " + names +
                      ", or plugin:PATH, a cache built as a shared library "
                      "against plugin/kvprefix_plugin.h (see `kvprefix "
                      "engines`)")
      ->check(CLI::Validator(
          [names](std::string& name) -> std::string {
            if (IsEngineName(name)) return "";
            return "unknown engine '" + name + "' (available: " + names +
                   ", or plugin:PATH)";
          },
          "ENGINE"))
      ->capture_default_str();
}

void AddTraceArguments(CLI::App& command, TraceArguments& trace,
                       bool reads_documents) {
  command
      .add_option(
          "TRACE", trace.path,
          fmt::format("Mooncake trace (JSON Lines with input_length "
                      "and hash_ids){}; - reads standard input",
                      reads_documents ? ", or with --input-format requests a "
                                        "SPEC §8 replay document"
                                      : ""))
      ->required();
  command
      .add_option("-m,--mode", trace.mode,
                  "block: one token per 512-token block (token = hash id); "
                  "token: each block expands to its tokens, "
                  "splitmix64(hash_id*512+j) mod V")
      ->check(CLI::IsMember({"block", "token"}))
      ->capture_default_str();
  AddIntegerOption(command, "--vocab", trace.options.vocabulary,
                   "Vocabulary size V for token mode", std::uint32_t{1},
                   std::uint32_t{1} << 31)
      ->capture_default_str();
  trace.mode_option = command.get_option("--mode");
  trace.vocab_option = command.get_option("--vocab");
}

void AddNamespaceFieldOption(CLI::App& command, TraceArguments& trace) {
  trace.namespace_field_option =
      command
          .add_option(
              "--namespace-field", trace.options.namespace_field,
              "Mooncake trace: each line's member NAME is its request's "
              "namespace (SPEC §8.1: a string, or an integer as its decimal "
              "text; a line without it is in \"\"): requests of different "
              "namespaces never share a node, as vLLM's cache_salt or LoRA "
              "and SGLang's extra_key keep them apart")
          ->option_text("NAME")
          ->check(CLI::Validator(
              [](std::string& name) -> std::string {
                if (name.empty()) return "the field name is empty";
                if (name == "input_length" || name == "hash_ids") {
                  return "'" + name +
                         "' is a member every line needs for "
                         "its tokens";
                }
                return "";
              },
              "NAME"));
}

void RejectTraceOptionsForDocuments(const TraceArguments& trace) {
  for (const CLI::Option* option :
       {trace.mode_option, trace.vocab_option, trace.block_tokens_option,
        trace.namespace_field_option}) {
    if (option != nullptr && option->count() > 0) {
      throw std::invalid_argument(option->get_name() +
                                  " does not apply to --input-format requests");
    }
  }
}

void AddBlockTokensOption(CLI::App& command, TraceArguments& trace) {
  trace.block_tokens_option =
      AddIntegerOption(command, "--block-tokens", trace.block_tokens,
                       "Block mode: KV-cache tokens of one hash id, for byte "
                       "sizes (capacity_bytes, capacities such as 8GiB); "
                       "the Mooncake block is 512",
                       std::uint64_t{1}, kMaxBlockTokens)
          ->capture_default_str();
}

std::uint64_t SymbolTokens(const TraceArguments& trace) {
  if (trace.mode == "block") return trace.block_tokens;
  if (trace.block_tokens_option != nullptr &&
      trace.block_tokens_option->count() > 0) {
    throw std::invalid_argument(
        "--block-tokens applies to --mode block only (in token mode a node "
        "is a token)");
  }
  return 1;
}

namespace {

TraceOptions ToTraceOptions(const TraceArguments& trace) {
  TraceOptions options = trace.options;
  options.mode = trace.mode == "token" ? TraceMode::kToken : TraceMode::kBlock;
  return options;
}

}  // namespace

SequenceList ReadTrace(const TraceArguments& trace, TraceServing* serving) {
  TraceOptions options = ToTraceOptions(trace);
  options.serving = serving != nullptr;
  return ReadNamed(trace.path, [&](const std::string& path) {
    return ReadMooncakeTrace(path, options, serving);
  });
}

double StreamTrace(
    const TraceArguments& trace,
    const std::function<void(const SequenceList& chunk)>& consume) {
  return ReadNamed(trace.path, [&](const std::string& path) {
    return ForEachTraceChunk(path, ToTraceOptions(trace), consume);
  });
}

}  // namespace kvprefix::cli
