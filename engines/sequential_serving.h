// A ServingCache over an engine that has no request lifecycle of its own
// (the optimized engines, a plugin): each request is admitted and finished
// at one instant, which is SPEC §10 exactly when one request runs at a time
// and output takes no cache space (§10.7's theorem: B = 1, output "none").
// Any other serving replay needs an engine with a lifecycle
// (kvprefix/request.h's ServingEngine), and `one_at_a_time()` says so.
#ifndef KVPREFIX_ENGINES_SEQUENTIAL_SERVING_H_
#define KVPREFIX_ENGINES_SEQUENTIAL_SERVING_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "kvprefix/prefix_index.h"
#include "kvprefix/request.h"

namespace kvprefix {

class SequentialServingCache final : public ServingCache {
 public:
  // Over `index`, empty; reports its evictions to count sglang's tokens.
  explicit SequentialServingCache(std::unique_ptr<PrefixIndex> index);

  std::string_view name() const override { return index_->name(); }
  const CacheOptions& options() const override { return index_->options(); }
  bool one_at_a_time() const override { return true; }
  // Access(prompt): the match, or a refusal where the model refuses with
  // an empty cache (vllm: more blocks than C; sglang "on-allocate": more
  // than C·P tokens). Records what the request pins while it runs (§10.5).
  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override;
  void PrefillEnd(RequestId, TokenSpan) override {}
  // Releases what Admit recorded: Access cached the request already.
  void Finish(RequestId, TokenSpan) override { pinned_ = 0; }
  Match PeekMatch(TokenSpan request) const override;
  // What the one running request pins: spec its matched nodes, vllm its
  // ceil(n / P) blocks, sglang its n tokens ("on-allocate": matched and
  // held) or matched ones ("after-insert").
  std::uint64_t pinned() const override { return pinned_; }
  // The engine's node_count(): exact for spec and vllm; for sglang its
  // nodes, not pages (no router policy of §11.5 reads it).
  std::uint64_t cached_pages() const override;
  std::uint64_t evicted_pages() const override;

 private:
  std::unique_ptr<PrefixIndex> index_;
  std::uint64_t pinned_ = 0;
  std::shared_ptr<std::uint64_t> evicted_tokens_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_ENGINES_SEQUENTIAL_SERVING_H_
