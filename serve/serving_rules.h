// The scheduling rules of SPEC §10.3 as a policy type: what a worker does
// when its queue's head must wait, and what comes first at one instant. The
// serving replay (serve/serving_loop.h) is written over it, in the manner
// of Abseil's containers over their policy traits; Section10Rules is the
// contract, and the only rules kvprefix's commands use. Another rules type
// (testing/serving_mutants.h breaks each rule once, to show that the serving
// property and the serving fuzz target catch it) has the same two members.
#ifndef KVPREFIX_SERVE_SERVING_RULES_H_
#define KVPREFIX_SERVE_SERVING_RULES_H_

namespace kvprefix {

struct Section10Rules {
  // §10.3 step 3: "attempt the head ... wait: the loop stops"; no later
  // request starts before a waiting one (first come, first served: vLLM's
  // scheduler stops at the first request it cannot allocate; SGLang's
  // "fcfs" policy the same).
  static constexpr bool kWaitingHeadBlocks = true;
  // §10.3 step 2: at one instant, the prefill ends and finishes are
  // applied before the arrivals are attempted, so an arrival sees the
  // pages a finish at its own time released.
  static constexpr bool kEventsBeforeArrivals = true;
};

}  // namespace kvprefix

#endif  // KVPREFIX_SERVE_SERVING_RULES_H_
