// The property suite: see the header.
#include "testing/property_checks.h"

#include <fmt/format.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "checking/differential.h"
#include "checking/recipe.h"
#include "engines/registry.h"
#include "kvprefix/cache_model.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/replay.h"
#include "optimized/radix_trie.h"
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
    const EngineNameList& engines, const CacheOptions& options = {}) {
  std::vector<std::unique_ptr<PrefixIndex>> made;
  for (std::string_view name : engines) {
    made.push_back(MakeEngineOrMutant(name, options));
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

std::unique_ptr<PrefixIndex> MakeEngineOrMutant(std::string_view name,
                                                const CacheOptions& options) {
  return IsEngineName(name) ? MakeEngine(name, options)
                            : MakeMutant(name, options);
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

EngineNameList CacheEnginesUnderTest() {
  EngineNameList names;
  for (std::string_view name : EngineNames()) {
    if (name != ReferenceTrie::kName) names.push_back(name);
  }
  names.push_back(MutantCacheName(MutantCacheBug::kNone));
  return names;
}

EngineNameList CacheEnginesWithReference() {
  EngineNameList names = CacheEnginesUnderTest();
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

namespace {

// Watches one bounded cache through its answers alone, after every step of
// a workload: which of the prefixes used so far (whole pages) are present,
// found by matching each of them, and under which IDs. See
// CheckCacheInvariantsHold for what it requires.
class CacheWatch {
 public:
  explicit CacheWatch(const CacheOptions& options) : options_(options) {}

  // Adds the whole-page prefixes of `tokens` to those watched.
  void Saw(TokenSpan tokens) {
    const std::size_t page = options_.page_size;
    for (std::size_t length = page; length <= tokens.size(); length += page) {
      watched_.emplace(tokens.begin(), tokens.begin() + length);
    }
  }

  // Observes `engine` after a step; "" if it keeps every invariant, else
  // what it breaks.
  std::string Observe(const PrefixIndex& engine) {
    std::map<Sequence, NodeId> present;
    std::map<NodeId, const Sequence*> id_owner;
    std::string problem;
    // Sorted: a prefix comes before its extensions, and an extension of a
    // missing prefix is unreachable by matching.
    for (const Sequence& prefix : watched_) {
      if (prefix.size() > options_.page_size &&
          !present.contains(Parent(prefix))) {
        continue;
      }
      const Match match = engine.MatchPrefix(prefix);
      if (match.matched_length != prefix.size()) continue;
      const auto [it, added] = present.emplace(prefix, match.cache_node);
      const auto [owner, fresh] =
          id_owner.emplace(match.cache_node, &it->first);
      if (problem.empty() && (match.cache_node == kRootNode || !fresh)) {
        problem = fmt::format("{} and {} are both present as node {}",
                              fresh ? "the root" : FormatTokens(*owner->second),
                              FormatTokens(prefix), match.cache_node);
      }
    }
    if (problem.empty() && options_.bounded() &&
        engine.node_count() > options_.capacity) {
      problem = fmt::format("it holds {} nodes, more than the capacity {}",
                            engine.node_count(), options_.capacity);
    }
    if (problem.empty() && engine.node_count() != present.size()) {
      problem = fmt::format(
          "node_count {}, but matching reaches {} nodes: the present set is "
          "not prefix-closed, or keeps unreachable nodes",
          engine.node_count(), present.size());
    }
    // IDs over time.
    NodeId largest = largest_id_;
    prefix_returned_ = false;
    for (const auto& [prefix, id] : present) {
      largest = std::max(largest, id);
      if (!problem.empty()) break;
      if (const auto before = present_.find(prefix); before != present_.end()) {
        if (before->second != id) {
          problem = fmt::format(
              "{} stayed present but its ID changed from {} "
              "to {}",
              FormatTokens(prefix), before->second, id);
        }
        continue;
      }
      // Created since the last step: a new ID, above every ID seen before.
      if (const auto owner = ids_.find(id); owner != ids_.end()) {
        problem =
            fmt::format("ID {} is given again: to {}, earlier to {}", id,
                        FormatTokens(prefix), FormatTokens(owner->second));
      } else if (id <= largest_id_) {
        problem = fmt::format(
            "the new node {} has ID {}, not above the "
            "largest ID seen before, {}",
            FormatTokens(prefix), id, largest_id_);
      }
      prefix_returned_ |= ever_present_.contains(prefix);
    }
    // Whether a node left since the last step with its parent (a chain
    // evicted in one step).
    chain_vanished_ = false;
    for (const auto& [prefix, id] : present_) {
      if (present.contains(prefix)) continue;
      chain_vanished_ |= prefix.size() > options_.page_size &&
                         present_.contains(Parent(prefix)) &&
                         !present.contains(Parent(prefix));
    }
    for (const auto& [prefix, id] : present) {
      ids_.emplace(id, prefix);
      ever_present_.insert(prefix);
    }
    largest_id_ = largest;
    present_ = std::move(present);
    return problem;
  }

  // Facts of the last Observe.
  bool chain_vanished() const { return chain_vanished_; }
  bool prefix_returned() const { return prefix_returned_; }

 private:
  Sequence Parent(const Sequence& prefix) const {
    return Sequence(prefix.begin(), prefix.end() - options_.page_size);
  }

  CacheOptions options_;
  std::set<Sequence> watched_;
  std::map<Sequence, NodeId> present_;  // at the last Observe
  std::set<Sequence> ever_present_;
  std::map<NodeId, Sequence> ids_;  // every ID seen, with its prefix
  NodeId largest_id_ = 0;
  bool chain_vanished_ = false;
  bool prefix_returned_ = false;
};

InputShape ShapeOf(const CacheWorkload& workload) {
  SequenceList used;
  for (const Operation& operation : workload.operations) {
    used.Append(operation.tokens);
  }
  return ShapeOf({&used});
}

// The distinct prefixes (in pages) the workload inserts: at or above them a
// cache never evicts.
std::uint64_t StoredPrefixes(const CacheWorkload& workload) {
  SequenceList stored;
  for (const Operation& operation : workload.operations) {
    if (operation.kind != Operation::Kind::kMatch) {
      stored.Append(operation.tokens);
    }
  }
  return checking::DistinctPrefixes(stored, workload.options.page_size);
}

// Applies `operation` to `engine` outside the harness.
void ApplyTo(PrefixIndex& engine, const Operation& operation) {
  switch (operation.kind) {
    case Operation::Kind::kInsert:
      engine.Insert(operation.tokens);
      break;
    case Operation::Kind::kMatch:
      engine.MatchPrefix(operation.tokens);
      break;
    case Operation::Kind::kAccess:
      engine.Access(operation.tokens);
      break;
  }
}

// Runs `workload` on the reference, observing it after every step.
CacheFacts RunReference(const CacheWorkload& workload) {
  CacheFacts facts;
  facts.capacity_covers = workload.options.capacity >= StoredPrefixes(workload);
  const auto reference = MakeEngine(ReferenceTrie::kName, workload.options);
  CacheWatch watch(workload.options);
  for (const Operation& operation : workload.operations) {
    const Match before = reference->MatchPrefix(operation.tokens);
    ApplyTo(*reference, operation);
    if (facts.evicted && operation.kind != Operation::Kind::kInsert &&
        before.matched_length > 0) {
      facts.hit_after_eviction = true;
    }
    watch.Saw(operation.tokens);
    watch.Observe(*reference);
    facts.evicted |= reference->evicted_count() > 0;
    facts.evicted_chain |= watch.chain_vanished();
    facts.prefix_returned |= watch.prefix_returned();
  }
  return facts;
}

void TagCacheFacts(const CacheFacts& facts) {
  RC_CLASSIFY(facts.evicted, "evicts");
  RC_CLASSIFY(facts.evicted_chain, "evicts a chain in one step");
  RC_CLASSIFY(facts.hit_after_eviction, "hits after an eviction");
  RC_CLASSIFY(facts.prefix_returned, "an evicted prefix returns");
  RC_CLASSIFY(facts.capacity_covers, "capacity >= distinct prefixes");
}

}  // namespace

CacheFacts ObserveCacheWorkload(const CacheWorkload& workload) {
  return RunReference(workload);
}

void CheckCacheAgreesWithReference(const EngineNameList& engines,
                                   InputShape* shape) {
  const CacheWorkload workload = *GenCacheWorkload();
  *shape = ShapeOf(workload);
  DifferentialChecker checker(workload.options,
                              MakeEngines(engines, workload.options));
  for (const Operation& operation : workload.operations) {
    if (auto report = checker.Apply(operation)) RC_FAIL(*report);
  }
  TagCacheFacts(RunReference(workload));
}

void CheckCacheInvariantsHold(const EngineNameList& engines,
                              InputShape* shape) {
  const CacheWorkload workload = *GenCacheWorkload();
  *shape = ShapeOf(workload);
  for (std::string_view name : engines) {
    const auto engine = MakeEngineOrMutant(name, workload.options);
    CacheWatch watch(workload.options);
    for (std::size_t step = 0; step < workload.operations.size(); ++step) {
      const Operation& operation = workload.operations[step];
      ApplyTo(*engine, operation);
      watch.Saw(operation.tokens);
      const std::string problem = watch.Observe(*engine);
      if (!problem.empty()) {
        Fail(*engine, "the cache invariants of SPEC §8",
             fmt::format("after operation #{} ({}), {}", step,
                         checking::FormatOperation(operation), problem));
      }
    }
  }
}

void CheckLargeCapacityGivesUnboundedAnswers(const EngineNameList& engines,
                                             InputShape* shape) {
  CacheWorkload workload = *GenCacheWorkload();
  // At least the distinct prefixes inserted: drawn capacities above them are
  // kept, those below raised to them (the tightest capacity that never
  // evicts).
  workload.options.capacity =
      std::max(workload.options.capacity, StoredPrefixes(workload));
  *shape = ShapeOf(workload);
  for (std::string_view name : engines) {
    const auto engine = MakeEngineOrMutant(name, workload.options);
    const auto unbounded =
        MakeEngine(ReferenceTrie::kName,
                   CacheOptions{.page_size = workload.options.page_size});
    for (std::size_t step = 0; step < workload.operations.size(); ++step) {
      const Operation& operation = workload.operations[step];
      const TokenSpan tokens(operation.tokens);
      const Match expected = unbounded->MatchPrefix(tokens);
      const Match actual = engine->MatchPrefix(tokens);
      ApplyTo(*unbounded, operation);
      ApplyTo(*engine, operation);
      const Match expected_after = unbounded->MatchPrefix(tokens);
      const Match after = engine->MatchPrefix(tokens);
      if (actual != expected || after != expected_after ||
          engine->evicted_count() != 0) {
        Fail(*engine,
             "a capacity of at least the distinct prefixes gives SPEC §3's "
             "answers",
             fmt::format("at operation #{} ({}), capacity {}: it matched {} "
                         "before and {} after, evicted {}; SPEC §3 matches "
                         "{} before and {} after",
                         step, checking::FormatOperation(operation),
                         workload.options.capacity, Show(actual), Show(after),
                         engine->evicted_count(), Show(expected),
                         Show(expected_after)));
      }
    }
  }
}

const std::vector<Property>& CacheProperties() {
  static const std::vector<Property> properties = {
      {"CacheAgreesWithReference", &CheckCacheAgreesWithReference},
      {"CacheInvariantsHold", &CheckCacheInvariantsHold},
      {"LargeCapacityGivesUnboundedAnswers",
       &CheckLargeCapacityGivesUnboundedAnswers},
  };
  return properties;
}

EngineNameList CurvesUnderTest() {
  return {ReferenceTrie::kName, RadixTrie::kName};
}

std::vector<std::uint64_t> CurveMatchedTokens(
    std::string_view name, const SequenceList& trace, std::uint64_t page_size,
    std::span<const std::uint64_t> capacities) {
  const auto matched = [&]<typename Cache>() {
    LruCurve<Cache> curve(page_size);
    for (const TokenSpan request : trace) curve.Add(request);
    return curve.MatchedTokens(capacities);
  };
  if (name == ReferenceTrie::kName) {
    return matched.operator()<PagedIndex<ReferenceTrie>>();
  }
  if (name == RadixTrie::kName) {
    return matched.operator()<PagedIndex<RadixTrie>>();
  }
  return MutantCurveMatchedTokens(name, trace, page_size, capacities);
}

void CheckLruCurveEqualsReplay(const EngineNameList& curves,
                               InputShape* shape) {
  const CacheWorkload workload = *GenCacheWorkload();
  *shape = ShapeOf(workload);
  SequenceList trace;
  for (const Operation& operation : workload.operations) {
    trace.Append(operation.tokens);
  }
  const std::uint64_t page_size = workload.options.page_size;
  const std::uint64_t distinct = checking::DistinctPrefixes(trace, page_size);
  std::vector<std::uint64_t> capacities;
  std::vector<std::uint64_t> expected;
  for (std::uint64_t capacity = 0; capacity <= distinct + 1; ++capacity) {
    capacities.push_back(capacity);
    const auto replay = MakeEngine(ReferenceTrie::kName,
                                   CacheOptions{.capacity = capacity,
                                                .policy = EvictionPolicy::kLru,
                                                .page_size = page_size});
    expected.push_back(Replay(*replay, trace).matched_tokens);
  }
  for (std::string_view curve : curves) {
    const std::vector<std::uint64_t> matched =
        CurveMatchedTokens(curve, trace, page_size, capacities);
    for (std::size_t i = 0; i < capacities.size(); ++i) {
      if (matched[i] != expected[i]) {
        RC_FAIL(fmt::format(
            "curve '{}' at capacity {} (page size {}, {} distinct prefixes): "
            "{} matched tokens; LRU replay matches {}",
            curve, capacities[i], page_size, distinct, matched[i],
            expected[i]));
      }
    }
  }
  RC_TAG(fmt::format("page size {}", page_size));
}

const std::vector<Property>& CurveProperties() {
  static const std::vector<Property> properties = {
      {"LruCurveEqualsReplay", &CheckLruCurveEqualsReplay},
  };
  return properties;
}

EngineNameList MemoryEnginesUnderTest() {
  EngineNameList names;
  for (std::string_view name : EngineNames()) {
    if (name != ReferenceTrie::kName) names.push_back(name);
  }
  return names;
}

std::vector<MemoryFigure> MeasureMemory(const EngineNameList& engines,
                                        const SequenceList& sequences,
                                        const CacheOptions& options) {
  std::vector<MemoryFigure> figures;
  for (std::string_view name : engines) {
    const auto engine = MakeEngineOrMutant(name, options);
    for (const TokenSpan sequence : sequences) engine->Insert(sequence);
    figures.push_back({name, engine->node_count(), engine->memory_bytes()});
  }
  return figures;
}

std::size_t BytesPerNodeBound(std::string_view engine, bool bounded,
                              EvictionPolicy policy) {
  if (!bounded) return engine == RadixTrie::kName ? 96 : kMaxBytesPerNode;
  // A policy whose key is wider than lru's 8-byte stamp (lfu: count and
  // stamp) widens a node's state by as much and each of up to two heap
  // entries per leaf (LeafHeap::EntryBound) by as much again: 4 times the
  // extra width, 32 bytes a node for lfu.
  const std::size_t wider = VisitPolicy(policy, []<typename P>(P) {
    return 4 * (sizeof(typename P::Key) - sizeof(LruPolicy::Key));
  });
  // The double-array's lazy leaf heap of 16-byte entries grows
  // geometrically (ReserveGeometric; exact growth was quadratic), so its
  // spare room can reach one entry per leaf: 16 bytes per node above 104.
  if (engine == "double-array") return 120 + wider;
  if (engine == RadixTrie::kName) return 176 + wider;
  return 104 + wider;
}

std::string MemoryBoundProblem(const std::vector<MemoryFigure>& figures,
                               const MemoryFigure& radix, bool bounded,
                               EvictionPolicy policy) {
  for (const MemoryFigure& figure : figures) {
    const std::size_t per_node =
        BytesPerNodeBound(figure.engine, bounded, policy);
    if (figure.bytes > per_node * figure.nodes ||
        figure.bytes > kMaxTimesRadix * radix.bytes) {
      return fmt::format(
          "engine '{}' holds {} bytes for {} nodes ({:.1f} bytes per node; "
          "at most {}), {:.2f} times radix's {} bytes (at most {})",
          figure.engine, figure.bytes, figure.nodes, figure.bytes_per_node(),
          per_node,
          static_cast<double>(figure.bytes) / static_cast<double>(radix.bytes),
          radix.bytes, kMaxTimesRadix);
    }
  }
  return "";
}

void CheckMemoryBoundedPerNode(const EngineNameList& engines,
                               InputShape* shape) {
  const bool bounded = *rc::gen::arbitrary<bool>();
  // A cache keeps `percent` of the nodes, at least kMemoryMinNodes: the
  // workload is drawn large enough for that.
  const std::uint64_t percent =
      bounded ? *rc::gen::inRange<std::uint64_t>(10, 91) : 100;
  const AdversarialWorkload workload =
      *GenAdversarialWorkload((kMemoryMinNodes * 100 + percent - 1) / percent);
  const SequenceList sequences = BuildAdversarial(workload);
  *shape = ShapeOf({&sequences});
  CacheOptions options;
  if (bounded) {
    options.capacity = std::max<std::uint64_t>(
        kMemoryMinNodes, workload.nodes() * percent / 100);
    std::vector<EvictionPolicy> policies;
    for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
      policies.push_back(entry.policy);
    }
    options.policy = *rc::gen::elementOf(policies);
  }
  const MemoryFigure radix =
      MeasureMemory({RadixTrie::kName}, sequences, options).front();
  const std::string problem =
      MemoryBoundProblem(MeasureMemory(engines, sequences, options), radix,
                         bounded, options.policy);
  if (!problem.empty()) {
    RC_FAIL(fmt::format("{} on {} ({})", problem, rc::toString(workload),
                        checking::FormatCacheOptions(options)));
  }
  RC_TAG(std::string(TokenSpreadName(workload.spread)),
         std::string(bounded ? "capacity-bounded" : "unbounded"));
}

const std::vector<Property>& MemoryProperties() {
  static const std::vector<Property> properties = {
      {"MemoryBoundedPerNode", &CheckMemoryBoundedPerNode},
  };
  return properties;
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
