// The clock of SPEC §10.3 (and §11.4 over N workers), written once over the
// scheduling rules (serve/serving_rules.h): the one place time advances.
// RunServing and ServeReplay (serve/serving_replay.h) are this loop under
// Section10Rules; tests instantiate it under rules that break one rule
// (testing/serving_mutants.h). Costs and errors as RunServing's.
#ifndef KVPREFIX_SERVE_SERVING_LOOP_H_
#define KVPREFIX_SERVE_SERVING_LOOP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "kvprefix/request.h"
#include "serve/serve_requests.h"
#include "serve/serving_replay.h"
#include "serve/serving_rules.h"
#include "serve/worker.h"

namespace kvprefix {

// RunServing under `Rules` (Section10Rules: RunServing itself).
template <typename Rules>
std::vector<ServedRequest> RunServingUnder(
    const ServeRequests& requests, std::span<ServingCache* const> caches,
    const ChooseWorker& choose, std::vector<ServeTotals>& per_worker,
    std::vector<std::size_t>* workers_of, ReplayObserver* observer) {
  std::vector<ServedRequest> answers(requests.size());
  for (RequestId id = 0; id < requests.size(); ++id) {
    answers[id].arrival_us = requests.arrival_us(id);
  }
  std::vector<Worker> workers;
  workers.reserve(caches.size());
  for (ServingCache* cache : caches) {
    workers.emplace_back(*cache, requests, answers);
  }
  if (workers_of != nullptr) workers_of->assign(requests.size(), 0);
  std::vector<char> due(workers.size());
  std::vector<std::uint64_t> matched(observer != nullptr ? workers.size() : 0);
  RequestId next_arrival = 0;
  // The arrivals at `now`, each to its worker's queue (marked due).
  const auto arrive = [&](std::uint64_t now) {
    while (next_arrival < requests.size() &&
           requests.arrival_us(next_arrival) == now) {
      const std::size_t w =
          workers.size() == 1 ? 0 : choose(next_arrival, workers);
      if (observer != nullptr) {
        const TokenSpan prompt = requests.prompt(next_arrival);
        for (std::size_t v = 0; v < workers.size(); ++v) {
          matched[v] =
              prompt.empty() ? 0 : workers[v].PeekMatch(prompt).matched_length;
        }
        observer->Arrived(next_arrival, w, matched);
      }
      workers[w].Enqueue(next_arrival);
      if (workers_of != nullptr) (*workers_of)[next_arrival] = w;
      due[w] = 1;
      ++next_arrival;
    }
  };
  // Step 3: the start loop of every worker with due work (§11.4: a start
  // loop with nothing changed would attempt a waiting head again, and an
  // sglang attempt has effects).
  const auto start = [&](std::uint64_t now) {
    for (std::size_t w = 0; w < workers.size(); ++w) {
      if (due[w]) workers[w].template StartLoop<Rules>(now);
    }
  };
  while (true) {
    // §10.3 step 1: "now = the smallest time among pending events and
    // arrivals not yet handled. Stop when there is none."
    std::optional<std::uint64_t> now;
    if (next_arrival < requests.size()) now = requests.arrival_us(next_arrival);
    for (const Worker& worker : workers) {
      if (const auto time = worker.NextEventTime()) {
        now = now ? std::min(*now, *time) : *time;
      }
    }
    if (!now) break;
    if (observer != nullptr) observer->Time(*now);
    if constexpr (!Rules::kEventsBeforeArrivals) {
      std::ranges::fill(due, 0);
      arrive(*now);
      start(*now);
    }
    do {
      // Step 2: each worker's prefill ends and finishes at `now`, then the
      // arrivals at `now` (none is left after the first pass).
      for (std::size_t w = 0; w < workers.size(); ++w) {
        due[w] = workers[w].ApplyDue(*now);
      }
      arrive(*now);
      start(*now);
      // Step 4: events that became due at `now` (zero durations): again.
    } while (std::ranges::any_of(workers, [&](const Worker& worker) {
      return worker.NextEventTime() == now;
    }));
  }
  per_worker.clear();
  for (const Worker& worker : workers) per_worker.push_back(worker.totals());
  return answers;
}

// ServeReplay under `Rules` (Section10Rules: ServeReplay itself).
template <typename Rules>
ServeAnswer ServeReplayUnder(const ServeInput& input, ServingCache& cache,
                             ReplayObserver* observer = nullptr) {
  const ServeRequests requests(input);
  ServingCache* const caches[] = {&cache};
  std::vector<ServeTotals> per_worker;
  ServeAnswer answer;
  answer.requests = RunServingUnder<Rules>(requests, caches, {}, per_worker,
                                           nullptr, observer);
  std::vector<RequestId> ids(requests.size());
  std::iota(ids.begin(), ids.end(), RequestId{0});
  answer.totals = Summarize(requests, answer.requests, ids, per_worker[0]);
  return answer;
}

}  // namespace kvprefix

#endif  // KVPREFIX_SERVE_SERVING_LOOP_H_
