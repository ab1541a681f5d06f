// SPEC §11.5 `sglang-cache-aware`: the router's own approximate tree, a
// trie of tokens shared by all workers (one token per node), each node
// holding a stamp for each worker that owns it; size_w = the nodes (root
// excluded) w owns; a clock ticking 1, 2, 3, .... Every worker owns the
// root (stamp 0) at the start. Parameters: cache_threshold (decimal 0 to
// 1; 0.3), balance_abs_threshold (64), balance_rel_threshold (decimal;
// 1.5), max_tree_size (2^26), eviction_interval_us (120000000; 0 = never),
// fallback ("smallest-tree" or "least-loaded"). Steps per request:
// (1) evict if due: at or after the next eviction time, each worker over
// max_tree_size loses its leaves-for-w (nodes it owns with no child it
// owns) by smallest stamp until it is not; a node nobody owns leaves the
// tree; the next time is the first multiple of the interval above the
// arrival. (2) If hi − lo > balance_abs_threshold and hi >
// balance_rel_threshold · lo (loads), the first least loaded, inserted for
// it (5). (3) Match (one tick t): walk x down from the root as far as nodes
// exist: M tokens, ending at z; the tenant (the first worker owning z) gets
// stamp t on z and every node above it. (4) The tenant if n > 0 and M/n >
// cache_threshold; else the first smallest tree (or the first least
// loaded). (5) Insert x for the chosen w (one tick t'): stamp t' on the
// root and x's path, nodes created, size_w + 1 for each node new to w.
// Follows: sgl-router's policies/cache_aware.rs and tree.rs (both
// thresholds, the match over the shared tree, the strict >, the
// smallest-tenant fallback, the insert on the imbalanced branch too, the
// tenant refreshed up to the root, eviction per tenant by size); the newer
// sgl-model-gateway falls back to the least loaded worker, hence fallback.
// Leaves out: SGLang's tree holds request text (characters), here tokens;
// one token per node (SGLang evicts radix edges whole, and a match ending
// inside an edge refreshes it whole); the tenant is the first owner
// (SGLang's is the first key of a concurrent map, arbitrary); the clock is
// a counter (SGLang's milliseconds can tie); eviction runs at arrivals, not
// on a wall-clock thread.
#ifndef KVPREFIX_ROUTER_POLICIES_SGLANG_CACHE_AWARE_H_
#define KVPREFIX_ROUTER_POLICIES_SGLANG_CACHE_AWARE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "router/policies/token_trie.h"
#include "router/rational.h"
#include "router/router.h"

namespace kvprefix {

struct CacheAwareSettings {
  Rational cache_threshold{3, 10};
  std::uint64_t balance_abs_threshold = 64;
  Rational balance_rel_threshold{3, 2};
  std::uint64_t max_tree_size = std::uint64_t{1} << 26;
  std::uint64_t eviction_interval_us = 120000000;
  bool least_loaded_fallback = false;  // fallback "least-loaded"
};

// Not final: testing/routing_mutants.h overrides RefreshMatch (a mutant
// that skips step 3's refresh).
class SglangCacheAwareRouter : public Router {
 public:
  SglangCacheAwareRouter(std::size_t workers,
                         const CacheAwareSettings& settings);
  // O(n + N) plus an eviction's O(nodes log nodes) when one is due.
  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override;

  // size_w. O(1).
  std::uint64_t tree_size(std::size_t w) const { return size_[w]; }

 protected:
  using Node = TokenEdges::Node;
  // Step 3's refresh: stamp `tick` on `matched` (z) and every node above
  // it, the root included, for `tenant`. O(depth of z).
  virtual void RefreshMatch(Node matched, std::size_t tenant,
                            std::uint64_t tick);

 private:
  struct TreeNode {
    Node parent = 0;
    Token token = 0;
    // (worker, stamp) of each owner, by worker.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> owners;
  };

  // Sets w's stamp on `node` (owning it if it did not). Returns whether w
  // owned it before.
  bool Stamp(Node node, std::size_t w, std::uint64_t stamp);
  void EvictIfDue(std::uint64_t arrival_us);
  void EvictWorker(std::size_t w);
  void Insert(TokenSpan tokens, std::size_t w);
  Node NewNode(Node parent, Token token);

  std::vector<TreeNode> nodes_;
  std::vector<Node> free_;  // slots of nodes that left the tree
  TokenEdges edges_;
  std::vector<std::uint64_t> size_;
  std::uint64_t clock_ = 0;
  std::uint64_t next_eviction_us_;
  CacheAwareSettings settings_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_POLICIES_SGLANG_CACHE_AWARE_H_
