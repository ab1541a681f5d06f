// SPEC §9's models checked against a second implementation and against the
// rules they must keep, on small worlds searched exhaustively (every request
// list over the alphabet {1, 2} of 1 to 4 requests of 0 to 3 tokens, every
// capacity 0 to 4 and unbounded, page sizes 1 and 2, every policy, match
// limit and trigger the model admits) and on larger random ones (RapidCheck).
//
// The second implementation is the baseline of testing/model_mutants.h,
// written from SPEC §9 independently of reference/. Each model mutant must
// differ from the reference somewhere in the small world; the test prints
// the first counterexample, so the log shows what each bug looks like.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "models/sglang/reference_radix_cache.h"
#include "testing/model_mutants.h"

namespace kvprefix::test {
namespace {

using Document = std::vector<std::vector<Token>>;

// Every sequence over {1, 2} of 0 to 3 tokens.
std::vector<std::vector<Token>> SmallSequences() {
  std::vector<std::vector<Token>> all = {{}};
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].size() == 3) continue;
    for (Token t : {1u, 2u}) {
      std::vector<Token> longer = all[i];
      longer.push_back(t);
      all.push_back(longer);
    }
  }
  return all;
}

// Calls `visit` with every document of 1 to `max_requests` small sequences.
void ForEachSmallDocument(std::size_t max_requests,
                          const std::function<bool(const Document&)>& visit) {
  static const std::vector<std::vector<Token>> sequences = SmallSequences();
  Document document;
  std::function<bool()> extend = [&]() {
    if (!document.empty() && !visit(document)) return false;
    if (document.size() == max_requests) return true;
    for (const auto& sequence : sequences) {
      document.push_back(sequence);
      const bool go_on = extend();
      document.pop_back();
      if (!go_on) return false;
    }
    return true;
  };
  extend();
}

// Every option set of `model` the small world uses.
std::vector<CacheOptions> SmallOptions(CacheModel model) {
  std::vector<CacheOptions> all;
  for (std::uint64_t page : {1u, 2u}) {
    for (std::uint64_t capacity : {0u, 1u, 2u, 3u, 4u}) {
      for (int unbounded = 0; unbounded < 2; ++unbounded) {
        if (unbounded && capacity > 0) continue;
        CacheOptions options{.capacity = unbounded ? kUnbounded : capacity,
                             .page_size = page,
                             .model = model,
                             .match_limit = DefaultMatchLimit(model)};
        if (model == CacheModel::kVllm) {
          all.push_back(options);
          continue;
        }
        for (EvictionPolicy policy :
             {EvictionPolicy::kLru, EvictionPolicy::kFifo}) {
          for (MatchLimit limit : {MatchLimit::kAll, MatchLimit::kAllButLast}) {
            for (EvictionTrigger trigger : {EvictionTrigger::kAfterInsert,
                                            EvictionTrigger::kOnAllocate}) {
              options.policy = policy;
              options.match_limit = limit;
              options.trigger = trigger;
              all.push_back(options);
            }
          }
        }
      }
    }
  }
  return all;
}

std::string Describe(const CacheOptions& o, const Document& document) {
  return fmt::format("C={} P={} policy={} limit={} trigger={} requests={}",
                     o.bounded() ? std::to_string(o.capacity) : "unbounded",
                     o.page_size,
                     o.policy == EvictionPolicy::kFifo ? "fifo" : "lru",
                     NameOf(kMatchLimits, o.match_limit),
                     NameOf(kEvictionTriggers, o.trigger), document);
}

// The first place the engine `name` (a model mutant or baseline) answers
// `document` otherwise than the reference: an answer, node_count or
// evicted_count after a request, or MatchPrefix of any of the document's
// requests after it; nullopt if none.
std::optional<std::string> Difference(std::string_view name,
                                      const CacheOptions& options,
                                      const Document& document) {
  const auto reference = MakeEngine("reference", options);
  const auto other = MakeModelMutant(name, options);
  for (std::size_t i = 0; i < document.size(); ++i) {
    const Match want = reference->Access(document[i]);
    const Match got = other->Access(document[i]);
    if (want != got || reference->node_count() != other->node_count() ||
        reference->evicted_count() != other->evicted_count()) {
      return fmt::format(
          "{}: request {}: reference ({}, {}) nodes {} evicted {}, {} ({}, "
          "{}) nodes {} evicted {}",
          Describe(options, document), i, want.matched_length, want.cache_node,
          reference->node_count(), reference->evicted_count(), name,
          got.matched_length, got.cache_node, other->node_count(),
          other->evicted_count());
    }
    // What the caches hold: a bug can change it without changing this
    // request's answer (a wrong victim of equal size).
    for (const auto& probe : document) {
      const Match held = reference->MatchPrefix(probe);
      if (held != other->MatchPrefix(probe)) {
        return fmt::format(
            "{}: after request {}: MatchPrefix({}) reference "
            "({}, {}), {} ({}, {})",
            Describe(options, document), i, probe, held.matched_length,
            held.cache_node, name, other->MatchPrefix(probe).matched_length,
            other->MatchPrefix(probe).cache_node);
      }
    }
  }
  return std::nullopt;
}

// The first counterexample to `name` in the small world, or nullopt.
std::optional<std::string> SmallWorldDifference(std::string_view name,
                                                std::size_t max_requests) {
  std::optional<std::string> found;
  for (const CacheOptions& options : SmallOptions(*ModelMutantModel(name))) {
    ForEachSmallDocument(max_requests, [&](const Document& document) {
      found = Difference(name, options, document);
      return !found.has_value();
    });
    if (found) return found;
  }
  return std::nullopt;
}

TEST(ModelSmallWorldTest, BaselinesEqualTheReference) {
  for (std::string_view name :
       {VllmMutantName(VllmBug::kNone), SglangMutantName(SglangBug::kNone)}) {
    const auto difference = SmallWorldDifference(name, 4);
    EXPECT_FALSE(difference.has_value()) << *difference;
  }
}

TEST(ModelSmallWorldTest, EveryModelMutantIsCaught) {
  for (std::string_view name : ModelMutantNames()) {
    const auto difference = SmallWorldDifference(name, 4);
    ASSERT_TRUE(difference.has_value()) << name << " was not caught";
    std::cout << name << " caught: " << *difference << "\n";
  }
}

TEST(ModelSmallWorldTest, VllmPoolHoldsAtMostCChains) {
  for (const CacheOptions& options : SmallOptions(CacheModel::kVllm)) {
    if (!options.bounded()) continue;
    ForEachSmallDocument(4, [&](const Document& document) {
      const auto pool = MakeEngine("reference", options);
      for (const auto& request : document) {
        pool->Access(request);
        EXPECT_LE(pool->node_count(), options.capacity)
            << Describe(options, document);
      }
      return !::testing::Test::HasFailure();
    });
  }
}

// On-allocate evicts the whole need: when it evicts, it frees at least
// n − m tokens, or it ran out of candidates, which leaves only the locked
// path of m tokens (then refused) or that path and the insert (whole pages
// of the request).
template <typename Cache>
std::optional<std::string> ShortEviction(const CacheOptions& options,
                                         const Document& document) {
  Cache cache(options);
  std::uint64_t freed = 0;
  cache.SetEvictionListener([&](TokenSpan tokens) { freed += tokens.size(); });
  for (const auto& request : document) {
    const std::size_t n = request.size();
    const std::size_t key = MatchLimitTokens(options.match_limit, n, 1);
    const std::uint64_t m =
        cache.MatchPrefix(TokenSpan(request).first(key)).matched_length;
    freed = 0;
    cache.Access(request);
    const std::uint64_t whole = n / options.page_size * options.page_size;
    if (freed > 0 && freed < n - m && cache.size_tokens() != m &&
        cache.size_tokens() != whole) {
      return fmt::format("{}: freed {} of need {}, size {}",
                         Describe(options, document), freed, n - m,
                         cache.size_tokens());
    }
  }
  return std::nullopt;
}

TEST(ModelSmallWorldTest, SglangOnAllocateFreesTheWholeNeed) {
  for (const CacheOptions& options : SmallOptions(CacheModel::kSglang)) {
    if (options.trigger != EvictionTrigger::kOnAllocate) continue;
    ForEachSmallDocument(4, [&](const Document& document) {
      const auto problem =
          ShortEviction<ReferenceRadixCache>(options, document);
      EXPECT_FALSE(problem.has_value()) << *problem;
      return !problem.has_value();
    });
  }
}

// The property's teeth: it catches the mutant that evicts the shortfall.
TEST(ModelSmallWorldTest, ShortEvictionCatchesTheShortfallMutant) {
  std::optional<std::string> problem;
  for (const CacheOptions& options : SmallOptions(CacheModel::kSglang)) {
    if (options.trigger != EvictionTrigger::kOnAllocate) continue;
    ForEachSmallDocument(4, [&](const Document& document) {
      problem = ShortEviction<MutantRadixModel<SglangBug::kEvictsShortfall>>(
          options, document);
      return !problem.has_value();
    });
    if (problem) break;
  }
  ASSERT_TRUE(problem.has_value());
  std::cout << "mutant-sglang-evicts-shortfall: " << *problem << "\n";
}

// §8's unbounded LRU with the match limit all-but-last matches what vllm
// (unbounded) matches, on documents of whole pages where no request is a
// full hit (a prefix, in whole pages, of an earlier one).
TEST(ModelSmallWorldTest, SpecAllButLastEqualsUnboundedVllm) {
  for (std::uint64_t page : {1u, 2u}) {
    const CacheOptions spec{.page_size = page,
                            .match_limit = MatchLimit::kAllButLast};
    const CacheOptions vllm{.page_size = page,
                            .model = CacheModel::kVllm,
                            .match_limit = MatchLimit::kAllButLast};
    std::size_t compared = 0;
    ForEachSmallDocument(4, [&](const Document& document) {
      for (std::size_t i = 0; i < document.size(); ++i) {
        if (document[i].size() % page != 0) return true;
        for (std::size_t j = 0; j < i; ++j) {
          if (document[i].size() <= document[j].size() &&
              std::equal(document[i].begin(), document[i].end(),
                         document[j].begin())) {
            return true;
          }
        }
      }
      ++compared;
      const auto lru = MakeEngine("reference", spec);
      const auto pool = MakeEngine("reference", vllm);
      for (const auto& request : document) {
        EXPECT_EQ(lru->Access(request).matched_length,
                  pool->Access(request).matched_length)
            << "P=" << page << " " << fmt::format("{}", document);
      }
      return !::testing::Test::HasFailure();
    });
    EXPECT_GT(compared, 100u);
  }
}

// Larger random worlds: the baselines equal the reference.
RC_GTEST_PROP(ModelPropertyTest, BaselinesEqualTheReferenceOnRandomDocuments,
              ()) {
  const auto model = *rc::gen::element(CacheModel::kVllm, CacheModel::kSglang);
  CacheOptions options{.page_size = *rc::gen::inRange<std::uint64_t>(1, 4),
                       .model = model,
                       .match_limit = DefaultMatchLimit(model)};
  if (*rc::gen::arbitrary<bool>()) {
    options.capacity = *rc::gen::inRange<std::uint64_t>(0, 8);
  }
  if (model == CacheModel::kSglang) {
    options.policy =
        *rc::gen::element(EvictionPolicy::kLru, EvictionPolicy::kFifo);
    options.match_limit =
        *rc::gen::element(MatchLimit::kAll, MatchLimit::kAllButLast);
    options.trigger = *rc::gen::element(EvictionTrigger::kAfterInsert,
                                        EvictionTrigger::kOnAllocate);
  }
  const auto document = *rc::gen::container<Document>(
      rc::gen::container<std::vector<Token>>(rc::gen::inRange<Token>(1, 4)));
  const std::string_view baseline = model == CacheModel::kVllm
                                        ? VllmMutantName(VllmBug::kNone)
                                        : SglangMutantName(SglangBug::kNone);
  const auto difference = Difference(baseline, options, document);
  RC_ASSERT(!difference.has_value());
}

}  // namespace
}  // namespace kvprefix::test
