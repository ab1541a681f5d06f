#include "router/stream.h"

#include <algorithm>

#include "kvprefix/splitmix64.h"

namespace kvprefix {

std::uint64_t Stream::Draw() {
  return SplitMix64(seed_ + draws_++ * kSplitMix64Gamma);
}

std::uint64_t KeyHash(TokenSpan key, std::uint64_t start) {
  std::uint64_t hash = start;
  for (const Token token : key) {
    hash = SplitMix64(
        hash ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(token)));
  }
  return hash;
}

Ring::Ring(std::size_t workers, std::uint64_t points_per_worker) {
  points_.reserve(workers * points_per_worker);
  for (std::size_t w = 0; w < workers; ++w) {
    for (std::uint64_t v = 0; v < points_per_worker; ++v) {
      points_.emplace_back(SplitMix64((std::uint64_t{w} << 32) + v),
                           static_cast<std::uint32_t>(w),
                           static_cast<std::uint32_t>(v));
    }
  }
  std::ranges::sort(points_);
}

std::size_t Ring::Owner(TokenSpan key) const {
  const auto at = std::ranges::lower_bound(
      points_, KeyHash(key), {},
      [](const auto& point) { return std::get<0>(point); });
  return std::get<1>(at == points_.end() ? points_.front() : *at);
}

}  // namespace kvprefix
