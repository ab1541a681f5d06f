// Reading whole files for simdjson (see padded_file.h).
#include "io/padded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/input_error.h"
#include "kvprefix/huge_pages.h"

namespace kvprefix {
namespace {

// Reserves room for `bytes` bytes plus simdjson's padding in `text`, on
// transparent huge pages when that is large: the bytes are touched next
// (zeroed by resize, then written), and on 4 KiB pages a 250 MB input would
// take 60,000 page faults.
void ReservePadded(std::string& text, std::size_t bytes) {
  text.reserve(bytes + simdjson::SIMDJSON_PADDING);
  AdviseHugePages(text.data(), text.capacity());
}

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
  ReservePadded(text, S_ISREG(info.st_mode) ? info.st_size + 1 : 1 << 16);
  std::size_t size = 0;
  while (true) {
    if (size == text.capacity() - simdjson::SIMDJSON_PADDING) {
      ReservePadded(text, 2 * text.capacity());
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

std::string PaddedCopy(std::string_view json) {
  std::string text;
  ReservePadded(text, json.size());
  text = json;
  return text;
}

}  // namespace kvprefix
