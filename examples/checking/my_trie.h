// A user's own prefix cache, as someone checking it with kvprefix would
// write it: an unbounded token trie (SPEC §1) whose edges live in one hash
// table keyed by (parent node, token). It knows nothing of kvprefix but the
// shape the checking library wants (the PrefixIndexEngine concept of
// kvprefix/prefix_index.h): kName, Insert, MatchPrefix, node_count and
// memory_bytes.
//
// MyTrie<kPack16> with kPack16 = true is the same trie with one subtle bug:
// it packs the token into the key's low 16 bits ("a vocabulary fits in 16
// bits"), so tokens that differ only above bit 15 (65536 and 0) share an
// edge. my_trie_test.cc shows the checking library catching it.
#ifndef KVPREFIX_EXAMPLES_CHECKING_MY_TRIE_H_
#define KVPREFIX_EXAMPLES_CHECKING_MY_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "kvprefix/types.h"

// The longest prefix of `request` along `edges`, a table from key(parent
// node, token) to the child node (the root is 0). O(matched length)
// expected.
template <typename KeyOf>
kvprefix::Match MatchAlongEdges(
    const std::unordered_map<std::uint64_t, kvprefix::NodeId>& edges,
    kvprefix::TokenSpan request, KeyOf key) {
  kvprefix::Match match;
  for (const kvprefix::Token token : request) {
    const auto edge = edges.find(key(match.cache_node, token));
    if (edge == edges.end()) break;
    match.cache_node = edge->second;
    ++match.matched_length;
  }
  return match;
}

template <bool kPack16>
class MyTrie {
 public:
  static constexpr std::string_view kName =
      kPack16 ? "my-trie-16-bit" : "my-trie";

  // Inserts `sequence`; returns the node its last token reaches (0 for an
  // empty sequence). New nodes are numbered 1, 2, ... as SPEC §1 says.
  // O(length) expected.
  kvprefix::NodeId Insert(kvprefix::TokenSpan sequence) {
    kvprefix::NodeId node = 0;
    for (const kvprefix::Token token : sequence) {
      const auto [edge, created] = edges_.try_emplace(Key(node, token), 0);
      if (created) edge->second = ++node_count_;
      node = edge->second;
    }
    return node;
  }

  // The longest inserted prefix of `request`. O(matched length) expected.
  kvprefix::Match MatchPrefix(kvprefix::TokenSpan request) const {
    return MatchAlongEdges(edges_, request, Key);
  }

  // Nodes, the root excluded. O(1).
  std::uint64_t node_count() const { return node_count_; }

  // An estimate of the heap bytes held: the buckets and one allocation per
  // edge. O(1).
  std::size_t memory_bytes() const {
    return edges_.bucket_count() * sizeof(void*) +
           edges_.size() * (sizeof(void*) + sizeof(std::uint64_t) +
                            sizeof(kvprefix::NodeId));
  }

 private:
  static std::uint64_t Key(kvprefix::NodeId parent, kvprefix::Token token) {
    const std::uint64_t bits = kPack16 ? static_cast<std::uint16_t>(token)
                                       : static_cast<std::uint32_t>(token);
    return (parent << 32) | bits;
  }

  std::unordered_map<std::uint64_t, kvprefix::NodeId> edges_;
  std::uint64_t node_count_ = 0;
};

#endif  // KVPREFIX_EXAMPLES_CHECKING_MY_TRIE_H_
