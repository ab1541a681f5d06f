// Internal to io/: an input file, or standard input, opened once and read in
// pieces, with the errors every reader reports the same way.
#ifndef KVPREFIX_IO_INPUT_FILE_H_
#define KVPREFIX_IO_INPUT_FILE_H_

#include <cstddef>
#include <optional>
#include <string>

namespace kvprefix {

// Owns the file descriptor (standard input is read, never closed). Not
// thread-safe; movable neither (one owner reads it to the end).
class InputFile {
 public:
  // Opens `path` ("-" is standard input, named "<stdin>" in errors). Throws
  // IoError naming the path and the reason (errno text) if it cannot be
  // opened or is a folder.
  explicit InputFile(const std::string& path);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The path as errors name it ("<stdin>" for "-"), not yet escaped.
  const std::string& name() const { return name_; }

  // The size in bytes of a regular file; nullopt for a pipe or a terminal,
  // whose size is known only at its end.
  std::optional<std::size_t> regular_size() const { return regular_size_; }

  // Reads up to `size` bytes into `data` and returns how many it read: 0
  // only at the end of the input (when `size` > 0). Retries when a signal
  // interrupts the read. Throws IoError naming the path and the reason.
  std::size_t Read(char* data, std::size_t size);

 private:
  // Closes the descriptor, also when the constructor throws after opening.
  struct Descriptor {
    int fd;
    ~Descriptor();
  };

  std::string name_;  // the path as errors name it
  Descriptor file_;
  std::optional<std::size_t> regular_size_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_IO_INPUT_FILE_H_
