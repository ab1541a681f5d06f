// Running programs from tests (program_run.h).
#include "testing/program_run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kvprefix::test {

namespace fs = std::filesystem;

ProgramRun RunProgram(const std::string& program,
                      const std::vector<std::string>& args,
                      const ProgramOptions& options) {
  static int counter = 0;
  const fs::path base =
      fs::temp_directory_path() / ("kvprefix_run_" + std::to_string(getpid()) +
                                   "_" + std::to_string(counter++));
  const std::string out_path = base.string() + ".out";
  const std::string err_path = base.string() + ".err";
  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> strings = {program};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const rlimit limit{options.address_space_bytes, options.address_space_bytes};

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (options.address_space_bytes != 0 && setrlimit(RLIMIT_AS, &limit) != 0) {
      _exit(126);
    }
    const int in = open(options.stdin_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || dup2(in, STDIN_FILENO) < 0 ||
        dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) {
      _exit(126);
    }
    signal(SIGPIPE, SIG_DFL);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  ProgramRun run;
  if (pid < 0) {
    ADD_FAILURE() << "cannot fork: " << std::strerror(errno);
    return run;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (WIFEXITED(status)) run.status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.out = ReadTextFile(out_path);
  run.err = ReadTextFile(err_path);
  fs::remove(out_path);
  fs::remove(err_path);
  return run;
}

ScratchDir::ScratchDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info != nullptr ? info->name() : "test";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  dir_ = (fs::temp_directory_path() /
          ("kvprefix_" + name + "_" + std::to_string(getpid())))
             .string();
  fs::remove_all(dir_);
  fs::create_directories(dir_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::string ScratchDir::Path(const std::string& name) const {
  return (fs::path(dir_) / name).string();
}

void WriteTextFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace kvprefix::test
