// Progress lines on standard error for long runs, shown only when standard
// error is a terminal (never in pipes, logs or tests). One Progress per
// command run, used from one thread.
#ifndef KVPREFIX_CLI_PROGRESS_H_
#define KVPREFIX_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvprefix::cli {

class Progress {
 public:
  Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  // Prints "kvprefix: <message> (<seconds since start> s)" on its own line.
  void Note(std::string_view message);

  // Rewrites one line "kvprefix: <label> <done>" at most 5 times a second
  // (a streamed trace has no total until its end). Cheap enough to call
  // once per request.
  void Count(std::string_view label, std::uint64_t done);

  // Seconds since construction (also when not shown).
  double Seconds() const;

 private:
  void EndCountLine();

  bool enabled_;
  bool count_line_open_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_count_;
};

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_PROGRESS_H_
