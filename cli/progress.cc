// Progress lines on a terminal (see progress.h).
#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace kvprefix::cli {

Progress::Progress()
    : enabled_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_count_(start_) {}

Progress::~Progress() { EndCountLine(); }

double Progress::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start_)
      .count();
}

void Progress::Note(std::string_view message) {
  if (!enabled_) return;
  EndCountLine();
  fmt::print(stderr, "kvprefix: {} ({:.1f} s)\n", message, Seconds());
}

void Progress::Count(std::string_view label, std::uint64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_count_ < std::chrono::milliseconds(200)) return;
  last_count_ = now;
  fmt::print(stderr, "\rkvprefix: {} {}", label, done);
  count_line_open_ = true;
}

void Progress::EndCountLine() {
  if (!count_line_open_) return;
  std::fputc('\n', stderr);
  count_line_open_ = false;
}

}  // namespace kvprefix::cli
