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
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/namespaces.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/replay.h"
#include "kvprefix/types.h"

namespace kvprefix::checking {

// One step of an online workload: an insert or a match (SPEC §3), or an
// access, the serving step of SPEC §8 (match, insert, touch, evict), of
// `tokens` in namespace `name_space` (SPEC §8.1; "" is the default).
struct Operation {
  enum class Kind { kInsert, kMatch, kAccess };
  Kind kind;
  std::vector<Token> tokens;
  std::string name_space = {};
};

// An engine under test that takes namespaces (SPEC §8.1) itself instead of
// having the harness fold them into first tokens (kvprefix/namespaces.h):
// in a run with namespaces (DifferentialChecker::FoldNamespaces) the checker
// calls SetNamespace with each operation's namespace just before handing it
// the operation's tokens as they are, unfolded. Every other engine, and the
// reference, get the tokens folded by the checker's NamespaceFolder. The
// pages a NamespaceTaker evicts in such a run are not compared (they hold
// its own tokens); its matches and counts are. For a
// cache whose own handling of namespaces is under test (the namespace
// mutants of testing/mutants.h). In a run without namespaces SetNamespace
// is never called.
class NamespaceTaker {
 public:
  virtual ~NamespaceTaker() = default;
  virtual void SetNamespace(std::string_view name) = 0;
};

// The tokens each engine is handed for an operation (see NamespaceTaker):
// folded with the operation's namespace when the run has namespaces, else
// as they are. Not thread-safe.
class OperationTokens {
 public:
  // A run with namespaces when `fold`: every operation's first token is
  // folded (a run folds all its operations or none, kvprefix/namespaces.h).
  explicit OperationTokens(bool fold) : fold_(fold) {}

  bool folds() const { return fold_; }
  // The tokens of `operation` as the reference sees them (folded or not);
  // valid until the next call. Throws as NamespaceFolder::Fold, and
  // std::invalid_argument for an operation with a namespace in a run
  // without. O(tokens).
  TokenSpan Prepare(const Operation& operation);
  // The tokens `engine` is handed for `operation`, last given to Prepare:
  // Prepare's, or for a NamespaceTaker in a run with namespaces
  // operation.tokens, after its SetNamespace. O(1).
  TokenSpan For(PrefixIndex& engine, const Operation& operation) const;

 private:
  bool fold_;
  NamespaceFolder folder_;
  std::vector<Token> folded_;
  TokenSpan prepared_;
};

// What a comparison with the reference looks at.
enum class Comparison {
  // Everything kvprefix's engines share with the reference: every match's
  // matched_length and cache_node (SPEC §1's node IDs), the node ID an
  // insert returns, and after each insert or access node_count(),
  // evicted_count() and the pages evicted.
  kAll,
  // Only what a cache with its own structure and no kvprefix node IDs can
  // be held to: each match's matched_length (and so its uncached suffix,
  // SPEC §5), for a match, an access, and the request's tokens matched
  // again after an access. Node IDs, counts and evicted pages are not
  // compared, nor reported as a difference.
  kLengths,
};

// "all" or "lengths", the names `kvprefix verify --compare` takes.
std::string_view ComparisonName(Comparison comparison);
// The Comparison named `name` (as ComparisonName gives it), or nullopt.
std::optional<Comparison> ParseComparison(std::string_view name);

// Text form of a token list, "[1,2,-3]", of an operation, "insert [1,2]" /
// "match [1,2]" / "access [1,2]" (then ' in "lora-a"' for a namespace other
// than ""), and of cache options, "capacity 3, lru,
// page size 1" ("unbounded, page size 1" without a capacity; then ", model
// vllm, match limit all-but-last" unless spec with all, and ", trigger
// on-allocate" for that trigger: SPEC §9). Lists past 64
// tokens end in ",... N tokens in all". O(tokens shown); thread-safe.
std::string FormatTokens(TokenSpan tokens);
std::string FormatOperation(const Operation& operation);
std::string FormatCacheOptions(const CacheOptions& options);

// Pages an engine evicted (in one step, or over several), as a multiset: the
// eviction listener's tokens end to end and each page's (offset, length) in
// them. Clear() keeps the buffers, so that recording evictions allocates
// nothing once they have grown (the fuzzer evicts on most steps; a vector
// per page made the eviction bookkeeping a sixth of its time under ASan).
// Not thread-safe.
class EvictedPages {
 public:
  // Records what one EvictionListener call reports: `tokens`, the labels of
  // one or more nodes, cut into pages of `page_size` (>= 1) tokens, the unit
  // every engine agrees on (the last page may be shorter). O(tokens).
  void Add(TokenSpan tokens, std::size_t page_size);
  // An EvictionListener recording into `*this` (which must outlive it).
  EvictionListener Listener(std::size_t page_size);

  // The number of pages recorded. O(1).
  std::size_t size() const { return pages_.size(); }
  // Page `i` (i < size()): a view into the buffers, valid until the next
  // Add or Clear. O(1).
  TokenSpan page(std::size_t i) const {
    return TokenSpan(tokens_).subspan(pages_[i].first, pages_[i].second);
  }
  // Forgets every page, keeping the buffers' memory. O(1).
  void Clear() {
    tokens_.clear();
    pages_.clear();
    sorted_ = false;
  }
  // Orders the pages by their tokens (lexicographically), once.
  // O(pages log pages) comparisons.
  void Sort();
  // True if both hold the same multiset of pages: at once when they hold
  // the same pages in the same order, else after sorting both.
  bool SamePages(EvictedPages& other);
  // "evicted {[1,2],[3]}", in the order held (Sort() first for a canonical
  // one); past `max_pages` pages, ",... N pages in all" ends the list. Each
  // page as FormatTokens.
  std::string Format(std::size_t max_pages = SIZE_MAX) const;

 private:
  std::vector<Token> tokens_;
  std::vector<std::pair<std::size_t, std::size_t>> pages_;
  bool sorted_ = false;
};

// Checks engines against the reference (reference/reference_trie.h), one
// operation at a time. Each Apply costs what the operation costs the
// reference and every engine, plus O(evicted tokens log pages) to compare
// what they evicted; an exception an engine throws passes through (the
// checker should then be discarded). Not thread-safe: a checker and its
// engines belong to one thread at a time.
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
  // is taken over (SetEvictionListener) to compare what each evicts. An
  // engine built with other options is held to the same reference: e.g. a
  // cache whose capacity no workload reaches against the unbounded
  // reference, which it must equal (SPEC §8).
  DifferentialChecker(const CacheOptions& options,
                      std::vector<std::unique_ptr<PrefixIndex>> engines);
  // The same, comparing what `comparison` says. With kLengths no eviction
  // listener is taken over (the evicted pages are not compared), so an
  // engine without one can be checked.
  DifferentialChecker(const CacheOptions& options,
                      std::vector<std::unique_ptr<PrefixIndex>> engines,
                      Comparison comparison);

  // Applies `operation` to the reference, then to every engine, and
  // compares:
  //  - insert: the returned node ID;
  //  - match: the Match;
  //  - access: the Match of step 1, then MatchPrefix of the same tokens
  //    afterwards (what of the request's path survived its evictions);
  //  - after an insert or access: node_count(), evicted_count() and the
  //    multiset of pages (P tokens each) the step evicted;
  // with Comparison::kLengths only the matches' matched_length.
  // Returns a report of the first disagreement, or nullopt. After a
  // disagreement the checker should be discarded. The operation is copied
  // into history().
  std::optional<std::string> Apply(const Operation& operation);
  // The same, moving the operation into history() instead of copying it.
  std::optional<std::string> Apply(Operation&& operation);

  // Makes this a run with namespaces (SPEC §8.1): from now on every
  // operation's first token is folded with its namespace (see
  // NamespaceTaker). Call before the first Apply: throws std::logic_error
  // after it. An operation with a namespace other than "" in a run without
  // is refused by Apply (std::invalid_argument). O(1).
  void FoldNamespaces();

  // Applies an insert for each cached sequence, then a match for each
  // request (the batch job, SPEC §2), each in its namespace
  // (FoldNamespaces first if the input has any).
  std::optional<std::string> ApplyBatch(const BatchInput& input);

  // Applies an access for each request, in order (replay, SPEC §3 and §8),
  // each in its namespace as above. The engines must have been built with
  // input.options.
  std::optional<std::string> ApplyReplay(const ReplayInput& input);

  // The operations applied so far, in order.
  const std::vector<Operation>& history() const { return history_; }
  const PrefixIndex& reference() const { return *reference_; }
  // The engines under test, in the order given.
  const std::vector<std::unique_ptr<PrefixIndex>>& engines() const {
    return engines_;
  }
  const CacheOptions& options() const { return options_; }
  Comparison comparison() const { return comparison_; }

 private:
  // Applies an operation of `kind` for each sequence of `sequences`, in its
  // namespace of `namespaces` (one per sequence, or none: all in "").
  std::optional<std::string> ApplyAll(const SequenceList& sequences,
                                      std::span<const std::string> namespaces,
                                      Operation::Kind kind);
  // Apply's work on the operation just appended to history_.
  std::optional<std::string> ApplyLast();
  // Compares engine `engine_index`'s counts and evicted pages with the
  // reference's after an insert or access.
  std::optional<std::string> CompareAfterStep(std::size_t engine_index);
  std::string Report(const PrefixIndex& engine, const std::string& expected,
                     const std::string& actual) const;

  // The Match as a report shows it: with its cache_node unless kLengths.
  std::string FormatMatch(const Match& match) const;
  // Whether `actual` counts as `expected` under comparison_.
  bool SameMatch(const Match& expected, const Match& actual) const;

  CacheOptions options_;
  Comparison comparison_ = Comparison::kAll;
  std::unique_ptr<PrefixIndex> reference_;
  std::vector<std::unique_ptr<PrefixIndex>> engines_;
  std::vector<Operation> history_;
  OperationTokens tokens_{false};
  // Bounded only: what each evicted during the current step, reference
  // first. On the heap so that the listeners' pointers survive a move.
  std::unique_ptr<std::vector<EvictedPages>> evicted_;
};

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_DIFFERENTIAL_H_
