// Checkers: "does this implementation answer this input as the reference
// does?", for an external command or for built-in engines, on batch inputs
// (SPEC §4 in, SPEC §5 out) or on replay documents (SPEC §8 in, SPEC §5 out:
// each request's match at step 1). The runner and the shrinker only see
// these function types.
#ifndef KVPREFIX_VERIFY_CHECKER_H_
#define KVPREFIX_VERIFY_CHECKER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/replay.h"
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

// The reference trie's answer to `input` (SPEC §2). O(tokens * log fan-out).
std::vector<Match> ReferenceMatches(const BatchInput& input);

// The reference's replay of `input` (SPEC §8: the reference trie built with
// input.options, over pages when the page size is not 1): each request's
// match at step 1, in order. O(tokens * log fan-out) plus O(log nodes) per
// eviction.
std::vector<Match> ReferenceMatches(const ReplayInput& input);

struct CommandOptions {
  std::string command;  // run with /bin/sh -c, once per input
  std::chrono::milliseconds timeout{10'000};
  bool check_format = true;  // also require SPEC §5's exact bytes
};

// A checker that runs `options.command` once per input, writes the input as a
// SPEC §4 document to its standard input and checks its standard output with
// CheckPrintedMatches. Failure kinds: kTimeout; kCrash (signal, or non-zero
// exit status, with the tail of its standard error); kOutputLimit (more than
// 16 times the expected answer's bytes plus 1 MiB); then those of
// CheckPrintedMatches. Throws std::system_error only if the process cannot be
// started at all (no pipes, no /bin/sh). Each call is independent, so the
// checker may be called from several threads.
Checker MakeCommandChecker(CommandOptions options);

// The same for replay documents: the command reads a SPEC §8 replay document
// (AppendReplayDocumentJson's compact form: requests, then capacity when
// bounded, policy and page size) and must print the reference's replay
// answer, ReferenceMatches(input).
ReplayChecker MakeReplayCommandChecker(CommandOptions options);

// Makes a fresh set of engines under test for each input, built with the
// given cache options (CacheOptions{} for the batch job).
using EngineFactory = std::function<std::vector<std::unique_ptr<PrefixIndex>>(
    const CacheOptions&)>;

// A checker that runs the batch job on fresh engines from `make_engines`
// through checking::DifferentialChecker (the one comparison harness) and
// reports its first disagreement as kWrongAnswer; an engine that throws
// (CapacityError, ...) is kCrash, except std::bad_alloc, which the checker
// rethrows: running out of memory is the machine's failure, not the
// engine's.
Checker MakeEngineChecker(EngineFactory make_engines);

// The same for replay documents: engines built with input.options replay
// the requests (DifferentialChecker::ApplyReplay, which also compares node
// and eviction counts and the evicted pages after every request).
ReplayChecker MakeReplayEngineChecker(EngineFactory make_engines);

// make_engines for MakeEngineChecker from registry names (see
// engines/registry.h); "all" stands for every engine but the reference.
// Throws std::invalid_argument for an unknown name.
EngineFactory EnginesByName(const std::vector<std::string>& names);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_CHECKER_H_
