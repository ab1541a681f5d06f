// End-to-end tests of the `kvprefix` tool: runs the built binary
// (KVPREFIX_CLI) and checks stdout byte for byte, stderr and the exit status
// (SPEC §5, §6): the seed examples, every shared case with every engine,
// every kind of bad input, -o atomicity, usage errors, and the trace commands.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "testing/bad_inputs.h"
#include "testing/seed_examples.h"
#include "testing/shared_cases.h"

extern char** environ;

namespace kvprefix {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
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
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() /
        ("kvprefix_cli_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Starts kvprefix with `args`, `actions` (redirections) and SIGPIPE at
  // its default action (as from a shell); returns its pid, or -1.
  static pid_t Spawn(const std::vector<std::string>& args,
                     const posix_spawn_file_actions_t& actions) {
    std::vector<std::string> argv_strings = {KVPREFIX_CLI};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t default_signals;
    sigemptyset(&default_signals);
    sigaddset(&default_signals, SIGPIPE);
    posix_spawnattr_setsigdefault(&attributes, &default_signals);
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

  fs::path dir_;
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
                                             {"verify", "--help"}}) {
    const RunResult result = Run(args);
    EXPECT_EQ(result.status, 0) << args[0];
    EXPECT_THAT(result.out, HasSubstr("Usage")) << args[0];
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
  // 3000 requests of 1000 seven-digit tokens: ~24 MB of output.
  std::string request = "[";
  for (int token = 1000000; token < 1001000; ++token) {
    request += std::to_string(token) + ",";
  }
  request.back() = ']';
  std::string json = R"({"cached_sequences":[],"requests":[)";
  for (int i = 0; i < 3000; ++i) json += request + ",";
  json.back() = ']';
  WriteFile(Path("in.json"), json + "}");
  const fs::path out_dir = dir_ / "out";
  fs::create_directories(out_dir);
  const auto temporary_exists = [&] {
    for (const auto& entry : fs::directory_iterator(out_dir)) {
      if (entry.path().filename().string().starts_with(".o.json.")) return true;
    }
    return false;
  };
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  }
  int caught_mid_write = 0;
  for (int attempt = 0; attempt < 5 && caught_mid_write == 0; ++attempt) {
    const pid_t pid =
        Spawn({"match", Path("in.json"), "-o", (out_dir / "o.json").string()},
              actions);
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
      kill(pid, SIGTERM);
      waitpid(pid, &status, 0);
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM &&
          !fs::exists(out_dir / "o.json")) {
        ++caught_mid_write;
      }
    }
    EXPECT_FALSE(temporary_exists()) << "attempt " << attempt;
    fs::remove(out_dir / "o.json");
  }
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(caught_mid_write, 1) << "no SIGTERM landed during the write";
}

// `kvprefix match ... | head -c 10`: a closed pipe is a write failure
// (exit 1, one line), not death by SIGPIPE.
TEST_F(CliTest, ClosedStdoutPipeIsAnIoFailure) {
  WriteFile(Path("in.json"), R"({"cached_sequences":[],"requests":[[1]]})");
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  close(pipe_fds[0]);  // no reader: every write fails with EPIPE
  const std::string err_path = Path("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const pid_t pid = Spawn({"match", Path("in.json")}, actions);
  close(pipe_fds[1]);
  posix_spawn_file_actions_destroy(&actions);
  ASSERT_GT(pid, 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string err = ReadFile(err_path);
  EXPECT_THAT(err, HasSubstr("Broken pipe"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
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
                        R"("policy":"lru","page_size":1,"requests":3,)"
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

}  // namespace
}  // namespace kvprefix
