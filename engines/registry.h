// The engine registry: choose an engine by name at run time.
//
// Names are one lower-case word each (see engines/all_engines.h), identical
// in the CLI, the Python module, tests, benchmark names and reports.
#ifndef KVPREFIX_ENGINES_REGISTRY_H_
#define KVPREFIX_ENGINES_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kvprefix/prefix_index.h"
#include "kvprefix/request.h"

namespace kvprefix {

// The names of all built-in engines, the reference first. Thread-safe.
std::vector<std::string_view> EngineNames();

// The names of the built-in engines that implement `model` (SPEC §9), the
// reference first: every engine for spec, fewer for vllm and sglang.
// Thread-safe.
std::vector<std::string_view> EngineNames(CacheModel model);

// The engine the CLI uses when none is named: the fastest on the real
// (Mooncake) workload, as measured by bench/ ("radix"; docs/benchmarks.md).
// Thread-safe.
std::string_view DefaultEngineName();

// True if `name` is a built-in engine or a plugin, "plugin:PATH"
// (plugin/plugin_engine.h; whether PATH loads is MakeEngine's to find).
// Thread-safe.
bool IsEngineName(std::string_view name);

// Checks that `name` names an engine MakeEngine can build for some options:
// a built-in engine, or a plugin that loads (LoadPlugin, building no cache:
// a plugin may refuse the default options, e.g. one of model vllm only, and
// still take the inputs' own). Throws std::invalid_argument listing the
// valid names for an unknown name, PluginError for a plugin that cannot be
// loaded. Thread-safe.
void CheckEngineName(std::string_view name);

// A new, empty index of engine `name`: unbounded over tokens by default,
// else a cache with options.capacity and options.policy over pages of
// options.page_size tokens (SPEC §8; PagedIndex when the page size is not 1),
// following options.model (SPEC §9: the engine's structure for that model)
// and options.match_limit.
// A plugin, "plugin:PATH", gets the options as they are, page size and
// model included (MakePluginEngine). Thread-safe. Throws
// std::invalid_argument, whose message lists the valid names, if `name` is
// unknown, or names the problem if the page size is outside 1 to 2^31 - 1,
// the engine does not implement options.model ("engine 'double-array' does
// not implement model 'vllm' (engines that do: reference, hash)"), the
// options break a rule of SPEC §9.4 (FindModelOptionsProblem), or a plugin
// refuses the options (one built for plugin ABI version 1 any model but
// spec with match limit all); PluginError if a plugin cannot be loaded.
std::unique_ptr<PrefixIndex> MakeEngine(std::string_view name,
                                        const CacheOptions& options = {});

// A new, empty cache of engine `name` with `options` for a serving replay
// (SPEC §10): an engine with a request lifecycle (kvprefix/request.h's
// ServingEngine: the reference of every model, hash for vllm, radix for
// sglang) natively; every other engine, a plugin included, one request at
// a time (engines/sequential_serving.h, one_at_a_time()). Throws as
// MakeEngine. Thread-safe.
std::unique_ptr<ServingCache> MakeServingCache(std::string_view name,
                                               const CacheOptions& options);

// True if the built-in engine `name` has a request lifecycle for `model`
// (MakeServingCache's native case). O(engines). Thread-safe.
bool HasRequestLifecycle(std::string_view name, CacheModel model);

}  // namespace kvprefix

#endif  // KVPREFIX_ENGINES_REGISTRY_H_
