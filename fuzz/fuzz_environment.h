// What the differential fuzz targets (differential_fuzzer.cc,
// serving_fuzzer.cc) read from the environment, and how they refuse a bad
// value: one line on stderr and exit status 2, at the first input.
#ifndef KVPREFIX_FUZZ_FUZZ_ENVIRONMENT_H_
#define KVPREFIX_FUZZ_FUZZ_ENVIRONMENT_H_

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "checking/fuzz_input.h"
#include "engines/registry.h"
#include "plugin/plugin_engine.h"

namespace kvprefix::fuzz {

// The value of environment variable `name`, "" when unset.
inline std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Prints `message` and a newline on stderr and exits with status 2.
[[noreturn]] inline void UsageError(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(2);
}

// The engine names of KVPREFIX_FUZZ_ENGINES (checking::ParseEngineList),
// each checked by CheckEngineName (no engine built: a plugin may refuse
// the default options and take the inputs' own); empty when it is unset.
// A usage error when it is set but empty, set with a mutant
// (`mutant_set`), or names an unknown engine or a plugin that cannot be
// loaded.
inline std::vector<std::string> EnginesFromEnvironment(bool mutant_set) {
  const std::string list = Environment("KVPREFIX_FUZZ_ENGINES");
  if (list.empty() && std::getenv("KVPREFIX_FUZZ_ENGINES") != nullptr) {
    // Set but empty: a script's unset variable, not a wish for every engine.
    UsageError(
        "KVPREFIX_FUZZ_ENGINES: empty (unset it to check every engine of the "
        "input's model)");
  }
  if (mutant_set && !list.empty()) {
    UsageError(
        "KVPREFIX_FUZZ_ENGINES: cannot be set with KVPREFIX_FUZZ_MUTANT");
  }
  if (list.empty()) return {};
  try {
    std::vector<std::string> names = checking::ParseEngineList(list);
    for (const std::string& name : names) CheckEngineName(name);
    return names;
  } catch (const std::invalid_argument& error) {
    UsageError(fmt::format("KVPREFIX_FUZZ_ENGINES: {}", error.what()));
  } catch (const PluginError& error) {
    UsageError(fmt::format("KVPREFIX_FUZZ_ENGINES: {}", error.what()));
  }
}

}  // namespace kvprefix::fuzz

#endif  // KVPREFIX_FUZZ_FUZZ_ENVIRONMENT_H_
