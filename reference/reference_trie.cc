// ReferenceTrie: see the header. Each step quotes the SPEC §1 sentence it
// implements.
#include "reference/reference_trie.h"

#include "kvprefix/memory.h"

namespace kvprefix {

ReferenceTrie::ReferenceTrie() : nodes_(1) {}  // "The trie has a root, node ID 0."

NodeId ReferenceTrie::Insert(TokenSpan sequence) {
  // "Inserting a sequence walks from the root token by token"
  NodeId current = kRootNode;
  for (Token token : sequence) {
    auto& children = nodes_[current].children;
    auto edge = children.find(token);
    if (edge != children.end()) {
      // "where the current node has an edge for the token it follows it"
      current = edge->second;
      continue;
    }
    // "otherwise it creates a new node whose ID is the next unused one"
    const NodeId created = nodes_.size();
    nodes_.emplace_back();  // may reallocate: `children` is not used after
    nodes_[current].children.emplace(token, created);
    ++edge_count_;
    current = created;
  }
  return current;
}

Match ReferenceTrie::MatchPrefix(TokenSpan request) const {
  // "Matching a request walks from the root the same way but never creates
  // anything: it stops at the first token that has no edge, or at the end."
  Match match;
  for (Token token : request) {
    const auto& children = nodes_[match.cache_node].children;
    auto edge = children.find(token);
    if (edge == children.end()) break;
    match.cache_node = edge->second;
    ++match.matched_length;
  }
  return match;
}

std::size_t ReferenceTrie::memory_bytes() const {
  // libstdc++'s _Rb_tree_node: color + 3 pointers (32 bytes) + the value.
  constexpr std::size_t kTreeNodeBytes =
      32 + sizeof(std::pair<const Token, NodeId>);
  return VectorHeapBytes<Node>(nodes_.capacity()) +
         edge_count_ * MallocChunkBytes(kTreeNodeBytes);
}

}  // namespace kvprefix
