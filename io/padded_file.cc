// Reading whole files for simdjson (see padded_file.h).
#include "io/padded_file.h"

#include <fmt/format.h>

#include "io/input_error.h"
#include "io/input_file.h"
#include "io/json_strings.h"
#include "kvprefix/huge_pages.h"

namespace kvprefix {
namespace {

// Reserves room for `bytes` bytes plus simdjson's padding in `text`, on
// transparent huge pages when that is large: the bytes are touched next
// (zeroed by resize, then written), and on 4 KiB pages a 250 MB input would
// take 60,000 page faults.
void ReservePadded(std::string& text, std::size_t bytes) {
  text.reserve(bytes + simdjson::SIMDJSON_PADDING);
  AdviseHugePages(text.data(), text.capacity());
}

}  // namespace

std::string ReadPaddedFile(const std::string& path) {
  InputFile file(path);
  // Regular files: one allocation of the right size (plus one spare byte, so
  // that the read that sees end of file needs no growth). Pipes: doubling.
  std::string text;
  ReservePadded(text, file.regular_size().value_or((1 << 16) - 1) + 1);
  std::size_t size = 0;
  while (true) {
    if (size == text.capacity() - simdjson::SIMDJSON_PADDING) {
      // simdjson parses no more than this; an input that never ends
      // (/dev/zero) stops here instead of where memory runs out.
      if (size > simdjson::SIMDJSON_MAXSIZE_BYTES) {
        throw IoError(fmt::format(
            "{}: more than {} bytes exceeds simdjson's 4 GiB document limit",
            EscapeForMessage(file.name(), 1024),
            simdjson::SIMDJSON_MAXSIZE_BYTES));
      }
      ReservePadded(text, 2 * text.capacity());
    }
    text.resize(text.capacity() - simdjson::SIMDJSON_PADDING);
    const std::size_t got = file.Read(text.data() + size, text.size() - size);
    if (got == 0) break;
    size += got;
  }
  text.resize(size);
  return text;
}

std::string PaddedCopy(std::string_view json) {
  std::string text;
  ReservePadded(text, json.size());
  text = json;
  return text;
}

}  // namespace kvprefix
