// Internal to io/: the lines of a JSON Lines file read a buffer at a time,
// each with the padding simdjson needs after its last byte, so that a trace
// of any length is parsed in memory bounded by its longest line.
#ifndef KVPREFIX_IO_PADDED_LINES_H_
#define KVPREFIX_IO_PADDED_LINES_H_

#include <simdjson.h>

#include <cstddef>
#include <string>

#include "io/input_file.h"

namespace kvprefix {

// The longest line a reader takes, in bytes: far beyond any real trace line
// (a Mooncake request of a million tokens is about 20 KB), and a bound on
// memory for input that never ends a line (/dev/zero, a binary file).
inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 28;

// Reads `path` ("-" is standard input) line by line. Not thread-safe.
class PaddedLineReader {
 public:
  // Opens the file (throws IoError as InputFile does). `buffer_bytes` (>= 1)
  // is the first size of the buffer; it doubles while a line does not fit.
  explicit PaddedLineReader(const std::string& path,
                            std::size_t buffer_bytes = std::size_t{1} << 18);

  // Sets `line` to the next line, without its '\n' (a last line without one
  // counts too), and returns true; returns false at the end of the input.
  // The view is valid until the next call; at least SIMDJSON_PADDING
  // readable bytes follow it. Throws IoError if the file cannot be read,
  // InputError("line N", ...) for a line of kMaxLineBytes bytes or more.
  // O(line bytes) amortized; memory O(buffer_bytes + longest line).
  bool Next(simdjson::padded_string_view& line);

  // The 1-based number of the line Next gave last (0 before the first).
  std::size_t line_number() const { return line_number_; }

 private:
  // Moves the unfinished line to the front, grows the buffer if that line
  // fills it, and reads more; sets at_end_ when the input has no more.
  void Refill();

  InputFile file_;
  // The bytes read and not yet given out are [begin_, end_); the last
  // SIMDJSON_PADDING bytes of the buffer are never filled, so that every
  // line has its padding.
  std::string buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t searched_ = 0;  // [begin_, searched_) holds no '\n'
  bool at_end_ = false;
  std::size_t line_number_ = 0;
};

}  // namespace kvprefix

#endif  // KVPREFIX_IO_PADDED_LINES_H_
