// Where `kvprefix verify` gets its inputs: the user's SPEC §4 files or SPEC
// §8 replay documents, case files (io/case_file.h), windows of a Mooncake
// trace, and generated inputs with the property tests' shapes
// (checking/random_input.h).
#ifndef KVPREFIX_VERIFY_INPUTS_H_
#define KVPREFIX_VERIFY_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checking/implemented_options.h"
#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix::verify {

// Input is BatchInput (SPEC §4) or ReplayInput (a SPEC §8 replay document).
template <typename Input>
struct NamedInputOf {
  std::string name;  // where it came from, for reports: "case 03-empty..."
  Input input;
  // A case file's own expected answer, cross-checked against the reference.
  std::optional<std::vector<Match>> expected;
  // The file it was read from (a FILE or a case file); "" when generated or
  // a window of a trace.
  std::string path;
};
using NamedInput = NamedInputOf<BatchInput>;
using NamedReplayInput = NamedInputOf<ReplayInput>;
using NamedServeInput = NamedInputOf<ServeInput>;  // `expected` unused

// Reads SPEC §4 files. Throws InputError (prefixed with the file name) and
// IoError as ReadBatchInputFile; the InputError of what looks like a replay
// document (a capacity, policy or page_size member, no cached_sequences)
// adds a hint at --format requests.
std::vector<NamedInput> ReadInputFiles(const std::vector<std::string>& paths);

// Reads SPEC §8 replay documents, or replay case files as they are (their
// documents), throwing as ReadReplayDocumentOrCaseFile does (InputError
// prefixed with the file name, IoError).
std::vector<NamedReplayInput> ReadReplayInputFiles(
    const std::vector<std::string>& paths);

// The case files `path` names: every *.json of it if it is a folder
// (sorted), else `path` itself. Throws std::invalid_argument ("no case
// files (*.json) in PATH") for a folder without one, std::filesystem's
// error if it cannot be listed. O(files log files).
std::vector<std::string> CaseFilePaths(const std::string& path);

// Reads case files (io/case_file.h): every *.json of `path` if it is a
// folder (sorted by name), else the one file. Throws InputError or IoError
// naming the file (a replay case file's InputError with a hint at --format
// requests), and std::invalid_argument for a folder without *.json files.
std::vector<NamedInput> ReadCaseInputs(const std::string& path);

// The same for replay case files (tests/data/cases/capacity/).
std::vector<NamedReplayInput> ReadReplayCaseInputs(const std::string& path);

// Cuts a Mooncake trace (block mode, SPEC §7) into consecutive windows of
// `window` requests: the first half of each window becomes the cached
// sequences, the second half the requests, so matches are the real reuse
// between neighbouring requests. A last window of fewer than 2 requests is
// dropped; a window of at least the trace's length gives one input. Throws
// InputError (its location starting with `path`) or IoError as
// ReadMooncakeTrace, and std::invalid_argument if window < 2.
std::vector<NamedInput> TraceWindowInputs(const std::string& path,
                                          std::size_t window);

// The generator size of generated input number `run` (0-based) of `runs`
// (UINT64_MAX when no count is known: a time budget): sizes step evenly from
// 0 to `max_size` over the first min(runs, max_size + 1) inputs and then
// cycle, so that even --runs 10 reaches max_size (0, 11, 22, ..., 100 for
// max_size 100) and a long run checks every size in turn; a single input
// gets max_size. 0 <= result <= max_size. O(1).
int GeneratorSize(std::uint64_t run, std::uint64_t runs, int max_size);

// Generated input number `run` at generator size `size`:
// checking::RandomBatchInput(seed + run, size), named with its run, seed and
// size; the same arguments always give the same input.
NamedInput GeneratedInput(std::uint64_t seed, std::uint64_t run, int size);

// Generated replay document number `run`: checking::RandomReplayInput(seed +
// run, size), named as above but "generated replay document 47 (--seed 1,
// size 47)" (Python's kvprefix.testing names it the same). About three in four
// evict (a capacity below the requests' distinct prefixes; 760 of runs 0-999 of
// seed 1 at sizes cycling 0 to 100), under either policy and page sizes 1 to 3.
NamedReplayInput GeneratedReplayInput(std::uint64_t seed, std::uint64_t run,
                                      int size);

// The SPEC §9 options of generated replay documents (`verify --model`,
// `--match-limit`, `--trigger`): the model, and the match limit and trigger
// when fixed (nullopt: chosen per document, as GeneratedReplayInput says).
struct GeneratedModel {
  CacheModel model = CacheModel::kSpec;
  std::optional<MatchLimit> match_limit = std::nullopt;
  std::optional<EvictionTrigger> trigger = std::nullopt;

  friend bool operator==(const GeneratedModel&,
                         const GeneratedModel&) = default;
};

// The same document made valid for SPEC §9's `model` (FindModelOptionsProblem
// accepts it): vllm takes lru and all-but-last; sglang keeps fifo (any other
// policy becomes lru) and takes a match limit and trigger from seed + run
// (each of the four combinations about as often); spec keeps the document as
// it is, match limit all. Deterministic, as above.
NamedReplayInput GeneratedReplayInput(std::uint64_t seed, std::uint64_t run,
                                      int size, CacheModel model);

// Throws std::invalid_argument naming the member ("trigger: a trigger needs
// model \"sglang\"; ...") if `model`'s fixed options break a rule of SPEC
// §9.4 (FindModelOptionsProblem, a fixed trigger counting as given): vllm
// with match limit all, a trigger without sglang. O(1).
void CheckGeneratedModel(const GeneratedModel& model);

// The same with `model`'s match limit and trigger where fixed, the others
// chosen as above, and the fixed options in the name ("generated replay
// document 3 (--seed 1, size 3, --model sglang --trigger on-allocate)"; no
// addition for model spec with nothing fixed, the plain document). Throws
// as CheckGeneratedModel.
NamedReplayInput GeneratedReplayInput(std::uint64_t seed, std::uint64_t run,
                                      int size, const GeneratedModel& model);

// The same documents made ones a cache of `implemented` options takes
// (`verify --models M,... --match-limits L,... --policies P,...
// --page-sizes S,... --capacities C,...`): the model drawn from
// implemented.models when it lists any (then `model` fixes only the match limit
// and trigger, and CheckGeneratedModel holds for each listed model), the
// document generated as above, then checking::RestrictOptions on what is not
// listed; the name carries every flag ("generated replay document 3 (--seed 1,
// size 3,
// --policies lru --page-sizes 1)"). Deterministic in its arguments. Throws
// as CheckGeneratedModel.
NamedReplayInput GeneratedReplayInput(
    std::uint64_t seed, std::uint64_t run, int size,
    const GeneratedModel& model,
    const checking::ImplementedOptions& implemented);

// SPEC §10.1 serving documents (`verify --format requests --serving`):
// every path of `paths` read as ReadServeDocumentOrCaseFile reads it (a
// §10 or §8 document, or a replay case file whose document may have §10
// members; its expected answer is not used), named "file PATH". Throws
// InputError (prefixed with the file name) and IoError.
std::vector<NamedServeInput> ReadServeInputFiles(
    const std::vector<std::string>& paths);

// Generated serving document number `run`: GeneratedReplayInput(seed, run,
// size, model, implemented)'s document without its namespaces (SPEC §8.1;
// checking::RemoveRandomNamespaces), with SPEC §10.1's members drawn
// from seed + run: max_running 1 to 4 (1 about one time in four),
// arrivals 0, 1, 2 or 5 µs apart, output lengths 0 to 4, prefill and decode
// 0 to 3 µs per token, overhead 0 to 2 µs, output "none" or "unique"
// (about half each; "none" where the document's largest tokens leave no
// room for unique output tokens, SPEC §10.4). Named "generated serving document
// 3 (--seed 1, size 3...)". Deterministic in its arguments. Throws as
// CheckGeneratedModel.
NamedServeInput GeneratedServeInput(
    std::uint64_t seed, std::uint64_t run, int size,
    const GeneratedModel& model,
    const checking::ImplementedOptions& implemented);

// The flags of `model` (GeneratedModelFlags; with implemented.models, its
// match limit and trigger only) and of `implemented`
// (checking::ImplementedOptionsFlags), e.g. "--match-limit all --models
// sglang --policies lru"; "" when there are none. O(values).
std::string GeneratedOptionsFlags(
    const std::optional<GeneratedModel>& model,
    const checking::ImplementedOptions& implemented);

// Throws std::invalid_argument ("verify: --model and --models: give one
// ...") if `implemented` lists models and `model` fixes one (or match
// limits and `model` fixes one), or (naming the
// member) if a listed model breaks SPEC §9.4 with `model`'s fixed match
// limit or trigger. O(models).
void CheckGeneratedOptions(const std::optional<GeneratedModel>& model,
                           const checking::ImplementedOptions& implemented);

// The flags that make `verify --format requests` generate `model`'s
// documents: "--model vllm", "--model sglang --match-limit all", ...; ""
// for model spec with nothing fixed (the default). O(1).
std::string GeneratedModelFlags(const GeneratedModel& model);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_INPUTS_H_
