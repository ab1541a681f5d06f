// The differential harness: runs the reference first and then every engine
// under test on the same operations, and reports the first disagreement with
// the engine, the cache options, the operation history, and expected versus
// actual.
//
// Unit tests, RapidCheck properties, fuzzers and `kvprefix verify --engines`
// all go through this one harness (after RE2's re2/testing/tester.cc), so a
// fix to how engines are compared is made once.
#ifndef KVPREFIX_CHECKING_DIFFERENTIAL_H_
#define KVPREFIX_CHECKING_DIFFERENTIAL_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/replay.h"
#include "kvprefix/types.h"

namespace kvprefix::checking {

// One step of an online workload: an insert or a match (SPEC §3), or an
// access, the serving step of SPEC §8 (match, insert, touch, evict).
struct Operation {
  enum class Kind { kInsert, kMatch, kAccess };
  Kind kind;
  std::vector<Token> tokens;
};

// Text form of a token list, "[1,2,-3]", of an operation, "insert [1,2]" /
// "match [1,2]" / "access [1,2]", and of cache options, "capacity 3, lru,
// page size 1" ("unbounded, page size 1" without a capacity).
std::string FormatTokens(TokenSpan tokens);
std::string FormatOperation(const Operation& operation);
std::string FormatCacheOptions(const CacheOptions& options);

class DifferentialChecker {
 public:
  // Checks every registered engine except the reference, unbounded.
  DifferentialChecker();
  // Checks the given engines (e.g. deliberately broken ones) against an
  // unbounded reference.
  explicit DifferentialChecker(
      std::vector<std::unique_ptr<PrefixIndex>> engines);
  // Checks the given engines, all built with `options`, against the
  // reference built with the same options (SPEC §8; PagedIndex when the page
  // size is not 1). With a finite capacity every engine's eviction listener
  // is taken over (SetEvictionListener) to compare what each evicts.
  DifferentialChecker(const CacheOptions& options,
                      std::vector<std::unique_ptr<PrefixIndex>> engines);

  // Applies `operation` to the reference, then to every engine, and
  // compares:
  //  - insert: the returned node ID;
  //  - match: the Match;
  //  - access: the Match of step 1, then MatchPrefix of the same tokens
  //    afterwards (what of the request's path survived its evictions);
  //  - after an insert or access: node_count(), evicted_count() and the
  //    multiset of pages (P tokens each) the step evicted.
  // Returns a report of the first disagreement, or nullopt. After a
  // disagreement the checker should be discarded.
  std::optional<std::string> Apply(const Operation& operation);

  // Applies an insert for each cached sequence, then a match for each
  // request (the batch job, SPEC §2).
  std::optional<std::string> ApplyBatch(const BatchInput& input);

  // Applies an access for each request, in order (replay, SPEC §3 and §8).
  // The engines must have been built with input.options.
  std::optional<std::string> ApplyReplay(const ReplayInput& input);

  // The operations applied so far, in order.
  const std::vector<Operation>& history() const { return history_; }
  const PrefixIndex& reference() const { return *reference_; }
  // The engines under test, in the order given.
  const std::vector<std::unique_ptr<PrefixIndex>>& engines() const {
    return engines_;
  }
  const CacheOptions& options() const { return options_; }

 private:
  // The pages one engine evicted during the current step, as a multiset:
  // their tokens end to end and each page's (offset, length) in them. The
  // buffers are cleared, not freed, between steps, so that evictions
  // allocate nothing once they have grown (the fuzzer evicts on most steps;
  // a vector per page made the eviction bookkeeping a sixth of its time
  // under ASan).
  struct Evicted {
    std::vector<Token> tokens;
    std::vector<std::pair<std::size_t, std::size_t>> pages;
    bool sorted = false;

    TokenSpan page(std::size_t i) const {
      return TokenSpan(tokens).subspan(pages[i].first, pages[i].second);
    }
    void Clear() {
      tokens.clear();
      pages.clear();
      sorted = false;
    }
    // Orders the pages by their tokens (lexicographically), once.
    void Sort();
    // True if both hold the same multiset of pages: at once when they hold
    // the same pages in the same order, else after sorting both.
    bool SamePages(Evicted& other);
    // "evicted {[1,2],[3]}".
    std::string Format() const;
  };

  // Compares engine `engine_index`'s counts and evicted pages with the
  // reference's after an insert or access.
  std::optional<std::string> CompareAfterStep(std::size_t engine_index);
  std::string Report(const PrefixIndex& engine, const std::string& expected,
                     const std::string& actual) const;

  CacheOptions options_;
  std::unique_ptr<PrefixIndex> reference_;
  std::vector<std::unique_ptr<PrefixIndex>> engines_;
  std::vector<Operation> history_;
  // Bounded only: what each evicted during the current step, reference
  // first. On the heap so that the listeners' pointers survive a move.
  std::unique_ptr<std::vector<Evicted>> evicted_;
};

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_DIFFERENTIAL_H_
