// Differential fuzz inputs: bytes decoded into cache options and a stream of
// inserts, matches and accesses (SPEC §3 and §8), and the check that runs
// them through the differential harness (checking/differential.h). kvprefix's
// own differential fuzz target (fuzz/differential_fuzzer.cc) is these
// functions; a user's libFuzzer target for their own cache is a few lines
// (fuzz/README.md, "Fuzz your own cache"):
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     if (auto failure = kvprefix::checking::CheckFuzzInput(
//             {data, size}, MakeMyEngines)) {
//       std::fputs(failure->c_str(), stderr);
//       std::abort();
//     }
//     return 0;
//   }
//
// How bytes decode. Every read takes bytes from the END of the input, as
// libFuzzer's FuzzedDataProvider integer reads do (the format is theirs, so
// kvprefix's corpus, fuzz/corpus/differential_fuzzer/, keeps its meaning;
// fuzz/make_differential_seed.py writes inputs in it). A read of an n-byte
// integer takes up to n bytes, the last byte of the input first and most
// significant; once the bytes run out a read gives its lowest value.
//   1. alphabet byte a: the small alphabet is the tokens 0 .. (a % 8); its
//      bit 3 set = operations have namespaces (SPEC §8.1; below); its
//      high bits pick the SPEC §9 options: bits 6-7 the model (0 and 3
//      spec, 1 vllm, 2 sglang), bit 4 set = match limit all-but-last (vllm:
//      always), bit 5 set = trigger on-allocate (sglang only). vllm's policy
//      is lru; sglang's is fifo when the cache byte picks fifo, else lru.
//      (Corpus inputs older than the models, whose alphabet byte had these
//      bits set, now decode to another model.)
//   2. cache byte k, the CacheOptions every engine is built with: page size
//      1 + (k & 3) tokens (1..4); bit 3 set = bounded, with a capacity
//      byte c next: capacity c nodes (0..254), or for c = 0xFF the next two
//      bytes as an unsigned 16-bit capacity; bit 3 clear = unbounded. The
//      policy is kEvictionPolicies[n % its size] (kvprefix/cache.h) for
//      n = bit 2 + 2 * (k >> 4): bit 2 alone picks lru (clear) or fifo
//      (set), as when it was the only policy bit; bits 4-7 pick among
//      further policies.
//   3. then, while bytes remain and fewer than kMaxFuzzOperations were
//      decoded, one operation:
//        op byte o: o & 3 = 0 insert, 1 match, 2 or 3 access (the serving
//          step of SPEC §8: match, insert, touch, evict); bit 2 set =
//          derived (when earlier operations exist); o >> 3 = number of fresh
//          tokens (0..31).
//        namespaces only (alphabet bit 3): a namespace byte n, the
//          operation's namespace kFuzzNamespaces[n % 3]; a run with
//          namespaces folds them (DifferentialChecker::FoldNamespaces), so
//          equal tokens in two namespaces share nothing. (Corpus inputs
//          older than namespaces whose alphabet byte had bit 3 set now read
//          a namespace byte per operation.)
//        derived only: a history index i, taken modulo the number h of
//          earlier operations (as FuzzedDataProvider's
//          ConsumeIntegralInRange(0, h - 1): as many bytes as h - 1 needs,
//          none when h = 1), and one cut byte c: the operation starts with
//          the first c % (n + 1) tokens of earlier operation i's n tokens.
//          This is how matches end inside edges (and pages), diverge past
//          branch points, run past the end of a cached sequence, and how
//          evicted prefixes come back.
//        fresh tokens, one each: byte b < 0xE0 gives b % alphabet size;
//          0xE0 <= b < 0xE0 + 18 picks kFuzzExtremeTokens[b - 0xE0]; larger b
//          reads a 4-byte int32 next (offset by INT32_MIN: bytes 00 00 00 00
//          are INT32_MIN).
//      Sequences are truncated to kMaxFuzzSequenceTokens.
// Inputs longer than kMaxFuzzInputBytes are not decoded (libFuzzer's
// -max_len keeps to it when set to it; longer inputs only slow a campaign).
#ifndef KVPREFIX_CHECKING_FUZZ_INPUT_H_
#define KVPREFIX_CHECKING_FUZZ_INPUT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checking/differential.h"
#include "checking/implemented_options.h"
#include "kvprefix/cache.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/types.h"

namespace kvprefix::checking {

inline constexpr std::size_t kMaxFuzzInputBytes = 1 << 14;
inline constexpr std::size_t kMaxFuzzOperations = 256;
inline constexpr std::size_t kMaxFuzzSequenceTokens = 1024;

// The tokens fresh-token bytes 0xE0 .. 0xF1 pick: where engines that pack,
// hash or index by token bits go wrong (sign, byte and 16-bit boundaries,
// the int32 limits), then the edges of the double-array engine's directly
// coded tokens (2^18) and of its 30-bit codes. New entries go at the end, so
// that existing corpus files keep their meaning.
inline constexpr std::array<Token, 18> kFuzzExtremeTokens = {
    std::numeric_limits<Token>::min(),
    std::numeric_limits<Token>::min() + 1,
    -129,
    -128,
    -1,
    0,
    1,
    127,
    128,
    255,
    256,
    65535,
    65536,
    std::numeric_limits<Token>::max() - 1,
    std::numeric_limits<Token>::max(),
    (1 << 18) - 1,
    1 << 18,
    1 << 30,
};

// The namespaces fuzz inputs draw from (SPEC §8.1): the default one and
// two others.
inline constexpr std::array<std::string_view, 3> kFuzzNamespaces = {
    "", "lora-a", "salt-b"};

// A decoded fuzz input: the options every engine (and the reference) is
// built with, and the operations to apply in order (at most
// kMaxFuzzOperations, each of at most kMaxFuzzSequenceTokens tokens).
struct FuzzInput {
  CacheOptions options;
  std::vector<Operation> operations;
};

// Decodes `bytes` as the top comment says. Returns nullopt if there are more
// than kMaxFuzzInputBytes of them; any shorter byte string (the empty one
// too: unbounded, no operation) decodes. Deterministic: the same bytes give
// the same input on every platform. O(bytes + decoded tokens); throws only
// std::bad_alloc. Thread-safe.
std::optional<FuzzInput> DecodeFuzzInput(std::span<const std::uint8_t> bytes);

// Fresh, empty engines under test, each built with the options given (the
// reference is built with the same ones). Called once per checked input, and
// once more to describe a disagreement; may throw, which the check passes
// on.
using EngineFactory = std::function<std::vector<std::unique_ptr<PrefixIndex>>(
    const CacheOptions& options)>;

// What CheckFuzzInput did with the inputs it was given: checked, or
// skipped and why, for the target to report ("saying so"), e.g. at exit.
// Thread-safe.
class FuzzTally {
 public:
  FuzzTally() = default;
  // Copies the counts (a tally can be returned by value).
  FuzzTally(const FuzzTally& other);
  FuzzTally& operator=(const FuzzTally&) = delete;

  void Checked();
  // An input skipped because the engines refuse its options (`reason`: the
  // refusal's message; the first is kept).
  void Refused(std::string_view reason);
  // An input longer than kMaxFuzzInputBytes, not decoded.
  void TooLong();

  std::uint64_t checked() const;
  std::uint64_t skipped() const;  // refused and too long
  // "differential_fuzzer: checked 812 inputs, skipped 188 (188 refused, the
  // first: plugin 'mycache' (./libmycache.so) refuses capacity 3, lfu, page
  // size 1: ...; 0 longer than 16384 bytes)" for `target`; "skipped 0" when
  // none was.
  std::string Format(std::string_view target) const;

 private:
  mutable std::mutex mutex_;
  std::uint64_t checked_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t too_long_ = 0;
  std::string first_refusal_;
};

// How CheckFuzzInput and CheckOperations check.
struct FuzzCheckOptions {
  // When true, every input is checked as an unbounded token trie
  // (CacheOptions{}: page size 1, no capacity) whatever its cache byte says:
  // for engines that are only PrefixIndexEngines, which never evict (an
  // EngineAdapter of one answers CacheOptions{} for its options).
  bool unbounded = false;
  // What is compared (checking/differential.h): kLengths for a cache with
  // node IDs of its own (matched lengths only).
  Comparison comparison = Comparison::kAll;
  // When set, called on the options (decoded, or CacheOptions{} when
  // `unbounded`) before anything is built: to keep to what the engines
  // implement, e.g. a mutant that knows one model only. It must leave
  // options that FindModelOptionsProblem accepts.
  std::function<void(CacheOptions&)> adjust = nullptr;
  // The options the engines implement: the decoded options (after
  // `adjust`) are made ones it lists (RestrictOptions of
  // checking/implemented_options.h, from a hash of the bytes), so that a
  // cache of lru and page size 1 only is fuzzed on exactly those and no
  // input is spent on options it refuses. Default: every option.
  ImplementedOptions implemented = {};
  // When set, counts every input checked or skipped (and why).
  FuzzTally* tally = nullptr;
};

// Builds a DifferentialChecker with `options` and make_engines(options),
// applies `operations` in order and stops at the first disagreement (see
// DifferentialChecker::Apply for what is compared). Returns nullopt if every
// engine agreed with the reference on every operation, else a report of
// several lines, each ending in '\n': the harness's report (the engine, the
// cache options, the operations so far, the expected and the actual answer),
// then "every engine's answer to the last operation:" and one line per
// engine, the reference first, from fresh engines (make_engines called again)
// that replayed the operations before the last: so that a report names
// every engine that is wrong, not only the first. O(operations' tokens)
// times the engines' costs. Passes on what make_engines and the engines
// throw. Thread-safe if make_engines is. `comparison` as
// DifferentialChecker's.
std::optional<std::string> CheckOperations(
    const CacheOptions& options, std::span<const Operation> operations,
    const EngineFactory& make_engines,
    Comparison comparison = Comparison::kAll);

// Decodes `bytes` (DecodeFuzzInput) and checks the input (CheckOperations),
// with CacheOptions{} instead of the decoded options if
// `check.unbounded`, comparing as `check.comparison`. Returns nullopt for an
// input that every engine answers as the reference does, for one longer than
// kMaxFuzzInputBytes (not decoded) and for one whose options make_engines
// refuses by throwing std::invalid_argument (as MakeEngine does for a plugin
// whose create refuses them, e.g. a policy it does not implement: skipped),
// else the report of CheckOperations; `check.implemented` and `check.tally`
// as FuzzCheckOptions says. A libFuzzer target calls it from
// LLVMFuzzerTestOneInput and aborts on a report (top comment). Thread-safe
// if make_engines is.
std::optional<std::string> CheckFuzzInput(std::span<const std::uint8_t> bytes,
                                          const EngineFactory& make_engines,
                                          const FuzzCheckOptions& check = {});

// The engine names of a comma-separated list, "hash,radix": split at each
// ',', in order, repeats kept. Names are not checked here (MakeEngine does).
// Throws std::invalid_argument naming the problem if the list or one of its
// names is empty ("hash,,radix", "hash,"). O(list length). Thread-safe.
std::vector<std::string> ParseEngineList(std::string_view list);

// An EngineFactory building each engine of `names` with the registry's
// MakeEngine (engines/registry.h), in order. The factory throws
// std::invalid_argument if a name is unknown (MakeEngine's message lists the
// valid names). Thread-safe to call concurrently.
EngineFactory NamedEngines(std::vector<std::string> names);

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_FUZZ_INPUT_H_
