// The options of a bounded cache (SPEC §8) shared by `replay`, `match` and
// `curve`: --capacity, --policy, --page-size and --kv-bytes-per-token, and
// the cache model's (SPEC §9.4): --model, --match-limit and --trigger.
#ifndef KVPREFIX_CLI_CACHE_OPTIONS_H_
#define KVPREFIX_CLI_CACHE_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvprefix/cache.h"

namespace kvprefix::cli {

// Byte counts of one node (at most 2^111) and of sizes before they are
// checked against 2^64; a node's bytes times a number of nodes can pass
// 2^128, so CapacityBytes checks that product instead of computing it.
// __extension__ keeps -Wpedantic quiet about the GCC/Clang type.
__extension__ using UInt128 = unsigned __int128;

struct CacheArguments {
  std::string capacity;  // as typed: nodes, or a size with a unit
  std::string policy{EvictionPolicyName(CacheOptions{}.policy)};
  std::uint64_t page_size = 1;
  std::uint64_t kv_bytes_per_token = 0;  // 0: not given
  std::string model{NameOf(kCacheModels, CacheOptions{}.model)};
  std::string match_limit;  // empty: DefaultMatchLimit(model)
  std::string trigger{NameOf(kEvictionTriggers, CacheOptions{}.trigger)};
  // The options as CLI11 holds them, to tell "given" from "default".
  CLI::Option* capacity_option = nullptr;
  CLI::Option* policy_option = nullptr;
  CLI::Option* page_size_option = nullptr;
  CLI::Option* model_option = nullptr;
  CLI::Option* match_limit_option = nullptr;
  CLI::Option* trigger_option = nullptr;
};

// The largest --kv-bytes-per-token: 1 TiB per token.
inline constexpr std::uint64_t kMaxKvBytesPerToken = std::uint64_t{1} << 40;

// Adds --page-size to `command`; with `bounded`, also --capacity, --policy,
// --kv-bytes-per-token and the model options (AddModelOptions).
void AddCacheOptions(CLI::App& command, CacheArguments& cache, bool bounded);

// What the model options' help says besides their values: what each
// applies to and its default. The defaults are replay's and curve's.
struct ModelOptionsHelp {
  std::string_view model =
      "without --engine it runs on the model's fastest engine (hash for "
      "vllm, radix for sglang); a capacity counts blocks (pages) for vllm, "
      "pages of P tokens for sglang";
  std::string_view match_limit =
      "default all, all-but-last for vllm, which takes no other";
  // Empty: no --trigger (`match`: unbounded, nothing is ever evicted).
  std::string_view trigger = "sglang only";
  // False where an option not given means "varied", not its default value
  // (verify's generated documents): then no [default] is shown for
  // --trigger.
  bool show_trigger_default = true;
};

// Adds --model (kCacheModels' names, default spec), --match-limit
// (kMatchLimits' names; default DefaultMatchLimit of the model) and
// --trigger (kEvictionTriggers' names, sglang only; not added if
// help.trigger is empty), each a usage error for any other name; their help
// is `help`'s text for each, then every value with its NamedValue help.
void AddModelOptions(CLI::App& command, CacheArguments& cache,
                     const ModelOptionsHelp& help = {});

// True if --model, --match-limit or --trigger was given. O(1).
bool ModelOptionsGiven(const CacheArguments& cache);

// Adds --policy, one of kEvictionPolicies' names (a usage error otherwise),
// default lru; its help lists each policy and what it evicts, then
// `more_help` (e.g. ". For curve: ...", or "").
void AddPolicyOption(CLI::App& command, CacheArguments& cache,
                     std::string_view more_help);

// Adds --kv-bytes-per-token (1 to kMaxKvBytesPerToken) with `description`.
void AddKvBytesPerTokenOption(CLI::App& command, CacheArguments& cache,
                              const std::string& description);

// The number of bytes `text` names: a decimal (ParseDecimal in
// option_checks.h: 0.5, .5, 80, no leading zero, sign or exponent) followed
// by a unit B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024), rounded down to whole bytes; or nullopt if `text` has no
// unit. Throws std::invalid_argument naming `option` and the problem for
// anything else, or a size of 2^64 bytes or more. Exact for any number of
// digits: no floating point. O(digits).
std::optional<std::uint64_t> ParseByteSize(std::string_view text,
                                           std::string_view option);

// A capacity in nodes from `text`, as typed for option `option`: a number
// of nodes written as every integer option takes it (ParseDecimalInteger:
// no leading zero, -0 is 0), or a size (ParseByteSize) holding floor(size /
// node_bytes) nodes. node_bytes is 0 when --kv-bytes-per-token was not
// given. Throws std::invalid_argument naming the option and the problem,
// for "" too.
std::uint64_t ParseCapacity(std::string_view text, std::string_view option,
                            UInt128 node_bytes);

// KV-cache bytes of one node: B * symbol_tokens * P (0 without B).
UInt128 NodeBytes(const CacheArguments& cache, std::uint64_t symbol_tokens);

// True if `option` exists and was given on the command line. O(1).
bool Given(const CLI::Option* option);

// The cache the options describe, with `symbol_tokens` tokens of KV cache in
// one symbol of the trie before paging (512 for a Mooncake block, else 1): a
// capacity given as a size holds floor(size / (B * symbol_tokens * P))
// nodes; --capacity not given is unbounded, given (even as "") it must be a
// capacity. The model, match limit and trigger are the options' (the match
// limit DefaultMatchLimit(model) unless given). Throws std::invalid_argument
// (a usage error) for a capacity that is not a decimal integer or a size, a
// size without --kv-bytes-per-token, or options SPEC §9.4 refuses
// (FindModelOptionsProblem, naming the option: "--policy: model \"vllm\"
// has one order, ...", "--trigger: a trigger needs model \"sglang\"; ...").
// For vllm the capacity counts blocks (pages), for sglang pages of P tokens.
CacheOptions ToCacheOptions(const CacheArguments& cache,
                            std::uint64_t symbol_tokens);

// `cache` for a SPEC §8 replay document whose own cache is `document`: the
// page size is --page-size if given, else the document's. `replay` and
// `curve` both convert a capacity given as a size with NodeBytes of these
// arguments, so that both answer with the page size the replay runs on.
CacheArguments ForReplayDocument(const CacheArguments& cache,
                                 const CacheOptions& document);

// The cache a replay document runs on (`replay --input-format requests`):
// its capacity, policy, page size, model, match limit and trigger, each
// replaced by the option if given (a model given without --match-limit
// takes its DefaultMatchLimit unless it is the document's model; a model
// other than sglang, the default trigger); a capacity given as a size is
// converted with ForReplayDocument's page size. The combination is checked
// again (FindModelOptionsProblem, --trigger counting as given only when
// typed). Throws std::invalid_argument as ToCacheOptions, a problem with a
// member no option replaced naming its place in the document's file `path`:
// "doc.json: $.policy (replace it with --policy): model \"vllm\" has one
// order, ...".
CacheOptions ReplayDocumentCache(const CacheArguments& cache,
                                 const CacheOptions& document,
                                 std::string_view path);

// The engine a command runs model `model` on when --engine is not given:
// DefaultEngineName() if it implements the model, else the model's last
// (EngineNames(model) lists the reference first; the others are faster).
// O(engines). Thread-safe.
std::string_view ModelEngineName(CacheModel model);

// The engine a command runs: --engine's value `engine` if `engine_option`
// was given, else ModelEngineName(model). O(engines).
std::string_view ChosenEngineName(const CLI::Option* engine_option,
                                  std::string_view engine, CacheModel model);

// The KV-cache bytes of `capacity` nodes of `node_bytes` bytes each, or
// nullopt if node_bytes is 0 (no --kv-bytes-per-token) or the product is
// 2^64 or more. The product is checked, not computed: 2^64 nodes of up to
// 2^111 bytes (2^40 per token x 2^20 tokens per block x 2^31 per page) pass
// 2^128. O(1).
std::optional<std::uint64_t> CapacityBytes(std::uint64_t capacity,
                                           UInt128 node_bytes);

// Summary members for a JSON line: "capacity":C|null,"policy":"lru",
// "page_size":P,"model":"spec","match_limit":"all" (then "trigger":T for
// sglang),"capacity_bytes":N (only with --kv-bytes-per-token; null
// from 2^64 bytes on: CapacityBytes).
std::string CacheSummaryJson(const CacheOptions& options,
                             const CacheArguments& cache,
                             std::uint64_t symbol_tokens);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_CACHE_OPTIONS_H_
