// Model mutants: small, readable models of SPEC §9 (vllm's block pool,
// sglang's radix tree), each carrying one bug, for tests only.
//
// They are written from SPEC §9 alone, independent of reference/, so the
// baselines (bug kNone) are a second implementation the property suite
// compares with the reference on exhaustive small worlds
// (tests/property/model_properties_test.cc); each mutant breaks one rule of
// §9.2 or §9.3 and must be caught there and by the differential fuzzer
// (fuzz/teeth.sh). Simple over fast: a chain is keyed by its whole token
// prefix, the free queue is a std::list searched linearly, evict scans every
// node. Each bug is marked "BUG(<mutant name>)" in model_mutants.cc.
//
// Thread safety: const members may run concurrently; the rest need exclusive
// access.
#ifndef KVPREFIX_TESTING_MODEL_MUTANTS_H_
#define KVPREFIX_TESTING_MODEL_MUTANTS_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/types.h"

namespace kvprefix::test {

// The bug a MutantBlockPool carries (SPEC §9.2's step it breaks).
enum class VllmBug {
  kNone,           // correct: the baseline
  kNoCap,          // step 1 walks up to ⌊n/P⌋ pages: a match may cover the
                   // last token
  kPartialNoSlot,  // a request needs ⌊n/P⌋ blocks: its partial page takes
                   // no block (fewer evictions, fewer refusals)
  kFreesForward,   // step 6 frees block 1 first, block N last
  kLookupTakesLast,  // step 1's hit is the last block of the chain's list
};

// "mutant-vllm-baseline", "mutant-vllm-no-cap", ...
constexpr std::string_view VllmMutantName(VllmBug bug) {
  switch (bug) {
    case VllmBug::kNone:
      return "mutant-vllm-baseline";
    case VllmBug::kNoCap:
      return "mutant-vllm-no-cap";
    case VllmBug::kPartialNoSlot:
      return "mutant-vllm-partial-no-slot";
    case VllmBug::kFreesForward:
      return "mutant-vllm-frees-forward";
    case VllmBug::kLookupTakesLast:
      return "mutant-vllm-lookup-takes-last";
  }
  return "";
}

// The bug a MutantRadixModel carries (SPEC §9.3's rule it breaks).
enum class SglangBug {
  kNone,             // correct: the baseline
  kEvictsShortfall,  // on-allocate evicts need − free, not the whole need
  kNoSplitTouch,     // a match that splits an edge leaves the tail's access
                     // time as it was
  kSplitOldTimes,    // a split's new node copies the child's a and c instead
                     // of taking a fresh time
};

// "mutant-sglang-baseline", "mutant-sglang-evicts-shortfall", ...
constexpr std::string_view SglangMutantName(SglangBug bug) {
  switch (bug) {
    case SglangBug::kNone:
      return "mutant-sglang-baseline";
    case SglangBug::kEvictsShortfall:
      return "mutant-sglang-evicts-shortfall";
    case SglangBug::kNoSplitTouch:
      return "mutant-sglang-no-split-touch";
    case SglangBug::kSplitOldTimes:
      return "mutant-sglang-split-old-times";
  }
  return "";
}

// SPEC §9.2's block pool carrying `kBug`; a PrefixCacheEngine taking the page
// size itself (options.model must be vllm). Access is O(n/P · (n + log
// chains) + C) for n tokens. Throws std::invalid_argument for options the
// model refuses (FindModelOptionsProblem).
template <VllmBug kBug>
class MutantBlockPool {
 public:
  static constexpr std::string_view kName = VllmMutantName(kBug);

  MutantBlockPool()
      : MutantBlockPool(CacheOptions{.model = CacheModel::kVllm,
                                     .match_limit = MatchLimit::kAllButLast}) {}
  explicit MutantBlockPool(const CacheOptions& options);

  // SPEC §9.2 steps 0-6.
  Match Access(TokenSpan request);
  // Access, then the first block holding the sequence's whole pages (0: none).
  NodeId Insert(TokenSpan sequence);
  // Step 1 alone, changing nothing.
  Match MatchPrefix(TokenSpan request) const;
  // Blocks holding a chain.
  std::uint64_t node_count() const { return held_.size(); }
  std::uint64_t evicted_count() const { return evicted_; }
  const CacheOptions& options() const { return options_; }
  void SetEvictionListener(EvictionListener listener) {
    listener_ = std::move(listener);
  }
  // A rough count: the chains' tokens and the block lists.
  std::size_t memory_bytes() const;

 private:
  using BlockId = std::uint64_t;
  using Chain = std::vector<Token>;  // a request's first k whole pages

  std::vector<BlockId> Hits(TokenSpan request) const;
  BlockId Allocate();

  CacheOptions options_;
  std::map<Chain, std::vector<BlockId>> index_;  // oldest holder first
  std::map<BlockId, Chain> held_;                // block -> its chain
  BlockId next_unused_ = 1;        // IDs from here on were never used
  std::list<BlockId> free_queue_;  // the used blocks, head first
  std::uint64_t evicted_ = 0;
  EvictionListener listener_;
};

// SPEC §9.3's radix tree carrying `kBug`; a PrefixCacheEngine taking the page
// size itself (options.model must be sglang). Access is O(n · depth) plus
// O(nodes²) when it evicts. Throws std::invalid_argument for options the
// model refuses (FindModelOptionsProblem).
template <SglangBug kBug>
class MutantRadixModel {
 public:
  static constexpr std::string_view kName = SglangMutantName(kBug);

  MutantRadixModel()
      : MutantRadixModel(CacheOptions{.model = CacheModel::kSglang}) {}
  explicit MutantRadixModel(const CacheOptions& options);

  // SPEC §9.3 by the trigger.
  Match Access(TokenSpan request);
  // Access, then where MatchPrefix(sequence) ends.
  NodeId Insert(TokenSpan sequence);
  // match(request) without its effects; a split answers the ID it would get.
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return present_; }
  std::uint64_t evicted_count() const { return evicted_; }
  const CacheOptions& options() const { return options_; }
  void SetEvictionListener(EvictionListener listener) {
    listener_ = std::move(listener);
  }
  // Tokens on the edges present.
  std::uint64_t size_tokens() const { return size_; }
  std::size_t memory_bytes() const;

 private:
  struct Node {
    std::vector<Token> edge;
    std::map<std::vector<Token>, NodeId> children;  // by first page
    NodeId parent = kRootNode;
    std::uint64_t access = 0;
    std::uint64_t creation = 0;
    std::uint64_t locks = 0;
    bool present = true;
  };

  std::uint64_t Tick() { return ++clock_; }
  std::vector<Token> FirstPage(TokenSpan tokens) const;
  std::size_t CommonPages(const std::vector<Token>& edge, TokenSpan key) const;
  NodeId AddNode(NodeId parent, std::vector<Token> edge);
  NodeId Split(NodeId child, std::size_t pages);
  Match MatchKey(TokenSpan key);
  void InsertKey(TokenSpan key);
  std::uint64_t Evict(std::uint64_t demand);
  void Lock(const std::vector<NodeId>& path, bool lock);

  CacheOptions options_;
  std::vector<Node> nodes_ = std::vector<Node>(1);  // [ID]; [0] the root
  std::uint64_t clock_ = 0;
  std::uint64_t present_ = 0;
  std::uint64_t size_ = 0;
  std::uint64_t evicted_ = 0;
  EvictionListener listener_;
};

// The model mutants (baselines excluded): the vllm ones, then the sglang
// ones. Thread-safe.
std::vector<std::string_view> ModelMutantNames();
// The model a model mutant (or baseline) named `name` follows; nullopt for
// another name.
std::optional<CacheModel> ModelMutantModel(std::string_view name);
// A new, empty model mutant (or "mutant-vllm-baseline",
// "mutant-sglang-baseline") built with `options`; nullptr for another name.
// Throws std::invalid_argument for options its model refuses.
std::unique_ptr<PrefixIndex> MakeModelMutant(std::string_view name,
                                             const CacheOptions& options);

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_MODEL_MUTANTS_H_
