// `kvprefix verify`'s run: see run.h.
#include "verify/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

#include "checking/differential.h"
#include "io/case_file.h"
#include "io/input_error.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "plugin/plugin_engine.h"
#include "verify/cache_state.h"
#include "verify/checker.h"
#include "verify/inputs.h"
#include "verify/isolation.h"
#include "verify/shrink.h"
#include "verify/statistics.h"
#include "verify/subprocess.h"

namespace kvprefix::verify {
namespace {

using Clock = std::chrono::steady_clock;

// Case files up to this size are also printed in the report: a shrunk case
// with a long command in its source, or a replay document's few requests.
constexpr std::size_t kMaxPrintedCaseBytes = 1000;

// `seconds` (checked: finite, 0 to kMaxSeconds) rounded up, so that
// a short positive timeout does not become 0 ms.
std::chrono::milliseconds Milliseconds(double seconds) {
  return std::chrono::ceil<std::chrono::milliseconds>(
      std::chrono::duration<double>(seconds));
}

// The case file written for a failing input, with the reference's answer
// and `source`; a serving document is written as the §10 document itself
// (`replay` and verify's --serving read it back).
std::string FormatCase(const BatchInput& input, std::string_view source) {
  return FormatCaseFile(input, ReferenceMatches(input), source);
}

std::string FormatCase(const ReplayInput& input, std::string_view source) {
  return FormatReplayCaseFile(input, ReferenceMatches(input), source);
}

std::string FormatCase(const ServeInput& input, std::string_view) {
  std::string text;
  AppendServeDocumentJson(input, text);
  return text;
}

// What is under test, as flags, for replay lines and case-file sources.
std::string TargetFlags(const RunOptions& options) {
  std::string flags =
      options.format == InputFormat::kRequests ? " --format requests" : "";
  if (options.serving) flags += " --serving";
  if (options.comparison != checking::Comparison::kAll) {
    flags += fmt::format(" --compare {}",
                         checking::ComparisonName(options.comparison));
  }
  if (!options.command.empty()) {
    if (options.protocol != Protocol::kProcess) {
      flags += fmt::format(" --protocol {}", ProtocolName(options.protocol));
    }
    return "--cmd " + ShellQuote(options.command) + flags;
  }
  return fmt::format("--engines {}{}", fmt::join(options.engines, ","), flags);
}

template <typename Input>
CheckerOf<Input> MakeChecker(const RunOptions& options,
                             const std::shared_ptr<ServeSkips>& skips) {
  constexpr bool kBatch = std::is_same_v<Input, BatchInput>;
  if (!options.command.empty()) {
    CommandOptions command{.command = options.command,
                           .protocol = options.protocol,
                           .timeout = Milliseconds(options.timeout),
                           .check_format = options.check_format,
                           .comparison = options.comparison};
    if constexpr (std::is_same_v<Input, ServeInput>) {
      return MakeServeCommandChecker(std::move(command));
    } else if constexpr (kBatch) {
      return MakeCommandChecker(std::move(command));
    } else {
      return MakeReplayCommandChecker(std::move(command));
    }
  }
  if constexpr (std::is_same_v<Input, ServeInput>) {
    return MakeServeEngineChecker(options.engines, skips);
  } else if constexpr (kBatch) {
    return MakeEngineChecker(EnginesByName(options.engines),
                             options.comparison);
  } else {
    return MakeReplayEngineChecker(EnginesByName(options.engines),
                                   options.comparison);
  }
}

std::vector<NamedInput> LoadInputs(const RunOptions& options, BatchInput) {
  std::vector<NamedInput> inputs = ReadInputFiles(options.files);
  auto add = [&inputs](std::vector<NamedInput> more) {
    for (NamedInput& input : more) inputs.push_back(std::move(input));
  };
  if (!options.cases.empty()) add(ReadCaseInputs(options.cases));
  if (!options.trace.empty()) {
    add(TraceWindowInputs(options.trace, options.trace_window));
  }
  return inputs;
}

std::vector<NamedReplayInput> LoadInputs(const RunOptions& options,
                                         ReplayInput) {
  std::vector<NamedReplayInput> inputs = ReadReplayInputFiles(options.files);
  if (!options.cases.empty()) {
    for (NamedReplayInput& input : ReadReplayCaseInputs(options.cases)) {
      inputs.push_back(std::move(input));
    }
  }
  return inputs;
}

std::vector<NamedServeInput> LoadInputs(const RunOptions& options, ServeInput) {
  std::vector<std::string> paths = options.files;
  if (!options.cases.empty()) {
    // A case file or a folder of them, each read as a document may be.
    const std::vector<std::string> found = CaseFilePaths(options.cases);
    paths.insert(paths.end(), found.begin(), found.end());
  }
  return ReadServeInputFiles(paths);
}

NamedInput Generate(const RunOptions&, std::uint64_t seed, std::uint64_t run,
                    int size, BatchInput) {
  return GeneratedInput(seed, run, size);
}

NamedReplayInput Generate(const RunOptions& options, std::uint64_t seed,
                          std::uint64_t run, int size, ReplayInput) {
  return GeneratedReplayInput(seed, run, size,
                              options.model.value_or(GeneratedModel{}),
                              options.implemented);
}

NamedServeInput Generate(const RunOptions& options, std::uint64_t seed,
                         std::uint64_t run, int size, ServeInput) {
  return GeneratedServeInput(seed, run, size,
                             options.model.value_or(GeneratedModel{}),
                             options.implemented);
}

// What the reference's cache held at the failing request: a replay's wrong
// match usually comes from an earlier wrong eviction.
std::string DescribeState(const BatchInput&, const Failure&) { return ""; }
std::string DescribeState(const ServeInput&, const Failure&) { return ""; }
std::string DescribeState(const ReplayInput& input, const Failure& failure) {
  if (!failure.request || *failure.request >= input.requests.size()) return "";
  return DescribeReferenceCache(input, *failure.request);
}

// Shrinks (unless it timed out: every attempt would cost the timeout; or
// passes alone),
// writes the case file, prints the report, and throws (exit status 1).
template <typename Input>
[[noreturn]] void ReportFailure(const RunOptions& options,
                                const CheckerOf<Input>& check,
                                const NamedInputOf<Input>& failing,
                                const Failure& failure) {
  // Names the user gave (file names) go into the report escaped: a control
  // character in one must not reach the terminal.
  const std::string out_shown = EscapeControlCharacters(options.out);
  fmt::print("FAILED: {} on {}\n", FailureKindName(failure.kind),
             EscapeControlCharacters(failing.name));
  ShrinkResultOf<Input> shrunk{failing.input, failure, 0};
  // A command that times out usually does on every input, each attempt
  // costing the timeout (a plugin hangs on some inputs only); an input that
  // passes alone (it failed only after the lines before it) has no smaller
  // candidate that fails alone to shrink to.
  if ((failure.kind != FailureKind::kTimeout || options.command.empty()) &&
      !failure.depends_on_earlier_input) {
    shrunk = WhileDoing("shrinking the failure", [&] {
      return Shrink(
          failing.input, failure, check,
          ShrinkOptions{
              .max_attempts = options.shrink_attempts,
              .deadline = Clock::now() + Milliseconds(options.shrink_time)});
    });
    if (shrunk.attempts > 0) {
      fmt::print("{}\n", DescribeShrink(failing.input, shrunk));
    }
  }
  fmt::print("{}\n", shrunk.failure.message);
  fmt::print("{}", DescribeState(shrunk.input, shrunk.failure));
  // An input that still fails as it is, read from the file --out names (the
  // replay line's own `--cases FILE`), stays as it is: rewriting it only
  // replaced its source, where the case came from, with "... on case FILE".
  std::error_code ignored;
  if (shrunk.accepted == 0 && !failing.path.empty() &&
      std::filesystem::equivalent(failing.path, options.out, ignored)) {
    fmt::print("the case in {} fails as it is: not rewritten\n", out_shown);
  } else {
    const std::string text = FormatCase(
        shrunk.input,
        fmt::format("kvprefix verify {}: {} on {}", TargetFlags(options),
                    FailureKindName(shrunk.failure.kind), failing.name));
    if (text.size() <= kMaxPrintedCaseBytes) fmt::print("case: {}", text);
    WriteFileAtomically(options.out, text);
    // A serving document is written as the document alone (FormatCase).
    fmt::print("minimal failing {} written to {}\n",
               std::is_same_v<Input, ServeInput>
                   ? "SPEC §10 document"
                   : "case (with the reference's answer)",
               out_shown);
  }
  fmt::print("replay: kvprefix verify {} --cases {}\n", TargetFlags(options),
             ShellQuote(options.out));
  std::fflush(stdout);
  throw std::runtime_error(
      fmt::format("verify failed: {}", FailureKindName(failure.kind)));
}

// The run's inputs in order, by number: the given ones, then `runs`
// generated ones.
template <typename Input>
struct InputSequence {
  const RunOptions& options;
  std::vector<NamedInputOf<Input>> given;
  std::uint64_t runs;
  std::uint64_t seed;

  // Inputs in all, saturated at UINT64_MAX (a time budget without --runs).
  std::uint64_t size() const {
    return runs > UINT64_MAX - given.size() ? UINT64_MAX : given.size() + runs;
  }
  NamedInputOf<Input> At(std::uint64_t index) const {
    if (index < given.size()) return given[index];
    const std::uint64_t run = index - given.size();
    return WhileDoing("generating inputs", [&] {
      return Generate(options, seed, run,
                      GeneratorSize(run, runs, options.max_size), Input{});
    });
  }
};

// A failure and the number of its input.
struct FoundFailure {
  std::uint64_t index;
  Failure failure;
};

// Checks the inputs in order, `jobs` at a time (each job publishing its
// input to `progress` when not null), until the first failure, which it
// returns; or prints the OK report and returns nullopt.
template <typename Input>
std::optional<FoundFailure> CheckInputs(const RunOptions& options,
                                        const CheckerOf<Input>& check,
                                        const InputSequence<Input>& sequence,
                                        std::size_t jobs,
                                        ChildProgress* progress,
                                        const ServeSkips& skips) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop = options.time_budget > 0
                                     ? start + Milliseconds(options.time_budget)
                                     : Clock::time_point::max();
  // Checks run --jobs at a time; failures are taken in input order, so a
  // run is reproducible whatever the number of jobs. No input starts after
  // the time budget is spent, but the first: a run always checks something.
  std::uint64_t checked = 0;
  // Inputs an engine refuses (FailureKind::kRefused), among the checked
  // ones, and the first refusal's message.
  std::uint64_t skipped = 0;
  std::string first_refusal;
  InputStatistics statistics;
  // A check and what its input exercised, on one thread.
  using Result = std::pair<std::optional<Failure>, InputStatistics>;
  const auto check_and_count = [&check, progress](const Input& input,
                                                  std::size_t slot,
                                                  std::uint64_t index) {
    if (progress != nullptr) progress->Begin(slot, index);
    Result result{check(input), InputStatistics{}};
    if (progress != nullptr) progress->End(slot);
    result.second.Add(input);
    return result;
  };
  while (checked < sequence.size() && (checked == 0 || Clock::now() < stop)) {
    std::vector<NamedInputOf<Input>> batch;
    std::vector<std::future<Result>> results;
    while (batch.size() < jobs && checked + batch.size() < sequence.size() &&
           (checked + batch.size() == 0 || Clock::now() < stop)) {
      batch.push_back(sequence.At(checked + batch.size()));
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      try {
        // The batch's first input is checked on this thread, when its
        // result is taken: a thread start less per batch (all of them with
        // --jobs 1), the main cost of checking small inputs in-process.
        results.push_back(std::async(
            i == 0 ? std::launch::deferred : std::launch::async,
            check_and_count, std::cref(batch[i].input), i, checked + i));
      } catch (const std::system_error& error) {
        // No room for another thread's stack (RLIMIT_AS, ulimit -v).
        throw ResourceError(fmt::format(
            "out of memory while starting a thread to check {} ({}; a "
            "smaller --jobs needs less)",
            batch[i].name, error.what()));
      }
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      // A std::system_error (no pipes, no /bin/sh) propagates: status 1;
      // std::bad_alloc becomes "out of memory while checking <input>".
      Result result = WhileDoing("checking " + batch[i].name,
                                 [&] { return results[i].get(); });
      if (result.first && result.first->kind == FailureKind::kRefused) {
        if (skipped++ == 0) first_refusal = result.first->message;
      } else if (result.first) {
        return FoundFailure{checked, *std::move(result.first)};
      } else {
        statistics.Merge(result.second);
      }
      ++checked;
      if (progress != nullptr) progress->SetPassed(checked);
    }
  }
  const std::string_view refuser =
      options.command.empty() ? "an engine" : "the command";
  if (skipped == checked) {
    // "OK: 0 inputs agree" would be a false success: the implementation
    // refused the cache of every input, so nothing was compared.
    throw std::invalid_argument(fmt::format(
        "verify: nothing checked: {} refuses the cache of each of the {} "
        "inputs, the first: {}",
        refuser, skipped, first_refusal));
  }
  const std::chrono::duration<double> elapsed = Clock::now() - start;
  // The OK line comes first and keeps its form: scripts read it.
  fmt::print("OK: {} inputs agree with the reference ({:.1f} s)\n{}",
             checked - skipped, elapsed.count(), statistics.Format());
  if (skipped > 0) {
    fmt::print("skipped: {} inputs whose cache {} refuses, the first: {}\n",
               skipped, refuser, first_refusal);
  }
  fmt::print("{}", skips.Format());
  return std::nullopt;
}

// Plugins run in verify's process: they are checked in a child process.
bool ChecksPlugins(const RunOptions& options) {
  return std::any_of(
      options.engines.begin(), options.engines.end(),
      [](const std::string& name) { return IsPluginName(name); });
}

// CheckInputs in a child process (verify/isolation.h), so that a plugin
// that crashes or hangs is a failure of the input it was checking: the
// first failure in input order, shrunk with one child per candidate, as
// the in-process run would report it had it survived.
template <typename Input>
void CheckInputsInChild(const RunOptions& options,
                        const CheckerOf<Input>& check,
                        const InputSequence<Input>& sequence, std::size_t jobs,
                        const ServeSkips& skips) {
  const std::chrono::milliseconds timeout = Milliseconds(options.timeout);
  const ChildResult result =
      RunInChild(jobs, timeout, [&](ChildProgress& progress) {
        const std::optional<FoundFailure> found =
            CheckInputs(options, check, sequence, jobs, &progress, skips);
        if (!found) return std::string();
        std::string bytes(sizeof(found->index), '\0');
        std::memcpy(bytes.data(), &found->index, sizeof(found->index));
        return bytes + EncodeFailure(found->failure);
      });
  const CheckerOf<Input> isolated = IsolatedChecker(check, timeout);
  if (result.end == ChildResult::End::kFinished) {
    if (result.payload.empty()) return;  // the child printed the OK report
    std::uint64_t index;
    std::memcpy(&index, result.payload.data(), sizeof(index));
    ReportFailure(
        options, isolated, sequence.At(index),
        *DecodeFailure(std::string_view(result.payload).substr(sizeof(index))));
  }
  // The input that crashed or hung; when unknown (a crash outside a job's
  // thread), the first in flight.
  const std::uint64_t culprit = result.input ? *result.input
                                : result.in_flight.empty()
                                    ? result.passed
                                    : result.in_flight.front();
  // Inputs before it whose results were not taken yet may fail first.
  for (std::uint64_t index = result.passed; index < culprit; ++index) {
    const NamedInputOf<Input> input = sequence.At(index);
    const std::optional<Failure> failure = isolated(input.input);
    if (failure && failure->kind != FailureKind::kRefused) {
      ReportFailure(options, isolated, input, *failure);
    }
  }
  ReportFailure(options, isolated, sequence.At(culprit),
                ChildFailure(result, timeout));
}

// Throws InputError (exit 2) for the first case file whose expected answer
// is not the reference's: the case is stale or the reference regressed, and
// checking a cache against either would not mean what the user thinks (it
// used to be a warning, and verify exited 0). O(the cases' reference runs).
template <typename Input>
void CheckExpectedAnswers(const std::vector<NamedInputOf<Input>>& given) {
  for (const NamedInputOf<Input>& input : given) {
    if (!input.expected) continue;
    const std::vector<Match> reference = ReferenceMatches(input.input);
    const std::vector<Match>& expected = *input.expected;
    if (expected == reference) continue;
    // The case reader checked one expected match per request.
    const std::size_t request =
        std::mismatch(expected.begin(), expected.end(), reference.begin())
            .first -
        expected.begin();
    const std::string problem = fmt::format(
        "its expected answer differs from the reference's at request {}: "
        "expected matched_length {}, cache_node {}; the reference {}, {}",
        request, expected[request].matched_length, expected[request].cache_node,
        reference[request].matched_length, reference[request].cache_node);
    throw InputError(input.name, problem +
                                     " (the case is stale, or the reference "
                                     "regressed)");
  }
}

// Run() for inputs of type Input (BatchInput or ReplayInput).
template <typename Input>
void RunOn(const RunOptions& options) {
  // A plugin is loaded in a child first: its constructors and entry point
  // are its code too (a crash there would end verify itself).
  for (const std::string& engine : options.engines) {
    if (IsPluginName(engine)) {
      CheckPluginInChild(engine, Milliseconds(options.timeout));
    }
  }
  const auto skips = std::make_shared<ServeSkips>();
  const CheckerOf<Input> check = MakeChecker<Input>(options, skips);
  InputSequence<Input> sequence{
      options,
      WhileDoing("reading the inputs",
                 [&] { return LoadInputs(options, Input{}); }),
      0, 0};
  // A serving document's case file is read without its answer.
  if constexpr (!std::is_same_v<Input, ServeInput>) {
    WhileDoing("checking the cases' expected answers",
               [&] { CheckExpectedAnswers(sequence.given); });
  }
  // Given inputs replace the generated ones unless `runs` asks for both; a
  // time budget alone means "generate until the time is up".
  sequence.runs = options.runs              ? *options.runs
                  : options.time_budget > 0 ? UINT64_MAX
                  : sequence.given.empty()  ? 100
                                            : 0;
  if (sequence.size() == 0) {
    // "OK: 0 inputs agree" would be a false success.
    throw std::invalid_argument(
        "verify: nothing to check (--runs 0 and no FILEs, --cases or --trace)");
  }
  if ((options.model || !options.implemented.all()) && sequence.runs == 0) {
    // A document says its own model: flags that change nothing checked
    // would let a user believe the files ran under them.
    throw std::invalid_argument(fmt::format(
        "verify: {}: apply to generated documents only, and none are (FILEs "
        "or --cases without --runs); a given document runs under its own "
        "{}",
        options.model ? "--model, --match-limit, --trigger"
                      : "--models, --match-limits, --policies, --page-sizes, "
                        "--capacities",
        options.model ? "\"model\"" : "options"));
  }
  sequence.seed = options.seed ? *options.seed : std::random_device{}();
  if (sequence.runs > 0) {
    const std::string model_flags =
        GeneratedOptionsFlags(options.model, options.implemented);
    fmt::print("generating {} with --seed {}{}{}\n",
               std::is_same_v<Input, BatchInput>   ? "inputs"
               : std::is_same_v<Input, ServeInput> ? "serving documents"
                                                   : "replay documents",
               sequence.seed, model_flags.empty() ? "" : " ", model_flags);
  }
  const std::size_t jobs =
      options.jobs > 0 ? options.jobs
                       : std::max(1u, std::thread::hardware_concurrency());
  if (ChecksPlugins(options)) {
    return CheckInputsInChild(options, check, sequence, jobs, *skips);
  }
  if (const auto found =
          CheckInputs(options, check, sequence, jobs, nullptr, *skips)) {
    ReportFailure(options, check, sequence.At(found->index), found->failure);
  }
}

}  // namespace

void Run(const RunOptions& options) {
  if (options.command.empty() == options.engines.empty()) {
    throw std::invalid_argument(
        "verify: give exactly one of --cmd COMMAND and --engines NAMES");
  }
  if (options.command.empty() && options.protocol != Protocol::kProcess) {
    throw std::invalid_argument(
        "verify: --protocol: applies to --cmd only (engines run in process)");
  }
  // A bad --out is found before the checks and the shrinking, not after
  // (an empty one by the CLI's option check).
  CheckOutputPath(options.out);
  if (options.format == InputFormat::kBatch) {
    if (options.model) {
      throw std::invalid_argument(
          "verify: --model, --match-limit, --trigger: apply to --format "
          "requests only (SPEC §4's batch job has no cache model)");
    }
    if (!options.implemented.all()) {
      throw std::invalid_argument(
          "verify: --models, --match-limits, --policies, --page-sizes, "
          "--capacities: apply to --format requests only (SPEC §4's batch job "
          "has one cache: "
          "unbounded, page size 1, model spec)");
    }
  }
  if (options.serving && options.format != InputFormat::kRequests) {
    throw std::invalid_argument(
        "verify: --serving: applies to --format requests only (SPEC §10's "
        "documents are replay documents)");
  }
  CheckGeneratedOptions(options.model, options.implemented);
  if (options.format == InputFormat::kBatch) return RunOn<BatchInput>(options);
  if (!options.trace.empty()) {
    // A window of a trace has no capacity, policy or page size to check.
    throw std::invalid_argument(
        "verify: --trace applies to --format batch only");
  }
  if (options.serving) return RunOn<ServeInput>(options);
  RunOn<ReplayInput>(options);
}

}  // namespace kvprefix::verify
