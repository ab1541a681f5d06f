// Reading the batch job's JSON input (SPEC §4) with simdjson On Demand.
#ifndef KVPREFIX_IO_JSON_INPUT_H_
#define KVPREFIX_IO_JSON_INPUT_H_

#include <string>
#include <string_view>

#include "io/input_error.h"
#include "kvprefix/batch.h"

namespace kvprefix {

// Parses one SPEC §4 document: an object with exactly the members
// "cached_sequences" and "requests" (either order), each an array of arrays
// of integers in the int32 range, and nothing after it but whitespace.
// Throws InputError naming the JSON location of the first problem: missing,
// unknown or duplicated member, non-array, fraction or exponent, token
// outside int32, true/false/null/string, trailing garbage, invalid UTF-8,
// truncated input. A document in the plain form every producer writes is
// read by a fast path (io/json_fast_input.h), anything else by the strict
// reader: the same result and the same errors either way. O(input bytes);
// memory ~ input bytes + 4 bytes per token (virtual memory up to 4 bytes
// per input byte, see json_fast_input.h). Thread-safe (no shared state).
BatchInput ParseBatchInput(std::string_view json);

// ParseBatchInput with the strict reader alone, never the fast path: for
// the tests and fuzz targets that check that both read every document
// alike. Same contract, slower.
BatchInput ParseBatchInputStrict(std::string_view json);

// Reads and parses a file ("-" is standard input). Throws IoError if the file
// cannot be read, InputError as ParseBatchInput.
BatchInput ReadBatchInputFile(const std::string& path);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_JSON_INPUT_H_
