// The radix engine, over pages of any size, as a plugin: what the plugin
// boundary is checked with (it must agree with the compiled-in engine on
// every answer, node IDs and evictions included) and what it costs
// (bench/).
#include "kvprefix/paged_index.h"
#include "optimized/radix_trie.h"
#include "plugin/plugin_export.h"

KVPREFIX_EXPORT_PLUGIN(kvprefix::PagedIndex<kvprefix::RadixTrie>)
