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
//
// The bounded-cache mutants (SPEC §8) are one small per-node cache,
// `MutantCache<kBug>`, with `MutantCacheBug::kNone` as their correct baseline
// ("mutant-cache-baseline"), plus `PageHashOnlyMutant`, a paged cache that
// trusts a weak page hash. They are PrefixCacheEngines: MakeMutant builds
// them with the cache options a property or the fuzzer draws (over pages of
// P tokens through PagedIndex, as the registry does), and their bugs show
// only once something is evicted or paged; unbounded over tokens they are
// correct.
#ifndef KVPREFIX_TESTING_MUTANTS_H_
#define KVPREFIX_TESTING_MUTANTS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "checking/differential.h"
#include "kvprefix/cache.h"
#include "kvprefix/namespaces.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/sequence_list.h"
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

// The bug a MutantCache carries; each is one line away from the baseline.
enum class MutantCacheBug {
  kNone,                // correct: the bounded baseline
  kEvictsNonLeaf,       // every node stays in the eviction order, not only the
                        // leaves: a parent is evicted before its children,
                        // which stay behind unreachable
  kReusesEvictedId,     // a new node takes the ID of an evicted one (a free
                        // list, as a slab allocator keeps)
  kNoTouchOnHit,        // only the nodes an insert creates get its stamp: the
                        // matched ones keep their old stamp
  kTieEvictsShallower,  // LRU: among the victim's chain of equal stamps the
                        // shallowest goes (a run trimmed at its head), its
                        // one child moved up to its parent
  kKeepsOneExtra,       // evicts while more than C + 1 nodes are present
  kLfuTieLargerStamp,   // lfu: among leaves of equal counts the one with the
                        // larger stamp (the most recent) goes first
};

// "mutant-cache-baseline", "mutant-evicts-non-leaf", ...
constexpr std::string_view MutantCacheName(MutantCacheBug bug) {
  switch (bug) {
    case MutantCacheBug::kNone:
      return "mutant-cache-baseline";
    case MutantCacheBug::kEvictsNonLeaf:
      return "mutant-evicts-non-leaf";
    case MutantCacheBug::kReusesEvictedId:
      return "mutant-reuses-evicted-id";
    case MutantCacheBug::kNoTouchOnHit:
      return "mutant-no-touch-on-hit";
    case MutantCacheBug::kTieEvictsShallower:
      return "mutant-tie-evicts-shallower";
    case MutantCacheBug::kKeepsOneExtra:
      return "mutant-keeps-c-plus-one";
    case MutantCacheBug::kLfuTieLargerStamp:
      return "mutant-lfu-tie-larger-stamp";
  }
  return "";
}

// A small per-node cache carrying `kBug`; a PrefixCacheEngine over tokens
// (page size 1). Each present node keeps its parent, token, children (a
// std::map), stamp and count; the leaves sit in a std::set ordered by the
// policy's key (stamp, ID, or count then stamp), from which SPEC §8 step 4
// takes the first. Insert is O(length log n) plus O(log n) per eviction. Not
// thread-safe beyond the concept's rules.
template <MutantCacheBug kBug>
class MutantCache {
 public:
  static constexpr std::string_view kName = MutantCacheName(kBug);

  MutantCache() : MutantCache(CacheOptions{}) {}
  // Throws std::invalid_argument if options.page_size != 1.
  explicit MutantCache(const CacheOptions& options);

  NodeId Insert(TokenSpan sequence);
  Match MatchPrefix(TokenSpan request) const;
  Match Access(TokenSpan request) {
    const Match match = MatchPrefix(request);
    Insert(request);
    return match;
  }
  std::uint64_t node_count() const { return nodes_.size(); }
  std::uint64_t evicted_count() const { return evicted_; }
  const CacheOptions& options() const { return options_; }
  void SetEvictionListener(EvictionListener listener) {
    listener_ = std::move(listener);
  }
  std::size_t memory_bytes() const;

 private:
  struct Node {
    NodeId parent;
    Token token;
    std::map<Token, NodeId> children;
    std::uint64_t stamp = 0;
    std::uint64_t count = 0;  // the requests that touched it (lfu)
  };
  // (count or 0, stamp or ID, ID): the ID last, so keys are unique.
  using LeafKey = std::tuple<std::uint64_t, std::uint64_t, NodeId>;

  Node* Find(NodeId id);
  std::map<Token, NodeId>& ChildrenOf(NodeId id);
  LeafKey KeyOf(NodeId id, const Node& node) const;
  bool Listed(const Node& node) const;
  NodeId NewId();
  void Touch(NodeId id, std::uint64_t stamp);
  void EvictOne();

  CacheOptions options_;
  std::map<Token, NodeId> root_children_;
  std::map<NodeId, Node> nodes_;  // present nodes, root excluded
  std::set<LeafKey> leaves_;      // bounded only
  std::vector<NodeId> free_ids_;  // mutant-reuses-evicted-id only
  NodeId next_id_ = 1;
  std::uint64_t stamp_ = 0;
  std::uint64_t evicted_ = 0;
  EvictionListener listener_;
};

// A paged cache that finds a page's symbol by a weak hash of its tokens (their
// sum) and trusts it, without comparing the tokens: with P > 1, pages such
// as [0,1] and [1,0] are one symbol (SPEC §8: "never by hash alone"). Over
// the correct MutantCache; with P = 1 it passes tokens straight through, as
// PagedIndex does, and is correct.
class PageHashOnlyMutant {
 public:
  static constexpr std::string_view kName = "mutant-page-hash-only";

  PageHashOnlyMutant() : PageHashOnlyMutant(CacheOptions{}) {}
  explicit PageHashOnlyMutant(const CacheOptions& options);

  NodeId Insert(TokenSpan sequence);
  Match MatchPrefix(TokenSpan request) const;
  Match Access(TokenSpan request);
  std::uint64_t node_count() const { return cache_.node_count(); }
  std::uint64_t evicted_count() const { return cache_.evicted_count(); }
  const CacheOptions& options() const { return options_; }
  void SetEvictionListener(EvictionListener listener);
  std::size_t memory_bytes() const;

 private:
  // The symbols of the whole pages of `tokens`, up to the first page whose
  // hash has none; AddSymbols first gives new hashes new symbols.
  std::vector<Token> FindSymbols(TokenSpan tokens) const;
  std::vector<Token> AddSymbols(TokenSpan tokens);

  CacheOptions options_;
  MutantCache<MutantCacheBug::kNone> cache_;
  std::map<std::uint32_t, Token> symbol_of_hash_;  // BUG: the hash alone
  // Symbol -> the first page seen with its hash; shared with the listener.
  std::shared_ptr<std::vector<std::vector<Token>>> pages_;
};

// The bug an LRU curve mutant carries (kvprefix/lru_curve.h). Both
// are the real LruCurve over the reference engine, one line away from it.
enum class MutantCurveBug {
  kCapacityOffByOne,  // a node at stack distance d counts as a hit for
                      // C >= d instead of C > d (the curve read at C + 1)
  kRunsLeafFirst,     // the matched path's runs are reported deepest first,
                      // so a run's depth, and with it its distance among
                      // nodes of equal stamp, is taken from the wrong end
};

// "mutant-curve-off-by-one" or "mutant-curve-runs-leaf-first".
constexpr std::string_view MutantCurveName(MutantCurveBug bug) {
  return bug == MutantCurveBug::kCapacityOffByOne
             ? "mutant-curve-off-by-one"
             : "mutant-curve-runs-leaf-first";
}

// The curve mutants' names. They are not engines: MakeMutant does not know
// them; MutantCurveMatchedTokens runs them. Thread-safe.
std::vector<std::string_view> CurveMutantNames();

// The matched tokens of an LRU replay of `trace` over pages of `page_size`
// tokens at each of `capacities` (in pages, any order), as the curve mutant
// `name` computes them in one pass. Throws std::invalid_argument for another
// name. Cost as LruCurve's.
std::vector<std::uint64_t> MutantCurveMatchedTokens(
    std::string_view name, const SequenceList& trace, std::uint64_t page_size,
    std::span<const std::uint64_t> capacities);

// A radix cache that also keeps a 72-byte record per node (parent, stamp, a
// lock count, page hash and a few more fields, as SGLang's TreeNode does)
// in a table indexed by node ID: it grows with every node ever created, also
// in a bounded cache, and goes past the bytes per node BytesPerNodeBound
// holds it to (testing/property_checks.h: 64 unbounded, 104 as a cache; radix
// itself measures up to 89 and 163). Its answers are right;
// memory_bytes() counts the table honestly. For the memory property's teeth:
// it is in MemoryMutantNames(), not in MutantNames().
class FatNodeMutant {
 public:
  static constexpr std::string_view kName = "mutant-fat-node";

  FatNodeMutant() : FatNodeMutant(CacheOptions{}) {}
  explicit FatNodeMutant(const CacheOptions& options);

  NodeId Insert(TokenSpan sequence);
  Match MatchPrefix(TokenSpan request) const;
  Match Access(TokenSpan request);
  std::uint64_t node_count() const;
  std::uint64_t evicted_count() const;
  const CacheOptions& options() const;
  void SetEvictionListener(EvictionListener listener);
  std::size_t memory_bytes() const;

 private:
  struct Record {
    NodeId parent;
    std::uint64_t stamp;
    std::uint64_t fields[7];
  };
  void GrowRecords();

  std::unique_ptr<PrefixIndex> trie_;  // a radix cache
  std::vector<Record> records_;        // BUG: one per node ID ever given
};

// The mutants that break only the memory bounds: "mutant-fat-node".
std::vector<std::string_view> MemoryMutantNames();

// A cache that takes namespaces itself (checking::NamespaceTaker, SPEC
// §8.1): the reference cache of its options' model, handed each request as
// the harness hands it to a cache that folds namespaces itself. The correct
// one ("mutant-namespace-baseline", kBlind false) folds the namespace into
// the first token with a NamespaceFolder of its own (kvprefix/namespaces.h),
// as every kvprefix run does; "mutant-namespace-blind" ignores the namespace
// (BUG), so equal tokens of two namespaces share nodes: another LoRA
// adapter's or cache salt's KV is reused. Its bug shows only in a run with
// namespaces (a generated document or fuzz input that has them); otherwise
// the harness never calls SetNamespace and both are the reference.
template <bool kBlind>
class NamespaceMutant final : public PrefixIndex,
                              public checking::NamespaceTaker {
 public:
  static constexpr std::string_view kName =
      kBlind ? "mutant-namespace-blind" : "mutant-namespace-baseline";

  explicit NamespaceMutant(const CacheOptions& options);

  void SetNamespace(std::string_view name) override {
    namespace_ = name;
    folds_ = true;
  }
  std::string_view name() const override { return kName; }
  NodeId Insert(TokenSpan sequence) override {
    return cache_->Insert(Folded(sequence));
  }
  Match MatchPrefix(TokenSpan request) const override {
    return cache_->MatchPrefix(Folded(request));
  }
  Match Access(TokenSpan request) override {
    return cache_->Access(Folded(request));
  }
  std::uint64_t node_count() const override { return cache_->node_count(); }
  std::uint64_t evicted_count() const override {
    return cache_->evicted_count();
  }
  std::size_t memory_bytes() const override { return cache_->memory_bytes(); }
  const CacheOptions& options() const override { return cache_->options(); }
  void SetEvictionListener(EvictionListener listener) override {
    cache_->SetEvictionListener(std::move(listener));
  }

 private:
  // `tokens` with the first folded in namespace_ (the baseline, once
  // SetNamespace was called), or as they are (the mutant's bug).
  TokenSpan Folded(TokenSpan tokens) const {
    if (kBlind || !folds_ || tokens.empty()) return tokens;
    folded_.assign(tokens.begin(), tokens.end());
    folded_.front() = folder_.Fold(folder_.Intern(namespace_), tokens.front());
    return folded_;
  }

  std::unique_ptr<PrefixIndex> cache_;
  std::string namespace_;
  bool folds_ = false;
  mutable NamespaceFolder folder_;
  mutable std::vector<Token> folded_;
};

// The namespace mutants (the baseline excluded): "mutant-namespace-blind".
// Not in MutantNames(): their bug needs inputs with namespaces, which the
// property suite does not draw.
std::vector<std::string_view> NamespaceMutantNames();

// The names of every mutant (the baselines excluded), in a fixed order: the
// index mutants first, then the cache mutants. Thread-safe.
std::vector<std::string_view> MutantNames();
// The mutants whose bug shows in the unbounded batch job and online use
// (SPEC §1-§3): the MutantRadixTrie ones and mutant-match-inserts.
std::vector<std::string_view> IndexMutantNames();
// The mutants whose bug shows only with a capacity or a page size (SPEC §8).
std::vector<std::string_view> CacheMutantNames();

// A new, empty mutant named `name` (one of MutantNames(),
// MemoryMutantNames(), NamespaceMutantNames(), "mutant-namespace-baseline",
// ModelMutantNames() (testing/model_mutants.h, built
// by MakeModelMutant), "mutant-baseline" or "mutant-cache-baseline"). Cache
// mutants are built with `options` (over PagedIndex when options.page_size !=
// 1, as engines/registry.h does); index mutants ignore them: they are unbounded
// token tries. Throws std::invalid_argument for any other name, or a page size
// outside 1 to 2^31 - 1.
std::unique_ptr<PrefixIndex> MakeMutant(std::string_view name,
                                        const CacheOptions& options = {});

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_MUTANTS_H_
