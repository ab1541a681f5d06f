// Building sequences from recipes: see recipe.h.
#include "checking/recipe.h"

#include <algorithm>
#include <cstdint>

#include "engines/registry.h"
#include "reference/reference_trie.h"

namespace kvprefix::checking {
namespace {

// The length of the longest common prefix of `sequence` and the first of
// `earlier` (searched from index `start` on) that branches off it after at
// least one shared token; sequence.size() when none does.
std::size_t BranchPoint(TokenSpan sequence, const SequenceList& earlier,
                        std::size_t start) {
  for (std::size_t step = 0; step < earlier.size(); ++step) {
    const TokenSpan other = earlier[(start + step) % earlier.size()];
    const std::size_t shared = static_cast<std::size_t>(
        std::ranges::mismatch(sequence, other).in1 - sequence.begin());
    if (shared > 0 && shared < sequence.size() && shared < other.size()) {
      return shared;
    }
  }
  return sequence.size();
}

Token FlipBit(Token token, int bit) {
  return static_cast<Token>(static_cast<std::uint32_t>(token) ^ (1u << bit));
}

}  // namespace

std::vector<Token> WithHighBitCopies(std::vector<Token> alphabet) {
  const std::size_t size = alphabet.size();
  for (std::size_t i = 0; i < size; ++i) {
    alphabet.push_back(FlipBit(alphabet[i], 16));
    alphabet.push_back(FlipBit(alphabet[i], 31));
  }
  return alphabet;
}

std::vector<Token> Build(const Recipe& recipe, const SequenceList& earlier,
                         std::span<const Token> alphabet) {
  const auto token = [&](std::size_t index) {
    return alphabet[index % alphabet.size()];
  };
  std::vector<Token> fresh;
  for (std::size_t index : recipe.fresh) fresh.push_back(token(index));
  if (earlier.empty() || recipe.kind == Derivation::kFresh) return fresh;

  const TokenSpan source = earlier[recipe.source % earlier.size()];
  std::vector<Token> derived(source.begin(), source.end());
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
      derived.resize(BranchPoint(source, earlier, recipe.position));
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

SequenceList BuildAll(std::span<const Recipe> recipes, SequenceList pool,
                      std::span<const Token> alphabet, bool chain) {
  SequenceList built;
  for (const Recipe& recipe : recipes) {
    const std::vector<Token> sequence = Build(recipe, pool, alphabet);
    built.Append(sequence);
    if (chain) pool.Append(sequence);
  }
  return built;
}

BatchInput BuildBatch(std::span<const Token> alphabet,
                      std::span<const Recipe> cached,
                      std::span<const Recipe> requests) {
  BatchInput input;
  input.cached_sequences = BuildAll(cached, {}, alphabet, /*chain=*/true);
  input.requests =
      BuildAll(requests, input.cached_sequences, alphabet, /*chain=*/false);
  return input;
}

std::uint64_t DistinctPrefixes(const SequenceList& sequences,
                               std::uint64_t page_size) {
  const auto trie =
      MakeEngine(ReferenceTrie::kName, CacheOptions{.page_size = page_size});
  for (const TokenSpan sequence : sequences) trie->Insert(sequence);
  return trie->node_count();
}

}  // namespace kvprefix::checking
