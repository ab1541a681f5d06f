/* mycache: a user's prefix cache in plain C11, built as a kvprefix engine
 * plugin (plugin/kvprefix_plugin.h) so that an installed kvprefix checks it
 * against its reference: `kvprefix verify --engines plugin:./libmycache.so`.
 *
 * A trie over pages of page_size tokens (SPEC §1, §8; page size 1 is the
 * token trie). Each node keeps its children in an array sorted by page
 * content (binary search), and a bounded cache keeps its leaves in a binary
 * min-heap ordered by the eviction policy, so one eviction costs
 * O(log leaves) and one insert or match O(pages * log children * page_size).
 *
 * Built with -DMYCACHE_SKIP_TOUCH_ON_FULL_HIT it is the subtly wrong
 * variant README.md shows verify catching: an LRU cache that does not
 * refresh a request it holds in full ("nothing changed, skip the update"). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/kvprefix_plugin.h"

/* 1 in the wrong variant: see above. */
#ifndef MYCACHE_SKIP_TOUCH_ON_FULL_HIT
#define MYCACHE_SKIP_TOUCH_ON_FULL_HIT 0
#endif

/* heap_index of a node that is not in the heap of leaves. */
#define NOT_IN_HEAP SIZE_MAX

typedef struct Node Node;
struct Node {
  uint64_t id;    /* SPEC §1: the next unused ID when created; 0: the root */
  uint64_t stamp; /* the last request whose path held it (lru) */
  Node* parent;   /* NULL for the root */
  Node** children;
  size_t child_count;
  size_t child_capacity;
  size_t heap_index; /* its place in the cache's heap of leaves */
  int32_t page[];    /* its edge label: page_size tokens (none for the root) */
};

struct kvprefix_cache {
  Node* root;
  size_t page_size;
  uint64_t capacity; /* nodes besides the root; UINT64_MAX: unbounded */
  bool lru;          /* else fifo */
  uint64_t next_id;
  uint64_t requests; /* inserts so far: the stamp of the current one */
  uint64_t node_count;
  uint64_t evicted_count;
  uint64_t memory_bytes;
  /* The leaves (nodes without children, the root excepted), a min-heap by
   * EvictsFirst: leaves[0] is the next to go. */
  Node** leaves;
  size_t leaf_count;
  size_t leaf_capacity;
  kvprefix_eviction_callback on_eviction;
  void* on_eviction_context;
};

static kvprefix_status Fail(kvprefix_error* error, kvprefix_status status,
                            const char* message) {
  snprintf(error->message, sizeof(error->message), "%s", message);
  return status;
}

/* Grows *array (of pointers) to hold at least `needed`, doubling. */
static bool Reserve(kvprefix_cache* cache, Node*** array, size_t* capacity,
                    size_t needed) {
  if (needed <= *capacity) return true;
  size_t grown = *capacity == 0 ? 2 : 2 * *capacity;
  Node** bigger = realloc(*array, grown * sizeof(Node*));
  if (bigger == NULL) return false;
  cache->memory_bytes += (grown - *capacity) * sizeof(Node*);
  *array = bigger;
  *capacity = grown;
  return true;
}

/* ---- The heap of leaves ------------------------------------------------ */

/* SPEC §8 step 4: lru evicts the leaf with the smallest stamp (unique among
 * leaves), fifo the one with the smallest ID (the oldest). */
static bool EvictsFirst(const kvprefix_cache* cache, const Node* a,
                        const Node* b) {
  return cache->lru ? a->stamp < b->stamp : a->id < b->id;
}

static void HeapSet(kvprefix_cache* cache, size_t index, Node* node) {
  cache->leaves[index] = node;
  node->heap_index = index;
}

/* Restores the heap order around `index` after its key changed. */
static void HeapFix(kvprefix_cache* cache, size_t index) {
  Node* node = cache->leaves[index];
  while (index > 0 &&
         EvictsFirst(cache, node, cache->leaves[(index - 1) / 2])) {
    HeapSet(cache, index, cache->leaves[(index - 1) / 2]);
    index = (index - 1) / 2;
  }
  for (;;) {
    size_t child = 2 * index + 1;
    if (child >= cache->leaf_count) break;
    if (child + 1 < cache->leaf_count &&
        EvictsFirst(cache, cache->leaves[child + 1], cache->leaves[child])) {
      ++child;
    }
    if (!EvictsFirst(cache, cache->leaves[child], node)) break;
    HeapSet(cache, index, cache->leaves[child]);
    index = child;
  }
  HeapSet(cache, index, node);
}

static bool HeapPush(kvprefix_cache* cache, Node* node) {
  if (!Reserve(cache, &cache->leaves, &cache->leaf_capacity,
               cache->leaf_count + 1)) {
    return false;
  }
  HeapSet(cache, cache->leaf_count++, node);
  HeapFix(cache, node->heap_index);
  return true;
}

static void HeapRemove(kvprefix_cache* cache, Node* node) {
  const size_t index = node->heap_index;
  node->heap_index = NOT_IN_HEAP;
  Node* last = cache->leaves[--cache->leaf_count];
  if (last == node) return;
  HeapSet(cache, index, last);
  HeapFix(cache, index);
}

/* ---- Nodes --------------------------------------------------------------- */

static int ComparePages(const int32_t* a, const int32_t* b, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/* The child of `node` labelled `page`, or NULL; *slot is where it is or
 * would be inserted in the sorted children. */
static Node* FindChild(const kvprefix_cache* cache, const Node* node,
                       const int32_t* page, size_t* slot) {
  size_t low = 0;
  size_t high = node->child_count;
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    const int order =
        ComparePages(node->children[middle]->page, page, cache->page_size);
    if (order == 0) {
      *slot = middle;
      return node->children[middle];
    }
    if (order < 0) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  *slot = low;
  return NULL;
}

static Node* NewNode(kvprefix_cache* cache, const int32_t* page) {
  const size_t bytes = sizeof(Node) + cache->page_size * sizeof(int32_t);
  Node* node = calloc(1, bytes);
  if (node == NULL) return NULL;
  cache->memory_bytes += bytes;
  node->heap_index = NOT_IN_HEAP;
  if (page != NULL)
    memcpy(node->page, page, cache->page_size * sizeof(int32_t));
  return node;
}

/* Adds a child labelled `page` to `parent` at `slot` (from FindChild). */
static Node* AddChild(kvprefix_cache* cache, Node* parent, size_t slot,
                      const int32_t* page) {
  if (!Reserve(cache, &parent->children, &parent->child_capacity,
               parent->child_count + 1) ||
      !Reserve(cache, &cache->leaves, &cache->leaf_capacity,
               cache->leaf_count + 1)) {
    return NULL;
  }
  Node* child = NewNode(cache, page);
  if (child == NULL) return NULL;
  child->id = cache->next_id++; /* 2^64 nodes cannot be allocated first */
  child->stamp = cache->requests;
  child->parent = parent;
  memmove(&parent->children[slot + 1], &parent->children[slot],
          (parent->child_count - slot) * sizeof(Node*));
  parent->children[slot] = child;
  ++parent->child_count;
  ++cache->node_count;
  if (parent->heap_index != NOT_IN_HEAP) HeapRemove(cache, parent);
  HeapPush(cache, child); /* cannot fail: reserved above */
  return child;
}

static void FreeNode(kvprefix_cache* cache, Node* node) {
  cache->memory_bytes -= sizeof(Node) + cache->page_size * sizeof(int32_t) +
                         node->child_capacity * sizeof(Node*);
  free(node->children);
  free(node);
}

/* SPEC §8 step 4: evicts leaves while more than `capacity` nodes remain. */
static void Evict(kvprefix_cache* cache) {
  while (cache->node_count > cache->capacity) {
    Node* leaf = cache->leaves[0];
    Node* parent = leaf->parent;
    size_t slot;
    FindChild(cache, parent, leaf->page, &slot);
    memmove(&parent->children[slot], &parent->children[slot + 1],
            (parent->child_count - slot - 1) * sizeof(Node*));
    --parent->child_count;
    HeapRemove(cache, leaf);
    /* The leaves array holds every node at most once: no growth needed. */
    if (parent != cache->root && parent->child_count == 0) {
      HeapPush(cache, parent);
    }
    if (cache->on_eviction != NULL) {
      cache->on_eviction(cache->on_eviction_context, leaf->page,
                         cache->page_size);
    }
    FreeNode(cache, leaf);
    --cache->node_count;
    ++cache->evicted_count;
  }
}

/* The deepest node of `tokens`' path present, and its length in tokens. */
static const Node* Walk(const kvprefix_cache* cache, const int32_t* tokens,
                        size_t length, size_t* matched) {
  const Node* node = cache->root;
  size_t at = 0;
  for (; at + cache->page_size <= length; at += cache->page_size) {
    size_t slot;
    const Node* child = FindChild(cache, node, tokens + at, &slot);
    if (child == NULL) break;
    node = child;
  }
  *matched = at;
  return node;
}

/* ---- The plugin's functions (plugin/kvprefix_plugin.h) ------------------ */

static kvprefix_status Create(const kvprefix_cache_options* options,
                              kvprefix_cache** result, kvprefix_error* error) {
  /* It implements SPEC §8 only: a vllm or sglang cache, or a match that
   * stops short of the request, answered as §8's trie would be wrong. */
  if (strcmp(options->model, "spec") != 0 ||
      strcmp(options->match_limit, "all") != 0) {
    return Fail(error, KVPREFIX_INVALID_ARGUMENT,
                "mycache implements model spec with match limit all only");
  }
  /* A policy it does not implement (lfu, or any added later: new policies
   * are new names, not a new ABI) is refused with the ABI's code for
   * unsupported options, never run as another policy: verify and the
   * fuzzer then skip those inputs and the benchmarks those rows, saying so
   * (plugin/kvprefix_plugin.h). */
  const bool lru = strcmp(options->policy, "lru") == 0;
#if MYCACHE_LRU_PAGE_1_ONLY
  /* libmycache_lru1.so: a cache that implements less, lru and page size 1
   * only, refuses the rest by name: verify, the fuzzer and Python skip
   * such inputs and count them, and `verify --policies lru --page-sizes 1`
   * generates none. */
  if (!lru || options->page_size != 1) {
    return Fail(error, KVPREFIX_INVALID_ARGUMENT,
                "mycache_lru1 implements the policy lru and page size 1 only");
  }
#endif
  if (!lru && strcmp(options->policy, "fifo") != 0) {
    return Fail(error, KVPREFIX_INVALID_ARGUMENT,
                "mycache implements the policies lru and fifo only");
  }
  kvprefix_cache* cache = calloc(1, sizeof(kvprefix_cache));
  if (cache == NULL) return Fail(error, KVPREFIX_OUT_OF_MEMORY, "no memory");
  cache->page_size = (size_t)options->page_size;
  cache->capacity = options->capacity;
  cache->lru = lru;
  cache->next_id = 1;
  cache->memory_bytes = sizeof(kvprefix_cache);
  cache->root = NewNode(cache, NULL);
  if (cache->root == NULL) {
    free(cache);
    return Fail(error, KVPREFIX_OUT_OF_MEMORY, "no memory");
  }
  *result = cache;
  return KVPREFIX_OK;
}

static void Destroy(kvprefix_cache* cache) {
  /* Frees the trie bottom-up without recursion: a path may be long. */
  Node* node = cache->root;
  while (node != NULL) {
    if (node->child_count > 0) {
      node = node->children[--node->child_count];
      continue;
    }
    Node* parent = node->parent;
    FreeNode(cache, node);
    node = parent;
  }
  free(cache->leaves);
  free(cache);
}

/* SPEC §8 steps 2-4: insert, touch, evict. */
static kvprefix_status Insert(kvprefix_cache* cache, const int32_t* tokens,
                              size_t length, uint64_t* result,
                              kvprefix_error* error) {
  const uint64_t stamp = ++cache->requests;
  Node* node = cache->root;
  bool created = false;
  for (size_t at = 0; at + cache->page_size <= length; at += cache->page_size) {
    size_t slot;
    Node* child = FindChild(cache, node, tokens + at, &slot);
    if (child == NULL) {
      child = AddChild(cache, node, slot, tokens + at);
      if (child == NULL) {
        Evict(cache); /* what was inserted stays within the capacity */
        return Fail(error, KVPREFIX_OUT_OF_MEMORY, "no memory");
      }
      created = true;
    }
    node = child;
  }
  if (created || !MYCACHE_SKIP_TOUCH_ON_FULL_HIT) {
    /* Touch: every node of the path gets this request's stamp. Only the
     * deepest can be a leaf, so the heap changes at most there. */
    for (Node* on_path = node; on_path != cache->root;
         on_path = on_path->parent) {
      on_path->stamp = stamp;
    }
    if (node->heap_index != NOT_IN_HEAP) HeapFix(cache, node->heap_index);
  }
  Evict(cache);
  /* A request longer than the capacity keeps only its first nodes. */
  size_t matched;
  *result = Walk(cache, tokens, length, &matched)->id;
  return KVPREFIX_OK;
}

/* SPEC §1: the longest cached prefix, in whole pages; changes nothing. */
static kvprefix_status Match(const kvprefix_cache* cache, const int32_t* tokens,
                             size_t length, kvprefix_match* match,
                             kvprefix_error* error) {
  (void)error;
  size_t matched;
  match->cache_node = Walk(cache, tokens, length, &matched)->id;
  match->matched_length = matched;
  return KVPREFIX_OK;
}

static uint64_t NodeCount(const kvprefix_cache* cache) {
  return cache->node_count;
}

static uint64_t EvictedCount(const kvprefix_cache* cache) {
  return cache->evicted_count;
}

static uint64_t MemoryBytes(const kvprefix_cache* cache) {
  return cache->memory_bytes;
}

static kvprefix_status SetEvictionCallback(kvprefix_cache* cache,
                                           kvprefix_eviction_callback callback,
                                           void* context,
                                           kvprefix_error* error) {
  (void)error;
  cache->on_eviction = callback;
  cache->on_eviction_context = context;
  return KVPREFIX_OK;
}

static const kvprefix_plugin kTable = {
    .abi_version = KVPREFIX_PLUGIN_ABI_VERSION,
    .size = sizeof(kvprefix_plugin),
    .name = "mycache",
    .create = Create,
    .destroy = Destroy,
    .insert = Insert,
    .match = Match,
    .access = NULL, /* kvprefix calls match, then insert */
    .node_count = NodeCount,
    .evicted_count = EvictedCount,
    .memory_bytes = MemoryBytes,
    .set_eviction_callback = SetEvictionCallback,
};

KVPREFIX_PLUGIN_EXPORT const kvprefix_plugin* kvprefix_plugin_v2(void) {
  return &kTable;
}
