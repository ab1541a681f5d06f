// Differential fuzz target for SPEC §10's serving replay: bytes decode into
// a small §10 document (checking/serving_check.h: a model and its options,
// a small capacity, pages of 1-3 tokens, up to 16 requests over an
// alphabet of 2 or 4 tokens, non-decreasing arrivals, output lengths,
// max_running 1-4, rates, the output mode), which the reference and the
// engines under test replay (ServeReplay), each wrapped in a checker of
// §10's rules (checking::RuleCheckingCache). The target aborts with a
// report when an engine's whole answer (every request's, then the totals)
// differs from the reference's, when an engine or the reference breaks a
// rule of §10 (a pinned entry evicted, the queue skipped, spec above C
// nodes after a finish, a wait or refusal where the model has none,
// something still pinned at the end), or when an engine throws. The report
// ends with the document, which `kvprefix replay DOC --input-format
// requests` replays.
//
// Engines under test, built with the document's options:
//  - by default checking::BuiltInServingCaches: every engine of the model
//    with a request lifecycle but the reference, and, for a document with
//    max_running 1 and output "none" (§10.7), every engine of the model;
//  - when KVPREFIX_FUZZ_ENGINES holds a comma-separated list of engine
//    names (MakeServingCache's: built-in names, "plugin:PATH"), those; an
//    engine without a lifecycle of its own is given only the documents of
//    §10.7;
//  - when KVPREFIX_FUZZ_MUTANT names a serving mutant of
//    testing/serving_mutants.h, that deliberately broken lifecycle alone,
//    every document moved to the model its bug shows in
//    (test::ServingMutantOptions), to show the target has teeth
//    (fuzz/teeth.sh). Any other value, e.g. "list", prints the names on a
//    last line "mutants: ..." and exits with status 2.
// A bad KVPREFIX_FUZZ_ENGINES, or both variables set, is one line on stderr
// and exit status 2. At exit the target prints on stderr how many inputs it
// checked and skipped ("serving_fuzzer: checked 812 inputs, skipped 0").
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "checking/serving_check.h"
#include "engines/registry.h"
#include "fuzz/fuzz_environment.h"
#include "plugin/plugin_engine.h"
#include "testing/serving_mutants.h"

namespace kvprefix {
namespace {

using fuzz::Environment;
using fuzz::UsageError;

// The mutant KVPREFIX_FUZZ_MUTANT names, nullopt when unset; read once.
const std::optional<test::ServingBug>& Mutant() {
  static const std::optional<test::ServingBug> mutant =
      []() -> std::optional<test::ServingBug> {
    const std::string name = Environment("KVPREFIX_FUZZ_MUTANT");
    if (name.empty()) return std::nullopt;
    try {
      return test::ParseServingMutant(name);
    } catch (const std::invalid_argument& error) {
      // fuzz/teeth.sh reads the list from the last line.
      std::string names(test::ServingMutantName(test::ServingBug::kNone));
      for (const std::string_view mutant : test::ServingMutantNames()) {
        names += fmt::format(" {}", mutant);
      }
      UsageError(fmt::format("KVPREFIX_FUZZ_MUTANT: {}\nmutants: {}",
                             error.what(), names));
    }
  }();
  return mutant;
}

// The engines under test (see the top comment), chosen once.
checking::ServingFactory ChooseCaches() {
  const std::vector<std::string> names =
      fuzz::EnginesFromEnvironment(Mutant().has_value());
  if (const auto& mutant = Mutant()) {
    return [bug = *mutant](const ServeInput& input) {
      std::vector<std::unique_ptr<ServingCache>> caches;
      caches.push_back(test::MakeServingMutant(bug, input.replay.options));
      return caches;
    };
  }
  if (names.empty()) return checking::BuiltInServingCaches;
  return [names](const ServeInput& input) {
    std::vector<std::unique_ptr<ServingCache>> caches;
    for (const std::string& name : names) {
      caches.push_back(MakeServingCache(name, input.replay.options));
    }
    return caches;
  };
}

checking::FuzzTally& Tally() {
  static checking::FuzzTally* const tally = [] {
    auto* created = new checking::FuzzTally;  // outlives the atexit handler
    std::atexit([] {
      std::fprintf(stderr, "%s\n", Tally().Format("serving_fuzzer").c_str());
    });
    return created;
  }();
  return *tally;
}

// A mutant's documents are moved to the model its bug shows in.
std::function<void(ServeInput&)> ChooseAdjust() {
  if (!Mutant()) return nullptr;
  return [bug = *Mutant()](ServeInput& input) {
    input.replay.options =
        test::ServingMutantOptions(bug, input.replay.options);
  };
}

}  // namespace
}  // namespace kvprefix

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  static const checking::ServingFactory make_caches = ChooseCaches();
  static const checking::ServeFuzzCheckOptions check{
      .adjust = ChooseAdjust(),
      .tally = &Tally(),
      .replay = Mutant() ? test::ServingMutantReplay(*Mutant()) : nullptr};
  if (auto failure =
          checking::CheckServeFuzzInput({data, size}, make_caches, check)) {
    std::fputs(failure->c_str(), stderr);
    std::abort();
  }
  return 0;
}
