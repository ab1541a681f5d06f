// The flags of a cache (SPEC §8) shared by `replay`, `match`, `curve` and
// `verify`: --capacity, --policy, --page-size and --kv-bytes-per-token, the
// cache model's (SPEC §9.4) --model, --match-limit and --trigger, and the
// --engine that runs them, as CLI11 parses them. What they become is
// cache_choice.h's job (ChooseCache): the one place a flag goes through on
// its way to the engine.
#ifndef KVPREFIX_CLI_CACHE_FLAGS_H_
#define KVPREFIX_CLI_CACHE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "kvprefix/cache.h"

namespace kvprefix::cli {

// The flags as typed; each CLI::Option* tells "given" from "default"
// (null: the command has no such flag).
struct CacheArguments {
  std::string capacity;  // as typed: nodes, or a size with a unit
  std::string policy{EvictionPolicyName(CacheOptions{}.policy)};
  std::uint64_t page_size = 1;
  std::uint64_t kv_bytes_per_token = 0;  // 0: not given
  std::string model{NameOf(kCacheModels, CacheOptions{}.model)};
  std::string match_limit;  // empty: DefaultMatchLimit(model)
  std::string trigger{NameOf(kEvictionTriggers, CacheOptions{}.trigger)};
  std::string engine;  // --engine, where the command has it
  CLI::Option* capacity_option = nullptr;
  CLI::Option* policy_option = nullptr;
  CLI::Option* page_size_option = nullptr;
  CLI::Option* model_option = nullptr;
  CLI::Option* match_limit_option = nullptr;
  CLI::Option* trigger_option = nullptr;
  CLI::Option* engine_option = nullptr;
};

// The largest --kv-bytes-per-token: 1 TiB per token.
inline constexpr std::uint64_t kMaxKvBytesPerToken = std::uint64_t{1} << 40;

// Adds --page-size to `command`; with `bounded`, also --capacity, --policy,
// --kv-bytes-per-token and the model options (AddModelOptions).
void AddCacheOptions(CLI::App& command, CacheArguments& cache, bool bounded);

// Adds --engine (AddEngineOption in commands.h) and records it in `cache`.
void AddCacheEngineOption(CLI::App& command, CacheArguments& cache);

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

// True if `option` exists and was given on the command line. O(1).
bool Given(const CLI::Option* option);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_CACHE_FLAGS_H_
