// Capacity planning by replays: see capacity_search.h.
#include "cli/capacity_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "cli/byte_sizes.h"
#include "cli/cache_choice.h"
#include "cli/parallel.h"
#include "engines/registry.h"
#include "kvprefix/replay.h"

namespace kvprefix::cli {

std::vector<std::uint64_t> ReplayEachCapacity(
    const SequenceList& requests, std::span<const std::uint64_t> capacities,
    const CacheOptions& cache, unsigned jobs,
    const ReplayedCallback& replayed) {
  std::vector<std::uint64_t> matched(capacities.size());
  std::atomic<std::uint64_t> count = 0;
  const std::thread::id calling_thread = std::this_thread::get_id();
  ForEachInParallel(capacities.size(), jobs, [&](std::size_t i) {
    CacheOptions options = cache;
    options.capacity = capacities[i];
    const auto engine = MakeEngine(ModelEngineName(cache.model), options);
    matched[i] =
        Replay(*engine, requests, [&](std::size_t, TokenSpan, const Match&) {
          const std::uint64_t done =
              count.fetch_add(1, std::memory_order_relaxed) + 1;
          if (replayed && std::this_thread::get_id() == calling_thread) {
            replayed(done);
          }
        }).matched_tokens;
  });
  return matched;
}

std::uint64_t CountDistinctPrefixes(const SequenceList& requests,
                                    const CacheOptions& model,
                                    const ReplayedCallback& replayed) {
  CacheOptions counted = model;
  counted.capacity = kUnbounded;
  if (model.model == CacheModel::kSglang) {
    counted.model = CacheModel::kSpec;
    counted.match_limit = MatchLimit::kAll;
    counted.trigger = EvictionTrigger::kAfterInsert;
  }
  const auto unbounded = MakeEngine(ModelEngineName(counted.model), counted);
  Replay(*unbounded, requests, [&](std::size_t i, TokenSpan, const Match&) {
    if (replayed) replayed(i + 1);
  });
  return unbounded->node_count();
}

TargetBisection::TargetBisection(const SequenceList& requests,
                                 const CacheOptions& model,
                                 std::uint64_t distinct_prefixes,
                                 std::uint64_t request_tokens, unsigned jobs,
                                 ReplayedCallback replayed)
    : requests_(requests),
      model_(model),
      distinct_prefixes_(distinct_prefixes),
      request_tokens_(request_tokens),
      jobs_(std::max(1u, jobs)),
      replayed_(std::move(replayed)) {}

std::optional<std::uint64_t> TargetBisection::SmallestReaching(double target) {
  const auto reaches = [&](std::uint64_t matched) {
    return HitRatio(matched) >= target;
  };
  const std::uint64_t top = distinct_prefixes_;
  if (!reaches(Matched(top))) return std::nullopt;
  // Capacities below `low` miss the target (assumed), `high` reaches it.
  std::uint64_t low = 0;
  std::uint64_t high = top;
  while (low < high) {
    // Up to `jobs` capacities cutting [low, high) into equal parts (the
    // middle for one job), distinct since count <= width.
    const std::uint64_t width = high - low;
    const std::uint64_t count = std::min<std::uint64_t>(jobs_, width);
    std::vector<std::uint64_t> probes;
    for (std::uint64_t i = 1; i <= count; ++i) {
      probes.push_back(low +
                       static_cast<std::uint64_t>(static_cast<UInt128>(width) *
                                                  i / (count + 1)));
    }
    ReplayAll(probes);
    std::uint64_t next_low = probes.back() + 1;
    for (std::size_t i = 0; i < probes.size(); ++i) {
      if (reaches(Matched(probes[i]))) {
        high = probes[i];
        next_low = i == 0 ? low : probes[i - 1] + 1;
        break;
      }
    }
    low = next_low;
  }
  return high;
}

std::uint64_t TargetBisection::Matched(std::uint64_t capacity) {
  ReplayAll({capacity});
  return matched_.at(capacity);
}

double TargetBisection::HitRatio(std::uint64_t matched) const {
  return ReplaySummary{.request_tokens = request_tokens_,
                       .matched_tokens = matched}
      .hit_ratio();
}

std::string TargetBisection::Check(double target, std::uint64_t capacity) {
  std::string note = fmt::format(
      "--target-hit-ratio {}: capacity {} by bisection ({} capacities "
      "replayed in all), assuming the hit ratio grows with capacity ({} is "
      "not a stack algorithm); checked: ",
      target, capacity, matched_.size(), CacheName());
  if (capacity > 0) {
    note += fmt::format("capacity {} hits {} < {}, ", capacity - 1,
                        HitRatio(Matched(capacity - 1)), target);
  }
  note +=
      fmt::format("capacity {} hits {}", capacity, HitRatio(Matched(capacity)));
  std::optional<std::pair<std::uint64_t, std::uint64_t>> highest;
  for (auto it = matched_.begin(); it != matched_.end(); ++it) {
    if (highest && it->second < highest->second) {
      return note + fmt::format(
                        "; but the assumption fails: capacity {} hits {}, "
                        "more than capacity {}'s {}, so capacity {} may "
                        "not be the smallest reaching the target",
                        highest->first, HitRatio(highest->second), it->first,
                        HitRatio(it->second), capacity);
    }
    if (!highest || it->second > highest->second) highest = *it;
  }
  return note;
}

std::string TargetBisection::CacheName() const {
  return model_.model == CacheModel::kSpec
             ? std::string(EvictionPolicyName(model_.policy))
             : fmt::format("model {}", NameOf(kCacheModels, model_.model));
}

void TargetBisection::ReplayAll(std::vector<std::uint64_t> capacities) {
  std::erase_if(capacities, [this](std::uint64_t capacity) {
    return matched_.contains(capacity);
  });
  if (capacities.empty()) return;
  const std::vector<std::uint64_t> matched =
      ReplayEachCapacity(requests_, capacities, model_, jobs_, replayed_);
  for (std::size_t i = 0; i < capacities.size(); ++i) {
    matched_[capacities[i]] = matched[i];
  }
}

}  // namespace kvprefix::cli
