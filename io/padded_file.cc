// Reading whole files for simdjson (see padded_file.h).
#include "io/padded_file.h"

#include "io/input_file.h"

namespace kvprefix {

std::string ReadPaddedFile(const std::string& path) {
  InputFile file(path);
  // Regular files: one allocation of the right size (plus one spare byte, so
  // that the read that sees end of file needs no growth). Pipes: doubling.
  std::string text;
  text.reserve(file.regular_size().value_or((1 << 16) - 1) + 1 +
               simdjson::SIMDJSON_PADDING);
  std::size_t size = 0;
  while (true) {
    if (size == text.capacity() - simdjson::SIMDJSON_PADDING) {
      text.reserve(2 * text.capacity());
    }
    text.resize(text.capacity() - simdjson::SIMDJSON_PADDING);
    const std::size_t got = file.Read(text.data() + size, text.size() - size);
    if (got == 0) break;
    size += got;
  }
  text.resize(size);
  return text;
}

}  // namespace kvprefix
