// ReferenceTrie: the oracle every other engine is judged by.
//
// It is simple on purpose. It follows SPEC §1 line by line, takes no
// shortcuts and skips no case: a node is an entry in a vector indexed by its
// ID, and its children are a std::map from token to child ID, exactly the
// seed's hint ("a dictionary can map a token to a child node ID; list length
// can supply the next sequential node ID"). Nothing here is recursive, so a
// 200,000-token sequence or a 100,000-deep chain costs no stack, and
// destruction is the destruction of a vector of maps, each holding at most
// one level.
//
// When this engine and an optimized one disagree, this one is right unless
// it contradicts SPEC.md; fix it only with a test quoting the contract.
#ifndef KVPREFIX_REFERENCE_REFERENCE_TRIE_H_
#define KVPREFIX_REFERENCE_REFERENCE_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "kvprefix/types.h"

namespace kvprefix {

class ReferenceTrie {
 public:
  static constexpr std::string_view kName = "reference";

  // An index holding only the root (node 0).
  ReferenceTrie();

  // Inserts `sequence` (SPEC §1): follows the edge for each token, creating a
  // node with ID node_count() + 1 where the edge is missing. Returns the ID of
  // the node reached by the last token, kRootNode for an empty sequence.
  // O(length * log(children)). Throws std::bad_alloc; a partially inserted
  // sequence keeps the nodes created before the failure, which is still a
  // valid trie.
  NodeId Insert(TokenSpan sequence);

  // The longest prefix of `request` that is a path from the root, and the
  // node it ends at. Never modifies the index. O(matched * log(children)).
  Match MatchPrefix(TokenSpan request) const;

  // Nodes excluding the root; equals the largest node ID. O(1).
  std::uint64_t node_count() const { return nodes_.size() - 1; }

  // Heap bytes: the node vector plus one red-black-tree chunk per edge. O(1).
  std::size_t memory_bytes() const;

 private:
  struct Node {
    std::map<Token, NodeId> children;
  };
  std::vector<Node> nodes_;  // nodes_[id] is the node with ID id; [0] is root
  std::size_t edge_count_ = 0;
};

}  // namespace kvprefix

#endif  // KVPREFIX_REFERENCE_REFERENCE_TRIE_H_
