// The pages a cache comes to hold and lets go, as it changes (SPEC §11.11):
// what a KV-aware router's indexer reads (vLLM's BlockStored and
// BlockRemoved events, which Dynamo's and llm-d's routers index; SGLang's
// radix cache sends the same). A page is P tokens at a page-aligned place
// of a cached sequence, together with everything before it; the cache
// holds it when a match can reach it (model spec: a node; vllm: a block
// holding its chain, pinned or in the free queue; sglang: the tree's
// tokens, page by page).
//
// The reference caches (reference/) report to a listener; the listener
// names each page with a handle of its choosing (serve/kv_events.h's writer
// returns the chained block hash) that the cache keeps beside the page and
// gives back when the page goes, so neither side walks a path again.
#ifndef KVPREFIX_KVPREFIX_PAGE_EVENTS_H_
#define KVPREFIX_KVPREFIX_PAGE_EVENTS_H_

#include <cstdint>

#include "kvprefix/types.h"

namespace kvprefix {

// Receives a cache's page changes in the order they happen. Calls must not
// re-enter the cache. Not thread-safe: one cache calls it.
class PageEventListener {
 public:
  // The parent of a page that starts at the root.
  static constexpr std::uint64_t kRoot = 0;

  virtual ~PageEventListener() = default;
  // The cache now holds `page` (P tokens, as the cache holds them) right
  // after the page whose handle is `parent` (kRoot: `page` is the first).
  // Returns the page's handle, which the cache keeps until the page goes. A
  // page held twice (two vllm blocks holding one chain) is stored twice.
  virtual std::uint64_t Stored(std::uint64_t parent, TokenSpan page) = 0;
  // The cache no longer holds (one copy of) the page `handle` named. Pages
  // may go before pages after them (a vllm block is taken from the free
  // queue whatever its chain's length); a match stops at the first gap.
  virtual void Removed(std::uint64_t handle) = 0;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_PAGE_EVENTS_H_
