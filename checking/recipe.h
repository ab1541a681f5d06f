// The shapes of generated inputs that find bugs in prefix indexes, in one
// home for both of their drivers: testing/generators.h draws them with
// RapidCheck (so that properties shrink their counterexamples) and
// checking/random_input.h with std::mt19937_64 (so that `kvprefix verify`
// needs no test library).
//
// Random independent sequences almost never share a prefix, so they never
// reach the code that matters (splits, siblings, IDs on shared paths). Here
// every sequence is derived from an earlier one: a duplicate, a prefix (down
// to the empty sequence), an extension, a near-copy with one token changed,
// the common prefix of two that branch apart, or a fresh sequence. Tokens come
// from a small per-case alphabet (so siblings collide), drawn from extreme
// values (0, -1, INT32_MIN, INT32_MAX, ...) and from values that differ from
// each other only in their high bits (so 16-bit truncation or a weak hash
// shows).
//
// A sequence is drawn as a Recipe (derivation kind, source index, cut
// position, alphabet indices) and built afterwards by Build, so RapidCheck
// shrinks recipes and alphabets independently: counterexamples shrink to a
// few short sequences over tokens near 0. The tables below say how often a
// driver picks each choice; both drivers read them. Everything here is a
// constant or a pure function: thread-safe, throwing only std::bad_alloc.
#ifndef KVPREFIX_CHECKING_RECIPE_H_
#define KVPREFIX_CHECKING_RECIPE_H_

#include <array>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "checking/differential.h"
#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix::checking {

// How a sequence is made from an earlier one. kCommonPrefix takes the longest
// common prefix of two earlier sequences (two conversations sharing a system
// prompt); a match of it ends at a branch point whenever both go on past it.
enum class Derivation {
  kFresh,
  kDuplicate,
  kPrefix,
  kExtension,
  kNearCopy,
  kCommonPrefix
};

// A sequence before it is built: which earlier sequence it derives from
// (source, taken modulo their number), where to cut or change it (position,
// modulo its length) and fresh tokens as alphabet indices (modulo the
// alphabet size; shrinking moves them toward 0, the alphabet's first token).
struct Recipe {
  Derivation kind;
  std::size_t source;
  std::size_t position;
  std::vector<std::size_t> fresh;
};

// A choice and its weight: a driver picks `value` with probability
// weight / (sum of the table's weights).
template <typename T>
struct Weighted {
  std::size_t weight;
  T value;
};

// A half-open range [low, high) of counts.
struct Range {
  std::size_t low;
  std::size_t high;
};

// Which list a recipe builds. Requests lean harder on common prefixes, so
// that matches end at branch points often even in small cases. The requests
// of a cache workload (kReplay) come back to earlier ones more often
// (duplicates and prefixes: a system prompt or a conversation seen again),
// so that hits touch nodes that eviction then has to rank.
enum class Role { kCached, kRequest, kReplay };

constexpr std::array<Weighted<Derivation>, 6> DerivationWeights(Role role) {
  if (role == Role::kReplay) {
    return {{{2, Derivation::kFresh},
             {6, Derivation::kDuplicate},
             {4, Derivation::kPrefix},
             {3, Derivation::kExtension},
             {2, Derivation::kNearCopy},
             {1, Derivation::kCommonPrefix}}};
  }
  return {{{1, Derivation::kFresh},
           {1, Derivation::kDuplicate},
           {2, Derivation::kPrefix},
           {2, Derivation::kExtension},
           {2, Derivation::kNearCopy},
           {role == Role::kRequest ? 7u : 3u, Derivation::kCommonPrefix}}};
}

// Recipe fields are drawn from [0, limit).
inline constexpr std::size_t kSourceLimit = 1024;
inline constexpr std::size_t kPositionLimit = 64;
inline constexpr std::size_t kAlphabetIndexLimit = 256;

// Fresh tokens per recipe: usually 1 to 3 + size / 8 (up to 15 at the default
// maximum size of 100); one time in 20 a long run of 200 to 600 tokens, so
// that a case crosses engines' internal boundaries (a radix arena chunk of
// 256 tokens, a double-array's growth). A cache workload's requests take 1
// to 3 fresh tokens at any size and a long run one time in 200: a capacity
// near the distinct prefixes then keeps many short branches for eviction to
// rank, instead of being spent on one long request's own tail. Never 0: a
// fresh empty sequence would make every sequence derived from it empty too;
// empty sequences come from prefixes cut at 0 instead.
enum class FreshRun { kShort, kLong };
constexpr std::array<Weighted<FreshRun>, 2> FreshRunWeights(Role role) {
  return {{{role == Role::kReplay ? 199u : 19u, FreshRun::kShort},
           {1, FreshRun::kLong}}};
}
constexpr Range FreshCount(FreshRun run, int size, Role role) {
  if (run == FreshRun::kLong) return Range{200, 601};
  return role == Role::kReplay
             ? Range{1, 4}
             : Range{1, 4 + static_cast<std::size_t>(size) / 8};
}

// One alphabet token: mostly an extreme value or a small one (0 to 7),
// sometimes any int32.
enum class TokenKind { kExtreme, kSmall, kAny };
inline constexpr std::array<Weighted<TokenKind>, 3> kTokenKindWeights = {
    {{4, TokenKind::kExtreme}, {3, TokenKind::kSmall}, {2, TokenKind::kAny}}};
inline constexpr Token kSmallTokenLimit = 8;
// Where engines that pack, hash or index by token bits go wrong: sign,
// 16-bit and byte boundaries, the int32 limits.
inline constexpr std::array<Token, 13> kExtremeTokens = {
    0,
    -1,
    1,
    std::numeric_limits<Token>::min(),
    std::numeric_limits<Token>::max(),
    std::numeric_limits<Token>::min() + 1,
    std::numeric_limits<Token>::max() - 1,
    65535,
    65536,
    -65536,
    1 << 30,
    255,
    256};

// A per-case alphabet: 1 to 4 tokens most of the time (siblings collide), up
// to 64 sometimes (wide nodes); half the time each token also comes with
// copies that differ only in bit 16 or bit 31 (WithHighBitCopies). A cache
// workload's narrow alphabet has 2 to 6 tokens: over one token the trie is a
// single chain, where every policy evicts the same node.
enum class AlphabetWidth { kNarrow, kWide };
inline constexpr std::array<Weighted<AlphabetWidth>, 2> kAlphabetWidthWeights =
    {{{4, AlphabetWidth::kNarrow}, {1, AlphabetWidth::kWide}}};
constexpr Range AlphabetSize(AlphabetWidth width, Role role) {
  if (width == AlphabetWidth::kWide) return Range{5, 65};
  return role == Role::kReplay ? Range{2, 7} : Range{1, 5};
}

// `alphabet` followed by, for each of its tokens, the token with bit 16
// flipped and the token with bit 31 flipped.
std::vector<Token> WithHighBitCopies(std::vector<Token> alphabet);

// Recipe lists hold 1 to about size * RecipeCountScale(role) recipes (up to
// ~30 at size 100; a cache workload up to ~80, since eviction order matters
// only once many short requests have come and gone): enough to share
// prefixes often, few enough to keep cases fast. Lists are never empty: a
// case without a request checks no match, and one without cached sequences
// only matches at the root (an empty cache still comes as [[]] or [[],[]]).
constexpr double RecipeCountScale(Role role) {
  return role == Role::kReplay ? 1.5 : 0.3;
}

// The sequence `recipe` makes from `earlier` (may be empty: then every
// recipe is fresh) over `alphabet` (not empty). O(result length + the
// earlier tokens a common prefix is searched in).
std::vector<Token> Build(const Recipe& recipe, const SequenceList& earlier,
                         std::span<const Token> alphabet);

// The batch input of `cached` recipes, each derived from the cached
// sequences built before it, and of `requests` recipes, each derived from
// the cached sequences.
BatchInput BuildBatch(std::span<const Token> alphabet,
                      std::span<const Recipe> cached,
                      std::span<const Recipe> requests);

// Builds `recipes` in order; each derives from `pool` and, if `chain`, from
// the sequences built before it.
SequenceList BuildAll(std::span<const Recipe> recipes, SequenceList pool,
                      std::span<const Token> alphabet, bool chain);

// --- Cache workloads (SPEC §8) ---------------------------------------------
//
// A cache workload is a chain of recipes (each sequence derived from the ones
// before it, as a conversation's turns are) run as operations on a cache
// whose options are drawn too. The capacity is drawn as a percentage of the
// workload's distinct prefixes D (in pages), so it is small where the
// workload is: below D (half the cases) the cache must evict, at or above D
// it must answer as SPEC §3's unbounded replay does.

// Mostly accesses, the serving step; inserts and matches interleave.
inline constexpr std::array<Weighted<Operation::Kind>, 3>
    kCacheOperationWeights = {{{3, Operation::Kind::kAccess},
                               {1, Operation::Kind::kInsert},
                               {1, Operation::Kind::kMatch}}};
// Every policy of kEvictionPolicies, equally often.
inline constexpr auto kPolicyWeights = [] {
  std::array<Weighted<EvictionPolicy>, kEvictionPolicies.size()> weights{};
  for (std::size_t i = 0; i < weights.size(); ++i) {
    weights[i] = {1, kEvictionPolicies[i].policy};
  }
  return weights;
}();
// Page sizes 1 to 3 (1, the token trie, as often as the others together).
inline constexpr std::array<Weighted<std::uint64_t>, 3> kPageSizeWeights = {
    {{2, 1}, {1, 2}, {1, 3}}};
// The capacity in percent of D, from 0 to 200: mostly 20% to 99% of D,
// where eviction has to choose among many nodes that it keeps; sometimes far
// below (little survives a request) or at and above D (no eviction).
enum class CapacityBand { kTight, kSmall, kCovering };
inline constexpr std::array<Weighted<CapacityBand>, 3> kCapacityBandWeights = {
    {{3, CapacityBand::kTight},
     {1, CapacityBand::kSmall},
     {1, CapacityBand::kCovering}}};
constexpr Range CapacityPercent(CapacityBand band) {
  return band == CapacityBand::kTight   ? Range{20, 100}
         : band == CapacityBand::kSmall ? Range{0, 20}
                                        : Range{100, 201};
}

// The distinct non-empty prefixes of `sequences` in pages of `page_size`
// (a trailing partial page dropped): the nodes of their unbounded trie, the
// D above. O(tokens * log nodes).
std::uint64_t DistinctPrefixes(const SequenceList& sequences,
                               std::uint64_t page_size);

// percent % of `distinct`, rounded down.
constexpr std::uint64_t CapacityOf(std::uint64_t distinct,
                                   std::size_t percent) {
  return distinct * percent / 100;
}

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_RECIPE_H_
