// The property suite: see the header.
#include "testing/property_checks.h"

#include <fmt/format.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <set>
#include <string>

#include "checking/differential.h"
#include "engines/registry.h"
#include "reference/reference_trie.h"
#include "testing/generators.h"
#include "testing/mutants.h"

namespace kvprefix::test {
namespace {

using checking::DifferentialChecker;
using checking::FormatTokens;
using checking::Operation;
using Sequence = std::vector<Token>;

std::vector<std::unique_ptr<PrefixIndex>> MakeEngines(
    const EngineNameList& engines) {
  std::vector<std::unique_ptr<PrefixIndex>> made;
  for (std::string_view name : engines) {
    made.push_back(MakeEngineOrMutant(name));
  }
  return made;
}

// The shape of `lists` together: how many sequences, the longest's tokens.
InputShape ShapeOf(std::initializer_list<const SequenceList*> lists) {
  InputShape shape;
  for (const SequenceList* list : lists) {
    shape.sequences += list->size();
    for (const TokenSpan sequence : *list) {
      shape.max_tokens = std::max(shape.max_tokens, sequence.size());
    }
  }
  return shape;
}

// Draws the batch input every metamorphic relation starts from.
BatchInput DrawBatch(InputShape* shape) {
  BatchInput batch = *GenBatchInput();
  *shape = ShapeOf({&batch.cached_sequences, &batch.requests});
  return batch;
}

// A new engine `name` holding the batch's cached sequences.
std::unique_ptr<PrefixIndex> MakeWithCached(std::string_view name,
                                            const BatchInput& batch) {
  auto engine = MakeEngineOrMutant(name);
  for (const TokenSpan sequence : batch.cached_sequences) {
    engine->Insert(sequence);
  }
  return engine;
}

// Fails the case with the engine, the relation broken and what was seen.
// Callers test first and format only on failure: the message may describe
// values that exist only when the relation is broken.
[[noreturn]] void Fail(const PrefixIndex& engine, std::string_view relation,
                       const std::string& seen) {
  RC_FAIL(fmt::format("engine '{}' breaks \"{}\": {}", engine.name(), relation,
                      seen));
}

std::string Show(const Match& match) {
  return fmt::format("(matched_length {}, cache_node {})", match.matched_length,
                     match.cache_node);
}

void RequireMatch(const PrefixIndex& engine, std::string_view relation,
                  TokenSpan request, const Match& expected) {
  const Match actual = engine.MatchPrefix(request);
  if (actual != expected) {
    Fail(engine, relation,
         fmt::format("match {} gives {}, expected {}", FormatTokens(request),
                     Show(actual), Show(expected)));
  }
}

// Every distinct non-empty prefix of `sequence`, added to `prefixes`.
void AddPrefixes(TokenSpan sequence, std::set<Sequence>* prefixes) {
  for (std::size_t length = 1; length <= sequence.size(); ++length) {
    prefixes->emplace(sequence.begin(), sequence.begin() + length);
  }
}

// The stateful test's model state. The harness's reference trie is the
// model that predicts every answer; this state remembers what the commands
// used, so that new commands derive related sequences from it.
struct OnlineModel {
  std::vector<Token> alphabet;
  SequenceList seen;
};

class OperationCommand
    : public rc::state::Command<OnlineModel, DifferentialChecker> {
 public:
  OperationCommand(Operation::Kind kind, const OnlineModel& model)
      : operation_{kind, *GenRelatedSequence(model.seen, model.alphabet)} {}

  void apply(OnlineModel& model) const override {
    model.seen.Append(operation_.tokens);
  }
  void run(const OnlineModel& /*model*/,
           DifferentialChecker& checker) const override {
    if (auto report = checker.Apply(operation_)) RC_FAIL(*report);
  }
  void show(std::ostream& os) const override { showValue(operation_, os); }

  const Operation& operation() const { return operation_; }

 private:
  Operation operation_;
};

struct InsertCommand : OperationCommand {
  explicit InsertCommand(const OnlineModel& model)
      : OperationCommand(Operation::Kind::kInsert, model) {}
};

struct MatchCommand : OperationCommand {
  explicit MatchCommand(const OnlineModel& model)
      : OperationCommand(Operation::Kind::kMatch, model) {}
};

}  // namespace

std::unique_ptr<PrefixIndex> MakeEngineOrMutant(std::string_view name) {
  return IsEngineName(name) ? MakeEngine(name) : MakeMutant(name);
}

EngineNameList EnginesUnderTest() {
  EngineNameList names;
  for (std::string_view name : EngineNames()) {
    if (name != ReferenceTrie::kName) names.push_back(name);
  }
  names.push_back(MutantName(MutantBug::kNone));
  return names;
}

EngineNameList EnginesWithReference() {
  EngineNameList names = EnginesUnderTest();
  names.insert(names.begin(), ReferenceTrie::kName);
  return names;
}

void CheckBatchAgreesWithReference(const EngineNameList& engines,
                                   InputShape* shape) {
  const BatchInput batch = DrawBatch(shape);
  DifferentialChecker checker(MakeEngines(engines));
  if (auto report = checker.ApplyBatch(batch)) RC_FAIL(*report);
  // One tag per case, from its first request (there always is one), so the
  // printed distribution is a partition of the cases.
  const TokenSpan first = batch.requests[0];
  const std::size_t matched =
      checker.reference().MatchPrefix(first).matched_length;
  RC_TAG(std::string(
      MatchEndName(ClassifyMatchEnd(batch.cached_sequences, first, matched))));
}

void CheckOnlineAgreesWithReference(const EngineNameList& engines,
                                    InputShape* shape) {
  const OnlineModel initial{*GenAlphabet(), {}};
  const auto commands = *rc::state::gen::commands(
      initial,
      rc::state::gen::execOneOfWithArgs<InsertCommand, MatchCommand>());
  SequenceList used;
  for (const auto& command : commands) {
    used.Append(
        dynamic_cast<const OperationCommand&>(*command).operation().tokens);
  }
  *shape = ShapeOf({&used});
  DifferentialChecker checker(MakeEngines(engines));
  rc::state::runAll(commands, initial, checker);
}

void CheckMatchSplitsRequest(const EngineNameList& engines, InputShape* shape) {
  static constexpr std::string_view kRelation =
      "the matched part is a cached prefix, the suffix starts uncached";
  const BatchInput batch = DrawBatch(shape);
  std::set<Sequence> prefixes;
  for (const TokenSpan sequence : batch.cached_sequences) {
    AddPrefixes(sequence, &prefixes);
  }
  for (std::string_view name : engines) {
    const auto engine = MakeWithCached(name, batch);
    for (const TokenSpan request : batch.requests) {
      const Match match = engine->MatchPrefix(request);
      const std::size_t length = match.matched_length;
      const TokenSpan whole(request);
      if (length > request.size() ||
          (length == 0) != (match.cache_node == kRootNode)) {
        Fail(*engine, kRelation,
             fmt::format("match {} gives {}", FormatTokens(request),
                         Show(match)));
      }
      if (length > 0 && !prefixes.contains(Sequence(
                            request.begin(), request.begin() + length))) {
        Fail(*engine, kRelation,
             fmt::format("{} is not a cached prefix",
                         FormatTokens(whole.first(length))));
      }
      RequireMatch(*engine, kRelation, whole.first(length), match);
      if (length < request.size() &&
          prefixes.contains(
              Sequence(request.begin(), request.begin() + length + 1))) {
        Fail(*engine, kRelation,
             fmt::format("{} is cached but the match stops before it",
                         FormatTokens(whole.first(length + 1))));
      }
    }
  }
}

void CheckNodeCountIsDistinctPrefixes(const EngineNameList& engines,
                                      InputShape* shape) {
  const BatchInput batch = DrawBatch(shape);
  for (std::string_view name : engines) {
    const auto engine = MakeEngineOrMutant(name);
    std::set<Sequence> prefixes;
    for (const TokenSpan sequence : batch.cached_sequences) {
      engine->Insert(sequence);
      AddPrefixes(sequence, &prefixes);
      if (engine->node_count() != prefixes.size()) {
        Fail(*engine, "node count = distinct non-empty prefixes inserted",
             fmt::format("node_count {} after inserting {}, expected {}",
                         engine->node_count(), FormatTokens(sequence),
                         prefixes.size()));
      }
    }
  }
}

void CheckReinsertCreatesNoNode(const EngineNameList& engines,
                                InputShape* shape) {
  static constexpr std::string_view kRelation =
      "re-inserting an inserted sequence or a prefix creates no node";
  const BatchInput batch = DrawBatch(shape);
  for (std::string_view name : engines) {
    const auto engine = MakeWithCached(name, batch);
    const std::uint64_t nodes = engine->node_count();
    for (const TokenSpan sequence : batch.cached_sequences) {
      for (std::size_t length = 0; length <= sequence.size(); ++length) {
        const TokenSpan prefix = TokenSpan(sequence).first(length);
        const Match before = engine->MatchPrefix(prefix);
        const NodeId reinserted = engine->Insert(prefix);
        if (before.matched_length != length ||
            reinserted != before.cache_node || engine->node_count() != nodes) {
          Fail(*engine, kRelation,
               fmt::format("insert {} returns node {} and leaves {} nodes; "
                           "before it matched {} with {} nodes",
                           FormatTokens(prefix), reinserted,
                           engine->node_count(), Show(before), nodes));
        }
      }
    }
  }
}

void CheckInsertedRequestMatchesInFull(const EngineNameList& engines,
                                       InputShape* shape) {
  const BatchInput batch = DrawBatch(shape);
  for (std::string_view name : engines) {
    const auto engine = MakeWithCached(name, batch);
    for (const TokenSpan request : batch.requests) {
      const NodeId node = engine->Insert(request);
      RequireMatch(*engine, "after inserting a request it matches in full",
                   request, Match{request.size(), node});
    }
  }
}

void CheckNodeIdsNeverChange(const EngineNameList& engines, InputShape* shape) {
  const BatchInput batch = DrawBatch(shape);
  SequenceList inserted = batch.cached_sequences;
  for (const TokenSpan request : batch.requests) inserted.Append(request);
  for (std::string_view name : engines) {
    const auto engine = MakeEngineOrMutant(name);
    std::vector<NodeId> nodes;
    for (std::size_t i = 0; i < inserted.size(); ++i) {
      nodes.push_back(engine->Insert(inserted[i]));
      for (std::size_t earlier = 0; earlier <= i; ++earlier) {
        RequireMatch(*engine, "a node's ID never changes", inserted[earlier],
                     Match{inserted[earlier].size(), nodes[earlier]});
      }
    }
  }
}

void CheckMatchingNeverChangesIndex(const EngineNameList& engines,
                                    InputShape* shape) {
  static constexpr std::string_view kRelation =
      "matching never changes the index";
  const BatchInput batch = DrawBatch(shape);
  for (std::string_view name : engines) {
    // `matched` answers every request twice before the requests are
    // inserted into both; `unmatched` only inserts.
    const auto matched = MakeEngineOrMutant(name);
    const auto unmatched = MakeEngineOrMutant(name);
    for (const TokenSpan sequence : batch.cached_sequences) {
      matched->Insert(sequence);
      unmatched->Insert(sequence);
    }
    const std::uint64_t nodes = matched->node_count();
    const std::size_t bytes = matched->memory_bytes();
    std::vector<Match> first_answers;
    for (const TokenSpan request : batch.requests) {
      first_answers.push_back(matched->MatchPrefix(request));
    }
    for (std::size_t i = 0; i < batch.requests.size(); ++i) {
      RequireMatch(*matched, kRelation, batch.requests[i], first_answers[i]);
    }
    if (matched->node_count() != nodes || matched->memory_bytes() != bytes) {
      Fail(*matched, kRelation,
           fmt::format("{} nodes and {} bytes became {} nodes and {} bytes",
                       nodes, bytes, matched->node_count(),
                       matched->memory_bytes()));
    }
    for (const TokenSpan request : batch.requests) {
      const NodeId after_matches = matched->Insert(request);
      const NodeId without_matches = unmatched->Insert(request);
      if (after_matches != without_matches) {
        Fail(
            *matched, kRelation,
            fmt::format("inserting {} returns node {}, but {} when no "
                        "match ran before",
                        FormatTokens(request), after_matches, without_matches));
      }
    }
  }
}

const std::vector<Property>& AllProperties() {
  static const std::vector<Property> properties = {
      {"BatchAgreesWithReference", &CheckBatchAgreesWithReference},
      {"OnlineAgreesWithReference", &CheckOnlineAgreesWithReference},
      {"MatchSplitsRequest", &CheckMatchSplitsRequest},
      {"NodeCountIsDistinctPrefixes", &CheckNodeCountIsDistinctPrefixes},
      {"ReinsertCreatesNoNode", &CheckReinsertCreatesNoNode},
      {"InsertedRequestMatchesInFull", &CheckInsertedRequestMatchesInFull},
      {"NodeIdsNeverChange", &CheckNodeIdsNeverChange},
      {"MatchingNeverChangesIndex", &CheckMatchingNeverChangesIndex},
  };
  return properties;
}

}  // namespace kvprefix::test
