// Checkers: "does this implementation answer this input as the reference
// does?", for an external command or for built-in engines, on batch inputs
// (SPEC §4 in, SPEC §5 out) or on replay documents (SPEC §8 in, SPEC §5 out:
// each request's match at step 1). The runner and the shrinker only see
// these function types.
#ifndef KVPREFIX_VERIFY_CHECKER_H_
#define KVPREFIX_VERIFY_CHECKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checking/differential.h"
#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"
#include "verify/failure.h"
#include "verify/subprocess.h"

namespace kvprefix::verify {

// Checks one input; nullopt when the implementation agrees with the
// reference. A checker never throws for anything the implementation does;
// it throws std::bad_alloc when memory runs out.
template <typename Input>
using CheckerOf = std::function<std::optional<Failure>(const Input&)>;
using Checker = CheckerOf<BatchInput>;         // the batch job (SPEC §2)
using ReplayChecker = CheckerOf<ReplayInput>;  // replay documents (SPEC §8)
using ServeChecker = CheckerOf<ServeInput>;    // serving documents (SPEC §10)

// The reference trie's answer to `input` (SPEC §2). O(tokens * log fan-out).
std::vector<Match> ReferenceMatches(const BatchInput& input);

// The reference's replay of `input` (SPEC §8: the reference trie built with
// input.options, over pages when the page size is not 1): each request's
// match at step 1, in order. O(tokens * log fan-out) plus O(log nodes) per
// eviction.
std::vector<Match> ReferenceMatches(const ReplayInput& input);

// How an external command is run (verify/README.md, "Check your own
// cache").
enum class Protocol {
  // One process per input: the document on standard input, then end of
  // file; the answer is all of standard output, once the process exited.
  kProcess,
  // Long-lived processes (JSON Lines): each reads one document per line
  // and answers each with one line. A process that dies, hangs, floods or
  // answers other than one line is reported on the input it was given, and
  // a fresh one takes the next input.
  kLines,
};

// "process" or "lines", the names `kvprefix verify --protocol` takes.
std::string_view ProtocolName(Protocol protocol);

struct CommandOptions {
  std::string command;  // run with /bin/sh -c
  Protocol protocol = Protocol::kProcess;
  std::chrono::milliseconds timeout{10'000};  // per input
  bool check_format = true;  // also require SPEC §5's exact bytes
  // kLengths: an answer's cache_node may be missing or any JSON value.
  checking::Comparison comparison = checking::Comparison::kAll;
};

// A checker that gives `options.command` each input as a SPEC §4 document
// (compact, one line) on its standard input and checks its answer with
// CheckPrintedMatches: with kProcess it runs the command once per input, and
// the answer is its whole standard output; with kLines it keeps one running
// process per concurrent call (started on first use, the next call reusing
// it), writes the document as one line and reads one answer line
// (LineProcess). Failure kinds: kTimeout; kCrash (signal, or non-zero exit
// status, with the tail of its standard error; with kLines also an exit or
// closed output before the answer line, whatever the status); kOutputLimit
// (more than 16 times the expected answer's bytes plus 1 MiB); with kLines
// kNotJson for output beyond the answer line; then those of
// CheckPrintedMatches. With kLines a failure other than a timeout is
// checked again on a new process given only that input (and 50 ms to print
// anything after its answer line), which then replaces the old one: its
// result is the one returned, so a reported input fails by itself; if the
// new process answers it right, the first failure is returned with
// depends_on_earlier_input set (state kept between lines, output out of
// step). Throws std::system_error only if the
// process cannot be started at all (no pipes, no /bin/sh). The checker may
// be called from several threads; its copies share the kLines processes,
// which are stopped (end of input, then SIGKILL after 100 ms) when the last
// copy goes.
Checker MakeCommandChecker(CommandOptions options);

// The same for replay documents: the command reads a SPEC §8 replay document
// (AppendReplayDocumentJson's compact form: requests, then capacity when
// bounded, policy and page size) and must print the reference's replay
// answer, ReferenceMatches(input).
ReplayChecker MakeReplayCommandChecker(CommandOptions options);

// The same for SPEC §10 serving documents: the command reads a §10 document
// (AppendServeDocumentJson: what `kvprefix replay DOC --input-format
// requests` reads) and must print the reference's serving answer, SPEC
// §10.5's {"requests":[...],"totals":{...}} (what that command prints),
// checked by CheckPrintedJsonAnswer: every request's match, times, refusal
// and wait, then the totals, the first difference named by its JSON
// location; the bytes too unless options.check_format is false (with
// Comparison::kLengths, cache_node is not compared, nor the bytes). What it
// checks is a whole serving replay (a simulator's queue, clock and cache
// together); SPEC §10's rules on the cache calls are not seen.
ServeChecker MakeServeCommandChecker(CommandOptions options);

// Makes a fresh set of engines under test for each input, built with the
// given cache options (CacheOptions{} for the batch job).
using EngineFactory = std::function<std::vector<std::unique_ptr<PrefixIndex>>(
    const CacheOptions&)>;

// A checker that runs the batch job on fresh engines from `make_engines`
// through checking::DifferentialChecker (the one comparison harness,
// comparing what `comparison` says) and reports its first disagreement as
// kWrongAnswer; an engine that throws (CapacityError, ...) is kCrash, except
// std::bad_alloc, which the checker rethrows: running out of memory is the
// machine's failure, not the engine's.
Checker MakeEngineChecker(
    EngineFactory make_engines,
    checking::Comparison comparison = checking::Comparison::kAll);

// The same for replay documents: engines built with input.options replay
// the requests (DifferentialChecker::ApplyReplay, which with kAll also
// compares node and eviction counts and the evicted pages after every
// request).
ReplayChecker MakeReplayEngineChecker(
    EngineFactory make_engines,
    checking::Comparison comparison = checking::Comparison::kAll);

// make_engines for MakeEngineChecker from registry names (see
// engines/registry.h); "all" stands for every engine of the input's model
// but the reference (EngineNames(model)).
// Throws std::invalid_argument for an unknown name. A plugin's name is not
// loaded (its engines are made, and it is loaded, on the factory's first
// call): load it first where its crash cannot end the caller
// (CheckPluginInChild, verify/isolation.h).
EngineFactory EnginesByName(const std::vector<std::string>& names);

// The serving documents each engine under test was not given because it
// has no request lifecycle (ServingCache::one_at_a_time(): exact only for
// SPEC §10.7's documents, max_running 1 and output "none"), counted per
// engine for the report. Thread-safe.
class ServeSkips {
 public:
  void Add(std::string_view engine);
  // One line per engine, by name: "skipped for double-array: 37 serving
  // documents with max_running above 1 or output \"unique\" (no request
  // lifecycle: it answers one request at a time, exact only for SPEC
  // §10.7's documents)\n"; "" when none was skipped.
  std::string Format() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t, std::less<>> counts_;
};

// A checker of SPEC §10 serving documents on the engines `names` (as
// EnginesByName takes them: registry names, "plugin:PATH", "all" for every
// engine of the document's model but the reference), each built per
// document with MakeServingCache: checking::CheckServeInput compares every
// engine's whole answer (each request's, then the totals) with the
// reference's and checks the rules of SPEC §10 (RuleCheckingCache). An
// engine without a request lifecycle is given only the documents of §10.7
// (max_running 1, output "none") and counted in `skips` for the others;
// when no engine under test takes a document it is kRefused, as are options
// an engine refuses (std::invalid_argument). A disagreement or broken rule
// is kWrongAnswer (the report ends with the document), a PluginError
// kCrash. Throws std::invalid_argument for an unknown name. May be called
// from several threads.
ServeChecker MakeServeEngineChecker(const std::vector<std::string>& names,
                                    std::shared_ptr<ServeSkips> skips);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_CHECKER_H_
