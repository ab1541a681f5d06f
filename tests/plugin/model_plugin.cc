// A model of SPEC §9 as a plugin through plugin_export.h: MODEL_VLLM builds
// the hash engine's block pool (model vllm), else the radix engine's radix
// cache (model sglang). Each gets the model, match limit and trigger from
// the options (plugin ABI 2) and refuses every other model, so that they
// must agree with the reference on every document of their model, node
// IDs and evictions included (plugin_test.cc). NO_OUTPUT builds the block
// pool as a cache that stores no output tokens: its admit refuses a
// serving replay with output "unique" (plugin_serving_test.cc).
#include "plugin/plugin_export.h"

#if MODEL_VLLM
#include "models/vllm/block_pool.h"
#if NO_OUTPUT
#include <cstdint>

#include "kvprefix/options_refused.h"

class BlockPoolWithoutOutput : public kvprefix::BlockPool {
 public:
  static constexpr std::string_view kName = "no-output";
  using BlockPool::BlockPool;
  kvprefix::Attempt Admit(kvprefix::RequestId id, kvprefix::TokenSpan prompt,
                          std::uint64_t stored_length) {
    if (stored_length > prompt.size()) {
      throw kvprefix::OptionsRefused(
          "no-output stores no output tokens (output \"unique\")");
    }
    return BlockPool::Admit(id, prompt, stored_length);
  }
};
KVPREFIX_EXPORT_PLUGIN(BlockPoolWithoutOutput)
#else
KVPREFIX_EXPORT_PLUGIN(kvprefix::BlockPool)
#endif
#else
#include "models/sglang/radix_cache.h"
KVPREFIX_EXPORT_PLUGIN(kvprefix::RadixCache)
#endif
