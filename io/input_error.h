// Errors raised while reading input, carrying the place they were found.
#ifndef KVPREFIX_IO_INPUT_ERROR_H_
#define KVPREFIX_IO_INPUT_ERROR_H_

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kvprefix/types.h"

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

// A resource that ran out (SPEC §6: exit status 1, like IoError): what()
// says which and what was being done, "out of memory while reading
// trace.jsonl", so that the one line the CLI prints names both.
class ResourceError : public IoError {
 public:
  using IoError::IoError;
};

// Calls work() and returns what it returns, turning a resource failure into
// a ResourceError naming `doing` ("reading trace.jsonl", "matching"):
// std::bad_alloc (and simdjson's MEMALLOC, which io's readers throw as
// std::bad_alloc) becomes "out of memory while <doing>"; an engine's
// CapacityError "<its message> while <doing>"; any other std::length_error
// (a container asked for more than it can hold) "out of memory while
// <doing> (<its message>)". A ResourceError from a nested WhileDoing passes
// unchanged: the innermost description wins.
template <typename Work>
decltype(auto) WhileDoing(std::string_view doing, Work&& work) {
  try {
    return work();
  } catch (const std::bad_alloc&) {
    throw ResourceError("out of memory while " + std::string(doing));
  } catch (const CapacityError& error) {
    throw ResourceError(std::string(error.what()) + " while " +
                        std::string(doing));
  } catch (const std::length_error& error) {
    throw ResourceError("out of memory while " + std::string(doing) + " (" +
                        error.what() + ")");
  }
}

}  // namespace kvprefix

#endif  // KVPREFIX_IO_INPUT_ERROR_H_
