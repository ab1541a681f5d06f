// Opening and reading input files (see input_file.h).
#include "io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "io/input_error.h"

namespace kvprefix {

InputFile::Descriptor::~Descriptor() {
  if (fd > STDIN_FILENO) close(fd);
}

InputFile::InputFile(const std::string& path)
    : name_(path == "-" ? "<stdin>" : path),
      file_{path == "-" ? STDIN_FILENO
                        : open(path.c_str(), O_RDONLY | O_CLOEXEC)} {
  if (file_.fd < 0) throw ErrnoError(name_, "open");
  struct stat info;
  if (fstat(file_.fd, &info) != 0) throw ErrnoError(name_, "stat");
  if (S_ISDIR(info.st_mode)) {
    errno = EISDIR;
    throw ErrnoError(name_, "read");
  }
  if (S_ISREG(info.st_mode)) {
    regular_size_ = static_cast<std::size_t>(info.st_size);
  }
}

std::size_t InputFile::Read(char* data, std::size_t size) {
  for (;;) {
    const ssize_t got = read(file_.fd, data, size);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) throw ErrnoError(name_, "read");
  }
}

}  // namespace kvprefix
