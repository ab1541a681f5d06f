/* Router plugins that do what can never be right, one per FAULT, for
 * router_plugin_test: each must stop a replay with an error naming the
 * plugin (router/plugin_router.h). FAULT 1: choose returns worker N;
 * 2: choose fails with KVPREFIX_INTERNAL_ERROR; 3: peek_match of worker N;
 * 4: create refuses every setup (KVPREFIX_INVALID_ARGUMENT); 5: choose
 * crashes (SIGSEGV) at request 1; 6: create calls exit(0); 7: a correct
 * router (worker 0) whose name holds a comma and a quote. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugin/kvprefix_router_plugin.h"

static int router_state;

static kvprefix_status faulty_create(const kvprefix_router_setup* setup,
                                     kvprefix_router** router,
                                     kvprefix_error* error) {
  (void)setup;
  if (FAULT == 4) {
    snprintf(error->message, sizeof(error->message), "no setup suits me");
    return KVPREFIX_INVALID_ARGUMENT;
  }
  if (FAULT == 6) exit(0);
  *router = (kvprefix_router*)&router_state;
  return KVPREFIX_OK;
}

static void faulty_destroy(kvprefix_router* router) { (void)router; }

static kvprefix_status faulty_choose(kvprefix_router* router,
                                     const kvprefix_routed_request* request,
                                     const kvprefix_router_views* views,
                                     uint64_t* worker, kvprefix_error* error) {
  (void)router;
  *worker = 0;
  if (FAULT == 1 && request->index == 2) *worker = views->workers;
  if (FAULT == 2 && request->index == 1) {
    snprintf(error->message, sizeof(error->message), "my index is broken");
    return KVPREFIX_INTERNAL_ERROR;
  }
  if (FAULT == 5 && request->index == 1) raise(SIGSEGV);
  if (FAULT == 3) {
    views->peek_match(views, views->workers, request->tokens, request->length);
  }
  return KVPREFIX_OK;
}

static const kvprefix_router_plugin table = {
    KVPREFIX_ROUTER_PLUGIN_ABI_VERSION,
    sizeof(kvprefix_router_plugin),
    FAULT == 7 ? "odd,\"name" : "faulty",
    faulty_create,
    faulty_destroy,
    faulty_choose};

KVPREFIX_PLUGIN_EXPORT const kvprefix_router_plugin* kvprefix_router_plugin_v1(
    void) {
  return &table;
}
