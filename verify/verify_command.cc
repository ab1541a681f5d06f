// The `kvprefix verify` subcommand: gathers inputs, runs a checker (an
// external command or built-in engines) on each, and on the first failure
// shrinks it, writes it as a case file and explains it. See verify_command.h.
#include "verify/verify_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli/option_checks.h"
#include "io/json_output.h"
#include "verify/case_file.h"
#include "verify/checker.h"
#include "verify/inputs.h"
#include "verify/shrink.h"
#include "verify/subprocess.h"

namespace kvprefix {
namespace {

using Clock = std::chrono::steady_clock;
using verify::Failure;
using verify::FailureKind;
using verify::NamedInput;

// Case files up to this size are also printed in the report.
constexpr std::size_t kMaxPrintedCaseBytes = 400;

// The longest --time, --timeout or --shrink-time accepted, in seconds (11.6
// days): far beyond any real run, and small enough that a deadline computed
// from it cannot overflow the clock.
constexpr double kMaxSeconds = 1e6;
// The shortest --timeout, in seconds: poll(2) counts in milliseconds.
constexpr double kMinTimeout = 0.001;

struct VerifyFlags {
  std::string command;
  std::vector<std::string> engines;
  std::vector<std::string> files;
  std::string cases;
  std::string trace;
  std::size_t trace_window = 64;
  std::uint64_t runs = 100;
  std::uint64_t seed = 0;
  int max_size = 100;
  double time_budget = 0;  // seconds; 0 = no budget
  double timeout = 10;     // seconds per run of the command
  std::string out = "kvprefix-verify-failure.json";
  bool no_format_check = false;
  std::size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  std::size_t shrink_attempts = 5000;
  double shrink_time = 120;  // seconds
};

// `seconds` (checked: finite, 0 to kMaxSeconds) rounded up, so that
// a short positive timeout does not become 0 ms.
std::chrono::milliseconds Milliseconds(double seconds) {
  return std::chrono::ceil<std::chrono::milliseconds>(
      std::chrono::duration<double>(seconds));
}

// `text` quoted for /bin/sh, for copy-paste replay lines.
std::string ShellQuote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

std::string Describe(const BatchInput& input) {
  return fmt::format(
      "{} sequences ({} tokens)",
      input.cached_sequences.size() + input.requests.size(),
      input.cached_sequences.total_tokens() + input.requests.total_tokens());
}

// What is under test, as flags, for replay lines and case-file sources.
std::string TargetFlags(const VerifyFlags& flags) {
  if (!flags.command.empty()) return "--cmd " + ShellQuote(flags.command);
  return fmt::format("--engines {}", fmt::join(flags.engines, ","));
}

verify::Checker MakeChecker(const VerifyFlags& flags) {
  if (!flags.command.empty()) {
    return verify::MakeCommandChecker(
        verify::CommandOptions{.command = flags.command,
                               .timeout = Milliseconds(flags.timeout),
                               .check_format = !flags.no_format_check});
  }
  return verify::MakeEngineChecker(verify::EnginesByName(flags.engines));
}

std::vector<NamedInput> LoadInputs(const VerifyFlags& flags) {
  std::vector<NamedInput> inputs = verify::ReadInputFiles(flags.files);
  auto add = [&inputs](std::vector<NamedInput> more) {
    for (NamedInput& input : more) inputs.push_back(std::move(input));
  };
  if (!flags.cases.empty()) add(verify::ReadCaseInputs(flags.cases));
  if (!flags.trace.empty()) {
    add(verify::TraceWindowInputs(flags.trace, flags.trace_window));
  }
  return inputs;
}

// Shrinks (unless it timed out: every attempt would cost the timeout),
// writes the case file, prints the report, and throws (exit status 1).
[[noreturn]] void ReportFailure(const VerifyFlags& flags,
                                const verify::Checker& check,
                                const NamedInput& failing,
                                const Failure& failure) {
  fmt::print("FAILED: {} on {}\n", verify::FailureKindName(failure.kind),
             failing.name);
  verify::ShrinkResult shrunk{failing.input, failure, 0};
  if (failure.kind != FailureKind::kTimeout) {
    shrunk = verify::Shrink(
        failing.input, failure, check,
        verify::ShrinkOptions{
            .max_attempts = flags.shrink_attempts,
            .deadline = Clock::now() + Milliseconds(flags.shrink_time)});
    if (shrunk.attempts > 0) {
      fmt::print("shrunk in {} checks from {} to {}\n", shrunk.attempts,
                 Describe(failing.input), Describe(shrunk.input));
    }
  }
  fmt::print("{}\n", shrunk.failure.message);
  const std::string text = verify::FormatCaseFile(
      shrunk.input, verify::ReferenceMatches(shrunk.input),
      fmt::format("kvprefix verify {}: {} on {}", TargetFlags(flags),
                  verify::FailureKindName(shrunk.failure.kind), failing.name));
  if (text.size() <= kMaxPrintedCaseBytes) fmt::print("case: {}", text);
  WriteFileAtomically(flags.out, text);
  fmt::print(
      "minimal failing case (with the reference's answer) written to {}\n"
      "replay: kvprefix verify {} --cases {}\n",
      flags.out, TargetFlags(flags), ShellQuote(flags.out));
  std::fflush(stdout);
  throw std::runtime_error(
      fmt::format("verify failed: {}", verify::FailureKindName(failure.kind)));
}

void Run(VerifyFlags flags, bool runs_given, bool seed_given) {
  if (flags.command.empty() == flags.engines.empty()) {
    throw std::invalid_argument(
        "verify: give exactly one of --cmd COMMAND and --engines NAMES");
  }
  verify::IgnoreSigpipe();
  const verify::Checker check = MakeChecker(flags);
  const std::vector<NamedInput> inputs = LoadInputs(flags);
  if (!runs_given) {
    // Given inputs replace the generated ones unless --runs asks for both;
    // a time budget alone means "generate until the time is up".
    if (flags.time_budget > 0) {
      flags.runs = UINT64_MAX;
    } else if (!inputs.empty()) {
      flags.runs = 0;
    }
  }
  if (inputs.empty() && flags.runs == 0) {
    // "OK: 0 inputs agree" would be a false success.
    throw std::invalid_argument(
        "verify: nothing to check (--runs 0 and no FILEs, --cases or --trace)");
  }
  if (!seed_given) flags.seed = std::random_device{}();
  if (flags.runs > 0) {
    fmt::print("generating inputs with --seed {}\n", flags.seed);
  }

  const Clock::time_point start = Clock::now();
  const Clock::time_point stop = flags.time_budget > 0
                                     ? start + Milliseconds(flags.time_budget)
                                     : Clock::time_point::max();
  // Inputs in order: the given ones, then generated ones; nullopt at the
  // end or when the time budget is spent (after the first input, so that a
  // run always checks something).
  std::size_t next_given = 0;
  std::uint64_t next_run = 0;
  auto next_input = [&]() -> std::optional<NamedInput> {
    if (next_given + next_run > 0 && Clock::now() >= stop) return std::nullopt;
    if (next_given < inputs.size()) return inputs[next_given++];
    if (next_run < flags.runs) {
      return verify::GeneratedInput(flags.seed, next_run++, flags.max_size);
    }
    return std::nullopt;
  };
  // Checks run --jobs at a time; failures are taken in input order, so a
  // run is reproducible whatever the number of jobs.
  std::size_t checked = 0;
  for (bool more = true; more;) {
    std::vector<NamedInput> batch;
    std::vector<std::future<std::optional<Failure>>> results;
    while (batch.size() < flags.jobs) {
      std::optional<NamedInput> input = next_input();
      if (!input) {
        more = false;
        break;
      }
      batch.push_back(*std::move(input));
    }
    for (const NamedInput& input : batch) {
      results.push_back(
          std::async(std::launch::async, check, std::cref(input.input)));
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      // A std::system_error (no pipes, no /bin/sh) propagates: status 1.
      const std::optional<Failure> failure = results[i].get();
      if (failure) ReportFailure(flags, check, batch[i], *failure);
      if (batch[i].expected &&
          *batch[i].expected != verify::ReferenceMatches(batch[i].input)) {
        fmt::print(
            "warning: {}: its expected answer disagrees with the reference\n",
            batch[i].name);
      }
      ++checked;
    }
  }
  const std::chrono::duration<double> elapsed = Clock::now() - start;
  fmt::print("OK: {} inputs agree with the reference ({:.1f} s)\n", checked,
             elapsed.count());
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check an implementation against the reference trie: an external "
      "command speaking SPEC §4 JSON on stdin and SPEC §5 on stdout "
      "(--cmd), or built-in engines (--engines). Inputs: FILEs, --cases, "
      "--trace and generated ones. The first failure is shrunk and written "
      "to --out; exit 0 all agree, 1 a failure, 2 bad usage or input.");
  verify->add_option("files", flags->files, "SPEC §4 input files to check")
      ->check(CLI::ExistingFile);
  verify->add_option("--cmd", flags->command,
                     "command run with /bin/sh -c once per input");
  verify
      ->add_option("--engines", flags->engines,
                   "built-in engines to check: names or 'all'")
      ->allow_extra_args(false)
      ->delimiter(',');
  verify
      ->add_option("--cases", flags->cases,
                   "case file, or folder of them (format of tests/data/cases)")
      ->check(CLI::ExistingPath);
  verify
      ->add_option("--trace", flags->trace,
                   "Mooncake trace (JSON Lines): check windows of it")
      ->check(CLI::ExistingFile);
  verify
      ->add_option("--trace-window", flags->trace_window,
                   "trace requests per window: first half cached, rest "
                   "requests")
      ->capture_default_str()
      ->check(
          CLI::Range(std::size_t{2}, std::numeric_limits<std::size_t>::max()));
  CLI::Option* runs = verify->add_option(
      "--runs", flags->runs,
      "generated inputs to check (default 100, or 0 when FILEs, --cases or "
      "--trace are given)");
  CLI::Option* seed = verify->add_option(
      "--seed", flags->seed, "seed of the generated inputs (default: random)");
  verify
      ->add_option("--max-size", flags->max_size,
                   "largest generator size (RapidCheck's size)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  verify
      ->add_option("--time", flags->time_budget,
                   "seconds budget: start no input after it (alone: "
                   "generate until it runs out); 0: no budget")
      ->check(cli::FiniteNumberIn(0, kMaxSeconds));
  verify
      ->add_option("--timeout", flags->timeout,
                   "seconds the command may take per input")
      ->capture_default_str()
      ->check(cli::FiniteNumberIn(kMinTimeout, kMaxSeconds));
  verify
      ->add_option("--jobs", flags->jobs,
                   "inputs checked at once (default: one per core)")
      ->check(CLI::PositiveNumber);
  verify->add_option("--out", flags->out, "where the minimal failing case goes")
      ->capture_default_str();
  verify->add_flag("--no-format-check", flags->no_format_check,
                   "accept any JSON layout, not only SPEC §5's compact bytes");
  verify
      ->add_option("--shrink-attempts", flags->shrink_attempts,
                   "most checks spent shrinking a failure")
      ->capture_default_str();
  verify
      ->add_option("--shrink-time", flags->shrink_time,
                   "most seconds spent shrinking a failure")
      ->capture_default_str()
      ->check(cli::FiniteNumberIn(0, kMaxSeconds));
  verify->callback([flags, runs, seed] {
    Run(*flags, runs->count() > 0, seed->count() > 0);
  });
}

}  // namespace kvprefix
