// Errors raised while reading input (input_error.h).
#include "io/input_error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "io/json_strings.h"

namespace kvprefix {

IoError ErrnoError(std::string_view path, std::string_view action) {
  return IoError(fmt::format("{}: cannot {}: {}", EscapeForMessage(path, 1024),
                             action, std::strerror(errno)));
}

}  // namespace kvprefix
