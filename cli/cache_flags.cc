// The flags of a cache: see cache_flags.h.
#include "cli/cache_flags.h"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "cli/commands.h"
#include "cli/option_checks.h"

namespace kvprefix::cli {

void AddModelOptions(CLI::App& command, CacheArguments& cache,
                     const ModelOptionsHelp& help) {
  cache.model_option =
      AddNamedValueOption(command, "--model", cache.model, kCacheModels,
                          fmt::format("Cache model (SPEC §9); {}:", help.model))
          ->capture_default_str();
  cache.match_limit_option = AddNamedValueOption(
      command, "--match-limit", cache.match_limit, kMatchLimits,
      fmt::format("How much of a request a match may cover (SPEC §9.1; {}):",
                  help.match_limit));
  if (help.trigger.empty()) return;
  cache.trigger_option = AddNamedValueOption(
      command, "--trigger", cache.trigger, kEvictionTriggers,
      fmt::format("When model sglang evicts (SPEC §9.3; {}):", help.trigger));
  if (help.show_trigger_default) cache.trigger_option->capture_default_str();
}

bool ModelOptionsGiven(const CacheArguments& cache) {
  return Given(cache.model_option) || Given(cache.match_limit_option) ||
         Given(cache.trigger_option);
}

void AddCacheOptions(CLI::App& command, CacheArguments& cache, bool bounded) {
  cache.page_size_option =
      AddIntegerOption(command, "--page-size", cache.page_size,
                       "Tokens per page P (SPEC §8): the trie is built over "
                       "whole pages (vLLM's block size, SGLang's page size); "
                       "a trailing partial page is neither inserted nor "
                       "matched",
                       std::uint64_t{1}, kMaxPageSize)
          ->capture_default_str();
  if (!bounded) return;
  cache.capacity_option = command.add_option(
      "--capacity", cache.capacity,
      "Cache capacity C (SPEC §8): the most nodes kept besides the root "
      "(a node is one token, one page of P tokens, or in block mode one "
      "hash id), a decimal integer as for every integer option (no leading "
      "zero); or with --kv-bytes-per-token a size: a decimal (80, 0.5, .5) "
      "and a unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB, holding "
      "floor(size / KV bytes of one node) nodes at the page size the replay "
      "runs on; default: unbounded (nothing is evicted)");
  AddPolicyOption(command, cache, "");
  AddKvBytesPerTokenOption(
      command, cache,
      "KV-cache bytes of one token (e.g. 131072 for Llama-3-8B in fp16: 2 x "
      "32 layers x 8 KV heads x 128 dims x 2 bytes), for capacities given as "
      "sizes");
  AddModelOptions(command, cache);
}

void AddPolicyOption(CLI::App& command, CacheArguments& cache,
                     std::string_view more_help) {
  std::vector<std::string> policies;
  std::string policy_help = "Eviction policy:";
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    policies.emplace_back(entry.name);
    policy_help +=
        fmt::format("{} {} evicts {}", policies.size() == 1 ? "" : ",",
                    entry.name, entry.victim);
  }
  policy_help += more_help;
  cache.policy_option =
      command.add_option("--policy", cache.policy, policy_help)
          ->check(CLI::IsMember(policies))
          ->capture_default_str();
}

void AddKvBytesPerTokenOption(CLI::App& command, CacheArguments& cache,
                              const std::string& description) {
  AddIntegerOption(command, "--kv-bytes-per-token", cache.kv_bytes_per_token,
                   description, std::uint64_t{1}, kMaxKvBytesPerToken);
}

void AddCacheEngineOption(CLI::App& command, CacheArguments& cache) {
  AddEngineOption(command, cache.engine);
  cache.engine_option = command.get_option("--engine");
}

bool Given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

}  // namespace kvprefix::cli
