// Replay of a request trace (SPEC §3, and SPEC §8 with a capacity): for each
// request in order, match it, report the match, then insert the request (and
// in a bounded cache touch its path and evict), as a serving system does.
#ifndef KVPREFIX_KVPREFIX_REPLAY_H_
#define KVPREFIX_KVPREFIX_REPLAY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/namespaces.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

// The input of a replay: the member `requests` of a SPEC §8 replay document
// and the cache it runs on (capacity kUnbounded when the document has none).
// io reads and writes it; verify and the Python module build it.
struct ReplayInput {
  SequenceList requests;
  CacheOptions options;
  // SPEC §8.1: one namespace per request; empty: every one in "".
  std::vector<std::string> namespaces = {};

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

// Replays `requests` on `index` (a PrefixCacheEngine or PrefixIndex,
// possibly non-empty, bounded or not) as the continuation of the replay
// `summary` counts so far, so that a trace read in chunks is replayed chunk
// by chunk: Access(request) for each request in order, then
// on_match(i, request, match) with the match of step 1 and i the request's
// number in the whole replay (summary.requests before it: 0, 1, 2, ...),
// then adds it to `summary`. Cost: one Access per request, and for a
// bounded index one node_count() (an unbounded one only grows, so its peak
// is its count at the end: one call in all, which matters where a call
// crosses a plugin's boundary, plugin/plugin_engine.h). Throws whatever
// Access or on_match throws (`summary` then counts the requests done).
template <typename Index, typename OnMatch>
void ContinueReplay(Index& index, const SequenceList& requests,
                    ReplaySummary& summary, OnMatch&& on_match) {
  bool bounded = false;
  if constexpr (requires { index.options(); }) {
    bounded = index.options().bounded();
  }
  // The unbounded peak, taken however the loop ends.
  struct FinalPeak {
    Index& index;
    ReplaySummary& summary;
    bool bounded;
    ~FinalPeak() {
      if (!bounded) {
        summary.peak_nodes = std::max(summary.peak_nodes, index.node_count());
      }
    }
  } final_peak{index, summary, bounded};
  for (const TokenSpan request : requests) {
    const Match match = index.Access(request);
    on_match(static_cast<std::size_t>(summary.requests), request, match);
    ++summary.requests;
    summary.request_tokens += request.size();
    summary.matched_tokens += match.matched_length;
    if (bounded) {
      summary.peak_nodes = std::max(summary.peak_nodes, index.node_count());
    }
  }
}

// Replays `trace` on `index` from the start of a replay: ContinueReplay
// with a zero summary, which it returns.
template <typename Index, typename OnMatch>
ReplaySummary Replay(Index& index, const SequenceList& trace,
                     OnMatch&& on_match) {
  ReplaySummary summary;
  ContinueReplay(index, trace, summary, on_match);
  return summary;
}

// Replays `requests` from the start, request i in namespace namespaces[i]
// (SPEC §8.1; an empty span: every one in ""): Replay on the requests as
// NamespaceFolder folds them when some namespace is not "" (O(tokens) more
// for the copy), else on `requests` themselves. on_match(i, request, match)
// gets the request of `requests`, unfolded. Also throws
// std::invalid_argument for a namespace list of the wrong length, and what
// the folder throws.
template <typename Index, typename OnMatch>
ReplaySummary Replay(Index& index, const SequenceList& requests,
                     std::span<const std::string> namespaces,
                     OnMatch&& on_match) {
  if (!HasNamespaces(namespaces)) return Replay(index, requests, on_match);
  NamespaceFolder folder;
  const SequenceList folded = folder.Folded(requests, namespaces);
  return Replay(index, folded,
                [&](std::size_t i, TokenSpan, const Match& match) {
                  on_match(i, requests[i], match);
                });
}

// Replay without a per-request callback.
template <typename Index>
ReplaySummary Replay(Index& index, const SequenceList& trace) {
  return Replay(index, trace, [](std::size_t, TokenSpan, const Match&) {});
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_REPLAY_H_
