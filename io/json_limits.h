// The limits every JSON reader of kvprefix keeps, in one place: SPEC §4
// input, case files, Mooncake trace lines (SPEC §7), replay documents
// (SPEC §8) and verify's reading of an implementation's answers.
#ifndef KVPREFIX_IO_JSON_LIMITS_H_
#define KVPREFIX_IO_JSON_LIMITS_H_

#include <cstddef>
#include <string_view>

#include "io/input_error.h"

namespace kvprefix {

// The most arrays and objects a JSON text may nest inside one another, the
// root included: `[[1]]` nests 2. A legitimate document nests at most 5
// (a case file: root, "expected", "matches", a match, its suffix); beyond
// this depth every reader stops with an error whose location is the first
// container too deep and whose problem says "nested deeper than 1024"
// (exit status 2 in the CLI). Readers that expect a fixed shape (SPEC §4
// input, case files, replay documents) meet a value of the wrong kind long
// before this depth and report that instead; the depth matters where a
// reader checks values it does not use (the unused members of a trace
// line), in verify's reading of an implementation's answer, and when it
// locates an error in a document simdjson found unbalanced.
// Every reader is iterative: time and memory are linear in the input's
// bytes whatever its depth, and the call stack does not grow with it.
inline constexpr std::size_t kMaxJsonDepth = 1024;

// For a JSON text that a parser found nested deeper than kMaxJsonDepth
// (simdjson's DOM parser with that depth: DEPTH_ERROR): the InputError at
// the first array or object too deep, "<path>: expected at most 1024 nested
// arrays and objects, found '[' at byte N nested deeper than 1024".
// O(bytes); memory O(kMaxJsonDepth).
InputError NestingError(std::string_view json);

// True if `json` opens more than kMaxJsonDepth arrays and objects inside
// one another (brackets inside strings not counted), whatever else is
// wrong with it: a reader whose parser failed for another reason first
// (simdjson's DOM calls 200,000 unclosed '[' a TAPE_ERROR) asks this, so
// that such text gets NestingError, the depth rule before any other.
// O(bytes), O(1) memory.
bool NestsTooDeep(std::string_view json);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_JSON_LIMITS_H_
