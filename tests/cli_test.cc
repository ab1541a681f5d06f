// End-to-end tests of the `kvprefix` tool: runs the built binary
// (KVPREFIX_CLI) and checks stdout byte for byte, stderr and the exit status
// (SPEC §5, §6): the seed examples, every shared case with every engine,
// every kind of bad input, -o atomicity, usage errors, and the trace commands.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "io/case_file.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "kvprefix/cache.h"
#include "testing/bad_inputs.h"
#include "testing/program_run.h"
#include "testing/seed_examples.h"
#include "testing/shared_cases.h"

extern char** environ;

namespace kvprefix {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct RunResult {
  int status = -1;  // exit status, or -1 if the program did not exit normally
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

// A fresh folder per test, removed afterwards.
class CliTest : public ::testing::Test {
 protected:
  // Starts kvprefix with `args`, `actions` (redirections) and SIGPIPE,
  // SIGXFSZ and `default_signals` at their default action (as from an
  // interactive shell, whatever this process ignores); returns its pid, or
  // -1.
  // Runs the tool with stdout on a pipe nobody reads (every write fails
  // with EPIPE) and stderr into the file `err_path`, or onto that pipe too
  // when it is empty. Returns the exit status; -1, with a test failure, if
  // it could not start or a signal ended it.
  static int RunIntoClosedPipe(const std::vector<std::string>& args,
                               const std::string& err_path) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
      ADD_FAILURE() << "pipe failed";
      return -1;
    }
    close(pipe_fds[0]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    if (err_path.empty()) {
      posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
    } else {
      posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                       err_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    const pid_t pid = Spawn(args, actions);
    close(pipe_fds[1]);
    posix_spawn_file_actions_destroy(&actions);
    if (pid <= 0) {
      ADD_FAILURE() << "cannot start " << KVPREFIX_CLI;
      return -1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) {
      ADD_FAILURE() << "killed by signal " << WTERMSIG(status);
      return -1;
    }
    return WEXITSTATUS(status);
  }

  static pid_t Spawn(const std::vector<std::string>& args,
                     const posix_spawn_file_actions_t& actions,
                     std::initializer_list<int> default_signals = {}) {
    std::vector<std::string> argv_strings = {KVPREFIX_CLI};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGXFSZ);
    for (const int signal_number : default_signals) {
      sigaddset(&defaults, signal_number);
    }
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    if (posix_spawn(&pid, KVPREFIX_CLI, &actions, &attributes, argv.data(),
                    environ) != 0) {
      pid = -1;
    }
    posix_spawnattr_destroy(&attributes);
    return pid;
  }

  // Runs kvprefix with `args`; standard input from `stdin_path` (or
  // /dev/null); captures stdout and stderr through files.
  RunResult Run(const std::vector<std::string>& args,
                const std::string& stdin_path = "/dev/null") {
    const std::string out_path = (dir_ / "stdout").string();
    const std::string err_path = (dir_ / "stderr").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_path.c_str(),
                                     O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    RunResult result;
    const pid_t pid = Spawn(args, actions);
    if (pid > 0) {
      int wait_status = 0;
      waitpid(pid, &wait_status, 0);
      if (WIFEXITED(wait_status)) result.status = WEXITSTATUS(wait_status);
    }
    posix_spawn_file_actions_destroy(&actions);
    result.out = ReadFile(out_path);
    result.err = ReadFile(err_path);
    fs::remove(out_path);
    fs::remove(err_path);
    return result;
  }

  // A SPEC §4 input of `count` requests of the 1000 seven-digit tokens
  // 1000000..1000999 and no cached sequence: about 8 KB of output each.
  static std::string RequestsOfSevenDigitTokens(int count) {
    std::string request = "[";
    for (int token = 1000000; token < 1001000; ++token) {
      request += std::to_string(token) + ",";
    }
    request.back() = ']';
    std::string json = R"({"cached_sequences":[],"requests":[)";
    for (int i = 0; i < count; ++i) json += request + ",";
    json.back() = ']';
    return json + "}";
  }

  // Sends `signal_number` to `match -o` once its temporary file exists, up
  // to 5 times until one lands before the write ends; expects the process
  // killed by that signal and neither a partial output nor a `.o.json.XXXXXX`
  // file left. Core dumps are off for the time (SIGQUIT, SIGXCPU).
  void ExpectSignalDuringTheWriteLeavesNoTemporaryFile(int signal_number) {
    // 3000 requests of 1000 seven-digit tokens: ~24 MB of output.
    if (!fs::exists(Path("in.json"))) {
      WriteFile(Path("in.json"), RequestsOfSevenDigitTokens(3000));
    }
    const fs::path out_dir = dir_ / "out";
    fs::create_directories(out_dir);
    const auto temporary_exists = [&] {
      for (const auto& entry : fs::directory_iterator(out_dir)) {
        if (entry.path().filename().string().starts_with(".o.json.")) {
          return true;
        }
      }
      return false;
    };
    rlimit core = {};
    ASSERT_EQ(getrlimit(RLIMIT_CORE, &core), 0);
    rlimit no_core = core;
    no_core.rlim_cur = 0;
    ASSERT_EQ(setrlimit(RLIMIT_CORE, &no_core), 0);  // inherited by the child
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
      posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
    }
    int caught_mid_write = 0;
    for (int attempt = 0; attempt < 5 && caught_mid_write == 0; ++attempt) {
      const pid_t pid =
          Spawn({"match", Path("in.json"), "-o", (out_dir / "o.json").string()},
                actions, {signal_number});
      ASSERT_GT(pid, 0);
      int status = 0;
      bool exited = false;
      while (!temporary_exists()) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
          exited = true;
          break;
        }
      }
      if (!exited) {
        kill(pid, signal_number);
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status) && WTERMSIG(status) == signal_number &&
            !fs::exists(out_dir / "o.json")) {
          ++caught_mid_write;
        }
      }
      EXPECT_FALSE(temporary_exists())
          << strsignal(signal_number) << ", attempt " << attempt;
      fs::remove(out_dir / "o.json");
    }
    posix_spawn_file_actions_destroy(&actions);
    setrlimit(RLIMIT_CORE, &core);
    EXPECT_EQ(caught_mid_write, 1)
        << "no " << strsignal(signal_number) << " landed during the write";
  }

  std::string Path(const std::string& name) const {
    return (dir_ / name).string();
  }

  std::vector<std::string> EngineNamesFromCli() {
    const RunResult result = Run({"engines"});
    EXPECT_EQ(result.status, 0);
    std::vector<std::string> names;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
      names.push_back(line.substr(0, line.find(' ')));
    }
    return names;
  }

  const test::ScratchDir scratch_;
  const fs::path dir_{scratch_.path()};
};

TEST_F(CliTest, SeedExamplesAreByteExactFromFileAndStdin) {
  const auto examples =
      test::LoadSeedExamples(KVPREFIX_SOURCE_DIR "/docs/seed");
  ASSERT_EQ(examples.size(), 3u);
  for (const auto& example : examples) {
    WriteFile(Path("in.json"), example.input_json);
    for (const RunResult& result :
         {Run({"match", Path("in.json")}), Run({"match"}, Path("in.json")),
          Run({"match", "-"}, Path("in.json"))}) {
      EXPECT_EQ(result.status, 0) << result.err;
      EXPECT_EQ(result.out, example.output_line);
      EXPECT_EQ(result.err, "");
    }
  }
}

TEST_F(CliTest, EnginesListsTheRegistryAndMarksTheDefault) {
  std::string expected;
  for (const std::string_view name : EngineNames()) {
    expected += std::string(name) +
                (name == DefaultEngineName() ? " (default)" : "") + "\n";
  }
  const RunResult result = Run({"engines"});
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.out, expected);
  EXPECT_THAT(result.out, HasSubstr("reference"));
}

// `kvprefix policies`: kEvictionPolicies in its order, the default of
// CacheOptions marked, and in the help each policy's victim.
TEST_F(CliTest, PoliciesListsThePolicyListAndMarksTheDefault) {
  std::string expected;
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    expected += std::string(entry.name) +
                (entry.policy == CacheOptions{}.policy ? " (default)" : "") +
                "\n";
  }
  const RunResult result = Run({"policies"});
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.out, expected);
  EXPECT_THAT(result.out, StartsWith("lru (default)\nfifo\nlfu\n"));
  const RunResult help = Run({"policies", "--help"});
  EXPECT_THAT(help.out,
              HasSubstr("SPEC §8 step 4: lru evicts the least recently used "
                        "leaf; fifo evicts the oldest created leaf; lfu "
                        "evicts the least frequently used leaf (the least "
                        "recently used among equals)."));
  const RunResult to_file = Run({"policies", "-o", Path("policies.txt")});
  EXPECT_EQ(to_file.status, 0);
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(ReadFile(Path("policies.txt")), expected);
}

TEST_F(CliTest, SharedCasesAreExactForEveryEngine) {
  const auto cases = test::LoadSharedCases();
  ASSERT_GE(cases.size(), 19u);
  const auto engines = EngineNamesFromCli();
  ASSERT_FALSE(engines.empty());
  for (const auto& shared : cases) {
    std::string json;  // only the two SPEC §4 members
    AppendBatchInputJson(shared.input, json);
    WriteFile(Path("in.json"), json);
    for (const std::string& engine : engines) {
      const RunResult result =
          Run({"match", Path("in.json"), "--engine", engine});
      EXPECT_EQ(result.status, 0) << engine << " " << shared.name;
      EXPECT_TRUE(result.out == test::ExpectedOutput(shared))
          << engine << " " << shared.name << " (" << shared.source << ")";
    }
  }
}

TEST_F(CliTest, OutputOptionWritesTheFileAndNothingOnStdout) {
  WriteFile(Path("in.json"),
            R"({"cached_sequences":[[7],[7]],"requests":[[7,8]]})");
  const RunResult result =
      Run({"match", Path("in.json"), "-o", Path("out.json")});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(
      ReadFile(Path("out.json")),
      R"({"matches":[{"matched_length":1,"cache_node":1,"uncached_suffix":[8]}]})"
      "\n");
}

class CliBadInputTest : public CliTest,
                        public ::testing::WithParamInterface<test::BadInput> {};

TEST_P(CliBadInputTest, ExitsTwoWithOneLineNamingFileAndLocation) {
  const test::BadInput& bad = GetParam();
  const std::string input = Path("bad.json");
  WriteFile(input, bad.json);
  const RunResult result = Run({"match", input});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err,
              StartsWith("kvprefix: " + input + ": " + bad.location + ": "));
  EXPECT_THAT(result.err, HasSubstr(bad.problem));
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
      << result.err;
  // From standard input the file is named <stdin>.
  const RunResult piped = Run({"match"}, input);
  EXPECT_EQ(piped.status, 2);
  EXPECT_THAT(piped.err, StartsWith("kvprefix: <stdin>: " + bad.location));
}

TEST_P(CliBadInputTest, LeavesNoOutputFileAndKeepsAnExistingOne) {
  const std::string input = Path("bad.json");
  WriteFile(input, GetParam().json);
  EXPECT_EQ(Run({"match", input, "-o", Path("new.json")}).status, 2);
  EXPECT_FALSE(fs::exists(Path("new.json")));
  WriteFile(Path("old.json"), "previous contents\n");
  EXPECT_EQ(Run({"match", input, "-o", Path("old.json")}).status, 2);
  EXPECT_EQ(ReadFile(Path("old.json")), "previous contents\n");
  // Only the input and the untouched old output remain: no temporary files.
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

INSTANTIATE_TEST_SUITE_P(EveryKind, CliBadInputTest,
                         ::testing::ValuesIn(test::BadInputs()),
                         [](const auto& info) { return info.param.name; });

TEST_F(CliTest, UnknownEngineIsBadUsage) {
  WriteFile(Path("in.json"), R"({"cached_sequences":[],"requests":[]})");
  const RunResult result =
      Run({"match", Path("in.json"), "--engine", "no-such-engine"});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, HasSubstr("no-such-engine"));
}

TEST_F(CliTest, UnreadableInputIsAnIoFailure) {
  const RunResult missing = Run({"match", Path("missing.json")});
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_THAT(missing.err, HasSubstr(Path("missing.json")));
  EXPECT_EQ(Run({"match", dir_.string()}).status, 1);  // a folder
  EXPECT_EQ(Run({"replay", Path("missing.jsonl")}).status, 1);
}

TEST_F(CliTest, UnwritableOutputIsAnIoFailure) {
  WriteFile(Path("in.json"), R"({"cached_sequences":[],"requests":[]})");
  const RunResult result =
      Run({"match", Path("in.json"), "-o", Path("no-folder/out.json")});
  EXPECT_EQ(result.status, 1);
  EXPECT_THAT(result.err, HasSubstr("no-folder/out.json"));
}

TEST_F(CliTest, HelpOfEverySubcommandExitsZero) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"match", "--help"},
                                             {"replay", "--help"},
                                             {"convert", "--help"},
                                             {"convert", "mooncake", "--help"},
                                             {"engines", "--help"},
                                             {"policies", "--help"},
                                             {"verify", "--help"}}) {
    const RunResult result = Run(args);
    EXPECT_EQ(result.status, 0) << args[0];
    EXPECT_THAT(result.out, HasSubstr("Usage")) << args[0];
  }
}

// verify's help names both protocols and both comparisons.
TEST_F(CliTest, VerifyHelpDescribesProtocolAndCompare) {
  const RunResult result = Run({"verify", "--help"});
  EXPECT_EQ(result.status, 0);
  for (const char* text :
       {"--protocol", "process (one process per input", "lines (one long-lived",
        "--compare", "lengths (matched_length and uncached_suffix only"}) {
    EXPECT_THAT(result.out, HasSubstr(text)) << text;
  }
}

TEST_F(CliTest, BadUsageExitsTwo) {
  WriteFile(Path("t.jsonl"), R"({"input_length":1,"hash_ids":[1]})"
                             "\n");
  WriteFile(Path("in.json"), R"({"cached_sequences":[],"requests":[]})");
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {},
           {"no-such-command"},
           {"match", "--no-such-option"},
           {"replay"},
           {"replay", Path("t.jsonl"), "--mode", "bytes"},
           {"replay", Path("t.jsonl"), "--vocab", "0"},
           {"convert", "mooncake", Path("t.jsonl")},
           {"convert", "mooncake", Path("t.jsonl"), "--cached-fraction", "1.5"},
           {"match", Path("in.json"), "-o", ""},
           {"verify", "--cmd", "true", "--protocol", "pipes", "--runs", "1"},
           {"verify", "--engines", "all", "--compare", "ids", "--runs", "1"},
           {"verify", "--engines", "all", "--protocol", "lines", "--runs", "1"},
       }) {
    const RunResult result = Run(args);
    EXPECT_EQ(result.status, 2) << (args.empty() ? "" : args.back());
    EXPECT_EQ(result.out, "");
    EXPECT_THAT(result.err, StartsWith("kvprefix: "));
  }
}

// A SIGTERM while -o's temporary file exists removes it: the run leaves
// neither a partial output nor a `.o.json.XXXXXX` file. The test waits for the
// temporary file to appear, then sends the signal.
TEST_F(CliTest, SignalDuringTheWriteLeavesNoTemporaryFile) {
  ExpectSignalDuringTheWriteLeavesNoTemporaryFile(SIGTERM);
}

// The other signals whose default action ends the process did not remove
// the temporary file (only SIGINT, SIGTERM and SIGHUP did); SIGQUIT and
// SIGXCPU still end it by their default action, a core dump.
TEST_F(CliTest, EverySignalThatEndsTheRunLeavesNoTemporaryFile) {
  for (const int signal_number : {SIGINT, SIGHUP, SIGQUIT, SIGXCPU, SIGALRM,
                                  SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF}) {
    ExpectSignalDuringTheWriteLeavesNoTemporaryFile(signal_number);
  }
}

// Past the file size limit (ulimit -f) SIGXFSZ killed the tool and left the
// temporary file; now the write fails: exit 1, "File too large", nothing
// left in the folder but the input.
TEST_F(CliTest, FileSizeLimitIsAWriteErrorAndLeavesNoTemporaryFile) {
  // 200 requests of 1000 seven-digit tokens: ~1.6 MB of output.
  const fs::path out_dir = dir_ / "out";
  fs::create_directories(out_dir);
  WriteFile((out_dir / "in.json").string(), RequestsOfSevenDigitTokens(200));
  rlimit limit = {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &limit), 0);
  rlimit small = limit;
  small.rlim_cur = 64 * 1024;  // inherited by the child, as from ulimit -f 64
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const RunResult result = Run({"match", (out_dir / "in.json").string(), "-o",
                                (out_dir / "o.json").string()});
  setrlimit(RLIMIT_FSIZE, &limit);
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "kvprefix: " + (out_dir / "o.json").string() +
                            ": cannot write: File too large\n");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(out_dir)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(left, ::testing::ElementsAre("in.json"));
}

// `kvprefix match ... | head -c 10`: a closed pipe is a write failure
// (exit 1, one line), not death by SIGPIPE.
TEST_F(CliTest, ClosedStdoutPipeIsAnIoFailure) {
  WriteFile(Path("in.json"), R"({"cached_sequences":[],"requests":[[1]]})");
  const std::string err_path = Path("stderr");
  EXPECT_EQ(RunIntoClosedPipe({"match", Path("in.json")}, err_path), 1);
  const std::string err = ReadFile(err_path);
  EXPECT_THAT(err, HasSubstr("Broken pipe"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

// Both outputs closed (`kvprefix ... 2>&1 | head -1` once head exits): the
// failure cannot be told, and the status still says it (former bug: the
// report of the write error threw again, so the tool aborted: status 134).
TEST_F(CliTest, ClosedStdoutAndStderrIsStillAnIoFailure) {
  EXPECT_EQ(
      RunIntoClosedPipe({"verify", "--engines", "all", "--runs", "3"}, ""), 1);
}

// Everything printed through stdio must reach stdout: verify's report,
// engines, --help and --version once exited 0 onto a full disk (/dev/full).
TEST_F(CliTest, FullStdoutIsAnIoFailureForEveryCommand) {
  const std::string err_path = Path("stderr");
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"verify", "--engines", "all", "--runs", "3", "--seed", "1"},
           {"engines"},
           {"policies"},
           {"--version"},
           {"--help"},
           {"match", "--help"}}) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/full",
                                     O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const pid_t pid = Spawn(args, actions);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_GT(pid, 0);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << args[0];
    EXPECT_EQ(WEXITSTATUS(status), 1) << args[0];
    EXPECT_EQ(ReadFile(err_path),
              "kvprefix: <stdout>: cannot write: No space left on device\n")
        << args[0];
  }
}

// Three requests of 1, 2 and 3 blocks: [1], [1,2] and [1,2,3] (partial last
// blocks), so replay matches 0, then 1, then 2 blocks.
constexpr char kTinyTrace[] =
    R"({"timestamp":0,"input_length":100,"output_length":5,"hash_ids":[1]})"
    "\n"
    R"({"timestamp":1,"input_length":600,"hash_ids":[1,2]})"
    "\n\n"
    R"({"hash_ids":[1,2,3],"input_length":1025})"
    "\n";

TEST_F(CliTest, ReplayBlockModePrintsTheSummaryAndMatches) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult result = Run({"replay", Path("t.jsonl"), "--engine",
                                "reference", "--matches", Path("m.jsonl")});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(
      result.out,
      StartsWith(R"({"engine":"reference","mode":"block","vocab":128256,)"
                 R"("capacity":null,"policy":"lru","page_size":1,)"
                 R"("model":"spec","match_limit":"all",)"
                 R"("requests":3,"request_tokens":6,"matched_tokens":3,)"
                 R"("hit_ratio":0.5,"nodes":3,"peak_nodes":3,"evictions":0,)"
                 R"("memory_bytes":)"));
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 1);
  EXPECT_EQ(
      ReadFile(Path("m.jsonl")),
      R"({"request":0,"request_length":1,"matched_length":0,"cache_node":0})"
      "\n"
      R"({"request":1,"request_length":2,"matched_length":1,"cache_node":1})"
      "\n"
      R"({"request":2,"request_length":3,"matched_length":2,"cache_node":2})"
      "\n");
}

TEST_F(CliTest, ReplayTokenModeCountsEveryToken) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult result =
      Run({"replay", Path("t.jsonl"), "--mode", "token", "--vocab", "1000"});
  EXPECT_EQ(result.status, 0) << result.err;
  // Tokens: 100, 600 and 1025; matched: 0, then 100 (the first request is a
  // prefix of block 1's 512 tokens), then 600.
  EXPECT_THAT(result.out,
              HasSubstr(R"("mode":"token","vocab":1000,"capacity":null,)"
                        R"("policy":"lru","page_size":1,"model":"spec",)"
                        R"("match_limit":"all","requests":3,)"
                        R"("request_tokens":1725,"matched_tokens":700,)"));
}

TEST_F(CliTest, ReplayNamesTheLineOfABadTrace) {
  WriteFile(Path("t.jsonl"),
            std::string(kTinyTrace) + R"({"input_length":5,"hash_ids":[-4]})");
  const RunResult result = Run({"replay", Path("t.jsonl")});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, StartsWith("kvprefix: " + Path("t.jsonl") +
                                     ": line 5: $.hash_ids[0]: expected"));
}

// Input that never ends a line (/dev/zero) once grew the line buffer until
// memory ran out (16.8 GB, then exit 1): every trace reader stops at
// kMaxLineBytes (256 MiB) with a bad-input error naming the line.
TEST_F(CliTest, TraceReadersStopAtALineThatNeverEnds) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"replay", "/dev/zero"},
           {"curve", "/dev/zero"},
           {"convert", "mooncake", "/dev/zero", "--cached-fraction", "0.5"}}) {
    const RunResult result = Run(args);
    EXPECT_EQ(result.status, 2) << args[0];
    EXPECT_EQ(result.out, "") << args[0];
    EXPECT_EQ(result.err,
              "kvprefix: /dev/zero: line 1: 268435456 bytes or more without a "
              "newline (a line may hold fewer)\n")
        << args[0];
  }
}

// 3,000 requests of 3 blocks (4.5 million tokens in token mode: many
// chunks of the streamed trace), then a bad line 3001 and a good one.
std::string TraceWithLateBadLine() {
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    text += R"({"input_length":1500,"hash_ids":[)" + std::to_string(i % 10) +
            "," + std::to_string(3 * i + 100) + "," +
            std::to_string(3 * i + 101) + "]}\n";
  }
  return text + R"({"input_length":1500,"hash_ids":[1,2,"3"]})"
                "\n"
                R"({"input_length":1,"hash_ids":[1]})"
                "\n";
}

// Streaming replays the trace as it reads it, but prints nothing
// and writes no file unless every line is good: a bad line after thousands
// of replayed requests leaves stdout empty and --matches, -o and --plot
// files untouched, with the one error line naming the line.
TEST_F(CliTest, ABadLateLineLeavesNoOutput) {
  WriteFile(Path("t.jsonl"), TraceWithLateBadLine());
  WriteFile(Path("previous"), "previous contents\n");
  const std::string expected_error =
      "kvprefix: " + Path("t.jsonl") + ": line 3001: $.hash_ids[2]: expected";
  for (const std::string mode : {"block", "token"}) {
    const std::vector<std::vector<std::string>> commands = {
        {"replay", Path("t.jsonl"), "--mode", mode, "--matches", Path("new")},
        {"replay", Path("t.jsonl"), "--mode", mode, "--matches",
         Path("previous")},
        {"replay", Path("t.jsonl"), "--mode", mode, "--matches", "-"},
        {"replay", Path("t.jsonl"), "--mode", mode, "--capacity", "1000"},
        {"curve", Path("t.jsonl"), "--mode", mode, "-o", Path("new"), "--plot",
         Path("new.png")},
        {"curve", Path("t.jsonl"), "--mode", mode, "-o", Path("previous")},
    };
    for (const std::vector<std::string>& args : commands) {
      const RunResult result = Run(args);
      const std::string context = args[0] + " " + args[3] + " " + args[4];
      EXPECT_EQ(result.status, 2) << context;
      EXPECT_EQ(result.out, "") << context;
      EXPECT_THAT(result.err, StartsWith(expected_error)) << context;
      EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
          << context << ": " << result.err;
      EXPECT_FALSE(fs::exists(Path("new"))) << context;
      EXPECT_FALSE(fs::exists(Path("new.png"))) << context;
      EXPECT_EQ(ReadFile(Path("previous")), "previous contents\n") << context;
    }
  }
  // No temporary file of an atomic write is left either.
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"previous", "t.jsonl"}));
}

// A streamed trace may come from standard input: the same answers as from
// the file.
TEST_F(CliTest, ReplayAndCurveStreamStandardInput) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  // The summary up to memory_bytes: a bounded cache's hash tables, seeded
  // per process by Abseil, may hold a different capacity in each run.
  const auto counts = [](const std::string& out) {
    return out.substr(0, out.find(",\"memory_bytes\""));
  };
  const RunResult from_file =
      Run({"replay", trace, "--mode", "token", "--capacity", "100000"});
  const RunResult from_stdin =
      Run({"replay", "-", "--mode", "token", "--capacity", "100000"}, trace);
  EXPECT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_EQ(from_stdin.status, 0) << from_stdin.err;
  EXPECT_THAT(from_file.out, HasSubstr(R"("requests":3993,)"));
  EXPECT_EQ(counts(from_stdin.out), counts(from_file.out));
  const RunResult curve_file = Run({"curve", trace, "--points", "5"});
  const RunResult curve_stdin = Run({"curve", "-", "--points", "5"}, trace);
  EXPECT_EQ(curve_file.status, 0) << curve_file.err;
  EXPECT_EQ(std::count(curve_file.out.begin(), curve_file.out.end(), '\n'), 5);
  EXPECT_EQ(curve_stdin.out, curve_file.out);
}

TEST_F(CliTest, ConvertSplitsTheTraceIntoCachedSequencesAndRequests) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult result =
      Run({"convert", "mooncake", Path("t.jsonl"), "--cached-fraction", "0.5",
           "-o", Path("in.json")});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out, "");
  // floor(0.5 * 3) = 1 cached sequence.
  EXPECT_EQ(ReadFile(Path("in.json")),
            R"({"cached_sequences":[[1]],"requests":[[1,2],[1,2,3]]})"
            "\n");
  const RunResult matched = Run({"match", Path("in.json")});
  EXPECT_EQ(
      matched.out,
      R"({"matches":[{"matched_length":1,"cache_node":1,"uncached_suffix":[2]},)"
      R"({"matched_length":1,"cache_node":1,"uncached_suffix":[2,3]}]})"
      "\n");
}

TEST_F(CliTest, ConvertTokenModeExpandsBlocks) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult result =
      Run({"convert", "mooncake", Path("t.jsonl"), "--cached-fraction", "1",
           "--mode", "token", "--vocab", "7"});
  EXPECT_EQ(result.status, 0) << result.err;
  const BatchInput input = ParseBatchInput(result.out);
  ASSERT_EQ(input.cached_sequences.size(), 3u);
  EXPECT_EQ(input.cached_sequences[2].size(), 1025u);
  EXPECT_EQ(input.requests.size(), 0u);
  for (const Token token : input.cached_sequences[2]) {
    EXPECT_TRUE(token >= 0 && token < 7);
  }
}

// --- A cache with a capacity (SPEC §8) ---------------------------------------

TEST_F(CliTest, ReplayDocumentsGiveTheCapacityCasesForEveryEngine) {
  const auto cases = test::LoadCapacityCases();
  ASSERT_EQ(cases.size(), 16u);
  const auto engines = EngineNamesFromCli();
  ASSERT_EQ(engines.size(), 4u);
  for (const ReplayCaseFile& shared : cases) {
    std::string document;
    AppendReplayDocumentJson(shared.input, document);
    WriteFile(Path("doc.json"), document);
    std::string expected;
    AppendMatchesJson(shared.input.requests, shared.expected, expected);
    for (const std::string& engine : engines) {
      const RunResult result =
          Run({"replay", Path("doc.json"), "--input-format", "requests", "-e",
               engine});
      EXPECT_EQ(result.status, 0) << result.err;
      EXPECT_EQ(result.out, expected) << shared.name << " on " << engine;
    }
  }
}

TEST_F(CliTest, ReplayDocumentOptionsOverrideItsCache) {
  WriteFile(Path("doc.json"),
            R"({"requests":[[1,2,3],[1,2,4],[5],[1,2,3]],"capacity":3})");
  // Unbounded, the last request matches all of [1,2,3] at node 3.
  const RunResult result =
      Run({"replay", Path("doc.json"), "--input-format", "requests",
           "--capacity", "100", "-o", Path("out.json")});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(ReadFile(Path("out.json")),
              HasSubstr(R"({"matched_length":3,"cache_node":3,)"
                        R"("uncached_suffix":[]}]})"));
}

TEST_F(CliTest, ReplayWithACapacityAgreesAcrossEnginesAndReportsTheCache) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  std::string first;
  for (const std::string& engine : EngineNamesFromCli()) {
    const RunResult result = Run({"replay", trace, "-e", engine, "--capacity",
                                  "5000", "--policy", "fifo"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_THAT(result.out,
                HasSubstr(R"("capacity":5000,"policy":"fifo","page_size":1,)"));
    EXPECT_THAT(result.out, HasSubstr(R"("nodes":5000,"peak_nodes":5000,)"));
    // Everything from "requests" to "evictions" is the same for all engines.
    const std::string counts = result.out.substr(
        result.out.find("\"requests\""),
        result.out.find("\"memory_bytes\"") - result.out.find("\"requests\""));
    if (first.empty()) first = counts;
    EXPECT_EQ(counts, first) << engine;
  }
}

TEST_F(CliTest, ReplayCapacityMayBeASizeOfKvCache) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  // Block mode: a node is a 512-token block, 64 MiB at 128 KiB a token, so
  // 1GiB holds 16 nodes, and 100MB 1.
  const RunResult result =
      Run({"replay", Path("t.jsonl"), "--capacity", "1GiB",
           "--kv-bytes-per-token", "131072", "--page-size", "1"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr(R"("capacity":16,"policy":"lru",)"
                                    R"("page_size":1,"model":"spec",)"
                                    R"("match_limit":"all",)"
                                    R"("capacity_bytes":1073741824,)"));
  const RunResult decimal =
      Run({"replay", Path("t.jsonl"), "--mode", "token", "--capacity", "0.5MB",
           "--kv-bytes-per-token", "1000", "--page-size", "4"});
  EXPECT_EQ(decimal.status, 0) << decimal.err;
  EXPECT_THAT(decimal.out, HasSubstr(R"("capacity":125,)"));
}

TEST_F(CliTest, CacheOptionMistakesAreUsageErrors) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  WriteFile(Path("doc.json"), R"({"requests":[],"capacity":null})");
  const struct {
    std::vector<std::string> args;
    const char* message;
  } kMistakes[] = {
      {{"--capacity", "80GiB"}, "a size needs --kv-bytes-per-token"},
      {{"--capacity", "12x", "--kv-bytes-per-token", "2"}, "found '12x'"},
      {{"--capacity", "1.5.2GB", "--kv-bytes-per-token", "2"}, "1.5.2GB"},
      {{"--capacity", "18446744073709551616"}, "at most"},
      {{"--capacity", "20000000000TB", "--kv-bytes-per-token", "2"},
       "2^64 bytes"},
      {{"--policy", "LRU"}, "--policy"},
      {{"--page-size", "0"}, "--page-size"},
  };
  for (const auto& mistake : kMistakes) {
    std::vector<std::string> args = {"replay", Path("t.jsonl")};
    args.insert(args.end(), mistake.args.begin(), mistake.args.end());
    const RunResult result = Run(args);
    EXPECT_EQ(result.status, 2) << mistake.message;
    EXPECT_EQ(result.out, "");
    EXPECT_THAT(result.err, HasSubstr(mistake.message));
  }
  const RunResult mode = Run({"replay", Path("doc.json"), "--input-format",
                              "requests", "--mode", "token"});
  EXPECT_EQ(mode.status, 2);
  EXPECT_THAT(mode.err,
              HasSubstr("--mode does not apply to --input-format requests"));
  const RunResult bad =
      Run({"replay", Path("doc.json"), "--input-format", "requests"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr(Path("doc.json") + ": $.capacity: expected"));
}

TEST_F(CliTest, MatchWithAPageSize) {
  WriteFile(Path("in.json"),
            R"({"cached_sequences":[[1,2,3,4,5]],"requests":[[1,2,3,9],[1]]})");
  const RunResult result = Run({"match", Path("in.json"), "--page-size", "2"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(
      result.out,
      R"({"matches":[{"matched_length":2,"cache_node":1,"uncached_suffix":[3,9]},)"
      R"({"matched_length":0,"cache_node":0,"uncached_suffix":[1]}]})"
      "\n");
}

// One row of curve's jsonl output for a capacity given in nodes.
struct CurveRow {
  std::uint64_t capacity;
  std::uint64_t matched_tokens;
  std::uint64_t request_tokens;
  std::string hit_ratio;  // as printed
};

// The jsonl lines curve prints for `rows`, in order.
std::string CurveLines(const std::vector<CurveRow>& rows) {
  std::string lines;
  for (const CurveRow& row : rows) {
    lines += "{\"capacity\":" + std::to_string(row.capacity) +
             ",\"capacity_bytes\":null,\"matched_tokens\":" +
             std::to_string(row.matched_tokens) +
             ",\"request_tokens\":" + std::to_string(row.request_tokens) +
             ",\"hit_ratio\":" + row.hit_ratio + "}\n";
  }
  return lines;
}

TEST_F(CliTest, CurvePrintsEveryCapacityAsReplayWould) {
  WriteFile(Path("doc.json"),
            R"({"requests":[[1,2,3],[1,2,4],[5],[1,2,3]],"capacity":7})");
  // Before request 2 the stack is (1) (1,2) (1,2,3); before request 4 it is
  // (5) (1) (1,2) (1,2,4) (1,2,3): SPEC §8's hand-01 document at every C.
  const RunResult result = Run({"curve", Path("doc.json"), "--input-format",
                                "requests", "--capacities", "0,1,2,3,5"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out, CurveLines({{0, 0, 10, "0"},
                                    {1, 1, 10, "0.1"},
                                    {2, 3, 10, "0.3"},
                                    {3, 4, 10, "0.4"},
                                    {5, 5, 10, "0.5"}}));
  for (const char* capacity : {"2", "3"}) {
    const RunResult replayed =
        Run({"replay", Path("doc.json"), "--input-format", "requests",
             "--capacity", capacity});
    EXPECT_EQ(replayed.status, 0) << replayed.err;
  }
}

// The text of member `name` in the one-line JSON object `line` (a number or
// null), or "" if it is missing.
std::string JsonMember(const std::string& line, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const std::size_t at = line.find(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size();
  return line.substr(begin, line.find_first_of(",}", begin) - begin);
}

// Only LRU is a stack algorithm (SPEC §8): for every other policy of the
// list (fifo, lfu) curve replays each capacity, says so on stderr, and every
// row is what `replay --capacity C --policy P` prints, at page size 1 and 2.
TEST_F(CliTest, CurveOfAnyOtherPolicyIsReplayAtEachCapacity) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/synthetic_trace.jsonl";
  const std::vector<std::string> capacities = {"0",    "100",   "1000",
                                               "5000", "20000", "100000"};
  int policies = 0;
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    if (entry.policy == EvictionPolicy::kLru) continue;
    ++policies;
    const std::string policy(entry.name);
    for (const std::string page_size : {"1", "2"}) {
      const RunResult other =
          Run({"curve", trace, "--policy", policy, "--page-size", page_size,
               "--capacities", "0,100,1000,5000,20000,100000", "--jobs", "3"});
      ASSERT_EQ(other.status, 0) << other.err;
      EXPECT_EQ(other.err, "kvprefix: curve: " + policy +
                               " is not a stack algorithm: replaying once "
                               "per capacity (6 capacities on 3 threads)\n");
      const RunResult lru =
          Run({"curve", trace, "--page-size", page_size, "--capacities",
               "0,100,1000,5000,20000,100000"});
      ASSERT_EQ(lru.status, 0) << lru.err;
      EXPECT_EQ(lru.err, "");
      std::istringstream other_lines(other.out);
      std::istringstream lru_lines(lru.out);
      std::size_t rows = 0;
      std::size_t differing = 0;
      for (std::string line, lru_line; std::getline(other_lines, line) &&
                                       std::getline(lru_lines, lru_line);) {
        ASSERT_LT(rows, capacities.size());
        const std::string& capacity = capacities[rows++];
        EXPECT_EQ(JsonMember(line, "capacity"), capacity);
        EXPECT_EQ(JsonMember(lru_line, "capacity"), capacity);
        const RunResult replay =
            Run({"replay", trace, "--capacity", capacity, "--policy", policy,
                 "--page-size", page_size});
        ASSERT_EQ(replay.status, 0) << replay.err;
        for (const char* member :
             {"matched_tokens", "request_tokens", "hit_ratio"}) {
          EXPECT_EQ(JsonMember(line, member), JsonMember(replay.out, member))
              << policy << " " << member << " at " << capacity << ", page size "
              << page_size;
        }
        differing += JsonMember(line, "matched_tokens") !=
                     JsonMember(lru_line, "matched_tokens");
      }
      EXPECT_EQ(rows, capacities.size());
      // LRU keeps shared prefixes the other policy evicts: the curves differ
      // between the empty and the unbounded cache.
      EXPECT_GE(differing, 2u) << policy << ", page size " << page_size;
    }
  }
  EXPECT_EQ(policies, 2);  // fifo and lfu
}

// A replay document's policy is curve's unless --policy is given. By hand:
// at capacity 2, LRU evicts [2] for [3] (keeping [1], just touched) and
// hits [1] twice; FIFO evicts [1], the oldest, and hits it once; capacity 1
// keeps nothing for the next request and 3 evicts nothing.
TEST_F(CliTest, CurveOfAReplayDocumentTakesItsPolicy) {
  WriteFile(Path("doc.json"),
            R"({"requests":[[1],[2],[1],[3],[1]],"capacity":2,)"
            R"("policy":"fifo"})");
  const RunResult fifo =
      Run({"curve", Path("doc.json"), "--input-format", "requests",
           "--capacities", "1,2,3", "--jobs", "2"});
  ASSERT_EQ(fifo.status, 0) << fifo.err;
  EXPECT_EQ(fifo.out,
            CurveLines({{1, 0, 5, "0"}, {2, 1, 5, "0.2"}, {3, 2, 5, "0.4"}}));
  EXPECT_EQ(fifo.err,
            "kvprefix: curve: fifo is not a stack algorithm: replaying once "
            "per capacity (3 capacities on 2 threads)\n");
  // Each row is the document's own replay at that capacity.
  std::istringstream lines(fifo.out);
  std::string line;
  for (const char* capacity : {"1", "2", "3"}) {
    ASSERT_TRUE(std::getline(lines, line));
    const RunResult replay = Run({"replay", Path("doc.json"), "--input-format",
                                  "requests", "--capacity", capacity});
    ASSERT_EQ(replay.status, 0) << replay.err;
    std::uint64_t matched = 0;
    for (std::size_t at = 0;
         (at = replay.out.find("\"matched_length\":", at)) != std::string::npos;
         ++at) {
      matched += std::stoull(replay.out.substr(at + 17));
    }
    EXPECT_EQ(JsonMember(line, "matched_tokens"), std::to_string(matched))
        << capacity;
  }
  // --policy replaces the document's, in one pass with no note; csv and
  // the plot have the same shape for both.
  const RunResult lru =
      Run({"curve", Path("doc.json"), "--input-format", "requests", "--policy",
           "lru", "--capacities", "2", "--format", "csv"});
  ASSERT_EQ(lru.status, 0) << lru.err;
  EXPECT_EQ(lru.err, "");
  EXPECT_EQ(lru.out,
            "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n"
            "2,,2,5,0.4\n");
  const RunResult csv = Run({"curve", Path("doc.json"), "--input-format",
                             "requests", "--capacities", "2", "--format", "csv",
                             "--plot", Path("fifo.svg"), "--jobs", "1"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out,
            "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n"
            "2,,1,5,0.2\n");
  EXPECT_THAT(csv.err, HasSubstr("(1 capacity on 1 thread)\n"));
  EXPECT_THAT(ReadFile(Path("fifo.svg")), HasSubstr("FIFO capacity"));
}

TEST_F(CliTest, CurvePolicyMistakesAreUsageErrors) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult bad = Run({"curve", Path("t.jsonl"), "--policy", "LRU"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_THAT(bad.err, StartsWith("kvprefix: --policy: "));
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// Only a stack algorithm's hit ratio surely grows with the capacity; for
// fifo (refused before: "--target-hit-ratio needs --policy lru") the
// capacity is bisected by replays, which says so, and says when the
// capacities it replayed show the hit ratio falling. Belady's sequence
// under fifo hits 0, 0, 0, 3, 2, 7 of 12 tokens at capacities 0 to 5.
TEST_F(CliTest, CurveBisectsATargetOfFifoAndSaysWhenTheRatioFalls) {
  WriteFile(Path("belady.json"),
            R"({"requests":[[1],[2],[3],[4],[1],[2],[5],[1],[2],[3],[4],)"
            R"([5]],"policy":"fifo"})");
  const auto bisect = [&](const std::string& target, const std::string& jobs) {
    const RunResult run =
        Run({"curve", Path("belady.json"), "--input-format", "requests",
             "--target-hit-ratio", target, "--jobs", jobs, "--format", "csv"});
    EXPECT_EQ(run.status, 0) << run.err;
    return run;
  };
  const std::string header =
      "target_hit_ratio,capacity,capacity_bytes,matched_tokens,"
      "request_tokens,hit_ratio\n";
  // One job: capacities 5, 2, 4 (2 of 12 reaches 0.16), then 3.
  const RunResult fell = bisect("0.16", "1");
  EXPECT_EQ(fell.out, header + "0.16,3,,3,12,0.25\n");
  EXPECT_EQ(fell.err,
            "kvprefix: --target-hit-ratio 0.16: capacity 3 by bisection (4 "
            "capacities replayed in all), assuming the hit ratio grows with "
            "capacity (fifo is not a stack algorithm); checked: capacity 2 "
            "hits 0 < 0.16, capacity 3 hits 0.25; but the assumption fails: "
            "capacity 3 hits 0.25, more than capacity 4's "
            "0.16666666666666666, so capacity 3 may not be the smallest "
            "reaching the target\n");
  // Two jobs: capacities 5, 1 and 3, then 2: the fall is not seen.
  const RunResult unseen = bisect("0.25", "2");
  EXPECT_EQ(unseen.out, header + "0.25,3,,3,12,0.25\n");
  EXPECT_THAT(unseen.err, HasSubstr("checked: capacity 2 hits 0 < 0.25, "
                                    "capacity 3 hits 0.25\n"));
  EXPECT_THAT(unseen.err, Not(HasSubstr("fails")));
}

TEST_F(CliTest, CurveCsvPointsSizesAndPlot) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  // Block mode at 128 KiB a token: a node is 64 MiB, so 128MiB is 2 nodes.
  const RunResult csv =
      Run({"curve", Path("t.jsonl"), "--format", "csv", "--capacities",
           "1,128MiB", "--kv-bytes-per-token", "131072"});
  EXPECT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out,
            "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n"
            "1,67108864,2,6,0.3333333333333333\n"
            "2,134217728,3,6,0.5\n");
  const RunResult points = Run({"curve", Path("t.jsonl"), "--points", "2"});
  EXPECT_EQ(points.status, 0) << points.err;
  EXPECT_THAT(points.out, StartsWith(R"({"capacity":1,)"));
  EXPECT_THAT(points.out, HasSubstr(R"({"capacity":3,)"));  // 3 prefixes
  const RunResult plot =
      Run({"curve", Path("t.jsonl"), "--plot", Path("curve.png")});
  EXPECT_EQ(plot.status, 0) << plot.err;
  EXPECT_EQ(ReadFile(Path("curve.png")).substr(1, 3), "PNG");
}

TEST_F(CliTest, CurveMistakesAreReported) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult both =
      Run({"curve", Path("t.jsonl"), "--capacities", "1", "--points", "3"});
  EXPECT_EQ(both.status, 2);
  EXPECT_THAT(both.err, HasSubstr("--capacities or --points, not both"));
  const RunResult size = Run({"curve", Path("t.jsonl"), "--capacities", "1GB"});
  EXPECT_EQ(size.status, 2);
  EXPECT_THAT(size.err, HasSubstr("a size needs --kv-bytes-per-token"));
  // Once taken as no --capacities at all: the default 32 points.
  const RunResult empty = Run({"curve", Path("t.jsonl"), "--capacities", ""});
  EXPECT_EQ(empty.status, 2);
  EXPECT_THAT(empty.err, HasSubstr("--capacities"));
  EXPECT_EQ(empty.out, "");
  const RunResult plot =
      Run({"curve", Path("t.jsonl"), "--plot", Path("curve.gif")});
  EXPECT_EQ(plot.status, 2);  // usage, not I/O (was 1)
  EXPECT_THAT(plot.err, HasSubstr("expected a .png or .svg file"));
  EXPECT_EQ(plot.out, "");
}

TEST_F(CliTest, CurveTargetHitRatioIsTheSmallestCapacityReachingIt) {
  WriteFile(Path("doc.json"),
            R"({"requests":[[1,2,3],[1,2,4],[5],[1,2,3]],"capacity":7})");
  // hand-01 matches 0, 1, 3, 4, 4, 5 of 10 tokens at C = 0 ... 5: 0.35
  // needs 4 tokens (C = 3), 0.41 five (C = 5); 0.6 is past the unbounded
  // 0.5.
  const RunResult result =
      Run({"curve", Path("doc.json"), "--input-format", "requests",
           "--target-hit-ratio", "0.35,0.3,0.41,0.6,0"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out,
            R"({"target_hit_ratio":0.35,"capacity":3,"capacity_bytes":null,)"
            R"("matched_tokens":4,"request_tokens":10,"hit_ratio":0.4})"
            "\n"
            R"({"target_hit_ratio":0.3,"capacity":2,"capacity_bytes":null,)"
            R"("matched_tokens":3,"request_tokens":10,"hit_ratio":0.3})"
            "\n"
            R"({"target_hit_ratio":0.41,"capacity":5,"capacity_bytes":null,)"
            R"("matched_tokens":5,"request_tokens":10,"hit_ratio":0.5})"
            "\n"
            R"({"target_hit_ratio":0.6,"capacity":null,"capacity_bytes":null,)"
            R"("matched_tokens":5,"request_tokens":10,"hit_ratio":0.5})"
            "\n"
            R"({"target_hit_ratio":0,"capacity":0,"capacity_bytes":null,)"
            R"("matched_tokens":0,"request_tokens":10,"hit_ratio":0})"
            "\n");
  EXPECT_EQ(result.err,
            "kvprefix: --target-hit-ratio 0.6: unreachable: no capacity hits "
            "more than the unbounded cache's 0.5 (reached from 5 nodes on)\n");
  // Block mode of the tiny trace, 2 bytes a token, blocks of 16 tokens: a
  // node is 32 bytes. Matches 2 and 3 of 6 blocks at C = 1 and 2.
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult csv =
      Run({"curve", Path("t.jsonl"), "--format", "csv", "--target-hit-ratio",
           "0.5,0.34", "--kv-bytes-per-token", "2", "--block-tokens", "16"});
  EXPECT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out,
            "target_hit_ratio,capacity,capacity_bytes,matched_tokens,"
            "request_tokens,hit_ratio\n"
            "0.5,2,64,3,6,0.5\n"
            "0.34,2,64,3,6,0.5\n");
  EXPECT_EQ(csv.err, "");
}

// The conversation trace in block mode: the answer's replay reaches the
// target, one node less does not.
TEST_F(CliTest, CurveTargetHitRatioAgreesWithReplayOnTheConversationTrace) {
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  const RunResult result =
      Run({"curve", trace, "--target-hit-ratio", "0.3,0.35", "--format", "csv",
           "--kv-bytes-per-token", "131072"});
  ASSERT_EQ(result.status, 0) << result.err;
  std::istringstream lines(result.out);
  std::string line;
  std::getline(lines, line);  // the header
  int answers = 0;
  while (std::getline(lines, line)) {
    ++answers;
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string field; std::getline(row, field, ',');) {
      fields.push_back(field);
    }
    ASSERT_EQ(fields.size(), 6u) << line;
    const double target = std::stod(fields[0]);
    const std::uint64_t capacity = std::stoull(fields[1]);
    // 512 tokens of 128 KiB a node.
    EXPECT_EQ(std::stoull(fields[2]), capacity * 512 * 131072);
    for (const std::uint64_t c : {capacity - 1, capacity}) {
      const RunResult replay =
          Run({"replay", trace, "--capacity", std::to_string(c)});
      ASSERT_EQ(replay.status, 0) << replay.err;
      const std::size_t at = replay.out.find("\"hit_ratio\":");
      ASSERT_NE(at, std::string::npos);
      const std::string ratio_text =
          replay.out.substr(at + 12, replay.out.find(',', at) - (at + 12));
      const double ratio = std::stod(ratio_text);
      EXPECT_EQ(ratio >= target, c == capacity) << c << ": " << ratio;
      if (c == capacity) {
        EXPECT_EQ(ratio_text, fields[5]);  // the same hit ratio, printed
      }
    }
  }
  EXPECT_EQ(answers, 2);
}

TEST_F(CliTest, CurvePointsAreExactlyNOrSayWhyFewer) {
  // 182790^(i/31) rounds to 1 twice: 31 lines for --points 32.
  const std::string trace =
      KVPREFIX_SOURCE_DIR "/data/mooncake/conversation_trace.jsonl";
  const RunResult many = Run({"curve", trace, "--points", "32"});
  EXPECT_EQ(many.status, 0) << many.err;
  EXPECT_EQ(std::count(many.out.begin(), many.out.end(), '\n'), 32);
  EXPECT_THAT(many.out, StartsWith(R"({"capacity":1,)"));
  EXPECT_THAT(many.out, HasSubstr(R"({"capacity":2,)"));
  EXPECT_EQ(many.err, "");
  WriteFile(Path("t.jsonl"), kTinyTrace);  // 3 distinct prefixes
  const RunResult few = Run({"curve", Path("t.jsonl"), "--points", "10"});
  EXPECT_EQ(few.status, 0) << few.err;
  EXPECT_EQ(std::count(few.out.begin(), few.out.end(), '\n'), 3);
  EXPECT_EQ(few.err,
            "kvprefix: --points 10: 3 lines: only 3 distinct capacities lie "
            "from 1 to the 3 distinct prefixes, past which every capacity "
            "hits as much\n");
}

TEST_F(CliTest, BlockTokensSetsTheBytesOfABlockModeNode) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  // 16 tokens of 2 bytes: 64B is 2 nodes.
  const RunResult replay =
      Run({"replay", Path("t.jsonl"), "--capacity", "64B",
           "--kv-bytes-per-token", "2", "--block-tokens", "16"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_THAT(replay.out, HasSubstr(R"("capacity":2,)"));
  EXPECT_THAT(replay.out, HasSubstr(R"("capacity_bytes":64,)"));
  const RunResult curve =
      Run({"curve", Path("t.jsonl"), "--capacities", "1,96B",
           "--kv-bytes-per-token", "2", "--block-tokens", "16"});
  EXPECT_EQ(curve.status, 0) << curve.err;
  EXPECT_THAT(curve.out, StartsWith(R"({"capacity":1,"capacity_bytes":32,)"));
  EXPECT_THAT(curve.out, HasSubstr(R"({"capacity":3,"capacity_bytes":96,)"));
  // Meaningless where a node is not a hash id.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"replay", Path("t.jsonl"), "--mode", "token",
                                 "--block-tokens", "16"},
        {"curve", Path("t.jsonl"), "--mode", "token", "--block-tokens",
         "16"}}) {
    const RunResult refused = Run(args);
    EXPECT_EQ(refused.status, 2);
    EXPECT_EQ(refused.err,
              "kvprefix: --block-tokens applies to --mode block only (in "
              "token mode a node is a token)\n");
    EXPECT_EQ(refused.out, "");
  }
  WriteFile(Path("doc.json"), R"({"requests":[[1]]})");
  const RunResult document = Run({"curve", Path("doc.json"), "--input-format",
                                  "requests", "--block-tokens", "16"});
  EXPECT_EQ(document.status, 2);
  EXPECT_THAT(document.err, HasSubstr("--block-tokens does not apply to "
                                      "--input-format requests"));
  const RunResult replay_document = Run({"replay", Path("doc.json"), "--format",
                                         "requests", "--block-tokens", "16"});
  EXPECT_EQ(replay_document.status, 2);
  EXPECT_THAT(
      replay_document.err,
      HasSubstr("--block-tokens does not apply to --input-format requests"));
}

TEST_F(CliTest, CurveTargetMistakesAreReported) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  for (const char* bad : {"1.5", "0.3,", ",0.3", "", "nan", "-0.1", "ten"}) {
    const RunResult result =
        Run({"curve", Path("t.jsonl"), "--target-hit-ratio", bad});
    EXPECT_EQ(result.status, 2) << bad;
    EXPECT_THAT(result.err,
                StartsWith("kvprefix: --target-hit-ratio: expected a decimal "
                           "from 0 to 1"))
        << bad;
    EXPECT_EQ(result.out, "");
  }
  // An empty item is quoted, and so is the list it is in.
  const RunResult empty_item =
      Run({"curve", Path("t.jsonl"), "--target-hit-ratio", "0.3,,0.4"});
  EXPECT_EQ(empty_item.status, 2);
  EXPECT_EQ(empty_item.err,
            "kvprefix: --target-hit-ratio: expected a decimal from 0 to 1 "
            "(such as 0.25; no exponent), found '' in '0.3,,0.4'\n");
  const RunResult empty =
      Run({"curve", Path("t.jsonl"), "--target-hit-ratio", ""});
  EXPECT_EQ(empty.err,
            "kvprefix: --target-hit-ratio: expected a decimal from 0 to 1 "
            "(such as 0.25; no exponent), found ''\n");
  // The output is the targets: points would change nothing but a plot.
  const RunResult points = Run(
      {"curve", Path("t.jsonl"), "--target-hit-ratio", "0.3", "--points", "4"});
  EXPECT_EQ(points.status, 2);
  EXPECT_THAT(points.err,
              HasSubstr("--points with --target-hit-ratio only sets what "
                        "--plot draws"));
}

// std::stod threw out_of_range for targets past a double's range: exit 1
// with "kvprefix: stod".
TEST_F(CliTest, CurveTargetHitRatioOutOfDoubleRangeIsAUsageError) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  for (const char* bad : {"1e-400", "4.9e-324", "-1e-400", "1e400"}) {
    const RunResult result =
        Run({"curve", Path("t.jsonl"), "--target-hit-ratio", bad});
    EXPECT_EQ(result.status, 2) << bad;
    EXPECT_EQ(
        result.err,
        "kvprefix: --target-hit-ratio: expected a decimal from 0 to 1 (such as "
        "0.25; no exponent), found '" +
            std::string(bad) + "'\n");
    EXPECT_EQ(result.out, "");
  }
  // A decimal below the smallest double is still above 0: the smallest
  // capacity with any hit (1 of 6 blocks at C = 1), as for 0.0001.
  WriteFile(Path("doc.json"), R"({"requests":[[1,2,3],[1,2,4],[5],[1,2,3]]})");
  const std::string tiny = "0." + std::string(400, '0') + "1";
  const RunResult result = Run({"curve", Path("doc.json"), "--input-format",
                                "requests", "--target-hit-ratio", tiny});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr(R"("capacity":1,"capacity_bytes":null,)"
                                    R"("matched_tokens":1,)"));
}

// Targets are decimals as --cached-fraction takes them (SPEC §6
// "Numbers"), checked on the digits: 00.5, +0.5, hex and spaces were
// accepted, and 1.0000000000000000000001 was rounded to 1.
TEST_F(CliTest, CurveTargetHitRatioIsADecimalAsTyped) {
  WriteFile(Path("doc.json"), R"({"requests":[[1,2,3],[1,2,4],[5],[1,2,3]]})");
  for (const char* bad :
       {"00.5", "+0.5", "0x1p-1", "0x0.8", " 0.5", "0.5 ", "-0", "-0.0",
        "1.0000000000000000000001", "5e-1", "0.", "."}) {
    const RunResult result = Run({"curve", Path("doc.json"), "--input-format",
                                  "requests", "--target-hit-ratio", bad});
    EXPECT_EQ(result.status, 2) << bad;
    EXPECT_EQ(
        result.err,
        "kvprefix: --target-hit-ratio: expected a decimal from 0 to 1 (such as "
        "0.25; no exponent), found '" +
            std::string(bad) + "'\n");
    EXPECT_EQ(result.out, "");
  }
  // hand-01 matches 0, 1, 3, 4, 4, 5 of 10 tokens at C = 0 ... 5.
  const RunResult good =
      Run({"curve", Path("doc.json"), "--input-format", "requests", "--format",
           "csv", "--target-hit-ratio", ".5,0.30,1.000,0.000"});
  EXPECT_EQ(good.status, 0) << good.err;
  EXPECT_EQ(good.out,
            "target_hit_ratio,capacity,capacity_bytes,matched_tokens,"
            "request_tokens,hit_ratio\n"
            "0.5,5,,5,10,0.5\n"
            "0.3,2,,3,10,0.3\n"
            "1,,,5,10,0.5\n"
            "0,0,,0,10,0\n");
}

// The note on an unreachable target said "(reached from 1 nodes on)".
TEST_F(CliTest, CurveUnreachableNoteCountsOneNode) {
  WriteFile(Path("doc.json"), R"({"requests":[[1],[1]]})");
  const RunResult result = Run({"curve", Path("doc.json"), "--input-format",
                                "requests", "--target-hit-ratio", "0.6"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err,
            "kvprefix: --target-hit-ratio 0.6: unreachable: no capacity hits "
            "more than the unbounded cache's 0.5 (reached from 1 node on)\n");
}

// A failing -o left the --plot file written: neither is left new when
// either cannot be written, and an existing one is untouched.
TEST_F(CliTest, CurveWritesNeitherOutputWhenOneFails) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  WriteFile(Path("previous.png"), "previous plot\n");
  WriteFile(Path("previous.json"), "previous output\n");
  const std::vector<std::vector<std::string>> commands = {
      {"-o", "/dev/full", "--plot", Path("new.png")},
      {"-o", Path("nodir/a.json"), "--plot", Path("new.png")},
      {"-o", "/dev/full", "--plot", Path("previous.png")},
      {"-o", Path("new.json"), "--plot", Path("nodir/a.png")},
      {"-o", Path("previous.json"), "--plot", Path("nodir/a.png")},
  };
  for (std::vector<std::string> args : commands) {
    const std::string context = args[1] + " " + args[3];
    args.insert(args.begin(), {"curve", Path("t.jsonl")});
    const RunResult result = Run(args);
    EXPECT_EQ(result.status, 1) << context;
    EXPECT_EQ(result.out, "") << context;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << context << ": " << result.err;
    EXPECT_FALSE(fs::exists(Path("new.png"))) << context;
    EXPECT_FALSE(fs::exists(Path("new.json"))) << context;
    EXPECT_EQ(ReadFile(Path("previous.png")), "previous plot\n") << context;
    EXPECT_EQ(ReadFile(Path("previous.json")), "previous output\n") << context;
  }
  // No temporary file is left either; and with both writable, both are
  // written.
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"previous.json", "previous.png",
                                             "t.jsonl"}));
  const RunResult both =
      Run({"curve", Path("t.jsonl"), "-o", Path("previous.json"), "--plot",
           Path("previous.png")});
  EXPECT_EQ(both.status, 0) << both.err;
  EXPECT_THAT(ReadFile(Path("previous.json")), StartsWith(R"({"capacity":1,)"));
  EXPECT_EQ(ReadFile(Path("previous.png")).substr(1, 3), "PNG");
}

TEST_F(CliTest, CurveCapacityBytesPastTwoTo64AreNull) {
  // 2^40 bytes a token, pages of 2^30 + 1 tokens: this capacity's bytes are
  // 2^128 + 2^40, which 128-bit arithmetic wrapped to 2^40, printed.
  WriteFile(Path("doc.json"), R"({"requests":[[1]]})");
  const RunResult result =
      Run({"curve", Path("doc.json"), "--input-format", "requests",
           "--capacities", "1152921503533105153,1", "--kv-bytes-per-token",
           "1099511627776", "--page-size", "1073741825"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, StartsWith(R"({"capacity":1152921503533105153,)"
                                     R"("capacity_bytes":null,)"));
}

// The same capacity in replay's summary, which computed its bytes as curve
// did (one helper now: CapacityBytes) and printed 2^40.
TEST_F(CliTest, ReplayCapacityBytesPastTwoTo64AreNull) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult result =
      Run({"replay", Path("t.jsonl"), "--mode", "token", "--capacity",
           "1152921503533105153", "--kv-bytes-per-token", "1099511627776",
           "--page-size", "1073741825"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr(R"("capacity":1152921503533105153,)"));
  EXPECT_THAT(result.out, HasSubstr(R"("capacity_bytes":null,)"));
  // A capacity whose bytes fit is still given: 3 nodes of 2 tokens of 5.
  const RunResult small =
      Run({"replay", Path("t.jsonl"), "--mode", "token", "--capacity", "3",
           "--kv-bytes-per-token", "5", "--page-size", "2"});
  EXPECT_EQ(small.status, 0) << small.err;
  EXPECT_THAT(small.out, HasSubstr(R"("capacity_bytes":30,)"));
}

TEST_F(CliTest, CurvePlotMarksCapacitiesAndTargets) {
  WriteFile(Path("t.jsonl"), kTinyTrace);
  const RunResult plot =
      Run({"curve", Path("t.jsonl"), "--target-hit-ratio", "0.4,0.9",
           "--capacities", "1,2", "--kv-bytes-per-token", "131072", "--plot",
           Path("curve.svg")});
  EXPECT_EQ(plot.status, 0) << plot.err;
  EXPECT_THAT(plot.out, HasSubstr(R"({"target_hit_ratio":0.4,"capacity":2,)"));
  // matplotlib draws text as glyph paths, each after a comment holding it.
  const std::string svg = ReadFile(Path("curve.svg"));
  for (const char* text :
       {"<!-- t.jsonl, block mode, page size 1: 3 requests, 3 distinct "
        "prefixes -->",
        "<!-- LRU capacity (nodes = hash ids, 512-token blocks) -->",
        "<!-- KV cache (GiB) -->", "<!-- capacities asked for -->",
        "<!-- hit ratio 0.4: 2 nodes, 0.125 GiB -->",
        "<!-- hit ratio 0.9: unreachable (at most 0.5) -->"}) {
    EXPECT_THAT(svg, HasSubstr(text));
  }
  // Token mode, pages of 4 tokens, no byte sizes.
  const RunResult token =
      Run({"curve", Path("t.jsonl"), "--mode", "token", "--page-size", "4",
           "--plot", Path("token.svg")});
  EXPECT_EQ(token.status, 0) << token.err;
  const std::string token_svg = ReadFile(Path("token.svg"));
  EXPECT_THAT(token_svg, HasSubstr("token mode, page size 4:"));
  EXPECT_THAT(token_svg,
              HasSubstr("<!-- LRU capacity (nodes = pages of 4 tokens) -->"));
  EXPECT_THAT(token_svg, Not(HasSubstr("GiB")));
}

TEST_F(CliTest, MatchGivesTheSameBytesOnAnyNumberOfThreads) {
  // The largest shared cases: many requests, long suffixes, wide nodes.
  for (const CaseFile& shared : test::LoadSharedCases()) {
    if (shared.input.requests.size() < 5) continue;
    std::string json;
    AppendBatchInputJson(shared.input, json);
    WriteFile(Path("in.json"), json);
    for (const char* threads : {"1", "2", "3", "64"}) {
      const RunResult result =
          Run({"match", Path("in.json"), "--threads", threads});
      EXPECT_EQ(result.status, 0) << result.err;
      EXPECT_EQ(result.out, test::ExpectedOutput(shared))
          << shared.name << " on " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace kvprefix
