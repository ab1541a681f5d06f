// What the checked inputs exercised: see statistics.h.
#include "verify/statistics.h"

#include <fmt/format.h>

#include "engines/registry.h"
#include "kvprefix/paged_index.h"
#include "reference/reference_trie.h"

namespace kvprefix::verify {
namespace {

double Percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0
             ? 0.0
             : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// Counts `match` of a request as an empty match or a full hit: every whole
// page of the `limit_tokens` tokens the match limit lets it cover (SPEC
// §9.1), pages of `page_size` tokens. Returns false for an empty match.
bool ClassifyLength(const Match& match, std::uint64_t limit_tokens,
                    std::uint64_t page_size, InputStatistics& statistics) {
  ++statistics.requests;
  if (match.matched_length == 0) {
    ++statistics.empty_matches;
    return false;
  }
  if (match.matched_length == limit_tokens - limit_tokens % page_size) {
    ++statistics.full_hits;
  }
  return true;
}

// Also counts a match on `trie` (the reference, holding the nodes the match
// was taken against) that ends inside an edge.
void Classify(const ReferenceTrie& trie, const Match& match,
              std::uint64_t limit_tokens, std::uint64_t page_size,
              InputStatistics& statistics) {
  ++statistics.trie_requests;
  if (ClassifyLength(match, limit_tokens, page_size, statistics) &&
      trie.child_count(match.cache_node) == 1) {
    ++statistics.inside_edge;
  }
}

}  // namespace

void InputStatistics::Add(const BatchInput& input) {
  ReferenceTrie reference;
  for (TokenSpan sequence : input.cached_sequences) reference.Insert(sequence);
  for (TokenSpan request : input.requests) {
    Classify(reference, reference.MatchPrefix(request), request.size(), 1,
             *this);
  }
}

void InputStatistics::Add(const ReplayInput& input) {
  const CacheOptions& options = input.options;
  const auto limit_tokens = [&options](TokenSpan request) {
    return MatchLimitTokens(options.match_limit, request.size(),
                            options.page_size);
  };
  std::uint64_t evicted = 0;
  if (options.model == CacheModel::kSpec) {
    // PagedIndex keeps the reference's node IDs (it maps pages to symbols),
    // so its engine() answers for the nodes its matches name; the match is
    // step 1's, under the match limit, taken before the insert changes the
    // node's children.
    PagedIndex<ReferenceTrie> reference(options);
    for (TokenSpan request : input.requests) {
      const std::uint64_t limit = limit_tokens(request);
      Classify(reference.engine(), reference.MatchPrefix(request.first(limit)),
               limit, options.page_size, *this);
      reference.Access(request);
    }
    evicted = reference.evicted_count();
  } else {
    // The model's own reference (a block pool, a radix cache): its IDs are
    // no trie's nodes, so only the lengths are classified.
    const auto reference = MakeEngine(ReferenceTrie::kName, options);
    for (TokenSpan request : input.requests) {
      ClassifyLength(reference->Access(request), limit_tokens(request),
                     options.page_size, *this);
    }
    evicted = reference->evicted_count();
  }
  ++documents;
  evicting_documents += evicted > 0 ? 1 : 0;
  evicted_nodes += evicted;
  ++policy_documents[EvictionPolicyIndex(options.policy)];
  ++page_sizes[options.page_size];
}

void InputStatistics::Merge(const InputStatistics& other) {
  requests += other.requests;
  empty_matches += other.empty_matches;
  full_hits += other.full_hits;
  inside_edge += other.inside_edge;
  trie_requests += other.trie_requests;
  documents += other.documents;
  evicting_documents += other.evicting_documents;
  evicted_nodes += other.evicted_nodes;
  for (std::size_t i = 0; i < policy_documents.size(); ++i) {
    policy_documents[i] += other.policy_documents[i];
  }
  for (const auto& [page_size, count] : other.page_sizes) {
    page_sizes[page_size] += count;
  }
}

std::string InputStatistics::Format() const {
  std::string text;
  if (requests > 0) {
    text += fmt::format(
        "exercised: {} requests: {:.1f}% empty matches, {:.1f}% full hits",
        requests, Percent(empty_matches, requests),
        Percent(full_hits, requests));
    if (trie_requests > 0) {
      text += fmt::format(", {:.1f}% end inside an edge",
                          Percent(inside_edge, trie_requests));
    }
    if (trie_requests > 0 && trie_requests < requests) {
      text += fmt::format(" (of the {} of model spec)", trie_requests);
    }
    text += '\n';
  }
  if (documents > 0) {
    text += fmt::format(
        "exercised: {} replay documents: {:.1f}% evict ({} nodes), policy",
        documents, Percent(evicting_documents, documents), evicted_nodes);
    for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
      text += fmt::format(
          " {} {:.1f}%", entry.name,
          Percent(policy_documents[EvictionPolicyIndex(entry.policy)],
                  documents));
    }
    text += ", page size";
    for (const auto& [page_size, count] : page_sizes) {
      text += fmt::format(" {} {:.1f}%", page_size, Percent(count, documents));
    }
    text += '\n';
  }
  return text;
}

}  // namespace kvprefix::verify
