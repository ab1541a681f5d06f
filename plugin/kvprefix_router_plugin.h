/* The router plugin interface: a routing policy written outside kvprefix,
 * in any language that can export C functions, built as a shared library
 * that kvprefix loads by path (`--router plugin:PATH`, dlopen) and uses
 * wherever a router of SPEC §11.5 goes: `replay --workers N --router
 * plugin:PATH` replays a trace or a document through it, and `verify
 * --router plugin:PATH --against POLICY` checks it decision for decision
 * against one of §11.5's policies.
 *
 * This is a C header with a versioned ABI, as the engine plugin's
 * (plugin/kvprefix_plugin.h, whose status codes and error struct it
 * shares): fixed-width integers, pointers and plain structs only, no C++
 * exception crossing it (router/router_plugin_export.h exports a C++
 * kvprefix::Router class and catches everything), and the version in the
 * name of the one symbol a plugin exports.
 *
 * The semantics are SPEC §11's: at each request's arrival (§11.4) kvprefix
 * calls choose with the request (its index k in the document, its tokens,
 * its arrival) and the N workers' views (§11.2: the counts of each worker
 * now, and peek_match, the match an attempt would make on a worker now,
 * changing nothing); choose answers a worker 0 ... N - 1 and may change
 * only its own state. Requests come in arrival order, one at a time, from
 * one thread; a router is never called again after its destroy. Different
 * routers of one plugin may be used from different threads at once.
 *
 * Errors cannot end a run silently: a status other than KVPREFIX_OK, a
 * worker index not below N, a peek_match of a worker not below N, or a
 * NULL router from create stops the replay (or the check) with an error
 * naming the plugin ('name' and path), the call and the request, e.g.
 * "router plugin 'lleast' (./libleast.so): choose returned worker 4 for
 * request 7 of 4 workers" (exit status 1).
 *
 * A router in C:
 *
 *   #include "plugin/kvprefix_router_plugin.h"
 *   static kvprefix_status my_choose(kvprefix_router* router,
 *                                    const kvprefix_routed_request* request,
 *                                    const kvprefix_router_views* views,
 *                                    uint64_t* worker, kvprefix_error* error)
 *   { *worker = request->index % views->workers; return KVPREFIX_OK; }
 *   static const kvprefix_router_plugin table = {
 *     KVPREFIX_ROUTER_PLUGIN_ABI_VERSION, sizeof(kvprefix_router_plugin),
 *     "myrouter", my_create, my_destroy, my_choose};
 *   KVPREFIX_PLUGIN_EXPORT const kvprefix_router_plugin*
 *   kvprefix_router_plugin_v1(void) { return &table; }
 *
 * examples/router_plugin/ builds one against the installed package. */
#ifndef KVPREFIX_PLUGIN_KVPREFIX_ROUTER_PLUGIN_H_
#define KVPREFIX_PLUGIN_KVPREFIX_ROUTER_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "plugin/kvprefix_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's layout. A change a plugin built for an
 * older version could misread gets a new version and a new entry symbol;
 * adding a member at the end of kvprefix_router_plugin does not (kvprefix
 * reads `size` and treats members past it as absent). */
#define KVPREFIX_ROUTER_PLUGIN_ABI_VERSION 1

/* The symbol every router plugin exports, of type
 * kvprefix_router_plugin_entry; its table's abi_version must be the
 * version in its name. A library may export both this and the engine
 * plugin's symbol. */
#define KVPREFIX_ROUTER_PLUGIN_ENTRY_SYMBOL "kvprefix_router_plugin_v1"

/* One parameter given on the command line (`--load-factor 1.5`) or in a
 * document: SPEC §11.5's member name ("load_factor") and its value as
 * §11.1 writes it (an integer's digits, a decimal's exact digits "1.5", or
 * a name "first"). Both NUL-terminated, valid during create only. */
typedef struct kvprefix_router_parameter {
  const char* name;
  const char* value;
} kvprefix_router_parameter;

/* What a router knows of the replay it routes for, fixed at its start. */
typedef struct kvprefix_router_setup {
  /* N, the workers (1 to 2^31 - 1). */
  uint64_t workers;
  /* P, tokens per page of the workers' caches (SPEC §9). */
  uint64_t page_size;
  /* The seed of the router's stream of draws (`--seed`, a document's
   * router "seed"; SPEC §11.3). */
  uint64_t seed;
  /* 1 if pinned counts tokens (model sglang; §11.2's pinned_pages is then
   * pinned / P), 0 if pages or nodes. */
  int32_t pinned_in_tokens;
  /* 1 if a token is a 512-token block (Mooncake block mode, §11.1), 0 if
   * a token: the built-in policies' defaults differ. */
  int32_t block_tokens;
  /* The parameters given, in name order (none: NULL and 0); a plugin
   * refuses one it does not take with KVPREFIX_INVALID_ARGUMENT. */
  const kvprefix_router_parameter* parameters;
  size_t parameter_count;
} kvprefix_router_setup;

/* SPEC §11.2's counts of one worker at the routing instant (§10.6). */
typedef struct kvprefix_worker_view {
  uint64_t running;            /* started, not finished */
  uint64_t queued;             /* routed to it, not started */
  uint64_t pinned;             /* §10.6's pinned (tokens for sglang) */
  uint64_t unprefilled_tokens; /* Σ (n − m) of requests not prefilled */
  uint64_t cached_pages;       /* pages (nodes, blocks) cached now */
} kvprefix_worker_view;

/* The workers as the router sees them at one routing instant; valid during
 * that choose only. */
typedef struct kvprefix_router_views {
  /* N, as at create. */
  uint64_t workers;
  /* workers entries: view[w] is worker w's counts. */
  const kvprefix_worker_view* view;
  /* §10.6's peek_match_w(tokens): the matched length (tokens) an attempt
   * of `tokens` would make on worker `worker` now, changing nothing.
   * O(length). A worker not below `workers` answers 0 and fails the choose
   * (see "Errors"). Pass `views` itself as the first argument. */
  uint64_t (*peek_match)(const struct kvprefix_router_views* views,
                         uint64_t worker, const int32_t* tokens, size_t length);
  /* kvprefix's own; the plugin leaves it alone. */
  void* context;
} kvprefix_router_views;

/* One request at its routing instant. `tokens` is valid during the choose
 * only. */
typedef struct kvprefix_routed_request {
  uint64_t index; /* k: its place in the document (arrival order), from 0 */
  const int32_t* tokens; /* its prompt x (namespaces folded, SPEC §8.1) */
  size_t length;         /* n */
  uint64_t arrival_us;
} kvprefix_routed_request;

/* A router, owned by the plugin; kvprefix only passes the pointer back. */
typedef struct kvprefix_router kvprefix_router;

/* The table a router plugin hands to kvprefix. Every member is required
 * (non-NULL). The table and `name` must stay valid while the library is
 * loaded (kvprefix never unloads a plugin). */
typedef struct kvprefix_router_plugin {
  /* KVPREFIX_ROUTER_PLUGIN_ABI_VERSION as the plugin was built. */
  uint32_t abi_version;
  /* sizeof(kvprefix_router_plugin) as the plugin was built. */
  uint32_t size;
  /* One word naming the router in reports, e.g. "myrouter". */
  const char* name;
  /* Builds a router for `setup` (never NULL) into *router. Refuses a
   * parameter or a setup it does not implement with
   * KVPREFIX_INVALID_ARGUMENT and a message (a usage error, exit 2). */
  kvprefix_status (*create)(const kvprefix_router_setup* setup,
                            kvprefix_router** router, kvprefix_error* error);
  /* Frees a router create built (never NULL). */
  void (*destroy)(kvprefix_router* router);
  /* Sets *worker to the worker (below views->workers) for `request`. */
  kvprefix_status (*choose)(kvprefix_router* router,
                            const kvprefix_routed_request* request,
                            const kvprefix_router_views* views,
                            uint64_t* worker, kvprefix_error* error);
} kvprefix_router_plugin;

/* The type of the exported entry point: returns the plugin's table (never
 * NULL), the same on every call. */
typedef const kvprefix_router_plugin* (*kvprefix_router_plugin_entry)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KVPREFIX_PLUGIN_KVPREFIX_ROUTER_PLUGIN_H_ */
