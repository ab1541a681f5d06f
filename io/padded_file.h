// Internal to io/: reading a whole file (or standard input) into memory with
// the zero-copy padding simdjson needs after the last byte.
#ifndef KVPREFIX_IO_PADDED_FILE_H_
#define KVPREFIX_IO_PADDED_FILE_H_

#include <simdjson.h>

#include <string>

namespace kvprefix {

// The bytes of `path` ("-" is standard input) in a string whose capacity
// exceeds its size by at least simdjson::SIMDJSON_PADDING, so that
// simdjson::padded_string_view(data, size, capacity) can parse it in place.
// Throws IoError naming the path and the reason (errno text). O(bytes).
std::string ReadPaddedFile(const std::string& path);

// A padded view of the whole of `text` (from ReadPaddedFile).
inline simdjson::padded_string_view PaddedView(const std::string& text) {
  return simdjson::padded_string_view(text.data(), text.size(),
                                      text.capacity());
}

}  // namespace kvprefix

#endif  // KVPREFIX_IO_PADDED_FILE_H_
