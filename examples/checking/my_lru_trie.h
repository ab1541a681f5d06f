// A user's bounded prefix cache that implements less than SPEC §8: the
// policy lru and page size 1 only (model spec, match limit all). Any other
// options it refuses by name, throwing kvprefix::OptionsRefused from its
// constructor, which the checking library skips and counts
// (checking/fuzz_input.h's FuzzTally); FuzzCheckOptions::implemented then
// generates only what it takes (my_trie_test.cc).
//
// A token trie whose edges live in one hash table keyed by (parent, token),
// as MyTrie's (my_trie.h, whose MatchAlongEdges it shares),
// with SPEC §1's node IDs (never reused) and SPEC §8's steps: an insert
// touches the whole path with the next stamp, then evicts the leaf of the
// smallest stamp while more than `capacity` nodes remain. The leaf is found
// by a scan: O(nodes) per eviction, simple to read.
#ifndef KVPREFIX_EXAMPLES_CHECKING_MY_LRU_TRIE_H_
#define KVPREFIX_EXAMPLES_CHECKING_MY_LRU_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/options_refused.h"
#include "kvprefix/types.h"
#include "my_trie.h"

class MyLruTrie {
 public:
  static constexpr std::string_view kName = "my-lru-trie";

  MyLruTrie() = default;
  // Throws kvprefix::OptionsRefused for options other than lru, page size
  // 1, model spec, match limit all.
  explicit MyLruTrie(const kvprefix::CacheOptions& options)
      : options_(options) {
    if (options.policy != kvprefix::EvictionPolicy::kLru ||
        options.page_size != 1 ||
        options.model != kvprefix::CacheModel::kSpec ||
        options.match_limit != kvprefix::MatchLimit::kAll) {
      throw kvprefix::OptionsRefused(
          "my-lru-trie implements the policy lru and page size 1 only");
    }
  }

  // SPEC §8 steps 2-4; returns the deepest node of the path still present.
  kvprefix::NodeId Insert(kvprefix::TokenSpan sequence) {
    ++clock_;
    kvprefix::NodeId node = 0;
    for (const kvprefix::Token token : sequence) {
      const auto [edge, created] = edges_.try_emplace(Key(node, token), 0);
      if (created) {
        edge->second = next_id_++;
        nodes_[edge->second] = Node{node, token, 0, 0};
        ++nodes_[node].children;
      }
      node = edge->second;
      nodes_[node].stamp = clock_;
    }
    while (options_.bounded() && node_count() > options_.capacity) EvictOne();
    return MatchPrefix(sequence).cache_node;
  }

  // SPEC §8 step 1, then Insert.
  kvprefix::Match Access(kvprefix::TokenSpan request) {
    const kvprefix::Match match = MatchPrefix(request);
    Insert(request);
    return match;
  }

  // The longest cached prefix of `request`, touching nothing.
  kvprefix::Match MatchPrefix(kvprefix::TokenSpan request) const {
    return MatchAlongEdges(edges_, request, Key);
  }

  std::uint64_t node_count() const { return nodes_.size() - 1; }
  std::uint64_t evicted_count() const { return evicted_; }
  std::size_t memory_bytes() const {
    return edges_.size() * 2 * sizeof(std::uint64_t) +
           nodes_.size() * (sizeof(Node) + sizeof(std::uint64_t));
  }
  const kvprefix::CacheOptions& options() const { return options_; }
  void SetEvictionListener(kvprefix::EvictionListener listener) {
    listener_ = std::move(listener);
  }

 private:
  struct Node {
    kvprefix::NodeId parent = 0;
    kvprefix::Token token = 0;
    std::uint64_t stamp = 0;
    std::size_t children = 0;
  };

  static std::uint64_t Key(kvprefix::NodeId parent, kvprefix::Token token) {
    return (parent << 32) | static_cast<std::uint32_t>(token);
  }

  // Evicts the leaf of the smallest stamp (SPEC §8: it is unique).
  void EvictOne() {
    kvprefix::NodeId oldest = 0;
    for (const auto& [id, node] : nodes_) {
      if (id != 0 && node.children == 0 &&
          (oldest == 0 || node.stamp < nodes_.at(oldest).stamp)) {
        oldest = id;
      }
    }
    const Node leaf = nodes_.at(oldest);
    edges_.erase(Key(leaf.parent, leaf.token));
    --nodes_[leaf.parent].children;
    nodes_.erase(oldest);
    ++evicted_;
    if (listener_) listener_(kvprefix::TokenSpan(&leaf.token, 1));
  }

  kvprefix::CacheOptions options_;
  std::unordered_map<std::uint64_t, kvprefix::NodeId> edges_;
  std::unordered_map<kvprefix::NodeId, Node> nodes_{{0, Node{}}};
  kvprefix::NodeId next_id_ = 1;
  std::uint64_t clock_ = 0;
  std::uint64_t evicted_ = 0;
  kvprefix::EvictionListener listener_;
};

#endif  // KVPREFIX_EXAMPLES_CHECKING_MY_LRU_TRIE_H_
