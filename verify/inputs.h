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

#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "kvprefix/types.h"

namespace kvprefix::verify {

// Input is BatchInput (SPEC §4) or ReplayInput (a SPEC §8 replay document).
template <typename Input>
struct NamedInputOf {
  std::string name;  // where it came from, for reports: "case 03-empty..."
  Input input;
  // A case file's own expected answer, cross-checked against the reference.
  std::optional<std::vector<Match>> expected;
};
using NamedInput = NamedInputOf<BatchInput>;
using NamedReplayInput = NamedInputOf<ReplayInput>;

// Reads SPEC §4 files. Throws InputError (prefixed with the file name) and
// IoError as ReadBatchInputFile.
std::vector<NamedInput> ReadInputFiles(const std::vector<std::string>& paths);

// Reads SPEC §8 replay documents, throwing as ReadReplayDocumentFile does
// (InputError prefixed with the file name, IoError).
std::vector<NamedReplayInput> ReadReplayInputFiles(
    const std::vector<std::string>& paths);

// Reads case files (io/case_file.h): every *.json of `path` if it is a
// folder (sorted by name), else the one file. Throws InputError or IoError
// naming the file, and std::invalid_argument for a folder without *.json
// files.
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

// Generated input number `run`: checking::RandomBatchInput(seed + run,
// run % (max_size + 1)), so sizes cycle from 0 to max_size and the same
// (seed, run, max_size) always gives the same input.
NamedInput GeneratedInput(std::uint64_t seed, std::uint64_t run, int max_size);

// Generated replay document number `run`: checking::RandomReplayInput(seed +
// run, run % (max_size + 1)), sizes cycling as above. About three in four
// evict (a capacity below the requests' distinct prefixes; 760 of runs 0-999
// of seed 1), under either policy and page sizes 1 to 3.
NamedReplayInput GeneratedReplayInput(std::uint64_t seed, std::uint64_t run,
                                      int max_size);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_INPUTS_H_
