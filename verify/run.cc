// `kvprefix verify`'s run: see run.h.
#include "verify/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
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
#include "verify/cache_state.h"
#include "verify/checker.h"
#include "verify/inputs.h"
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

std::string Describe(const BatchInput& input) {
  return fmt::format(
      "{} sequences ({} tokens)",
      input.cached_sequences.size() + input.requests.size(),
      input.cached_sequences.total_tokens() + input.requests.total_tokens());
}

std::string Describe(const ReplayInput& input) {
  return fmt::format("{} requests ({} tokens; {})", input.requests.size(),
                     input.requests.total_tokens(),
                     checking::FormatCacheOptions(input.options));
}

std::string FormatCase(const BatchInput& input, std::span<const Match> expected,
                       std::string_view source) {
  return FormatCaseFile(input, expected, source);
}

std::string FormatCase(const ReplayInput& input,
                       std::span<const Match> expected,
                       std::string_view source) {
  return FormatReplayCaseFile(input, expected, source);
}

// What is under test, as flags, for replay lines and case-file sources.
std::string TargetFlags(const RunOptions& options) {
  std::string flags =
      options.format == InputFormat::kRequests ? " --format requests" : "";
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
CheckerOf<Input> MakeChecker(const RunOptions& options) {
  constexpr bool kBatch = std::is_same_v<Input, BatchInput>;
  if (!options.command.empty()) {
    CommandOptions command{.command = options.command,
                           .protocol = options.protocol,
                           .timeout = Milliseconds(options.timeout),
                           .check_format = options.check_format,
                           .comparison = options.comparison};
    if constexpr (kBatch) {
      return MakeCommandChecker(std::move(command));
    } else {
      return MakeReplayCommandChecker(std::move(command));
    }
  }
  if constexpr (kBatch) {
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

NamedInput Generate(std::uint64_t seed, std::uint64_t run, int size,
                    BatchInput) {
  return GeneratedInput(seed, run, size);
}

NamedReplayInput Generate(std::uint64_t seed, std::uint64_t run, int size,
                          ReplayInput) {
  return GeneratedReplayInput(seed, run, size);
}

// What the reference's cache held at the failing request: a replay's wrong
// match usually comes from an earlier wrong eviction.
std::string DescribeState(const BatchInput&, const Failure&) { return ""; }
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
  fmt::print("FAILED: {} on {}\n", FailureKindName(failure.kind), failing.name);
  ShrinkResultOf<Input> shrunk{failing.input, failure, 0};
  // An input that passes alone (it failed only after the lines before it)
  // has no smaller candidate that fails alone to shrink to.
  if (failure.kind != FailureKind::kTimeout &&
      !failure.depends_on_earlier_input) {
    shrunk = WhileDoing("shrinking the failure", [&] {
      return Shrink(
          failing.input, failure, check,
          ShrinkOptions{
              .max_attempts = options.shrink_attempts,
              .deadline = Clock::now() + Milliseconds(options.shrink_time)});
    });
    if (shrunk.attempts > 0) {
      fmt::print("shrunk in {} checks from {} to {}\n", shrunk.attempts,
                 Describe(failing.input), Describe(shrunk.input));
    }
  }
  fmt::print("{}\n", shrunk.failure.message);
  fmt::print("{}", DescribeState(shrunk.input, shrunk.failure));
  const std::string text = FormatCase(
      shrunk.input, ReferenceMatches(shrunk.input),
      fmt::format("kvprefix verify {}: {} on {}", TargetFlags(options),
                  FailureKindName(shrunk.failure.kind), failing.name));
  if (text.size() <= kMaxPrintedCaseBytes) fmt::print("case: {}", text);
  WriteFileAtomically(options.out, text);
  fmt::print(
      "minimal failing case (with the reference's answer) written to {}\n"
      "replay: kvprefix verify {} --cases {}\n",
      options.out, TargetFlags(options), ShellQuote(options.out));
  std::fflush(stdout);
  throw std::runtime_error(
      fmt::format("verify failed: {}", FailureKindName(failure.kind)));
}

// Run() for inputs of type Input (BatchInput or ReplayInput).
template <typename Input>
void RunOn(const RunOptions& options) {
  const CheckerOf<Input> check = MakeChecker<Input>(options);
  const std::vector<NamedInputOf<Input>> inputs = WhileDoing(
      "reading the inputs", [&] { return LoadInputs(options, Input{}); });
  // Given inputs replace the generated ones unless `runs` asks for both; a
  // time budget alone means "generate until the time is up".
  const std::uint64_t runs = options.runs              ? *options.runs
                             : options.time_budget > 0 ? UINT64_MAX
                             : inputs.empty()          ? 100
                                                       : 0;
  if (inputs.empty() && runs == 0) {
    // "OK: 0 inputs agree" would be a false success.
    throw std::invalid_argument(
        "verify: nothing to check (--runs 0 and no FILEs, --cases or --trace)");
  }
  const std::uint64_t seed =
      options.seed ? *options.seed : std::random_device{}();
  if (runs > 0) {
    fmt::print(
        "generating {} with --seed {}\n",
        std::is_same_v<Input, BatchInput> ? "inputs" : "replay documents",
        seed);
  }
  const std::size_t jobs =
      options.jobs > 0 ? options.jobs
                       : std::max(1u, std::thread::hardware_concurrency());

  const Clock::time_point start = Clock::now();
  const Clock::time_point stop = options.time_budget > 0
                                     ? start + Milliseconds(options.time_budget)
                                     : Clock::time_point::max();
  // Inputs in order: the given ones, then generated ones; nullopt at the
  // end or when the time budget is spent (after the first input, so that a
  // run always checks something).
  std::size_t next_given = 0;
  std::uint64_t next_run = 0;
  auto next_input = [&]() -> std::optional<NamedInputOf<Input>> {
    if (next_given + next_run > 0 && Clock::now() >= stop) return std::nullopt;
    if (next_given < inputs.size()) return inputs[next_given++];
    if (next_run < runs) {
      return WhileDoing("generating inputs", [&] {
        const std::uint64_t run = next_run++;
        return Generate(seed, run, GeneratorSize(run, runs, options.max_size),
                        Input{});
      });
    }
    return std::nullopt;
  };
  // Checks run --jobs at a time; failures are taken in input order, so a
  // run is reproducible whatever the number of jobs.
  std::size_t checked = 0;
  InputStatistics statistics;
  // A check and what its input exercised, on one thread.
  using Result = std::pair<std::optional<Failure>, InputStatistics>;
  const auto check_and_count = [&check](const Input& input) {
    Result result{check(input), InputStatistics{}};
    result.second.Add(input);
    return result;
  };
  for (bool more = true; more;) {
    std::vector<NamedInputOf<Input>> batch;
    std::vector<std::future<Result>> results;
    while (batch.size() < jobs) {
      std::optional<NamedInputOf<Input>> input = next_input();
      if (!input) {
        more = false;
        break;
      }
      batch.push_back(*std::move(input));
    }
    for (const NamedInputOf<Input>& input : batch) {
      try {
        results.push_back(std::async(std::launch::async, check_and_count,
                                     std::cref(input.input)));
      } catch (const std::system_error& error) {
        // No room for another thread's stack (RLIMIT_AS, ulimit -v).
        throw ResourceError(fmt::format(
            "out of memory while starting a thread to check {} ({}; a "
            "smaller --jobs needs less)",
            input.name, error.what()));
      }
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      // A std::system_error (no pipes, no /bin/sh) propagates: status 1;
      // std::bad_alloc becomes "out of memory while checking <input>".
      const Result result = WhileDoing("checking " + batch[i].name,
                                       [&] { return results[i].get(); });
      if (result.first) ReportFailure(options, check, batch[i], *result.first);
      statistics.Merge(result.second);
      if (batch[i].expected &&
          *batch[i].expected != ReferenceMatches(batch[i].input)) {
        fmt::print(
            "warning: {}: its expected answer disagrees with the reference\n",
            batch[i].name);
      }
      ++checked;
    }
  }
  const std::chrono::duration<double> elapsed = Clock::now() - start;
  // The OK line comes first and keeps its form: scripts read it.
  fmt::print("OK: {} inputs agree with the reference ({:.1f} s)\n{}", checked,
             elapsed.count(), statistics.Format());
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
  // A bad --out is found before the checks and the shrinking, not after.
  if (options.out.empty()) {
    throw std::invalid_argument("verify: --out: the output path is empty");
  }
  CheckOutputPath(options.out);
  if (options.format == InputFormat::kBatch) return RunOn<BatchInput>(options);
  if (!options.trace.empty()) {
    // A window of a trace has no capacity, policy or page size to check.
    throw std::invalid_argument(
        "verify: --trace applies to --format batch only");
  }
  RunOn<ReplayInput>(options);
}

}  // namespace kvprefix::verify
