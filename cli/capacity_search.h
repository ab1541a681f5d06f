// Capacity planning by replays, for caches that are not stack algorithms
// (a policy other than lru, model vllm or sglang): the matched tokens of
// one bounded replay per capacity, the capacity past which nothing is
// evicted, and the bisection that finds the smallest capacity reaching a
// target hit ratio. `kvprefix curve` and Python's kvprefix.curve() both run
// these, so that they give the same capacities.
#ifndef KVPREFIX_CLI_CAPACITY_SEARCH_H_
#define KVPREFIX_CLI_CAPACITY_SEARCH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/sequence_list.h"

namespace kvprefix::cli {

// Called with the number of requests replayed so far (over every capacity
// of the call), on the calling thread only: for a progress line.
using ReplayedCallback = std::function<void(std::uint64_t replayed)>;

// For each of `capacities`, the matched tokens of `replay --capacity C` with
// the rest of `cache` (policy, page size, model, match limit, trigger) of
// `requests` (cli/cache_choice.h ModelEngineName's engine): one bounded replay
// per capacity, on min(jobs, capacities) threads (cli/parallel.h), each taking
// the next capacity and replaying it on an engine of its own; `requests` is
// shared, read-only. `replayed` (may be empty) as ReplayedCallback says.
// Rethrows the first exception of any thread once all have ended. O(capacities
// * replay).
std::vector<std::uint64_t> ReplayEachCapacity(
    const SequenceList& requests, std::span<const std::uint64_t> capacities,
    const CacheOptions& cache, unsigned jobs,
    const ReplayedCallback& replayed = nullptr);

// The capacity past which `model` evicts nothing, by one unbounded replay
// of `requests`: vllm's unbounded pool holds node_count blocks; sglang's
// capacity counts pages while its node_count counts nodes (edges of any
// number of pages), and its tree holds each distinct page prefix once: a
// spec trie's nodes at the page size. Throws as the replay. O(replay).
std::uint64_t CountDistinctPrefixes(const SequenceList& requests,
                                    const CacheOptions& model,
                                    const ReplayedCallback& replayed = nullptr);

// The smallest capacity reaching a target hit ratio of a cache that is not
// a stack algorithm, found by replays: a bisection over capacity from 0 to
// the distinct prefixes (past which nothing is evicted), `jobs` replays at
// a time, which ASSUMES the hit ratio grows with capacity. It need not:
// these caches are not stack algorithms (a larger cache may evict
// differently and hit less), so every capacity replayed is kept and Check
// holds the answer against that assumption. Not thread-safe (its replays
// run on `jobs` threads of their own).
class TargetBisection {
 public:
  // `requests` (with `request_tokens` tokens in all) and `model` must
  // outlive the bisection; `distinct_prefixes` as CountDistinctPrefixes
  // gives it.
  TargetBisection(const SequenceList& requests, const CacheOptions& model,
                  std::uint64_t distinct_prefixes, std::uint64_t request_tokens,
                  unsigned jobs, ReplayedCallback replayed = nullptr);

  // The smallest capacity from 0 to the distinct prefixes whose hit ratio
  // reaches `target`, if the assumption holds; nullopt if the largest does
  // not. Replays each capacity once. O(log(distinct prefixes) / log(jobs +
  // 1)) rounds of at most `jobs` replays.
  std::optional<std::uint64_t> SmallestReaching(double target);

  // The matched tokens at `capacity`, replayed once.
  std::uint64_t Matched(std::uint64_t capacity);

  // `matched` tokens over the requests' tokens (0 without any).
  double HitRatio(std::uint64_t matched) const;

  // What the bisection assumed and what it checked for `capacity`, found
  // for `target`: the replays at it and one below, and the first capacities
  // replayed where the hit ratio falls as the capacity grows, if any
  // ("--target-hit-ratio 0.3: capacity 12 by bisection (9 capacities
  // replayed in all), assuming ...; checked: capacity 11 hits ...").
  std::string Check(double target, std::uint64_t capacity);

 private:
  // "model vllm", "fifo".
  std::string CacheName() const;
  // Replays the capacities of `capacities` not replayed yet, at once.
  void ReplayAll(std::vector<std::uint64_t> capacities);

  const SequenceList& requests_;
  const CacheOptions& model_;
  std::uint64_t distinct_prefixes_;
  std::uint64_t request_tokens_;
  unsigned jobs_;
  ReplayedCallback replayed_;
  std::map<std::uint64_t, std::uint64_t> matched_;  // capacity: tokens
};

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_CAPACITY_SEARCH_H_
