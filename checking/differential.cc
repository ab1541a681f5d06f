// The differential harness: see the header.
#include "checking/differential.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "engines/registry.h"
#include "io/json_strings.h"
#include "reference/reference_trie.h"

namespace kvprefix::checking {
namespace {

// Histories of fuzzing runs can be long; the report keeps their tail.
constexpr std::size_t kMaxReportedOperations = 50;
constexpr std::size_t kMaxReportedTokens = 64;

}  // namespace

std::string_view ComparisonName(Comparison comparison) {
  return comparison == Comparison::kLengths ? "lengths" : "all";
}

std::optional<Comparison> ParseComparison(std::string_view name) {
  for (Comparison comparison : {Comparison::kAll, Comparison::kLengths}) {
    if (name == ComparisonName(comparison)) return comparison;
  }
  return std::nullopt;
}

std::string DifferentialChecker::FormatMatch(const Match& match) const {
  if (comparison_ == Comparison::kLengths) {
    return fmt::format("(matched_length {})", match.matched_length);
  }
  return fmt::format("(matched_length {}, cache_node {})", match.matched_length,
                     match.cache_node);
}

bool DifferentialChecker::SameMatch(const Match& expected,
                                    const Match& actual) const {
  if (comparison_ == Comparison::kLengths) {
    return actual.matched_length == expected.matched_length;
  }
  return actual == expected;
}

std::string FormatTokens(TokenSpan tokens) {
  std::string text = "[";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i == kMaxReportedTokens) {
      text += fmt::format(",... {} tokens in all", tokens.size());
      break;
    }
    if (i > 0) text += ',';
    text += std::to_string(tokens[i]);
  }
  return text + "]";
}

std::string FormatOperation(const Operation& operation) {
  const char* verb = operation.kind == Operation::Kind::kInsert  ? "insert "
                     : operation.kind == Operation::Kind::kMatch ? "match "
                                                                 : "access ";
  std::string text = verb + FormatTokens(operation.tokens);
  if (!operation.name_space.empty()) {
    text += " in \"" + EscapeForMessage(operation.name_space, 256) + '"';
  }
  return text;
}

TokenSpan OperationTokens::Prepare(const Operation& operation) {
  if (!fold_) {
    if (!operation.name_space.empty()) {
      throw std::invalid_argument(
          "an operation in namespace \"" +
          EscapeForMessage(operation.name_space) +
          "\" in a run without namespaces (FoldNamespaces first)");
    }
    prepared_ = operation.tokens;
    return prepared_;
  }
  folded_.assign(operation.tokens.begin(), operation.tokens.end());
  if (!folded_.empty()) {
    folded_.front() =
        folder_.Fold(folder_.Intern(operation.name_space), folded_.front());
  }
  prepared_ = folded_;
  return prepared_;
}

TokenSpan OperationTokens::For(PrefixIndex& engine,
                               const Operation& operation) const {
  if (!fold_) return prepared_;
  auto* taker = dynamic_cast<NamespaceTaker*>(&engine);
  if (taker == nullptr) return prepared_;
  taker->SetNamespace(operation.name_space);
  return operation.tokens;
}

std::string FormatCacheOptions(const CacheOptions& options) {
  std::string text =
      options.bounded()
          ? fmt::format("capacity {}, {}, page size {}", options.capacity,
                        EvictionPolicyName(options.policy), options.page_size)
          : fmt::format("unbounded, page size {}", options.page_size);
  // SPEC §9's options, named only when not the seed's (spec, all), so that
  // reports of model spec read as before.
  if (options.model != CacheModel::kSpec ||
      options.match_limit != MatchLimit::kAll) {
    text += fmt::format(", model {}, match limit {}",
                        NameOf(kCacheModels, options.model),
                        NameOf(kMatchLimits, options.match_limit));
  }
  if (options.trigger != EvictionTrigger::kAfterInsert) {
    text +=
        fmt::format(", trigger {}", NameOf(kEvictionTriggers, options.trigger));
  }
  return text;
}

DifferentialChecker::DifferentialChecker()
    : DifferentialChecker(CacheOptions{}, [] {
        std::vector<std::unique_ptr<PrefixIndex>> engines;
        for (std::string_view name : EngineNames()) {
          if (name != ReferenceTrie::kName) engines.push_back(MakeEngine(name));
        }
        return engines;
      }()) {}

DifferentialChecker::DifferentialChecker(
    std::vector<std::unique_ptr<PrefixIndex>> engines)
    : DifferentialChecker(CacheOptions{}, std::move(engines)) {}

DifferentialChecker::DifferentialChecker(
    const CacheOptions& options,
    std::vector<std::unique_ptr<PrefixIndex>> engines)
    : DifferentialChecker(options, std::move(engines), Comparison::kAll) {}

DifferentialChecker::DifferentialChecker(
    const CacheOptions& options,
    std::vector<std::unique_ptr<PrefixIndex>> engines, Comparison comparison)
    : options_(options),
      comparison_(comparison),
      reference_(MakeEngine(ReferenceTrie::kName, options)),
      engines_(std::move(engines)) {
  if (!options.bounded() || comparison_ == Comparison::kLengths) return;
  evicted_ = std::make_unique<std::vector<EvictedPages>>(1 + engines_.size());
  for (std::size_t i = 0; i <= engines_.size(); ++i) {
    PrefixIndex& engine = i == 0 ? *reference_ : *engines_[i - 1];
    engine.SetEvictionListener((*evicted_)[i].Listener(options.page_size));
  }
}

void EvictedPages::Add(TokenSpan tokens, std::size_t page_size) {
  // A call may carry several nodes (a radix run's tail).
  const std::size_t start = tokens_.size();
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  for (std::size_t at = 0; at < tokens.size(); at += page_size) {
    pages_.emplace_back(start + at, std::min(page_size, tokens.size() - at));
  }
  sorted_ = false;
}

EvictionListener EvictedPages::Listener(std::size_t page_size) {
  return [this, page_size](TokenSpan tokens) { Add(tokens, page_size); };
}

std::optional<std::string> DifferentialChecker::Apply(
    const Operation& operation) {
  history_.push_back(operation);
  return ApplyLast();
}

std::optional<std::string> DifferentialChecker::Apply(Operation&& operation) {
  history_.push_back(std::move(operation));
  return ApplyLast();
}

void DifferentialChecker::FoldNamespaces() {
  if (!history_.empty()) {
    throw std::logic_error(
        "DifferentialChecker::FoldNamespaces after the first operation");
  }
  tokens_ = OperationTokens(true);
}

std::optional<std::string> DifferentialChecker::ApplyLast() {
  const Operation& operation = history_.back();
  const TokenSpan tokens = tokens_.Prepare(operation);
  if (evicted_) {
    for (EvictedPages& evicted : *evicted_) evicted.Clear();
  }
  switch (operation.kind) {
    case Operation::Kind::kMatch: {
      const Match expected = reference_->MatchPrefix(tokens);
      for (auto& engine : engines_) {
        const Match actual =
            engine->MatchPrefix(tokens_.For(*engine, operation));
        if (!SameMatch(expected, actual)) {
          return Report(*engine, FormatMatch(expected), FormatMatch(actual));
        }
      }
      return std::nullopt;
    }
    case Operation::Kind::kInsert: {
      const NodeId expected = reference_->Insert(tokens);
      for (std::size_t i = 0; i < engines_.size(); ++i) {
        PrefixIndex& engine = *engines_[i];
        const NodeId actual = engine.Insert(tokens_.For(engine, operation));
        if (comparison_ == Comparison::kLengths) continue;
        if (actual != expected) {
          return Report(engine, fmt::format("insert returns node {}", expected),
                        fmt::format("insert returns node {}", actual));
        }
        if (auto report = CompareAfterStep(i)) return report;
      }
      return std::nullopt;
    }
    case Operation::Kind::kAccess: {
      const Match expected = reference_->Access(tokens);
      const Match expected_after = reference_->MatchPrefix(tokens);
      for (std::size_t i = 0; i < engines_.size(); ++i) {
        PrefixIndex& engine = *engines_[i];
        const Match actual = engine.Access(tokens_.For(engine, operation));
        if (!SameMatch(expected, actual)) {
          return Report(engine, "access matches " + FormatMatch(expected),
                        "access matches " + FormatMatch(actual));
        }
        const Match actual_after =
            engine.MatchPrefix(tokens_.For(engine, operation));
        if (!SameMatch(expected_after, actual_after)) {
          return Report(
              engine,
              "after the access its tokens match " +
                  FormatMatch(expected_after),
              "after the access its tokens match " + FormatMatch(actual_after));
        }
        if (auto report = CompareAfterStep(i)) return report;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::string> DifferentialChecker::CompareAfterStep(
    std::size_t engine_index) {
  if (comparison_ == Comparison::kLengths) return std::nullopt;
  const PrefixIndex& engine = *engines_[engine_index];
  if (engine.node_count() != reference_->node_count()) {
    return Report(engine,
                  fmt::format("node_count {}", reference_->node_count()),
                  fmt::format("node_count {}", engine.node_count()));
  }
  if (engine.evicted_count() != reference_->evicted_count()) {
    return Report(engine,
                  fmt::format("evicted_count {}", reference_->evicted_count()),
                  fmt::format("evicted_count {}", engine.evicted_count()));
  }
  // A NamespaceTaker evicts pages of its own tokens, not the folded ones.
  if (!evicted_ || (tokens_.folds() &&
                    dynamic_cast<const NamespaceTaker*>(&engine) != nullptr)) {
    return std::nullopt;
  }
  EvictedPages& expected = (*evicted_)[0];
  EvictedPages& actual = (*evicted_)[1 + engine_index];
  expected.Sort();  // again for each engine: cheap once sorted
  actual.Sort();
  if (!actual.SamePages(expected)) {
    expected.Sort();  // shown in order, whichever way SamePages decided
    actual.Sort();
    return Report(engine, expected.Format(), actual.Format());
  }
  return std::nullopt;
}

void EvictedPages::Sort() {
  if (sorted_) return;
  sorted_ = true;
  // Every page is non-empty, so as many pages as tokens means one token
  // each (page size 1): sorting the tokens keeps page i = (i, 1).
  if (pages_.size() == tokens_.size()) {
    std::sort(tokens_.begin(), tokens_.end());
    return;
  }
  const Token* data = tokens_.data();
  std::sort(pages_.begin(), pages_.end(), [data](const auto& a, const auto& b) {
    return std::lexicographical_compare(
        data + a.first, data + a.first + a.second, data + b.first,
        data + b.first + b.second);
  });
}

bool EvictedPages::SamePages(EvictedPages& other) {
  if (pages_.size() != other.pages_.size()) return false;
  if (tokens_ == other.tokens_ && pages_ == other.pages_) return true;
  Sort();
  other.Sort();
  for (std::size_t i = 0; i < pages_.size(); ++i) {
    if (!std::ranges::equal(page(i), other.page(i))) return false;
  }
  return true;
}

std::string EvictedPages::Format(std::size_t max_pages) const {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < pages_.size(); ++i) {
    if (i == max_pages) {
      shown.push_back(fmt::format("... {} pages in all", pages_.size()));
      break;
    }
    shown.push_back(FormatTokens(page(i)));
  }
  return fmt::format("evicted {{{}}}", fmt::join(shown, ","));
}

std::optional<std::string> DifferentialChecker::ApplyBatch(
    const BatchInput& input) {
  // SPEC §8.1: the engines see the sequences with their namespaces folded.
  if (HasNamespaces(input.cached_namespaces) ||
      HasNamespaces(input.namespaces)) {
    FoldNamespaces();
  }
  if (auto report = ApplyAll(input.cached_sequences, input.cached_namespaces,
                             Operation::Kind::kInsert)) {
    return report;
  }
  return ApplyAll(input.requests, input.namespaces, Operation::Kind::kMatch);
}

std::optional<std::string> DifferentialChecker::ApplyReplay(
    const ReplayInput& input) {
  // SPEC §8.1: the engines see the requests with their namespaces folded.
  if (HasNamespaces(input.namespaces)) FoldNamespaces();
  return ApplyAll(input.requests, input.namespaces, Operation::Kind::kAccess);
}

std::optional<std::string> DifferentialChecker::ApplyAll(
    const SequenceList& sequences, std::span<const std::string> namespaces,
    Operation::Kind kind) {
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    const TokenSpan tokens = sequences[i];
    auto report =
        Apply(Operation{kind, std::vector<Token>(tokens.begin(), tokens.end()),
                        namespaces.empty() ? "" : namespaces[i]});
    if (report) return report;
  }
  return std::nullopt;
}

std::string DifferentialChecker::Report(const PrefixIndex& engine,
                                        const std::string& expected,
                                        const std::string& actual) const {
  // A plugin's name is the plugin's text: escaped, so that it cannot split
  // the report's lines or drive the terminal.
  const std::string name = EscapeControlCharacters(engine.name());
  std::string report = fmt::format(
      "engine '{}' disagrees with the reference after {} operations ({})\n",
      name, history_.size(), FormatCacheOptions(options_));
  const std::size_t first = history_.size() > kMaxReportedOperations
                                ? history_.size() - kMaxReportedOperations
                                : 0;
  if (first > 0) report += fmt::format("  ... {} earlier operations\n", first);
  for (std::size_t i = first; i < history_.size(); ++i) {
    report += fmt::format("  #{} {}\n", i, FormatOperation(history_[i]));
  }
  report += fmt::format("  expected (reference): {}\n  actual ({}): {}\n",
                        expected, name, actual);
  return report;
}

}  // namespace kvprefix::checking
