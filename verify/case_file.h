// Writing a failing input as a case file, the format of tests/data/cases/:
// {"cached_sequences":[...],"requests":[...],"expected":{"matches":[...]},
//  "source":"..."}, so a failure found by `kvprefix verify` can join the
// regression cases as it is.
#ifndef KVPREFIX_VERIFY_CASE_FILE_H_
#define KVPREFIX_VERIFY_CASE_FILE_H_

#include <span>
#include <string>
#include <string_view>

#include "io/json_input.h"
#include "kvprefix/types.h"

namespace kvprefix::verify {

// The case file text, one line plus a newline: `input`'s members, the
// `expected` answer (one Match per request; normally the reference's) as
// SPEC §5 writes it, and `source` (any text; JSON-escaped here).
// O(input tokens). Thread-safe.
std::string FormatCaseFile(const BatchInput& input,
                           std::span<const Match> expected,
                           std::string_view source);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_CASE_FILE_H_
