// The engine registry, built from the compile-time list in all_engines.h.
#include "kvprefix/registry.h"

#include <stdexcept>

#include "kvprefix/all_engines.h"

namespace kvprefix {
namespace {

struct Entry {
  std::string_view name;
  std::unique_ptr<PrefixIndex> (*make)();
};

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> list;
    AllEngines::ForEach([&]<typename E>() {
      list.push_back({E::kName, []() -> std::unique_ptr<PrefixIndex> {
                        return std::make_unique<EngineAdapter<E>>();
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
  for (const Entry& entry : Entries()) {
    if (entry.name == name) return true;
  }
  return false;
}

std::unique_ptr<PrefixIndex> MakeEngine(std::string_view name) {
  std::string valid;
  for (const Entry& entry : Entries()) {
    if (entry.name == name) return entry.make();
    if (!valid.empty()) valid += ", ";
    valid += entry.name;
  }
  throw std::invalid_argument("unknown engine '" + std::string(name) +
                              "' (available: " + valid + ")");
}

}  // namespace kvprefix
