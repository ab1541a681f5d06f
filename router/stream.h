// SPEC §11.3's randomness and hashing for routers: the stream of draws a
// policy takes its random choices from, the key hash of a token sequence,
// and the consistent-hash ring. Everything is §7's splitmix64: the same
// seed gives the same choices on every machine (the real routers' rand,
// md5, blake3 and fastrand are not reproducible across processes).
#ifndef KVPREFIX_ROUTER_STREAM_H_
#define KVPREFIX_ROUTER_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "kvprefix/types.h"

namespace kvprefix {

// A policy's stream with seed S: draw i (i = 0, 1, 2, ... in the order the
// policy asks) is splitmix64((S + i · 0x9E3779B97F4A7C15) mod 2^64). Seed
// 0's first draw is 0xe220a8397b1dcdaf; Below(4) three times gives 3, 0, 3.
// Not thread-safe (one policy's own state).
class Stream {
 public:
  explicit Stream(std::uint64_t seed) : seed_(seed) {}

  // The next draw. O(1).
  std::uint64_t Draw();
  // The next draw mod k (k >= 1): one draw, also when k is 1. O(1).
  std::uint64_t Below(std::uint64_t k) { return Draw() % k; }
  // How many draws were taken.
  std::uint64_t draws() const { return draws_; }

 private:
  std::uint64_t seed_;
  std::uint64_t draws_ = 0;
};

// key_hash(s_1 ... s_j) = h_j, h_0 = 0, h_i = splitmix64(h_{i-1} XOR s_i),
// each token taken as a 64-bit two's complement value; 0 for no tokens.
// From h_0 = `start` instead, it continues a key: KeyHash(y, KeyHash(x)) is
// the key_hash of x followed by y (SPEC §11.11's chained block hash).
// O(tokens). Pure; thread-safe.
std::uint64_t KeyHash(TokenSpan key, std::uint64_t start = 0);

// The ring of N workers with V points each: point (w, v) sits at
// splitmix64(w · 2^32 + v), sorted by (position, w, v). Immutable after
// construction; thread-safe to read.
class Ring {
 public:
  // Throws std::bad_alloc when N · V points do not fit. O(N V log(N V)).
  Ring(std::size_t workers, std::uint64_t points_per_worker);

  // The owner of `key`: the worker of the first point at or after
  // KeyHash(key), or of the first point if none is. O(key + log(N V)).
  std::size_t Owner(TokenSpan key) const;

 private:
  // (position, worker, point of the worker), sorted.
  std::vector<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>> points_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_STREAM_H_
