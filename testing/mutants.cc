// Mutants: see the header. Each bug is marked "BUG(<mutant name>)" at the one
// place it differs from the correct baseline.
#include "testing/mutants.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engines/all_engines.h"
#include "kvprefix/memory.h"

namespace kvprefix::test {
namespace {

using Baseline = MutantRadixTrie<MutantBug::kNone>;
using EdgeOffByOneMutant = MutantRadixTrie<MutantBug::kEdgeOffByOne>;
using SplitLosesSiblingMutant = MutantRadixTrie<MutantBug::kSplitLosesSibling>;
using IdCountsDuplicatesMutant =
    MutantRadixTrie<MutantBug::kIdCountsDuplicates>;
using Token16BitMutant = MutantRadixTrie<MutantBug::kToken16Bit>;
using ExtendInPlaceMutant = MutantRadixTrie<MutantBug::kExtendInPlace>;

// Every mutant, in the order MutantNames() lists them.
using Mutants = EngineList<EdgeOffByOneMutant, SplitLosesSiblingMutant,
                           IdCountsDuplicatesMutant, Token16BitMutant,
                           MatchInsertsMutant, ExtendInPlaceMutant>;

}  // namespace

template <MutantBug kBug>
Token MutantRadixTrie<kBug>::Key(Token token) {
  // BUG(mutant-token-16-bit): a 16-bit token type leaked into the key.
  if constexpr (kBug == MutantBug::kToken16Bit) {
    return static_cast<std::int16_t>(token);
  }
  return token;
}

template <MutantBug kBug>
std::size_t MutantRadixTrie<kBug>::CommonLength(const Edge& edge,
                                                TokenSpan tokens) {
  const std::size_t limit = std::min(edge.label.size(), tokens.size());
  std::size_t common = 0;
  while (common < limit && Key(edge.label[common]) == Key(tokens[common])) {
    ++common;
  }
  return common;
}

template <MutantBug kBug>
NodeId MutantRadixTrie<kBug>::AddEdge(Children& children, TokenSpan label) {
  edges_.push_back({{label.begin(), label.end()}, next_id_, {}});
  children.emplace(Key(label[0]), edges_.size() - 1);
  next_id_ += label.size();
  return next_id_ - 1;
}

template <MutantBug kBug>
void MutantRadixTrie<kBug>::Split(Edge& edge, std::size_t at) {
  Edge tail{{edge.label.begin() + at, edge.label.end()},
            edge.first_id + at,
            std::move(edge.children)};
  const Token tail_key = Key(tail.label[0]);
  edges_.push_back(std::move(tail));
  edge.label.resize(at);
  edge.children = {{tail_key, edges_.size() - 1}};
}

template <MutantBug kBug>
NodeId MutantRadixTrie<kBug>::Insert(TokenSpan sequence) {
  const NodeId next_before = next_id_;
  const NodeId reached = InsertPath(sequence);
  // BUG(mutant-id-counts-duplicates): the counter is bumped per inserted
  // sequence that created nothing, as if it counted sequences, not nodes.
  if constexpr (kBug == MutantBug::kIdCountsDuplicates) {
    if (!sequence.empty() && next_id_ == next_before) ++next_id_;
  }
  return reached;
}

template <MutantBug kBug>
NodeId MutantRadixTrie<kBug>::InsertPath(TokenSpan sequence) {
  Children* children = &root_;
  NodeId reached = kRootNode;
  while (!sequence.empty()) {
    const auto found = children->find(Key(sequence[0]));
    if (found == children->end()) return AddEdge(*children, sequence);
    Edge& edge = edges_[found->second];
    const std::size_t common = CommonLength(edge, sequence);
    if (common < edge.label.size()) {
      Split(edge, common);
      if (common == sequence.size()) return edge.first_id + common - 1;
      // BUG(mutant-split-loses-sibling): the new branch replaces the
      // split-off tail instead of joining it.
      if constexpr (kBug == MutantBug::kSplitLosesSibling) {
        edge.children.clear();
      }
      return AddEdge(edge.children, sequence.subspan(common));
    }
    reached = edge.first_id + common - 1;
    sequence = sequence.subspan(common);
    // A leaf edge whose last ID is the newest one can grow in place and keep
    // its IDs consecutive. BUG(mutant-extend-in-place): grows it anyway.
    const bool ids_follow = edge.first_id + edge.label.size() == next_id_ ||
                            kBug == MutantBug::kExtendInPlace;
    if (!sequence.empty() && edge.children.empty() && ids_follow) {
      edge.label.insert(edge.label.end(), sequence.begin(), sequence.end());
      next_id_ += sequence.size();
      return edge.first_id + edge.label.size() - 1;
    }
    children = &edge.children;
  }
  return reached;
}

template <MutantBug kBug>
Match MutantRadixTrie<kBug>::MatchPrefix(TokenSpan request) const {
  Match match;
  const Children* children = &root_;
  while (!request.empty()) {
    const auto found = children->find(Key(request[0]));
    if (found == children->end()) break;
    const Edge& edge = edges_[found->second];
    const std::size_t common = CommonLength(edge, request);
    // BUG(mutant-edge-off-by-one): `common + 1 >= size` for `common == size`.
    const bool whole_edge = kBug == MutantBug::kEdgeOffByOne
                                ? common + 1 >= edge.label.size()
                                : common == edge.label.size();
    if (!whole_edge) {
      match.matched_length += common;
      match.cache_node = edge.first_id + common - 1;
      break;
    }
    match.matched_length += edge.label.size();
    match.cache_node = edge.first_id + edge.label.size() - 1;
    request = request.subspan(common);
    children = &edge.children;
  }
  return match;
}

template <MutantBug kBug>
std::size_t MutantRadixTrie<kBug>::memory_bytes() const {
  constexpr std::size_t kMapNodeBytes =
      32 + sizeof(std::pair<const Token, std::size_t>);
  std::size_t bytes = MallocChunkBytes(edges_.size() * sizeof(Edge));
  for (const Edge& edge : edges_) {
    bytes += VectorHeapBytes<Token>(edge.label.capacity()) +
             edge.children.size() * MallocChunkBytes(kMapNodeBytes);
  }
  return bytes + root_.size() * MallocChunkBytes(kMapNodeBytes);
}

template class MutantRadixTrie<MutantBug::kNone>;
template class MutantRadixTrie<MutantBug::kEdgeOffByOne>;
template class MutantRadixTrie<MutantBug::kSplitLosesSibling>;
template class MutantRadixTrie<MutantBug::kIdCountsDuplicates>;
template class MutantRadixTrie<MutantBug::kToken16Bit>;
template class MutantRadixTrie<MutantBug::kExtendInPlace>;

Match MatchInsertsMutant::MatchPrefix(TokenSpan request) const {
  const Match match = trie_.MatchPrefix(request);
  trie_.Insert(request);  // BUG(mutant-match-inserts)
  return match;
}

std::vector<std::string_view> MutantNames() {
  std::vector<std::string_view> names;
  Mutants::ForEach([&]<typename E>() { names.push_back(E::kName); });
  return names;
}

std::unique_ptr<PrefixIndex> MakeMutant(std::string_view name) {
  std::unique_ptr<PrefixIndex> mutant;
  const auto make_if_named = [&]<typename E>() {
    static_assert(PrefixIndexEngine<E>);
    if (name == E::kName) mutant = std::make_unique<EngineAdapter<E>>();
  };
  EngineList<Baseline>::ForEach(make_if_named);
  Mutants::ForEach(make_if_named);
  if (mutant == nullptr) {
    throw std::invalid_argument("unknown mutant '" + std::string(name) + "'");
  }
  return mutant;
}

}  // namespace kvprefix::test
