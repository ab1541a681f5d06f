// Errors raised while reading input, carrying the place they were found.
#ifndef KVPREFIX_IO_INPUT_ERROR_H_
#define KVPREFIX_IO_INPUT_ERROR_H_

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvprefix {

// Bad input (SPEC §4, §6): the CLI maps it to exit status 2.
// what() is "<location>: <problem>", where location is a JSON path such as
// "$.requests[3][17]" (or "line 12: $.hash_ids[4]" for JSON Lines, or
// "byte 1234" when no path is known) and problem says what was expected and
// what was found. The file name is added by the caller, who knows it.
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& location, const std::string& problem)
      : std::runtime_error(location + ": " + problem),
        location_(location),
        problem_(problem) {}
  const std::string& location() const { return location_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string location_;
  std::string problem_;
};

// An input/output or resource failure (cannot open, read or write a file):
// the CLI maps it to exit status 1. what() names the file and the reason.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The IoError "<path>: cannot <action>: <strerror(errno)>", path escaped.
IoError ErrnoError(std::string_view path, std::string_view action);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_INPUT_ERROR_H_
