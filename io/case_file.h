// Case files: one input with its exact expected answer, the format of the
// regression cases in tests/data/cases/ and of the minimal failing case
// `kvprefix verify` writes, so that a failure found can join the regression
// cases as it is. A batch case (SPEC §2):
//   {"cached_sequences":[...],"requests":[...],
//    "expected":{"matches":[...]},"source":"..."}
// A replay case (SPEC §8, tests/data/cases/capacity/):
//   {"document":{"requests":[...],"capacity":C,...},
//    "expected":{"matches":[...]},"source":"..."}
// "expected" is what SPEC §5 prints for the input (for a replay, each
// request's match at step 1); "source" (optional) says where the case came
// from.
#ifndef KVPREFIX_IO_CASE_FILE_H_
#define KVPREFIX_IO_CASE_FILE_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/input_error.h"
#include "io/replay_document.h"
#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix {

template <typename Input>
struct CaseFileOf {
  std::string name;  // the file name without its folder: "03-empty.json"
  Input input;
  std::vector<Match> expected;  // one per request, in request order
  std::string source;           // "" when the file has none
};
using CaseFile = CaseFileOf<BatchInput>;
using ReplayCaseFile = CaseFileOf<ReplayInput>;

// Parses a case file as strictly as ParseBatchInput parses SPEC §4 input
// (its tokens are sent to implementations under test): exactly the members
// above, each once, in any order; "expected" an object with the one member
// "matches", an array of one match per request, each with exactly
// matched_length and cache_node (unsigned 64-bit integers) and an
// uncached_suffix that is the request's tail after matched_length. Throws
// InputError naming the JSON location, what was expected and what was found.
// The result's name is empty. O(bytes). Thread-safe.
CaseFile ParseCaseFile(std::string_view json);

// Reads and parses the case file `path`. Throws IoError if it cannot be read
// and InputError whose location starts with `path` as given ("<path>:
// $.requests[3][17]").
CaseFile ReadCaseFile(const std::string& path);

// Every *.json file of the folder `dir`, sorted by name (none: an empty
// vector). Throws as ReadCaseFile, and IoError for an unreadable folder.
std::vector<CaseFile> ReadCaseFolder(const std::string& dir);

// The case file text, one line plus a newline: `input`'s members, the
// `expected` answer (one Match per request; normally the reference's) as
// SPEC §5 writes it, and `source` (any text; JSON-escaped here, bytes that
// are not UTF-8 replaced by U+FFFD). ParseCaseFile reads it back.
// O(input tokens). Thread-safe.
std::string FormatCaseFile(const BatchInput& input,
                           std::span<const Match> expected,
                           std::string_view source);

// The same four for replay cases: "document" is read as
// ParseReplayDocument reads a whole document (io/replay_document.h).
ReplayCaseFile ParseReplayCaseFile(std::string_view json);
ReplayCaseFile ReadReplayCaseFile(const std::string& path);
std::vector<ReplayCaseFile> ReadReplayCaseFolder(const std::string& dir);
std::string FormatReplayCaseFile(const ReplayInput& input,
                                 std::span<const Match> expected,
                                 std::string_view source);

// What `kvprefix replay FILE --format requests` reads: a SPEC §8 replay
// document, or a replay case file as `kvprefix verify` writes it (told apart
// by a member only a case file has: "document", "expected" or "source"),
// whose document is read, as strictly as ParseReplayCaseFile reads it (its
// expected answer is checked for shape but not replayed). Throws InputError
// as ParseReplayDocument or ParseReplayCaseFile, without the file name
// (which the caller adds), and IoError if the file cannot be read ("-" is
// standard input). With `places`, also where the document set each member
// ("$.document.policy" in a case file). O(bytes).
ReplayInput ReadReplayDocumentOrCaseFile(const std::string& path,
                                         DocumentPlaces* places = nullptr);

// The same for a SPEC §10.1 serving replay document (ReadServeDocumentFile,
// io/replay_document.h), or a replay case file (as above) whose document may
// have §10.1's members too; a case file's "expected" is not read (a §10
// case's is §10.5's answer, as tests/data/cases/serve/'s). Throws as
// ReadReplayDocumentOrCaseFile, with ParseServeDocument's rules for the
// document. O(bytes).
ServeInput ReadServeDocumentOrCaseFile(const std::string& path,
                                       DocumentPlaces* places = nullptr);

// The same for a SPEC §11.1 routed replay document (ParseRoutedDocument,
// io/replay_document.h), or a replay case file holding one (its "expected"
// not read, as above); *routing gets
// its "workers" and "router" (defaults where absent). Throws as
// ReadServeDocumentOrCaseFile with ParseRoutedDocument's rules. O(bytes).
ServeInput ReadRoutedDocumentOrCaseFile(const std::string& path,
                                        DocumentPlaces* places,
                                        RoutingSpec* routing);

// The "document" member of any case file, its expected answer whatever it
// is (not read): the SPEC §10 and §11 cases of tests/data/cases/serve/,
// whose answers are §10.5's and §11.8's. Read with ParseRoutedDocument's
// rules; *routing gets its "workers" and "router". Throws IoError, or
// InputError naming the path and the location ("$.document.workers").
// O(bytes).
ServeInput ReadRoutedCaseDocument(const std::string& path,
                                  RoutingSpec* routing);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_CASE_FILE_H_
