#include "serve/routed_replay.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "serve/serve_requests.h"
#include "serve/serving_replay.h"

namespace kvprefix {
namespace {

// The workers as a router sees them (§11.2): their counts and peeks, now.
class ServingViews final : public WorkerViews {
 public:
  explicit ServingViews(std::span<const Worker> workers) : workers_(workers) {}
  std::size_t size() const override { return workers_.size(); }
  WorkerView view(std::size_t w) const override {
    const WorkerCounts counts = workers_[w].counts();
    return WorkerView{.running = counts.running,
                      .queued = counts.queued,
                      .pinned = counts.pinned,
                      .unprefilled_tokens = counts.unprefilled_tokens,
                      .cached_pages = counts.cached_pages};
  }
  std::uint64_t PeekMatch(std::size_t w, TokenSpan tokens) const override {
    return tokens.empty() ? 0 : workers_[w].PeekMatch(tokens).matched_length;
  }

 private:
  std::span<const Worker> workers_;
};

// §11.8's totals over all workers: the peaks the largest, the evicted
// pages summed, the rest from every request (Summarize).
ServeTotals AllTotals(const ServeRequests& requests,
                      std::span<const ServedRequest> answers,
                      std::span<const ServeTotals> per_worker) {
  ServeTotals base;
  for (const ServeTotals& worker : per_worker) {
    base.evicted_pages += worker.evicted_pages;
    base.peak_pinned = std::max(base.peak_pinned, worker.peak_pinned);
    base.peak_running = std::max(base.peak_running, worker.peak_running);
    base.peak_queued = std::max(base.peak_queued, worker.peak_queued);
  }
  std::vector<RequestId> ids(requests.size());
  for (RequestId id = 0; id < ids.size(); ++id) ids[id] = id;
  return Summarize(requests, answers, ids, base);
}

}  // namespace

RoutedAnswer RoutedReplay(const ServeInput& input, const RoutingSpec& routing,
                          const MakeWorkerCache& make_cache, TokenUnit unit,
                          ReplayObserver* observer) {
  return RoutedReplay(
      input, routing.workers, RouterName(routing.router),
      [&](const RouteSetup& setup) {
        return MakeRouter(routing.router, setup, unit);
      },
      make_cache, observer);
}

RoutedAnswer RoutedReplay(const ServeInput& input, std::uint64_t workers,
                          std::string_view router_name,
                          const MakeReplayRouter& make_router,
                          const MakeWorkerCache& make_cache,
                          ReplayObserver* observer) {
  if (workers == 0) throw std::invalid_argument("0 workers");
  const ServeRequests requests(input);
  std::vector<std::unique_ptr<ServingCache>> owned;
  std::vector<ServingCache*> caches;
  for (std::uint64_t w = 0; w < workers; ++w) {
    owned.push_back(make_cache());
    caches.push_back(owned.back().get());
  }
  const RouteSetup setup{
      .workers = caches.size(),
      .page_size = input.replay.options.page_size,
      .pinned_in_tokens = input.replay.options.model == CacheModel::kSglang};
  const std::unique_ptr<Router> router = make_router(setup);
  RoutedAnswer answer;
  answer.router = router_name;
  answer.requests = RunServing(
      requests, caches,
      [&](RequestId id, std::span<const Worker> workers) {
        const RoutedRequest request{.index = id,
                                    .tokens = requests.prompt(id),
                                    .arrival_us = requests.arrival_us(id)};
        return router->Choose(request, ServingViews(workers));
      },
      answer.per_worker, &answer.workers_of, observer);
  std::vector<std::vector<RequestId>> ids(caches.size());
  for (RequestId id = 0; id < requests.size(); ++id) {
    ids[answer.workers_of[id]].push_back(id);
  }
  answer.totals = AllTotals(requests, answer.requests, answer.per_worker);
  for (std::size_t w = 0; w < caches.size(); ++w) {
    answer.per_worker[w] =
        Summarize(requests, answer.requests, ids[w], answer.per_worker[w]);
  }
  return answer;
}

}  // namespace kvprefix
