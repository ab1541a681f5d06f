// SPEC §10.2: when a started request ends its prefill and finishes.
//
// The linear form of llm-d's inference simulator: a constant per request, a
// cost per uncached prompt token and one per output token. It leaves out
// batching, chunked prefill, the cost of a prefix hit, preemption, unknown
// output lengths and prefill/decode interference (§10.2).
#ifndef KVPREFIX_SERVE_SERVICE_TIME_H_
#define KVPREFIX_SERVE_SERVICE_TIME_H_

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kvprefix/request.h"

namespace kvprefix {

// A started request's prefill end and finish, in µs.
struct ServiceTimes {
  std::uint64_t prefill_end_us = 0;
  std::uint64_t finish_us = 0;
};

// §10.2 for request `id` of `prompt_tokens` n with `matched_tokens` m and
// `output_tokens` o starting at `start_us`: e = s + overhead + prefill ×
// (n − m), f = e + decode × o. Exact integers; throws std::invalid_argument
// naming the request if a time passes 2^64 − 1 µs (the SPEC's ranges allow
// it: 2^32 µs per token times 2^53 tokens). O(1). Thread-safe.
inline ServiceTimes ServiceTime(const ServeOptions& options, RequestId id,
                                std::uint64_t start_us,
                                std::uint64_t prompt_tokens,
                                std::uint64_t matched_tokens,
                                std::uint64_t output_tokens) {
  std::uint64_t prefill = 0;
  std::uint64_t decode = 0;
  ServiceTimes times;
  if (__builtin_mul_overflow(options.prefill_us_per_token,
                             prompt_tokens - matched_tokens, &prefill) ||
      __builtin_mul_overflow(options.decode_us_per_token, output_tokens,
                             &decode) ||
      __builtin_add_overflow(start_us, options.overhead_us,
                             &times.prefill_end_us) ||
      __builtin_add_overflow(times.prefill_end_us, prefill,
                             &times.prefill_end_us) ||
      __builtin_add_overflow(times.prefill_end_us, decode, &times.finish_us)) {
    throw std::invalid_argument(
        "request " + std::to_string(id) +
        ": its finish passes 2^64 - 1 us (SPEC §10.2's times are exact "
        "64-bit integers here)");
  }
  return times;
}

}  // namespace kvprefix

#endif  // KVPREFIX_SERVE_SERVICE_TIME_H_
