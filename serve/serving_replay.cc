#include "serve/serving_replay.h"

#include <algorithm>

#include "serve/serving_loop.h"

namespace kvprefix {
namespace {

// The ⌈q·R/100⌉-th smallest of `waits` (R of them, R >= 1): nearest rank.
std::uint64_t NearestRank(std::vector<std::uint64_t>& waits, std::uint64_t q) {
  const std::size_t rank =
      std::max<std::size_t>(1, (q * waits.size() + 99) / 100);
  std::nth_element(waits.begin(), waits.begin() + (rank - 1), waits.end());
  return waits[rank - 1];
}

}  // namespace

std::vector<ServedRequest> RunServing(const ServeRequests& requests,
                                      std::span<ServingCache* const> caches,
                                      const ChooseWorker& choose,
                                      std::vector<ServeTotals>& per_worker,
                                      std::vector<std::size_t>* workers_of,
                                      ReplayObserver* observer) {
  return RunServingUnder<Section10Rules>(requests, caches, choose, per_worker,
                                         workers_of, observer);
}

ServeTotals Summarize(const ServeRequests& requests,
                      std::span<const ServedRequest> answers,
                      std::span<const RequestId> ids, ServeTotals totals) {
  std::vector<std::uint64_t> waits;
  waits.reserve(ids.size());
  std::uint64_t first_arrival = 0;
  std::uint64_t last_finish = 0;
  for (const RequestId id : ids) {
    const ServedRequest& answer = answers[id];
    ++totals.requests;
    totals.request_tokens += requests.prompt(id).size();
    totals.matched_tokens += answer.match.matched_length;
    totals.refused += answer.refused ? 1 : 0;
    totals.waited_for_room += answer.waited_for_room ? 1 : 0;
    totals.total_wait_us += answer.wait_us();
    waits.push_back(answer.wait_us());
    first_arrival = totals.requests == 1
                        ? answer.arrival_us
                        : std::min(first_arrival, answer.arrival_us);
    last_finish = std::max(last_finish, answer.finish_us);
  }
  if (waits.empty()) return totals;
  totals.p50_wait_us = NearestRank(waits, 50);
  totals.p99_wait_us = NearestRank(waits, 99);
  totals.makespan_us = last_finish - first_arrival;
  return totals;
}

ServeAnswer ServeReplay(const ServeInput& input, ServingCache& cache,
                        ReplayObserver* observer) {
  return ServeReplayUnder<Section10Rules>(input, cache, observer);
}

}  // namespace kvprefix
