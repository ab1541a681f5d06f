#include "router/policies/sglang_cache_aware.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace kvprefix {

SglangCacheAwareRouter::SglangCacheAwareRouter(
    std::size_t workers, const CacheAwareSettings& settings)
    : nodes_(1),
      size_(workers),
      next_eviction_us_(settings.eviction_interval_us),
      settings_(settings) {
  for (std::size_t w = 0; w < workers; ++w) {
    nodes_[0].owners.emplace_back(static_cast<std::uint32_t>(w), 0);
  }
}

bool SglangCacheAwareRouter::Stamp(Node node, std::size_t w,
                                   std::uint64_t stamp) {
  auto& owners = nodes_[node].owners;
  const auto at = std::ranges::lower_bound(
      owners, w, {},
      [](const auto& owner) { return std::size_t{owner.first}; });
  if (at != owners.end() && at->first == w) {
    at->second = stamp;
    return true;
  }
  owners.emplace(at, static_cast<std::uint32_t>(w), stamp);
  return false;
}

SglangCacheAwareRouter::Node SglangCacheAwareRouter::NewNode(Node parent,
                                                             Token token) {
  Node node = static_cast<Node>(nodes_.size());
  if (free_.empty()) {
    nodes_.emplace_back();
  } else {
    node = free_.back();
    free_.pop_back();
  }
  nodes_[node].parent = parent;
  nodes_[node].token = token;
  edges_.Add(parent, token, node);
  return node;
}

void SglangCacheAwareRouter::EvictWorker(std::size_t w) {
  // Children of each node that w owns; nodes w owns (not the root) with
  // none are its leaves, taken by smallest stamp (distinct: one stamp marks
  // one path); a parent left with none becomes one.
  std::vector<std::uint32_t> owned_children(nodes_.size());
  const auto stamp_of = [&](Node node) -> const std::uint64_t* {
    for (const auto& [owner, stamp] : nodes_[node].owners) {
      if (owner == w) return &stamp;
    }
    return nullptr;
  };
  for (Node node = 1; node < nodes_.size(); ++node) {
    if (stamp_of(node) != nullptr) ++owned_children[nodes_[node].parent];
  }
  using Leaf = std::pair<std::uint64_t, Node>;
  std::priority_queue<Leaf, std::vector<Leaf>, std::greater<>> leaves;
  for (Node node = 1; node < nodes_.size(); ++node) {
    if (owned_children[node] == 0) {
      if (const auto* stamp = stamp_of(node)) leaves.emplace(*stamp, node);
    }
  }
  while (size_[w] > settings_.max_tree_size && !leaves.empty()) {
    const Node node = leaves.top().second;
    leaves.pop();
    auto& owners = nodes_[node].owners;
    std::erase_if(owners, [&](const auto& owner) { return owner.first == w; });
    --size_[w];
    const Node parent = nodes_[node].parent;
    if (owners.empty()) {  // nobody owns it: it leaves the tree
      edges_.Remove(parent, nodes_[node].token);
      free_.push_back(node);
    }
    if (--owned_children[parent] == 0 && parent != 0) {
      if (const auto* stamp = stamp_of(parent)) leaves.emplace(*stamp, parent);
    }
  }
}

void SglangCacheAwareRouter::RefreshMatch(Node matched, std::size_t tenant,
                                          std::uint64_t tick) {
  for (Node up = matched; up != 0; up = nodes_[up].parent) {
    Stamp(up, tenant, tick);
  }
  Stamp(0, tenant, tick);
}

void SglangCacheAwareRouter::EvictIfDue(std::uint64_t arrival_us) {
  const std::uint64_t interval = settings_.eviction_interval_us;
  if (interval == 0 || arrival_us < next_eviction_us_) return;
  for (std::size_t w = 0; w < size_.size(); ++w) {
    if (size_[w] > settings_.max_tree_size) EvictWorker(w);
  }
  next_eviction_us_ = (arrival_us / interval + 1) * interval;
}

void SglangCacheAwareRouter::Insert(TokenSpan tokens, std::size_t w) {
  const std::uint64_t tick = ++clock_;
  Node node = 0;
  Stamp(node, w, tick);
  for (const Token token : tokens) {
    const auto child = edges_.Child(node, token);
    node = child ? *child : NewNode(node, token);
    if (!Stamp(node, w, tick)) ++size_[w];
  }
}

std::size_t SglangCacheAwareRouter::Choose(const RoutedRequest& request,
                                           const WorkerViews& workers) {
  EvictIfDue(request.arrival_us);
  std::uint64_t low = workers.view(0).load();
  std::uint64_t high = low;
  for (std::size_t w = 1; w < workers.size(); ++w) {
    low = std::min(low, workers.view(w).load());
    high = std::max(high, workers.view(w).load());
  }
  if (high - low > settings_.balance_abs_threshold &&
      Rational::FromUnsigned(high) >
          settings_.balance_rel_threshold * Rational::FromUnsigned(low)) {
    const std::size_t chosen = FirstLeastLoaded(workers);
    Insert(request.tokens, chosen);
    return chosen;
  }
  const std::uint64_t tick = ++clock_;
  Node node = 0;
  std::uint64_t matched = 0;
  for (const Token token : request.tokens) {
    const auto child = edges_.Child(node, token);
    if (!child) break;
    node = *child;
    ++matched;
  }
  const std::size_t tenant = nodes_[node].owners.front().first;
  RefreshMatch(node, tenant, tick);
  const std::uint64_t n = request.tokens.size();
  std::size_t chosen = tenant;
  if (n == 0 || Rational(matched, n) <= settings_.cache_threshold) {
    chosen = settings_.least_loaded_fallback
                 ? FirstLeastLoaded(workers)
                 : static_cast<std::size_t>(std::ranges::min_element(size_) -
                                            size_.begin());
  }
  Insert(request.tokens, chosen);
  return chosen;
}

}  // namespace kvprefix
