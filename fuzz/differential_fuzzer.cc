// Differential fuzz target: every engine against the reference, through the
// one harness (checking/differential.h), on an online stream of inserts,
// matches and accesses (SPEC §3) to a cache that is unbounded or has a
// capacity, an eviction policy and a page size (SPEC §8).
//
// How bytes decode (all reads are FuzzedDataProvider integer reads, which
// take bytes from the END of the input; fuzz/make_differential_seed.py
// writes inputs in this format):
//   1. alphabet byte a: the small alphabet is the tokens 0 .. (a % 8).
//   2. cache byte k, the CacheOptions every engine is built with: page size
//      1 + (k & 3) tokens (1..4); bit 3 set = bounded, with a capacity
//      byte c next: capacity c nodes (0..254), or for c = 0xFF the next two
//      bytes as an unsigned 16-bit capacity (most significant first); bit 3
//      clear = unbounded. The policy is kEvictionPolicies[n % its size]
//      (kvprefix/cache.h) for n = bit 2 + 2 * (k >> 4): bit 2 alone picks
//      lru (clear) or fifo (set), as it did when it was the only policy
//      bit, and bits 4-7 pick among further policies.
//   3. then, while bytes remain and fewer than kMaxOperations were decoded,
//      one operation:
//        op byte o: o & 3 = 0 insert, 1 match, 2 or 3 access (the serving
//          step of SPEC §8: match, insert, touch, evict); bit 2 set =
//          derived (when the history is non-empty); o >> 3 = number of fresh
//          tokens (0..31).
//        derived only: one history index byte, taken modulo the history
//          size (no byte when the history holds one operation), and one cut
//          byte c: the operation starts with the first c % (n + 1) tokens of
//          that earlier operation's n tokens. This is how matches end inside
//          edges (and pages), diverge past branch points, run past the end
//          of a cached sequence, and how evicted prefixes come back.
//        fresh tokens, one each: byte b < 0xE0 gives b % alphabet size;
//          0xE0 <= b < 0xE0 + 18 picks kExtremeTokens[b - 0xE0]; larger b
//          reads a raw int32 from the next 4 bytes (most significant first,
//          offset by INT32_MIN).
//      Sequences are truncated to kMaxSequenceTokens.
// Inputs longer than kMaxInputBytes are ignored.
//
// Engines under test: every registered engine except the reference, built
// with the decoded options, or, when the environment variable
// KVPREFIX_FUZZ_MUTANT names a mutant from testing/mutants.h, that
// deliberately broken engine alone (to show the target has teeth; see
// fuzz/teeth.sh). Index mutants and "mutant-baseline" are unbounded token
// tries: for them the cache byte is read but the cache is always unbounded
// with page size 1. Any other value, e.g. "list", prints the mutant names
// on a last line "mutants: ..." and exits with status 2. On a disagreement
// the target prints the harness report (with the cache options), then every
// engine's answer to the last operation after replaying the history on fresh
// engines, then aborts.
#include <fmt/format.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "checking/differential.h"
#include "engines/registry.h"
#include "reference/reference_trie.h"
#include "testing/mutants.h"

namespace kvprefix {
namespace {

using checking::DifferentialChecker;
using checking::Operation;

constexpr std::size_t kMaxInputBytes = 1 << 14;
constexpr std::size_t kMaxOperations = 256;
constexpr std::size_t kMaxSequenceTokens = 1024;
constexpr std::uint8_t kFirstExtremeByte = 0xE0;
constexpr std::uint8_t kAlphabetSizes = 8;
// The cache byte (see the top comment).
constexpr std::uint8_t kPageSizeBits = 3;
constexpr int kPolicyLowShift = 2;  // bit 2: the policy number's low bit
constexpr std::uint8_t kBoundedBit = 1 << 3;
constexpr int kPolicyHighShift = 4;  // bits 4-7: the rest of it
constexpr std::uint8_t kWideCapacityByte = 0xFF;
// The op byte.
constexpr std::uint8_t kKindBits = 3;
constexpr std::uint8_t kDerivedBit = 1 << 2;
constexpr int kFreshShift = 3;

// Tokens where engines that pack, hash or index by token bits go wrong
// (sign, byte and 16-bit boundaries, the int32 limits), then the edges of
// the double-array engine's directly coded tokens (2^18) and of its 30-bit
// codes. New entries go at the end so that existing corpus files keep their
// meaning.
constexpr Token kExtremeTokens[] = {
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
static_assert(kFirstExtremeByte + std::size(kExtremeTokens) <= 0xFF);

// The mutant named by KVPREFIX_FUZZ_MUTANT ("" when unset), read once.
const std::string& MutantName() {
  static const std::string name = [] {
    const char* value = std::getenv("KVPREFIX_FUZZ_MUTANT");
    const std::string mutant = value == nullptr ? "" : value;
    try {
      if (!mutant.empty()) test::MakeMutant(mutant);
    } catch (const std::invalid_argument& error) {
      // fuzz/teeth.sh reads the list from the last line.
      std::string names =
          fmt::format("{} {}", test::MutantName(test::MutantBug::kNone),
                      test::MutantCacheName(test::MutantCacheBug::kNone));
      for (std::string_view name : test::MutantNames()) {
        names += fmt::format(" {}", name);
      }
      std::fprintf(stderr, "KVPREFIX_FUZZ_MUTANT: %s\nmutants: %s\n",
                   error.what(), names.c_str());
      std::exit(2);
    }
    return mutant;
  }();
  return name;
}

// True when KVPREFIX_FUZZ_MUTANT names an index mutant or "mutant-baseline":
// an unbounded token trie, checked against an unbounded reference whatever
// the cache byte says.
bool MutantIsIndexOnly() {
  static const bool index_only = [] {
    const std::string& name = MutantName();
    const std::vector<std::string_view> index = test::IndexMutantNames();
    return name == test::MutantName(test::MutantBug::kNone) ||
           std::find(index.begin(), index.end(), name) != index.end();
  }();
  return index_only;
}

CacheOptions ConsumeCacheOptions(FuzzedDataProvider& provider) {
  const auto byte = provider.ConsumeIntegral<std::uint8_t>();
  CacheOptions options;
  options.page_size = 1 + (byte & kPageSizeBits);
  const std::size_t policy_number =
      ((byte >> kPolicyLowShift) & 1) | (byte >> kPolicyHighShift) << 1;
  options.policy =
      kEvictionPolicies[policy_number % kEvictionPolicies.size()].policy;
  if ((byte & kBoundedBit) != 0) {
    options.capacity = provider.ConsumeIntegral<std::uint8_t>();
    if (options.capacity == kWideCapacityByte) {
      options.capacity = provider.ConsumeIntegral<std::uint16_t>();
    }
  }
  if (MutantIsIndexOnly()) return CacheOptions{};
  return options;
}

// Fresh, empty engines under test, built with `options` (see the top
// comment).
std::vector<std::unique_ptr<PrefixIndex>> MakeEnginesUnderTest(
    const CacheOptions& options) {
  std::vector<std::unique_ptr<PrefixIndex>> engines;
  if (!MutantName().empty()) {
    engines.push_back(test::MakeMutant(MutantName(), options));
    return engines;
  }
  for (std::string_view name : EngineNames()) {
    if (name != ReferenceTrie::kName) {
      engines.push_back(MakeEngine(name, options));
    }
  }
  return engines;
}

Token ConsumeToken(FuzzedDataProvider& provider, Token alphabet_size) {
  const auto byte = provider.ConsumeIntegral<std::uint8_t>();
  if (byte < kFirstExtremeByte) return byte % alphabet_size;
  const std::size_t extreme = byte - kFirstExtremeByte;
  if (extreme < std::size(kExtremeTokens)) return kExtremeTokens[extreme];
  return provider.ConsumeIntegral<Token>();
}

Operation ConsumeOperation(FuzzedDataProvider& provider, Token alphabet_size,
                           const std::vector<Operation>& history) {
  const auto op = provider.ConsumeIntegral<std::uint8_t>();
  constexpr Operation::Kind kKinds[] = {
      Operation::Kind::kInsert, Operation::Kind::kMatch,
      Operation::Kind::kAccess, Operation::Kind::kAccess};
  Operation operation{kKinds[op & kKindBits], {}};
  if ((op & kDerivedBit) != 0 && !history.empty()) {
    const std::vector<Token>& earlier =
        history[provider.ConsumeIntegralInRange<std::size_t>(
                    0, history.size() - 1)]
            .tokens;
    const std::size_t keep =
        provider.ConsumeIntegral<std::uint8_t>() % (earlier.size() + 1);
    operation.tokens.assign(earlier.begin(), earlier.begin() + keep);
  }
  for (int i = op >> kFreshShift; i > 0; --i) {
    operation.tokens.push_back(ConsumeToken(provider, alphabet_size));
  }
  if (operation.tokens.size() > kMaxSequenceTokens) {
    operation.tokens.resize(kMaxSequenceTokens);
  }
  return operation;
}

// Replays all but the last operation on a fresh `engine` (matches too: a
// broken engine's match may change its state), then describes its answer to
// the last one.
std::string AnswerToLast(PrefixIndex& engine,
                         const std::vector<Operation>& history) {
  for (std::size_t i = 0; i + 1 < history.size(); ++i) {
    switch (history[i].kind) {
      case Operation::Kind::kInsert:
        engine.Insert(history[i].tokens);
        break;
      case Operation::Kind::kMatch:
        engine.MatchPrefix(history[i].tokens);
        break;
      case Operation::Kind::kAccess:
        engine.Access(history[i].tokens);
        break;
    }
  }
  const Operation& last = history.back();
  switch (last.kind) {
    case Operation::Kind::kInsert: {
      const NodeId node = engine.Insert(last.tokens);
      return fmt::format(
          "insert returns node {}, node_count {}, evicted_count {}", node,
          engine.node_count(), engine.evicted_count());
    }
    case Operation::Kind::kMatch: {
      const Match match = engine.MatchPrefix(last.tokens);
      return fmt::format("matched_length {}, cache_node {}",
                         match.matched_length, match.cache_node);
    }
    case Operation::Kind::kAccess: {
      const Match match = engine.Access(last.tokens);
      const Match after = engine.MatchPrefix(last.tokens);
      return fmt::format(
          "access matches (matched_length {}, cache_node {}), then "
          "(matched_length {}, cache_node {}); node_count {}, evicted_count "
          "{}",
          match.matched_length, match.cache_node, after.matched_length,
          after.cache_node, engine.node_count(), engine.evicted_count());
    }
  }
  return "";
}

[[noreturn]] void ReportAndAbort(const std::string& report,
                                 const DifferentialChecker& checker) {
  const std::vector<Operation>& history = checker.history();
  std::string text = report + "every engine's answer to the last operation:\n";
  auto reference = MakeEngine(ReferenceTrie::kName, checker.options());
  text += fmt::format("  {}: {}\n", reference->name(),
                      AnswerToLast(*reference, history));
  for (auto& engine : MakeEnginesUnderTest(checker.options())) {
    text += fmt::format("  {}: {}\n", engine->name(),
                        AnswerToLast(*engine, history));
  }
  std::fputs(text.c_str(), stderr);
  std::abort();
}

}  // namespace
}  // namespace kvprefix

// ASan's defaults for this target (read at start-up; ASAN_OPTIONS still
// overrides them; without ASan nothing calls this). ASan keeps freed memory
// poisoned in a quarantine (256 MB by default) so that a use after free
// hits it; until the quarantine is full every allocation takes fresh pages.
// Here each input builds and frees its engines: about 1,100 allocations and
// 130 KB per corpus input, so a 256 MB quarantine spans some 2,000 inputs and
// fresh memory cost ~60 page faults per input. A use after free in an engine
// reads memory freed in the same operation or the next (a reallocated array
// or arena chunk, an evicted node), far less than 16 MB of frees earlier, so
// 16 MB finds what 256 MB does; it cut the faults by 60% and the time per
// input by 15% (fuzz/README.md, "Speed").
extern "C" const char* __asan_default_options() {
  return "quarantine_size_mb=16";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  if (size > kMaxInputBytes) return 0;
  FuzzedDataProvider provider(data, size);
  const Token alphabet_size =
      1 + provider.ConsumeIntegral<std::uint8_t>() % kAlphabetSizes;
  const CacheOptions options = ConsumeCacheOptions(provider);
  DifferentialChecker checker(options, MakeEnginesUnderTest(options));
  while (provider.remaining_bytes() > 0 &&
         checker.history().size() < kMaxOperations) {
    const auto report = checker.Apply(
        ConsumeOperation(provider, alphabet_size, checker.history()));
    if (report) ReportAndAbort(*report, checker);
  }
  return 0;
}
