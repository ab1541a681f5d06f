// Reading whole files for simdjson (see padded_file.h).
#include "io/padded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/input_error.h"

namespace kvprefix {
namespace {

[[noreturn]] void ThrowErrno(const std::string& path, const char* action) {
  throw ErrnoError(path, action);
}

// Closes a file descriptor on every exit path.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ > STDIN_FILENO) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string ReadPaddedFile(const std::string& path) {
  const bool is_stdin = path == "-";
  const FileDescriptor file(
      is_stdin ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const std::string name = is_stdin ? "<stdin>" : path;
  if (file.get() < 0) ThrowErrno(name, "open");
  struct stat info;
  if (fstat(file.get(), &info) != 0) ThrowErrno(name, "stat");
  if (S_ISDIR(info.st_mode)) {
    errno = EISDIR;
    ThrowErrno(name, "read");
  }
  // Regular files: one allocation of the right size (plus one spare byte, so
  // that the read that sees end of file needs no growth). Pipes: doubling.
  std::string text;
  text.reserve((S_ISREG(info.st_mode) ? info.st_size + 1 : 1 << 16) +
               simdjson::SIMDJSON_PADDING);
  std::size_t size = 0;
  while (true) {
    if (size == text.capacity() - simdjson::SIMDJSON_PADDING) {
      text.reserve(2 * text.capacity());
    }
    text.resize(text.capacity() - simdjson::SIMDJSON_PADDING);
    const ssize_t got =
        read(file.get(), text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno(name, "read");
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  text.resize(size);
  return text;
}

}  // namespace kvprefix
