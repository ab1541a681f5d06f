// Checkers: "does this implementation answer this input as the reference
// does?", for an external command (SPEC §4 in, SPEC §5 out) or for built-in
// engines. The runner and the shrinker only see this one function type.
#ifndef KVPREFIX_VERIFY_CHECKER_H_
#define KVPREFIX_VERIFY_CHECKER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvprefix/batch.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/types.h"
#include "verify/failure.h"
#include "verify/subprocess.h"

namespace kvprefix::verify {

// Checks one input; nullopt when the implementation agrees with the
// reference. A checker never throws for anything the implementation does;
// it throws std::bad_alloc when memory runs out.
using Checker = std::function<std::optional<Failure>(const BatchInput&)>;

// The reference trie's answer to `input` (SPEC §2). O(tokens * log fan-out).
std::vector<Match> ReferenceMatches(const BatchInput& input);

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

// Makes a fresh set of engines under test for each input.
using EngineFactory =
    std::function<std::vector<std::unique_ptr<PrefixIndex>>()>;

// A checker that runs the batch job on fresh engines from `make_engines`
// through checking::DifferentialChecker (the one comparison harness) and
// reports its first disagreement as kWrongAnswer; an engine that throws
// (CapacityError, ...) is kCrash, except std::bad_alloc, which the checker
// rethrows: running out of memory is the machine's failure, not the
// engine's.
Checker MakeEngineChecker(EngineFactory make_engines);

// make_engines for MakeEngineChecker from registry names (see
// engines/registry.h); "all" stands for every engine but the reference.
// Throws std::invalid_argument for an unknown name.
EngineFactory EnginesByName(const std::vector<std::string>& names);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_CHECKER_H_
