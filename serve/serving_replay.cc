#include "serve/serving_replay.h"

#include <algorithm>
#include <numeric>
#include <optional>

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
    bool arrivals = true;
    do {
      // Step 2: each worker's prefill ends and finishes at `now`, then the
      // arrivals at `now` (on the first pass only: none is left after it).
      for (std::size_t w = 0; w < workers.size(); ++w) {
        due[w] = workers[w].ApplyDue(*now);
      }
      while (arrivals && next_arrival < requests.size() &&
             requests.arrival_us(next_arrival) == *now) {
        const std::size_t w =
            workers.size() == 1 ? 0 : choose(next_arrival, workers);
        if (observer != nullptr) {
          const TokenSpan prompt = requests.prompt(next_arrival);
          for (std::size_t v = 0; v < workers.size(); ++v) {
            matched[v] = prompt.empty()
                             ? 0
                             : workers[v].PeekMatch(prompt).matched_length;
          }
          observer->Arrived(next_arrival, w, matched);
        }
        workers[w].Enqueue(next_arrival);
        if (workers_of != nullptr) (*workers_of)[next_arrival] = w;
        due[w] = 1;
        ++next_arrival;
      }
      arrivals = false;
      // Step 3: the start loop of every worker with due work (§11.4: a
      // start loop with nothing changed would attempt a waiting head
      // again, and an sglang attempt has effects).
      for (std::size_t w = 0; w < workers.size(); ++w) {
        if (due[w]) workers[w].StartLoop(*now);
      }
      // Step 4: events that became due at `now` (zero durations): again.
    } while (std::ranges::any_of(workers, [&](const Worker& worker) {
      return worker.NextEventTime() == now;
    }));
  }
  per_worker.clear();
  for (const Worker& worker : workers) per_worker.push_back(worker.totals());
  return answers;
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
  const ServeRequests requests(input);
  ServingCache* const caches[] = {&cache};
  std::vector<ServeTotals> per_worker;
  ServeAnswer answer;
  answer.requests =
      RunServing(requests, caches, {}, per_worker, nullptr, observer);
  std::vector<RequestId> ids(requests.size());
  std::iota(ids.begin(), ids.end(), RequestId{0});
  answer.totals = Summarize(requests, answer.requests, ids, per_worker[0]);
  return answer;
}

}  // namespace kvprefix
