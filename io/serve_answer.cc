// Writing SPEC §10.5's answer with fmt into one std::string, and its
// doubles: an exact integer quotient rounded once, shortest round-trip text.
#include "io/serve_answer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <iterator>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "io/json_strings.h"

namespace kvprefix {
namespace {

// Significand bits of a double, the implicit one included.
constexpr int kSignificandBits = 53;
// Bits a 64-bit working significand has below a double's.
constexpr int kExtraBits = 64 - kSignificandBits;

// Bits needed to write `value`: 0 for 0.
int BitWidth(WaitSum value) {
  const auto high = static_cast<std::uint64_t>(value >> 64);
  return high != 0 ? 64 + std::bit_width(high)
                   : std::bit_width(static_cast<std::uint64_t>(value));
}

// Python's repr(float) writes positional text for a decimal exponent (of
// the first significant digit) in [-4, 16).
constexpr int kLowestPositionalExponent = -4;
constexpr int kFirstExponentForm = 16;

}  // namespace

double NearestQuotient(WaitSum numerator, std::uint64_t denominator) {
  if (denominator == 0 || numerator == 0) return 0.0;
  WaitSum quotient = numerator / denominator;
  WaitSum remainder = numerator % denominator;
  // The quotient is significand × 2^exponent with a 64-bit significand
  // whose top bit is set, plus `sticky`: whether anything below it is not 0.
  std::uint64_t significand = 0;
  int exponent = 0;
  bool sticky = false;
  const int width = BitWidth(quotient);
  if (width > 64) {
    exponent = width - 64;
    significand = static_cast<std::uint64_t>(quotient >> exponent);
    const WaitSum below = quotient & ((WaitSum{1} << exponent) - 1);
    sticky = below != 0 || remainder != 0;
  } else {
    // Long division, one bit at a time: remainder < denominator < 2^64, so
    // twice it fits. At most 128 steps: the quotient is at least 2^-64.
    significand = static_cast<std::uint64_t>(quotient);
    while ((significand >> 63) == 0) {
      remainder <<= 1;
      const bool bit = remainder >= denominator;
      if (bit) remainder -= denominator;
      significand = (significand << 1) | (bit ? 1 : 0);
      --exponent;
    }
    sticky = remainder != 0;
  }
  // Round to 53 bits, ties to even: the 11 bits below decide, with sticky.
  std::uint64_t rounded = significand >> kExtraBits;
  const std::uint64_t below = significand & ((1u << kExtraBits) - 1);
  const std::uint64_t half = std::uint64_t{1} << (kExtraBits - 1);
  if (below > half || (below == half && (sticky || (rounded & 1) != 0))) {
    ++rounded;  // 2^53 at most: still exact
  }
  return std::ldexp(static_cast<double>(rounded), exponent + kExtraBits);
}

void AppendJsonDouble(double value, std::string& out) {
  // Shortest round trip, in exponent form: "d[.ddd]e±XX".
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value,
                                          std::chars_format::scientific);
  std::string_view text(buffer, end);
  if (!text.empty() && text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  const std::string_view exponent_text = text.substr(e + 1);  // "+16", "-05"
  int exponent = 0;
  std::from_chars(exponent_text.data() + 1,
                  exponent_text.data() + exponent_text.size(), exponent);
  if (exponent_text.front() == '-') exponent = -exponent;
  if (exponent < kLowestPositionalExponent || exponent >= kFirstExponentForm) {
    out += text;  // to_chars' exponent form is Python's
    return;
  }
  // The significant digits, without the point.
  std::string digits(1, text.front());
  if (e > 1) digits += text.substr(2, e - 2);
  if (exponent < 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-exponent - 1), '0');
    out += digits;
    return;
  }
  const auto integer_digits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= integer_digits) {
    out += digits;
    out.append(integer_digits - digits.size(), '0');
    out += ".0";
    return;
  }
  out.append(digits, 0, integer_digits);
  out += '.';
  out.append(digits, integer_digits);
}

void AppendServedRequestJson(const ServedRequest& request, std::string& out,
                             const std::size_t* worker) {
  fmt::format_to(std::back_inserter(out),
                 "{{\"matched_length\":{},\"cache_node\":{},\"arrival_us\":{},"
                 "\"start_us\":{},\"prefill_end_us\":{},\"finish_us\":{},"
                 "\"wait_us\":{},\"refused\":{},\"waited_for_room\":{}}}",
                 request.match.matched_length, request.match.cache_node,
                 request.arrival_us, request.start_us, request.prefill_end_us,
                 request.finish_us, request.wait_us(), request.refused,
                 request.waited_for_room);
  if (worker != nullptr) {
    out.pop_back();
    fmt::format_to(std::back_inserter(out), ",\"worker\":{}}}", *worker);
  }
}

void AppendServeTotalsJson(const ServeTotals& totals, std::string& out) {
  fmt::format_to(
      std::back_inserter(out),
      "{{\"requests\":{},\"request_tokens\":{},\"matched_tokens\":{},"
      "\"hit_ratio\":",
      totals.requests, totals.request_tokens, totals.matched_tokens);
  AppendJsonDouble(
      NearestQuotient(totals.matched_tokens, totals.request_tokens), out);
  fmt::format_to(std::back_inserter(out),
                 ",\"refused\":{},\"waited_for_room\":{},\"evicted_pages\":{},"
                 "\"peak_pinned\":{},\"peak_running\":{},\"peak_queued\":{},"
                 "\"mean_wait_us\":",
                 totals.refused, totals.waited_for_room, totals.evicted_pages,
                 totals.peak_pinned, totals.peak_running, totals.peak_queued);
  AppendJsonDouble(NearestQuotient(totals.total_wait_us, totals.requests), out);
  fmt::format_to(std::back_inserter(out),
                 ",\"p50_wait_us\":{},\"p99_wait_us\":{},\"makespan_us\":{}}}",
                 totals.p50_wait_us, totals.p99_wait_us, totals.makespan_us);
}

namespace {

// Appends "requests":[...], (each request as AppendServedRequestJson, with
// its worker when `workers_of` is not empty).
void AppendRequestsJson(std::span<const ServedRequest> requests,
                        std::span<const std::size_t> workers_of,
                        std::string& out) {
  out += "\"requests\":[";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    AppendServedRequestJson(requests[i], out,
                            workers_of.empty() ? nullptr : &workers_of[i]);
    out += ',';
  }
  if (!requests.empty()) out.pop_back();
  out += "],";
}

}  // namespace

void AppendServeAnswerJson(const ServeAnswer& answer, std::string& out,
                           bool with_requests) {
  out += '{';
  if (with_requests) AppendRequestsJson(answer.requests, {}, out);
  out += "\"totals\":";
  AppendServeTotalsJson(answer.totals, out);
  out += "}\n";
}

double Imbalance(std::span<const std::uint64_t> counts) {
  WaitSum sum = 0;
  std::uint64_t most = 0;
  for (const std::uint64_t count : counts) {
    sum += count;
    most = std::max(most, count);
  }
  if (sum == 0) return 1.0;
  // Σ over the workers is a count of the replay's requests or tokens: it
  // fits in 64 bits as the totals' own sums do.
  return NearestQuotient(WaitSum{most} * counts.size(),
                         static_cast<std::uint64_t>(sum));
}

std::array<double, 3> RoutedImbalances(const RoutedAnswer& answer) {
  std::vector<std::uint64_t> requests, tokens, uncached;
  for (const ServeTotals& worker : answer.per_worker) {
    requests.push_back(worker.requests);
    tokens.push_back(worker.request_tokens);
    uncached.push_back(worker.request_tokens - worker.matched_tokens);
  }
  return {Imbalance(requests), Imbalance(tokens), Imbalance(uncached)};
}

void AppendRoutedTotalsJson(const RoutedAnswer& answer, std::string& out) {
  out += "\"totals\":";
  AppendServeTotalsJson(answer.totals, out);
  out.pop_back();
  std::string router;
  AppendJsonString(answer.router, router);
  fmt::format_to(std::back_inserter(out), ",\"workers\":{},\"router\":{}",
                 answer.per_worker.size(), router);
  const std::array<double, 3> figures = RoutedImbalances(answer);
  for (std::size_t i = 0; i < figures.size(); ++i) {
    fmt::format_to(std::back_inserter(out), ",\"{}\":", kImbalanceNames[i]);
    AppendJsonDouble(figures[i], out);
  }
  out += "},\"per_worker\":[";
  for (const ServeTotals& worker : answer.per_worker) {
    AppendServeTotalsJson(worker, out);
    out += ',';
  }
  if (!answer.per_worker.empty()) out.pop_back();
  out += ']';
}

void AppendRoutedAnswerJson(const RoutedAnswer& answer, std::string& out,
                            bool with_requests) {
  out += '{';
  if (with_requests) {
    AppendRequestsJson(answer.requests, answer.workers_of, out);
  }
  AppendRoutedTotalsJson(answer, out);
  out += "}\n";
}

}  // namespace kvprefix
