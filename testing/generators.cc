// Workload generators: see the header.
#include "testing/generators.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

namespace kvprefix::testing {
namespace {

// How a sequence is made from an earlier one. kFresh comes first: RapidCheck
// shrinks an element choice toward the front, i.e. toward independence.
// kCommonPrefix takes the longest common prefix of two earlier sequences
// (two conversations sharing a system prompt); a match of it ends at a
// branch point whenever both go on past it.
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
// modulo its length) and fresh tokens as alphabet indices.
struct Recipe {
  Derivation kind;
  std::size_t source;
  std::size_t position;
  std::vector<std::size_t> fresh;
};

// Alphabet indices are taken modulo the alphabet size; shrinking moves them
// toward 0, the alphabet's first token.
rc::Gen<std::size_t> GenAlphabetIndex() {
  return rc::gen::inRange<std::size_t>(0, 256);
}

// Usually 1 to 3 + size / 8 fresh tokens: up to 15 at the default maximum
// size of 100. One time in 20 a long run of 200 to 600 tokens, so that a
// case crosses engines' internal boundaries (a radix arena chunk of 256
// tokens, a double-array's growth) at the default size. Never 0: a fresh
// empty sequence would make every sequence derived from it empty too;
// empty sequences come from prefixes cut at 0 instead.
rc::Gen<std::vector<std::size_t>> GenFreshIndices() {
  return rc::gen::withSize([](int size) {
    const auto count = rc::gen::weightedOneOf<std::size_t>(
        {{19, rc::gen::inRange<std::size_t>(1, 4 + size / 8)},
         {1, rc::gen::inRange<std::size_t>(200, 601)}});
    return rc::gen::mapcat(count, [](std::size_t count) {
      return rc::gen::container<std::vector<std::size_t>>(count,
                                                          GenAlphabetIndex());
    });
  });
}

// Which list a recipe builds. Requests lean harder on common prefixes, so
// that matches end at branch points often even in small cases.
enum class Role { kCached, kRequest };

rc::Gen<Recipe> GenRecipe(Role role) {
  const std::size_t common_prefix_weight = role == Role::kRequest ? 7 : 3;
  return rc::gen::map(
      rc::gen::tuple(rc::gen::weightedElement<Derivation>(
                         {{1, Derivation::kFresh},
                          {1, Derivation::kDuplicate},
                          {2, Derivation::kPrefix},
                          {2, Derivation::kExtension},
                          {2, Derivation::kNearCopy},
                          {common_prefix_weight, Derivation::kCommonPrefix}}),
                     rc::gen::inRange<std::size_t>(0, 1024),
                     rc::gen::inRange<std::size_t>(0, 64), GenFreshIndices()),
      [](std::tuple<Derivation, std::size_t, std::size_t,
                    std::vector<std::size_t>>
             parts) {
        auto& [kind, source, position, fresh] = parts;
        return Recipe{kind, source, position, std::move(fresh)};
      });
}

// Recipe lists are scaled down so that a case holds up to ~30 sequences:
// enough to share prefixes often, few enough to keep cases fast. The
// recipes themselves get the full size back. Lists are never empty: a case
// without a request checks no match, and one without cached sequences only
// matches at the root (an empty cache still comes as [[]] or [[],[]]).
rc::Gen<std::vector<Recipe>> GenRecipes(Role role) {
  constexpr double kCountScale = 0.3;
  const auto recipes = rc::gen::scale(
      kCountScale, rc::gen::container<std::vector<Recipe>>(
                       rc::gen::scale(1 / kCountScale, GenRecipe(role))));
  // nonEmpty keeps shrinking free to drop any recipe but the last one.
  return rc::gen::nonEmpty(recipes);
}

// The length of the longest common prefix of `sequence` and the first of
// `earlier` (searched from index `start` on) that branches off it after at
// least one shared token; sequence.size() when none does.
std::size_t BranchPoint(const Sequence& sequence, const Sequences& earlier,
                        std::size_t start) {
  for (std::size_t step = 0; step < earlier.size(); ++step) {
    const Sequence& other = earlier[(start + step) % earlier.size()];
    const std::size_t shared = std::mismatch(sequence.begin(), sequence.end(),
                                             other.begin(), other.end())
                                   .first -
                               sequence.begin();
    if (shared > 0 && shared < sequence.size() && shared < other.size()) {
      return shared;
    }
  }
  return sequence.size();
}

Sequence Build(const Recipe& recipe, const Sequences& earlier,
               const std::vector<Token>& alphabet) {
  const auto token = [&](std::size_t index) {
    return alphabet[index % alphabet.size()];
  };
  Sequence fresh;
  for (std::size_t index : recipe.fresh) fresh.push_back(token(index));
  if (earlier.empty() || recipe.kind == Derivation::kFresh) return fresh;

  Sequence derived = earlier[recipe.source % earlier.size()];
  switch (recipe.kind) {
    case Derivation::kFresh:
    case Derivation::kDuplicate:
      break;
    case Derivation::kPrefix:
      derived.resize(recipe.position % (derived.size() + 1));
      break;
    case Derivation::kExtension:
      derived.insert(derived.end(), fresh.begin(), fresh.end());
      break;
    case Derivation::kCommonPrefix:
      derived.resize(BranchPoint(derived, earlier, recipe.position));
      break;
    case Derivation::kNearCopy: {
      if (derived.empty()) return fresh;
      // Changes one token to another alphabet token (when there is one), so
      // the copy leaves its source exactly there.
      Token& changed = derived[recipe.position % derived.size()];
      for (std::size_t step = 0; step < alphabet.size(); ++step) {
        const Token candidate = token(recipe.source + step);
        if (candidate != changed) {
          changed = candidate;
          break;
        }
      }
      break;
    }
  }
  return derived;
}

// Builds the sequences of `recipes` in order, each one derived from `pool`
// plus the sequences built before it when `chain` is true.
Sequences BuildAll(const std::vector<Recipe>& recipes, Sequences pool,
                   const std::vector<Token>& alphabet, bool chain) {
  Sequences built;
  for (const Recipe& recipe : recipes) {
    built.push_back(Build(recipe, pool, alphabet));
    if (chain) pool.push_back(built.back());
  }
  return built;
}

// Shrinks of a built case, tried after the recipes' own shrinks: removing a
// recipe re-derives every later sequence, so it cannot always drop one
// sequence alone; these candidates drop one sequence, or one sequence's last
// token, and keep everything else as it is.
rc::Seq<BatchCase> ShrinkBuilt(const BatchCase& batch) {
  std::vector<BatchCase> smaller;
  for (Sequences BatchCase::*list :
       {&BatchCase::cached_sequences, &BatchCase::requests}) {
    for (std::size_t i = 0; i < (batch.*list).size(); ++i) {
      if (list == &BatchCase::requests && batch.requests.size() == 1) break;
      BatchCase without = batch;
      (without.*list).erase((without.*list).begin() + i);
      smaller.push_back(std::move(without));
    }
    for (std::size_t i = 0; i < (batch.*list).size(); ++i) {
      if ((batch.*list)[i].empty()) continue;
      BatchCase shorter = batch;
      (shorter.*list)[i].pop_back();
      smaller.push_back(std::move(shorter));
    }
  }
  return rc::seq::fromContainer(std::move(smaller));
}

std::uint32_t Bits(Token token) { return static_cast<std::uint32_t>(token); }
Token FromBits(std::uint32_t bits) { return static_cast<Token>(bits); }

}  // namespace

void showValue(const BatchCase& batch, std::ostream& os) {
  const auto json = [](const Sequences& sequences) {
    std::string text = "[";
    for (const Sequence& sequence : sequences) {
      if (text.size() > 1) text += ',';
      text += fmt::format("[{}]", fmt::join(sequence, ","));
    }
    return text + "]";
  };
  os << "{\"cached_sequences\":" << json(batch.cached_sequences)
     << ",\"requests\":" << json(batch.requests) << "}";
}

void showValue(const Operation& operation, std::ostream& os) {
  os << (operation.kind == Operation::Kind::kInsert ? "insert" : "match")
     << fmt::format(" [{}]", fmt::join(operation.tokens, ","));
}

SequenceList ToSequenceList(const Sequences& sequences) {
  SequenceList list;
  for (const Sequence& sequence : sequences) list.Append(sequence);
  return list;
}

rc::Gen<Token> GenToken() {
  using Limits = std::numeric_limits<Token>;
  static const std::vector<Token> kExtremes = {0,
                                               -1,
                                               1,
                                               Limits::min(),
                                               Limits::max(),
                                               Limits::min() + 1,
                                               Limits::max() - 1,
                                               65535,
                                               65536,
                                               -65536,
                                               1 << 30,
                                               255,
                                               256};
  return rc::gen::weightedOneOf<Token>({{4, rc::gen::elementOf(kExtremes)},
                                        {3, rc::gen::inRange<Token>(0, 8)},
                                        {2, rc::gen::arbitrary<Token>()}});
}

rc::Gen<std::vector<Token>> GenAlphabet() {
  const auto base = rc::gen::mapcat(
      rc::gen::weightedOneOf<int>(
          {{4, rc::gen::inRange(1, 5)}, {1, rc::gen::inRange(5, 65)}}),
      [](int count) {
        return rc::gen::container<std::vector<Token>>(count, GenToken());
      });
  return rc::gen::map(
      rc::gen::pair(base, rc::gen::arbitrary<bool>()),
      [](std::pair<std::vector<Token>, bool> parts) {
        auto& [alphabet, high_bit_copies] = parts;
        if (!high_bit_copies) return alphabet;
        const std::size_t size = alphabet.size();
        for (std::size_t i = 0; i < size; ++i) {
          alphabet.push_back(FromBits(Bits(alphabet[i]) ^ (1u << 16)));
          alphabet.push_back(FromBits(Bits(alphabet[i]) ^ (1u << 31)));
        }
        return alphabet;
      });
}

rc::Gen<Sequence> GenRelatedSequence(Sequences earlier,
                                     std::vector<Token> alphabet) {
  return rc::gen::map(
      GenRecipe(Role::kRequest),
      [earlier = std::move(earlier), alphabet = std::move(alphabet)](
          const Recipe& recipe) { return Build(recipe, earlier, alphabet); });
}

rc::Gen<BatchCase> GenBatchCase() {
  const auto from_recipes = rc::gen::map(
      rc::gen::tuple(GenAlphabet(), GenRecipes(Role::kCached),
                     GenRecipes(Role::kRequest)),
      [](const std::tuple<std::vector<Token>, std::vector<Recipe>,
                          std::vector<Recipe>>& parts) {
        const auto& [alphabet, cached_recipes, request_recipes] = parts;
        BatchCase batch;
        batch.cached_sequences =
            BuildAll(cached_recipes, {}, alphabet, /*chain=*/true);
        batch.requests = BuildAll(request_recipes, batch.cached_sequences,
                                  alphabet, /*chain=*/false);
        return batch;
      });
  return rc::gen::shrink(from_recipes, &ShrinkBuilt);
}

rc::Gen<std::vector<Operation>> GenOperations() {
  const auto kinds = rc::gen::scale(
      0.3, rc::gen::container<std::vector<Operation::Kind>>(rc::gen::element(
               Operation::Kind::kInsert, Operation::Kind::kMatch)));
  return rc::gen::map(
      rc::gen::tuple(GenAlphabet(), GenRecipes(Role::kCached), kinds),
      [](const std::tuple<std::vector<Token>, std::vector<Recipe>,
                          std::vector<Operation::Kind>>& parts) {
        const auto& [alphabet, recipes, kinds] = parts;
        const Sequences sequences = BuildAll(recipes, {}, alphabet, true);
        std::vector<Operation> operations;
        for (std::size_t i = 0; i < sequences.size(); ++i) {
          // Missing kinds (the lists shrink separately) default to insert.
          const auto kind =
              i < kinds.size() ? kinds[i] : Operation::Kind::kInsert;
          operations.push_back({kind, sequences[i]});
        }
        return operations;
      });
}

BatchCase GenerateBatchCase(std::uint64_t seed, int size) {
  return GenBatchCase()(rc::Random(seed), size).value();
}

MatchEnd ClassifyMatchEnd(const Sequences& cached, TokenSpan request,
                          std::size_t matched_length) {
  if (matched_length == 0) return MatchEnd::kRoot;
  const TokenSpan matched = request.first(matched_length);
  std::set<Token> next_tokens;
  for (const Sequence& sequence : cached) {
    if (sequence.size() > matched_length &&
        std::equal(matched.begin(), matched.end(), sequence.begin())) {
      next_tokens.insert(sequence[matched_length]);
    }
  }
  if (next_tokens.empty()) return MatchEnd::kPastSequences;
  return next_tokens.size() >= 2 ? MatchEnd::kBranchPoint
                                 : MatchEnd::kInsideSequence;
}

std::string_view MatchEndName(MatchEnd end) {
  switch (end) {
    case MatchEnd::kRoot:
      return "root";
    case MatchEnd::kPastSequences:
      return "past every cached sequence";
    case MatchEnd::kBranchPoint:
      return "branch point";
    case MatchEnd::kInsideSequence:
      return "inside a longer cached sequence";
  }
  return "";
}

}  // namespace kvprefix::testing
