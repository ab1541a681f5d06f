/* A user's router in C, built as a kvprefix router plugin against the
 * installed package (plugin/kvprefix_router_plugin.h): SPEC §11.5's
 * least-loaded policy, the first worker with the fewest requests in flight
 * (running + queued).
 *
 * Built with LEASTLOADED_IGNORE_QUEUED=1 it carries one subtle bug: it
 * counts running requests only, so a worker whose requests all wait in its
 * queue looks idle. `kvprefix verify --router plugin:./libleastloaded_wrong.so
 * --against least-loaded` finds the first decision where that matters and
 * shrinks the document around it (see README.md). */
#include <stdio.h>
#include <stdlib.h>

#include "plugin/kvprefix_router_plugin.h"

#ifndef LEASTLOADED_IGNORE_QUEUED
#define LEASTLOADED_IGNORE_QUEUED 0
#endif

/* The router has no state; create still refuses what it does not take. */
struct kvprefix_router {
  uint64_t workers;
};

static kvprefix_status leastloaded_create(const kvprefix_router_setup* setup,
                                          kvprefix_router** router,
                                          kvprefix_error* error) {
  if (setup->parameter_count > 0) {
    snprintf(error->message, sizeof(error->message),
             "least-loaded takes no parameter, got %s",
             setup->parameters[0].name);
    return KVPREFIX_INVALID_ARGUMENT;
  }
  *router = malloc(sizeof(kvprefix_router));
  if (*router == NULL) {
    snprintf(error->message, sizeof(error->message), "out of memory");
    return KVPREFIX_OUT_OF_MEMORY;
  }
  (*router)->workers = setup->workers;
  return KVPREFIX_OK;
}

static void leastloaded_destroy(kvprefix_router* router) { free(router); }

static uint64_t load_of(const kvprefix_worker_view* view) {
  return LEASTLOADED_IGNORE_QUEUED ? view->running
                                   : view->running + view->queued;
}

static kvprefix_status leastloaded_choose(
    kvprefix_router* router, const kvprefix_routed_request* request,
    const kvprefix_router_views* views, uint64_t* worker,
    kvprefix_error* error) {
  uint64_t best = 0;
  (void)request;
  (void)error;
  for (uint64_t w = 1; w < router->workers; ++w) {
    if (load_of(&views->view[w]) < load_of(&views->view[best])) best = w;
  }
  *worker = best;
  return KVPREFIX_OK;
}

static const kvprefix_router_plugin table = {KVPREFIX_ROUTER_PLUGIN_ABI_VERSION,
                                             sizeof(kvprefix_router_plugin),
                                             "leastloaded",
                                             leastloaded_create,
                                             leastloaded_destroy,
                                             leastloaded_choose};

KVPREFIX_PLUGIN_EXPORT const kvprefix_router_plugin* kvprefix_router_plugin_v1(
    void) {
  return &table;
}
