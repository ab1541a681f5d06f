// Running a program (normally the built `kvprefix`) as a child process and
// capturing what it does: exit status or signal, standard output and error,
// wall time. Optionally under an address-space limit (RLIMIT_AS, set in the
// child before exec), so that tests can make any subcommand run out of
// memory on an input of modest size.
#ifndef KVPREFIX_TESTING_PROGRAM_RUN_H_
#define KVPREFIX_TESTING_PROGRAM_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kvprefix::test {

struct ProgramRun {
  int status = -1;  // exit status, or -1 when killed by a signal
  int signal = 0;   // the signal that killed it, or 0
  std::string out;  // standard output
  std::string err;  // standard error
  double seconds = 0;
};

struct ProgramOptions {
  std::string stdin_path = "/dev/null";
  // RLIMIT_AS of the child in bytes; 0: unchanged.
  std::uint64_t address_space_bytes = 0;
};

// Runs `program` with `args` (argv[1...]) and SIGPIPE at its default
// action; stdout and stderr go through temporary files. Not thread-safe
// (fork from a single-threaded test). A child that cannot be set up exits
// with status 126, one that cannot be started (exec fails, or the dynamic
// loader cannot map a library under the limit) with 127; fork failing
// fails the current test (ADD_FAILURE).
ProgramRun RunProgram(const std::string& program,
                      const std::vector<std::string>& args,
                      const ProgramOptions& options = {});

// A folder for one test's files, removed (with its contents) on
// destruction: <tmp>/kvprefix_<test name>_<pid>, where <tmp> is
// std::filesystem::temp_directory_path() ($TMPDIR, else /tmp) and a '/' of a
// parametrised test's name becomes '_' (so the folder is one level deep and
// its removal leaves nothing behind). Every test file that writes files
// writes them here; ctest checks that the tests leave $TMPDIR empty.
class ScratchDir {
 public:
  ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  // The folder itself.
  const std::string& path() const { return dir_; }
  // The path of `name` inside the folder.
  std::string Path(const std::string& name) const;

 private:
  std::string dir_;
};

// Writes `contents` to `path`, replacing it.
void WriteTextFile(const std::string& path, const std::string& contents);

// The contents of `path` ("" if it cannot be read).
std::string ReadTextFile(const std::string& path);

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_PROGRAM_RUN_H_
