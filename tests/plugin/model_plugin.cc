// A model of SPEC §9 as a plugin through plugin_export.h: MODEL_VLLM builds
// the hash engine's block pool (model vllm), else the radix engine's radix
// cache (model sglang). Each gets the model, match limit and trigger from
// the options (plugin ABI 2) and refuses every other model, so that they
// must agree with the reference on every document of their model, node
// IDs and evictions included (plugin_test.cc).
#include "plugin/plugin_export.h"

#if MODEL_VLLM
#include "models/vllm/block_pool.h"
KVPREFIX_EXPORT_PLUGIN(kvprefix::BlockPool)
#else
#include "models/sglang/radix_cache.h"
KVPREFIX_EXPORT_PLUGIN(kvprefix::RadixCache)
#endif
