// Checking SPEC §10's serving replay: a ServingCache decorator that checks
// the rules of §10.3-§10.5 around every call, the whole-answer comparison of
// engines with the reference on a §10 document, and serving fuzz inputs
// (bytes decoded into a small §10 document) for libFuzzer targets. kvprefix's
// serving fuzz target (fuzz/serving_fuzzer.cc), its property suite
// (tests/property/serving_properties_test.cc) and a user's own fuzz target
// call these the same way:
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     if (auto failure = kvprefix::checking::CheckServeFuzzInput(
//             {data, size}, MakeMyServingCaches)) {
//       std::fputs(failure->c_str(), stderr);
//       std::abort();
//     }
//     return 0;
//   }
//
// How bytes decode (DecodeServeFuzzInput). Bytes are read from the front;
// a read past the end gives 0, so every byte string decodes.
//   1. options byte m: bits 0-1 the model (0 and 3 spec, 1 vllm, 2 sglang);
//      bit 2 set = match limit all-but-last (vllm: always); bit 3 set =
//      trigger on-allocate (sglang only); bits 4-5 the policy, n =
//      (m >> 4) & 3: spec kEvictionPolicies[n % 3] (lru, fifo, lfu), sglang
//      lru (n even) or fifo (n odd), vllm lru; bit 6 set = output "unique";
//      bit 7 set = an alphabet of 4 tokens (1..4), clear 2 tokens (1, 2).
//   2. cache byte k: page size 1 + (k & 3) % 3 (1..3); bit 7 set =
//      unbounded, else capacity (k >> 2) & 31 (0..31 nodes, blocks or
//      pages as the model counts).
//   3. serving byte s: max_running 1 + (s & 3) (1..4); prefill_us_per_token
//      (s >> 2) & 3, decode_us_per_token (s >> 4) & 3, overhead_us s >> 6
//      (each 0..3).
//   4. then, while bytes remain and fewer than kMaxServeFuzzRequests were
//      decoded, one request: header byte h, its length h & 7 (0..7
//      tokens), its arrival the previous one plus (h >> 3) & 3 µs (the
//      first: plus that from 0), its output length h >> 5 (0..7 tokens);
//      then one byte per token, token 1 + b % (the alphabet's size).
// Inputs longer than kMaxServeFuzzInputBytes are not decoded.
#ifndef KVPREFIX_CHECKING_SERVING_CHECK_H_
#define KVPREFIX_CHECKING_SERVING_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checking/fuzz_input.h"
#include "kvprefix/cache.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix::checking {

inline constexpr std::size_t kMaxServeFuzzInputBytes = 1 << 10;
inline constexpr std::size_t kMaxServeFuzzRequests = 16;

// A ServingCache that passes every call on to the one it owns: a base for
// decorators, which override only the calls they change (cache() is the
// wrapped one). Not thread-safe, as ServingCache.
class ServingCacheDecorator : public ServingCache {
 public:
  explicit ServingCacheDecorator(std::unique_ptr<ServingCache> cache)
      : cache_(std::move(cache)) {}

  std::string_view name() const override { return cache_->name(); }
  const CacheOptions& options() const override { return cache_->options(); }
  bool one_at_a_time() const override { return cache_->one_at_a_time(); }
  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override {
    return cache_->Admit(id, prompt, stored_length);
  }
  void PrefillEnd(RequestId id, TokenSpan prompt) override {
    cache_->PrefillEnd(id, prompt);
  }
  void Finish(RequestId id, TokenSpan stored) override {
    cache_->Finish(id, stored);
  }
  Match PeekMatch(TokenSpan request) const override {
    return cache_->PeekMatch(request);
  }
  std::uint64_t pinned() const override { return cache_->pinned(); }
  std::uint64_t cached_pages() const override { return cache_->cached_pages(); }
  std::uint64_t evicted_pages() const override {
    return cache_->evicted_pages();
  }

 protected:
  ServingCache& cache() { return *cache_; }
  const ServingCache& cache() const { return *cache_; }

 private:
  std::unique_ptr<ServingCache> cache_;
};

// A ServingCache that checks SPEC §10's rules around every call of the one
// it wraps (and passes every call on unchanged):
//  * attempts come in request order (§10.3: the queue is never skipped;
//    the same request again while it waits);
//  * only vllm and sglang "on-allocate", and only with a capacity, ever
//    wait or refuse (§10.4);
//  * a pinned entry is never evicted: after every call, each running
//    request's PeekMatch covers at least the match it started with;
//  * spec never holds more than C nodes after a finish;
//  * a finish is of a running request;
//  * with CheckEnd: nothing runs and nothing is pinned at the end.
// The first rule broken is kept (problem()); later ones are not. Costs
// O(running requests' tokens) per call on top of the wrapped cache's. Not
// thread-safe, as ServingCache.
class RuleCheckingCache final : public ServingCacheDecorator {
 public:
  explicit RuleCheckingCache(std::unique_ptr<ServingCache> cache)
      : ServingCacheDecorator(std::move(cache)) {}

  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override;
  void PrefillEnd(RequestId id, TokenSpan prompt) override;
  void Finish(RequestId id, TokenSpan stored) override;

  // Records a problem if a request still runs or something is pinned: call
  // it once the replay answered every request. O(1).
  void CheckEnd();
  // The first rule broken, as one sentence naming the request and the
  // rule ("request 3 started with 2 matched tokens and matches only 0 after
  // the finish of request 1: a pinned entry was evicted (SPEC §10.4)"), or
  // nullopt.
  const std::optional<std::string>& problem() const { return problem_; }

 private:
  void Fail(std::string problem);
  // The pin rule, after `call` ("the prefill end of request 2").
  void CheckPins(std::string_view call, RequestId id);

  // Running requests: their prompts and matched lengths at start.
  std::map<RequestId, std::pair<std::vector<Token>, std::size_t>> running_;
  std::optional<RequestId> last_attempt_;
  std::optional<std::string> problem_;
};

// Fresh, empty serving caches under test for a document (built with
// input.replay.options); the reference's is built by the check itself.
// May throw; std::invalid_argument means "these options are refused"
// (skipped).
using ServingFactory = std::function<std::vector<std::unique_ptr<ServingCache>>(
    const ServeInput& input)>;

// The built-in engines of the document's model but the reference that have
// a request lifecycle (HasRequestLifecycle), and, when the document has
// max_running 1 and output "none" (§10.7), every other one too, one
// request at a time (MakeServingCache). Thread-safe.
std::vector<std::unique_ptr<ServingCache>> BuiltInServingCaches(
    const ServeInput& input);

// How the caches under test are replayed: ServeReplay when empty (a test
// passes the loop under rules that break one, testing/serving_mutants.h).
using ServeReplayer =
    std::function<ServeAnswer(const ServeInput& input, ServingCache& cache)>;

// True if a cache that is one_at_a_time() may replay `input` exactly
// (SPEC §10.7: max_running 1 and output "none"). O(1).
bool SequentialServeInput(const ServeInput& input);

// Replays `input` (ServeReplay) on the reference and on each cache of
// make_caches(input) (by `replay` when given), every one wrapped in a
// RuleCheckingCache, and
// compares every cache's whole answer (each request's answer, then the
// totals) with the reference's. A cache that is one_at_a_time() is given
// only a document SequentialServeInput accepts (any other is skipped).
// Returns nullopt if every cache keeps the rules and answers as the
// reference does, else a report of several lines, each ending in '\n':
// the engine and what it did ("engine 'radix' disagrees with the reference
// on request 3 of 5" then both answers as SPEC §10.5 writes them, or
// "engine 'X' breaks a rule of SPEC §10: <problem>", or "engine 'X'
// throws: <what>"), then the document (AppendServeDocumentJson: `kvprefix
// replay DOC --input-format requests` replays it). The reference is
// checked for the rules too. O(requests log(requests)) plus the caches'
// costs per cache. Passes on what make_caches throws, and a
// std::invalid_argument from a replay (a cache refusing the document's
// options in one of its calls, kvprefix/options_refused.h: the input is
// to be skipped). Thread-safe if make_caches is.
std::optional<std::string> CheckServeInput(
    const ServeInput& input, const ServingFactory& make_caches,
    const ServeReplayer& replay = nullptr);

// Decodes `bytes` as the top comment says. Returns nullopt if there are
// more than kMaxServeFuzzInputBytes of them; any shorter byte string (the
// empty one too: spec, capacity 0, no request) decodes, to a document
// SPEC §9.4 and §10.1 accept. Deterministic. O(bytes). Thread-safe.
std::optional<ServeInput> DecodeServeFuzzInput(
    std::span<const std::uint8_t> bytes);

// How CheckServeFuzzInput checks.
struct ServeFuzzCheckOptions {
  // When set, called on the decoded document before anything is built (to
  // keep to what the caches implement, e.g. a mutant of one model). It must
  // leave a document SPEC §9.4 and §10.1 accept.
  std::function<void(ServeInput&)> adjust = nullptr;
  // When set, counts every input checked or skipped (and why).
  FuzzTally* tally = nullptr;
  // When set, replays the caches under test (CheckServeInput's `replay`).
  ServeReplayer replay = nullptr;
};

// Decodes `bytes` (DecodeServeFuzzInput) and checks the document
// (CheckServeInput). Returns nullopt for an input every cache answers as the
// reference does and keeps the rules on, one longer than
// kMaxServeFuzzInputBytes (skipped), and one whose options make_caches
// refuses with std::invalid_argument (skipped); else the report.
// Thread-safe if make_caches is.
std::optional<std::string> CheckServeFuzzInput(
    std::span<const std::uint8_t> bytes, const ServingFactory& make_caches,
    const ServeFuzzCheckOptions& check = {});

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_SERVING_CHECK_H_
