// UTF-8 checking and escaping (json_strings.h).
#include "io/json_strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace kvprefix {
namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 if there is none;
// its code point goes to *decoded when given.
std::size_t Utf8Length(std::string_view text, std::size_t i,
                       std::uint32_t* decoded = nullptr) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length;
  std::uint32_t code_point;
  std::uint32_t smallest;  // smaller code points are overlong encodings
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, smallest = 0x10000;
  } else {
    return lead < 0x80 ? 1 : 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  const bool valid = code_point >= smallest && code_point <= 0x10FFFF &&
                     (code_point < 0xD800 || code_point > 0xDFFF);
  if (valid && decoded != nullptr) *decoded = code_point;
  return valid ? length : 0;
}

// Characters beyond ASCII that act on a terminal or on the text's layout
// rather than show: the C1 controls (U+0080-U+009F; U+009B is a CSI on
// many terminals), the line and paragraph separators U+2028-U+2029 and the
// bidirectional embeddings, overrides and isolates U+202A-U+202E,
// U+2066-U+2069 (which reorder what follows; CVE-2021-42574).
bool IsInvisibleControl(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9F) || (code >= 0x2028 && code <= 0x202E) ||
         (code >= 0x2066 && code <= 0x2069);
}

// Appends text[0..max_bytes) escaped as in a JSON string; a byte that is not
// UTF-8 becomes `invalid` formatted with the byte; quotes and backslashes
// are escaped too unless `quotes` is false. Returns the bytes of `text`
// consumed.
std::size_t AppendEscaped(std::string_view text, std::size_t max_bytes,
                          fmt::format_string<unsigned> invalid,
                          std::string& out, bool quotes = true) {
  std::size_t i = 0;
  while (i < text.size() && i < max_bytes) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::uint32_t code = byte;
    const std::size_t length = Utf8Length(text, i, &code);
    if (length == 0) {
      out += fmt::format(invalid, unsigned{byte});
      ++i;
      continue;
    }
    if (length > 1) {
      if (IsInvisibleControl(code)) {
        out += fmt::format("\\u{:04x}", code);
      } else {
        out.append(text, i, length);
      }
    } else if (quotes && (byte == '"' || byte == '\\')) {
      out += '\\';
      out += static_cast<char>(byte);
    } else if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += static_cast<char>(byte);
    }
    i += length;
  }
  return i;
}

// The value of the 4 hex digits at text[i..i+4), or -1.
int HexQuad(std::string_view text, std::size_t i) {
  if (i + 4 > text.size()) return -1;
  int value = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    const char c = text[k];
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return -1;
    }
    value = value * 16 + digit;
  }
  return value;
}

}  // namespace

std::optional<InvalidEscape> FirstInvalidEscape(std::string_view body) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\') continue;
    if (i + 1 == body.size()) return InvalidEscape{i, 1, ""};
    const char kind = body[i + 1];
    if (std::string_view("\"\\/bfnrt").find(kind) != std::string_view::npos) {
      ++i;
      continue;
    }
    if (kind != 'u') return InvalidEscape{i, 2, ""};
    const int code = HexQuad(body, i + 2);
    if (code < 0) {
      return InvalidEscape{i, std::min<std::size_t>(6, body.size() - i),
                           "\\u not followed by 4 hex digits"};
    }
    if (code >= 0xDC00 && code <= 0xDFFF) {
      return InvalidEscape{i, 6,
                           "a low surrogate without a high one before it"};
    }
    if (code >= 0xD800 && code <= 0xDBFF) {
      const int low =
          body.substr(i + 6, 2) == "\\u" ? HexQuad(body, i + 8) : -1;
      if (low < 0xDC00 || low > 0xDFFF) {
        return InvalidEscape{i, 6,
                             "a high surrogate without a low one after it"};
      }
      i += 6;
    }
    i += 5;
  }
  return std::nullopt;
}

std::size_t FirstInvalidUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = Utf8Length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string EscapeForMessage(std::string_view text, std::size_t max_bytes) {
  std::string out;
  if (AppendEscaped(text, max_bytes, "\\x{:02X}", out) < text.size()) {
    out += "...";
  }
  return out;
}

std::string EscapeControlCharacters(std::string_view text) {
  std::string out;
  AppendEscaped(text, text.size(), "\\x{:02X}", out, /*quotes=*/false);
  return out;
}

void AppendJsonString(std::string_view text, std::string& out) {
  out += '"';
  AppendEscaped(text, text.size(), "\\ufffd", out);
  out += '"';
}

}  // namespace kvprefix
