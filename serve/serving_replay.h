// Serving replay (SPEC §10): a document's requests arrive at their times,
// wait in a FIFO queue, run at most B at a time with their entries pinned,
// and end their prefill and finish at the times of §10.2's service model.
// The clock (§10.3, and over N workers §11.4) is serve/serving_loop.h's,
// under SPEC §10.3's rules (serve/serving_rules.h).
#ifndef KVPREFIX_SERVE_SERVING_REPLAY_H_
#define KVPREFIX_SERVE_SERVING_REPLAY_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kvprefix/request.h"
#include "serve/serve_requests.h"
#include "serve/worker.h"

namespace kvprefix {

// Chooses the worker of request `id` at its arrival from the workers as
// they are (§11.2: read-only). Returns an index into `workers`.
using ChooseWorker =
    std::function<std::size_t(RequestId id, std::span<const Worker> workers)>;

// The clock of §10.3 over one worker per cache of `caches` (each used by
// reference, all empty at the start), §11.4's with several: at each time,
// every worker's due prefill ends and finishes, then the arrivals in
// request order (`choose` picks each one's worker; ignored with one
// worker), then the start loop of every worker with due work, until
// nothing is pending. Returns every request's answer (its worker in
// `workers_of`, when given) and the totals of each worker in `per_worker`.
// An `observer` (null: none) hears each new time and each arrival with
// every worker's peek_match of it (O(N · n) more per arrival).
// Throws std::invalid_argument for what ServeRequests and Worker reject,
// and what the caches throw. O(requests log(requests)) plus the caches'
// costs.
std::vector<ServedRequest> RunServing(const ServeRequests& requests,
                                      std::span<ServingCache* const> caches,
                                      const ChooseWorker& choose,
                                      std::vector<ServeTotals>& per_worker,
                                      std::vector<std::size_t>* workers_of,
                                      ReplayObserver* observer = nullptr);

// SPEC §10.5's totals of the requests `ids` (their answers in `answers`),
// completing `worker`'s own (refused, waits, the peaks, evicted pages).
// O(ids log(ids)).
ServeTotals Summarize(const ServeRequests& requests,
                      std::span<const ServedRequest> answers,
                      std::span<const RequestId> ids, ServeTotals worker);

// One worker: SPEC §10's answer for `input` on `cache` (empty at the start),
// telling `observer` (null: none) as RunServing does.
ServeAnswer ServeReplay(const ServeInput& input, ServingCache& cache,
                        ReplayObserver* observer = nullptr);

}  // namespace kvprefix

#endif  // KVPREFIX_SERVE_SERVING_REPLAY_H_
