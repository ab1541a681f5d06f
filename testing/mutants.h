// Mutants: deliberately broken engines, for tests only.
//
// Each mutant carries one small, realistic bug of the kind an optimized
// engine could ship with. The property suite (tests/property/) must find a
// counterexample for every one of them; a suite that passes a mutant has no
// teeth (mutation testing, as in PIT or Mull). The fuzzers and the tests of
// `verify` use them the same way to prove they can fail; the shipped tool
// never contains them.
//
// All radix-shaped mutants are one small path-compressed trie,
// `MutantRadixTrie<kBug>`, written for readability, not speed, and
// independent of the optimized engines in optimized/. With kBug ==
// MutantBug::kNone it is correct (the "mutant-baseline"), which the suite
// also checks, so every failure of a mutant is due to its bug alone.
//
// Radix layout (after SGLang's RadixCache): an edge holds a run of tokens
// (its label) and the IDs of the nodes along it are consecutive,
// first_id, first_id + 1, ...; `children` maps the first token of each child
// edge to that edge. An insert that diverges inside an edge splits it.
#ifndef KVPREFIX_TESTING_MUTANTS_H_
#define KVPREFIX_TESTING_MUTANTS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "kvprefix/prefix_index.h"
#include "kvprefix/types.h"

namespace kvprefix::test {

// The bug a MutantRadixTrie carries.
enum class MutantBug {
  kNone,                // correct: the baseline
  kEdgeOffByOne,        // a match that stops on an edge's last token counts
                        // the whole edge (`common + 1 >= size`)
  kSplitLosesSibling,   // splitting an edge for a new branch drops the
                        // split-off tail, the new branch's sibling
  kIdCountsDuplicates,  // the ID counter also counts an insert that creates
                        // no node (a duplicate or a prefix)
  kToken16Bit,          // tokens keyed and compared on their low 16 bits
  kExtendInPlace,       // a leaf edge is extended in place even when the
                        // new IDs do not follow its last ID
};

// The registry-style name of the engine carrying `bug`, e.g.
// "mutant-edge-off-by-one"; "mutant-baseline" for kNone.
constexpr std::string_view MutantName(MutantBug bug) {
  switch (bug) {
    case MutantBug::kNone:
      return "mutant-baseline";
    case MutantBug::kEdgeOffByOne:
      return "mutant-edge-off-by-one";
    case MutantBug::kSplitLosesSibling:
      return "mutant-split-loses-sibling";
    case MutantBug::kIdCountsDuplicates:
      return "mutant-id-counts-duplicates";
    case MutantBug::kToken16Bit:
      return "mutant-token-16-bit";
    case MutantBug::kExtendInPlace:
      return "mutant-extend-in-place";
  }
  return "";
}

// A small radix trie carrying `kBug`; a PrefixIndexEngine. Costs as in
// ReferenceTrie times the label length of the edges walked. Not thread-safe
// beyond the concept's rules.
template <MutantBug kBug>
class MutantRadixTrie {
 public:
  static constexpr std::string_view kName = MutantName(kBug);

  NodeId Insert(TokenSpan sequence);
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return next_id_ - 1; }
  std::size_t memory_bytes() const;

 private:
  using Children = std::map<Token, std::size_t>;  // first token -> edge index
  struct Edge {
    std::vector<Token> label;
    NodeId first_id;  // ID of the node reached by label[0]
    Children children;
  };

  static Token Key(Token token);
  static std::size_t CommonLength(const Edge& edge, TokenSpan tokens);
  NodeId InsertPath(TokenSpan sequence);
  NodeId AddEdge(Children& children, TokenSpan label);
  void Split(Edge& edge, std::size_t at);

  Children root_;
  std::deque<Edge> edges_;  // a deque: references survive push_back
  NodeId next_id_ = 1;
};

// A match that also inserts the request: the serving loop's "match, then
// insert" folded into MatchPrefix by mistake. Its answers are right; the
// index it leaves behind is not.
class MatchInsertsMutant {
 public:
  static constexpr std::string_view kName = "mutant-match-inserts";

  NodeId Insert(TokenSpan sequence) { return trie_.Insert(sequence); }
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return trie_.node_count(); }
  std::size_t memory_bytes() const { return trie_.memory_bytes(); }

 private:
  // mutable: the bug is precisely a const member function that writes.
  mutable MutantRadixTrie<MutantBug::kNone> trie_;
};

// The names of every mutant (the baseline excluded), in a fixed order.
// Thread-safe.
std::vector<std::string_view> MutantNames();

// A new, empty mutant named `name` (one of MutantNames() or
// "mutant-baseline"). Throws std::invalid_argument for any other name.
std::unique_ptr<PrefixIndex> MakeMutant(std::string_view name);

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_MUTANTS_H_
