// ReferenceTrie: see the header. Each step quotes the sentence of SPEC §1 or
// §8 it implements.
#include "reference/reference_trie.h"

#include <stdexcept>

#include "kvprefix/memory.h"

namespace kvprefix {

ReferenceTrie::ReferenceTrie(const CacheOptions& options) : CacheCore(options) {
  CheckTrieEngineOptions("reference", options);
}

NodeId ReferenceTrie::Insert(TokenSpan sequence) {
  // "Inserting a sequence walks from the root token by token"
  NodeId current = kRootNode;
  std::vector<NodeId> path;  // bounded only: what step 3 touches
  if (options().bounded()) path.reserve(sequence.size());
  for (Token token : sequence) {
    auto& children = nodes_[current].children;
    auto edge = children.find(token);
    if (edge != children.end()) {
      // "where the current node has an edge for the token it follows it"
      current = edge->second;
    } else {
      // "otherwise it creates a new node whose ID is the next unused one";
      // §8: "IDs of evicted nodes are never given again" (their entries
      // stay, so the vector's length is always the next ID).
      const NodeId created = nodes_.size();
      nodes_.push_back(Node{.children = {},
                            .parent = current,
                            .token = token,
                            .stamp = 0,
                            .count = 0});
      nodes_[current].children.emplace(token, created);  // after the push
      ++present_;
      if (page_events_ != nullptr) {
        nodes_[created].page =
            page_events_->Stored(current == kRootNode ? PageEventListener::kRoot
                                                      : nodes_[current].page,
                                 TokenSpan(&token, 1));
      }
      if (options().bounded()) {
        // The new node is a leaf; its parent, if it was one, is no longer,
        // and the parent's entry in leaves_ is reused for it (here, in
        // Touch and in EvictLeaf entries move by extract and insert, so
        // that a step allocates no set node).
        if (current != kRootNode && nodes_[current].children.size() == 1 &&
            !pins_.is_pinned(current)) {
          auto entry = leaves_.extract({LeafKey(current), current});
          entry.value() = {LeafKey(created), created};
          leaves_.insert(std::move(entry));
        } else {
          leaves_.emplace(LeafKey(created), created);
        }
      }
      current = created;
    }
    if (options().bounded()) path.push_back(current);
  }
  if (!options().bounded()) return current;
  Touch(path);
  // §8 step 4: "evict while more than C nodes are present, one leaf at a time"
  while (node_count() > options().capacity) EvictLeaf();
  return MatchPrefix(sequence).cache_node;
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

Match ReferenceTrie::Access(TokenSpan request) {
  // §8: "1. match the request against the nodes present; this is what is
  // recorded", then "2. insert it", "3. touch", "4. evict": §10.7, a request
  // admitted and finished at one instant (its pins are gone before step 2).
  constexpr RequestId kAlone = ~RequestId{0};
  const Match match = Admit(kAlone, request, request.size()).match;
  Finish(kAlone, request);
  return match;
}

Match ReferenceTrie::PeekMatch(TokenSpan request) const {
  // §9.1: "With model spec it shortens only step 1 of §8: the match walks
  // at most floor((n-1)/P) pages"
  return MatchPrefix(request.first(
      MatchLimitTokens(options().match_limit, request.size(), 1)));
}

Attempt ReferenceTrie::Admit(RequestId id, TokenSpan prompt, std::uint64_t) {
  // §10.4 spec: "attempt: always starts. Match (§8 step 1, cut by §9.1); add
  // 1 to the pin count of every node of the matched path other than the
  // root".
  const Match match = PeekMatch(prompt);
  std::vector<NodeId> path;
  path.reserve(match.matched_length);
  NodeId node = kRootNode;
  for (std::size_t i = 0; i < match.matched_length; ++i) {
    node = nodes_[node].children.at(prompt[i]);
    path.push_back(node);
    pins_.Pin(node, [this](NodeId pinned) {
      // A pinned leaf leaves the evictable ones (it is the path's last node).
      if (options().bounded() && nodes_[pinned].children.empty()) {
        leaves_.erase({LeafKey(pinned), pinned});
      }
    });
  }
  pins_.Admit(id, std::move(path));
  return Attempt{.outcome = AttemptOutcome::kStart, .match = match};
}

void ReferenceTrie::Finish(RequestId id, TokenSpan stored) {
  // §10.4 spec: "finish: subtract 1 from the pin counts of the matched path;
  // insert the stored sequence (§8 step 2); touch its path (§8 step 3) with
  // stamp k, the number of finishes so far"; evict "choosing by the policy
  // among the leaves whose pin count is 0".
  for (const NodeId node : pins_.Finish(id)) {
    pins_.Unpin(node, [this](NodeId unpinned) {
      if (options().bounded() && Evictable(unpinned)) {
        leaves_.emplace(LeafKey(unpinned), unpinned);
      }
    });
  }
  Insert(stored);
}

ReferenceTrie::Key ReferenceTrie::LeafKey(NodeId id) const {
  // "lru: the leaf with the smallest stamp"; "fifo: the leaf with the
  // smallest node ID (the oldest created)"; "lfu: the leaf with the smallest
  // count; among leaves with equal counts, the one with the smallest stamp".
  switch (options().policy) {
    case EvictionPolicy::kLru:
      return {nodes_[id].stamp, 0};
    case EvictionPolicy::kFifo:
      return {id, 0};
    case EvictionPolicy::kLfu:
      return {nodes_[id].count, nodes_[id].stamp};
  }
  return {id, 0};  // not reached: every policy has a case
}

void ReferenceTrie::Touch(const std::vector<NodeId>& path) {
  // "3. touch: every node on the request's path gets stamp r"; lfu: "also
  // adds 1 to a count kept on every node of the request's path; a node
  // created in step 2 starts at 0" (Node's count is 0 when pushed).
  const std::uint64_t stamp = Tick();
  for (NodeId id : path) {
    if (!Evictable(id)) {  // not in leaves_
      nodes_[id].stamp = stamp;
      ++nodes_[id].count;
      continue;
    }
    // An evictable leaf: its key in leaves_ may change with the stamp and
    // count.
    auto entry = leaves_.extract({LeafKey(id), id});
    nodes_[id].stamp = stamp;
    ++nodes_[id].count;
    entry.value().first = LeafKey(id);
    leaves_.insert(std::move(entry));
  }
}

void ReferenceTrie::EvictLeaf() {
  // "one leaf at a time (a node with no children; the root is never
  // evicted), by the policy": the leaf whose key is smallest. Its own check,
  // not the optimized engines' (kvprefix/leaf_heap.h): with none, SPEC §8
  // names no victim, so say so rather than read past the end.
  if (leaves_.empty()) {
    throw NoEvictableLeafError(kName, node_count(), options().capacity);
  }
  auto entry = leaves_.extract(leaves_.begin());
  const NodeId id = entry.value().second;
  const Node& node = nodes_[id];
  const Token token = node.token;
  const NodeId parent = node.parent;
  nodes_[parent].children.erase(token);  // the entry stays, as a tombstone
  --present_;
  CountEvicted(1);
  if (Evictable(parent)) {
    entry.value() = {LeafKey(parent), parent};  // the parent is a leaf now
    leaves_.insert(std::move(entry));
  }
  ReportEvicted(TokenSpan(&token, 1));
  if (page_events_ != nullptr) page_events_->Removed(nodes_[id].page);
}

std::size_t ReferenceTrie::memory_bytes() const {
  // libstdc++'s _Rb_tree_node: color + 3 pointers (32 bytes) + the value.
  constexpr std::size_t kTreeNode = 32;
  return VectorHeapBytes<Node>(nodes_.capacity()) +
         present_ * MallocChunkBytes(kTreeNode +
                                     sizeof(std::pair<const Token, NodeId>)) +
         leaves_.size() *
             MallocChunkBytes(kTreeNode + sizeof(std::pair<Key, NodeId>)) +
         pins_.memory_bytes();
}

}  // namespace kvprefix
