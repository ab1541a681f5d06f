// StampCounts and StackDistances: see the header.
#include "kvprefix/lru_curve.h"

#include <algorithm>
#include <cmath>

#include "kvprefix/memory.h"

namespace kvprefix {

std::vector<std::uint64_t> LogSpacedCapacities(std::uint64_t max,
                                               std::size_t points) {
  std::vector<std::uint64_t> capacities;
  if (max == 0 || points == 0) return capacities;
  const std::size_t count = std::min<std::uint64_t>(points, max);
  const double log_max = std::log(static_cast<double>(max));
  capacities.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double fraction =
        count == 1 ? 1.0 : static_cast<double>(i) / (count - 1);
    // 2^64 is exact as a double; a value that rounds to it or past it is
    // clamped to max below anyway.
    const double rounded = std::round(std::exp(log_max * fraction));
    const std::uint64_t spaced =
        i + 1 == count || rounded >= 18446744073709551616.0
            ? max
            : static_cast<std::uint64_t>(rounded);
    // At least one more than the capacity before, and room left for the
    // count - 1 - i after it: max - (count - 1 - i) >= (the one before) + 1,
    // since the one before left room for this one.
    const std::uint64_t lowest = capacities.empty() ? 1 : capacities.back() + 1;
    capacities.push_back(
        std::clamp<std::uint64_t>(spaced, lowest, max - (count - 1 - i)));
  }
  return capacities;
}

void StampCounts::Add(std::uint64_t stamp, std::int64_t delta) {
  if (stamp >= tree_.size()) {
    // Regrow by doubling and rebuild in O(size) (the linear Fenwick
    // construction: each cell passes its sum to its parent once).
    const std::size_t size =
        std::max<std::size_t>({16, 2 * tree_.size(), stamp + 1});
    counts_.resize(size, 0);
    tree_.assign(counts_.begin(), counts_.end());
    for (std::size_t i = 1; i < size; ++i) {
      const std::size_t parent = i + (i & (~i + 1));
      if (parent < size) tree_[parent] += tree_[i];
    }
  }
  // Unsigned wrap-around adds a negative delta exactly.
  const auto change = static_cast<std::uint64_t>(delta);
  counts_[stamp] += change;
  total_ += change;
  for (std::size_t i = stamp; i < tree_.size(); i += i & (~i + 1)) {
    tree_[i] += change;
  }
}

std::uint64_t StampCounts::PrefixSum(std::uint64_t stamp) const {
  std::uint64_t sum = 0;
  for (std::size_t i = std::min<std::uint64_t>(stamp, tree_.size() - 1); i > 0;
       i &= i - 1) {
    sum += tree_[i];
  }
  return sum;
}

std::uint64_t StampCounts::CountNewerThan(std::uint64_t stamp) const {
  return tree_.empty() ? 0 : total_ - PrefixSum(stamp);
}

std::size_t StampCounts::memory_bytes() const {
  return VectorHeapBytes<std::uint64_t>(tree_.capacity()) +
         VectorHeapBytes<std::uint64_t>(counts_.capacity());
}

void StackDistances::BeginRequest(std::uint64_t stamp) {
  stamp_ = stamp;
  depth_ = 0;
  pending_.clear();
  if (top_.size() <= stamp) top_.resize(std::max(2 * top_.size(), stamp + 1));
}

void StackDistances::AddMatchedRun(std::uint64_t old_stamp,
                                   std::uint64_t length,
                                   std::uint64_t counted) {
  if (counted > 0) {
    const std::uint64_t first_depth = depth_ + 1;
    const std::uint64_t distance =
        counts_.CountNewerThan(old_stamp) + (first_depth - top_[old_stamp]);
    ups_.push_back(distance);
    downs_.push_back(distance + counted);
    prepared_ = false;
  }
  depth_ += length;
  pending_.push_back({old_stamp, length, depth_});
}

void StackDistances::EndRequest(std::uint64_t path_length) {
  // The request's path is the top of each old chain it met (a chain lies on
  // one path, and the request's path starts at the root), so what is left of
  // that chain starts just below the run.
  for (const Update& update : pending_) {
    counts_.Add(update.stamp, -static_cast<std::int64_t>(update.length));
    top_[update.stamp] = update.end_depth + 1;
  }
  if (path_length > 0) {
    counts_.Add(stamp_, static_cast<std::int64_t>(path_length));
    top_[stamp_] = 1;
  }
  pending_.clear();
}

namespace {

// sum over sorted points x < c of (c - x), with prefix[i] = points[0..i).
std::uint64_t RampSum(const std::vector<std::uint64_t>& points,
                      const std::vector<std::uint64_t>& prefix,
                      std::uint64_t c) {
  const auto below = static_cast<std::size_t>(
      std::lower_bound(points.begin(), points.end(), c) - points.begin());
  return below * c - prefix[below];
}

std::vector<std::uint64_t> PrefixSums(const std::vector<std::uint64_t>& v) {
  std::vector<std::uint64_t> sums(v.size() + 1, 0);
  for (std::size_t i = 0; i < v.size(); ++i) sums[i + 1] = sums[i] + v[i];
  return sums;
}

}  // namespace

void StackDistances::Prepare() {
  if (prepared_) return;
  std::sort(ups_.begin(), ups_.end());
  std::sort(downs_.begin(), downs_.end());
  up_sums_ = PrefixSums(ups_);
  down_sums_ = PrefixSums(downs_);
  prepared_ = true;
}

std::uint64_t StackDistances::MatchedAt(std::uint64_t capacity) const {
  // Past the last ramp end the curve is flat; clamping keeps the products
  // in RampSum far from overflow for any capacity.
  const std::uint64_t c =
      std::min(capacity, downs_.empty() ? 0 : downs_.back());
  return RampSum(ups_, up_sums_, c) - RampSum(downs_, down_sums_, c);
}

std::vector<std::uint64_t> StackDistances::MatchedNodes(
    std::span<const std::uint64_t> capacities) {
  Prepare();
  std::vector<std::uint64_t> matched;
  matched.reserve(capacities.size());
  for (const std::uint64_t capacity : capacities) {
    matched.push_back(MatchedAt(capacity));
  }
  return matched;
}

std::optional<std::uint64_t> StackDistances::SmallestCapacityMatching(
    std::uint64_t nodes) {
  Prepare();
  // MatchedAt is nondecreasing (it grows by the number of ramps rising at
  // each capacity) and constant from the last ramp end on.
  std::uint64_t low = 0;
  std::uint64_t high = downs_.empty() ? 0 : downs_.back();
  if (MatchedAt(high) < nodes) return std::nullopt;
  while (low < high) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (MatchedAt(middle) >= nodes) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

std::size_t StackDistances::memory_bytes() const {
  return counts_.memory_bytes() +
         VectorHeapBytes<std::uint64_t>(top_.capacity()) +
         VectorHeapBytes<Update>(pending_.capacity()) +
         VectorHeapBytes<std::uint64_t>(ups_.capacity()) +
         VectorHeapBytes<std::uint64_t>(downs_.capacity()) +
         VectorHeapBytes<std::uint64_t>(up_sums_.capacity()) +
         VectorHeapBytes<std::uint64_t>(down_sums_.capacity());
}

}  // namespace kvprefix
