// Text that goes into JSON strings and into one-line error messages: UTF-8
// checking and escaping, shared by io's readers (messages quote what the
// user wrote) and writers (case files carry a free-text "source").
#ifndef KVPREFIX_IO_JSON_STRINGS_H_
#define KVPREFIX_IO_JSON_STRINGS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvprefix {

// Byte offset of the first byte of `text` that does not start or continue a
// valid UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF), or std::string_view::npos. O(bytes).
std::size_t FirstInvalidUtf8(std::string_view text);

// An escape sequence of a JSON string that RFC 8259 (and simdjson) rejects.
struct InvalidEscape {
  std::size_t offset;    // of its backslash, in the text given
  std::size_t length;    // bytes of the escape shown in messages
  std::string_view why;  // "" or, e.g., "a low surrogate without a high one"
};

// The first invalid escape in `body`, the text between a JSON string's
// quotes as written (escapes not yet decoded): a backslash followed by none
// of " \ / b f n r t u, a \u without 4 hex digits after it, a high
// surrogate (\uD800 to \uDBFF) not followed by a \u low surrogate (\uDC00
// to \uDFFF), or a low surrogate alone. nullopt if there is none. O(bytes).
std::optional<InvalidEscape> FirstInvalidEscape(std::string_view body);

// `text` (a member name, a token, a file name: anything the user wrote) made
// safe for a one-line message: escaped as in a JSON string (\" \\ \n \r
// \t \u0000 \u001b ... \u007f, and the C1 controls, line separators and
// bidirectional controls beyond ASCII: \u009b, \u2028, \u202e ...), bytes
// that are not UTF-8 shown as \xFF,
// and cut after `max_bytes` bytes of `text` with "..." appended. No quotes
// are added. O(min(size, max_bytes)).
std::string EscapeForMessage(std::string_view text, std::size_t max_bytes = 40);

// `text` (a message another library composed around the user's text, a
// line a program printed) with every control character escaped as
// EscapeForMessage escapes it (\n, \t, \u001b, ...) and each byte that is
// not UTF-8 shown as \xFF; quotes, backslashes and everything else are left
// as they are, and nothing is cut: what reaches a terminal can neither move
// the cursor nor split the line. O(bytes).
std::string EscapeControlCharacters(std::string_view text);

// Appends `text` as a JSON string (RFC 8259), quotes included: escaped as
// EscapeForMessage escapes, never cut, and each byte that is not UTF-8
// replaced by U+FFFD, so that the result is always valid JSON. O(bytes).
void AppendJsonString(std::string_view text, std::string& out);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_JSON_STRINGS_H_
