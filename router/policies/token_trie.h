// Internal to router/policies: the edges of a trie of tokens, for the
// routers that keep a tree of their own (sglang_cache_aware.h,
// vllm_prefix.h). Nodes are numbers (0 is the root) whose data the policy
// keeps in its own vectors; an edge is (parent, token) -> child in one hash
// map, so a node costs no map of its own.
#ifndef KVPREFIX_ROUTER_POLICIES_TOKEN_TRIE_H_
#define KVPREFIX_ROUTER_POLICIES_TOKEN_TRIE_H_

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "kvprefix/types.h"

namespace kvprefix {

class TokenEdges {
 public:
  using Node = std::uint32_t;

  // The child of `parent` by `token`, if any. O(1) expected.
  std::optional<Node> Child(Node parent, Token token) const {
    const auto found = edges_.find(std::pair{parent, token});
    if (found == edges_.end()) return std::nullopt;
    return found->second;
  }
  // Adds the edge (parent, token) -> child (none may exist). O(1) expected.
  void Add(Node parent, Token token, Node child) {
    edges_.emplace(std::pair{parent, token}, child);
  }
  // Removes the edge (parent, token). O(1) expected.
  void Remove(Node parent, Token token) {
    edges_.erase(std::pair{parent, token});
  }

 private:
  absl::flat_hash_map<std::pair<Node, Token>, Node> edges_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_TOKEN_TRIE_H_
