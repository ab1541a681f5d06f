// Expanding one Mooncake block into its tokens (SPEC §7 token mode), the
// inner loop of token-mode trace reading: one hash and one remainder per
// token, 145 M tokens for the conversation trace.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "kvprefix/types.h"

namespace kvprefix {

__extension__ typedef unsigned __int128 Uint128;  // GCC and Clang

// x mod d for one divisor d in 1..2^31 fixed in advance, without a division
// instruction (a 64-bit div costs tens of cycles, and token mode takes one
// remainder per token): the quotient by multiplying with a precomputed
// reciprocal, Granlund and Montgomery, "Division by invariant integers using
// multiplication", PLDI 1994, Figure 4.1. With l = ceil(log2 d) and
// m = floor(2^64 (2^l - d) / d) + 1 (which fits in 64 bits),
// t = (m x) >> 64 and q = (t + ((x - t) >> min(l, 1))) >> max(l - 1, 0) is
// floor(x / d) for every 64-bit x; the remainder is x - q d. Holds the
// constants only: ExpandBlockTokens computes the remainders, many at once.
// Immutable after construction: thread-safe.
class Remainder {
 public:
  // `divisor` must be 1..2^31 (not checked: the callers check the
  // vocabulary first). O(1).
  explicit Remainder(std::uint32_t divisor)
      : divisor_(divisor),
        log_(std::bit_width(divisor - 1)),
        multiplier_(static_cast<std::uint64_t>(
            (Uint128{(std::uint64_t{1} << log_) - divisor} << 64) / divisor +
            1)),
        shift1_(std::min(log_, 1)),
        shift2_(std::max(log_ - 1, 0)) {}

  // The constants above, for ExpandBlockTokens.
  std::uint64_t divisor() const { return divisor_; }
  std::uint64_t multiplier() const { return multiplier_; }
  int shift1() const { return shift1_; }
  int shift2() const { return shift2_; }

 private:
  std::uint64_t divisor_;
  int log_;
  std::uint64_t multiplier_;
  int shift1_;
  int shift2_;
};

// Writes the first `count` tokens of block `id` to out[0..count):
// out[j] = SplitMix64(id * 512 + j) mod divisor (SPEC §7; `remainder` holds
// the vocabulary). count <= 512. Vectorized with Highway, the instruction set
// chosen at run time (AVX-512 or AVX2 on x86), the same values as the scalar
// formula on every target (tests/mooncake_test.cc). O(count); thread-safe.
void ExpandBlockTokens(std::uint64_t id, std::size_t count,
                       const Remainder& remainder, Token* out);

}  // namespace kvprefix
