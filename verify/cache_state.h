// What the reference's cache held when a replay document's request went
// wrong: the nodes present and the pages the requests before it evicted, for
// a failure report (`kvprefix verify --format requests`). A wrong match is
// the consequence of an earlier wrong eviction far more often than of the
// match itself, so the report shows what should have been there.
#ifndef KVPREFIX_VERIFY_CACHE_STATE_H_
#define KVPREFIX_VERIFY_CACHE_STATE_H_

#include <cstddef>
#include <string>

#include "kvprefix/replay.h"

namespace kvprefix::verify {

// The reference's cache (SPEC §8, §9: input.options) at step 1 of request
// `request` (< input.requests.size()), after the requests before it, as
// lines ending in newlines:
//   "the reference's cache at request 4 (capacity 3, lru, page size 2):
//      holds 3 nodes on 2 paths {[1,0,2,3] at node 2,[5,6] at node 4}
//      request 3 [7,8] evicted {[2,3]}
//      ..."
// The paths are those from the root to each leaf (ordered by tokens; for
// model vllm its chains, at the first block holding each, and the nodes
// are the blocks holding a chain); the
// evictions those of the last requests before `request` that evicted,
// newest first, with the total when some are left out. Bounded for big
// caches: at most 8 paths, 4 evicting requests and 16 pages each are
// shown, each token list as checking::FormatTokens shortens it. O(tokens of
// the requests before `request` * log) time.
std::string DescribeReferenceCache(const ReplayInput& input,
                                   std::size_t request);

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_CACHE_STATE_H_
