// Greedy delta debugging of batch inputs: see shrink.h.
#include "verify/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "checking/differential.h"

namespace kvprefix::verify {
namespace {

using Sequence = std::vector<Token>;
// A sequence and its namespace (SPEC §8.1), and a serving document's
// request's arrival and output length (SPEC §10.1), dropped together.
struct Entry {
  Sequence tokens;
  std::string name_space;
  std::uint64_t arrival_us = 0;
  std::uint64_t output_length = 0;
};
using Entries = std::vector<Entry>;

// The shrinker's working form of an input: every sequence its own vector, so
// that candidates are easy to edit. A replay document has no cached
// sequences; a batch input keeps the default (unbounded) options.
// `namespaces`: the input had namespaces (SPEC §8.1; absent otherwise).
// A serving document (SPEC §10.1) keeps its worker's options in `serve`.
struct EditableInput {
  Entries cached_sequences;
  Entries requests;
  CacheOptions options;
  bool namespaces = false;
  ServeOptions serve = {};
};

// The two lists of a case: shrinking treats them alike.
constexpr std::array<Entries EditableInput::*, 2> kLists = {
    &EditableInput::requests, &EditableInput::cached_sequences};

Entries ToEntries(const SequenceList& list,
                  const std::vector<std::string>& namespaces) {
  Entries entries;
  for (std::size_t i = 0; i < list.size(); ++i) {
    entries.push_back({Sequence(list[i].begin(), list[i].end()),
                       namespaces.empty() ? "" : namespaces[i]});
  }
  return entries;
}

SequenceList ToList(const Entries& entries) {
  SequenceList list;
  for (const Entry& entry : entries) list.Append(entry.tokens);
  return list;
}

// The entries' namespaces; none (every one in "") when `work` has none.
std::vector<std::string> NamespacesOf(const EditableInput& work,
                                      const Entries& entries) {
  std::vector<std::string> names;
  if (!work.namespaces) return names;
  for (const Entry& entry : entries) names.push_back(entry.name_space);
  return names;
}

EditableInput ToEditable(const BatchInput& input) {
  return {ToEntries(input.cached_sequences, input.cached_namespaces),
          ToEntries(input.requests, input.namespaces), CacheOptions{},
          !input.cached_namespaces.empty() || !input.namespaces.empty()};
}
EditableInput ToEditable(const ReplayInput& input) {
  return {{},
          ToEntries(input.requests, input.namespaces),
          input.options,
          !input.namespaces.empty()};
}

EditableInput ToEditable(const ServeInput& input) {
  EditableInput work = ToEditable(input.replay);
  for (std::size_t i = 0; i < work.requests.size(); ++i) {
    if (!input.arrivals_us.empty()) {
      work.requests[i].arrival_us = input.arrivals_us[i];
    }
    if (!input.output_lengths.empty()) {
      work.requests[i].output_length = input.output_lengths[i];
    }
  }
  work.serve = input.serve;
  return work;
}

// The input of type `Input` that `work` stands for.
template <typename Input>
Input FromEditable(const EditableInput& work);
template <>
BatchInput FromEditable(const EditableInput& work) {
  return BatchInput{ToList(work.cached_sequences), ToList(work.requests),
                    NamespacesOf(work, work.cached_sequences),
                    NamespacesOf(work, work.requests)};
}
template <>
ReplayInput FromEditable(const EditableInput& work) {
  return ReplayInput{ToList(work.requests), work.options,
                     NamespacesOf(work, work.requests)};
}

template <>
ServeInput FromEditable(const EditableInput& work) {
  ServeInput input{.replay = FromEditable<ReplayInput>(work),
                   .serve = work.serve};
  for (const Entry& entry : work.requests) {
    input.arrivals_us.push_back(entry.arrival_us);
    input.output_lengths.push_back(entry.output_length);
  }
  return input;
}

// Calls visit(sequence) for every sequence of both lists of `work`.
template <typename Case, typename Visit>
void ForEachSequence(Case& work, Visit visit) {
  for (auto list : kLists) {
    for (auto& entry : work.*list) visit(entry.tokens);
  }
}

// Smaller replacement values for token `value`, most wanted first: |c| < |v|,
// or c == -v for a negative v.
std::vector<Token> SmallerValues(Token value) {
  const std::int64_t v = value;
  const std::int64_t magnitude = v < 0 ? -v : v;
  std::vector<Token> values;
  for (std::int64_t c : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2},
                         std::int64_t{3}, -v, v / 2, v > 0 ? v - 1 : v + 1}) {
    const std::int64_t c_magnitude = c < 0 ? -c : c;
    const bool smaller =
        c_magnitude < magnitude || (c_magnitude == magnitude && c > v);
    if (smaller && c <= INT32_MAX &&
        std::find(values.begin(), values.end(), c) == values.end()) {
      values.push_back(static_cast<Token>(c));
    }
  }
  return values;
}

// Smaller values of a cache option `value` to try, most wanted first: the
// `wanted` end, half way, one step (all strictly between `wanted` and
// `value`, or `wanted` itself).
std::vector<std::uint64_t> SmallerOptionValues(std::uint64_t value,
                                               std::uint64_t wanted) {
  std::vector<std::uint64_t> values;
  for (std::uint64_t c : {wanted, wanted + (value - wanted) / 2, value - 1}) {
    if (c >= wanted && c < value &&
        std::find(values.begin(), values.end(), c) == values.end()) {
      values.push_back(c);
    }
  }
  return values;
}

template <typename Input>
class Shrinker {
 public:
  Shrinker(const Input& failing, const Failure& failure,
           const CheckerOf<Input>& check, const ShrinkOptions& options)
      : current_(ToEditable(failing)),
        failure_(failure),
        check_(check),
        options_(options) {}

  ShrinkResultOf<Input> Run() {
    bool progress = true;
    while (progress && !OutOfBudget()) {
      // The model's options first: a failure that shows with simpler ones
      // should shrink its requests there, not where it first appeared.
      progress = ShrinkModel();
      progress |= DropNamespaces();
      progress |= DropSequences();
      progress |= DropColumns();
      progress |= DropTokens();
      progress |= RenameValues();
      progress |= ShrinkCache();
      if constexpr (std::is_same_v<Input, ServeInput>) {
        progress |= ShrinkServing();
      }
    }
    return ShrinkResultOf<Input>{FromEditable<Input>(current_), failure_,
                                 attempts_, accepted_};
  }

 private:
  bool OutOfBudget() const {
    return attempts_ >= options_.max_attempts ||
           std::chrono::steady_clock::now() >= options_.deadline;
  }

  // Keeps `candidate` if it fails the same way as the current input.
  bool Try(EditableInput candidate) {
    ++attempts_;
    std::optional<Failure> failure = check_(FromEditable<Input>(candidate));
    if (!failure || failure->kind != failure_.kind ||
        failure->depends_on_earlier_input) {
      return false;
    }
    current_ = std::move(candidate);
    failure_ = *std::move(failure);
    ++accepted_;
    return true;
  }

  // Drops chunks of n/2, n/4, ..., 1 items of the vector `items(work)`.
  template <typename Items>
  bool DropChunks(Items items) {
    bool progress = false;
    for (std::size_t chunk =
             std::max<std::size_t>(1, items(current_).size() / 2);
         ; chunk /= 2) {
      for (std::size_t start = 0;
           start < items(current_).size() && !OutOfBudget();) {
        EditableInput candidate = current_;
        auto& edited = items(candidate);
        edited.erase(edited.begin() + start,
                     edited.begin() + std::min(start + chunk, edited.size()));
        if (Try(std::move(candidate))) {
          progress = true;
        } else {
          start += chunk;
        }
      }
      if (chunk == 1) return progress;
    }
  }

  bool DropSequences() {
    bool progress = false;
    for (auto list : kLists) {
      progress |= DropChunks(
          [list](EditableInput& work) -> Entries& { return work.*list; });
    }
    return progress;
  }

  // SPEC §8.1: every sequence in the default namespace (the member left
  // out), else each namespace in turn renamed to "" (one fewer), so that a
  // bug that needs no namespace is reported without them.
  bool DropNamespaces() {
    if (!current_.namespaces || OutOfBudget()) return false;
    EditableInput without = current_;
    without.namespaces = false;
    if (Try(std::move(without))) return true;
    std::set<std::string> names;
    for (auto list : kLists) {
      for (const Entry& entry : current_.*list) {
        if (!entry.name_space.empty()) names.insert(entry.name_space);
      }
    }
    bool progress = false;
    for (const std::string& name : names) {
      if (OutOfBudget()) return progress;
      EditableInput candidate = current_;
      for (auto list : kLists) {
        for (Entry& entry : candidate.*list) {
          if (entry.name_space == name) entry.name_space.clear();
        }
      }
      progress |= Try(std::move(candidate));
    }
    return progress;
  }

  bool DropColumns() {
    std::size_t width = 0;
    ForEachSequence(current_, [&width](const Sequence& sequence) {
      width = std::max(width, sequence.size());
    });
    bool progress = false;
    for (std::size_t column = width; column-- > 0 && !OutOfBudget();) {
      EditableInput candidate = current_;
      ForEachSequence(candidate, [column](Sequence& sequence) {
        if (column < sequence.size()) sequence.erase(sequence.begin() + column);
      });
      progress |= Try(std::move(candidate));
    }
    return progress;
  }

  bool DropTokens() {
    bool progress = false;
    for (auto list : kLists) {
      for (std::size_t i = 0; i < (current_.*list).size(); ++i) {
        progress |= DropChunks([list, i](EditableInput& work) -> Sequence& {
          return (work.*list)[i].tokens;
        });
      }
    }
    return progress;
  }

  bool RenameValues() {
    std::set<Token> values;
    ForEachSequence(current_, [&values](const Sequence& sequence) {
      values.insert(sequence.begin(), sequence.end());
    });
    bool progress = false;
    for (Token value : values) {
      for (Token replacement : SmallerValues(value)) {
        if (OutOfBudget()) return progress;
        EditableInput candidate = current_;
        ForEachSequence(candidate, [value, replacement](Sequence& sequence) {
          std::replace(sequence.begin(), sequence.end(), value, replacement);
        });
        if (Try(std::move(candidate))) {
          progress = true;
          break;
        }
      }
    }
    return progress;
  }

  // Tries each smaller value of the option `field` of `options` (the
  // cache's, or a serving document's worker's), toward `wanted`, and keeps
  // the first that still fails.
  template <typename Options>
  bool ShrinkOption(Options EditableInput::*options,
                    std::uint64_t Options::*field, std::uint64_t wanted) {
    for (std::uint64_t value :
         SmallerOptionValues(current_.*options.*field, wanted)) {
      if (OutOfBudget()) return false;
      EditableInput candidate = current_;
      candidate.*options.*field = value;
      if (Try(std::move(candidate))) return true;
    }
    return false;
  }

  // Tries each policy listed before the current one in kEvictionPolicies,
  // the default first, and keeps the first that still fails: a bug that
  // shows under every policy is then reported under the default one.
  bool ShrinkPolicy() {
    const std::size_t current = EvictionPolicyIndex(current_.options.policy);
    for (std::size_t i = 0; i < current; ++i) {
      if (OutOfBudget()) return false;
      EditableInput candidate = current_;
      candidate.options.policy = kEvictionPolicies[i].policy;
      if (Try(std::move(candidate))) return true;
    }
    return false;
  }

  // Tries `edit` on a copy of the options; keeps it if the result is valid
  // for its model (SPEC §9.4) and still fails.
  template <typename Edit>
  bool TryOptions(Edit&& edit) {
    if (OutOfBudget()) return false;
    EditableInput candidate = current_;
    edit(candidate.options);
    if (candidate.options == current_.options ||
        FindModelOptionsProblem(candidate.options, false)) {
      return false;
    }
    return Try(std::move(candidate));
  }

  // The simpler SPEC §9 options, one at a time: trigger after-insert, match
  // limit all, then model spec (its match limit all, or the limit kept, so
  // that a bug of the limit alone shows in the seed's model).
  bool ShrinkModel() {
    bool progress = TryOptions([](CacheOptions& options) {
      options.trigger = EvictionTrigger::kAfterInsert;
    });
    progress |= TryOptions(
        [](CacheOptions& options) { options.match_limit = MatchLimit::kAll; });
    for (MatchLimit limit : {MatchLimit::kAll, current_.options.match_limit}) {
      if (TryOptions([limit](CacheOptions& options) {
            options.model = CacheModel::kSpec;
            options.match_limit = limit;
            options.trigger = EvictionTrigger::kAfterInsert;
          })) {
        return true;
      }
    }
    return progress;
  }

  // A batch input's options are the default (unbounded, lru, page size 1):
  // this pass tries nothing there.
  bool ShrinkCache() {
    bool progress = false;
    if (current_.options.bounded()) {
      progress |=
          ShrinkOption(&EditableInput::options, &CacheOptions::capacity, 0);
    }
    progress |= ShrinkPolicy();
    progress |=
        ShrinkOption(&EditableInput::options, &CacheOptions::page_size, 1);
    return progress;
  }

  // Applies `edit` to every request of a copy (each request's index and
  // the copy's requests given) and keeps it if it changed and still fails.
  template <typename Edit>
  bool TryRequests(Edit&& edit) {
    if (OutOfBudget()) return false;
    EditableInput candidate = current_;
    bool changed = false;
    for (std::size_t i = 0; i < candidate.requests.size(); ++i) {
      const Entry before = candidate.requests[i];
      edit(i, candidate.requests);
      changed |= before.arrival_us != candidate.requests[i].arrival_us ||
                 before.output_length != candidate.requests[i].output_length;
    }
    return changed && Try(std::move(candidate));
  }

  // A serving document's worker (SPEC §10.1): max_running toward 1, the
  // rates toward 0, output "none"; output lengths to 0 (all, then each);
  // arrivals together (all equal to the first, then each equal to the one
  // before it; then all moved back so that the first is 0), which keeps
  // them non-decreasing.
  bool ShrinkServing() {
    bool progress =
        ShrinkOption(&EditableInput::serve, &ServeOptions::max_running, 1);
    progress |= ShrinkOption(&EditableInput::serve,
                             &ServeOptions::prefill_us_per_token, 0);
    progress |= ShrinkOption(&EditableInput::serve,
                             &ServeOptions::decode_us_per_token, 0);
    progress |=
        ShrinkOption(&EditableInput::serve, &ServeOptions::overhead_us, 0);
    if (current_.serve.output != OutputMode::kNone && !OutOfBudget()) {
      EditableInput candidate = current_;
      candidate.serve.output = OutputMode::kNone;
      progress |= Try(std::move(candidate));
    }
    progress |= TryRequests([](std::size_t i, Entries& requests) {
      requests[i].output_length = 0;
    });
    for (std::size_t i = 0; i < current_.requests.size(); ++i) {
      progress |= TryRequests([i](std::size_t j, Entries& requests) {
        if (j == i) requests[j].output_length = 0;
      });
    }
    progress |= TryRequests([](std::size_t i, Entries& requests) {
      requests[i].arrival_us = requests[0].arrival_us;
    });
    for (std::size_t i = 1; i < current_.requests.size(); ++i) {
      progress |= TryRequests([i](std::size_t j, Entries& requests) {
        if (j == i) requests[j].arrival_us = requests[j - 1].arrival_us;
      });
    }
    if (!current_.requests.empty()) {
      const std::uint64_t first = current_.requests[0].arrival_us;
      progress |= TryRequests([first](std::size_t i, Entries& requests) {
        requests[i].arrival_us -= first;
      });
    }
    return progress;
  }

  EditableInput current_;
  Failure failure_;
  const CheckerOf<Input>& check_;
  ShrinkOptions options_;
  std::size_t attempts_ = 0;
  std::size_t accepted_ = 0;
};

template <typename Input>
std::string DescribeShrinkOf(const Input& failing,
                             const ShrinkResultOf<Input>& result) {
  if (result.accepted == 0) {
    // The shrinker is greedy (one request, token or option at a time): a
    // smaller failing input may exist that no single step reaches.
    return fmt::format("not shrunk: none of the {} smaller inputs tried fails",
                       result.attempts);
  }
  return fmt::format("shrunk in {} checks from {} to {}", result.attempts,
                     DescribeSize(failing), DescribeSize(result.input));
}

}  // namespace

ShrinkResult Shrink(const BatchInput& failing, const Failure& failure,
                    const Checker& check, const ShrinkOptions& options) {
  return Shrinker<BatchInput>(failing, failure, check, options).Run();
}

ReplayShrinkResult Shrink(const ReplayInput& failing, const Failure& failure,
                          const ReplayChecker& check,
                          const ShrinkOptions& options) {
  return Shrinker<ReplayInput>(failing, failure, check, options).Run();
}

ServeShrinkResult Shrink(const ServeInput& failing, const Failure& failure,
                         const ServeChecker& check,
                         const ShrinkOptions& options) {
  return Shrinker<ServeInput>(failing, failure, check, options).Run();
}

std::string DescribeSize(const ServeInput& input) {
  return fmt::format("{}, max_running {}", DescribeSize(input.replay),
                     input.serve.max_running);
}

std::string DescribeShrink(const ServeInput& failing,
                           const ServeShrinkResult& result) {
  return DescribeShrinkOf(failing, result);
}

std::string DescribeSize(const BatchInput& input) {
  return fmt::format(
      "{} sequences ({} tokens)",
      input.cached_sequences.size() + input.requests.size(),
      input.cached_sequences.total_tokens() + input.requests.total_tokens());
}

std::string DescribeSize(const ReplayInput& input) {
  return fmt::format("{} requests ({} tokens; {})", input.requests.size(),
                     input.requests.total_tokens(),
                     checking::FormatCacheOptions(input.options));
}

std::string DescribeShrink(const BatchInput& failing,
                           const ShrinkResult& result) {
  return DescribeShrinkOf(failing, result);
}

std::string DescribeShrink(const ReplayInput& failing,
                           const ReplayShrinkResult& result) {
  return DescribeShrinkOf(failing, result);
}

}  // namespace kvprefix::verify
