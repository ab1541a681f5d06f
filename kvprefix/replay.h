// Replay of a request trace (SPEC §3, and SPEC §8 with a capacity): for each
// request in order, match it, report the match, then insert the request (and
// in a bounded cache touch its path and evict), as a serving system does.
#ifndef KVPREFIX_KVPREFIX_REPLAY_H_
#define KVPREFIX_KVPREFIX_REPLAY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kvprefix/cache.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

// The input of a replay: the member `requests` of a SPEC §8 replay document
// and the cache it runs on (capacity kUnbounded when the document has none).
// io reads and writes it; verify and the Python module build it.
struct ReplayInput {
  SequenceList requests;
  CacheOptions options;

  friend bool operator==(const ReplayInput&, const ReplayInput&) = default;
};

struct ReplaySummary {
  std::uint64_t requests = 0;
  std::uint64_t request_tokens = 0;  // sum of request lengths (tokens)
  std::uint64_t matched_tokens = 0;  // sum of matched lengths (tokens)
  // The most nodes present after any request (after its evictions).
  std::uint64_t peak_nodes = 0;

  // matched_tokens / request_tokens; 0 for an empty trace.
  double hit_ratio() const {
    return request_tokens == 0 ? 0.0
                               : static_cast<double>(matched_tokens) /
                                     static_cast<double>(request_tokens);
  }
};

// Replays `trace` on `index` (a PrefixCacheEngine or PrefixIndex, possibly
// non-empty, bounded or not): Access(request) for each request in order,
// then on_match(i, request, match) with the match of step 1. Cost: one
// Access per request. Throws whatever Access or on_match throws.
template <typename Index, typename OnMatch>
ReplaySummary Replay(Index& index, const SequenceList& trace,
                     OnMatch&& on_match) {
  ReplaySummary summary;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TokenSpan request = trace[i];
    const Match match = index.Access(request);
    on_match(i, request, match);
    ++summary.requests;
    summary.request_tokens += request.size();
    summary.matched_tokens += match.matched_length;
    summary.peak_nodes = std::max(summary.peak_nodes, index.node_count());
  }
  return summary;
}

// Replay without a per-request callback.
template <typename Index>
ReplaySummary Replay(Index& index, const SequenceList& trace) {
  return Replay(index, trace, [](std::size_t, TokenSpan, const Match&) {});
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_REPLAY_H_
