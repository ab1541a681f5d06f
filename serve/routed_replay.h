// SPEC §11's replay over N workers: one serving cache per worker (each as
// §10 gives it), §11.4's clock (RunServing, serve/serving_replay.h) and a
// router (router/) choosing each request's worker at its arrival from the
// workers' §11.2 views; then §11.8's totals.
#ifndef KVPREFIX_SERVE_ROUTED_REPLAY_H_
#define KVPREFIX_SERVE_ROUTED_REPLAY_H_

#include <functional>
#include <memory>

#include "kvprefix/request.h"
#include "router/router_spec.h"

namespace kvprefix {

// Makes one worker's empty cache (each call a new one, all alike).
using MakeWorkerCache = std::function<std::unique_ptr<ServingCache>()>;

// SPEC §11.8's answer for `input` on routing.workers workers (each cache
// from `make_cache`), routed by routing.router with its defaults for
// `unit`; with model sglang the caches' pinned() counts tokens, and the
// router's §11.2 pinned_pages is pinned / P (RouteSetup). Throws what
// ServeRequests, the caches and MakeRouter throw, std::invalid_argument
// for 0 workers, std::overflow_error from an exact score (router/).
// `observer` (null: none): as RunServing (serve/serving_replay.h) tells it.
// O(requests · (N + the policy's cost)) plus the caches' costs; memory N
// caches. Not thread-safe for one `make_cache`; distinct calls are
// independent.
RoutedAnswer RoutedReplay(const ServeInput& input, const RoutingSpec& routing,
                          const MakeWorkerCache& make_cache, TokenUnit unit,
                          ReplayObserver* observer = nullptr);

// Makes the router of a replay for its setup (N, P, the pinned unit).
using MakeReplayRouter =
    std::function<std::unique_ptr<Router>(const RouteSetup& setup)>;

// The same with the router `make_router` makes, named `router_name` in the
// answer (it must outlive the answer), over `workers` workers (>= 1). For
// a router that is no RouterSpec's (a checker's pair of routers,
// checking/routing_check.h). Throws as above and what the router throws.
RoutedAnswer RoutedReplay(const ServeInput& input, std::uint64_t workers,
                          std::string_view router_name,
                          const MakeReplayRouter& make_router,
                          const MakeWorkerCache& make_cache,
                          ReplayObserver* observer = nullptr);

}  // namespace kvprefix

#endif  // KVPREFIX_SERVE_ROUTED_REPLAY_H_
