// Writing a SPEC §10 serving replay's answer (§10.5), and the two pieces of
// number formatting it needs: the double nearest to a quotient of integers,
// and a double's shortest round-trip text as Python's repr writes it.
#ifndef KVPREFIX_IO_SERVE_ANSWER_H_
#define KVPREFIX_IO_SERVE_ANSWER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "kvprefix/request.h"

namespace kvprefix {

// The double nearest to numerator / denominator (the numerator an unsigned
// 128-bit integer, kvprefix/request.h's WaitSum), ties to the one with an
// even significand (IEEE 754-2019 §4.3.1, roundTiesToEven, the default
// rounding: the quotient is computed exactly and rounded once); 0.0 when
// `denominator` is 0 (SPEC §10.5: a ratio of nothing is 0). Every quotient
// of these operands is a normal double (from 2^-64 to 2^128). Python's
// float(fractions.Fraction(n, d)) and n / d on ints give the same.
// O(128) steps. Pure; thread-safe.
double NearestQuotient(WaitSum numerator, std::uint64_t denominator);

// Appends `value` (finite) as the shortest decimal text that reads back to
// the same double (std::to_chars' shortest round trip), laid out as
// Python's repr(float) lays it out (SPEC §10.5): positional from 1e-4 up to
// below 1e16 ("0.0001", "0.2", "1234567890123456.0"), with ".0" appended
// when it has no '.'; exponent form otherwise, its exponent signed and of
// at least two digits ("1e-05", "1e+16", "1.2345678901234568e+17",
// "5e-324"). fmt 9's "{}" writes the same digits without the ".0" ("1",
// "1000000000000000"), where to switch to exponent form being fmt's choice,
// not a contract; ECMAScript's Number.prototype.toString differs (exponent
// form from 1e21 and below 1e-6, "1e-7"). O(1). Thread-safe.
void AppendJsonDouble(double value, std::string& out);

// Appends one request's answer, compact, members in SPEC §10.5's order:
// {"matched_length":M,"cache_node":N,"arrival_us":A,"start_us":S,
//  "prefill_end_us":E,"finish_us":F,"wait_us":W,"refused":false,
//  "waited_for_room":false} (times µs, wait_us = start - arrival), with
// `worker` (SPEC §11.8) ,"worker":w last. O(1). Thread-safe.
void AppendServedRequestJson(const ServedRequest& request, std::string& out,
                             const std::size_t* worker = nullptr);

// Appends the totals object, compact, members in SPEC §10.5's order:
// {"requests":R,"request_tokens":T,"matched_tokens":M,"hit_ratio":H,
//  "refused":..,"waited_for_room":..,"evicted_pages":..,"peak_pinned":..,
//  "peak_running":..,"peak_queued":..,"mean_wait_us":W,"p50_wait_us":..,
//  "p99_wait_us":..,"makespan_us":..}, where H = NearestQuotient(M, T) and
// W = NearestQuotient(total_wait_us, R), written by AppendJsonDouble (0.0
// for no tokens, no requests). SPEC §11.8 extends it (its "}" popped) and
// lists one per worker. O(1). Thread-safe.
void AppendServeTotalsJson(const ServeTotals& totals, std::string& out);

// Appends SPEC §10.5's answer, compact, one trailing newline:
// {"requests":[...],"totals":{...}}\n (AppendServedRequestJson for each of
// answer.requests, in request order; AppendServeTotalsJson), or with
// `with_requests` false (a trace's answer) {"totals":{...}}\n. O(requests).
// Thread-safe.
void AppendServeAnswerJson(const ServeAnswer& answer, std::string& out,
                           bool with_requests);

// SPEC §11.8's imbalance figure of `counts` (one per worker, N of them):
// max_w / mean_w = max · N / Σ, the nearest double (NearestQuotient), 1.0
// when Σ is 0. O(N). Thread-safe.
double Imbalance(std::span<const std::uint64_t> counts);

// SPEC §11.8's imbalance figures' names, in its order.
inline constexpr std::array<const char*, 3> kImbalanceNames = {
    "imbalance_requests", "imbalance_tokens", "imbalance_uncached"};

// SPEC §11.8's imbalance figures of `answer`, in kImbalanceNames' order:
// Imbalance over the workers' requests, request_tokens and request_tokens −
// matched_tokens. O(N). Thread-safe.
std::array<double, 3> RoutedImbalances(const RoutedAnswer& answer);

// Appends SPEC §11.8's members after `requests`, compact:
// "totals":{...§10.5's totals over all...,"workers":N,"router":"name",
// "imbalance_requests":..,"imbalance_tokens":..,"imbalance_uncached":..},
// "per_worker":[{...},...] (AppendServeTotalsJson for each worker; the
// imbalances by Imbalance over the workers' requests, request_tokens and
// request_tokens − matched_tokens). O(N). Thread-safe.
void AppendRoutedTotalsJson(const RoutedAnswer& answer, std::string& out);

// Appends SPEC §11.8's answer, compact, one trailing newline:
// {"requests":[...],"totals":{...},"per_worker":[...]}\n, each request as
// AppendServedRequestJson writes it with "worker":w appended; without
// `with_requests` (a trace's answer) no "requests". O(requests + N).
// Thread-safe.
void AppendRoutedAnswerJson(const RoutedAnswer& answer, std::string& out,
                            bool with_requests);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_SERVE_ANSWER_H_
