// Internal to io/: reading a whole file (or standard input) into memory with
// the zero-copy padding simdjson needs after the last byte.
#ifndef KVPREFIX_IO_PADDED_FILE_H_
#define KVPREFIX_IO_PADDED_FILE_H_

#include <simdjson.h>

#include <string>
#include <string_view>

namespace kvprefix {

// The bytes of `path` ("-" is standard input) in a string whose capacity
// exceeds its size by at least simdjson::SIMDJSON_PADDING, so that
// simdjson::padded_string_view(data, size, capacity) can parse it in place.
// Large files are read into transparent huge pages
// (kvprefix/huge_pages.h). Throws IoError naming the path and the reason
// (errno text). O(bytes).
std::string ReadPaddedFile(const std::string& path);

// A copy of `json` padded as ReadPaddedFile's result is (and on huge pages
// when large), for parsing text that is not in a file. Throws
// std::bad_alloc. O(bytes).
std::string PaddedCopy(std::string_view json);

// A padded view of the whole of `text` (from ReadPaddedFile).
inline simdjson::padded_string_view PaddedView(const std::string& text) {
  return simdjson::padded_string_view(text.data(), text.size(),
                                      text.capacity());
}

}  // namespace kvprefix

#endif  // KVPREFIX_IO_PADDED_FILE_H_
