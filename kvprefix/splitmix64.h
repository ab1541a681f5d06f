// splitmix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014), as written in SPEC §7: the one mixing function
// of Mooncake token expansion (io/mooncake.h) and of the routers' streams,
// key hashes and rings (router/stream.h, SPEC §11.3).
#ifndef KVPREFIX_KVPREFIX_SPLITMIX64_H_
#define KVPREFIX_KVPREFIX_SPLITMIX64_H_

#include <cstdint>

namespace kvprefix {

// The golden gamma splitmix64 adds before mixing, 0x9E3779B97F4A7C15.
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ULL;

// splitmix64's output for state `x` (64-bit, wrapping). Pure; thread-safe.
constexpr std::uint64_t SplitMix64(std::uint64_t x) {
  std::uint64_t z = x + kSplitMix64Gamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_SPLITMIX64_H_
