#include "checking/serving_check.h"

#include <fmt/format.h>

#include <exception>
#include <new>
#include <stdexcept>

#include "engines/registry.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "io/serve_answer.h"
#include "serve/serving_replay.h"

namespace kvprefix::checking {

void RuleCheckingCache::Fail(std::string problem) {
  if (!problem_) problem_ = std::move(problem);
}

Attempt RuleCheckingCache::Admit(RequestId id, TokenSpan prompt,
                                 std::uint64_t stored_length) {
  if (last_attempt_ && id < *last_attempt_) {
    Fail(fmt::format(
        "request {} was attempted after request {}: the queue was skipped "
        "(SPEC §10.3)",
        id, *last_attempt_));
  }
  last_attempt_ = id;
  const Attempt attempt = cache().Admit(id, prompt, stored_length);
  const CacheOptions& options = cache().options();
  if (attempt.outcome != AttemptOutcome::kStart) {
    const bool may_run_short =
        options.bounded() &&
        (options.model == CacheModel::kVllm ||
         (options.model == CacheModel::kSglang &&
          options.trigger == EvictionTrigger::kOnAllocate));
    if (!may_run_short) {
      Fail(fmt::format(
          "request {} {}: only vllm and sglang \"on-allocate\" with a "
          "capacity ever wait or refuse (SPEC §10.4)",
          id,
          attempt.outcome == AttemptOutcome::kWait ? "waited" : "was refused"));
    }
  } else {
    running_[id] = {std::vector<Token>(prompt.begin(), prompt.end()),
                    attempt.match.matched_length};
  }
  CheckPins("the attempt of request", id);
  return attempt;
}

void RuleCheckingCache::PrefillEnd(RequestId id, TokenSpan prompt) {
  cache().PrefillEnd(id, prompt);
  CheckPins("the prefill end of request", id);
}

void RuleCheckingCache::Finish(RequestId id, TokenSpan stored) {
  if (running_.erase(id) != 1) {
    Fail(fmt::format("request {} finished without running", id));
  }
  cache().Finish(id, stored);
  CheckPins("the finish of request", id);
  const CacheOptions& options = cache().options();
  if (options.model == CacheModel::kSpec &&
      cache().cached_pages() > options.capacity) {
    Fail(fmt::format(
        "{} nodes are cached after the finish of request {}, more than the "
        "capacity {} (SPEC §10.4)",
        cache().cached_pages(), id, options.capacity));
  }
}

void RuleCheckingCache::CheckPins(std::string_view call, RequestId id) {
  for (const auto& [running, entry] : running_) {
    const std::uint64_t now = cache().PeekMatch(entry.first).matched_length;
    if (now < entry.second) {
      Fail(fmt::format(
          "request {} started with {} matched tokens and matches only {} "
          "after {} {}: a pinned entry was evicted (SPEC §10.4)",
          running, entry.second, now, call, id));
    }
  }
}

void RuleCheckingCache::CheckEnd() {
  if (!running_.empty()) {
    Fail(fmt::format("request {} still runs at the end of the replay",
                     running_.begin()->first));
  }
  if (cache().pinned() != 0) {
    Fail(fmt::format(
        "{} entries are still pinned at the end of the replay (SPEC §10.5)",
        cache().pinned()));
  }
}

bool SequentialServeInput(const ServeInput& input) {
  return input.serve.max_running == 1 &&
         input.serve.output == OutputMode::kNone;
}

std::vector<std::unique_ptr<ServingCache>> BuiltInServingCaches(
    const ServeInput& input) {
  const CacheOptions& options = input.replay.options;
  std::vector<std::unique_ptr<ServingCache>> caches;
  for (const std::string_view name : EngineNames(options.model)) {
    if (name == "reference") continue;
    if (HasRequestLifecycle(name, options.model) ||
        SequentialServeInput(input)) {
      caches.push_back(MakeServingCache(name, options));
    }
  }
  return caches;
}

namespace {

// Runs `input` on `cache` with the rules checked: the answer, or the
// report's first lines.
struct CheckedRun {
  ServeAnswer answer;
  std::optional<std::string> problem;
};

CheckedRun RunChecked(const ServeInput& input,
                      std::unique_ptr<ServingCache> cache,
                      const ServeReplayer& replay) {
  const std::string name = EscapeControlCharacters(cache->name());
  RuleCheckingCache checked(std::move(cache));
  CheckedRun run;
  try {
    run.answer = replay ? replay(input, checked) : ServeReplay(input, checked);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::invalid_argument&) {
    throw;  // a refusal (OptionsRefused from a call): the input is skipped
  } catch (const std::exception& error) {
    run.problem = fmt::format("engine '{}' throws: {}\n", name,
                              EscapeControlCharacters(error.what()));
    return run;
  }
  checked.CheckEnd();
  if (checked.problem()) {
    run.problem = fmt::format("engine '{}' breaks a rule of SPEC §10: {}\n",
                              name, *checked.problem());
  }
  return run;
}

// The first difference of `actual` from `expected`, as report lines, or
// nullopt.
std::optional<std::string> Difference(std::string_view name,
                                      const ServeAnswer& expected,
                                      const ServeAnswer& actual) {
  const auto lines = [&](std::string_view what, const std::string& want,
                         const std::string& got) {
    return fmt::format(
        "engine '{}' disagrees with the reference on {}\n"
        "  reference: {}\n  {}: {}\n",
        name, what, want, name, got);
  };
  const std::size_t count = expected.requests.size();
  for (std::size_t i = 0; i < count; ++i) {
    if (i >= actual.requests.size()) {
      return fmt::format(
          "engine '{}' disagrees with the reference: it answers {} requests "
          "of {}\n",
          name, actual.requests.size(), count);
    }
    if (actual.requests[i] == expected.requests[i]) continue;
    std::string want;
    std::string got;
    AppendServedRequestJson(expected.requests[i], want);
    AppendServedRequestJson(actual.requests[i], got);
    return lines(fmt::format("request {} of {}", i, count), want, got);
  }
  if (actual.totals == expected.totals) return std::nullopt;
  std::string want;
  std::string got;
  AppendServeTotalsJson(expected.totals, want);
  AppendServeTotalsJson(actual.totals, got);
  return lines("the totals", want, got);
}

}  // namespace

std::optional<std::string> CheckServeInput(const ServeInput& input,
                                           const ServingFactory& make_caches,
                                           const ServeReplayer& replay) {
  const auto report = [&](const std::string& lines) {
    std::string text = lines;
    text +=
        "on this SPEC §10 document (kvprefix replay DOC --input-format "
        "requests):\n";
    AppendServeDocumentJson(input, text);
    return text;
  };
  CheckedRun expected = RunChecked(
      input, MakeServingCache("reference", input.replay.options), nullptr);
  if (expected.problem) return report(*expected.problem);
  for (std::unique_ptr<ServingCache>& cache : make_caches(input)) {
    if (cache->one_at_a_time() && !SequentialServeInput(input)) continue;
    const std::string name = EscapeControlCharacters(cache->name());
    const CheckedRun actual = RunChecked(input, std::move(cache), replay);
    if (actual.problem) return report(*actual.problem);
    if (auto difference = Difference(name, expected.answer, actual.answer)) {
      return report(*difference);
    }
  }
  return std::nullopt;
}

namespace {

// Reads bytes from the front; 0 past the end.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint8_t Next() {
    return next_ < bytes_.size() ? bytes_[next_++] : std::uint8_t{0};
  }
  bool empty() const { return next_ >= bytes_.size(); }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t next_ = 0;
};

CacheOptions DecodeServeOptions(std::uint8_t m, std::uint8_t k) {
  CacheOptions options;
  const unsigned policy = (m >> 4) & 3U;
  switch (m & 3U) {
    case 1:
      options.model = CacheModel::kVllm;
      options.match_limit = MatchLimit::kAllButLast;
      break;
    case 2:
      options.model = CacheModel::kSglang;
      options.policy =
          policy % 2 == 0 ? EvictionPolicy::kLru : EvictionPolicy::kFifo;
      if ((m & 8U) != 0) options.trigger = EvictionTrigger::kOnAllocate;
      break;
    default:
      options.policy = policy % 3 == 0   ? EvictionPolicy::kLru
                       : policy % 3 == 1 ? EvictionPolicy::kFifo
                                         : EvictionPolicy::kLfu;
      break;
  }
  if (options.model != CacheModel::kVllm && (m & 4U) != 0) {
    options.match_limit = MatchLimit::kAllButLast;
  }
  options.page_size = 1 + (k & 3U) % 3;
  if ((k & 0x80U) == 0) options.capacity = (k >> 2) & 31U;
  return options;
}

}  // namespace

std::optional<ServeInput> DecodeServeFuzzInput(
    std::span<const std::uint8_t> bytes) {
  if (bytes.size() > kMaxServeFuzzInputBytes) return std::nullopt;
  ByteReader reader(bytes);
  ServeInput input;
  const std::uint8_t m = reader.Next();
  const std::uint8_t k = reader.Next();
  const std::uint8_t s = reader.Next();
  input.replay.options = DecodeServeOptions(m, k);
  input.serve.output =
      (m & 0x40U) != 0 ? OutputMode::kUnique : OutputMode::kNone;
  const Token alphabet = (m & 0x80U) != 0 ? 4 : 2;
  input.serve.max_running = 1 + (s & 3U);
  input.serve.prefill_us_per_token = (s >> 2) & 3U;
  input.serve.decode_us_per_token = (s >> 4) & 3U;
  input.serve.overhead_us = s >> 6;
  std::uint64_t arrival = 0;
  std::vector<Token> request;
  while (!reader.empty() &&
         input.replay.requests.size() < kMaxServeFuzzRequests) {
    const std::uint8_t h = reader.Next();
    request.clear();
    for (unsigned i = 0; i < (h & 7U); ++i) {
      request.push_back(1 + reader.Next() % alphabet);
    }
    input.replay.requests.Append(request);
    arrival += (h >> 3) & 3U;
    input.arrivals_us.push_back(arrival);
    input.output_lengths.push_back(h >> 5);
  }
  return input;
}

std::optional<std::string> CheckServeFuzzInput(
    std::span<const std::uint8_t> bytes, const ServingFactory& make_caches,
    const ServeFuzzCheckOptions& check) {
  std::optional<ServeInput> input = DecodeServeFuzzInput(bytes);
  if (!input) {
    if (check.tally != nullptr) check.tally->TooLong();
    return std::nullopt;
  }
  if (check.adjust) check.adjust(*input);
  try {
    auto report = CheckServeInput(*input, make_caches, check.replay);
    if (check.tally != nullptr) check.tally->Checked();
    return report;
  } catch (const std::invalid_argument& error) {
    if (check.tally != nullptr) check.tally->Refused(error.what());
    return std::nullopt;
  }
}

}  // namespace kvprefix::checking
