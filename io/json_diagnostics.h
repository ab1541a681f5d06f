// Internal to io/: turning simdjson On Demand failures into InputError
// messages that name the JSON location, what was expected and what was found.
//
// simdjson reports error codes, not places. The readers in io/ know the path
// they are at ($.requests[3][17]) as a JsonPath, a chain of steps on their
// stack that costs nothing to make; its text is built only on the error
// path, so the fast path builds no string. Failures simdjson detects before
// any value is read (an unbalanced document, i.e. truncated input or
// trailing garbage, and an unclosed string) are located by
// DiagnoseUnbalanced, which walks the brackets once.
//
// Nothing here recurses: nesting is bounded by kMaxJsonDepth
// (io/json_limits.h) wherever a reader descends into values whose shape it
// does not prescribe, and time and memory stay linear in the input.
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
using Value = simdjson::simdjson_result<ondemand::value>;

// What a reader is reading: the document being iterated, its text, and, for
// JSON Lines, the line (its number starts every location: "line 7: $").
struct Context {
  ondemand::document& document;
  std::string_view json;
  std::size_t line_number = 0;  // 1-based; 0: a whole file

  // "" for a whole file, "line 7: " for a line. Built on error paths only.
  std::string Prefix() const;
};

// A JSON location such as $.requests[3][17], as a chain of steps that lives
// on the reader's stack: making a step costs two words, and the text is
// built only by str(), which readers call when they report an error. A step
// points at its parent, which must outlive it (name each step: a step of a
// temporary dangles), and a member step views its (unescaped) name, which
// must outlive it too. O(depth) to print.
class JsonPath {
 public:
  JsonPath() = default;  // the root, "$"

  JsonPath Member(std::string_view name) const {
    return JsonPath(this, name, 0, true);
  }
  JsonPath Index(std::size_t index) const {
    return JsonPath(this, {}, index, false);
  }

  std::string str() const;

 private:
  JsonPath(const JsonPath* parent, std::string_view name, std::size_t index,
           bool is_member)
      : parent_(parent), name_(name), index_(index), is_member_(is_member) {}

  const JsonPath* parent_ = nullptr;  // nullptr: the root
  std::string_view name_;             // a member step: the member's name
  std::size_t index_ = 0;             // an index step: the element's index
  bool is_member_ = false;
};

// Appends the step to member `name` to `path`: ".name", or "[\"we ird\"]"
// when the name is not an identifier; `name` is escaped for a message.
void AppendMemberStep(std::string_view name, std::string& path);

// The path of member `name` of the object at `object_path`.
std::string MemberPath(std::string_view name,
                       const std::string& object_path = "$");

// The error for a failure of parser.iterate() or of opening the root object:
// empty input, invalid UTF-8, truncation, trailing garbage, a root that is not
// an object, nesting deeper than kMaxJsonDepth in an unbalanced document.
// Locations start with `prefix`. Invalid UTF-8 is located at its first bad
// byte: "byte 43", or inside a string the string's JSON location first,
// "$.namespaces[1], byte 50" ("$.a (a member name), byte 9" in a member's
// name). Throws IoError instead for a document too
// large for simdjson (4 GiB), and std::bad_alloc when simdjson could not
// allocate its buffers (a resource failure, not bad input).
InputError DocumentError(simdjson::error_code error, std::string_view json,
                         std::string_view prefix);

// The InputError being handled (call from a catch block), or, when `json`
// holds invalid UTF-8 and neither an unclosed string nor an unescaped
// control character, the UTF-8 error at its first invalid byte instead.
// Why: simdjson's SIMD kernels check that the whole input is UTF-8 in stage
// 1, before any value is read, and report only an unclosed string or an
// unescaped control character before it; its fallback kernel checks UTF-8
// inside strings only, so a stray byte such as 0xFF elsewhere surfaces
// later as a bad scalar, trailing content or an unbalanced document. Every
// reader runs through this so that its error does not depend on the CPU.
// Locations start with `prefix`. O(bytes), on the error path only.
[[noreturn]] void RethrowWithUtf8First(std::string_view json,
                                       std::string_view prefix);

// For a document simdjson found unbalanced or holding an unclosed string:
// the first container nested deeper than kMaxJsonDepth, else the innermost
// open container at the end of input (truncated input), or the first byte
// after the root value (trailing garbage). O(bytes); memory O(kMaxJsonDepth
// levels).
InputError DiagnoseUnbalanced(std::string_view json, std::string_view prefix);

// The error at `location` when `element` (an array element or a member
// value, possibly carrying a syntax error instead) is not `expected`; a
// syntax error right after a value (a missing ',') expects "',' or ']'".
InputError Unexpected(const Context& context, Value& element,
                      const std::string& location, std::string_view expected);

// The error at `location` for a syntax error met while iterating a container
// (a missing comma, a stray character): names the byte found there.
InputError SyntaxError(const Context& context, const std::string& location,
                       std::string_view expected);

// SyntaxError for a member that could not be read while iterating the
// object at `location`: what was expected follows from the byte before
// ("a member name" after ',', "a member name or '}'" after '{').
InputError MemberSyntaxError(const Context& context,
                             const std::string& location);

// The error at `location` for the string whose opening quote is at `quote`
// and which simdjson could not unescape: names the first invalid escape and
// its byte (FirstInvalidEscape, io/json_strings.h).
InputError StringError(const Context& context, const char* quote,
                       const std::string& location);

// The error at `location` for the number, true, false or null `token` (as
// raw_json_token() gives it) that is not valid as `expected`.
InputError BadScalar(const Context& context, std::string_view token,
                     const std::string& location, std::string_view expected);

// The error at `location` for the array or object starting at `bracket`,
// which nests deeper than kMaxJsonDepth.
InputError TooDeep(const Context& context, const char* bracket,
                   const std::string& location);

// The error for a member of the object at `object_path` that appears twice
// (`name`; located at the member) or not at all (`name`; located at the
// object).
InputError DuplicateMember(const Context& context, std::string_view name,
                           const JsonPath& object_path);
InputError MissingMember(const Context& context, std::string_view name,
                         const JsonPath& object_path);

// One member of an object being iterated: its name (unescaped, valid until
// the parser is reused) and its value.
struct Member {
  std::string_view name;
  Value value;
};

// Reads `member`, met while iterating the object at object_location()
// (called only to report an error). Throws InputError for a syntax error
// (located at the object: a missing name, ':' or ',') and for an invalid
// escape in the name (its byte named).
template <typename ObjectLocation>
Member ReadMember(const Context& context,
                  simdjson::simdjson_result<ondemand::field> member,
                  ObjectLocation&& object_location) {
  ondemand::field field;
  if (std::move(member).get(field) != simdjson::SUCCESS) [[unlikely]] {
    throw MemberSyntaxError(context, object_location());
  }
  // raw() is the byte after the name's opening quote.
  const char* quote = field.key().raw() - 1;
  std::string_view name;
  if (field.unescaped_key().get(name) != simdjson::SUCCESS) [[unlikely]] {
    throw StringError(context, quote, object_location());
  }
  return Member{name, Value(std::move(field).value())};
}

inline Member ReadMember(const Context& context,
                         simdjson::simdjson_result<ondemand::field> member,
                         const JsonPath& object_path) {
  return ReadMember(context, std::move(member),
                    [&object_path] { return object_path.str(); });
}

// Throws InputError at the root if anything but whitespace follows the root
// value that context.document has just finished reading.
void CheckAtEnd(const Context& context);

// Checks the scalar `value` (a string, number, true, false or null, as
// `type` says) to its end; throws InputError at location() (called only
// then) if it is invalid. Arrays and objects are left to the caller.
template <typename Location>
inline void ValidateScalar(const Context& context, ondemand::value& value,
                           ondemand::json_type type, Location&& location) {
  bool valid = false;
  std::string_view expected;
  switch (type) {
    case ondemand::json_type::string: {
      std::string_view ignored;
      if (value.get_string().get(ignored) != simdjson::SUCCESS) {
        throw StringError(context, value.raw_json_token().data(), location());
      }
      return;
    }
    case ondemand::json_type::number: {
      ondemand::number ignored;
      valid = value.get_number().get(ignored) == simdjson::SUCCESS;
      expected = "a valid number";
      break;
    }
    case ondemand::json_type::boolean: {
      bool ignored;
      valid = value.get_bool().get(ignored) == simdjson::SUCCESS;
      expected = "true or false";
      break;
    }
    case ondemand::json_type::null: {
      bool is_null = false;
      valid = value.is_null().get(is_null) == simdjson::SUCCESS && is_null;
      expected = "null";
      break;
    }
    case ondemand::json_type::array:
    case ondemand::json_type::object:
      return;  // not scalars: the caller walks them
  }
  if (!valid) {
    throw BadScalar(context, value.raw_json_token(), location(), expected);
  }
}

// Reads `element` (at `path`, inside `depth` enclosing arrays and objects:
// 1 for a member of the root object) to its end, checking all of it (On
// Demand checks only what is read): for members a reader does not use.
// Throws InputError at the first invalid byte, or at the first array or
// object nested deeper than kMaxJsonDepth. Iterative, with its own stack of
// at most kMaxJsonDepth levels: O(bytes of the value) time, O(depth)
// memory, constant call-stack depth; a location is built only for an error.
void ValidateValue(const Context& context, Value element, const JsonPath& path,
                   std::size_t depth);

// The InputError of ReadInteger (out of line: the error path).
[[noreturn]] void ThrowNotInteger(const Context& context, Value& element,
                                  std::int64_t min, std::int64_t max,
                                  const JsonPath& path);

// Reads an integer in [min, max] from `element`, or throws the InputError
// at `path`. Fractions, exponents, integers of any size outside the range,
// and non-numbers are rejected.
inline std::int64_t ReadInteger(const Context& context, Value element,
                                std::int64_t min, std::int64_t max,
                                const JsonPath& path) {
  std::int64_t value = 0;
  if (element.get_int64().get(value) == simdjson::SUCCESS && value >= min &&
      value <= max) [[likely]] {
    return value;
  }
  ThrowNotInteger(context, element, min, max, path);
}

}  // namespace kvprefix::json_diagnostics

#endif  // KVPREFIX_IO_JSON_DIAGNOSTICS_H_
