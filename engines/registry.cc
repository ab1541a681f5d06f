// The engine registry, built from the compile-time list in all_engines.h.
#include "engines/registry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engines/all_engines.h"
#include "engines/sequential_serving.h"
#include "kvprefix/paged_index.h"
#include "plugin/plugin_engine.h"

namespace kvprefix {
namespace {

struct Entry {
  std::string_view name;
  CacheModel model;
  std::unique_ptr<PrefixIndex> (*make)(const CacheOptions&);
  // Null for an engine without a request lifecycle (ServingEngine).
  std::unique_ptr<ServingCache> (*make_serving)(const CacheOptions&);
};

// The serving cache of an engine with a request lifecycle: over tokens, or
// over pages through PagedIndex for a trie.
template <typename E, bool kTrie>
std::unique_ptr<ServingCache> MakeServing(const CacheOptions& options) {
  if constexpr (kTrie) {
    if (options.page_size != 1) {
      return std::make_unique<ServingAdapter<PagedIndex<E>>>(options);
    }
  }
  return std::make_unique<ServingAdapter<E>>(options);
}

template <typename E, bool kTrie>
constexpr auto ServingFactory() {
  std::unique_ptr<ServingCache> (*make)(const CacheOptions&) = nullptr;
  if constexpr (ServingEngine<E>) make = &MakeServing<E, kTrie>;
  return make;
}

// A trie engine: over tokens, or over pages through PagedIndex.
template <typename E>
std::unique_ptr<PrefixIndex> MakeTrie(const CacheOptions& options) {
  if (options.page_size == 1) {
    return std::make_unique<EngineAdapter<E>>(options);
  }
  return std::make_unique<EngineAdapter<PagedIndex<E>>>(options);
}

// A model's structure, which takes its pages itself.
template <typename E>
std::unique_ptr<PrefixIndex> MakeModel(const CacheOptions& options) {
  return std::make_unique<EngineAdapter<E>>(options);
}

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> list;
    AllEngines::ForEach([&]<typename E>() {
      list.push_back({E::kName, CacheModel::kSpec, &MakeTrie<E>,
                      ServingFactory<E, true>()});
    });
    VllmEngines::ForEach([&]<typename E>() {
      list.push_back({E::kName, CacheModel::kVllm, &MakeModel<E>,
                      ServingFactory<E, false>()});
    });
    SglangEngines::ForEach([&]<typename E>() {
      list.push_back({E::kName, CacheModel::kSglang, &MakeModel<E>,
                      ServingFactory<E, false>()});
    });
    return list;
  }();
  return entries;
}

// The names of `model`'s engines, joined by ", ".
std::string NamesOf(CacheModel model) {
  std::string names;
  for (const Entry& entry : Entries()) {
    if (entry.model != model) continue;
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names;
}

// What every engine is held to, a plugin too: SPEC §9.4 (it is never asked
// for a combination no cache implements) and §8's page sizes.
void CheckOptionsForEveryEngine(const CacheOptions& options) {
  if (const auto problem = FindModelOptionsProblem(options, false)) {
    throw std::invalid_argument(std::string(problem->member) + ": " +
                                problem->message);
  }
  CheckPageSize(options);
}

}  // namespace

std::vector<std::string_view> EngineNames() {
  return EngineNames(CacheModel::kSpec);
}

std::vector<std::string_view> EngineNames(CacheModel model) {
  std::vector<std::string_view> names;
  for (const Entry& entry : Entries()) {
    if (entry.model == model) names.push_back(entry.name);
  }
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

void CheckEngineName(std::string_view name) {
  if (IsPluginName(name)) return LoadPlugin(name.substr(kPluginPrefix.size()));
  if (!IsEngineName(name)) MakeEngine(name);  // throws, listing the names
}

std::unique_ptr<PrefixIndex> MakeEngine(std::string_view name,
                                        const CacheOptions& options) {
  CheckOptionsForEveryEngine(options);
  if (IsPluginName(name)) {
    // The model goes to the plugin, which implements it or refuses it
    // (a plugin built for ABI version 1 is refused it by the loader).
    return MakePluginEngine(name.substr(kPluginPrefix.size()), options);
  }
  bool known = false;
  for (const Entry& entry : Entries()) {
    if (entry.name != name) continue;
    known = true;
    if (entry.model == options.model) return entry.make(options);
  }
  if (known) {
    throw std::invalid_argument(
        "engine '" + std::string(name) + "' does not implement model '" +
        std::string(NameOf(kCacheModels, options.model)) +
        "' (engines that do: " + NamesOf(options.model) + ")");
  }
  throw std::invalid_argument("unknown engine '" + std::string(name) +
                              "' (available: " + NamesOf(CacheModel::kSpec) +
                              ", or plugin:PATH)");
}

bool HasRequestLifecycle(std::string_view name, CacheModel model) {
  return std::ranges::any_of(Entries(), [&](const Entry& entry) {
    return entry.name == name && entry.model == model &&
           entry.make_serving != nullptr;
  });
}

std::unique_ptr<ServingCache> MakeServingCache(std::string_view name,
                                               const CacheOptions& options) {
  if (IsPluginName(name)) {
    CheckOptionsForEveryEngine(options);
    if (auto cache = MakePluginServingCache(name.substr(kPluginPrefix.size()),
                                            options)) {
      return cache;
    }
  }
  std::unique_ptr<PrefixIndex> index = MakeEngine(name, options);  // checks
  for (const Entry& entry : Entries()) {
    if (entry.name == name && entry.model == options.model &&
        entry.make_serving != nullptr) {
      return entry.make_serving(options);
    }
  }
  return std::make_unique<SequentialServingCache>(std::move(index));
}

}  // namespace kvprefix
