// Inputs for `kvprefix verify`: see inputs.h.
#include "verify/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string_view>

#include "checking/random_input.h"
#include "io/case_file.h"
#include "io/input_error.h"
#include "io/json_input.h"
#include "io/mooncake.h"
#include "io/replay_document.h"
#include "serve/serve_requests.h"

namespace kvprefix::verify {
namespace {

// Adds the file name to an InputError's location (ParseBatchInput does not
// know the file).
// Running out of memory becomes "out of memory while reading <path>".
template <typename Read>
auto WithFileName(const std::string& path, Read read) {
  try {
    return WhileDoing("reading " + path, read);
  } catch (const InputError& error) {
    throw InputError(path + ": " + error.location(), error.problem());
  }
}

// True if `error`, from reading a file as a SPEC §4 input or a batch case
// file, says that the file is a SPEC §8 replay document or a replay case
// file: a member only those have, or no "cached_sequences".
bool LooksLikeReplay(const InputError& error) {
  // A case file's location starts with its path: "<path>: $.document".
  const auto at = [&error](const std::string& json_path) {
    const std::string& location = error.location();
    return location == json_path || location.ends_with(": " + json_path);
  };
  for (std::string_view member :
       {"capacity", "policy", "page_size", "document"}) {
    if (at(fmt::format("$.{}", member)) &&
        error.problem().find("unknown member") != std::string::npos) {
      return true;
    }
  }
  return at("$") && error.problem().find("member \"cached_sequences\"") !=
                        std::string::npos;
}

// read(), whose InputError on what looks like a replay document gets a hint
// at --format requests (verify reads SPEC §4 input unless told otherwise).
template <typename Read>
auto WithReplayHint(Read read) {
  try {
    return read();
  } catch (const InputError& error) {
    if (!LooksLikeReplay(error)) throw;
    const bool case_file = error.location().ends_with("$.document");
    throw InputError(
        error.location(),
        fmt::format("{} (a replay {}, SPEC §8? verify reads those with "
                    "--format requests)",
                    error.problem(), case_file ? "case file" : "document"));
  }
}

SequenceList Slice(const SequenceList& list, std::size_t begin,
                   std::size_t end) {
  SequenceList slice;
  for (std::size_t i = begin; i < end; ++i) slice.Append(list[i]);
  return slice;
}

// Reads every file of `paths` with read_file(path).
template <typename Input, typename ReadFile>
std::vector<NamedInputOf<Input>> ReadFiles(
    const std::vector<std::string>& paths, ReadFile read_file) {
  std::vector<NamedInputOf<Input>> inputs;
  for (const std::string& path : paths) {
    inputs.push_back(NamedInputOf<Input>{
        "file " + path, WithFileName(path, [&] { return read_file(path); }),
        std::nullopt, path});
  }
  return inputs;
}

// Reads the case file or folder `path` with read_file and read_folder.
template <typename Input, typename ReadFile, typename ReadFolder>
std::vector<NamedInputOf<Input>> ReadCases(const std::string& path,
                                           ReadFile read_file,
                                           ReadFolder read_folder) {
  std::vector<CaseFileOf<Input>> cases = WhileDoing("reading " + path, [&] {
    return std::filesystem::is_directory(path)
               ? read_folder(path)
               : std::vector<CaseFileOf<Input>>{read_file(path)};
  });
  if (cases.empty()) {
    // Falling back to generated inputs would check something else than asked.
    throw std::invalid_argument("no case files (*.json) in " + path);
  }
  const bool folder = std::filesystem::is_directory(path);
  std::vector<NamedInputOf<Input>> inputs;
  for (CaseFileOf<Input>& found : cases) {
    std::string file =
        folder ? (std::filesystem::path(path) / found.name).string() : path;
    inputs.push_back(
        NamedInputOf<Input>{"case " + found.name, std::move(found.input),
                            std::move(found.expected), std::move(file)});
  }
  return inputs;
}

}  // namespace

std::vector<std::string> CaseFilePaths(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return {path};
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    if (entry.path().extension() == ".json") {
      found.push_back(entry.path().string());
    }
  }
  if (found.empty()) {
    throw std::invalid_argument("no case files (*.json) in " + path);
  }
  std::ranges::sort(found);
  return found;
}

std::vector<NamedInput> ReadInputFiles(const std::vector<std::string>& paths) {
  return ReadFiles<BatchInput>(paths, [](const std::string& path) {
    return WithReplayHint([&] { return ReadBatchInputFile(path); });
  });
}

std::vector<NamedReplayInput> ReadReplayInputFiles(
    const std::vector<std::string>& paths) {
  return ReadFiles<ReplayInput>(paths, [](const std::string& path) {
    return ReadReplayDocumentOrCaseFile(path);
  });
}

std::vector<NamedInput> ReadCaseInputs(const std::string& path) {
  return ReadCases<BatchInput>(
      path,
      [](const std::string& file) {
        return WithReplayHint([&] { return ReadCaseFile(file); });
      },
      [](const std::string& dir) {
        return WithReplayHint([&] { return ReadCaseFolder(dir); });
      });
}

std::vector<NamedReplayInput> ReadReplayCaseInputs(const std::string& path) {
  return ReadCases<ReplayInput>(
      path, [](const std::string& file) { return ReadReplayCaseFile(file); },
      [](const std::string& dir) { return ReadReplayCaseFolder(dir); });
}

std::vector<NamedInput> TraceWindowInputs(const std::string& path,
                                          std::size_t window) {
  if (window < 2) {
    throw std::invalid_argument("a trace window needs at least 2 requests");
  }
  const SequenceList trace = WithFileName(path, [&path] {
    return ReadMooncakeTrace(path, TraceOptions{.mode = TraceMode::kBlock});
  });
  std::vector<NamedInput> inputs;
  // Written with differences, not begin + window, which wraps around for a
  // window near SIZE_MAX.
  for (std::size_t begin = 0, end = 0; trace.size() - begin >= 2; begin = end) {
    end = begin + std::min(window, trace.size() - begin);
    const std::size_t middle = begin + (end - begin) / 2;
    inputs.push_back(NamedInput{
        fmt::format("trace {} requests {}..{} (block mode; first {} cached)",
                    path, begin + 1, end, middle - begin),
        BatchInput{Slice(trace, begin, middle), Slice(trace, middle, end)},
        std::nullopt, ""});
  }
  return inputs;
}

int GeneratorSize(std::uint64_t run, std::uint64_t runs, int max_size) {
  const std::uint64_t max = static_cast<std::uint64_t>(max_size);
  // Inputs per cycle: the sizes 0 to max, or fewer steps if fewer inputs.
  const std::uint64_t steps = std::min(runs, max + 1);
  if (steps <= 1) return max_size;
  // (steps - 1) <= max <= 10^4, so the product cannot overflow.
  return static_cast<int>(run % steps * max / (steps - 1));
}

namespace {

// Generated `what` number `run` of `seed` with generate(seed, size), named
// with `flags` (the options that generated it besides the seed) if any.
template <typename Input, typename Generate>
NamedInputOf<Input> Generated(std::string_view what, std::uint64_t seed,
                              std::uint64_t run, int size, Generate generate,
                              std::string_view flags = "") {
  return NamedInputOf<Input>{
      fmt::format("generated {} {} (--seed {}, size {}{}{})", what, run, seed,
                  size, flags.empty() ? "" : ", ", flags),
      generate(seed + run, size), std::nullopt, ""};
}

// The options `model` fixes, the rest at their defaults (for the checks).
CacheOptions FixedOptions(const GeneratedModel& model) {
  return CacheOptions{
      .model = model.model,
      .match_limit = model.match_limit.value_or(DefaultMatchLimit(model.model)),
      .trigger = model.trigger.value_or(CacheOptions{}.trigger)};
}

// checking::Random<Input> with checking::AddRandomNamespaces: about one
// replay document in four has namespaces (SPEC §8.1).
template <typename Input>
Input WithNamespaces(Input (*random)(std::uint64_t, int), std::uint64_t seed,
                     int size) {
  Input input = random(seed, size);
  checking::AddRandomNamespaces(seed, input);
  return input;
}

ReplayInput RandomReplay(std::uint64_t seed, int size) {
  return WithNamespaces(checking::RandomReplayInput, seed, size);
}

}  // namespace

NamedInput GeneratedInput(std::uint64_t seed, std::uint64_t run, int size) {
  return Generated<BatchInput>("input", seed, run, size,
                               checking::RandomBatchInput);
}

NamedReplayInput GeneratedReplayInput(std::uint64_t seed, std::uint64_t run,
                                      int size) {
  return Generated<ReplayInput>("replay document", seed, run, size,
                                RandomReplay);
}

NamedReplayInput GeneratedReplayInput(std::uint64_t seed, std::uint64_t run,
                                      int size, CacheModel model) {
  return GeneratedReplayInput(seed, run, size, GeneratedModel{.model = model});
}

void CheckGeneratedModel(const GeneratedModel& model) {
  if (const auto problem = FindModelOptionsProblem(FixedOptions(model),
                                                   model.trigger.has_value())) {
    throw std::invalid_argument(
        fmt::format("{}: {}", problem->member, problem->message));
  }
}

NamedReplayInput GeneratedReplayInput(std::uint64_t seed, std::uint64_t run,
                                      int size, const GeneratedModel& model) {
  CheckGeneratedModel(model);
  NamedReplayInput generated =
      Generated<ReplayInput>("replay document", seed, run, size, RandomReplay,
                             GeneratedModelFlags(model));
  CacheOptions& options = generated.input.options;
  const CacheOptions fixed = FixedOptions(model);
  options.model = fixed.model;
  options.match_limit = fixed.match_limit;
  if (model.model != CacheModel::kSpec &&
      (model.model == CacheModel::kVllm ||
       options.policy != EvictionPolicy::kFifo)) {
    options.policy = EvictionPolicy::kLru;
  }
  if (model.model == CacheModel::kSglang) {
    // Two bits of seed + run (mixed, so that consecutive runs differ in
    // both) pick the match limit and the trigger not fixed.
    const std::uint64_t bits = (seed + run) * 0x9E3779B97F4A7C15ull >> 62;
    options.match_limit = model.match_limit.value_or(
        (bits & 1) != 0 ? MatchLimit::kAllButLast : MatchLimit::kAll);
    options.trigger =
        model.trigger.value_or((bits & 2) != 0 ? EvictionTrigger::kOnAllocate
                                               : EvictionTrigger::kAfterInsert);
  }
  return generated;
}

namespace {

// GeneratedModelFlags' --match-limit and --trigger, each with a space before.
std::string LimitAndTriggerFlags(const GeneratedModel& model) {
  std::string flags;
  if (model.match_limit) {
    flags += fmt::format(" --match-limit {}",
                         NameOf(kMatchLimits, *model.match_limit));
  }
  if (model.trigger) {
    flags +=
        fmt::format(" --trigger {}", NameOf(kEvictionTriggers, *model.trigger));
  }
  return flags;
}

}  // namespace

std::string GeneratedModelFlags(const GeneratedModel& model) {
  if (model == GeneratedModel{}) return "";
  return fmt::format("--model {}{}", NameOf(kCacheModels, model.model),
                     LimitAndTriggerFlags(model));
}

std::string GeneratedOptionsFlags(
    const std::optional<GeneratedModel>& model,
    const checking::ImplementedOptions& implemented) {
  std::string flags;
  if (model && implemented.models.empty()) {
    flags = GeneratedModelFlags(*model);
  } else if (model) {
    flags = LimitAndTriggerFlags(*model);   // --models replaces --model
    if (!flags.empty()) flags.erase(0, 1);  // its leading space
  }
  const std::string more = checking::ImplementedOptionsFlags(implemented);
  if (!flags.empty() && !more.empty()) flags += ' ';
  return flags + more;
}

void CheckGeneratedOptions(const std::optional<GeneratedModel>& model,
                           const checking::ImplementedOptions& implemented) {
  if (model && model->match_limit && !implemented.match_limits.empty()) {
    throw std::invalid_argument(
        "verify: --match-limit and --match-limits: give one (--match-limit L "
        "fixes the match limit, --match-limits L,... lists those the cache "
        "implements)");
  }
  if (implemented.models.empty()) {
    if (model) CheckGeneratedModel(*model);
    return;
  }
  if (model && model->model != CacheModel::kSpec) {
    throw std::invalid_argument(
        "verify: --model and --models: give one (--model M generates M's "
        "documents, --models M,... those of each model listed)");
  }
  for (CacheModel each : implemented.models) {
    GeneratedModel fixed = model.value_or(GeneratedModel{});
    fixed.model = each;
    CheckGeneratedModel(fixed);
  }
}

NamedReplayInput GeneratedReplayInput(
    std::uint64_t seed, std::uint64_t run, int size,
    const GeneratedModel& model,
    const checking::ImplementedOptions& implemented) {
  if (implemented.all()) return GeneratedReplayInput(seed, run, size, model);
  const std::uint64_t bits = (seed + run) * 0x9E3779B97F4A7C15ull;
  GeneratedModel each = model;
  if (!implemented.models.empty()) {
    each.model = implemented.models[(bits >> 40) % implemented.models.size()];
  }
  ReplayInput input = GeneratedReplayInput(seed, run, size, each).input;
  checking::RestrictOptions(implemented, bits, input.requests, input.options);
  return Generated<ReplayInput>(
      "replay document", seed, run, size,
      [&input](std::uint64_t, int) { return std::move(input); },
      GeneratedOptionsFlags(model, implemented));
}

std::vector<NamedServeInput> ReadServeInputFiles(
    const std::vector<std::string>& paths) {
  return ReadFiles<ServeInput>(paths, [](const std::string& path) {
    return ReadServeDocumentOrCaseFile(path);
  });
}

NamedServeInput GeneratedServeInput(
    std::uint64_t seed, std::uint64_t run, int size,
    const GeneratedModel& model,
    const checking::ImplementedOptions& implemented) {
  NamedReplayInput document =
      GeneratedReplayInput(seed, run, size, model, implemented);
  ServeInput input{.replay = std::move(document.input)};
  // No namespaces in §10 documents: the serving replays of --cmd programs
  // (the Python §10 oracle) and --kv-events do not take them; the document
  // is the one generated before namespaces were.
  checking::RemoveRandomNamespaces(seed + run, input.replay);
  // Its own stream: the §8 document stays what GeneratedReplayInput gives.
  std::mt19937_64 random((seed + run) ^ 0x5E7E5E7E5E7E5E7Eull);
  const auto draw = [&random](std::uint64_t low, std::uint64_t high) {
    return std::uniform_int_distribution<std::uint64_t>(low, high)(random);
  };
  constexpr std::uint64_t kSteps[] = {0, 1, 2, 5};
  std::uint64_t arrival = 0;
  for (std::size_t i = 0; i < input.replay.requests.size(); ++i) {
    arrival += kSteps[draw(0, 3)];
    input.arrivals_us.push_back(arrival);
    input.output_lengths.push_back(draw(0, 4));
  }
  input.serve = {
      .max_running = draw(0, 3) == 0 ? 1 : draw(2, 4),
      .prefill_us_per_token = draw(0, 3),
      .decode_us_per_token = draw(0, 3),
      .overhead_us = draw(0, 2),
      .output = draw(0, 1) == 0 ? OutputMode::kNone : OutputMode::kUnique};
  if (input.serve.output == OutputMode::kUnique) {
    try {
      ServeRequests{input};
    } catch (const std::invalid_argument&) {
      // Extreme tokens leave no room above them for unique output tokens
      // (SPEC §10.4): the document is one a replay refuses.
      input.serve.output = OutputMode::kNone;
    }
  }
  const std::string flags = GeneratedOptionsFlags(model, implemented);
  return NamedServeInput{
      fmt::format("generated serving document {} (--seed {}, size {}{}{})", run,
                  seed, size, flags.empty() ? "" : ", ", flags),
      std::move(input), std::nullopt, ""};
}

}  // namespace kvprefix::verify
