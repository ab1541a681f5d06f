#include "serve/worker.h"

#include <algorithm>

#include "serve/service_time.h"

namespace kvprefix {

Worker::Worker(ServingCache& cache, const ServeRequests& requests,
               std::vector<ServedRequest>& answers)
    : cache_(cache), requests_(requests), answers_(answers) {}

std::optional<std::uint64_t> Worker::NextEventTime() const {
  if (events_.empty()) return std::nullopt;
  return std::get<0>(events_.top());
}

bool Worker::ApplyDue(std::uint64_t now) {
  bool due = false;
  while (!events_.empty() && std::get<0>(events_.top()) == now) {
    const auto [time, kind, id] = events_.top();
    events_.pop();
    due = true;
    const TokenSpan prompt = requests_.prompt(id);
    if (kind == EventKind::kPrefillEnd) {
      unprefilled_tokens_ -= prompt.size() - answers_[id].match.matched_length;
      if (!prompt.empty()) cache_.PrefillEnd(id, prompt);
      continue;
    }
    --running_;
    if (!prompt.empty()) cache_.Finish(id, requests_.Stored(id, stored_));
  }
  return due;
}

void Worker::Enqueue(RequestId id) {
  queue_.push_back(id);
  // §10.5: "sampled after each arrival joins it".
  totals_.peak_queued =
      std::max<std::uint64_t>(totals_.peak_queued, queue_.size());
}

bool Worker::TryStart(std::size_t position, std::uint64_t now) {
  const RequestId id = queue_[position];
  const TokenSpan prompt = requests_.prompt(id);
  // §10.4: "An empty request (n = 0) starts at its attempt with (0,
  // node 0) and changes no cache; it runs for its duration."
  const Attempt attempt =
      prompt.empty() ? Attempt{}
                     : cache_.Admit(id, prompt, requests_.stored_length(id));
  ServedRequest& answer = answers_[id];
  switch (attempt.outcome) {
    case AttemptOutcome::kWait:
      answer.waited_for_room = true;
      return false;
    case AttemptOutcome::kRefuse:
      queue_.erase(queue_.begin() + position);
      answer.match = Match{};
      answer.refused = true;
      answer.start_us = answer.prefill_end_us = answer.finish_us = now;
      return true;
    case AttemptOutcome::kStart:
      queue_.erase(queue_.begin() + position);
      Start(id, now, attempt.match);
      return true;
  }
  return true;
}

void Worker::Start(RequestId id, std::uint64_t now, const Match& match) {
  ServedRequest& answer = answers_[id];
  const std::uint64_t prompt_tokens = requests_.prompt(id).size();
  const ServiceTimes times =
      ServiceTime(requests_.options(), id, now, prompt_tokens,
                  match.matched_length, requests_.output_tokens(id));
  answer.match = match;
  answer.start_us = now;
  answer.prefill_end_us = times.prefill_end_us;
  answer.finish_us = times.finish_us;
  events_.emplace(times.prefill_end_us, EventKind::kPrefillEnd, id);
  events_.emplace(times.finish_us, EventKind::kFinish, id);
  ++running_;
  unprefilled_tokens_ += prompt_tokens - match.matched_length;
  // §10.5: peak_pinned "sampled after each start, not at refusals".
  totals_.peak_running = std::max(totals_.peak_running, running_);
  totals_.peak_pinned = std::max(totals_.peak_pinned, cache_.pinned());
}

WorkerCounts Worker::counts() const {
  return WorkerCounts{.running = running_,
                      .queued = queue_.size(),
                      .pinned = cache_.pinned(),
                      .unprefilled_tokens = unprefilled_tokens_,
                      .cached_pages = cache_.cached_pages()};
}

const ServeTotals& Worker::totals() const {
  totals_.evicted_pages = cache_.evicted_pages();
  return totals_;
}

}  // namespace kvprefix
