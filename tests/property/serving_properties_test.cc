// SPEC §10's serving replay, checked on random documents (RapidCheck):
//  * §10.7's theorem: with B = 1 and output "none", whatever the arrivals
//    and durations, every engine of the model (the reference's lifecycle,
//    and every other engine one request at a time) gives the same whole
//    answer, and its matches are the sequential replay's;
//  * the rules of §10.3-§10.5 on any document: a pinned entry is never
//    evicted (a running request's match stays matchable), spec never holds
//    more than C nodes after a finish, a request waits or is refused only
//    where its model can run short of room, the queue is never skipped
//    (attempts in request order), every request is answered with times in
//    order, at most B run, nothing is pinned at the end, and the same input
//    gives the same answer.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "kvprefix/replay.h"
#include "serve/serving_replay.h"

namespace kvprefix {
namespace {

rc::Gen<CacheOptions> GenCacheOptions() {
  return rc::gen::exec([] {
    CacheOptions options;
    options.model = *rc::gen::element(CacheModel::kSpec, CacheModel::kVllm,
                                      CacheModel::kSglang);
    options.page_size = *rc::gen::inRange<std::uint64_t>(1, 4);
    options.capacity = *rc::gen::weightedOneOf<std::uint64_t>(
        {{4, rc::gen::inRange<std::uint64_t>(0, 10)},
         {1, rc::gen::just(kUnbounded)}});
    switch (options.model) {
      case CacheModel::kSpec:
        options.policy = *rc::gen::element(
            EvictionPolicy::kLru, EvictionPolicy::kFifo, EvictionPolicy::kLfu);
        options.match_limit =
            *rc::gen::element(MatchLimit::kAll, MatchLimit::kAllButLast);
        break;
      case CacheModel::kVllm:
        options.match_limit = MatchLimit::kAllButLast;
        break;
      case CacheModel::kSglang:
        options.policy =
            *rc::gen::element(EvictionPolicy::kLru, EvictionPolicy::kFifo);
        options.match_limit =
            *rc::gen::element(MatchLimit::kAll, MatchLimit::kAllButLast);
        options.trigger = *rc::gen::element(EvictionTrigger::kAfterInsert,
                                            EvictionTrigger::kOnAllocate);
        break;
    }
    return options;
  });
}

// Small alphabets and short requests, so that prefixes are shared, caches
// fill and requests wait.
rc::Gen<ServeInput> GenServeInput() {
  return rc::gen::exec([] {
    ServeInput input;
    input.replay.options = *GenCacheOptions();
    const auto count = *rc::gen::inRange<std::size_t>(0, 14);
    std::uint64_t arrival = 0;
    for (std::size_t i = 0; i < count; ++i) {
      input.replay.requests.Append(*rc::gen::container<std::vector<Token>>(
          *rc::gen::inRange<std::size_t>(0, 8), rc::gen::inRange<Token>(1, 4)));
      arrival += *rc::gen::element<std::uint64_t>(0, 0, 1, 2, 5);
      input.arrivals_us.push_back(arrival);
      input.output_lengths.push_back(*rc::gen::inRange<std::uint64_t>(0, 5));
    }
    input.serve.max_running = *rc::gen::inRange<std::uint64_t>(1, 5);
    input.serve.prefill_us_per_token = *rc::gen::inRange<std::uint64_t>(0, 3);
    input.serve.decode_us_per_token = *rc::gen::inRange<std::uint64_t>(0, 3);
    input.serve.overhead_us = *rc::gen::inRange<std::uint64_t>(0, 2);
    input.serve.output =
        *rc::gen::element(OutputMode::kNone, OutputMode::kUnique);
    return input;
  });
}

// A ServingCache that checks the rules around every call of the one it
// wraps.
class CheckedCache final : public ServingCache {
 public:
  explicit CheckedCache(std::unique_ptr<ServingCache> cache)
      : cache_(std::move(cache)) {}

  std::string_view name() const override { return cache_->name(); }
  const CacheOptions& options() const override { return cache_->options(); }
  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override {
    // The queue is never skipped: attempts come in request order, the
    // same request again while it waits.
    RC_ASSERT(id >= last_attempt_);
    last_attempt_ = id;
    const Attempt attempt = cache_->Admit(id, prompt, stored_length);
    const CacheOptions& options = cache_->options();
    if (attempt.outcome != AttemptOutcome::kStart) {
      // Only vllm and sglang "on-allocate" ever run short of room, and
      // only with a capacity.
      RC_ASSERT(options.bounded());
      RC_ASSERT(options.model != CacheModel::kSpec);
      RC_ASSERT(!(options.model == CacheModel::kSglang &&
                  options.trigger == EvictionTrigger::kAfterInsert));
    }
    if (attempt.outcome == AttemptOutcome::kStart) {
      running_[id] = {std::vector<Token>(prompt.begin(), prompt.end()),
                      attempt.match.matched_length};
    }
    CheckPins();
    return attempt;
  }
  void PrefillEnd(RequestId id, TokenSpan prompt) override {
    cache_->PrefillEnd(id, prompt);
    CheckPins();
  }
  void Finish(RequestId id, TokenSpan stored) override {
    RC_ASSERT(running_.erase(id) == 1U);
    cache_->Finish(id, stored);
    CheckPins();
    const CacheOptions& options = cache_->options();
    if (options.model == CacheModel::kSpec) {
      RC_ASSERT(cache_->cached_pages() <= options.capacity);
    }
  }
  Match PeekMatch(TokenSpan request) const override {
    return cache_->PeekMatch(request);
  }
  std::uint64_t pinned() const override { return cache_->pinned(); }
  std::uint64_t cached_pages() const override { return cache_->cached_pages(); }
  std::uint64_t evicted_pages() const override {
    return cache_->evicted_pages();
  }
  bool running() const { return !running_.empty(); }

 private:
  // A pinned entry is never evicted: every running request still matches
  // at least what it matched at its start.
  void CheckPins() const {
    for (const auto& [id, entry] : running_) {
      RC_ASSERT(cache_->PeekMatch(entry.first).matched_length >= entry.second);
    }
  }

  std::unique_ptr<ServingCache> cache_;
  std::map<RequestId, std::pair<std::vector<Token>, std::size_t>> running_;
  RequestId last_attempt_ = 0;
};

RC_GTEST_PROP(ServingProperties, SequentialCaseIsEveryEnginesReplay, ()) {
  ServeInput input = *GenServeInput();
  input.serve.max_running = 1;
  input.serve.output = OutputMode::kNone;
  const CacheOptions& options = input.replay.options;
  const auto reference = MakeServingCache("reference", options);
  const ServeAnswer expected = ServeReplay(input, *reference);
  for (const std::string_view name : EngineNames(options.model)) {
    const auto cache = MakeServingCache(name, options);
    const ServeAnswer answer = ServeReplay(input, *cache);
    RC_ASSERT(answer.requests == expected.requests);
    RC_ASSERT(answer.totals == expected.totals);
    // §10.7: the matches (refused: (0, 0)) of §8's and §9's replay.
    const auto index = MakeEngine(name, options);
    std::vector<Match> sequential;
    Replay(*index, input.replay.requests,
           [&](std::size_t, TokenSpan, const Match& match) {
             sequential.push_back(match);
           });
    for (std::size_t i = 0; i < sequential.size(); ++i) {
      RC_ASSERT(answer.requests[i].match == sequential[i]);
    }
  }
}

RC_GTEST_PROP(ServingProperties, LifecycleEnginesAgreeWithTheReference, ()) {
  const ServeInput input = *GenServeInput();
  const CacheOptions& options = input.replay.options;
  const auto reference = MakeServingCache("reference", options);
  const ServeAnswer expected = ServeReplay(input, *reference);
  for (const std::string_view name : EngineNames(options.model)) {
    if (!HasRequestLifecycle(name, options.model)) continue;
    const auto cache = MakeServingCache(name, options);
    const ServeAnswer answer = ServeReplay(input, *cache);
    RC_ASSERT(answer.requests == expected.requests);
    RC_ASSERT(answer.totals == expected.totals);
  }
}

RC_GTEST_PROP(ServingProperties, KeepsTheRulesOfSection10, ()) {
  const ServeInput input = *GenServeInput();
  const auto names = EngineNames(input.replay.options.model);
  const std::string_view name = *rc::gen::elementOf(names);
  RC_PRE(HasRequestLifecycle(name, input.replay.options.model));
  CheckedCache cache(MakeServingCache(name, input.replay.options));
  const ServeAnswer answer = ServeReplay(input, cache);
  RC_ASSERT(answer.requests.size() == input.replay.requests.size());
  RC_ASSERT(!cache.running());
  RC_ASSERT(cache.pinned() == 0U);
  std::uint64_t previous_start = 0;
  for (const ServedRequest& request : answer.requests) {
    RC_ASSERT(request.start_us >= request.arrival_us);
    RC_ASSERT(request.start_us >= previous_start);  // FIFO
    RC_ASSERT(request.prefill_end_us >= request.start_us);
    RC_ASSERT(request.finish_us >= request.prefill_end_us);
    if (request.refused) {
      RC_ASSERT(request.finish_us == request.start_us);
      RC_ASSERT(request.match == Match{});
    }
    previous_start = request.start_us;
  }
  RC_ASSERT(answer.totals.peak_running <= input.serve.max_running);
  // The same input, the same answer.
  const auto again = MakeServingCache(name, input.replay.options);
  const ServeAnswer second = ServeReplay(input, *again);
  RC_ASSERT(second.requests == answer.requests);
  RC_ASSERT(second.totals == answer.totals);
}

}  // namespace
}  // namespace kvprefix
