// `kvprefix verify` as a library call: checks an implementation of the
// contract (an external program, or built-in engines) against the reference
// trie on given and generated inputs, and on the first failure shrinks it,
// writes it as a case file and explains it. The CLI (cli/verify_command.cc)
// only turns its options into RunOptions.
#ifndef KVPREFIX_VERIFY_RUN_H_
#define KVPREFIX_VERIFY_RUN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checking/differential.h"
#include "verify/checker.h"
#include "verify/inputs.h"

namespace kvprefix::verify {

// The longest duration accepted, in seconds (11.6 days): far beyond any real
// run, and small enough that a deadline computed from it cannot overflow the
// clock.
inline constexpr double kMaxSeconds = 1e6;
// The shortest command timeout, in seconds: poll(2) counts in milliseconds.
inline constexpr double kMinTimeout = 0.001;
// The largest generator size (RunOptions::max_size).
inline constexpr int kMaxGeneratorSize = 10000;
// The most inputs checked at once (RunOptions::jobs): each is a thread and,
// with --cmd, a process with three pipes.
inline constexpr std::size_t kMaxJobs = 1024;

// What an implementation under test reads and answers.
enum class InputFormat {
  // SPEC §4 documents; the answer is the batch job's (SPEC §2, §5).
  kBatch,
  // SPEC §8 replay documents (requests, capacity, policy, page size); the
  // answer is each request's match at step 1 of a replay (SPEC §5's form).
  kRequests,
};

struct RunOptions {
  // What is checked: exactly one of an external command (run with
  // /bin/sh -c once per input, or kept running with Protocol::kLines) and
  // built-in engines (registry names or "all").
  std::string command;
  std::vector<std::string> engines;
  Protocol protocol = Protocol::kProcess;  // for `command` only
  // kLengths: compare matched_length and the uncached suffix only (for the
  // command and the engines alike).
  checking::Comparison comparison = checking::Comparison::kAll;
  InputFormat format = InputFormat::kBatch;
  // Given inputs: SPEC §4 files (replay documents with kRequests), a case
  // file or folder of them (replay case files with kRequests), a Mooncake
  // trace cut into windows of `trace_window` (>= 2) requests (kBatch only);
  // "" for none.
  std::vector<std::string> files;
  std::string cases;
  std::string trace;
  std::size_t trace_window = 64;
  // Generated inputs: `runs` of them (unset: 100, or none when inputs are
  // given, or until the time budget is spent when there is one) from `seed`
  // (unset: a random one, printed), sizes from 0 to `max_size` even for a
  // few runs (GeneratorSize in verify/inputs.h).
  std::optional<std::uint64_t> runs;
  std::optional<std::uint64_t> seed;
  int max_size = 100;  // 0 to kMaxGeneratorSize
  // kRequests only: generated documents of this SPEC §9 model, with its
  // match limit and trigger where fixed (GeneratedReplayInput in
  // verify/inputs.h); unset: the plain documents (model spec). Given
  // documents (files, cases) keep their own model. Set, it is a usage error
  // with kBatch, when no document is generated, or for options SPEC §9.4
  // refuses (CheckGeneratedModel).
  std::optional<GeneratedModel> model;
  // kRequests only: the options the cache implements (--models,
  // --match-limits, --policies, --page-sizes, --capacities): generated
  // documents are made ones it takes (GeneratedReplayInput in verify/inputs.h),
  // and the flags are printed with the seed. A usage error with kBatch, when no
  // document is generated, or with a `model` of another model than spec
  // (CheckGeneratedOptions).
  checking::ImplementedOptions implemented;
  // kRequests only: SPEC §10 serving documents (`--serving`): given
  // documents may have §10.1's members (arrivals, output lengths,
  // max_running, rates, output), generated ones carry them
  // (GeneratedServeInput in verify/inputs.h), and each engine's whole
  // serving answer (§10.5: every request's match and times, the totals) is
  // compared with the reference's and §10's rules checked
  // (MakeServeEngineChecker in verify/checker.h); an engine without a
  // request lifecycle is given only documents with max_running 1 and output
  // "none", and the report counts what it skipped. A failing document is
  // shrunk (verify/shrink.h's pass 6 too) and written to `out` as a §10
  // document. Engines only: a usage error with `command` or kBatch.
  bool serving = false;
  // Durations in seconds, finite: time_budget in [0, kMaxSeconds] (0: no
  // budget; no input starts after it), timeout in [kMinTimeout,
  // kMaxSeconds] (per input, for a command or a plugin), shrink_time in
  // [0, kMaxSeconds].
  double time_budget = 0;
  double timeout = 10;
  double shrink_time = 120;
  std::size_t shrink_attempts = 5000;
  std::size_t jobs =
      0;  // inputs checked at once (<= kMaxJobs); 0: one per core
  bool check_format = true;  // also require SPEC §5's exact bytes
  std::string out = "kvprefix-verify-failure.json";  // the minimal case
};

// Checks every input in order, `jobs` at a time, and prints the report on
// standard output: "OK: N inputs agree ..." and then what the inputs
// exercised (InputStatistics::Format in verify/statistics.h) and, when the
// implementation refused some (FailureKind::kRefused: a plugin's create,
// a command's {"refused":...} answer), "skipped: M inputs ..." with the
// first refusal; or the
// failure, shrunk (for a replay document's wrong request, with the
// reference's cache there: verify/cache_state.h), whose case file (with the
// reference's answer) is written to `out`. Failures are
// taken in input order, so a run is reproducible whatever `jobs` is.
// Throws std::invalid_argument or InputError for bad usage (a trace with
// kRequests) or input,
// IoError for an unwritable `out` (a folder, a missing folder: found
// before any check, by CheckOutputPath in io/json_output.h; an empty `out`
// is std::invalid_argument) or unreadable input, ResourceError
// ("out of memory while checking <input>", a thread that cannot start),
// std::system_error if the command cannot be started, and std::runtime_error
// ("verify failed: <kind>") when the implementation disagrees with the
// reference. With a plugin among the engines ("plugin:PATH") the checks run
// in a forked child process, and the shrinking one child per candidate
// (verify/isolation.h): a plugin that crashes or runs longer than `timeout`
// on an input is a crash or timeout failure of that input; the report is
// otherwise the in-process run's. Installs no signal handler (the children
// install crash handlers of their own) and leaves SIGPIPE's disposition as
// it is (RunSubprocess copes with commands that stop reading). Calls from
// several threads share no state but standard output, where their reports
// interleave; with a plugin, call it from a process's only thread (fork).
void Run(const RunOptions& options);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_RUN_H_
