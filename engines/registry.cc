// The engine registry, built from the compile-time list in all_engines.h.
#include "engines/registry.h"

#include <stdexcept>

#include "engines/all_engines.h"
#include "kvprefix/paged_index.h"
#include "plugin/plugin_engine.h"

namespace kvprefix {
namespace {

struct Entry {
  std::string_view name;
  std::unique_ptr<PrefixIndex> (*make)(const CacheOptions&);
};

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> list;
    AllEngines::ForEach([&]<typename E>() {
      list.push_back(
          {E::kName,
           [](const CacheOptions& options) -> std::unique_ptr<PrefixIndex> {
             if (options.page_size == 1) {
               return std::make_unique<EngineAdapter<E>>(options);
             }
             return std::make_unique<EngineAdapter<PagedIndex<E>>>(options);
           }});
    });
    return list;
  }();
  return entries;
}

}  // namespace

std::vector<std::string_view> EngineNames() {
  std::vector<std::string_view> names;
  for (const Entry& entry : Entries()) names.push_back(entry.name);
  return names;
}

std::string_view DefaultEngineName() { return RadixTrie::kName; }

bool IsEngineName(std::string_view name) {
  if (IsPluginName(name)) return true;
  for (const Entry& entry : Entries()) {
    if (entry.name == name) return true;
  }
  return false;
}

std::unique_ptr<PrefixIndex> MakeEngine(std::string_view name,
                                        const CacheOptions& options) {
  if (IsPluginName(name)) {
    if (options.page_size < 1 || options.page_size > kMaxPageSize) {
      throw std::invalid_argument("page size " +
                                  std::to_string(options.page_size) +
                                  " is outside 1 to 2^31 - 1");
    }
    return MakePluginEngine(name.substr(kPluginPrefix.size()), options);
  }
  std::string valid;
  for (const Entry& entry : Entries()) {
    if (entry.name == name) return entry.make(options);
    if (!valid.empty()) valid += ", ";
    valid += entry.name;
  }
  throw std::invalid_argument("unknown engine '" + std::string(name) +
                              "' (available: " + valid + ", or plugin:PATH)");
}

}  // namespace kvprefix
