// The contract's regression cases: tests/data/cases/*.json and the capacity
// cases of tests/data/cases/capacity/, case files (io/case_file.h) that every
// engine must answer exactly.
#ifndef KVPREFIX_TESTING_SHARED_CASES_H_
#define KVPREFIX_TESTING_SHARED_CASES_H_

#include <string>
#include <vector>

#include "io/case_file.h"
#include "io/json_output.h"

namespace kvprefix::test {

// tests/data/cases of the repository the tests were built from.
inline std::string SharedCasesDir() {
  return KVPREFIX_SOURCE_DIR "/tests/data/cases";
}

// Every shared case, sorted by file name.
inline std::vector<CaseFile> LoadSharedCases() {
  return ReadCaseFolder(SharedCasesDir());
}

// Every capacity case (SPEC §8 replay documents): tests/data/cases/capacity.
inline std::vector<ReplayCaseFile> LoadCapacityCases() {
  return ReadReplayCaseFolder(SharedCasesDir() + "/capacity");
}

// The exact SPEC §5 bytes `kvprefix match` prints for `shared`.
inline std::string ExpectedOutput(const CaseFile& shared) {
  std::string json;
  AppendMatchesJson(shared.input.requests, shared.expected, json);
  return json;
}

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_SHARED_CASES_H_
