// Checkers for external commands and built-in engines: see checker.h.
#include "verify/checker.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "checking/differential.h"
#include "engines/registry.h"
#include "io/json_output.h"
#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "plugin/plugin_engine.h"
#include "reference/reference_trie.h"
#include "verify/output_check.h"

namespace kvprefix::verify {
namespace {

// Lines of the child's standard error quoted in a crash report.
constexpr std::size_t kStderrLinesShown = 8;

std::string StderrTail(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty()) return " (standard error was empty)";
  std::size_t begin = text.size();
  for (std::size_t lines = 0; begin > 0 && lines < kStderrLinesShown; ++lines) {
    begin = text.rfind('\n', begin - 1);
    if (begin == std::string_view::npos) {
      begin = 0;
      break;
    }
  }
  std::string tail;
  for (char c : text.substr(begin)) {
    if (tail.empty() || c == '\n') tail += "\n  | ";
    if (c != '\n') tail += c;
  }
  return "; standard error ends:" + tail;
}

// What the command reads: a SPEC §4 document or a SPEC §8 replay document.
void AppendInputJson(const BatchInput& input, std::string& out) {
  AppendBatchInputJson(input, out);
}
void AppendInputJson(const ReplayInput& input, std::string& out) {
  AppendReplayDocumentJson(input, out);
}

// The cache the engines under test are built with, and what is applied.
CacheOptions OptionsOf(const BatchInput&) { return CacheOptions{}; }
CacheOptions OptionsOf(const ReplayInput& input) { return input.options; }
std::optional<std::string> Apply(checking::DifferentialChecker& checker,
                                 const BatchInput& input) {
  return checker.ApplyBatch(input);
}
std::optional<std::string> Apply(checking::DifferentialChecker& checker,
                                 const ReplayInput& input) {
  return checker.ApplyReplay(input);
}

template <typename Input>
std::optional<Failure> CheckRun(const CommandOptions& options,
                                const Input& input) {
  std::string json;
  AppendInputJson(input, json);
  const std::vector<Match> expected = ReferenceMatches(input);
  std::string canonical;
  AppendMatchesJson(input.requests, expected, canonical);
  SubprocessOptions run_options;
  run_options.timeout = options.timeout;
  run_options.max_output_bytes = 16 * canonical.size() + (1 << 20);
  const SubprocessResult run =
      RunSubprocess(options.command, json, run_options);
  switch (run.kind) {
    case ExitKind::kTimedOut:
      return Failure{FailureKind::kTimeout,
                     fmt::format("no answer within {} ms; the process group "
                                 "was killed",
                                 options.timeout.count())};
    case ExitKind::kOutputLimit:
      return Failure{
          FailureKind::kOutputLimit,
          fmt::format("printed more than {} bytes where the answer "
                      "has {}; the process group was killed",
                      run_options.max_output_bytes, canonical.size())};
    case ExitKind::kSignaled:
      return Failure{
          FailureKind::kCrash,
          fmt::format("killed by signal {} ({}){}", run.signal,
                      ::strsignal(run.signal), StderrTail(run.stderr_data))};
    case ExitKind::kExited:
      break;
  }
  if (run.exit_status != 0) {
    // /bin/sh reports a child killed by signal N as status 128 + N.
    const int signal = run.exit_status - 128;
    const std::string hint =
        signal > 0 && signal < NSIG
            ? fmt::format(" (from the shell: killed by signal {}, {})", signal,
                          ::strsignal(signal))
            : "";
    return Failure{FailureKind::kCrash,
                   fmt::format("exit status {}{}{}", run.exit_status, hint,
                               StderrTail(run.stderr_data))};
  }
  return CheckPrintedMatches(run.stdout_data, input.requests, expected,
                             options.check_format);
}

template <typename Input>
CheckerOf<Input> CommandChecker(CommandOptions options) {
  return [options = std::move(options)](const Input& input) {
    return CheckRun(options, input);
  };
}

template <typename Input>
CheckerOf<Input> EngineChecker(EngineFactory make_engines) {
  return [make_engines = std::move(make_engines)](
             const Input& input) -> std::optional<Failure> {
    try {
      const CacheOptions options = OptionsOf(input);
      checking::DifferentialChecker checker(options, make_engines(options));
      if (auto report = Apply(checker, input)) {
        Failure failure{FailureKind::kWrongAnswer, *std::move(report)};
        // A replay applies one operation per request, in order.
        if constexpr (std::is_same_v<Input, ReplayInput>) {
          failure.request = checker.history().size() - 1;
        }
        return failure;
      }
      return std::nullopt;
    } catch (const std::bad_alloc&) {
      throw;  // the machine ran out, not the engine: a resource failure
    } catch (const PluginError& error) {
      // It names the plugin, the call and what no cache may answer.
      return Failure{FailureKind::kCrash,
                     fmt::format("the plugin failed: {}", error.what())};
    } catch (const std::exception& error) {
      // CapacityError included: the engine fails an input the reference
      // answers, a finding to shrink and report like any other.
      return Failure{FailureKind::kCrash,
                     fmt::format("an engine threw: {}", error.what())};
    }
  };
}

}  // namespace

std::vector<Match> ReferenceMatches(const BatchInput& input) {
  ReferenceTrie reference;
  return FindPrefixMatches(reference, input);
}

std::vector<Match> ReferenceMatches(const ReplayInput& input) {
  const auto reference = MakeEngine(ReferenceTrie::kName, input.options);
  std::vector<Match> matches;
  matches.reserve(input.requests.size());
  Replay(*reference, input.requests,
         [&matches](std::size_t, TokenSpan, const Match& match) {
           matches.push_back(match);
         });
  return matches;
}

Checker MakeCommandChecker(CommandOptions options) {
  return CommandChecker<BatchInput>(std::move(options));
}

ReplayChecker MakeReplayCommandChecker(CommandOptions options) {
  return CommandChecker<ReplayInput>(std::move(options));
}

Checker MakeEngineChecker(EngineFactory make_engines) {
  return EngineChecker<BatchInput>(std::move(make_engines));
}

ReplayChecker MakeReplayEngineChecker(EngineFactory make_engines) {
  return EngineChecker<ReplayInput>(std::move(make_engines));
}

EngineFactory EnginesByName(const std::vector<std::string>& names) {
  std::vector<std::string> expanded;
  for (const std::string& name : names) {
    if (name == "all") {
      for (std::string_view engine : EngineNames()) {
        if (engine != ReferenceTrie::kName) expanded.emplace_back(engine);
      }
    } else if (IsEngineName(name)) {
      if (IsPluginName(name)) MakeEngine(name);  // a plugin that cannot load
      expanded.push_back(name);
    } else {
      MakeEngine(name);  // throws, listing the valid names
    }
  }
  return [expanded = std::move(expanded)](const CacheOptions& options) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    for (const std::string& name : expanded) {
      engines.push_back(MakeEngine(name, options));
    }
    return engines;
  };
}

}  // namespace kvprefix::verify
