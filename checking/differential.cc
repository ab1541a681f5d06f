// The differential harness: see the header.
#include "checking/differential.h"

#include <fmt/format.h>

#include "engines/registry.h"
#include "reference/reference_trie.h"

namespace kvprefix::checking {
namespace {

// Histories of fuzzing runs can be long; the report keeps their tail.
constexpr std::size_t kMaxReportedOperations = 50;
constexpr std::size_t kMaxReportedTokens = 64;

std::string FormatMatch(const Match& match) {
  return fmt::format("(matched_length {}, cache_node {})", match.matched_length,
                     match.cache_node);
}

}  // namespace

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
  return (operation.kind == Operation::Kind::kInsert ? "insert " : "match ") +
         FormatTokens(operation.tokens);
}

DifferentialChecker::DifferentialChecker()
    : reference_(MakeEngine(ReferenceTrie::kName)) {
  for (std::string_view name : EngineNames()) {
    if (name != ReferenceTrie::kName) engines_.push_back(MakeEngine(name));
  }
}

DifferentialChecker::DifferentialChecker(
    std::vector<std::unique_ptr<PrefixIndex>> engines)
    : reference_(MakeEngine(ReferenceTrie::kName)),
      engines_(std::move(engines)) {}

std::optional<std::string> DifferentialChecker::Apply(
    const Operation& operation) {
  history_.push_back(operation);
  const TokenSpan tokens(operation.tokens);
  if (operation.kind == Operation::Kind::kInsert) {
    const NodeId expected = reference_->Insert(tokens);
    for (auto& engine : engines_) {
      const NodeId actual = engine->Insert(tokens);
      if (actual != expected) {
        return Report(*engine, fmt::format("insert returns node {}", expected),
                      fmt::format("insert returns node {}", actual));
      }
      if (engine->node_count() != reference_->node_count()) {
        return Report(*engine,
                      fmt::format("node_count {}", reference_->node_count()),
                      fmt::format("node_count {}", engine->node_count()));
      }
    }
    return std::nullopt;
  }
  const Match expected = reference_->MatchPrefix(tokens);
  for (auto& engine : engines_) {
    const Match actual = engine->MatchPrefix(tokens);
    if (actual != expected) {
      return Report(*engine, FormatMatch(expected), FormatMatch(actual));
    }
  }
  return std::nullopt;
}

std::optional<std::string> DifferentialChecker::ApplyBatch(
    const BatchInput& input) {
  const auto apply_all =
      [&](const SequenceList& list,
          Operation::Kind kind) -> std::optional<std::string> {
    for (TokenSpan tokens : list) {
      auto report =
          Apply({kind, std::vector<Token>(tokens.begin(), tokens.end())});
      if (report) return report;
    }
    return std::nullopt;
  };
  if (auto report =
          apply_all(input.cached_sequences, Operation::Kind::kInsert)) {
    return report;
  }
  return apply_all(input.requests, Operation::Kind::kMatch);
}

std::string DifferentialChecker::Report(const PrefixIndex& engine,
                                        const std::string& expected,
                                        const std::string& actual) const {
  std::string report = fmt::format(
      "engine '{}' disagrees with the reference after {} operations\n",
      engine.name(), history_.size());
  const std::size_t first = history_.size() > kMaxReportedOperations
                                ? history_.size() - kMaxReportedOperations
                                : 0;
  if (first > 0) report += fmt::format("  ... {} earlier operations\n", first);
  for (std::size_t i = first; i < history_.size(); ++i) {
    report += fmt::format("  #{} {}\n", i, FormatOperation(history_[i]));
  }
  report += fmt::format("  expected (reference): {}\n  actual ({}): {}\n",
                        expected, engine.name(), actual);
  return report;
}

}  // namespace kvprefix::checking
