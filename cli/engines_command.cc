// `kvprefix engines` and `kvprefix policies`: the engine names and the
// eviction policy names, one per line, the default marked.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "engines/registry.h"
#include "io/json_output.h"
#include "kvprefix/cache.h"

namespace kvprefix::cli {
namespace {

// Adds the subcommand `name` that writes `names`, one per line, `chosen`
// marked " (default)", to its -o/--output (standard output by default).
CLI::App* AddNameListCommand(CLI::App& app, const std::string& name,
                             const std::string& description,
                             std::vector<std::string> names,
                             std::string_view chosen) {
  auto output = std::make_shared<std::string>("-");
  CLI::App* command = app.add_subcommand(name, description);
  AddOutputOption(*command, "-o,--output", *output,
                  "Output file, replaced atomically; - is standard output");
  std::string lines;
  for (const std::string& entry : names) {
    lines += fmt::format("{}{}\n", entry, entry == chosen ? " (default)" : "");
  }
  command->callback([output, lines] { WriteFileAtomically(*output, lines); });
  return command;
}

// " Models (--model, SPEC §9): spec: every engine; vllm: reference, hash;
// ...": which engines implement each model; the others refuse it.
std::string ModelEnginesFooter() {
  std::string footer =
      " Models (--model, SPEC §9), and the engines that "
      "implement each (the others refuse it):";
  for (const NamedValue<CacheModel>& model : kCacheModels) {
    footer += fmt::format(" {}: {};", model.name,
                          fmt::join(EngineNames(model.value), ", "));
  }
  footer.back() = '.';
  return footer;
}

}  // namespace

void RegisterEnginesCommand(CLI::App& app) {
  std::vector<std::string> names;
  for (const std::string_view name : EngineNames()) names.emplace_back(name);
  AddNameListCommand(
      app, "engines",
      "List the prefix-index engines, one per line; the one used when "
      "--engine is not given is marked (default)",
      std::move(names), DefaultEngineName())
      ->footer(
          "Besides these, every --engine and --engines option takes "
          "plugin:PATH: a cache of your own built as a shared library "
          "against the installed plugin/kvprefix_plugin.h (examples/plugin/)." +
          ModelEnginesFooter());
}

void RegisterPoliciesCommand(CLI::App& app) {
  std::vector<std::string> names;
  std::string footer = "SPEC §8 step 4:";
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    names.emplace_back(entry.name);
    footer += fmt::format("{} {} evicts {}", names.size() > 1 ? ";" : "",
                          entry.name, entry.victim);
  }
  AddNameListCommand(
      app, "policies",
      "List the eviction policies of --policy and of replay documents' "
      "\"policy\", one per line; the one used when none is given is marked "
      "(default)",
      std::move(names), EvictionPolicyName(CacheOptions{}.policy))
      ->footer(footer + ".");
}

}  // namespace kvprefix::cli
