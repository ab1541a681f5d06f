// The contract's regression cases: tests/data/cases/*.json, the capacity
// cases of tests/data/cases/capacity/ and the model cases of
// tests/data/cases/models/, case files (io/case_file.h) that every engine
// (of the case's model) must answer exactly.
#ifndef KVPREFIX_TESTING_SHARED_CASES_H_
#define KVPREFIX_TESTING_SHARED_CASES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engines/registry.h"
#include "io/case_file.h"
#include "io/json_output.h"
#include "kvprefix/replay.h"

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

// Every model case (SPEC §9 replay documents with the answers the real vLLM
// and SGLang code gave): tests/data/cases/models.
inline std::vector<ReplayCaseFile> LoadModelCases() {
  return ReadReplayCaseFolder(SharedCasesDir() + "/models");
}

// The answers of replaying `requests` on engine `name` (anything MakeEngine
// takes, a plugin too) built with `options`, one per request.
inline std::vector<Match> ReplayAnswers(std::string_view name,
                                        const CacheOptions& options,
                                        const SequenceList& requests) {
  const auto cache = MakeEngine(name, options);
  std::vector<Match> answers;
  Replay(*cache, requests, [&](std::size_t, TokenSpan, const Match& match) {
    answers.push_back(match);
  });
  return answers;
}

// The exact SPEC §5 bytes `kvprefix match` prints for `shared`.
inline std::string ExpectedOutput(const CaseFile& shared) {
  std::string json;
  AppendMatchesJson(shared.input.requests, shared.expected, json);
  return json;
}

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_SHARED_CASES_H_
