// Reading JSON Lines a buffer at a time (see padded_lines.h).
#include "io/padded_lines.h"

#include <fmt/format.h>

#include <cstring>

#include "io/input_error.h"

namespace kvprefix {

PaddedLineReader::PaddedLineReader(const std::string& path,
                                   std::size_t buffer_bytes)
    : file_(path), buffer_(buffer_bytes + simdjson::SIMDJSON_PADDING, '\0') {}

bool PaddedLineReader::Next(simdjson::padded_string_view& line) {
  for (;;) {
    const auto* newline = static_cast<const char*>(
        std::memchr(buffer_.data() + searched_, '\n', end_ - searched_));
    std::size_t line_end = end_;
    if (newline != nullptr) {
      line_end = static_cast<std::size_t>(newline - buffer_.data());
    } else if (!at_end_ || begin_ == end_) {
      searched_ = end_;
      if (at_end_) return false;
      Refill();
      continue;
    }
    line = simdjson::padded_string_view(
        buffer_.data() + begin_, line_end - begin_, buffer_.size() - begin_);
    begin_ = line_end == end_ ? end_ : line_end + 1;
    searched_ = begin_;
    ++line_number_;
    return true;
  }
}

void PaddedLineReader::Refill() {
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  searched_ -= begin_;
  begin_ = 0;
  const std::size_t room = buffer_.size() - simdjson::SIMDJSON_PADDING;
  if (end_ == room) {
    // The buffer holds one unfinished line and nothing else.
    if (room >= kMaxLineBytes) {
      throw InputError(
          fmt::format("line {}", line_number_ + 1),
          fmt::format("{} bytes or more without a newline (a line may hold "
                      "fewer)",
                      kMaxLineBytes));
    }
    buffer_.resize(2 * room + simdjson::SIMDJSON_PADDING);
  }
  const std::size_t got =
      file_.Read(buffer_.data() + end_,
                 buffer_.size() - simdjson::SIMDJSON_PADDING - end_);
  if (got == 0) {
    at_end_ = true;
  } else {
    end_ += got;
  }
}

}  // namespace kvprefix
