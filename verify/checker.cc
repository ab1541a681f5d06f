// Checkers for external commands and built-in engines: see checker.h.
#include "verify/checker.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "checking/differential.h"
#include "checking/serving_check.h"
#include "engines/registry.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "io/serve_answer.h"
#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "plugin/plugin_engine.h"
#include "reference/reference_trie.h"
#include "serve/serving_replay.h"
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
  // Each line quoted with its control characters escaped: the command's
  // escape sequences must not reach the terminal.
  std::string tail;
  std::string_view rest = text.substr(begin);
  if (rest.starts_with('\n')) rest.remove_prefix(1);
  for (;;) {
    const std::size_t end = rest.find('\n');
    tail += "\n  | ";
    tail += EscapeControlCharacters(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
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

void AppendInputJson(const ServeInput& input, std::string& out) {
  AppendServeDocumentJson(input, out);
}

// The cache the engines under test are built with, and what is applied.
CacheOptions OptionsOf(const BatchInput&) { return CacheOptions{}; }
CacheOptions OptionsOf(const ReplayInput& input) { return input.options; }
CacheOptions OptionsOf(const ServeInput& input) { return input.replay.options; }
std::optional<std::string> Apply(checking::DifferentialChecker& checker,
                                 const BatchInput& input) {
  return checker.ApplyBatch(input);
}
std::optional<std::string> Apply(checking::DifferentialChecker& checker,
                                 const ReplayInput& input) {
  return checker.ApplyReplay(input);
}

// " (from the shell: killed by signal N, NAME)" when an exit status is
// /bin/sh's report of a child killed by signal N (128 + N), else "".
std::string ShellSignalHint(int exit_status) {
  const int signal = exit_status - 128;
  return signal > 0 && signal < NSIG
             ? fmt::format(" (from the shell: killed by signal {}, {})", signal,
                           ::strsignal(signal))
             : "";
}

std::string DescribeSignal(int signal) {
  return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
}

// How long a new process checking a failure again may print more after its
// answer line: a second line written by a separate write(2) comes a few
// microseconds after the first.
constexpr std::chrono::milliseconds kLateOutputWait{50};

// At most this many bytes of unexpected output are quoted.
constexpr std::size_t kQuotedBytes = 60;

// The command's answer (standard output, or its answer line), or the
// failure that left none to check.
using Answer = std::variant<std::string, Failure>;

Failure OutputLimitFailure(std::size_t limit, std::size_t answer_bytes,
                           std::string_view what) {
  return Failure{FailureKind::kOutputLimit,
                 fmt::format("printed more than {} bytes{} where the answer "
                             "has {}; the process group was killed",
                             limit, what, answer_bytes)};
}

// Protocol::kProcess: one process for this input.
Answer RunOnce(const CommandOptions& options, std::string_view json,
               const SubprocessOptions& run_options, std::size_t answer_bytes) {
  SubprocessResult run = RunSubprocess(options.command, json, run_options);
  switch (run.kind) {
    case ExitKind::kTimedOut:
      return Failure{FailureKind::kTimeout,
                     fmt::format("no answer within {} ms; the process group "
                                 "was killed",
                                 options.timeout.count())};
    case ExitKind::kOutputLimit:
      return OutputLimitFailure(run_options.max_output_bytes, answer_bytes, "");
    case ExitKind::kSignaled:
      return Failure{FailureKind::kCrash,
                     DescribeSignal(run.signal) + StderrTail(run.stderr_data)};
    case ExitKind::kExited:
      break;
  }
  if (run.exit_status != 0) {
    return Failure{FailureKind::kCrash,
                   fmt::format("exit status {}{}{}", run.exit_status,
                               ShellSignalHint(run.exit_status),
                               StderrTail(run.stderr_data))};
  }
  return std::move(run.stdout_data);
}

// Protocol::kLines: the long-lived processes of one checker and its copies,
// one per concurrent call; a call takes an idle one or starts one.
class LinePool {
 public:
  explicit LinePool(std::string command) : command_(std::move(command)) {}

  std::unique_ptr<LineProcess> Take() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        std::unique_ptr<LineProcess> process = std::move(idle_.back());
        idle_.pop_back();
        return process;
      }
    }
    return std::make_unique<LineProcess>(command_);
  }

  // Keeps `process` for the next call if it can take another line; else it
  // is stopped here.
  void Give(std::unique_ptr<LineProcess> process) {
    if (!process->usable()) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(process));
  }

 private:
  const std::string command_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<LineProcess>> idle_;
};

// How a long-lived command ended before it answered (LineExchange::kClosed).
std::string DescribeClosed(const LineExchange& exchange) {
  const std::string how =
      exchange.exit == ExitKind::kSignaled ? DescribeSignal(exchange.signal)
      : exchange.exit == ExitKind::kTimedOut
          ? std::string(
                "closed its standard output and was still running at the "
                "deadline (the process group was killed)")
          : fmt::format("exited with status {}{}", exchange.exit_status,
                        ShellSignalHint(exchange.exit_status));
  const std::string when =
      exchange.exited_before
          ? "before this line was written (after answering the line "
            "before, or at start-up)"
      : exchange.line.empty()
          ? "before answering this line"
          : fmt::format(
                "after {} bytes of its answer line, before its "
                "newline",
                exchange.line.size());
  return fmt::format(
      "{} {}: a long-lived command must answer every line "
      "and keep running; a new one takes the next input{}",
      how, when, StderrTail(exchange.stderr_tail));
}

Answer RunOnLine(LineProcess& process, const CommandOptions& options,
                 std::string_view json, const SubprocessOptions& run_options,
                 std::size_t answer_bytes,
                 std::chrono::milliseconds late_output_wait) {
  LineExchange exchange = process.Exchange(json, run_options, late_output_wait);
  switch (exchange.kind) {
    case LineExchange::Kind::kTimedOut:
      return Failure{
          FailureKind::kTimeout,
          fmt::format("no answer line within {} ms; the process group was "
                      "killed (with --protocol lines a command answers each "
                      "line as it comes, without waiting for the end of its "
                      "input)",
                      options.timeout.count())};
    case LineExchange::Kind::kOutputLimit:
      return OutputLimitFailure(run_options.max_output_bytes, answer_bytes,
                                " without ending its answer line");
    case LineExchange::Kind::kClosed:
      return Failure{FailureKind::kCrash, DescribeClosed(exchange)};
    case LineExchange::Kind::kAnswered:
      break;
  }
  const auto quote = [](std::string_view text) {
    return fmt::format("{:?}", text.substr(0, kQuotedBytes));
  };
  if (!exchange.before.empty()) {
    return Failure{
        FailureKind::kNotJson,
        fmt::format("before this line was written, standard output already "
                    "held {} bytes printed after the answer to the line "
                    "before, {}: one answer line per input line",
                    exchange.before.size(), quote(exchange.before))};
  }
  if (!exchange.after.empty()) {
    return Failure{
        FailureKind::kNotJson,
        fmt::format("more than one line answered this line: after the "
                    "answer line came {} more bytes, {}",
                    exchange.after.size(), quote(exchange.after))};
  }
  if (exchange.unwritten > 0) {
    return Failure{
        FailureKind::kNotJson,
        fmt::format("answered before reading its whole line ({} of {} bytes "
                    "unwritten), {}",
                    exchange.unwritten, json.size(), quote(exchange.line))};
  }
  return std::move(exchange.line);
}

// The reference's answer to `input` as the tool prints it, and how a
// command's printed answer is judged against it.
struct Expectation {
  std::string canonical;
  std::function<std::optional<Failure>(std::string_view text)> check;
};

template <typename Input>
Expectation Expect(const CommandOptions& options, const Input& input) {
  std::vector<Match> expected = ReferenceMatches(input);
  Expectation expectation;
  AppendMatchesJson(input.requests, expected, expectation.canonical);
  expectation.check = [&options, &input,
                       expected = std::move(expected)](std::string_view text) {
    return CheckPrintedMatches(text, input.requests, expected,
                               options.check_format, options.comparison);
  };
  return expectation;
}

// A serving document's: SPEC §10.5's whole answer, from the reference's
// serving replay. A document written with every §10 default is the §8
// document (AppendServeDocumentJson), which `kvprefix replay` answers with
// SPEC §5's matches: for it, an answer holding "matches" is checked as
// that (the same matches, by §10.7), any other as §10.5's.
Expectation Expect(const CommandOptions& options, const ServeInput& input) {
  const std::unique_ptr<ServingCache> reference =
      MakeServingCache("reference", input.replay.options);
  Expectation expectation;
  AppendServeAnswerJson(ServeReplay(input, *reference), expectation.canonical,
                        /*with_requests=*/true);
  std::string written;
  std::string section_8;
  AppendServeDocumentJson(input, written);
  AppendReplayDocumentJson(input.replay, section_8);
  std::optional<Expectation> as_section_8;
  if (written == section_8) as_section_8 = Expect(options, input.replay);
  expectation.check = [&options, canonical = expectation.canonical,
                       as_section_8 =
                           std::move(as_section_8)](std::string_view text) {
    if (as_section_8 && text.find("\"matches\"") != std::string_view::npos) {
      return as_section_8->check(text);
    }
    return CheckPrintedJsonAnswer(
        text, canonical, options.check_format, "§10.5",
        options.comparison == checking::Comparison::kLengths ? "cache_node"
                                                             : "");
  };
  return expectation;
}

template <typename Input>
std::optional<Failure> CheckRun(const CommandOptions& options, LinePool* pool,
                                const Input& input) {
  std::string json;
  AppendInputJson(input, json);
  const Expectation expectation = Expect(options, input);
  const std::string& canonical = expectation.canonical;
  SubprocessOptions run_options;
  run_options.timeout = options.timeout;
  run_options.max_output_bytes = 16 * canonical.size() + (1 << 20);
  const auto check = [&](Answer answer) -> std::optional<Failure> {
    if (auto* failure = std::get_if<Failure>(&answer)) return *failure;
    if (auto reason = ParseRefusal(std::get<std::string>(answer))) {
      // A cache need not implement every option: the input is skipped.
      return Failure{FailureKind::kRefused,
                     fmt::format("the command refuses {}: {}",
                                 checking::FormatCacheOptions(OptionsOf(input)),
                                 EscapeControlCharacters(*reason))};
    }
    return expectation.check(std::get<std::string>(answer));
  };
  if (pool == nullptr) {
    return check(RunOnce(options, json, run_options, canonical.size()));
  }
  std::unique_ptr<LineProcess> process = pool->Take();
  std::optional<Failure> failure =
      check(RunOnLine(*process, options, json, run_options, canonical.size(),
                      std::chrono::milliseconds(0)));
  if (!failure || failure->kind == FailureKind::kTimeout ||
      failure->kind == FailureKind::kRefused) {
    // A timeout is not run again: that would cost the timeout twice; a
    // refusal is an answer, and the process keeps its place.
    pool->Give(std::move(process));
    return failure;
  }
  // The input again, alone, on a new process (the old one is stopped), which
  // is given time to print anything more after its answer: the report's
  // input then fails by itself, whatever the lines before it left behind
  // (a cache not emptied between lines, an extra line printed late).
  process.reset();
  process = std::make_unique<LineProcess>(options.command);
  std::optional<Failure> confirmed = check(RunOnLine(
      *process, options, json, run_options, canonical.size(), kLateOutputWait));
  pool->Give(std::move(process));
  if (confirmed) return confirmed;
  failure->message +=
      "\n(a new process answers this input right: the failure depends on "
      "the lines before it, such as a cache not emptied between lines)";
  failure->depends_on_earlier_input = true;
  return failure;
}

template <typename Input>
CheckerOf<Input> CommandChecker(CommandOptions options) {
  std::shared_ptr<LinePool> pool;
  if (options.protocol == Protocol::kLines) {
    pool = std::make_shared<LinePool>(options.command);
  }
  return [options = std::move(options), pool](const Input& input) {
    return CheckRun(options, pool.get(), input);
  };
}

template <typename Input>
CheckerOf<Input> EngineChecker(EngineFactory make_engines,
                               checking::Comparison comparison) {
  return [make_engines = std::move(make_engines),
          comparison](const Input& input) -> std::optional<Failure> {
    try {
      const CacheOptions options = OptionsOf(input);
      std::vector<std::unique_ptr<PrefixIndex>> engines;
      try {
        engines = make_engines(options);
      } catch (const std::invalid_argument& error) {
        // A cache need not implement every policy or page size: a plugin
        // whose create refuses these options (plugin/plugin_engine.h) has
        // nothing to answer. The runner skips the input and says so.
        return Failure{FailureKind::kRefused,
                       EscapeControlCharacters(error.what())};
      }
      checking::DifferentialChecker checker(options, std::move(engines),
                                            comparison);
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
      // It names the plugin, the call and what no cache may answer (the
      // plugin's name and message escaped, as every line of the report).
      return Failure{FailureKind::kCrash,
                     fmt::format("the plugin failed: {}",
                                 EscapeControlCharacters(error.what()))};
    } catch (const std::exception& error) {
      // CapacityError included: the engine fails an input the reference
      // answers, a finding to shrink and report like any other.
      return Failure{FailureKind::kCrash,
                     fmt::format("an engine threw: {}",
                                 EscapeControlCharacters(error.what()))};
    }
  };
}

}  // namespace

std::string_view ProtocolName(Protocol protocol) {
  return protocol == Protocol::kLines ? "lines" : "process";
}

std::vector<Match> ReferenceMatches(const BatchInput& input) {
  ReferenceTrie reference;
  return FindPrefixMatches(reference, input);
}

std::vector<Match> ReferenceMatches(const ReplayInput& input) {
  const auto reference = MakeEngine(ReferenceTrie::kName, input.options);
  std::vector<Match> matches;
  matches.reserve(input.requests.size());
  Replay(*reference, input.requests, input.namespaces,
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

ServeChecker MakeServeCommandChecker(CommandOptions options) {
  return CommandChecker<ServeInput>(std::move(options));
}

Checker MakeEngineChecker(EngineFactory make_engines,
                          checking::Comparison comparison) {
  return EngineChecker<BatchInput>(std::move(make_engines), comparison);
}

ReplayChecker MakeReplayEngineChecker(EngineFactory make_engines,
                                      checking::Comparison comparison) {
  return EngineChecker<ReplayInput>(std::move(make_engines), comparison);
}

namespace {

// `names` checked, "all" kept as a marker (an empty name): which engines it
// stands for depends on the input's model (SPEC §9), known only per input.
std::vector<std::string> CheckedNames(const std::vector<std::string>& names) {
  std::vector<std::string> expanded;
  for (const std::string& name : names) {
    if (name == "all") {
      expanded.emplace_back();
    } else {
      // Throws for an unknown name; builds no engine, whose default options
      // a plugin may refuse. A plugin is not loaded here, in the caller's
      // process: verify loads it in a child first (CheckPluginInChild).
      if (!IsPluginName(name)) CheckEngineName(name);
      expanded.push_back(name);
    }
  }
  return expanded;
}

// make(name, options) for each engine of CheckedNames' `expanded`, the
// marker standing for every engine of options.model but the reference.
template <typename Make>
auto MakeEach(const std::vector<std::string>& expanded,
              const CacheOptions& options, Make make) {
  std::vector<decltype(make(std::string_view(), options))> made;
  for (const std::string& name : expanded) {
    if (!name.empty()) {
      made.push_back(make(name, options));
      continue;
    }
    for (std::string_view engine : EngineNames(options.model)) {
      if (engine != ReferenceTrie::kName) {
        made.push_back(make(engine, options));
      }
    }
  }
  return made;
}

}  // namespace

EngineFactory EnginesByName(const std::vector<std::string>& names) {
  return [expanded = CheckedNames(names)](const CacheOptions& options) {
    return MakeEach(expanded, options,
                    [](std::string_view name, const CacheOptions& options) {
                      return MakeEngine(name, options);
                    });
  };
}

void ServeSkips::Add(std::string_view engine) {
  const std::lock_guard lock(mutex_);
  const auto found = counts_.find(engine);
  if (found == counts_.end()) {
    counts_.emplace(std::string(engine), 1);
  } else {
    ++found->second;
  }
}

std::string ServeSkips::Format() const {
  const std::lock_guard lock(mutex_);
  std::string text;
  for (const auto& [engine, count] : counts_) {
    text += fmt::format(
        "skipped for {}: {} serving documents with max_running above 1 or "
        "output \"unique\" (no request lifecycle: it answers one request at "
        "a time, exact only for SPEC §10.7's documents)\n",
        EscapeControlCharacters(engine), count);
  }
  return text;
}

ServeChecker MakeServeEngineChecker(const std::vector<std::string>& names,
                                    std::shared_ptr<ServeSkips> skips) {
  return [expanded = CheckedNames(names), skips = std::move(skips)](
             const ServeInput& input) -> std::optional<Failure> {
    try {
      std::vector<std::unique_ptr<ServingCache>> caches;
      try {
        caches =
            MakeEach(expanded, input.replay.options,
                     [](std::string_view name, const CacheOptions& options) {
                       return MakeServingCache(name, options);
                     });
      } catch (const std::invalid_argument& error) {
        return Failure{FailureKind::kRefused,
                       EscapeControlCharacters(error.what())};
      }
      std::vector<std::unique_ptr<ServingCache>> given;
      std::string skipped;
      for (std::unique_ptr<ServingCache>& cache : caches) {
        if (cache->one_at_a_time() && !checking::SequentialServeInput(input)) {
          skips->Add(cache->name());
          if (skipped.empty()) skipped = cache->name();
        } else {
          given.push_back(std::move(cache));
        }
      }
      if (given.empty()) {
        return Failure{
            FailureKind::kRefused,
            fmt::format("engine '{}' has no request lifecycle: it takes only "
                        "serving documents with max_running 1 and output "
                        "\"none\" (SPEC §10.7)",
                        EscapeControlCharacters(skipped))};
      }
      std::optional<std::string> report;
      try {
        report = checking::CheckServeInput(
            input, [&given](const ServeInput&) { return std::move(given); });
      } catch (const std::invalid_argument& error) {
        // A cache refused the document in a call (a plugin's admit).
        return Failure{FailureKind::kRefused,
                       EscapeControlCharacters(error.what())};
      }
      if (!report) return std::nullopt;
      std::string message = *report;
      message.pop_back();  // the report's last newline: the runner adds one
      return Failure{FailureKind::kWrongAnswer, std::move(message)};
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const PluginError& error) {
      return Failure{FailureKind::kCrash,
                     fmt::format("the plugin failed: {}",
                                 EscapeControlCharacters(error.what()))};
    }
  };
}

}  // namespace kvprefix::verify
