/* A plugin that is wrong in the one way its FAULT macro names, for the
 * loader's tests (plugin_test.cc): each fault must be reported as the
 * plugin's, naming the plugin and the call. It caches nothing: every
 * match is empty, which is right only for a cache that never inserts. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/kvprefix_plugin.h"

#define FAULT_NONE 0
#define FAULT_GARBAGE_LENGTH 1 /* matched_length = request length + 1 */
#define FAULT_UNKNOWN_STATUS 2 /* insert returns 42 */
#define FAULT_CRASH 3          /* match dereferences NULL */
#define FAULT_NO_NODE_COUNT 4  /* a required member is NULL */
#define FAULT_ABI_VERSION 5  /* kvprefix_plugin_v2 returns a version 1 table */
#define FAULT_PAGES_ONLY_1 6 /* refuses page sizes but 1 */
#define FAULT_ABI_1 7        /* no fault: built for ABI version 1 */
#define FAULT_EXIT_IN_MATCH 8 /* match calls exit(0) */
#define FAULT_EXIT_IN_ENTRY 9 /* the entry point calls exit(0) */
#define FAULT_UNTERMINATED 10 /* create refuses with 512 bytes and no NUL */
#define FAULT_UNDERSCORE_EXIT_IN_CREATE 11 /* create calls _exit(0) */
#define FAULT_HANG_IN_MATCH 12             /* match never returns */
#define FAULT_NEWLINE_NAME 13 /* no fault but a name "fau\nlty\x1b[31m" */

#ifndef FAULT
#define FAULT FAULT_NONE
#endif

struct kvprefix_cache {
  uint64_t inserts;
};

static kvprefix_status Create(const kvprefix_cache_options* options,
                              kvprefix_cache** cache, kvprefix_error* error) {
  if (FAULT == FAULT_UNDERSCORE_EXIT_IN_CREATE) _exit(0);
  if (FAULT == FAULT_UNTERMINATED) {
    memset(error->message, 'A', sizeof(error->message));
    return KVPREFIX_INVALID_ARGUMENT;
  }
  if (FAULT == FAULT_PAGES_ONLY_1 && options->page_size != 1) {
    strcpy(error->message, "only page size 1");
    return KVPREFIX_INVALID_ARGUMENT;
  }
  *cache = calloc(1, sizeof(kvprefix_cache));
  if (*cache == NULL) {
    strcpy(error->message, "out of memory");
    return KVPREFIX_OUT_OF_MEMORY;
  }
  return KVPREFIX_OK;
}

static void Destroy(kvprefix_cache* cache) { free(cache); }

static kvprefix_status Insert(kvprefix_cache* cache, const int32_t* tokens,
                              size_t length, uint64_t* node,
                              kvprefix_error* error) {
  (void)tokens;
  (void)length;
  (void)error;
  ++cache->inserts;
  *node = 0;
  return FAULT == FAULT_UNKNOWN_STATUS ? 42 : KVPREFIX_OK;
}

static kvprefix_status Match(const kvprefix_cache* cache, const int32_t* tokens,
                             size_t length, kvprefix_match* match,
                             kvprefix_error* error) {
  (void)cache;
  (void)tokens;
  (void)error;
  match->matched_length = FAULT == FAULT_GARBAGE_LENGTH ? length + 1 : 0;
  match->cache_node = 0;
  if (FAULT == FAULT_CRASH) {
    volatile int* nowhere = NULL;
    *nowhere = 1;
  }
  if (FAULT == FAULT_EXIT_IN_MATCH) exit(0);
  if (FAULT == FAULT_HANG_IN_MATCH) {
    for (volatile int forever = 1; forever;) {
    }
  }
  return KVPREFIX_OK;
}

static uint64_t NodeCount(const kvprefix_cache* cache) {
  (void)cache;
  return 0;
}

static const kvprefix_plugin kTable = {
    FAULT == FAULT_ABI_VERSION || FAULT == FAULT_ABI_1
        ? 1
        : KVPREFIX_PLUGIN_ABI_VERSION,
    sizeof(kvprefix_plugin),
    FAULT == FAULT_NEWLINE_NAME ? "fau\nlty\x1b[31m" : "faulty",
    Create,
    Destroy,
    Insert,
    Match,
    NULL,
    FAULT == FAULT_NO_NODE_COUNT ? NULL : NodeCount,
    NULL,
    NULL,
    NULL};

/* FAULT_ABI_1 exports version 1's entry symbol; the table is the same in
 * both versions, only the cache options differ. */
#if FAULT == FAULT_ABI_1
#define ENTRY kvprefix_plugin_v1
#else
#define ENTRY kvprefix_plugin_v2
#endif

KVPREFIX_PLUGIN_EXPORT const kvprefix_plugin* ENTRY(void) {
  if (FAULT == FAULT_EXIT_IN_ENTRY) exit(0);
  return &kTable;
}
