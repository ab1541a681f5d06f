// Internal to io/: turning simdjson On Demand failures into InputError
// messages that name the JSON location, what was expected and what was found.
//
// simdjson reports error codes, not places. The readers in io/ know the path
// they are at ($.requests[3][17]) and call these helpers only on the error
// path, so the fast path costs nothing. Failures simdjson detects before any
// value is read (an unbalanced document, i.e. truncated input or trailing
// garbage, and an unclosed string) are located by DiagnoseUnbalanced, which
// walks the brackets once.
#ifndef KVPREFIX_IO_JSON_DIAGNOSTICS_H_
#define KVPREFIX_IO_JSON_DIAGNOSTICS_H_

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/input_error.h"

namespace kvprefix::json_diagnostics {

namespace ondemand = simdjson::ondemand;

// What a reader is reading: the document being iterated, its text, and a
// prefix for every location ("" for a file, "line 7: " for JSON Lines).
struct Context {
  ondemand::document& document;
  std::string_view json;
  std::string prefix;
};

// The path of member `raw_key` (still escaped) of the object at
// `object_path`: "$.name", or "$[\"we ird\"]" when the key is not an
// identifier.
std::string MemberPath(std::string_view raw_key,
                       const std::string& object_path = "$");

// The error for a failure of parser.iterate() or of opening the root object:
// empty input, invalid UTF-8, truncation, trailing garbage, a root that is not
// an object. Locations start with `prefix`. Throws IoError instead for a
// document too large for simdjson (4 GiB).
InputError DocumentError(simdjson::error_code error, std::string_view json,
                         const std::string& prefix);

// For a document simdjson found unbalanced or holding an unclosed string:
// the innermost open container at the end of input (truncated input), or the
// first byte after the root value (trailing garbage). O(bytes).
InputError DiagnoseUnbalanced(std::string_view json, const std::string& prefix);

// The error at `location` when `element` (an array element or a member
// value, possibly carrying a syntax error instead) is not `expected`.
InputError Unexpected(const Context& context,
                      simdjson::simdjson_result<ondemand::value>& element,
                      const std::string& location, std::string_view expected);

// The error at `location` for a syntax error met while iterating a container
// (a missing comma, a stray character): names the byte found there.
InputError SyntaxError(const Context& context, const std::string& location,
                       std::string_view expected);

// The error for a member of the object at `object_path` that appears twice
// (`raw_key`; located at the member) or not at all (`name`; located at the
// object).
InputError DuplicateMember(const std::string& prefix, std::string_view raw_key,
                           const std::string& object_path = "$");
InputError MissingMember(const std::string& prefix, std::string_view name,
                         const std::string& object_path = "$");

// Throws InputError at the root if anything but whitespace follows the root
// value that context.document has just finished reading.
void CheckAtEnd(const Context& context);

// Reads the value at `location` to its end, checking all of it (On Demand
// checks only what is read): for members a reader does not use. Throws
// InputError at the first invalid byte. O(bytes of the value).
void ValidateValue(const Context& context,
                   simdjson::simdjson_result<ondemand::value> element,
                   const std::string& location);

// Reads an integer in [min, max] from `element`, or throws the InputError
// for location() (called only on failure). Fractions, exponents, integers
// of any size outside the range, and non-numbers are rejected.
template <typename Location>
std::int64_t ReadInteger(const Context& context,
                         simdjson::simdjson_result<ondemand::value> element,
                         std::int64_t min, std::int64_t max,
                         Location&& location) {
  std::int64_t value = 0;
  if (element.get_int64().get(value) == simdjson::SUCCESS && value >= min &&
      value <= max) [[likely]] {
    return value;
  }
  throw Unexpected(
      context, element, location(),
      "an integer from " + std::to_string(min) + " to " + std::to_string(max));
}

}  // namespace kvprefix::json_diagnostics

#endif  // KVPREFIX_IO_JSON_DIAGNOSTICS_H_
