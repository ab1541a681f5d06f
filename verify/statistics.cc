// What the checked inputs exercised: see statistics.h.
#include "verify/statistics.h"

#include <fmt/format.h>

#include "kvprefix/paged_index.h"
#include "reference/reference_trie.h"

namespace kvprefix::verify {
namespace {

double Percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0
             ? 0.0
             : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// Classifies `match` of `request` on `trie` (the reference, holding the
// nodes the match was taken against), pages of `page_size` tokens.
void Classify(const ReferenceTrie& trie, TokenSpan request, const Match& match,
              std::uint64_t page_size, InputStatistics& statistics) {
  ++statistics.requests;
  if (match.matched_length == 0) {
    ++statistics.empty_matches;
    return;
  }
  if (match.matched_length == request.size() - request.size() % page_size) {
    ++statistics.full_hits;
  }
  if (trie.child_count(match.cache_node) == 1) ++statistics.inside_edge;
}

}  // namespace

void InputStatistics::Add(const BatchInput& input) {
  ReferenceTrie reference;
  for (TokenSpan sequence : input.cached_sequences) reference.Insert(sequence);
  for (TokenSpan request : input.requests) {
    Classify(reference, request, reference.MatchPrefix(request), 1, *this);
  }
}

void InputStatistics::Add(const ReplayInput& input) {
  // PagedIndex keeps the reference's node IDs (it maps pages to symbols),
  // so its engine() answers for the nodes its matches name.
  PagedIndex<ReferenceTrie> reference(input.options);
  for (TokenSpan request : input.requests) {
    Classify(reference.engine(), request, reference.MatchPrefix(request),
             input.options.page_size, *this);
    reference.Access(request);
  }
  ++documents;
  evicting_documents += reference.evicted_count() > 0 ? 1 : 0;
  evicted_nodes += reference.evicted_count();
  ++policy_documents[EvictionPolicyIndex(input.options.policy)];
  ++page_sizes[input.options.page_size];
}

void InputStatistics::Merge(const InputStatistics& other) {
  requests += other.requests;
  empty_matches += other.empty_matches;
  full_hits += other.full_hits;
  inside_edge += other.inside_edge;
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
        "exercised: {} requests: {:.1f}% empty matches, {:.1f}% full hits, "
        "{:.1f}% end inside an edge\n",
        requests, Percent(empty_matches, requests),
        Percent(full_hits, requests), Percent(inside_edge, requests));
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
