// Drawing recipes with std::mt19937_64: see random_input.h.
#include "checking/random_input.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "checking/recipe.h"

namespace kvprefix::checking {
namespace {

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : random_(seed) {}

  // Uniform in [0, limit); limit > 0.
  std::size_t Below(std::size_t limit) { return random_() % limit; }
  std::size_t In(Range range) {
    return range.low + Below(range.high - range.low);
  }
  bool Coin() { return (random_() & 1) != 0; }
  std::uint64_t Bits() { return random_(); }

  template <typename T, std::size_t N>
  T Pick(const std::array<Weighted<T>, N>& table) {
    std::size_t total = 0;
    for (const Weighted<T>& choice : table) total += choice.weight;
    std::size_t at = Below(total);
    for (const Weighted<T>& choice : table) {
      if (at < choice.weight) return choice.value;
      at -= choice.weight;
    }
    return table.back().value;
  }

 private:
  std::mt19937_64 random_;
};

Token DrawToken(Draw& draw) {
  switch (draw.Pick(kTokenKindWeights)) {
    case TokenKind::kExtreme:
      return kExtremeTokens[draw.Below(kExtremeTokens.size())];
    case TokenKind::kSmall:
      return static_cast<Token>(draw.Below(kSmallTokenLimit));
    case TokenKind::kAny:
      break;
  }
  return static_cast<Token>(static_cast<std::uint32_t>(draw.Bits()));
}

std::vector<Token> DrawAlphabet(Draw& draw, Role role) {
  std::vector<Token> alphabet(
      draw.In(AlphabetSize(draw.Pick(kAlphabetWidthWeights), role)));
  for (Token& token : alphabet) token = DrawToken(draw);
  return draw.Coin() ? WithHighBitCopies(std::move(alphabet)) : alphabet;
}

std::vector<Recipe> DrawRecipes(Draw& draw, Role role, int size) {
  const std::size_t limit = std::max<std::size_t>(
      1, static_cast<std::size_t>(size * RecipeCountScale(role)));
  std::vector<Recipe> recipes(1 + draw.Below(limit));
  for (Recipe& recipe : recipes) {
    recipe.kind = draw.Pick(DerivationWeights(role));
    recipe.source = draw.Below(kSourceLimit);
    recipe.position = draw.Below(kPositionLimit);
    recipe.fresh.resize(
        draw.In(FreshCount(draw.Pick(FreshRunWeights(role)), size, role)));
    for (std::size_t& index : recipe.fresh) {
      index = draw.Below(kAlphabetIndexLimit);
    }
  }
  return recipes;
}

// The namespaces' own stream: the input stays what its seed drew.
constexpr std::uint64_t kNamespaceStream = 0x4E414D4553504143ull;

// One of kRandomNamespaces for each of `count` sequences.
std::vector<std::string> DrawNamespaces(Draw& draw, std::size_t count) {
  std::vector<std::string> names(count);
  for (std::string& name : names) {
    name = kRandomNamespaces[draw.Below(kRandomNamespaces.size())];
  }
  return names;
}

// A namespace of kRandomNamespaces other than `name`.
std::string OtherNamespace(Draw& draw, std::string_view name) {
  std::string other(name);
  while (other == name) {
    other = kRandomNamespaces[draw.Below(kRandomNamespaces.size())];
  }
  return other;
}

}  // namespace

void AddRandomNamespaces(std::uint64_t seed, ReplayInput& input) {
  Draw draw(seed ^ kNamespaceStream);
  if (draw.Below(4) != 0 || input.requests.empty()) return;
  std::vector<std::string> names = DrawNamespaces(draw, input.requests.size());
  const std::size_t copied = draw.Below(input.requests.size());
  SequenceList requests;
  std::vector<std::string> namespaces;
  for (std::size_t i = 0; i < input.requests.size(); ++i) {
    requests.Append(input.requests[i]);
    namespaces.push_back(names[i]);
    if (i == copied) {
      requests.Append(input.requests[i]);
      namespaces.push_back(OtherNamespace(draw, names[i]));
    }
  }
  input.requests = std::move(requests);
  input.namespaces = std::move(namespaces);
}

void RemoveRandomNamespaces(std::uint64_t seed, ReplayInput& input) {
  if (input.namespaces.empty() || input.requests.size() < 2) return;
  // The draws of AddRandomNamespaces, to find the copy it added.
  Draw draw(seed ^ kNamespaceStream);
  draw.Below(4);
  const std::size_t count = input.requests.size() - 1;
  DrawNamespaces(draw, count);
  const std::size_t copied = draw.Below(count);
  SequenceList requests;
  for (std::size_t i = 0; i < input.requests.size(); ++i) {
    if (i != copied + 1) requests.Append(input.requests[i]);
  }
  input.requests = std::move(requests);
  input.namespaces.clear();
}

void AddRandomNamespaces(std::uint64_t seed, BatchInput& input) {
  Draw draw(seed ^ kNamespaceStream);
  if (draw.Below(4) != 0 || input.cached_sequences.empty()) return;
  input.cached_namespaces = DrawNamespaces(draw, input.cached_sequences.size());
  input.namespaces = DrawNamespaces(draw, input.requests.size());
  const std::size_t copied = draw.Below(input.cached_sequences.size());
  input.requests.Append(input.cached_sequences[copied]);
  input.namespaces.push_back(
      OtherNamespace(draw, input.cached_namespaces[copied]));
}

ReplayInput RandomReplayInput(std::uint64_t seed, int size) {
  Draw draw(seed);
  const std::vector<Token> alphabet = DrawAlphabet(draw, Role::kReplay);
  const std::vector<Recipe> recipes = DrawRecipes(draw, Role::kReplay, size);
  ReplayInput replay;
  replay.requests = BuildAll(recipes, {}, alphabet, /*chain=*/true);
  replay.options.policy = draw.Pick(kPolicyWeights);
  replay.options.page_size = draw.Pick(kPageSizeWeights);
  replay.options.capacity =
      CapacityOf(DistinctPrefixes(replay.requests, replay.options.page_size),
                 draw.In(CapacityPercent(draw.Pick(kCapacityBandWeights))));
  return replay;
}

BatchInput RandomBatchInput(std::uint64_t seed, int size) {
  Draw draw(seed);
  const std::vector<Token> alphabet = DrawAlphabet(draw, Role::kCached);
  const std::vector<Recipe> cached = DrawRecipes(draw, Role::kCached, size);
  const std::vector<Recipe> requests = DrawRecipes(draw, Role::kRequest, size);
  return BuildBatch(alphabet, cached, requests);
}

}  // namespace kvprefix::checking
