// The cache options of the CLI: see cache_options.h.
#include "cli/cache_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cli/option_checks.h"
#include "engines/registry.h"

namespace kvprefix::cli {
namespace {

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 9> kUnits = {{
    {"B", 1},
    {"KB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000ull * 1000 * 1000},
    {"TB", 1000ull * 1000 * 1000 * 1000},
    {"KiB", 1ull << 10},
    {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},
    {"TiB", 1ull << 40},
}};

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// `text` (digits only) as a number, or nullopt past 2^64 - 1.
std::optional<std::uint64_t> ToUint(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// The usage error of a capacity that is neither a node count nor a size.
std::string NotACapacity(std::string_view text, std::string_view option) {
  return fmt::format(
      "{}: expected a number of nodes (a decimal integer, no leading zero) "
      "or a size such as 80GiB or 0.5GB (units B, KB, MB, GB, TB, KiB, MiB, "
      "GiB, TiB), found '{}'",
      option, text);
}

// "--match-limit" for the member "match_limit" FindModelOptionsProblem names.
std::string OptionOfMember(std::string_view member) {
  std::string option = "--" + std::string(member);
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

// What a usage error about `member` names: its option, or, for a member the
// replay document at path `document` (empty: none) set and no option
// replaced, the member's place in that file.
std::string SourceOfMember(std::string_view member, const CacheArguments& cache,
                           std::string_view document) {
  const CLI::Option* option = member == "policy" ? cache.policy_option
                              : member == "match_limit"
                                  ? cache.match_limit_option
                                  : cache.trigger_option;
  if (!document.empty() && !Given(option)) {
    return fmt::format("{}: $.{} (replace it with {})", document, member,
                       OptionOfMember(member));
  }
  return OptionOfMember(member);
}

// The usage error of the first SPEC §9.4 rule `options` break, if any.
void CheckModelOptions(const CacheOptions& options, const CacheArguments& cache,
                       std::string_view document) {
  if (const auto problem =
          FindModelOptionsProblem(options, Given(cache.trigger_option))) {
    throw std::invalid_argument(
        fmt::format("{}: {}", SourceOfMember(problem->member, cache, document),
                    problem->message));
  }
}

// ToCacheOptions, for the members of the replay document at path `document`
// too (empty: none).
CacheOptions BuildCacheOptions(const CacheArguments& cache,
                               std::uint64_t symbol_tokens,
                               std::string_view document) {
  // The options' checks admit only the names the parsers know.
  CacheOptions options{.policy = ParseEvictionPolicy(cache.policy).value(),
                       .page_size = cache.page_size};
  options.model = ParseNamedValue(kCacheModels, cache.model).value();
  options.match_limit =
      cache.match_limit.empty()
          ? DefaultMatchLimit(options.model)
          : ParseNamedValue(kMatchLimits, cache.match_limit).value();
  options.trigger = ParseNamedValue(kEvictionTriggers, cache.trigger).value();
  CheckModelOptions(options, cache, document);
  // Given, even as "": an empty capacity is a mistake, not "unbounded".
  if (Given(cache.capacity_option)) {
    options.capacity = ParseCapacity(cache.capacity, "--capacity",
                                     NodeBytes(cache, symbol_tokens));
  }
  return options;
}

// Adds option `name` taking one of `entries`' names, its help `what` and
// then each value with its NamedValue help.
template <typename Enum, std::size_t N>
CLI::Option* AddNamedValueOption(CLI::App& command, const std::string& name,
                                 std::string& value,
                                 const std::array<NamedValue<Enum>, N>& entries,
                                 std::string_view what) {
  std::vector<std::string> names;
  std::string help(what);
  for (const NamedValue<Enum>& entry : entries) {
    names.emplace_back(entry.name);
    help += fmt::format("{} {}: {}", names.size() == 1 ? "" : ";", entry.name,
                        entry.help);
  }
  return command.add_option(name, value, help)->check(CLI::IsMember(names));
}

}  // namespace

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

std::optional<std::uint64_t> ParseByteSize(std::string_view text,
                                           std::string_view option) {
  std::size_t number_end = 0;
  while (number_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[number_end])) ||
          text[number_end] == '.')) {
    ++number_end;
  }
  const std::string_view unit_name = text.substr(number_end);
  if (unit_name.empty()) return std::nullopt;
  std::uint64_t unit = 0;
  for (const auto& [name, bytes] : kUnits) {
    if (name == unit_name) unit = bytes;
  }
  const std::optional<Decimal> number =
      ParseDecimal(text.substr(0, number_end));
  if (unit == 0 || !number) {
    throw std::invalid_argument(NotACapacity(text, option));
  }
  // The whole part has no leading zero, so one of 2^64 or more (any with
  // over 20 digits) times a unit of at least 1 byte is out of range.
  const auto whole_value = number->whole.empty()
                               ? std::optional<std::uint64_t>(0)
                               : ToUint(number->whole);
  const auto too_large = [&] {
    return std::invalid_argument(
        fmt::format("{}: {} is 2^64 bytes or more", option, text));
  };
  if (!whole_value) throw too_large();
  // floor(unit * 0.d1...dn) exactly for any n, by long multiplication from
  // the last digit: carry = floor((d * unit + carry) / 10) equals the floor
  // of the exact partial product, and stays below 10 * unit <= 2^44.
  std::uint64_t fraction_bytes = 0;
  for (auto digit = number->fraction.rbegin(); digit != number->fraction.rend();
       ++digit) {
    fraction_bytes =
        (static_cast<std::uint64_t>(*digit - '0') * unit + fraction_bytes) / 10;
  }
  const UInt128 bytes =
      static_cast<UInt128>(*whole_value) * unit + fraction_bytes;
  if (bytes > std::numeric_limits<std::uint64_t>::max()) throw too_large();
  return static_cast<std::uint64_t>(bytes);
}

std::uint64_t ParseCapacity(std::string_view text, std::string_view option,
                            UInt128 node_bytes) {
  // A node count is an integer as every integer option takes it (-0 is 0).
  const std::optional<DecimalInteger> nodes = ParseDecimalInteger(text);
  if (nodes && InRange(*nodes, std::uint64_t{0}, UINT64_MAX)) {
    return nodes->magnitude;
  }
  if (!nodes && AllDigits(text) && text[0] != '0') {
    throw std::invalid_argument(
        fmt::format("{}: expected at most 18446744073709551615 nodes, found {}",
                    option, text));
  }
  const std::optional<std::uint64_t> bytes = ParseByteSize(text, option);
  if (!bytes) throw std::invalid_argument(NotACapacity(text, option));
  if (node_bytes == 0) {
    throw std::invalid_argument(
        fmt::format("{} {}: a size needs --kv-bytes-per-token", option, text));
  }
  return static_cast<std::uint64_t>(*bytes / node_bytes);
}

UInt128 NodeBytes(const CacheArguments& cache, std::uint64_t symbol_tokens) {
  return static_cast<UInt128>(cache.kv_bytes_per_token) * symbol_tokens *
         cache.page_size;
}

bool Given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

CacheOptions ToCacheOptions(const CacheArguments& cache,
                            std::uint64_t symbol_tokens) {
  return BuildCacheOptions(cache, symbol_tokens, {});
}

CacheArguments ForReplayDocument(const CacheArguments& cache,
                                 const CacheOptions& document) {
  CacheArguments arguments = cache;
  if (cache.page_size_option->count() == 0) {
    arguments.page_size = document.page_size;
  }
  return arguments;
}

CacheOptions ReplayDocumentCache(const CacheArguments& cache,
                                 const CacheOptions& document,
                                 std::string_view path) {
  // The document's model options stand in for the ones not given, before
  // ToCacheOptions checks the combination.
  CacheArguments arguments = ForReplayDocument(cache, document);
  if (!Given(cache.policy_option)) {
    arguments.policy = EvictionPolicyName(document.policy);
  }
  // A model given keeps the document's match limit only if it is the
  // document's model (another takes its own default).
  if (!Given(cache.model_option)) {
    arguments.model = NameOf(kCacheModels, document.model);
  }
  if (!Given(cache.match_limit_option) &&
      ParseNamedValue(kCacheModels, arguments.model).value() ==
          document.model) {
    arguments.match_limit = NameOf(kMatchLimits, document.match_limit);
  }
  if (!Given(cache.trigger_option)) {
    arguments.trigger =
        NameOf(kEvictionTriggers,
               ParseNamedValue(kCacheModels, arguments.model).value() ==
                       CacheModel::kSglang
                   ? document.trigger
                   : CacheOptions{}.trigger);
  }
  CacheOptions options = BuildCacheOptions(arguments, 1, path);
  if (!Given(cache.capacity_option)) options.capacity = document.capacity;
  return options;
}

std::string_view ModelEngineName(CacheModel model) {
  const std::vector<std::string_view> names = EngineNames(model);
  if (std::find(names.begin(), names.end(), DefaultEngineName()) !=
      names.end()) {
    return DefaultEngineName();
  }
  return names.back();
}

std::string_view ChosenEngineName(const CLI::Option* engine_option,
                                  std::string_view engine, CacheModel model) {
  return Given(engine_option) ? engine : ModelEngineName(model);
}

std::optional<std::uint64_t> CapacityBytes(std::uint64_t capacity,
                                           UInt128 node_bytes) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  if (node_bytes == 0 || (capacity != 0 && node_bytes > kMax / capacity)) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(capacity * node_bytes);
}

std::string CacheSummaryJson(const CacheOptions& options,
                             const CacheArguments& cache,
                             std::uint64_t symbol_tokens) {
  std::string json = options.bounded()
                         ? fmt::format("\"capacity\":{}", options.capacity)
                         : std::string("\"capacity\":null");
  json += fmt::format(",\"policy\":\"{}\",\"page_size\":{}",
                      EvictionPolicyName(options.policy), options.page_size);
  json += fmt::format(",\"model\":\"{}\",\"match_limit\":\"{}\"",
                      NameOf(kCacheModels, options.model),
                      NameOf(kMatchLimits, options.match_limit));
  if (options.model == CacheModel::kSglang) {
    json += fmt::format(",\"trigger\":\"{}\"",
                        NameOf(kEvictionTriggers, options.trigger));
  }
  if (cache.kv_bytes_per_token != 0 && options.bounded()) {
    const std::optional<std::uint64_t> bytes =
        CapacityBytes(options.capacity, NodeBytes(cache, symbol_tokens));
    json += bytes ? fmt::format(",\"capacity_bytes\":{}", *bytes)
                  : std::string(",\"capacity_bytes\":null");
  }
  return json;
}

}  // namespace kvprefix::cli
