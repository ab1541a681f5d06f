// HashTrie: see the design notes in the header.
#include "optimized/hash_trie.h"

#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {

HashTrie::HashTrie(std::uint64_t max_nodes)
    : max_nodes_(max_nodes), tokens_(1), next_node_(1) {}

NodeId HashTrie::Child(NodeId parent, Token token) const {
  const NodeId next = parent + 1;
  if (next < tokens_.size() && tokens_[next] == token && next_node_[next]) {
    return next;
  }
  const auto branch = branches_.find(BranchKey(parent, token));
  return branch == branches_.end() ? kRootNode : branch->second;
}

Match HashTrie::MatchPrefix(TokenSpan request) const {
  Match match;
  for (Token token : request) {
    const NodeId child = Child(match.cache_node, token);
    if (child == kRootNode) break;
    match.cache_node = child;
    ++match.matched_length;
  }
  return match;
}

NodeId HashTrie::Insert(TokenSpan sequence) {
  const Match existing = MatchPrefix(sequence);
  const std::size_t missing = sequence.size() - existing.matched_length;
  if (missing > max_nodes_ - node_count()) {
    throw CapacityError("hash engine: inserting " + std::to_string(missing) +
                        " nodes would exceed its limit of " +
                        std::to_string(max_nodes_) + " nodes (32-bit IDs)");
  }
  NodeId parent = existing.cache_node;
  for (Token token : sequence.subspan(existing.matched_length)) {
    const NodeId created = tokens_.size();
    const bool is_next_node = parent + 1 == created;
    if (!is_next_node) {
      branches_.emplace(BranchKey(parent, token),
                        static_cast<std::uint32_t>(created));
    }
    tokens_.push_back(token);
    next_node_.push_back(is_next_node);
    parent = created;
  }
  return parent;
}

std::size_t HashTrie::memory_bytes() const {
  // A Swiss table allocates one block: a control byte per slot plus a
  // cloned group (16 bytes) and a sentinel, then the slots.
  const std::size_t capacity = branches_.capacity();
  const std::size_t table_bytes =
      capacity == 0
          ? 0
          : MallocChunkBytes(
                capacity + 16 + 8 +
                capacity *
                    sizeof(std::pair<const std::uint64_t, std::uint32_t>));
  return VectorHeapBytes<Token>(tokens_.capacity()) +
         VectorHeapBytes<std::uint64_t>((next_node_.capacity() + 63) / 64) +
         table_bytes;
}

}  // namespace kvprefix
