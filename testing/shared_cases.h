// Loading the contract's regression cases (tests/data/cases/*.json): each file
// holds cached_sequences, requests, the exact expected output and a source.
#ifndef KVPREFIX_TESTING_SHARED_CASES_H_
#define KVPREFIX_TESTING_SHARED_CASES_H_

#include <string>
#include <vector>

#include "io/json_input.h"
#include "kvprefix/types.h"

namespace kvprefix::testing {

struct SharedCase {
  std::string name;  // file name without folder, e.g. "03-empty-request.json"
  BatchInput input;  // cached_sequences and requests
  std::vector<Match> expected;  // from the "expected" member, request order
  std::string expected_json;    // "expected" re-serialized per SPEC §5
  std::string source;           // the bug report it came from
};

// The folder holding the regression cases, tests/data/cases of the
// repository the tests were built from.
std::string SharedCasesDir();

// Reads every *.json file of `dir`, sorted by name (none: an empty vector).
// Throws IoError for an unreadable file, and InputError for a malformed case,
// its location "<file>: $.requests[3][17]" (the file as given) and its
// problem what was expected and found. Malformed: not JSON, a missing,
// unknown or duplicated member, a token that is not an integer in the int32
// range (booleans, fractions and larger integers are rejected, never
// converted), a matched_length or cache_node that is not an unsigned 64-bit
// integer, an uncached_suffix that is not the request's tail, a number of
// matches other than the number of requests. O(file bytes).
std::vector<SharedCase> LoadSharedCases(const std::string& dir);

// Reads one case file (e.g. one written by `kvprefix verify`). Throws as
// LoadSharedCases.
SharedCase LoadSharedCase(const std::string& path);

}  // namespace kvprefix::testing

#endif  // KVPREFIX_TESTING_SHARED_CASES_H_
