#include "io/kv_events.h"

#include <fmt/format.h>

#include <iterator>

#include "router/stream.h"

namespace kvprefix {

PageEventListener& KvEventLog::worker(std::size_t w) {
  while (workers_.size() <= w) workers_.emplace_back(*this, workers_.size());
  return workers_[w];
}

void KvEventLog::StartPageLine(std::size_t w) {
  fmt::format_to(std::back_inserter(text_),
                 R"({{"time_us":{},"worker":{},"type":")", now_, w);
}

std::uint64_t KvEventLog::WorkerPages::Stored(std::uint64_t parent,
                                              TokenSpan page) {
  const std::uint64_t hash = KeyHash(page, parent);
  log_.StartPageLine(w_);
  auto out = std::back_inserter(log_.text_);
  fmt::format_to(out, R"(stored","block_hash":{},"parent_hash":)", hash);
  if (parent == kRoot) {
    fmt::format_to(out, "null");
  } else {
    fmt::format_to(out, "{}", parent);
  }
  fmt::format_to(out,
                 R"(,"tokens":[{}]}})"
                 "\n",
                 fmt::join(page, ","));
  return hash;
}

void KvEventLog::WorkerPages::Removed(std::uint64_t handle) {
  log_.StartPageLine(w_);
  fmt::format_to(std::back_inserter(log_.text_),
                 R"(removed","block_hash":{}}})"
                 "\n",
                 handle);
}

void KvEventLog::Arrived(RequestId id, std::size_t worker,
                         std::span<const std::uint64_t> matched) {
  fmt::format_to(std::back_inserter(text_),
                 R"({{"time_us":{},"type":"arrival","request":{},"worker":{},)"
                 R"("peek":[{}]}})"
                 "\n",
                 now_, id, worker, fmt::join(matched, ","));
}

}  // namespace kvprefix
