// Error messages for the simdjson readers of io/ (see json_diagnostics.h).
#include "io/json_diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "io/json_limits.h"
#include "io/json_strings.h"

namespace kvprefix::json_diagnostics {
namespace {

constexpr std::size_t kMaxSnippet = 24;  // bytes of a token shown in errors

bool IsWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool IsDelimiter(char c) {
  return IsWhitespace(c) ||
         std::string_view("[]{},:\"").find(c) != std::string_view::npos;
}

// The token starting at json[offset], quoted and cut to kMaxSnippet bytes.
std::string Snippet(std::string_view json, std::size_t offset) {
  std::size_t end = offset + 1;
  if (!IsDelimiter(json[offset])) {
    while (end < json.size() && !IsDelimiter(json[end])) ++end;
  }
  return fmt::format(
      "'{}'", EscapeForMessage(json.substr(offset, end - offset), kMaxSnippet));
}

std::string FoundAt(std::string_view json, std::size_t offset) {
  if (offset >= json.size()) return "end of input";
  return fmt::format("{} at byte {}", Snippet(json, offset), offset);
}

// What the iterator of `context` points at, after a syntax error.
std::string FoundAtCurrent(const Context& context) {
  const char* position = nullptr;
  if (context.document.current_location().get(position) != simdjson::SUCCESS) {
    return "end of input";
  }
  return FoundAt(context.json,
                 static_cast<std::size_t>(position - context.json.data()));
}

// The last byte other than whitespace before what the iterator of `context`
// points at, or '\0' if there is none or no position: after a syntax error,
// what came before the bad byte says what was expected there.
char ByteBeforeCurrent(const Context& context) {
  const char* position = nullptr;
  if (context.document.current_location().get(position) != simdjson::SUCCESS) {
    return '\0';
  }
  for (auto i = static_cast<std::size_t>(position - context.json.data()); i > 0;
       --i) {
    if (!IsWhitespace(context.json[i - 1])) return context.json[i - 1];
  }
  return '\0';
}

std::string_view Trim(std::string_view token) {
  while (!token.empty() && IsWhitespace(token.back())) token.remove_suffix(1);
  return token;
}

std::string Shortened(std::string_view token) {
  return EscapeForMessage(Trim(token), kMaxSnippet);
}

std::string DescribeNumber(ondemand::value& value) {
  const std::string raw = Shortened(value.raw_json_token());
  ondemand::number_type type;
  if (value.get_number_type().get(type) != simdjson::SUCCESS) {
    return "an invalid number " + raw;
  }
  if (type == ondemand::number_type::floating_point_number) {
    double ignored;
    if (value.get_double().get(ignored) != simdjson::SUCCESS) {
      return "an invalid number " + raw;
    }
    return raw + (raw.find('.') != std::string::npos
                      ? " (a number with a fraction)"
                      : " (a number with an exponent)");
  }
  std::int64_t ignored;
  if (value.get_int64().get(ignored) == simdjson::NUMBER_ERROR) {
    return "an invalid number " + raw;  // e.g. a leading zero: 01
  }
  return raw;
}

std::string DescribeValue(const Context& context, ondemand::value& value) {
  ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) {
    return FoundAtCurrent(context);
  }
  switch (type) {
    case ondemand::json_type::array:
      return "an array";
    case ondemand::json_type::object:
      return "an object";
    case ondemand::json_type::string:
      return "a string";
    case ondemand::json_type::number:
      return DescribeNumber(value);
    case ondemand::json_type::boolean:
    case ondemand::json_type::null:
      break;
  }
  return Shortened(value.raw_json_token());
}

// "an array", "a string", "'5'" for the first value of a document.
std::string DescribeRoot(std::string_view json) {
  std::size_t offset = 0;
  while (offset < json.size() && IsWhitespace(json[offset])) ++offset;
  if (offset == json.size()) return "end of input";
  if (json[offset] == '[') return "an array";
  if (json[offset] == '"') return "a string";
  return Snippet(json, offset);
}

// Offset of the first control character (below 0x20) inside a string, which
// JSON requires escaped, or npos. O(bytes).
std::size_t FirstUnescapedControl(std::string_view json) {
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const auto c = static_cast<unsigned char>(json[i]);
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '\\') {
      ++i;
    } else if (c == '"') {
      in_string = false;
    } else if (c < 0x20) {
      return i;
    }
  }
  return std::string_view::npos;
}

// True if some string of `json` is never closed: simdjson's stage 1 tracks
// the same quotes (escapes skipped) in every kernel. O(bytes).
bool HasUnclosedString(std::string_view json) {
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (!in_string) {
      in_string = json[i] == '"';
    } else if (json[i] == '\\') {
      ++i;
    } else if (json[i] == '"') {
      in_string = false;
    }
  }
  return in_string;
}

// One open container met by DiagnoseUnbalanced and StringLocationAt.
struct Level {
  bool is_array;
  std::size_t index = 0;   // arrays: the element being read
  std::string_view key;    // objects: the raw name of the member being read
  bool has_key = false;    // objects: a name has been read
  bool expect_key = true;  // objects: the next string is a name
};

std::string PathOf(const std::vector<Level>& stack) {
  std::string path = "$";
  for (const Level& level : stack) {
    if (level.is_array) {
      path += fmt::format("[{}]", level.index);
    } else if (level.has_key) {
      AppendMemberStep(level.key, path);
    }
  }
  return path;
}

// A ',' in the innermost open container: an array's next element, an
// object's next member (a name is expected).
void NextItem(std::vector<Level>& stack) {
  if (stack.empty()) return;
  if (stack.back().is_array) {
    ++stack.back().index;
  } else {
    stack.back().has_key = false;
    stack.back().expect_key = true;
  }
}

// The offset of the closing quote of the string whose opening quote is at
// `quote` (escapes skipped), or json.size() if it is never closed.
std::size_t StringEnd(std::string_view json, std::size_t quote) {
  std::size_t end = quote + 1;
  while (end < json.size() && json[end] != '"') {
    end += json[end] == '\\' ? 2 : 1;
  }
  return std::min(end, json.size());
}

// The JSON location of the string holding byte `offset` of `json`:
// "$.namespaces[1]" for a string value, "$.a (a member name)" for a member's
// name in the object at $.a; nullopt when the byte is in no string (or the
// brackets before it do not balance, or nest deeper than kMaxJsonDepth).
// One walk of the brackets up to `offset`, as DiagnoseUnbalanced's.
std::optional<std::string> StringLocationAt(std::string_view json,
                                            std::size_t offset) {
  std::vector<Level> stack;
  for (std::size_t i = 0; i < json.size() && i <= offset; ++i) {
    switch (json[i]) {
      case '"': {
        const std::size_t end = StringEnd(json, i);
        const bool name =
            !stack.empty() && !stack.back().is_array && stack.back().expect_key;
        if (offset < end) {
          return name ? PathOf(stack) + " (a member name)" : PathOf(stack);
        }
        if (name) {
          stack.back().key = json.substr(i + 1, end - i - 1);
          stack.back().has_key = true;
          stack.back().expect_key = false;
        }
        i = end;
        break;
      }
      case '[':
      case '{':
        if (stack.size() == kMaxJsonDepth) return std::nullopt;
        stack.push_back(Level{.is_array = json[i] == '[', .key = {}});
        break;
      case ']':
      case '}':
        if (stack.empty()) return std::nullopt;
        stack.pop_back();
        break;
      case ',':
        NextItem(stack);
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

InputError Utf8Error(std::string_view json, const std::string& prefix) {
  const std::size_t offset = std::min(FirstInvalidUtf8(json), json.size());
  // Inside a string (a namespace, a member name), the location names it.
  const std::optional<std::string> string = StringLocationAt(json, offset);
  return InputError(
      fmt::format("{}{}byte {}", prefix, string ? *string + ", " : "", offset),
      offset < json.size()
          ? fmt::format("expected UTF-8 text, found invalid byte 0x{:02X}",
                        static_cast<unsigned char>(json[offset]))
          : "expected UTF-8 text, found invalid UTF-8");
}

std::string TooDeepProblem(std::string_view found) {
  return fmt::format(
      "expected at most {} nested arrays and objects, found {} nested deeper "
      "than {}",
      kMaxJsonDepth, found, kMaxJsonDepth);
}

// The body of the string whose opening quote is at `quote`: up to its
// closing quote, escapes as written. The text is padded, so simdjson has
// checked that the quote closes, but the end of `json` bounds the scan too.
std::string_view StringBody(std::string_view json, const char* quote) {
  std::size_t end = static_cast<std::size_t>(quote - json.data()) + 1;
  const std::size_t begin = end;
  while (end < json.size() && json[end] != '"') {
    end += json[end] == '\\' ? 2 : 1;
  }
  return json.substr(begin, std::min(end, json.size()) - begin);
}

}  // namespace

std::string Context::Prefix() const {
  return line_number == 0 ? std::string()
                          : fmt::format("line {}: ", line_number);
}

std::string JsonPath::str() const {
  std::vector<const JsonPath*> steps;
  for (const JsonPath* step = this; step->parent_ != nullptr;
       step = step->parent_) {
    steps.push_back(step);
  }
  std::string path = "$";
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if ((*it)->is_member_) {
      AppendMemberStep((*it)->name_, path);
    } else {
      path += fmt::format("[{}]", (*it)->index_);
    }
  }
  return path;
}

void AppendMemberStep(std::string_view name, std::string& path) {
  const bool identifier =
      !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
  if (identifier) {
    path += '.';
    path += EscapeForMessage(name);  // cut after 40 bytes
  } else {
    path += "[\"";
    path += EscapeForMessage(name);
    path += "\"]";
  }
}

std::string MemberPath(std::string_view name, const std::string& object_path) {
  std::string path = object_path;
  AppendMemberStep(name, path);
  return path;
}

InputError DocumentError(simdjson::error_code error, std::string_view json,
                         std::string_view prefix_view) {
  const std::string prefix(prefix_view);
  if (error == simdjson::MEMALLOC) throw std::bad_alloc();
  if (json.starts_with("\xEF\xBB\xBF")) {  // simdjson 3.0 does not skip it
    return InputError(prefix + "byte 0",
                      "expected a JSON value, found a UTF-8 byte order mark "
                      "(EF BB BF)");
  }
  switch (error) {
    case simdjson::EMPTY:
      return InputError(prefix + "$",
                        "expected a JSON object, found end of input (empty "
                        "input)");
    case simdjson::UTF8_ERROR:
      return Utf8Error(json, prefix);
    case simdjson::UNESCAPED_CHARS: {
      const std::size_t offset =
          std::min(FirstUnescapedControl(json), json.size());
      return InputError(
          fmt::format("{}byte {}", prefix, offset),
          fmt::format("expected control characters in strings escaped (\\n, "
                      "\\u0000), found '{}'",
                      EscapeForMessage(json.substr(offset, 1))));
    }
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
    case simdjson::UNCLOSED_STRING:
      return DiagnoseUnbalanced(json, prefix);
    case simdjson::INCORRECT_TYPE:
      return InputError(prefix + "$",
                        "expected an object, found " + DescribeRoot(json));
    case simdjson::CAPACITY:
      throw IoError(fmt::format(
          "input of {} bytes exceeds simdjson's 4 GiB document limit",
          json.size()));
    default:
      return InputError(prefix + "$",
                        fmt::format("expected valid JSON, found {}",
                                    simdjson::error_message(error)));
  }
}

void RethrowWithUtf8First(std::string_view json, std::string_view prefix) {
  if (FirstInvalidUtf8(json) < json.size() && !HasUnclosedString(json) &&
      FirstUnescapedControl(json) == std::string_view::npos) {
    throw Utf8Error(json, std::string(prefix));
  }
  throw;
}

InputError DiagnoseUnbalanced(std::string_view json,
                              std::string_view prefix_view) {
  const std::string prefix(prefix_view);
  std::vector<Level> stack;
  bool root_done = false;
  // Whether the last token, and the one before it, was a member's name: a
  // ':' or ',' the input ends with is a separator only after the right one.
  bool last_was_key = false;
  bool before_last_was_key = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (IsWhitespace(c)) continue;
    before_last_was_key = last_was_key;
    last_was_key = false;
    if (root_done) {
      return InputError(prefix + "$",
                        "expected end of input after the root value, found " +
                            FoundAt(json, i));
    }
    switch (c) {
      case '"': {
        const std::size_t end = StringEnd(json, i);
        if (end >= json.size()) {
          return InputError(prefix + PathOf(stack),
                            "expected a closing '\"', found end of input "
                            "(truncated string)");
        }
        if (!stack.empty() && !stack.back().is_array &&
            stack.back().expect_key) {
          stack.back().key = json.substr(i + 1, end - i - 1);
          stack.back().has_key = true;
          stack.back().expect_key = false;
          last_was_key = true;
        }
        i = end;
        root_done = stack.empty();
        break;
      }
      case '[':
      case '{':
        if (stack.size() == kMaxJsonDepth) {
          return InputError(prefix + PathOf(stack),
                            TooDeepProblem(FoundAt(json, i)));
        }
        stack.push_back(Level{.is_array = c == '[', .key = {}});
        break;
      case ']':
      case '}':
        if (stack.empty() || stack.back().is_array != (c == ']')) {
          return InputError(prefix + PathOf(stack),
                            fmt::format("expected {}, found {}",
                                        stack.empty()           ? "a value"
                                        : stack.back().is_array ? "']'"
                                                                : "'}'",
                                        FoundAt(json, i)));
        }
        stack.pop_back();
        root_done = stack.empty();
        break;
      case ',':
        NextItem(stack);
        break;
      default:  // ':' or a scalar (number, true, false, null)
        while (i + 1 < json.size() && !IsDelimiter(json[i + 1])) ++i;
        root_done = stack.empty() && c != ':';
        break;
    }
  }
  if (stack.empty()) {
    return InputError(prefix + "$",
                      "expected a JSON object, found " + DescribeRoot(json));
  }
  // What the input ended after says what was to come: a value after a
  // name's ':' (or after ',' in an array, or after '['), a name after ','
  // in an object; anything else (a ':' after a value) keeps the general
  // "',' or '}'".
  std::string_view rest = json;
  while (!rest.empty() && IsWhitespace(rest.back())) rest.remove_suffix(1);
  const char last = rest.empty() ? '\0' : rest.back();
  const bool is_array = stack.back().is_array;
  std::string_view expected = is_array ? "',' or ']'" : "',' or '}'";
  if ((last == ':' && before_last_was_key) ||
      (is_array && (last == ',' || last == '['))) {
    expected = is_array && last == '[' ? "a value or ']'" : "a value";
  } else if (!is_array && last == ',' && !before_last_was_key) {
    expected = "a member name";
  } else if (!is_array && last == '{') {
    expected = "a member name or '}'";
  }
  return InputError(
      prefix + PathOf(stack),
      fmt::format("expected {}, found end of input (truncated)", expected));
}

}  // namespace kvprefix::json_diagnostics

namespace kvprefix {

bool NestsTooDeep(std::string_view json) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

InputError NestingError(std::string_view json) {
  // The walk meets the first container too deep before anything else it
  // could report in a document that is otherwise well formed.
  return json_diagnostics::DiagnoseUnbalanced(json, "");
}

}  // namespace kvprefix

namespace kvprefix::json_diagnostics {

InputError Unexpected(const Context& context, Value& element,
                      const std::string& location, std::string_view expected) {
  ondemand::value value;
  if (element.get(value) == simdjson::SUCCESS) {
    return InputError(context.Prefix() + location,
                      fmt::format("expected {}, found {}", expected,
                                  DescribeValue(context, value)));
  }
  // A syntax error where the element should be. An element follows '[' or
  // ',' and a member's value ':'; after anything else a value has just
  // ended, so the separator is what is missing ([1 2]), not another value.
  const char before = ByteBeforeCurrent(context);
  const bool separator_missing =
      before != '\0' &&
      std::string_view("[,:").find(before) == std::string_view::npos;
  return InputError(context.Prefix() + location,
                    fmt::format("expected {}, found {}",
                                separator_missing ? "',' or ']'" : expected,
                                FoundAtCurrent(context)));
}

InputError SyntaxError(const Context& context, const std::string& location,
                       std::string_view expected) {
  return InputError(
      context.Prefix() + location,
      fmt::format("expected {}, found {}", expected, FoundAtCurrent(context)));
}

InputError MemberSyntaxError(const Context& context,
                             const std::string& location) {
  // After ',' only a name may come ({"a":1,}), after '{' a name or '}'.
  const char before = ByteBeforeCurrent(context);
  return SyntaxError(context, location,
                     before == ','   ? "a member name"
                     : before == '{' ? "a member name or '}'"
                                     : "a member name, ',' or '}'");
}

InputError StringError(const Context& context, const char* quote,
                       const std::string& location) {
  const std::string_view body = StringBody(context.json, quote);
  const auto escape = FirstInvalidEscape(body);
  if (!escape) {
    return InputError(
        context.Prefix() + location,
        "expected a valid string, found " +
            FoundAt(context.json,
                    static_cast<std::size_t>(quote - context.json.data())));
  }
  const std::size_t offset =
      static_cast<std::size_t>(body.data() - context.json.data()) +
      escape->offset;
  const std::string_view shown = body.substr(escape->offset, escape->length);
  return InputError(
      context.Prefix() + location,
      fmt::format(
          "expected a valid escape, found '\\{}' at byte {}{}",
          EscapeForMessage(shown.substr(1)), offset,
          escape->why.empty() ? "" : fmt::format(" ({})", escape->why)));
}

InputError BadScalar(const Context& context, std::string_view token,
                     const std::string& location, std::string_view expected) {
  return InputError(
      context.Prefix() + location,
      fmt::format("expected {}, found '{}' at byte {}", expected,
                  Shortened(token), token.data() - context.json.data()));
}

InputError TooDeep(const Context& context, const char* bracket,
                   const std::string& location) {
  return InputError(context.Prefix() + location,
                    TooDeepProblem(FoundAt(
                        context.json, static_cast<std::size_t>(
                                          bracket - context.json.data()))));
}

InputError DuplicateMember(const Context& context, std::string_view name,
                           const JsonPath& object_path) {
  return InputError(
      context.Prefix() + MemberPath(name, object_path.str()),
      fmt::format("expected each member once, found \"{}\" a second time",
                  EscapeForMessage(name)));
}

InputError MissingMember(const Context& context, std::string_view name,
                         const JsonPath& object_path) {
  return InputError(
      context.Prefix() + object_path.str(),
      fmt::format("expected member \"{}\", found an object without it", name));
}

void ThrowNotInteger(const Context& context, Value& element, std::int64_t min,
                     std::int64_t max, const JsonPath& path) {
  throw Unexpected(context, element, path.str(),
                   fmt::format("an integer from {} to {}", min, max));
}

void CheckAtEnd(const Context& context) {
  const char* position = nullptr;
  if (context.document.current_location().get(position) == simdjson::SUCCESS) {
    throw InputError(
        context.Prefix() + "$",
        "expected end of input after the root object, found " +
            FoundAt(context.json,
                    static_cast<std::size_t>(position - context.json.data())));
  }
}

}  // namespace kvprefix::json_diagnostics
