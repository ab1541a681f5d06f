// The plugin loader (plugin/plugin_engine.h): a plugin that is right
// agrees with the reference on everything the differential harness
// compares; one that is wrong in a way no cache can be is reported as the
// plugin's fault, naming the plugin and the call.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "checking/differential.h"
#include "checking/random_input.h"
#include "engines/registry.h"
#include "plugin/kvprefix_plugin.h"
#include "plugin/plugin_engine.h"
#include "testing/program_run.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

using ::testing::HasSubstr;

const std::string kRadix = std::string("plugin:") + KVPREFIX_RADIX_PLUGIN;

std::string Faulty(const char* path) { return std::string("plugin:") + path; }

// The path of a new file `name` in `dir` holding `text`.
std::string Written(const test::ScratchDir& dir, const std::string& name,
                    const std::string& text) {
  const std::string path = dir.Path(name);
  test::WriteTextFile(path, text);
  return path;
}

// The message of what `make` throws as E, or "" if it throws nothing.
template <typename E, typename F>
std::string ThrownMessage(F&& make) {
  try {
    make();
  } catch (const E& error) {
    return error.what();
  }
  return "";
}

TEST(PluginTest, NamesArePluginColonPath) {
  EXPECT_TRUE(IsEngineName(kRadix));
  EXPECT_TRUE(IsPluginName("plugin:x"));
  EXPECT_FALSE(IsPluginName("plugin:"));
  EXPECT_FALSE(IsPluginName("radix"));
  EXPECT_FALSE(IsEngineName("plugin:"));
}

TEST(PluginTest, RadixPluginAgreesWithTheReferenceUnboundedAndBounded) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const BatchInput batch = checking::RandomBatchInput(seed, 60);
    std::vector<std::unique_ptr<PrefixIndex>> unbounded;
    unbounded.push_back(MakeEngine(kRadix));
    EXPECT_EQ(unbounded.back()->name(), "plugin:radix");
    checking::DifferentialChecker batch_checker(std::move(unbounded));
    EXPECT_EQ(batch_checker.ApplyBatch(batch), std::nullopt) << seed;

    // Capacities, both policies and page sizes 1 to 3: evictions (through
    // the plugin's eviction callback) are compared page by page.
    const ReplayInput replay = checking::RandomReplayInput(seed, 60);
    std::vector<std::unique_ptr<PrefixIndex>> bounded;
    bounded.push_back(MakeEngine(kRadix, replay.options));
    checking::DifferentialChecker replay_checker(replay.options,
                                                 std::move(bounded));
    EXPECT_EQ(replay_checker.ApplyReplay(replay), std::nullopt) << seed;
  }
}

TEST(PluginTest, APluginThatCachesNothingIsCaught) {
  std::vector<std::unique_ptr<PrefixIndex>> engines;
  engines.push_back(MakeEngine(Faulty(KVPREFIX_FAULTY_PLUGIN_none)));
  checking::DifferentialChecker checker(std::move(engines));
  const std::vector<Token> sequence = {5, 6};
  EXPECT_EQ(checker.Apply({checking::Operation::Kind::kInsert, sequence}),
            "engine 'plugin:faulty' disagrees with the reference after 1 "
            "operations (unbounded, page size 1)\n  #0 insert [5,6]\n  "
            "expected (reference): insert returns node 2\n  actual "
            "(plugin:faulty): insert returns node 0\n");
}

TEST(PluginTest, MemoryAndEvictionsComeThroughTheBoundary) {
  const auto plugin = MakeEngine(
      kRadix, CacheOptions{.capacity = 2, .policy = EvictionPolicy::kFifo});
  std::vector<Token> evicted;
  plugin->SetEvictionListener([&](TokenSpan tokens) {
    evicted.insert(evicted.end(), tokens.begin(), tokens.end());
  });
  const std::vector<Token> sequence = {7, 8, 9};
  EXPECT_EQ(plugin->Insert(sequence), 2u);  // node 3 went at once
  EXPECT_EQ(plugin->node_count(), 2u);
  EXPECT_EQ(plugin->evicted_count(), 1u);
  EXPECT_EQ(evicted, std::vector<Token>({9}));
  EXPECT_GT(plugin->memory_bytes(), 0u);
  EXPECT_EQ(plugin->options().capacity, 2u);
}

TEST(PluginTest, LoadFailuresNameThePluginAndTheProblem) {
  EXPECT_THAT(ThrownMessage<PluginError>(
                  [] { MakeEngine("plugin:/nonexistent/libnothing.so"); }),
              HasSubstr("plugin /nonexistent/libnothing.so: cannot load: "));
  EXPECT_THAT(ThrownMessage<PluginError>([] {
                MakeEngine(Faulty(KVPREFIX_FAULTY_PLUGIN_abi_version));
              }),
              HasSubstr(": table of ABI version 1, expected 2 (the version of "
                        "its entry symbol kvprefix_plugin_v2)"));
  EXPECT_THAT(ThrownMessage<PluginError>([] {
                MakeEngine(Faulty(KVPREFIX_FAULTY_PLUGIN_no_node_count));
              }),
              HasSubstr(": the table's required member 'node_count' is NULL"));
  // A shared library that is not a plugin at all: the test's own faulty
  // plugins export the symbol, the C library does not.
  EXPECT_THAT(
      ThrownMessage<PluginError>([] { MakeEngine("plugin:libc.so.6"); }),
      HasSubstr("plugin libc.so.6: no kvprefix_plugin_v2 or kvprefix_plugin_v1 "
                "symbol"));
}

// `plugin:NAME` without a '/' is searched on the library path, as dlopen
// does, not in the current folder: with the file right there, the error
// said only "cannot open shared object file". It now says how to name it.
TEST(PluginTest, ANameWithoutSlashSaysHowToNameTheFileHere) {
  const test::ScratchDir dir;
  const std::string name = "libcopied_radix_plugin.so";
  std::filesystem::copy_file(KVPREFIX_RADIX_PLUGIN, dir.Path(name));
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const std::string bare =
      ThrownMessage<PluginError>([&] { MakeEngine("plugin:" + name); });
  const std::string absent = ThrownMessage<PluginError>(
      [] { MakeEngine("plugin:libnot_here_at_all.so"); });
  std::filesystem::create_directory("afolder");  // not a file: no hint
  const std::string folder =
      ThrownMessage<PluginError>([] { MakeEngine("plugin:afolder"); });
  const auto here = MakeEngine("plugin:./" + name);
  std::filesystem::current_path(before);
  EXPECT_THAT(bare, HasSubstr("plugin " + name + ": cannot load: "));
  EXPECT_THAT(bare, HasSubstr("(a name without '/' is searched on the library "
                              "path; for the file in this folder write "
                              "plugin:./" +
                              name + ")"));
  EXPECT_THAT(absent, ::testing::Not(HasSubstr("write plugin:./")));
  EXPECT_THAT(folder, ::testing::Not(HasSubstr("write plugin:./")));
  EXPECT_EQ(here->name(), "plugin:radix");
}

// A refused plugin stayed loaded (dlopen'ed, never closed) for the rest of
// the process; it is closed, and refused the same way each time.
TEST(PluginTest, ARefusedPluginIsUnloadedAndRefusedAgain) {
  for (const char* path : {KVPREFIX_FAULTY_PLUGIN_abi_version,
                           KVPREFIX_FAULTY_PLUGIN_no_node_count}) {
    const std::string first =
        ThrownMessage<PluginError>([&] { MakeEngine(Faulty(path)); });
    EXPECT_THAT(first, HasSubstr(path));
    EXPECT_EQ(dlopen(path, RTLD_NOW | RTLD_NOLOAD), nullptr) << path;
    EXPECT_EQ(ThrownMessage<PluginError>([&] { MakeEngine(Faulty(path)); }),
              first);
  }
  // An accepted one stays loaded (plugin_engine.h).
  EXPECT_NE(MakeEngine(Faulty(KVPREFIX_FAULTY_PLUGIN_none)), nullptr);
  void* handle = dlopen(KVPREFIX_FAULTY_PLUGIN_none, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr);
  if (handle != nullptr) dlclose(handle);  // the reference NOLOAD added
}

TEST(PluginTest, RefusedOptionsAreInvalidArguments) {
  const std::string name = Faulty(KVPREFIX_FAULTY_PLUGIN_pages_only_1);
  EXPECT_EQ(ThrownMessage<std::invalid_argument>(
                [&] { MakeEngine(name, CacheOptions{.page_size = 16}); }),
            "plugin 'faulty' (" +
                std::string(KVPREFIX_FAULTY_PLUGIN_pages_only_1) +
                ") refuses unbounded, lru, page size 16: only page size 1");
  EXPECT_NE(MakeEngine(name), nullptr);
  EXPECT_THAT(ThrownMessage<std::invalid_argument>(
                  [&] { MakeEngine(name, CacheOptions{.page_size = 0}); }),
              HasSubstr("page size 0 is outside 1 to 2^31 - 1"));
}

TEST(PluginTest, ImpossibleAnswersAreThePluginsFault) {
  const std::vector<Token> request = {1, 2, 3};
  const auto garbage =
      MakeEngine(Faulty(KVPREFIX_FAULTY_PLUGIN_garbage_length));
  EXPECT_EQ(ThrownMessage<PluginError>([&] { garbage->MatchPrefix(request); }),
            "plugin 'faulty' (" +
                std::string(KVPREFIX_FAULTY_PLUGIN_garbage_length) +
                "): match returned matched_length 4 for a request of 3 tokens");
  const auto unknown =
      MakeEngine(Faulty(KVPREFIX_FAULTY_PLUGIN_unknown_status));
  EXPECT_THAT(ThrownMessage<PluginError>([&] { unknown->Insert(request); }),
              HasSubstr("): insert returned the unknown status 42"));
  // Without an access member, Access is match then insert.
  EXPECT_THAT(ThrownMessage<PluginError>([&] { unknown->Access(request); }),
              HasSubstr("): insert returned the unknown status 42"));
}

// A plugin exports its entry point only: the engine's functions, from the
// static libraries it links, are local, so the calls between them are
// direct (through the PLT they cost the plugin 25% over the compiled-in
// engine on block-mode replays, bench/README.md) and cannot bind to a
// host's copy of the same functions.
TEST(PluginTest, RadixPluginExportsOnlyItsEntryPoint) {
  void* handle = dlopen(KVPREFIX_RADIX_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  // Version 2's entry point alone: one that also exported version 1's
  // would be loaded by an older kvprefix that cannot give it a model.
  EXPECT_NE(dlsym(handle, "kvprefix_plugin_v2"), nullptr);
  EXPECT_EQ(dlsym(handle, "kvprefix_plugin_v1"), nullptr);
  // kvprefix::RadixTrie::MatchPrefix(TokenSpan) const
  EXPECT_EQ(dlsym(handle,
                  "_ZNK8kvprefix9RadixTrie11MatchPrefixESt4spanIKiLm"
                  "18446744073709551615EE"),
            nullptr);
  dlclose(handle);
}

TEST(PluginTest, NoCallIsInFlightOutsideAPlugin) {
  char buffer[64] = "unchanged";
  EXPECT_FALSE(DescribePluginCallInFlight(buffer, sizeof(buffer)));
  EXPECT_STREQ(buffer, "unchanged");
}

// Former bug: the crash ended the tool by the plugin's signal (SIGSEGV,
// status 139) after a line of its crash handler. The command runs the
// plugin in a child process now (cli/supervised.h): status 1, one line.
TEST(PluginTest, TheToolReportsACrashInsideThePluginNamingTheCall) {
  test::ScratchDir dir;
  const std::string input = dir.Path("input.json");
  test::WriteTextFile(input,
                      R"({"cached_sequences":[[1,2]],"requests":[[1],[2]]})");
  const test::ProgramRun run = test::RunProgram(
      KVPREFIX_CLI, {"match", input, "--threads", "1", "--engine",
                     Faulty(KVPREFIX_FAULTY_PLUGIN_crash)});
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err,
            "kvprefix: the plugin crashed: killed by signal 11 (Segmentation "
            "fault) in match #1 of plugin 'faulty' (" +
                std::string(KVPREFIX_FAULTY_PLUGIN_crash) + ")\n");
  EXPECT_EQ(run.out, "");
}

// exit() in a plugin's code ended the tool with the plugin's status, 0, as
// if the run had succeeded, with no output written (former bug: `match`
// exited 0 and wrote nothing, and a plugin exiting in its entry point made
// every command that named it "succeed"). The supervising process reports
// the call and ends with status 1; -o's file is not left behind.
TEST(PluginTest, AnExitInsideThePluginIsAFailureNamingTheCall) {
  test::ScratchDir dir;
  const std::string input = dir.Path("input.json");
  test::WriteTextFile(input,
                      R"({"cached_sequences":[[1,2]],"requests":[[1],[2]]})");
  const std::string output = dir.Path("out.json");
  const test::ProgramRun in_match = test::RunProgram(
      KVPREFIX_CLI, {"match", input, "--threads", "1", "-o", output, "--engine",
                     Faulty(KVPREFIX_FAULTY_PLUGIN_exit_in_match)});
  EXPECT_EQ(in_match.status, 1);
  EXPECT_EQ(in_match.err,
            "kvprefix: the plugin ended the process (exit or _exit, status 0) "
            "in match #1 of plugin 'faulty' (" +
                std::string(KVPREFIX_FAULTY_PLUGIN_exit_in_match) + ")\n");
  EXPECT_FALSE(std::filesystem::exists(output));
  const test::ProgramRun in_entry = test::RunProgram(
      KVPREFIX_CLI, {"match", input, "--engine",
                     Faulty(KVPREFIX_FAULTY_PLUGIN_exit_in_entry)});
  EXPECT_EQ(in_entry.status, 1);
  EXPECT_EQ(in_entry.err,
            "kvprefix: the plugin ended the process (exit or _exit, status 0) "
            "in loading (its constructors and entry point) of plugin " +
                std::string(KVPREFIX_FAULTY_PLUGIN_exit_in_entry) + "\n");
  EXPECT_EQ(in_entry.out, "");
}

// What each hostile plugin makes of every command that runs one, as
// `kvprefix <command> ... --engine plugin:PATH` reports it after
// "kvprefix: ".
struct HostilePlugin {
  std::string path;
  std::string report;
};

std::vector<HostilePlugin> HostilePlugins(const std::string& truncated) {
  const std::string exit_in_create =
      KVPREFIX_FAULTY_PLUGIN_underscore_exit_in_create;
  const std::string crash = KVPREFIX_FAULTY_PLUGIN_crash;
  const std::string hang = KVPREFIX_FAULTY_PLUGIN_hang_in_match;
  const std::string exit_in_match = KVPREFIX_FAULTY_PLUGIN_exit_in_match;
  return {
      {exit_in_create,
       "the plugin ended the process (exit or _exit, status 0) in create #1 "
       "of plugin 'faulty' (" +
           exit_in_create + ")"},
      {crash,
       "the plugin crashed: killed by signal 11 (Segmentation fault) in "
       "match #1 of plugin 'faulty' (" +
           crash + ")"},
      {hang, "the plugin hung: match #1 of plugin 'faulty' (" + hang +
                 ") did not return within 300 ms (--timeout) and was killed"},
      {exit_in_match,
       "the plugin ended the process (exit or _exit, status 0) in match #1 "
       "of plugin 'faulty' (" +
           exit_in_match + ")"},
      // dlopen maps the file, and reading its missing pages faults.
      {truncated,
       "the plugin crashed: killed by signal 7 (Bus error) in loading (its "
       "constructors and entry point) of plugin " +
           truncated}};
}

// Former bugs: a plugin's _exit(0) in create made `replay` exit 0 with
// nothing on stdout or stderr; its NULL dereference in match ended it by
// SIGSEGV (139), a truncated library by SIGBUS (135) while loading, and a
// match that never returns hung it for good (no --timeout). Every command
// that runs a plugin, replay of both inputs and match, now reports each
// with one line naming the plugin, the call and what happened, exit status
// 1, and nothing on stdout or in -o's file.
TEST(PluginTest, EveryCommandReportsAPluginsCrashExitOrHangInOneLine) {
  test::ScratchDir dir;
  const std::string truncated = dir.Path("truncated.so");
  const std::string whole = test::ReadTextFile(KVPREFIX_FAULTY_PLUGIN_none);
  test::WriteTextFile(truncated, whole.substr(0, 3000));
  const std::string document = dir.Path("document.json");
  test::WriteTextFile(document, R"({"requests":[[1,2],[1,2,3]]})");
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace, "{\"input_length\":1000,\"hash_ids\":[1,2]}\n");
  const std::string batch = dir.Path("batch.json");
  test::WriteTextFile(batch,
                      R"({"cached_sequences":[[1,2]],"requests":[[1],[2]]})");
  const std::string output = dir.Path("out.json");
  const std::vector<std::vector<std::string>> commands = {
      {"replay", document, "--input-format", "requests"},
      {"replay", trace},
      {"match", batch, "--threads", "1"}};
  for (const HostilePlugin& plugin : HostilePlugins(truncated)) {
    for (std::vector<std::string> arguments : commands) {
      arguments.insert(arguments.end(),
                       {"--engine", Faulty(plugin.path.c_str()), "--timeout",
                        "0.3", "-o", output});
      const test::ProgramRun run = test::RunProgram(KVPREFIX_CLI, arguments);
      const std::string command = arguments[0] + " " + arguments[1];
      EXPECT_EQ(run.status, 1) << command << "\n" << run.err;
      EXPECT_EQ(run.err, "kvprefix: " + plugin.report + "\n") << command;
      EXPECT_EQ(run.out, "") << command;
      EXPECT_FALSE(std::filesystem::exists(output)) << command;
    }
  }
}

// verify loaded a plugin in its own process before checking in a child:
// a truncated library ended it by SIGBUS (135) while loading. It loads the
// plugin in a child first now; a plugin that exits while checking is a
// crash of the input naming the call.
TEST(PluginTest, VerifyLoadsAPluginInAChildAndNamesAnExit) {
  test::ScratchDir dir;
  const std::string truncated = dir.Path("truncated.so");
  const std::string whole = test::ReadTextFile(KVPREFIX_FAULTY_PLUGIN_none);
  test::WriteTextFile(truncated, whole.substr(0, 3000));
  const std::vector<HostilePlugin> hostile = HostilePlugins(truncated);
  const test::ProgramRun load = test::RunProgram(
      KVPREFIX_CLI, {"verify", "--engines", Faulty(truncated.c_str()), "--runs",
                     "3", "--out", dir.Path("case.json")});
  EXPECT_EQ(load.status, 1);
  EXPECT_EQ(load.err, "kvprefix: " + hostile.back().report + "\n");
  EXPECT_EQ(load.out, "");
  const test::ProgramRun exit = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--engines", Faulty(hostile.front().path.c_str()), "--runs",
       "3", "--seed", "1", "--out", dir.Path("case.json")});
  EXPECT_EQ(exit.status, 1);
  EXPECT_EQ(exit.err, "kvprefix: verify failed: crash\n");
  EXPECT_THAT(exit.out, HasSubstr("\n" + hostile.front().report + "\n"));
}

// A plugin that succeeds runs as before under supervision: its output, its
// status, and a failure that is its own (a refusal: exit 2) as it was.
TEST(PluginTest, ASupervisedRunKeepsItsOutputAndItsErrors) {
  test::ScratchDir dir;
  const std::string document = Written(
      dir, "document.json", R"({"requests":[[1,2],[1,2,3]],"page_size":2})");
  const std::string output = dir.Path("out.json");
  const test::ProgramRun replay = test::RunProgram(
      KVPREFIX_CLI, {"replay", document, "--input-format", "requests",
                     "--engine", kRadix, "-o", output});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(replay.err, "");
  EXPECT_EQ(test::ReadTextFile(output),
            R"({"matches":[{"matched_length":0,"cache_node":0,)"
            R"("uncached_suffix":[1,2]},{"matched_length":2,"cache_node":1,)"
            R"("uncached_suffix":[3]}]})"
            "\n");
  const test::ProgramRun refused = test::RunProgram(
      KVPREFIX_CLI, {"replay", document, "--input-format", "requests",
                     "--engine", Faulty(KVPREFIX_FAULTY_PLUGIN_pages_only_1)});
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.err, "kvprefix: plugin 'faulty' (" +
                             std::string(KVPREFIX_FAULTY_PLUGIN_pages_only_1) +
                             ") refuses unbounded, lru, page size 2: only page "
                             "size 1\n");
  EXPECT_EQ(refused.out, "");
  const test::ProgramRun help =
      test::RunProgram(KVPREFIX_CLI, {"replay", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--timeout FLOAT:NUMBER in [0.001 - "
                                  "1000000]=60\n"));
}

// Former bug: a plugin's name holding a newline split verify's report (and
// replay's summary line) in two, and an escape sequence in it reached the
// terminal. Names a plugin gives are escaped in every report.
TEST(PluginTest, APluginsNameIsEscapedInReports) {
  test::ScratchDir dir;
  const std::string path = KVPREFIX_FAULTY_PLUGIN_newline_name;
  const test::ProgramRun verify = test::RunProgram(
      KVPREFIX_CLI, {"verify", "--engines", Faulty(path.c_str()), "--runs",
                     "20", "--seed", "1", "--out", dir.Path("case.json")});
  EXPECT_EQ(verify.status, 1);
  EXPECT_THAT(verify.out,
              HasSubstr("\nengine 'plugin:fau\\nlty\\u001b[31m' disagrees "
                        "with the reference after 1 operations"));
  EXPECT_THAT(verify.out,
              HasSubstr("\n  actual (plugin:fau\\nlty\\u001b[31m): "));
  EXPECT_EQ(verify.out.find('\x1b'), std::string::npos);
  const std::string trace = Written(
      dir, "trace.jsonl", "{\"input_length\":1000,\"hash_ids\":[1,2]}\n");
  const test::ProgramRun replay = test::RunProgram(
      KVPREFIX_CLI, {"replay", trace, "--engine", Faulty(path.c_str())});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_THAT(replay.out,
              ::testing::StartsWith(
                  "{\"engine\":\"plugin:fau\\nlty\\u001b[31m\",\"mode\""));
  EXPECT_EQ(std::count(replay.out.begin(), replay.out.end(), '\n'), 1);
}

// A refusal's message is cut at the buffer's end, as the header promises
// (former bug: create's refusal path read a message without a NUL past the
// buffer, printing the stack after it).
TEST(PluginTest, AnUnterminatedRefusalIsCutAtTheBuffer) {
  const char* path = KVPREFIX_FAULTY_PLUGIN_unterminated;
  EXPECT_EQ(ThrownMessage<std::invalid_argument>(
                [&] { MakeEngine(Faulty(path), CacheOptions{}); }),
            "plugin 'faulty' (" + std::string(path) +
                ") refuses unbounded, lru, page size 1: " +
                std::string(KVPREFIX_ERROR_MESSAGE_SIZE - 1, 'A'));
}

// Former bug: the crash handlers were one-shot (SA_RESETHAND), so when a
// plugin faulted on several of match's threads at once the second fault
// took the default action and ended the process in the middle of the first
// one's report ("kvprefix: the plugin crashed (" and nothing more; about 4
// runs in 10 on 16 threads). One crash is reported now, whole.
TEST(PluginTest, CrashesOnManyThreadsAtOnceGiveOneWholeReport) {
  test::ScratchDir dir;
  const std::string input = dir.Path("input.json");
  std::string requests;
  for (int i = 0; i < 200; ++i) requests += "[1],";
  test::WriteTextFile(input, R"({"cached_sequences":[[1,2]],"requests":[)" +
                                 requests + "[2]]}");
  for (int run = 0; run < 20; ++run) {
    const test::ProgramRun result = test::RunProgram(
        KVPREFIX_CLI, {"match", input, "--threads", "16", "--engine",
                       Faulty(KVPREFIX_FAULTY_PLUGIN_crash)});
    ASSERT_EQ(result.status, 1) << "run " << run;
    ASSERT_THAT(result.err,
                ::testing::MatchesRegex(
                    "kvprefix: the plugin crashed: killed by signal 11 "
                    "\\(Segmentation fault\\) in match #[0-9]+ of plugin "
                    "'faulty' \\(.*\\)\n"))
        << "run " << run;
  }
}

TEST(PluginTest, TheToolRunsAPluginWhereverItTakesAnEngine) {
  test::ScratchDir dir;
  const std::string input = dir.Path("input.json");
  test::WriteTextFile(input,
                      R"({"cached_sequences":[[1,2]],"requests":[[1,3]]})");
  const test::ProgramRun match =
      test::RunProgram(KVPREFIX_CLI, {"match", input, "--engine", kRadix});
  const test::ProgramRun built_in =
      test::RunProgram(KVPREFIX_CLI, {"match", input, "--engine", "radix"});
  EXPECT_EQ(match.status, 0) << match.err;
  EXPECT_EQ(match.out, built_in.out);
  const test::ProgramRun unknown = test::RunProgram(
      KVPREFIX_CLI, {"match", input, "--engine", "plugin:/nonexistent.so"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_THAT(unknown.err, HasSubstr("kvprefix: plugin /nonexistent.so: "
                                     "cannot load: "));
  const test::ProgramRun verify = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--engines", kRadix, "--runs", "200", "--seed", "3"});
  EXPECT_EQ(verify.status, 0) << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("OK: 200 inputs agree with the reference"));
}

// replay's summary named a plugin by its table's name alone: "radix" for
// the radix plugin, as the built-in radix engine.
TEST(PluginTest, ReplayNamesThePluginPluginColonItsName) {
  test::ScratchDir dir;
  const std::string trace = dir.Path("trace.jsonl");
  test::WriteTextFile(trace,
                      "{\"input_length\":1000,\"hash_ids\":[1,2]}\n"
                      "{\"input_length\":1000,\"hash_ids\":[1,3]}\n");
  const std::pair<std::string, std::string> engines[] = {
      {kRadix, "plugin:radix"}, {"radix", "radix"}};
  for (const auto& [engine, name] : engines) {
    const test::ProgramRun replay =
        test::RunProgram(KVPREFIX_CLI, {"replay", trace, "--engine", engine});
    EXPECT_EQ(replay.status, 0) << replay.err;
    EXPECT_THAT(replay.out, HasSubstr("{\"engine\":\"" + name + "\","));
  }
}

// `kvprefix verify --engines PLUGIN --runs 200 --seed 1` with `more`
// options, the case file written to `case_file`.
test::ProgramRun VerifyPlugin(const char* path, const std::string& case_file,
                              std::vector<std::string> more = {}) {
  std::vector<std::string> arguments = {
      "verify", "--engines", Faulty(path), "--runs", "200",    "--seed",
      "1",      "--jobs",    "3",          "--out",  case_file};
  arguments.insert(arguments.end(), more.begin(), more.end());
  return test::RunProgram(KVPREFIX_CLI, arguments);
}

// The case file verify writes for a batch input failing with `kind` on
// generated input `run` of --seed 1.
std::string CaseFile(const std::string& input, const std::string& expected,
                     const char* path, const std::string& kind, int run) {
  return "{" + input + ",\"expected\":{\"matches\":[" + expected +
         "]},\"source\":\"kvprefix verify --engines plugin:" + path + ": " +
         kind + " on generated input " + std::to_string(run) +
         " (--seed 1, size " + std::to_string(run) + ")\"}\n";
}

// A plugin runs in verify's process, so verify checks in a child process:
// the plugin's crash is a failure of the input in flight, found by several
// jobs at once, shrunk (one child per candidate) and written as any other.
TEST(PluginTest, VerifyReportsACrashingPluginWithItsShrunkInput) {
  test::ScratchDir dir;
  const std::string case_file = dir.Path("case.json");
  const char* path = KVPREFIX_FAULTY_RADIX_PLUGIN_crash;
  const test::ProgramRun run = VerifyPlugin(path, case_file);
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err, "kvprefix: verify failed: crash\n");
  EXPECT_THAT(run.out,
              HasSubstr("\nFAILED: crash on generated input 33 (--seed 1, "
                        "size 33)\n"));
  EXPECT_THAT(run.out, HasSubstr("\nthe plugin crashed: killed by signal 11 "
                                 "(Segmentation fault) in match #1 of plugin "
                                 "'radix' (" +
                                 std::string(path) + ")\n"));
  EXPECT_EQ(test::ReadTextFile(case_file),
            CaseFile(R"("cached_sequences":[[],[]],"requests":[[3]])",
                     R"({"matched_length":0,"cache_node":0,)"
                     R"("uncached_suffix":[3]})",
                     path, "crash", 33));
}

TEST(PluginTest, VerifyReportsAHangingPluginWithItsShrunkInput) {
  test::ScratchDir dir;
  const std::string case_file = dir.Path("case.json");
  const char* path = KVPREFIX_FAULTY_RADIX_PLUGIN_hang;
  const test::ProgramRun run =
      VerifyPlugin(path, case_file, {"--timeout", "0.2"});
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err, "kvprefix: verify failed: timeout\n");
  EXPECT_THAT(run.out, HasSubstr("\nFAILED: timeout on generated input 53"));
  EXPECT_THAT(run.out, HasSubstr("\nthe plugin hung: match #1 of plugin "
                                 "'radix' (" +
                                 std::string(path) +
                                 ") did not return within 200 ms (--timeout) "
                                 "and was killed\n"));
  EXPECT_EQ(test::ReadTextFile(case_file),
            CaseFile(R"("cached_sequences":[],"requests":[[4,0,4]])",
                     R"({"matched_length":0,"cache_node":0,)"
                     R"("uncached_suffix":[4,0,4]})",
                     path, "timeout", 53));
}

// Expects `run` to be verify's success on `checked` inputs having skipped
// `skipped` whose cache a plugin refuses, the first for `first_refusal`
// (the plugin's "plugin 'name' (path) refuses OPTIONS: REASON").
void ExpectPassedAndSkipped(const test::ProgramRun& run, int checked,
                            int skipped, const std::string& first_refusal) {
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("OK: " + std::to_string(checked) +
                                 " inputs agree with the reference"));
  EXPECT_THAT(run.out, HasSubstr("\nskipped: " + std::to_string(skipped) +
                                 " inputs whose cache an engine refuses, the "
                                 "first: " +
                                 first_refusal + "\n"));
}

// A cache need not implement every policy: a plugin that refuses lfu
// (create answers KVPREFIX_INVALID_ARGUMENT) is no failure. verify skips
// the documents it refuses, counts them after the OK line with the first
// refusal, and checks the rest (62 of seed 1's first 200 documents are
// lfu ones, a third as the generator draws them).
TEST(PluginTest, VerifySkipsTheInputsAPluginRefuses) {
  const char* path = KVPREFIX_FAULTY_RADIX_PLUGIN_refuse_lfu;
  const test::ProgramRun run =
      test::RunProgram(KVPREFIX_CLI, {"verify", "--engines", Faulty(path),
                                      "--format", "requests", "--runs", "200",
                                      "--seed", "1", "--jobs", "3"});
  ExpectPassedAndSkipped(run, 138, 62,
                         "plugin 'radix' (" + std::string(path) +
                             ") refuses capacity 0, lfu, page size 3: this "
                             "cache implements lru and fifo only");
  EXPECT_THAT(run.out, HasSubstr("policy lru 49.3% fifo 50.7% lfu 0.0%"));
  // Batch inputs are unbounded lru: nothing is refused, nothing skipped.
  const test::ProgramRun batch = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--engines", Faulty(path), "--runs", "50", "--seed", "1"});
  EXPECT_EQ(batch.status, 0) << batch.out << batch.err;
  EXPECT_THAT(batch.out, HasSubstr("OK: 50 inputs agree with the reference"));
  EXPECT_THAT(batch.out, ::testing::Not(HasSubstr("skipped")));
}

// verify could not be told what a plugin implements: a third of the
// documents above were spent on lfu, which it refuses. --policies
// generates only the policies it takes: none is skipped.
TEST(PluginTest, VerifyGeneratesOnlyThePoliciesAPluginImplements) {
  const char* path = KVPREFIX_FAULTY_RADIX_PLUGIN_refuse_lfu;
  const test::ProgramRun run = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--engines", Faulty(path), "--format", "requests", "--runs",
       "200", "--seed", "1", "--jobs", "3", "--policies", "lru,fifo"});
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("generating replay documents with --seed 1 "
                                 "--policies lru,fifo\nOK: 200 inputs agree "
                                 "with the reference"));
  EXPECT_THAT(run.out, HasSubstr(" lfu 0.0%"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("skipped")));
}

TEST(PluginTest, VerifyReportsAPluginsImpossibleAnswerAsThePluginsFault) {
  test::ScratchDir dir;
  const std::string case_file = dir.Path("case.json");
  const char* path = KVPREFIX_FAULTY_RADIX_PLUGIN_garbage;
  const test::ProgramRun run = VerifyPlugin(path, case_file);
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err, "kvprefix: verify failed: crash\n");
  EXPECT_THAT(run.out, HasSubstr("\nthe plugin failed: plugin 'radix' (" +
                                 std::string(path) +
                                 "): match returned matched_length 2 for a "
                                 "request of 1 tokens\n"));
  EXPECT_EQ(test::ReadTextFile(case_file),
            CaseFile(R"("cached_sequences":[],"requests":[[5]])",
                     R"({"matched_length":0,"cache_node":0,)"
                     R"("uncached_suffix":[5]})",
                     path, "crash", 2));
}

// --- The models of SPEC §9 (plugin ABI 2) ----------------------------------

// The block pool and the radix cache exported (model_plugin.cc).
const std::string kVllm = std::string("plugin:") + KVPREFIX_VLLM_PLUGIN;
const std::string kSglang = std::string("plugin:") + KVPREFIX_SGLANG_PLUGIN;

// The test plugin of `model`: the radix trie over pages for spec.
const std::string& PluginOf(CacheModel model) {
  switch (model) {
    case CacheModel::kSpec:
      return kRadix;
    case CacheModel::kVllm:
      return kVllm;
    case CacheModel::kSglang:
      return kSglang;
  }
  return kRadix;
}

CacheOptions Vllm(std::uint64_t capacity) {
  return {.capacity = capacity,
          .model = CacheModel::kVllm,
          .match_limit = MatchLimit::kAllButLast};
}

// Every shared model case on its model's plugin, through the differential
// checker as verify and the fuzzer run it (node IDs, counts and evicted
// pages compared after every request) and against the answers the real
// vLLM and SGLang code gave.
TEST(PluginModelTest, ModelPluginsAgreeWithTheReferenceOnTheSharedCases) {
  const std::vector<ReplayCaseFile> cases = test::LoadModelCases();
  ASSERT_EQ(cases.size(), 30u);
  std::map<CacheModel, int> checked;
  for (const ReplayCaseFile& shared : cases) {
    const CacheOptions& options = shared.input.options;
    const std::string& plugin = PluginOf(options.model);
    EXPECT_EQ(test::ReplayAnswers(plugin, options, shared.input.requests),
              shared.expected)
        << shared.name;
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.push_back(MakeEngine(plugin, options));
    checking::DifferentialChecker checker(options, std::move(engines));
    EXPECT_EQ(checker.ApplyReplay(shared.input), std::nullopt) << shared.name;
    ++checked[options.model];
  }
  EXPECT_EQ(checked, (std::map<CacheModel, int>{{CacheModel::kSpec, 2},
                                                {CacheModel::kVllm, 13},
                                                {CacheModel::kSglang, 15}}));
}

// Each model plugin refuses the models it does not implement, by its
// constructor's std::invalid_argument; the radix trie over pages refuses
// vllm and sglang (it answered SPEC §8 for them before PagedIndex passed
// the model on: cache_test.cc's PagedIndexTest).
TEST(PluginModelTest, APluginRefusesTheModelsItDoesNotImplement) {
  EXPECT_EQ(ThrownMessage<std::invalid_argument>(
                [] { MakeEngine(kVllm, CacheOptions{.capacity = 4}); }),
            "plugin 'hash' (" + std::string(KVPREFIX_VLLM_PLUGIN) +
                ") refuses capacity 4, lru, page size 1: hash block pool: "
                "the model is not vllm");
  EXPECT_EQ(ThrownMessage<std::invalid_argument>(
                [] { MakeEngine(kSglang, Vllm(4)); }),
            "plugin 'radix' (" + std::string(KVPREFIX_SGLANG_PLUGIN) +
                ") refuses capacity 4, lru, page size 1, model vllm, match "
                "limit all-but-last: radix cache: the model is not sglang");
  EXPECT_EQ(ThrownMessage<std::invalid_argument>([] {
              MakeEngine(kRadix,
                         CacheOptions{.model = CacheModel::kSglang,
                                      .trigger = EvictionTrigger::kOnAllocate});
            }),
            "plugin 'radix' (" + std::string(KVPREFIX_RADIX_PLUGIN) +
                ") refuses unbounded, lru, page size 1, model sglang, match "
                "limit all, trigger on-allocate: radix: a trie engine follows "
                "model \"spec\"; model \"sglang\" is its own structure's");
  // SPEC §9.4's rules hold before any plugin is asked.
  CacheOptions fifo = Vllm(4);
  fifo.policy = EvictionPolicy::kFifo;
  EXPECT_THAT(
      ThrownMessage<std::invalid_argument>([&] { MakeEngine(kVllm, fifo); }),
      HasSubstr("policy: model \"vllm\" has one order"));
}

// KVPREFIX_EXPORT_PLUGIN's create reads the names with the core's lists
// and refuses one it does not know before the class's constructor runs.
TEST(PluginModelTest, TheExportRefusesUnknownNamesBeforeTheConstructor) {
  void* handle = dlopen(KVPREFIX_VLLM_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const auto entry = reinterpret_cast<kvprefix_plugin_entry>(
      dlsym(handle, KVPREFIX_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  const kvprefix_plugin& table = *entry();
  EXPECT_EQ(table.abi_version, 2u);
  const auto create = [&](kvprefix_cache_options options) {
    kvprefix_cache* cache = nullptr;
    kvprefix_error error;
    const kvprefix_status status = table.create(&options, &cache, &error);
    if (status == KVPREFIX_OK) table.destroy(cache);
    return std::make_pair(status, status == KVPREFIX_OK
                                      ? std::string()
                                      : std::string(error.message));
  };
  const kvprefix_cache_options vllm = {kUnbounded,     "lru",         1, "vllm",
                                       "all-but-last", "after-insert"};
  EXPECT_EQ(create(vllm), std::make_pair(KVPREFIX_OK, std::string()));
  // One name of `vllm` changed, and create's refusal.
  struct Refused {
    const char* kvprefix_cache_options::*member;
    const char* name;
    std::string message;
  };
  const Refused refused[] = {
      {&kvprefix_cache_options::model, "vLLM",
       "unknown model 'vLLM' (expected 'spec', 'vllm' or 'sglang')"},
      {&kvprefix_cache_options::match_limit, nullptr,
       "unknown match limit '' (expected 'all' or 'all-but-last')"},
      {&kvprefix_cache_options::trigger, "before-insert",
       "unknown trigger 'before-insert' (expected 'after-insert' or "
       "'on-allocate')"},
      {&kvprefix_cache_options::policy, "mru",
       "unknown eviction policy 'mru' (expected 'lru', 'fifo' or 'lfu')"},
      // A known name the class does not implement: its constructor's.
      {&kvprefix_cache_options::model, "spec",
       "hash block pool: the model is not vllm"}};
  for (const Refused& expected : refused) {
    kvprefix_cache_options options = vllm;
    options.*expected.member = expected.name;
    EXPECT_EQ(create(options),
              std::make_pair(KVPREFIX_INVALID_ARGUMENT, expected.message));
  }
  dlclose(handle);
}

// A plugin built for ABI version 1 loads and runs model spec as before; it
// is refused any other model (and spec's match limit all-but-last) by name,
// on its behalf, since its create could not read them.
TEST(PluginModelTest, APluginBuiltForAbi1IsRefusedEveryModelButSpec) {
  const char* path = KVPREFIX_FAULTY_PLUGIN_abi_1;
  const auto spec = MakeEngine(Faulty(path), CacheOptions{.capacity = 4});
  EXPECT_EQ(spec->name(), "plugin:faulty");
  EXPECT_EQ(spec->Access(std::vector<Token>{1, 2}), (Match{0, 0}));
  EXPECT_EQ(
      ThrownMessage<std::invalid_argument>(
          [&] { MakeEngine(Faulty(path), Vllm(4)); }),
      "plugin 'faulty' (" + std::string(path) +
          ") refuses capacity 4, lru, page size 1, model vllm, match limit "
          "all-but-last: built for ABI 1, which has no model");
  EXPECT_THAT(ThrownMessage<std::invalid_argument>([&] {
                MakeEngine(
                    Faulty(path),
                    CacheOptions{.match_limit = MatchLimit::kAllButLast});
              }),
              HasSubstr(") refuses unbounded, lru, page size 1, model spec, "
                        "match limit all-but-last: built for ABI 1, which has "
                        "no model"));
  // verify refuses to call a run OK when it checked nothing: the only
  // document, a vllm one, is refused (former bug: "OK: 0 inputs agree",
  // exit 0).
  const test::ProgramRun run = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--format", "requests", "--engines", Faulty(path),
       test::SharedCasesDir() + "/models/v1-cap-unbounded.json"});
  EXPECT_EQ(run.status, 2) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("OK:")));
  EXPECT_THAT(run.err,
              HasSubstr("verify: nothing checked: an engine refuses the cache "
                        "of each of the 1 inputs, the first: plugin 'faulty' "
                        "(" +
                        std::string(path) +
                        ") refuses unbounded, lru, page size 1, model vllm, "
                        "match limit all-but-last: built for ABI 1, which has "
                        "no model"));
}

// `kvprefix verify --cases tests/data/cases/models` passes each model
// plugin on the documents of its model and skips the others, which it
// refuses (the first refused, s1-whole-edge.json, is sglang's; spec's
// first is spec-cap-page2.json). Former bug: verify built each plugin once
// with the default options to check that it loads, so a plugin refusing
// them (the block pool: "the model is not vllm") was a usage error, exit 2.

TEST(PluginModelTest, VerifyPassesTheModelPluginsOnTheSharedModelCases) {
  struct Expected {
    const std::string& plugin;
    int checked;
    int skipped;
    std::string first_refusal;
  };
  const Expected runs[] = {
      {kVllm, 13, 17,
       "plugin 'hash' (" + std::string(KVPREFIX_VLLM_PLUGIN) +
           ") refuses capacity 2, lru, page size 1, model sglang, match limit "
           "all: hash block pool: the model is not vllm"},
      {kSglang, 15, 15,
       "plugin 'radix' (" + std::string(KVPREFIX_SGLANG_PLUGIN) +
           ") refuses unbounded, lru, page size 2, model spec, match limit "
           "all-but-last: radix cache: the model is not sglang"}};
  for (const Expected& expected : runs) {
    const test::ProgramRun run = test::RunProgram(
        KVPREFIX_CLI,
        {"verify", "--format", "requests", "--engines", expected.plugin,
         "--cases", test::SharedCasesDir() + "/models", "--jobs", "2"});
    ExpectPassedAndSkipped(run, expected.checked, expected.skipped,
                           expected.first_refusal);
    // The cases' answers are the reference's.
    EXPECT_THAT(run.out, ::testing::Not(HasSubstr("warning")));
  }
}

// A v2 plugin that reads no model answers SPEC §8 for a vllm document:
// verify checks it (it is not refused) and catches the wrong answer, with
// the document's options in the report. On a spec document with match
// limit all, SPEC §8's own, it passes.
TEST(PluginModelTest, VerifyCatchesAPluginThatIgnoresTheModel) {
  test::ScratchDir dir;
  const char* path = KVPREFIX_FAULTY_RADIX_PLUGIN_ignore_model;
  const std::string models = test::SharedCasesDir() + "/models/";
  const test::ProgramRun vllm = test::RunProgram(
      KVPREFIX_CLI,
      {"verify", "--format", "requests", "--engines", Faulty(path),
       models + "v1-cap-unbounded.json", "--out", dir.Path("case.json")});
  EXPECT_EQ(vllm.status, 1) << vllm.out << vllm.err;
  EXPECT_EQ(vllm.err, "kvprefix: verify failed: wrong-answer\n");
  EXPECT_THAT(vllm.out, ::testing::StartsWith(
                            "FAILED: wrong-answer on file " + models +
                            "v1-cap-unbounded.json\nshrunk in 16 checks from "
                            "2 requests (4 tokens; unbounded, page size 1, "
                            "model vllm, match limit all-but-last) to 2 "
                            "requests (2 tokens; unbounded, page size 1, "
                            "model spec, match limit all-but-last)\n"));
  // Shrunk to the simpler model spec, where its match limit all-but-last
  // (which the plugin ignores too) still tells them apart.
  EXPECT_THAT(vllm.out,
              HasSubstr("\n  #0 access [0]\n  #1 access [0]\n  expected "
                        "(reference): access matches (matched_length 0, "
                        "cache_node 0)\n  actual (plugin:radix): access "
                        "matches (matched_length 1, cache_node 1)\n"));
  const test::ProgramRun spec = test::RunProgram(
      KVPREFIX_CLI, {"verify", "--format", "requests", "--engines",
                     Faulty(path), models + "spec-default.json"});
  EXPECT_EQ(spec.status, 0) << spec.out << spec.err;
  EXPECT_THAT(spec.out, HasSubstr("OK: 1 inputs agree with the reference"));
}

#ifdef KVPREFIX_DIFFERENTIAL_FUZZER
// The differential fuzzer's seed corpus (fuzz/corpus/differential_fuzzer/,
// the shared model cases among its seeds) with KVPREFIX_FUZZ_ENGINES set to
// plugin `engine`, replayed as ctest does.
test::ProgramRun FuzzCorpusWith(const std::string& engine,
                                const std::string& flag = "-timeout=1200") {
  return test::RunProgram("/usr/bin/env", {"KVPREFIX_FUZZ_ENGINES=" + engine,
                                           KVPREFIX_DIFFERENTIAL_FUZZER, flag,
                                           KVPREFIX_DIFFERENTIAL_CORPUS});
}

// The replay program names the input a crash or a timeout happened on (it
// used to end with the signal alone, the input unnamed among the corpus'
// hundreds), and ends a hanging input after -timeout=N s with libFuzzer's
// status 70 (it used to wait for ever). The faulty plugins strike on the
// corpus' first input whose fault fires; its name is what matters.
TEST(PluginModelTest, TheFuzzReplayNamesTheInputOfACrashOrATimeout) {
  const std::string corpus = KVPREFIX_DIFFERENTIAL_CORPUS;
  const test::ProgramRun crash =
      FuzzCorpusWith(Faulty(KVPREFIX_FAULTY_RADIX_PLUGIN_crash));
  EXPECT_EQ(crash.signal, SIGSEGV) << crash.err;
  EXPECT_THAT(crash.err,
              ::testing::MatchesRegex("(.|\n)*replay: SIGSEGV on input " +
                                      corpus + "/[^\n/]+\n(.|\n)*"));
  const test::ProgramRun hang =
      FuzzCorpusWith(Faulty(KVPREFIX_FAULTY_RADIX_PLUGIN_hang), "-timeout=1");
  EXPECT_EQ(hang.status, 70) << hang.err;
  EXPECT_THAT(hang.err,
              ::testing::MatchesRegex("(.|\n)*replay: timeout on input " +
                                      corpus + "/[^\n/]+\n(.|\n)*"));
  const test::ProgramRun flag = FuzzCorpusWith("radix", "-timeout=soon");
  EXPECT_EQ(flag.status, 1);
  EXPECT_THAT(flag.err, HasSubstr("replay: -timeout=N takes whole seconds"));
}

// A folder the replay program cannot walk (a symlink loop) is a path it
// cannot read, exit 1, not a crash of the target. Former bug: the
// filesystem_error escaped main, SIGABRT (exit 134), like a finding.
TEST(PluginModelTest, TheFuzzReplayReportsAnUnreadablePath) {
  test::ScratchDir dir;
  std::filesystem::create_directory_symlink(dir.Path("b"), dir.Path("a"));
  std::filesystem::create_directory_symlink(dir.Path("a"), dir.Path("b"));
  const test::ProgramRun run =
      test::RunProgram(KVPREFIX_DIFFERENTIAL_FUZZER, {dir.Path("a")});
  EXPECT_EQ(run.signal, 0) << run.err;
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(run.err, "replay: cannot read " + dir.Path("a") +
                         ": Too many levels of symbolic links\n");
  // A FIFO no one writes to runs out its -timeout (it used to block for
  // ever: the clock started after the read).
  ASSERT_EQ(mkfifo(dir.Path("fifo").c_str(), 0600), 0);
  const test::ProgramRun fifo = test::RunProgram(
      KVPREFIX_DIFFERENTIAL_FUZZER, {"-timeout=1", dir.Path("fifo")});
  EXPECT_EQ(fifo.status, 70) << fifo.err;
  EXPECT_EQ(fifo.err, "replay: timeout on input " + dir.Path("fifo") + "\n");
}

// The fuzzer builds a plugin with the input's model: the model plugins
// pass the corpus (refusing the other models' inputs), and the plugin that
// ignores the model is caught on an input of another model than spec.
// Former bug: the fuzzer built each KVPREFIX_FUZZ_ENGINES engine once with
// the default options to check its name, so a plugin refusing them (the
// block pool: "the model is not vllm") was a usage error, exit 2, and one
// that could not load an uncaught PluginError (abort).
// The differential fuzzer never said how many inputs it skipped, and could
// not be told what a cache implements: it reports at exit what it checked
// and skipped (and the first refusal), and KVPREFIX_FUZZ_POLICIES (with
// the other KVPREFIX_FUZZ_* lists) makes every input one the cache takes.
TEST(PluginModelTest, TheDifferentialFuzzerSaysWhatItSkippedAndTakesOptions) {
  // The plugin, a radix trie over pages, follows model spec with match
  // limit all alone.
  const std::string plugin = Faulty(KVPREFIX_FAULTY_RADIX_PLUGIN_refuse_lfu);
  const test::ProgramRun all = test::RunProgram(
      "/usr/bin/env",
      {"KVPREFIX_FUZZ_ENGINES=" + plugin, "KVPREFIX_FUZZ_MODELS=spec",
       "KVPREFIX_FUZZ_MATCH_LIMITS=all", KVPREFIX_DIFFERENTIAL_FUZZER,
       KVPREFIX_DIFFERENTIAL_CORPUS});
  EXPECT_EQ(all.status, 0) << all.err;
  EXPECT_THAT(all.err,
              ::testing::MatchesRegex(
                  "(.|\n)*differential_fuzzer: checked [1-9][0-9]* inputs, "
                  "skipped [1-9][0-9]* \\([0-9]+ refused, the first: plugin "
                  "'radix' \\([^)]*\\) refuses [^\n]*lfu[^\n]*: this cache "
                  "implements lru and fifo only; 0 longer than 16384 "
                  "bytes\\)\n(.|\n)*"));
  const test::ProgramRun only = test::RunProgram(
      "/usr/bin/env",
      {"KVPREFIX_FUZZ_ENGINES=" + plugin, "KVPREFIX_FUZZ_MODELS=spec",
       "KVPREFIX_FUZZ_MATCH_LIMITS=all", "KVPREFIX_FUZZ_POLICIES=lru,fifo",
       KVPREFIX_DIFFERENTIAL_FUZZER, KVPREFIX_DIFFERENTIAL_CORPUS});
  EXPECT_EQ(only.status, 0) << only.err;
  EXPECT_THAT(only.err, ::testing::MatchesRegex(
                            "(.|\n)*differential_fuzzer: checked [1-9][0-9]* "
                            "inputs, skipped 0\n(.|\n)*"));
  const test::ProgramRun bad =
      test::RunProgram("/usr/bin/env", {"KVPREFIX_FUZZ_PAGE_SIZES=0",
                                        KVPREFIX_DIFFERENTIAL_FUZZER,
                                        KVPREFIX_DIFFERENTIAL_CORPUS});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err,
            "KVPREFIX_FUZZ_PAGE_SIZES: '0' is not a page size (an integer "
            "from 1 to 2147483647)\n");
}

TEST(PluginModelTest, TheDifferentialFuzzerGivesAPluginTheModel) {
  for (const std::string& plugin : {kVllm, kSglang, kRadix}) {
    const test::ProgramRun run = FuzzCorpusWith(plugin);
    EXPECT_EQ(run.status, 0) << plugin << "\n" << run.err;
  }
  const test::ProgramRun ignoring =
      FuzzCorpusWith(Faulty(KVPREFIX_FAULTY_RADIX_PLUGIN_ignore_model));
  EXPECT_EQ(ignoring.signal, SIGABRT);
  EXPECT_THAT(ignoring.err,
              ::testing::MatchesRegex(
                  "(.|\n)*engine 'plugin:radix' disagrees with the reference "
                  "after [0-9]+ operations \\([^)]*, model (vllm|sglang), "
                  "match limit [a-z-]+\\)\n(.|\n)*"));
  // Set but empty: a usage error, not every engine (former bug).
  const test::ProgramRun empty = FuzzCorpusWith("");
  EXPECT_EQ(empty.status, 2);
  EXPECT_THAT(empty.err, ::testing::StartsWith("KVPREFIX_FUZZ_ENGINES: empty"));
  const test::ProgramRun missing = FuzzCorpusWith("plugin:/nonexistent.so");
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.err,
              ::testing::StartsWith("KVPREFIX_FUZZ_ENGINES: plugin "
                                    "/nonexistent.so: cannot load: "));
}
#endif

}  // namespace
}  // namespace kvprefix
