// The fast path of ParseBatchInput (json_input.h): SPEC §4 documents in the
// plain form every producer writes, parsed by one tight loop over the bytes.
//
// simdjson On Demand parses an integer one digit per loop iteration behind
// its structural index, ~13 ns per token: 40% of `kvprefix match` on a
// 249 MB input. Token arrays are the whole of such a document, so this
// reader takes the bytes directly. It never reports an error: on anything
// outside the plain form it declines, and ParseBatchInput parses the whole
// document again with the strict reader, so every error message and
// location stays the strict reader's.
#ifndef KVPREFIX_IO_JSON_FAST_INPUT_H_
#define KVPREFIX_IO_JSON_FAST_INPUT_H_

#include <optional>
#include <string_view>

#include "kvprefix/batch.h"

namespace kvprefix {

// Parses `json` if it is in the plain form: an object with the members
// "cached_sequences" and "requests" once each (either order, keys without
// escapes), each an array of arrays of integers written `0`, `-0` or an
// optional '-' then 1 to 10 digits without a leading zero, in the int32
// range; JSON whitespace (space, tab, LF, CR) anywhere between values and
// nothing else after the object. Such a document is valid SPEC §4 input,
// and the result equals ParseBatchInput's. Returns std::nullopt on anything
// else (a byte outside these, an escape, a fraction, exponent or '+', a
// leading zero, a token outside int32, a missing, unknown or duplicated
// member, a document over simdjson's 4 GiB limit); it accepts no document
// that the strict reader rejects (tests/json_io_test.cc compares the two).
// The token storage of each member is reserved once from the bytes left
// (every token takes at least 2 bytes: a digit and a separator): virtual
// memory of 2 bytes per byte after the member's start, of which only the
// pages the tokens fill are touched, so no doubling copies; where the
// system refuses that much, the storage grows as it fills instead. Throws
// std::bad_alloc only.
// O(input bytes). Thread-safe (no shared state).
std::optional<BatchInput> ParseBatchInputFast(std::string_view json);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_JSON_FAST_INPUT_H_
