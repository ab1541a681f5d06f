// The subcommands of the `kvprefix` tool and what they share: the --engine,
// --mode and --vocab options (option checks are in option_checks.h) and the
// error that names a bad input file.
#ifndef KVPREFIX_CLI_COMMANDS_H_
#define KVPREFIX_CLI_COMMANDS_H_

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <string>

#include "cli/option_checks.h"
#include "io/input_error.h"
#include "io/json_strings.h"
#include "io/mooncake.h"

namespace kvprefix::cli {

// Each adds one subcommand to `app`; the subcommand does its work in a
// CLI11 callback during app.parse(), throwing the errors main() maps to exit
// statuses (FileInputError: 2; IoError, ResourceError, CapacityError,
// std::bad_alloc: 1). Each step that may run out of memory runs inside
// WhileDoing (io/input_error.h), so the one line printed says what ran out
// while doing what; output is written only once all of it is built.
void RegisterMatchCommand(CLI::App& app);    // kvprefix match
void RegisterReplayCommand(CLI::App& app);   // kvprefix replay
void RegisterConvertCommand(CLI::App& app);  // kvprefix convert mooncake
void RegisterEnginesCommand(CLI::App& app);  // kvprefix engines
void RegisterVerifyCommand(CLI::App& app);   // kvprefix verify (verify/run.h)
void RegisterCurveCommand(CLI::App& app);    // kvprefix curve
// kvprefix policies (beside engines, in engines_command.cc)
void RegisterPoliciesCommand(CLI::App& app);

// Bad input in a named file: what() is "<file>: <location>: <problem>".
class FileInputError : public std::runtime_error {
 public:
  FileInputError(const std::string& file, const InputError& error)
      : std::runtime_error(file + ": " + error.what()) {}
};

// Calls read(path) and returns its result, turning an InputError into a
// FileInputError naming `path` ("<stdin>" for "-") and running out of
// memory into the ResourceError "out of memory while reading <path>".
template <typename Read>
auto ReadNamed(const std::string& path, Read&& read) {
  const std::string name =
      path == "-" ? "<stdin>" : EscapeForMessage(path, 1024);
  try {
    return WhileDoing("reading " + name, [&] { return read(path); });
  } catch (const InputError& error) {
    throw FileInputError(name, error);
  }
}

// Adds --engine (default: kvprefix::DefaultEngineName()), checked against
// the registry so that an unknown name is a usage error.
void AddEngineOption(CLI::App& command, std::string& engine);

// A Mooncake trace to read (SPEC §7): its path and how to turn it into
// tokens.
struct TraceArguments {
  std::string path;
  std::string mode = "block";  // "block" or "token"
  TraceOptions options;        // its mode is set from `mode` on reading
  // KV tokens of one block-mode symbol (a hash id), for byte sizes only:
  // --block-tokens, where AddBlockTokensOption added it.
  std::uint64_t block_tokens = kMooncakeBlockTokens;
  CLI::Option* block_tokens_option = nullptr;
  // --mode and --vocab, set by AddTraceArguments.
  CLI::Option* mode_option = nullptr;
  CLI::Option* vocab_option = nullptr;
  // --namespace-field (its value is options.namespace_field), where
  // AddNamespaceFieldOption added it.
  CLI::Option* namespace_field_option = nullptr;
};

// The largest --block-tokens: 1 Mi tokens a block.
inline constexpr std::uint64_t kMaxBlockTokens = std::uint64_t{1} << 20;

// Adds the required TRACE positional, --mode block|token and --vocab V.
// `reads_documents`: the command also reads SPEC §8 replay documents
// (--input-format requests), which TRACE's help then says.
void AddTraceArguments(CLI::App& command, TraceArguments& trace,
                       bool reads_documents);

// Adds --namespace-field NAME (SPEC §8.1): each trace line's member NAME is
// its request's namespace, for a command that replays a trace's requests.
void AddNamespaceFieldOption(CLI::App& command, TraceArguments& trace);

// Throws a usage error ("--mode does not apply to --input-format requests")
// if --mode, --vocab, --block-tokens or --namespace-field was given:
// options of a Mooncake trace, which mean nothing for a replay document
// (whose namespaces are its member "namespaces").
void RejectTraceOptionsForDocuments(const TraceArguments& trace);

// Adds --block-tokens N (1 to kMaxBlockTokens, default 512, the Mooncake
// block) to a command that computes KV-cache byte sizes.
void AddBlockTokensOption(CLI::App& command, TraceArguments& trace);

// KV tokens in one symbol of the trie before paging, what a node's bytes
// are counted from: --block-tokens in block mode, 1 in token mode. Throws
// std::invalid_argument (a usage error) if --block-tokens was given with
// --mode token, where a symbol is one token.
std::uint64_t SymbolTokens(const TraceArguments& trace);

// Reads the whole trace; bad input becomes a FileInputError naming the file.
// With `serving`, also each line's arrival and output length (SPEC §10.1:
// TraceOptions::serving), into it.
SequenceList ReadTrace(const TraceArguments& trace,
                       TraceServing* serving = nullptr);

// Streams the trace: ForEachTraceChunk (io/mooncake.h) with the reader in
// the background, so memory holds a window of the trace, not all of it.
// Bad input becomes a FileInputError naming the file, and running out of
// memory in the reader "out of memory while reading <file>"; so consume()
// should name its own step with WhileDoing. Returns the reader's seconds.
double StreamTrace(
    const TraceArguments& trace,
    const std::function<void(const SequenceList& chunk)>& consume);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_COMMANDS_H_
