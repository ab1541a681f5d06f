// A correct cache with a structure of its own, as a user's cache is: the
// reference's answers, but node IDs offset by 1000, counts off by one and
// no eviction reports. It passes only comparisons of matched lengths
// (checking::Comparison::kLengths); the tests of those comparisons use it.
#ifndef KVPREFIX_TESTING_OWN_NODE_IDS_ENGINE_H_
#define KVPREFIX_TESTING_OWN_NODE_IDS_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "engines/registry.h"
#include "kvprefix/prefix_index.h"
#include "reference/reference_trie.h"

namespace kvprefix::test {

class OwnNodeIdsEngine final : public PrefixIndex {
 public:
  explicit OwnNodeIdsEngine(const CacheOptions& options)
      : inner_(MakeEngine(ReferenceTrie::kName, options)) {}
  std::string_view name() const override { return "own-node-ids"; }
  NodeId Insert(TokenSpan sequence) override {
    return Own(inner_->Insert(sequence));
  }
  Match MatchPrefix(TokenSpan request) const override {
    return Own(inner_->MatchPrefix(request));
  }
  Match Access(TokenSpan request) override {
    return Own(inner_->Access(request));
  }
  std::uint64_t node_count() const override { return inner_->node_count() + 1; }
  std::uint64_t evicted_count() const override {
    return inner_->evicted_count() + 1;
  }
  std::size_t memory_bytes() const override { return inner_->memory_bytes(); }
  const CacheOptions& options() const override { return inner_->options(); }
  void SetEvictionListener(EvictionListener) override {}

 private:
  static NodeId Own(NodeId node) { return node + 1000; }
  static Match Own(Match match) {
    return Match{match.matched_length, Own(match.cache_node)};
  }
  std::unique_ptr<PrefixIndex> inner_;
};

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_OWN_NODE_IDS_ENGINE_H_
