// Shrinking a failing input (a batch input or a replay document) to a small
// one that fails the same way, so the user debugs three short sequences
// instead of three hundred long ones.
//
// Greedy delta debugging (Zeller & Hildebrandt, "Simplifying and Isolating
// Failure-Inducing Input", TSE 2002), specialised to the batch job's shape,
// in passes repeated until none makes progress:
//   1. drop sequences (cached ones and requests): chunks of n/2, n/4, ..., 1;
//   2. drop a token position from every sequence at once, which keeps
//      duplicates and shared prefixes intact (dropping it from one copy of a
//      duplicate would make the failure vanish);
//   3. drop tokens inside each sequence: chunks of len/2, ..., 1;
//   4. rename token values toward 0 (every occurrence of a value at once, so
//      the prefix structure survives): 0, 1, 2, 3, v/2, v-1 (|.| < |v|);
//   5. a replay document's cache (SPEC §8): a finite capacity toward 0
//      (0, C/2, C-1), the policy toward the default (each one listed
//      before it in kEvictionPolicies), the page size toward 1 (1, P-1);
//   6. a serving document's worker (SPEC §10.1): max_running toward 1, the
//      rates toward 0, output "none", output lengths to 0 (all, then
//      each), arrivals together (all equal to the first, then each equal to
//      the one before it, then the first moved to 0). A request's arrival
//      and output length are dropped with it in pass 1.
// A replay document has only requests; passes 1-4 treat them as a batch
// input's lists.
// Every candidate is accepted only if the checker reports the same
// FailureKind, so a wrong answer never shrinks into, say, a crash.
#ifndef KVPREFIX_VERIFY_SHRINK_H_
#define KVPREFIX_VERIFY_SHRINK_H_

#include <chrono>
#include <cstddef>
#include <string>

#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "verify/checker.h"
#include "verify/failure.h"

namespace kvprefix::verify {

struct ShrinkOptions {
  // Checker calls allowed (each may be a process start, ~20 ms for Python).
  std::size_t max_attempts = 5000;
  // Shrinking stops here, keeping the smallest failing input found so far.
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
};

template <typename Input>
struct ShrinkResultOf {
  Input input;           // fails with failure.kind
  Failure failure;       // the checker's report on `input`
  std::size_t attempts;  // checker calls made
  // Candidates kept (each failing the same way); 0: `input` is the failing
  // input itself, which no candidate could replace.
  std::size_t accepted = 0;
};
using ShrinkResult = ShrinkResultOf<BatchInput>;
using ReplayShrinkResult = ShrinkResultOf<ReplayInput>;
using ServeShrinkResult = ShrinkResultOf<ServeInput>;

// Shrinks `failing`, on which `check` reported `failure`. The result is
// 1-minimal for the passes above unless the budget ran out. Cost: up to
// max_attempts checker calls, each on an input no larger than `failing`.
// Throws only what `check` throws. Not thread-safe for one `check` that is
// not.
ShrinkResult Shrink(const BatchInput& failing, const Failure& failure,
                    const Checker& check, const ShrinkOptions& options);
ReplayShrinkResult Shrink(const ReplayInput& failing, const Failure& failure,
                          const ReplayChecker& check,
                          const ShrinkOptions& options);
ServeShrinkResult Shrink(const ServeInput& failing, const Failure& failure,
                         const ServeChecker& check,
                         const ShrinkOptions& options);

// The size of an input as shrink reports state it: "3 sequences (7
// tokens)" (cached sequences and requests together), "5 requests (10
// tokens; capacity 3, lru, page size 2)". O(1). Thread-safe.
std::string DescribeSize(const BatchInput& input);
std::string DescribeSize(const ReplayInput& input);
// "5 requests (10 tokens; capacity 3, lru, page size 2), max_running 2".
std::string DescribeSize(const ServeInput& input);

// The shrink report's line (no newline) for `result`, of shrinking
// `failing`: "shrunk in 11 checks from 2 sequences (7 tokens) to 1
// sequences (1 tokens)" (DescribeSize's), or "not shrunk: none of the 2
// smaller inputs tried fails" when no candidate was kept (the shrinker is
// greedy, so a smaller failing input that no single step reaches may exist).
// verify's and Python's kvprefix.testing reports print it. O(1). Thread-safe.
std::string DescribeShrink(const BatchInput& failing,
                           const ShrinkResult& result);
std::string DescribeShrink(const ReplayInput& failing,
                           const ReplayShrinkResult& result);
std::string DescribeShrink(const ServeInput& failing,
                           const ServeShrinkResult& result);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_SHRINK_H_
