// SPEC §11.11's block events: each worker's stream of the pages its cache
// stores and removes, as JSON lines in the order the caches changed, with
// the arrivals (and every worker's peek_match of each) between them. It is
// what a KV-aware router's indexer reads (vLLM's KV events, indexed by
// Dynamo's and llm-d's routers): rebuilding each worker's pages from the
// stream must give, at every arrival line, the matched lengths it holds.
//
// One line per event, compact:
//   {"time_us":T,"worker":W,"type":"stored","block_hash":H,
//    "parent_hash":H|null,"tokens":[...P tokens...]}
//   {"time_us":T,"worker":W,"type":"removed","block_hash":H}
//   {"time_us":T,"type":"arrival","request":K,"worker":W,"peek":[m_0,...]}
// A page's block_hash is SPEC §11.3's key_hash of every token from the
// start of its sequence to its end (router/stream.h's KeyHash, continued
// from the parent's hash), written as an unsigned 64-bit integer.
#ifndef KVPREFIX_IO_KV_EVENTS_H_
#define KVPREFIX_IO_KV_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>

#include "kvprefix/page_events.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix {

// The log of one replay's events, kept as text. Hand each worker's cache
// its listener (ServingCache::SetPageEventListener(&log.worker(w))) and the
// replay the log itself as its observer. Not thread-safe.
class KvEventLog final : public ReplayObserver {
 public:
  KvEventLog() = default;
  KvEventLog(const KvEventLog&) = delete;
  KvEventLog& operator=(const KvEventLog&) = delete;

  // Worker `w`'s listener (made on first use; the reference stays valid
  // for the log's life). O(w) the first time, O(1) after.
  PageEventListener& worker(std::size_t w);

  void Time(std::uint64_t now) override { now_ = now; }
  void Arrived(RequestId id, std::size_t worker,
               std::span<const std::uint64_t> matched) override;

  // The lines so far, each ending in '\n'.
  const std::string& text() const { return text_; }

 private:
  class WorkerPages final : public PageEventListener {
   public:
    WorkerPages(KvEventLog& log, std::size_t w) : log_(log), w_(w) {}
    std::uint64_t Stored(std::uint64_t parent, TokenSpan page) override;
    void Removed(std::uint64_t handle) override;

   private:
    KvEventLog& log_;
    std::size_t w_;
  };

  // `{"time_us":T,"worker":W,"type":"` (the start every page line shares).
  void StartPageLine(std::size_t w);

  std::deque<WorkerPages> workers_;
  std::string text_;
  std::uint64_t now_ = 0;
};

}  // namespace kvprefix

#endif  // KVPREFIX_IO_KV_EVENTS_H_
