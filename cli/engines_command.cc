// `kvprefix engines`: the engine names, one per line, the default marked.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli/commands.h"
#include "engines/registry.h"
#include "io/json_output.h"

namespace kvprefix::cli {

void RegisterEnginesCommand(CLI::App& app) {
  auto output = std::make_shared<std::string>("-");
  CLI::App* command = app.add_subcommand(
      "engines",
      "List the prefix-index engines, one per line; the one used when "
      "--engine is not given is marked (default)");
  command->footer(
      "Besides these, every --engine and --engines option takes "
      "plugin:PATH: a cache of your own built as a shared library against "
      "the installed plugin/kvprefix_plugin.h (examples/plugin/).");
  command
      ->add_option("-o,--output", *output,
                   "Output file, replaced atomically; - is standard output")
      ->capture_default_str();
  command->callback([output] {
    std::string lines;
    for (const std::string_view name : EngineNames()) {
      lines += fmt::format("{}{}\n", name,
                           name == DefaultEngineName() ? " (default)" : "");
    }
    WriteFileAtomically(*output, lines);
  });
}

}  // namespace kvprefix::cli
