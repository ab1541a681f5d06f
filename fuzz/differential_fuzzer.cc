// Differential fuzz target: engines against the reference, through the one
// harness (checking/differential.h), on an online stream of inserts,
// matches and accesses (SPEC §3) to a cache that is unbounded or has a
// capacity, an eviction policy and a page size (SPEC §8). How bytes decode,
// and the check itself, are the exported library's (checking/fuzz_input.h),
// which a user's own fuzz target calls the same way (fuzz/README.md, "Fuzz
// your own cache").
//
// Engines under test, built with the decoded options (the model too, SPEC
// §9):
//  - by default every registered engine of the input's model
//    (EngineNames(model)) except the reference;
//  - when the environment variable KVPREFIX_FUZZ_ENGINES holds a
//    comma-separated list of engine names (e.g. "hash,radix"; any name
//    MakeEngine takes), those engines, in order;
//  - when KVPREFIX_FUZZ_MUTANT names a mutant from testing/mutants.h, that
//    deliberately broken engine alone (to show the target has teeth; see
//    fuzz/teeth.sh); or a model mutant of testing/model_mutants.h; or
//    "mutant-namespace-blind", a cache that ignores namespaces (SPEC §8.1;
//    caught only on inputs with namespaces, alphabet bit 3). Index
//    mutants and "mutant-baseline" are unbounded token tries: for them the
//    cache byte is read but the cache is always unbounded with page size 1.
//    The others are checked in the one model they implement: a model
//    mutant's (an input of another model is moved to it), spec with match
//    limit all for the cache mutants. Any other value, e.g. "list", prints the
//    mutant names on a last line "mutants: ..." and exits with status 2.
// KVPREFIX_FUZZ_COMPARE=lengths compares matched lengths only (a cache with
// node IDs of its own; checking::Comparison).
// KVPREFIX_FUZZ_MODELS, KVPREFIX_FUZZ_MATCH_LIMITS, KVPREFIX_FUZZ_POLICIES,
// KVPREFIX_FUZZ_PAGE_SIZES and KVPREFIX_FUZZ_CAPACITIES (comma-separated, as
// verify's --models, --match-limits, --policies, --page-sizes and
// --capacities) name the options the engines
// implement: every input is made one of those (checking::RestrictOptions),
// e.g. KVPREFIX_FUZZ_POLICIES=lru KVPREFIX_FUZZ_PAGE_SIZES=1 for a cache of
// lru and page size 1 only. A bad value is a usage error, as below.
// At exit (libFuzzer's -runs, -max_total_time, or the end of a _replay
// run) the target prints on stderr how many inputs it checked and skipped,
// and why: "differential_fuzzer: checked 812 inputs, skipped 188 (188
// refused, the first: ...; 0 longer than 16384 bytes)". A bad
// KVPREFIX_FUZZ_ENGINES (an empty or unknown name), a bad
// KVPREFIX_FUZZ_COMPARE, or both engine variables set, is one line on stderr
// and exit status 2, at the first input. A plugin that cannot be loaded is the
// same (PluginError's message). On a disagreement the target prints the report
// of checking::CheckFuzzInput (the harness report with the cache options, then
// every engine's answer to the last operation), then aborts.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "checking/fuzz_input.h"
#include "engines/registry.h"
#include "fuzz/fuzz_environment.h"
#include "plugin/plugin_engine.h"
#include "reference/reference_trie.h"
#include "testing/model_mutants.h"
#include "testing/mutants.h"

namespace kvprefix {
namespace {

using fuzz::Environment;
using fuzz::UsageError;

// The mutant named by KVPREFIX_FUZZ_MUTANT ("" when unset), read once.
const std::string& MutantName() {
  static const std::string name = [] {
    const std::string mutant = Environment("KVPREFIX_FUZZ_MUTANT");
    try {
      // A model mutant takes its own model's options only.
      const CacheModel model =
          test::ModelMutantModel(mutant).value_or(CacheModel::kSpec);
      if (!mutant.empty()) {
        test::MakeMutant(mutant,
                         CacheOptions{.model = model,
                                      .match_limit = DefaultMatchLimit(model)});
      }
    } catch (const std::invalid_argument& error) {
      // fuzz/teeth.sh reads the list from the last line.
      std::string names =
          fmt::format("{} {}", test::MutantName(test::MutantBug::kNone),
                      test::MutantCacheName(test::MutantCacheBug::kNone));
      names += fmt::format(" {} {}", test::VllmMutantName(test::VllmBug::kNone),
                           test::SglangMutantName(test::SglangBug::kNone));
      for (std::string_view name : test::MutantNames()) {
        names += fmt::format(" {}", name);
      }
      for (std::string_view name : test::ModelMutantNames()) {
        names += fmt::format(" {}", name);
      }
      names += " mutant-namespace-baseline";
      for (std::string_view name : test::NamespaceMutantNames()) {
        names += fmt::format(" {}", name);
      }
      UsageError(fmt::format("KVPREFIX_FUZZ_MUTANT: {}\nmutants: {}",
                             error.what(), names));
    }
    return mutant;
  }();
  return name;
}

// True when KVPREFIX_FUZZ_MUTANT names an index mutant or "mutant-baseline":
// an unbounded token trie, checked against an unbounded reference whatever
// the cache byte says.
bool MutantIsIndexOnly() {
  const std::string& name = MutantName();
  const std::vector<std::string_view> index = test::IndexMutantNames();
  return name == test::MutantName(test::MutantBug::kNone) ||
         std::find(index.begin(), index.end(), name) != index.end();
}

// The options a mutant is checked with: those of the one model it
// implements (a model mutant's, else spec with match limit all, all the
// mutants of testing/mutants.h know), valid for it (SPEC §9.4). Nothing to
// adjust without a mutant.
std::function<void(CacheOptions&)> ChooseAdjust() {
  if (MutantName().empty()) return nullptr;
  const CacheModel model =
      test::ModelMutantModel(MutantName()).value_or(CacheModel::kSpec);
  return [model](CacheOptions& options) {
    if (model == CacheModel::kSpec) {
      options.model = model;
      options.match_limit = MatchLimit::kAll;
      options.trigger = EvictionTrigger::kAfterInsert;
      return;
    }
    if (options.model == model) return;
    options.model = model;
    options.match_limit = DefaultMatchLimit(model);
    options.trigger = EvictionTrigger::kAfterInsert;
    if (model != CacheModel::kSpec && options.policy != EvictionPolicy::kFifo) {
      options.policy = EvictionPolicy::kLru;
    }
    if (model == CacheModel::kVllm) options.policy = EvictionPolicy::kLru;
  };
}

// The engines under test (see the top comment), chosen once.
checking::EngineFactory ChooseEngines() {
  std::vector<std::string> names =
      fuzz::EnginesFromEnvironment(!MutantName().empty());
  if (!MutantName().empty()) {
    return [](const CacheOptions& options) {
      std::vector<std::unique_ptr<PrefixIndex>> engines;
      engines.push_back(test::MakeMutant(MutantName(), options));
      return engines;
    };
  }
  if (names.empty()) {
    // Every engine of the input's model (SPEC §9), the reference excepted.
    return [](const CacheOptions& options) {
      std::vector<std::unique_ptr<PrefixIndex>> engines;
      for (std::string_view name : EngineNames(options.model)) {
        if (name != ReferenceTrie::kName) {
          engines.push_back(MakeEngine(name, options));
        }
      }
      return engines;
    };
  }
  return checking::NamedEngines(std::move(names));
}

// The options the engines implement (see the top comment), read once.
checking::ImplementedOptions ChooseImplemented() {
  // Unset or empty: every value.
  const auto list = [](const char* name) {
    const std::string value = Environment(name);
    return value.empty() ? std::vector<std::string>{}
                         : std::vector<std::string>{value};
  };
  try {
    return checking::ParseImplementedOptions(
        checking::ImplementedOptionValues{
            .models = list("KVPREFIX_FUZZ_MODELS"),
            .match_limits = list("KVPREFIX_FUZZ_MATCH_LIMITS"),
            .policies = list("KVPREFIX_FUZZ_POLICIES"),
            .page_sizes = list("KVPREFIX_FUZZ_PAGE_SIZES"),
            .capacities = list("KVPREFIX_FUZZ_CAPACITIES")},
        checking::ImplementedOptionNames{
            .models = "KVPREFIX_FUZZ_MODELS",
            .match_limits = "KVPREFIX_FUZZ_MATCH_LIMITS",
            .policies = "KVPREFIX_FUZZ_POLICIES",
            .page_sizes = "KVPREFIX_FUZZ_PAGE_SIZES",
            .capacities = "KVPREFIX_FUZZ_CAPACITIES"});
  } catch (const std::invalid_argument& error) {
    UsageError(error.what());
  }
}

// The inputs checked and skipped, printed at exit.
checking::FuzzTally& Tally() {
  static checking::FuzzTally* const tally = [] {
    auto* created = new checking::FuzzTally;  // outlives the atexit handler
    std::atexit([] {
      std::fprintf(stderr, "%s\n",
                   Tally().Format("differential_fuzzer").c_str());
    });
    return created;
  }();
  return *tally;
}

// What is compared: KVPREFIX_FUZZ_COMPARE "all" (the default) or "lengths"
// (matched lengths only, for a cache with node IDs of its own).
checking::Comparison ChooseComparison() {
  const std::string name = Environment("KVPREFIX_FUZZ_COMPARE");
  if (name.empty()) return checking::Comparison::kAll;
  const auto comparison = checking::ParseComparison(name);
  if (!comparison) {
    UsageError(fmt::format(
        "KVPREFIX_FUZZ_COMPARE: expected all or lengths, found '{}'", name));
  }
  return *comparison;
}

}  // namespace
}  // namespace kvprefix

// ASan's defaults for this target (read at start-up; ASAN_OPTIONS still
// overrides them; without ASan nothing calls this). ASan keeps freed memory
// poisoned in a quarantine (256 MB by default) so that a use after free
// hits it; until the quarantine is full every allocation takes fresh pages.
// Here each input builds and frees its engines: about 1,100 allocations and
// 130 KB per corpus input, so a 256 MB quarantine spans some 2,000 inputs and
// fresh memory cost ~60 page faults per input. A use after free in an engine
// reads memory freed in the same operation or the next (a reallocated array
// or arena chunk, an evicted node), far less than 16 MB of frees earlier, so
// 16 MB finds what 256 MB does; it cut the faults by 60% and the time per
// input by 15% (fuzz/README.md, "Speed").
extern "C" const char* __asan_default_options() {
  return "quarantine_size_mb=16";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  static const checking::EngineFactory make_engines = ChooseEngines();
  static const checking::FuzzCheckOptions check{
      .unbounded = MutantIsIndexOnly(),
      .comparison = ChooseComparison(),
      .adjust = ChooseAdjust(),
      .implemented = ChooseImplemented(),
      .tally = &Tally()};
  if (auto failure =
          checking::CheckFuzzInput({data, size}, make_engines, check)) {
    std::fputs(failure->c_str(), stderr);
    std::abort();
  }
  return 0;
}
