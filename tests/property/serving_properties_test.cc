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
//    gives the same answer (the rules are checking::RuleCheckingCache's,
//    which the serving fuzz target checks too).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "checking/serving_check.h"
#include "engines/registry.h"
#include "kvprefix/replay.h"
#include "serve/serving_replay.h"
#include "testing/generators.h"

namespace kvprefix {
namespace {

using test::GenServeInput;

RC_GTEST_PROP(ServingProperties, SequentialCaseIsEveryEnginesReplay, ()) {
  ServeInput input = *GenServeInput();
  input.serve.max_running = 1;
  input.serve.output = OutputMode::kNone;
  // Every engine of the model, its whole answer the reference's, the rules
  // kept (checking::BuiltInServingCaches gives them all for B = 1, "none").
  if (const auto report =
          checking::CheckServeInput(input, checking::BuiltInServingCaches)) {
    RC_FAIL(*report);
  }
  const CacheOptions& options = input.replay.options;
  const auto reference = MakeServingCache("reference", options);
  const ServeAnswer expected = ServeReplay(input, *reference);
  for (const std::string_view name : EngineNames(options.model)) {
    // §10.7: the matches (refused: (0, 0)) of §8's and §9's replay.
    const auto index = MakeEngine(name, options);
    std::vector<Match> sequential;
    Replay(*index, input.replay.requests,
           [&](std::size_t, TokenSpan, const Match& match) {
             sequential.push_back(match);
           });
    for (std::size_t i = 0; i < sequential.size(); ++i) {
      RC_ASSERT(expected.requests[i].match == sequential[i]);
    }
  }
}

RC_GTEST_PROP(ServingProperties, LifecycleEnginesAgreeWithTheReference, ()) {
  const ServeInput input = *GenServeInput();
  RC_TAG(input.serve.max_running > 1 ? "several running" : "one running");
  if (const auto report =
          checking::CheckServeInput(input, checking::BuiltInServingCaches)) {
    RC_FAIL(*report);
  }
}

RC_GTEST_PROP(ServingProperties, KeepsTheRulesOfSection10, ()) {
  const ServeInput input = *GenServeInput();
  const auto names = EngineNames(input.replay.options.model);
  const std::string_view name = *rc::gen::elementOf(names);
  RC_PRE(HasRequestLifecycle(name, input.replay.options.model));
  checking::RuleCheckingCache cache(
      MakeServingCache(name, input.replay.options));
  const ServeAnswer answer = ServeReplay(input, cache);
  cache.CheckEnd();
  if (cache.problem()) RC_FAIL(*cache.problem());
  RC_ASSERT(answer.requests.size() == input.replay.requests.size());
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
