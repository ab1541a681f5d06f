// The exact LRU hit-ratio curve of a trace at every capacity in one pass
// (SPEC §8, "The LRU curve").
//
// SPEC §8's LRU is a stack algorithm (Mattson, Gecsei, Slutz and Traiger,
// "Evaluation techniques for storage hierarchies", IBM Systems Journal 9(2),
// 1970): order the nodes of the unbounded trie by stamp, newest first, and
// among equal stamps the shallower first; a cache of capacity C holds
// exactly the first C nodes of that order. So a node of a request's matched
// path at distance d in that order (0 = most recent), taken before the
// request, is a hit exactly for C > d, and one pass gives every capacity.
//
// Computing d. The nodes with stamp s form one chain of a path (SPEC §8), at
// depths top(s), top(s) + 1, ...; so a node of stamp s at depth x has
//   d = (nodes with a stamp newer than s) + (x - top(s)).
// The first term is a suffix sum over stamps, kept in a Fenwick tree of node
// counts per stamp (Fenwick, "A new data structure for cumulative frequency
// tables", SP&E 1994): O(log requests) per query and update. An engine
// reports the matched path as runs of consecutive nodes with one stamp; a
// run of L nodes starting at distance d adds one hit at d, d + 1, ...,
// d + L - 1, so a radix engine pays per edge, not per token. The hits are
// kept as ramps: the matched nodes at capacity C are
//   sum over runs of clamp(C - d, 0, L) = sum (C - d)+ - sum (C - d - L)+,
// and (C - x)+ summed over sorted points x is a prefix count and a prefix
// sum, so the curve is evaluated exactly at any capacities after the pass,
// in memory proportional to the runs, not to the capacities.
#ifndef KVPREFIX_KVPREFIX_LRU_CURVE_H_
#define KVPREFIX_KVPREFIX_LRU_CURVE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/replay.h"
#include "kvprefix/types.h"

namespace kvprefix {

// The most points a caller should ask LogSpacedCapacities for: the CLI's
// --points and the Python module's points= stop here, since a curve of more
// points than a chart has pixels says nothing more and costs O(points).
inline constexpr std::size_t kMaxCurvePoints = 100000;

// min(points, max) distinct capacities from 1 to `max` (both included, when
// points >= 2), ascending, spaced as evenly on a log scale as whole numbers
// allow: the i-th of n is round(max^(i / (n - 1))), moved up past the one
// before it and down to leave room for the ones after, so rounding never
// merges two (the low end, where log spacing is finer than 1, gets 1, 2, 3,
// ...). {max} if points is 1; {} if max or points is 0. O(points).
std::vector<std::uint64_t> LogSpacedCapacities(std::uint64_t max,
                                               std::size_t points);

// Counts per stamp 1, 2, 3, ... with suffix sums; grows as stamps do.
// Not thread-safe.
class StampCounts {
 public:
  // Adds `delta` nodes to stamp `stamp` (>= 1). O(log stamps), amortized.
  void Add(std::uint64_t stamp, std::int64_t delta);
  // Nodes whose stamp is greater than `stamp`. O(log stamps).
  std::uint64_t CountNewerThan(std::uint64_t stamp) const;
  std::size_t memory_bytes() const;

 private:
  std::uint64_t PrefixSum(std::uint64_t stamp) const;  // stamps <= stamp

  std::vector<std::uint64_t> tree_;    // Fenwick tree, 1-based
  std::vector<std::uint64_t> counts_;  // the plain counts, to regrow
  std::uint64_t total_ = 0;
};

// The stack distances of one trace, fed request by request, and the matched
// node counts they give at any capacity. Units are nodes (pages when the
// page size is not 1). Not thread-safe.
class StackDistances {
 public:
  // Starts request number `stamp` (1, 2, 3, ...: the engine's stamp for it).
  void BeginRequest(std::uint64_t stamp);
  // The next run of the request's matched path, root first: `length` >= 1
  // nodes that all had stamp `old_stamp` (>= 1) before this request, of
  // which the first `counted` (<= length) count as hits: fewer under a
  // match limit (SPEC §9.1), which caps the match but not the touch, so
  // the whole run still takes the request's stamp. O(log requests).
  void AddMatchedRun(std::uint64_t old_stamp, std::uint64_t length,
                     std::uint64_t counted);
  // Ends the request whose path (matched runs plus nodes it created) is
  // `path_length` nodes long: all of them now have its stamp.
  void EndRequest(std::uint64_t path_length);

  // For each capacity (in nodes, any order), the nodes that replaying the
  // trace with LRU at that capacity matches in total. O(runs log runs + K
  // log runs) the first time after a request (it sorts the runs and sums
  // them), O(K log runs) after.
  std::vector<std::uint64_t> MatchedNodes(
      std::span<const std::uint64_t> capacities);

  // The smallest capacity C (in nodes) at which the replay matches at least
  // `nodes` nodes, MatchedNodes({C})[0] >= nodes; nullopt if no capacity
  // matches that many (the unbounded replay matches fewer). 0 for nodes = 0.
  // Exact: the matched nodes are a nondecreasing function of the capacity,
  // searched by bisection over 0 to the largest stack distance plus one
  // (where the curve turns flat). O(log(distance) log runs) after the sort
  // MatchedNodes needs.
  std::optional<std::uint64_t> SmallestCapacityMatching(std::uint64_t nodes);

  std::size_t memory_bytes() const;

 private:
  struct Update {
    std::uint64_t stamp;
    std::uint64_t length;
    std::uint64_t end_depth;  // depth of the run's last node
  };

  // Sorts the ramps and sums them, if a run came since the last time.
  void Prepare();
  // MatchedNodes at one capacity, once prepared. O(log runs).
  std::uint64_t MatchedAt(std::uint64_t capacity) const;

  StampCounts counts_;
  std::vector<std::uint64_t> top_;  // top_[s]: depth of stamp s's chain top
  std::uint64_t stamp_ = 0;
  std::uint64_t depth_ = 0;           // path nodes of this request so far
  std::vector<Update> pending_;       // applied at EndRequest
  std::vector<std::uint64_t> ups_;    // ramp starts: distances d
  std::vector<std::uint64_t> downs_;  // ramp ends: d + L
  // Once prepared: ups_ and downs_ sorted, and their prefix sums
  // (up_sums_[i] = ups_[0] + ... + ups_[i - 1]).
  std::vector<std::uint64_t> up_sums_ = {0};
  std::vector<std::uint64_t> down_sums_ = {0};
  bool prepared_ = true;
};

// The LRU curve of a trace (model spec, either match limit), built request
// by request on engine `Cache`: a
// PrefixCacheEngine (or PagedIndex of one) that also offers
//   Match Access(TokenSpan request, OnRun&& on_run)
// reporting, before it touches anything, each run of the request's matched
// path, root first, as on_run(old_stamp, length), with stamps 1, 2, 3, ...
// given one per Access. The reference reports every node as a run of one;
// the radix engine reports whole edges. Not thread-safe.
template <typename Cache>
class LruCurve {
 public:
  // The curve of pages of `page_size` tokens (SPEC §8), model spec, each
  // match capped by `match_limit` (SPEC §9.1).
  explicit LruCurve(std::uint64_t page_size = 1,
                    MatchLimit match_limit = MatchLimit::kAll)
      : cache_(CacheOptions{.capacity = kNeverFull,
                            .policy = EvictionPolicy::kLru,
                            .page_size = page_size}),
        match_limit_(match_limit) {}

  // Replays one request on the unbounded trie and records its distances.
  // Returns its unbounded match (not capped by the match limit). Cost: the
  // engine's Access plus O(log requests) per run.
  Match Add(TokenSpan request) {
    ++requests_;
    request_tokens_ += request.size();
    distances_.BeginRequest(requests_);
    // The match limit in pages: only the path's first `countable` nodes can
    // be hits; the cache still touches and holds the whole path (SPEC §9.1
    // for model spec), so the distances are the unlimited ones.
    const std::uint64_t page_size = cache_.options().page_size;
    std::uint64_t countable =
        MatchLimitTokens(match_limit_, request.size(), page_size) / page_size;
    const Match match =
        cache_.Access(request, [&](std::uint64_t stamp, std::uint64_t length) {
          const std::uint64_t counted = std::min(length, countable);
          countable -= counted;
          distances_.AddMatchedRun(stamp, length, counted);
        });
    distances_.EndRequest(request.size() / cache_.options().page_size);
    return match;
  }

  // Matched tokens of an LRU replay of the requests so far at each capacity
  // (in nodes: pages of page_size tokens), in the order given.
  std::vector<std::uint64_t> MatchedTokens(
      std::span<const std::uint64_t> capacities) {
    std::vector<std::uint64_t> matched = distances_.MatchedNodes(capacities);
    for (std::uint64_t& nodes : matched) {
      nodes *= cache_.options().page_size;
    }
    return matched;
  }

  // The hit ratio of `matched_tokens` of the requests so far, as a replay
  // reports it (ReplaySummary::hit_ratio) and the CLI and the Python module
  // print it: matched_tokens / request_tokens() in double precision, 0
  // before any request token. O(1).
  double HitRatio(std::uint64_t matched_tokens) const {
    return ReplaySummary{.request_tokens = request_tokens_,
                         .matched_tokens = matched_tokens}
        .hit_ratio();
  }

  // The smallest capacity C (in nodes: pages of page_size tokens) whose LRU
  // replay of the requests so far reaches `hit_ratio`:
  // HitRatio(MatchedTokens({C})[0]) >= hit_ratio, the hit ratio compared
  // exactly as printed, so that C - 1 prints a lower one. Computed from all
  // the stack distances, not interpolated between capacities: exactly what
  // a scan of `replay --capacity C` over every C would find. nullopt if no
  // capacity reaches it (the unbounded replay's hit ratio is lower; also for
  // NaN); 0 if hit_ratio <= 0. O(log(request tokens) + log(distance) log
  // runs) after the sort MatchedTokens needs.
  std::optional<std::uint64_t> SmallestCapacityReaching(double hit_ratio) {
    const std::uint64_t page_size = cache_.options().page_size;
    const auto reaches = [&](std::uint64_t nodes) {
      return HitRatio(nodes * page_size) >= hit_ratio;
    };
    // HitRatio is nondecreasing in the matched nodes (double conversion and
    // division by a fixed positive number are monotone), so the fewest
    // matched nodes reaching it are found by bisection up to the unbounded
    // replay's.
    std::uint64_t low = 0;
    const std::uint64_t unbounded[] = {kUnbounded};
    std::uint64_t high = distances_.MatchedNodes(unbounded)[0];
    if (!reaches(high)) return std::nullopt;
    while (low < high) {
      const std::uint64_t middle = low + (high - low) / 2;
      if (reaches(middle)) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    return distances_.SmallestCapacityMatching(low);
  }

  std::uint64_t requests() const { return requests_; }
  std::uint64_t request_tokens() const { return request_tokens_; }
  // Nodes of the unbounded trie: every capacity from here on hits as much
  // as the unbounded replay (SPEC §3).
  std::uint64_t distinct_prefixes() const { return cache_.node_count(); }
  std::size_t memory_bytes() const {
    return cache_.memory_bytes() + distances_.memory_bytes();
  }

 private:
  // A capacity no trie reaches, but bounded, so that the engine keeps the
  // stamps the distances need.
  static constexpr std::uint64_t kNeverFull = kUnbounded - 1;

  Cache cache_;
  MatchLimit match_limit_;
  StackDistances distances_;
  std::uint64_t requests_ = 0;
  std::uint64_t request_tokens_ = 0;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_LRU_CURVE_H_
