/* The engine plugin interface: a prefix cache written outside kvprefix, in
 * any language that can export C functions, built as a shared library that
 * kvprefix loads by path (`--engine plugin:PATH`, dlopen) and checks,
 * fuzzes and benchmarks like its built-in engines.
 *
 * This is a C header with a versioned ABI: it includes only <stddef.h> and
 * <stdint.h>, passes only fixed-width integers, pointers and plain structs,
 * and no C++ exception may cross it (a C++ plugin catches everything;
 * plugin/plugin_export.h does it for you). The ABI version is in the name
 * of the one symbol a plugin exports, so a library built for another
 * version is refused by name, never called with the wrong layout.
 *
 * The semantics are SPEC §1, §3, §8 and §9's, as for every kvprefix engine
 * (kvprefix/prefix_index.h): tokens are int32_t (the whole range), lengths
 * count tokens, node IDs are the plugin's own (the root is 0; a cache with
 * no node IDs answers 0 and is checked with verify's length-only
 * comparison, which never reads them). A cache follows one of SPEC §9's
 * models, which create names (kvprefix_cache_options): SPEC §8's trie
 * ("spec"), vLLM's block pool ("vllm", §9.2) or SGLang's radix cache
 * ("sglang", §9.3), so a user's own vLLM- or SGLang-like cache is checked
 * in-process against the reference of its model.
 *
 * Versions: version 2 added the model, match limit and trigger to
 * kvprefix_cache_options; the table is version 1's. kvprefix looks for
 * kvprefix_plugin_v2 first, then kvprefix_plugin_v1: a plugin built for
 * version 1 still loads, gets model "spec" with match limit "all" only,
 * and any other model is refused on its behalf ("built for ABI 1, which
 * has no model"), never passed to a cache that could not read it.
 *
 * Threads: the functions that take a const cache (match, node_count,
 * evicted_count, memory_bytes) may be called on one cache from several
 * threads at once (`kvprefix match` matches on --threads threads, every
 * core by default), never while another function runs on it; the others
 * (insert, access, set_eviction_callback, destroy) are called from one
 * thread at a time with nothing else in flight on that cache. A cache whose
 * match is not safe to call concurrently is run with `match --threads 1`.
 * Different caches of one plugin may be used from different threads at
 * once.
 *
 * Errors: every fallible function returns a kvprefix_status; on anything
 * but KVPREFIX_OK it writes a NUL-terminated message (at most
 * KVPREFIX_ERROR_MESSAGE_SIZE bytes with the NUL; longer messages are cut)
 * into *error, and the outputs are unspecified. A status kvprefix does not
 * know, a matched length longer than the request, or a missing required
 * function is reported as the plugin's fault, naming the plugin and the
 * call; so is a crash or a hang under `kvprefix verify`.
 *
 * A plugin in C:
 *
 *   #include "plugin/kvprefix_plugin.h"
 *   static const kvprefix_plugin table = {
 *     KVPREFIX_PLUGIN_ABI_VERSION, sizeof(kvprefix_plugin), "mycache",
 *     my_create, my_destroy, my_insert, my_match, NULL, my_node_count,
 *     NULL, NULL, NULL};
 *   KVPREFIX_PLUGIN_EXPORT const kvprefix_plugin* kvprefix_plugin_v2(void) {
 *     return &table;
 *   }
 *
 * examples/plugin/ builds one against the installed package. */
#ifndef KVPREFIX_PLUGIN_KVPREFIX_PLUGIN_H_
#define KVPREFIX_PLUGIN_KVPREFIX_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's layout. A change that a plugin built for
 * an older version could misread, or would ignore without knowing (version
 * 2's model: a version 1 cache would answer SPEC §8 for it), gets a new
 * version and a new entry symbol; adding a member at the end of
 * kvprefix_plugin does not (kvprefix reads `size` and treats members past
 * it as NULL). */
#define KVPREFIX_PLUGIN_ABI_VERSION 2

/* The symbol every plugin exports, of type kvprefix_plugin_entry; its table's
 * abi_version must be the version in its name. (Version 1's was
 * "kvprefix_plugin_v1", see "Versions" above.) */
#define KVPREFIX_PLUGIN_ENTRY_SYMBOL "kvprefix_plugin_v2"

/* Marks the entry point exported from the shared library, whatever the
 * library's default symbol visibility. */
#if defined(_WIN32)
#define KVPREFIX_PLUGIN_EXPORT __declspec(dllexport)
#else
#define KVPREFIX_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* What a fallible call returns. */
typedef int32_t kvprefix_status;
/* Success: the outputs are set. */
#define KVPREFIX_OK 0
/* The options (create) or the arguments are outside what the cache
 * supports, e.g. a model, match limit, trigger, policy or page size it
 * does not implement. Refused
 * options are not a bug: `kvprefix verify`, the differential fuzzer and
 * Python's kvprefix.testing skip the inputs whose options a cache refuses
 * and count them with the first refusal, the benchmarks skip the row with
 * the message; `verify --models --match-limits --policies --page-sizes
 * --capacities` (the fuzzer's KVPREFIX_FUZZ_* of the same names) generate
 * only the options a cache implements. */
#define KVPREFIX_INVALID_ARGUMENT 1
/* Node IDs or storage would overflow (kvprefix::CapacityError). */
#define KVPREFIX_CAPACITY_EXCEEDED 2
/* Memory ran out (std::bad_alloc). */
#define KVPREFIX_OUT_OF_MEMORY 3
/* Anything else: a bug the plugin caught. */
#define KVPREFIX_INTERNAL_ERROR 4

#define KVPREFIX_ERROR_MESSAGE_SIZE 512

/* Where a failing call explains itself (see "Errors" above). */
typedef struct kvprefix_error {
  char message[KVPREFIX_ERROR_MESSAGE_SIZE];
} kvprefix_error;

/* The cache to build (SPEC §8, §9). Every name is NUL-terminated, never
 * NULL, and valid during create only (copy what the cache keeps). New
 * models, match limits, triggers and policies are new names, not a new
 * ABI: a cache refuses a name it does not implement, or a combination it
 * does not, with KVPREFIX_INVALID_ARGUMENT, never running it as another.
 * kvprefix passes only combinations SPEC §9.4 allows (e.g. never "vllm"
 * with "fifo"). Members are only ever appended, so a plugin built for an
 * older version reads the ones it knows right. */
typedef struct kvprefix_cache_options {
  /* Nodes kept besides the root (spec), blocks (vllm) or pages (sglang);
   * UINT64_MAX is unbounded: never evict. */
  uint64_t capacity;
  /* The eviction policy's name: one `kvprefix policies` lists, "lru",
   * "fifo" or "lfu" today (SPEC §8; vllm takes "lru" only, its free
   * queue's order; sglang "lru" or "fifo", SPEC §9.4). */
  const char* policy;
  /* Tokens per node (spec), block (vllm) or page (sglang), 1 to 2^31 - 1.
   * A cache that keeps pages matches whole pages only; one that does not
   * refuses page sizes but 1. */
  uint64_t page_size;
  /* Since version 2. The model's name (SPEC §9): "spec" (§8's trie of
   * nodes), "vllm" (vLLM's block pool, §9.2) or "sglang" (SGLang's radix
   * cache, §9.3). A cache implements one or more and refuses the rest. */
  const char* model;
  /* Since version 2. How much of a request a match may cover (SPEC §9.1):
   * "all", or "all-but-last" (at most n - 1 tokens, in whole pages; always
   * so for vllm). With "spec" it shortens the match only: the whole
   * request is still inserted and touched. */
  const char* match_limit;
  /* Since version 2. When model "sglang" evicts (SPEC §9.3):
   * "after-insert" (down to the capacity after each insert) or
   * "on-allocate" (a request's whole demand before its insert, refusing
   * the request when that is not enough). "after-insert" for every other
   * model, which has no trigger: a cache of another model ignores it. */
  const char* trigger;
} kvprefix_cache_options;

/* The answer to one match (SPEC §1): matched_length tokens of the request
 * were found, ending at node cache_node (0, the root, when none). */
typedef struct kvprefix_match {
  uint64_t matched_length;
  uint64_t cache_node;
} kvprefix_match;

/* What one attempt of a request did (SPEC §10.3): it starts (match is its
 * recorded answer), waits at the head of the queue (nothing changes but
 * what the model's match itself changes), or is refused (it never fits). */
#define KVPREFIX_ATTEMPT_START 0
#define KVPREFIX_ATTEMPT_WAIT 1
#define KVPREFIX_ATTEMPT_REFUSE 2

typedef struct kvprefix_attempt {
  int32_t outcome; /* a KVPREFIX_ATTEMPT_ value */
  kvprefix_match match;
} kvprefix_attempt;

/* A cache, owned by the plugin; kvprefix only passes the pointer back. */
typedef struct kvprefix_cache kvprefix_cache;

/* Receives the tokens (edge labels) of nodes a bounded cache evicts, as
 * kvprefix::EvictionListener (kvprefix/cache.h): one call may carry several
 * nodes; every created node is reported once when it goes. `tokens` is
 * valid only during the call. `context` is what set_eviction_callback got.
 * It must not call back into the cache. */
typedef void (*kvprefix_eviction_callback)(void* context, const int32_t* tokens,
                                           size_t length);

/* The table a plugin hands to kvprefix. Required members must be non-NULL;
 * an optional member may be NULL, with the meaning given. The table and
 * `name` must stay valid while the library is loaded (kvprefix never
 * unloads a plugin). */
typedef struct kvprefix_plugin {
  /* KVPREFIX_PLUGIN_ABI_VERSION as the plugin was built: the version in
   * the name of the entry symbol that returned the table. */
  uint32_t abi_version;
  /* sizeof(kvprefix_plugin) as the plugin was built. */
  uint32_t size;
  /* One word naming the cache in reports, e.g. "mycache" (required). */
  const char* name;

  /* Required. Builds an empty cache with `options` (never NULL) into
   * *cache. Refuses options it does not implement, a model included, with
   * KVPREFIX_INVALID_ARGUMENT. */
  kvprefix_status (*create)(const kvprefix_cache_options* options,
                            kvprefix_cache** cache, kvprefix_error* error);
  /* Required. Frees a cache create built (never NULL). */
  void (*destroy)(kvprefix_cache* cache);
  /* Required. Inserts the `length` tokens at `tokens` (a bounded cache
   * also touches the path and evicts, SPEC §8 steps 2-4, or runs its
   * model's steps, §9) and sets *node to the deepest node of the
   * sequence's path still present. */
  kvprefix_status (*insert)(kvprefix_cache* cache, const int32_t* tokens,
                            size_t length, uint64_t* node,
                            kvprefix_error* error);
  /* Required. The longest cached prefix of the request, without changing
   * the cache (no touch). */
  kvprefix_status (*match)(const kvprefix_cache* cache, const int32_t* tokens,
                           size_t length, kvprefix_match* match,
                           kvprefix_error* error);
  /* Optional. The serving step, SPEC §8 steps 1-4 (or the model's, §9):
   * *match is what `match` answered before the request was inserted.
   * NULL: kvprefix calls match, then insert. */
  kvprefix_status (*access)(kvprefix_cache* cache, const int32_t* tokens,
                            size_t length, kvprefix_match* match,
                            kvprefix_error* error);
  /* Required. Nodes present, the root excluded. */
  uint64_t (*node_count)(const kvprefix_cache* cache);
  /* Optional. Nodes evicted so far. NULL: 0. */
  uint64_t (*evicted_count)(const kvprefix_cache* cache);
  /* Optional. Heap bytes the cache holds. NULL: 0 (reports say unknown). */
  uint64_t (*memory_bytes)(const kvprefix_cache* cache);
  /* Optional. Reports every later eviction to `callback` (NULL stops
   * reporting). NULL member: the cache reports none, and only verify's
   * length-only comparison can judge it when it evicts. */
  kvprefix_status (*set_eviction_callback)(kvprefix_cache* cache,
                                           kvprefix_eviction_callback callback,
                                           void* context,
                                           kvprefix_error* error);

  /* Requests in flight (SPEC §10.4), appended in kvprefix 0.4 without a new
   * ABI version (a table built before ends before them: they are absent).
   * Optional, all seven or none. Without them kvprefix replays the cache
   * one request at a time (access), which is SPEC §10 only with one
   * request running and no output stored (§10.7): a serving replay asking
   * for more is refused by name. `request` numbers the replay's requests
   * (0, 1, 2, ...); the calls for one request come in the order admit
   * (again while it waits), prefill_end, finish, interleaved with other
   * requests' as kvprefix's clock orders them; an empty request never
   * comes. All are called from one thread, like insert. */
  /* Attempts request `request` of `length` prompt tokens, which stores
   * `stored_length` tokens at its finish (SPEC §10.4's L). Sets *attempt:
   * on KVPREFIX_ATTEMPT_START the cache pins what the request matched
   * until its finish. KVPREFIX_INVALID_ARGUMENT refuses the whole replay
   * (a cache that stores no output tokens, say, given stored_length >
   * length): kvprefix ends it as a refusal naming the plugin and the
   * error's message, which verify, the fuzzer and Python count as a
   * skipped input, not a failure. */
  kvprefix_status (*admit)(kvprefix_cache* cache, uint64_t request,
                           const int32_t* tokens, size_t length,
                           uint64_t stored_length, kvprefix_attempt* attempt,
                           kvprefix_error* error);
  /* The started request's prefill end; `tokens` is its prompt again. */
  kvprefix_status (*prefill_end)(kvprefix_cache* cache, uint64_t request,
                                 const int32_t* tokens, size_t length,
                                 kvprefix_error* error);
  /* The started request's finish: `stored` is its prompt followed by the
   * output tokens the cache stores (stored_length of them in all). */
  kvprefix_status (*finish)(kvprefix_cache* cache, uint64_t request,
                            const int32_t* stored, size_t length,
                            kvprefix_error* error);
  /* The match an attempt would make now, changing nothing (SPEC §10.6). */
  kvprefix_status (*peek_match)(const kvprefix_cache* cache,
                                const int32_t* tokens, size_t length,
                                kvprefix_match* match, kvprefix_error* error);
  /* Pinned now: spec nodes with a pin, vllm blocks with a reference count,
   * sglang locked plus held tokens (SPEC §10.5's peak_pinned). */
  uint64_t (*pinned)(const kvprefix_cache* cache);
  /* Cached now: spec nodes, vllm blocks holding a chain, sglang tree tokens
   * / page size. */
  uint64_t (*cached_pages)(const kvprefix_cache* cache);
  /* Evicted so far: spec nodes, vllm blocks taken from a chain, sglang
   * evicted tokens / page size. */
  uint64_t (*evicted_pages)(const kvprefix_cache* cache);
} kvprefix_plugin;

/* The type of the exported entry point: returns the plugin's table (never
 * NULL), the same on every call. */
typedef const kvprefix_plugin* (*kvprefix_plugin_entry)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KVPREFIX_PLUGIN_KVPREFIX_PLUGIN_H_ */
