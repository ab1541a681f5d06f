// CacheCore: what every bounded cache engine has besides its structure, in
// one home: its options, its clock, its count of evictions and the eviction
// listener with the buffer that batches its reports.
//
// The eight engine classes of SPEC §8 and §9 (the tries reference, hash,
// double-array and radix; vllm's ReferenceBlockPool and BlockPool; sglang's
// ReferenceRadixCache and RadixCache) derive from it. It gives them the
// public members of kvprefix/prefix_index.h's PrefixCacheEngine that mean
// the same in all of them (options(), evicted_count(),
// SetEvictionListener()) and, to the engine itself, the clock and the
// eviction reports:
//   * the clock: Tick() returns the next time, 1, 2, 3, ...: SPEC §8's
//     stamp r of a touch (the bounded inserts so far, so that the stamp of
//     request k is k, §10.4's "the finishes so far"), or SPEC §9.3's tick
//     (every match, insert and new node of sglang). An engine that keeps no
//     times (vllm's pools, an unbounded trie) never ticks. One clock per
//     cache: the serving replay's time (serve/, µs) is another thing, and
//     never reaches an engine.
//   * the evicted count: what evicted_count() reports, in the engine's
//     unit (nodes for spec, blocks for vllm, nodes for sglang);
//   * the listener (kvprefix/cache.h's EvictionListener): ReportEvicted
//     passes it a run of evicted tokens at once; BufferEvicted collects
//     single tokens and FlushEvicted passes them in one call, so that an
//     engine that evicts node by node makes one call per insert. With no
//     listener set, both are a test of an empty std::function.
//
// Derivation is for code sharing only: CacheCore has no virtual members and
// a protected destructor (no engine is used or deleted through it).
//
// Complexity: every member O(1) (FlushEvicted: the listener's call). Memory:
// the options, three counters, the listener and the buffer (its capacity:
// the most tokens one insert evicted node by node, while a listener is
// set).
//
// Thread safety: none of its own; the const members may run concurrently,
// the rest need exclusive access, as the owning engine's calls do.
//
// Sources: SPEC §8 (stamps, evicted nodes), §9.2-§9.3 (blocks, ticks),
// §10.4 (the stamp of a finish); libCacheSim's cache_t (common fields and
// counters in one base, the algorithm apart) is the shape's model.
#ifndef KVPREFIX_KVPREFIX_CACHE_CORE_H_
#define KVPREFIX_KVPREFIX_CACHE_CORE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/memory.h"
#include "kvprefix/types.h"

namespace kvprefix {

class CacheCore {
 public:
  // The options the cache was built with. O(1).
  const CacheOptions& options() const { return options_; }
  // Evictions so far, in the engine's unit (its evicted_count's comment).
  // O(1).
  std::uint64_t evicted_count() const { return evicted_; }
  // Reports every later eviction's tokens to `listener` (kvprefix/cache.h;
  // empty: none). Not thread-safe.
  void SetEvictionListener(EvictionListener listener) {
    listener_ = std::move(listener);
  }

 protected:
  explicit CacheCore(const CacheOptions& options) : options_(options) {}
  CacheCore(const CacheCore&) = default;
  CacheCore(CacheCore&&) = default;
  CacheCore& operator=(const CacheCore&) = default;
  CacheCore& operator=(CacheCore&&) = default;
  ~CacheCore() = default;

  // The clock: advances it and returns the new time (1 at the first call).
  std::uint64_t Tick() { return ++clock_; }

  // Adds `count` to the evictions.
  void CountEvicted(std::uint64_t count) { evicted_ += count; }
  // True if a listener is set: what an engine tests before it builds a
  // report of its own.
  bool listening() const { return static_cast<bool>(listener_); }
  // Passes `tokens` (not empty) to the listener, if one is set. Propagates
  // what the listener throws.
  void ReportEvicted(TokenSpan tokens) {
    if (listener_) listener_(tokens);
  }
  // Keeps `token` for the next FlushEvicted, if a listener is set.
  void BufferEvicted(Token token) {
    if (listener_) buffer_.push_back(token);
  }
  // Passes the buffered tokens, if any, to the listener in one call and
  // empties the buffer (also when the listener throws, which propagates).
  void FlushEvicted() {
    if (buffer_.empty()) return;
    struct Clear {
      std::vector<Token>& buffer;
      ~Clear() { buffer.clear(); }
    } clear{buffer_};
    listener_(buffer_);
  }
  // The buffer's heap bytes (kvprefix/memory.h), for memory_bytes(). O(1).
  std::size_t eviction_buffer_bytes() const {
    return VectorHeapBytes<Token>(buffer_.capacity());
  }

 private:
  CacheOptions options_;
  std::uint64_t clock_ = 0;    // times given so far
  std::uint64_t evicted_ = 0;  // evictions so far
  EvictionListener listener_;
  std::vector<Token> buffer_;  // BufferEvicted's tokens, until the flush
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_CACHE_CORE_H_
