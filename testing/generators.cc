// RapidCheck generators: see the header. Every choice comes from the tables
// of checking/recipe.h, so this file only says how RapidCheck draws and
// shrinks them.
#include "testing/generators.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <set>
#include <tuple>
#include <utility>

#include "checking/recipe.h"
#include "io/json_output.h"
#include "io/mooncake.h"

namespace kvprefix {

void showValue(const BatchInput& input, std::ostream& os) {
  std::string json;
  AppendBatchInputJson(input, json);
  json.pop_back();  // the newline
  os << json;
}

void showValue(const ServeInput& input, std::ostream& os) {
  std::string json;
  AppendServeDocumentJson(input, json);
  json.pop_back();  // the newline
  os << json;
}

void checking::showValue(const RoutedInput& routed, std::ostream& os) {
  std::string json;
  AppendRoutedDocumentJson(routed.input, routed.routing, json);
  json.pop_back();  // the newline
  os << json;
}

void checking::showValue(const Operation& operation, std::ostream& os) {
  os << FormatOperation(operation);
}

namespace test {
namespace {

using checking::Derivation;
using checking::Recipe;
using checking::Role;

// A choice from a checking::Weighted table. It does not shrink, as
// rc::gen::weightedElement, which takes only an initializer list.
template <typename T, std::size_t N>
rc::Gen<T> WeightedElementOf(
    const std::array<checking::Weighted<T>, N>& table) {
  std::vector<std::size_t> weights;
  std::vector<T> values;
  for (const checking::Weighted<T>& choice : table) {
    weights.push_back(choice.weight);
    values.push_back(choice.value);
  }
  return rc::gen::detail::WeightedElementGen<T>(std::move(weights),
                                                std::move(values));
}

rc::Gen<std::size_t> GenIn(checking::Range range) {
  return rc::gen::inRange<std::size_t>(range.low, range.high);
}

rc::Gen<std::size_t> GenAlphabetIndex() {
  return rc::gen::inRange<std::size_t>(0, checking::kAlphabetIndexLimit);
}

rc::Gen<std::vector<std::size_t>> GenFreshIndices(Role role) {
  return rc::gen::withSize([role](int size) {
    const auto count =
        rc::gen::mapcat(WeightedElementOf(checking::FreshRunWeights(role)),
                        [size, role](checking::FreshRun run) {
                          return GenIn(checking::FreshCount(run, size, role));
                        });
    return rc::gen::mapcat(count, [](std::size_t count) {
      return rc::gen::container<std::vector<std::size_t>>(count,
                                                          GenAlphabetIndex());
    });
  });
}

rc::Gen<Recipe> GenRecipe(Role role) {
  return rc::gen::map(
      rc::gen::tuple(WeightedElementOf(checking::DerivationWeights(role)),
                     rc::gen::inRange<std::size_t>(0, checking::kSourceLimit),
                     rc::gen::inRange<std::size_t>(0, checking::kPositionLimit),
                     GenFreshIndices(role)),
      [](std::tuple<Derivation, std::size_t, std::size_t,
                    std::vector<std::size_t>>
             parts) {
        auto& [kind, source, position, fresh] = parts;
        return Recipe{kind, source, position, std::move(fresh)};
      });
}

// The list is scaled down to RecipeCountScale(role) of the size; the
// recipes themselves get the full size back.
rc::Gen<std::vector<Recipe>> GenRecipes(Role role) {
  const double scale = checking::RecipeCountScale(role);
  const auto recipes =
      rc::gen::scale(scale, rc::gen::container<std::vector<Recipe>>(
                                rc::gen::scale(1 / scale, GenRecipe(role))));
  // nonEmpty keeps shrinking free to drop any recipe but the last one.
  return rc::gen::nonEmpty(recipes);
}

// `list` without its sequence `i` (drop), or with that sequence's last token
// removed (!drop).
SequenceList Edited(const SequenceList& list, std::size_t i, bool drop) {
  SequenceList edited;
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (k != i) {
      edited.Append(list[k]);
    } else if (!drop) {
      edited.Append(list[k].first(list[k].size() - 1));
    }
  }
  return edited;
}

// Shrinks of a built case, tried after the recipes' own shrinks: removing a
// recipe re-derives every later sequence, so it cannot always drop one
// sequence alone; these candidates drop one sequence, or one sequence's last
// token, and keep everything else as it is.
rc::Seq<BatchInput> ShrinkBuilt(const BatchInput& input) {
  std::vector<BatchInput> smaller;
  for (SequenceList BatchInput::*list :
       {&BatchInput::cached_sequences, &BatchInput::requests}) {
    const SequenceList& sequences = input.*list;
    for (std::size_t i = 0; i < sequences.size(); ++i) {
      if (list == &BatchInput::requests && sequences.size() == 1) break;
      BatchInput without = input;
      without.*list = Edited(sequences, i, /*drop=*/true);
      smaller.push_back(std::move(without));
    }
    for (std::size_t i = 0; i < sequences.size(); ++i) {
      if (sequences[i].empty()) continue;
      BatchInput shorter = input;
      shorter.*list = Edited(sequences, i, /*drop=*/false);
      smaller.push_back(std::move(shorter));
    }
  }
  return rc::seq::fromContainer(std::move(smaller));
}

}  // namespace

rc::Gen<Token> GenToken() {
  return rc::gen::mapcat(
      WeightedElementOf(checking::kTokenKindWeights),
      [](checking::TokenKind kind) -> rc::Gen<Token> {
        switch (kind) {
          case checking::TokenKind::kExtreme:
            return rc::gen::elementOf(checking::kExtremeTokens);
          case checking::TokenKind::kSmall:
            return rc::gen::inRange<Token>(0, checking::kSmallTokenLimit);
          case checking::TokenKind::kAny:
            break;
        }
        return rc::gen::arbitrary<Token>();
      });
}

rc::Gen<std::vector<Token>> GenAlphabet(Role role) {
  const auto count = rc::gen::mapcat(
      WeightedElementOf(checking::kAlphabetWidthWeights),
      [role](checking::AlphabetWidth width) {
        const checking::Range range = checking::AlphabetSize(width, role);
        return rc::gen::inRange(static_cast<int>(range.low),
                                static_cast<int>(range.high));
      });
  const auto base = rc::gen::mapcat(count, [](int count) {
    return rc::gen::container<std::vector<Token>>(count, GenToken());
  });
  return rc::gen::map(rc::gen::pair(base, rc::gen::arbitrary<bool>()),
                      [](std::pair<std::vector<Token>, bool> parts) {
                        auto& [alphabet, high_bit_copies] = parts;
                        if (!high_bit_copies) return alphabet;
                        return checking::WithHighBitCopies(std::move(alphabet));
                      });
}

rc::Gen<std::vector<Token>> GenRelatedSequence(SequenceList earlier,
                                               std::vector<Token> alphabet) {
  return rc::gen::map(GenRecipe(Role::kRequest),
                      [earlier = std::move(earlier),
                       alphabet = std::move(alphabet)](const Recipe& recipe) {
                        return checking::Build(recipe, earlier, alphabet);
                      });
}

rc::Gen<BatchInput> GenBatchInput() {
  const auto from_recipes =
      rc::gen::map(rc::gen::tuple(GenAlphabet(), GenRecipes(Role::kCached),
                                  GenRecipes(Role::kRequest)),
                   [](const std::tuple<std::vector<Token>, std::vector<Recipe>,
                                       std::vector<Recipe>>& parts) {
                     const auto& [alphabet, cached, requests] = parts;
                     return checking::BuildBatch(alphabet, cached, requests);
                   });
  return rc::gen::shrink(from_recipes, &ShrinkBuilt);
}

void showValue(const CacheWorkload& workload, std::ostream& os) {
  os << checking::FormatCacheOptions(workload.options) << ":";
  for (const checking::Operation& operation : workload.operations) {
    os << "\n  ";
    checking::showValue(operation, os);
  }
}

rc::Gen<CacheWorkload> GenCacheWorkload() {
  const auto built = rc::gen::map(
      rc::gen::tuple(
          WeightedElementOf(checking::kPolicyWeights),
          WeightedElementOf(checking::kPageSizeWeights),
          rc::gen::mapcat(WeightedElementOf(checking::kCapacityBandWeights),
                          [](checking::CapacityBand band) {
                            return GenIn(checking::CapacityPercent(band));
                          }),
          GenAlphabet(Role::kReplay), GenRecipes(Role::kReplay),
          rc::gen::container<std::vector<checking::Operation::Kind>>(
              WeightedElementOf(checking::kCacheOperationWeights))),
      [](const std::tuple<EvictionPolicy, std::uint64_t, std::size_t,
                          std::vector<Token>, std::vector<Recipe>,
                          std::vector<checking::Operation::Kind>>& parts) {
        const auto& [policy, page_size, percent, alphabet, recipes, kinds] =
            parts;
        const SequenceList sequences =
            checking::BuildAll(recipes, {}, alphabet, /*chain=*/true);
        CacheWorkload workload;
        workload.options = {
            .capacity = checking::CapacityOf(
                checking::DistinctPrefixes(sequences, page_size), percent),
            .policy = policy,
            .page_size = page_size};
        for (std::size_t i = 0; i < sequences.size(); ++i) {
          // Missing kinds (the lists shrink separately) default to access.
          workload.operations.push_back(
              {i < kinds.size() ? kinds[i] : checking::Operation::Kind::kAccess,
               std::vector<Token>(sequences[i].begin(), sequences[i].end())});
        }
        return workload;
      });
  return rc::gen::shrink(built, [](const CacheWorkload& workload) {
    std::vector<CacheWorkload> smaller;
    const auto& operations = workload.operations;
    for (std::size_t i = 0; i < operations.size(); ++i) {
      CacheWorkload without = workload;
      without.operations.erase(without.operations.begin() + i);
      smaller.push_back(std::move(without));
    }
    // A smaller capacity (so that shorter operations still evict), then
    // the token trie.
    const std::uint64_t capacity = workload.options.capacity;
    const std::set<std::uint64_t> lower =
        capacity == 0 ? std::set<std::uint64_t>{}
                      : std::set<std::uint64_t>{0, capacity / 2, capacity - 1};
    for (const std::uint64_t candidate : lower) {
      CacheWorkload lowered = workload;
      lowered.options.capacity = candidate;
      smaller.push_back(std::move(lowered));
    }
    if (workload.options.page_size > 1) {
      CacheWorkload tokens = workload;
      tokens.options.page_size = 1;
      smaller.push_back(std::move(tokens));
    }
    for (std::size_t i = 0; i < operations.size(); ++i) {
      if (operations[i].tokens.empty()) continue;
      CacheWorkload shorter = workload;
      shorter.operations[i].tokens.pop_back();
      smaller.push_back(std::move(shorter));
    }
    return rc::seq::fromContainer(std::move(smaller));
  });
}

std::string_view TokenSpreadName(TokenSpread spread) {
  switch (spread) {
    case TokenSpread::kMultiplesOf2To16:
      return "multiples of 2^16";
    case TokenSpread::kMultiplesOf2To18:
      return "multiples of 2^18";
    case TokenSpread::kSparse:
      return "sparse over int32";
    case TokenSpread::kAlternatingSigns:
      return "alternating signs";
  }
  return "";
}

void showValue(const AdversarialWorkload& workload, std::ostream& os) {
  os << fmt::format(
      "{}, {} parents x {} children, chains of {}, salt {}: {} nodes",
      TokenSpreadName(workload.spread), workload.parents, workload.fanout,
      workload.tail, workload.salt, workload.nodes());
}

namespace {

// Token number `i` of `spread` (wrapping in uint32, so multiples of 2^16
// cover the negative half of int32 too).
Token SpreadToken(TokenSpread spread, std::uint64_t i) {
  switch (spread) {
    case TokenSpread::kMultiplesOf2To16:
      return static_cast<Token>(static_cast<std::uint32_t>(i << 16));
    case TokenSpread::kMultiplesOf2To18:
      return static_cast<Token>(static_cast<std::uint32_t>(i << 18));
    case TokenSpread::kSparse:
      return static_cast<Token>(static_cast<std::uint32_t>(SplitMix64(i)));
    case TokenSpread::kAlternatingSigns: {
      const auto magnitude = static_cast<Token>(1 + (i / 2) % (1u << 30));
      return i % 2 == 0 ? magnitude : -magnitude;
    }
  }
  return 0;
}

}  // namespace

SequenceList BuildAdversarial(const AdversarialWorkload& workload) {
  const auto token = [&workload](std::uint64_t i) {
    return SpreadToken(workload.spread, workload.salt + i);
  };
  SequenceList sequences;
  std::vector<Token> sequence(2 + workload.tail);
  for (std::size_t p = 0; p < workload.parents; ++p) {
    sequence[0] = token(p);
    for (std::size_t c = 0; c < workload.fanout; ++c) {
      sequence[1] = token(c);
      for (std::size_t t = 0; t < workload.tail; ++t) {
        sequence[2 + t] = token(workload.parents + t);
      }
      sequences.Append(sequence);
    }
  }
  return sequences;
}

rc::Gen<AdversarialWorkload> GenAdversarialWorkload(std::size_t min_nodes) {
  const auto fanout = rc::gen::oneOf(rc::gen::inRange<std::size_t>(500, 3001),
                                     rc::gen::inRange<std::size_t>(16, 301),
                                     rc::gen::inRange<std::size_t>(2, 9));
  return rc::gen::map(
      rc::gen::tuple(rc::gen::elementOf(kTokenSpreads), fanout,
                     rc::gen::inRange<std::size_t>(0, 4),
                     rc::gen::inRange<std::uint64_t>(0, 1u << 20)),
      [min_nodes](const std::tuple<TokenSpread, std::size_t, std::size_t,
                                   std::uint64_t>& parts) {
        const auto& [spread, fanout, tail, salt] = parts;
        const std::size_t per_parent = 1 + fanout * (1 + tail);
        return AdversarialWorkload{
            .spread = spread,
            .parents = (min_nodes + per_parent - 1) / per_parent,
            .fanout = fanout,
            .tail = tail,
            .salt = salt};
      });
}

MatchEnd ClassifyMatchEnd(const SequenceList& cached, TokenSpan request,
                          std::size_t matched_length) {
  if (matched_length == 0) return MatchEnd::kRoot;
  const TokenSpan matched = request.first(matched_length);
  std::set<Token> next_tokens;
  for (const TokenSpan sequence : cached) {
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

rc::Gen<CacheOptions> GenServingCacheOptions() {
  return rc::gen::exec([] {
    CacheOptions options;
    options.model = *rc::gen::element(CacheModel::kSpec, CacheModel::kVllm,
                                      CacheModel::kSglang);
    options.page_size = *rc::gen::inRange<std::uint64_t>(1, 4);
    options.capacity = *rc::gen::weightedOneOf<std::uint64_t>(
        {{4, rc::gen::inRange<std::uint64_t>(0, 10)},
         {1, rc::gen::just(kUnbounded)}});
    switch (options.model) {
      case CacheModel::kSpec:
        options.policy = *rc::gen::element(
            EvictionPolicy::kLru, EvictionPolicy::kFifo, EvictionPolicy::kLfu);
        options.match_limit =
            *rc::gen::element(MatchLimit::kAll, MatchLimit::kAllButLast);
        break;
      case CacheModel::kVllm:
        options.match_limit = MatchLimit::kAllButLast;
        break;
      case CacheModel::kSglang:
        options.policy =
            *rc::gen::element(EvictionPolicy::kLru, EvictionPolicy::kFifo);
        options.match_limit =
            *rc::gen::element(MatchLimit::kAll, MatchLimit::kAllButLast);
        options.trigger = *rc::gen::element(EvictionTrigger::kAfterInsert,
                                            EvictionTrigger::kOnAllocate);
        break;
    }
    return options;
  });
}

rc::Gen<ServeInput> GenServeInput() {
  return rc::gen::exec([] {
    ServeInput input;
    input.replay.options = *GenServingCacheOptions();
    const auto count = *rc::gen::inRange<std::size_t>(0, 14);
    std::uint64_t arrival = 0;
    for (std::size_t i = 0; i < count; ++i) {
      input.replay.requests.Append(*rc::gen::container<std::vector<Token>>(
          *rc::gen::inRange<std::size_t>(0, 8), rc::gen::inRange<Token>(1, 4)));
      arrival += *rc::gen::element<std::uint64_t>(0, 0, 1, 2, 5);
      input.arrivals_us.push_back(arrival);
      input.output_lengths.push_back(*rc::gen::inRange<std::uint64_t>(0, 5));
    }
    input.serve.max_running = *rc::gen::inRange<std::uint64_t>(1, 5);
    input.serve.prefill_us_per_token = *rc::gen::inRange<std::uint64_t>(0, 3);
    input.serve.decode_us_per_token = *rc::gen::inRange<std::uint64_t>(0, 3);
    input.serve.overhead_us = *rc::gen::inRange<std::uint64_t>(0, 2);
    input.serve.output =
        *rc::gen::element(OutputMode::kNone, OutputMode::kUnique);
    return input;
  });
}

rc::Gen<checking::RoutedInput> GenRoutedInput(RouterPolicy policy) {
  return rc::gen::exec([policy] {
    checking::RoutedInput routed;
    routed.input = *GenServeInput();
    routed.routing.workers = *rc::gen::inRange<std::uint64_t>(1, 5);
    routed.routing.router =
        checking::RandomRouterSpec(policy, [](std::uint64_t below) {
          return *rc::gen::inRange<std::uint64_t>(0, below);
        });
    return routed;
  });
}

}  // namespace test
}  // namespace kvprefix
