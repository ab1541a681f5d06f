// Reading SPEC §8 replay documents with io's strict readers.
#include "io/replay_document.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "io/json_reader.h"
#include "io/json_strings.h"
#include "io/padded_file.h"

namespace kvprefix {
namespace json_reader {

namespace {

// The value of `entries` named by the string `value`, or an InputError at
// `path` listing the names.
template <typename Enum, std::size_t N>
Enum ReadNamedValue(const Context& context, Value value, const JsonPath& path,
                    const std::array<NamedValue<Enum>, N>& entries) {
  const std::string name = ReadString(context, value, path);
  const std::optional<Enum> parsed = ParseNamedValue(entries, name);
  if (!parsed) {
    throw InputError(
        context.Prefix() + path.str(),
        fmt::format("expected {}, found \"{}\"", ChoiceNames(entries, '"'),
                    EscapeForMessage(name)));
  }
  return *parsed;
}

}  // namespace

void ReplayDocumentReader::Read(const Context& context, std::size_t index,
                                Value value, const JsonPath& path) {
  CacheOptions& options = input.options;
  places[std::string(kReplayMembers[index])] = context.Prefix() + path.str();
  switch (index) {
    case 0:
      ReadSequences(context, value, path, input.requests);
      break;
    case 1:
      options.capacity = ReadUnsigned(context, value, path);
      break;
    case 2: {
      const std::string name = ReadString(context, value, path);
      const auto policy = ParseEvictionPolicy(name);
      if (!policy) {
        throw InputError(
            context.Prefix() + path.str(),
            fmt::format("expected {}, found \"{}\"", EvictionPolicyChoices('"'),
                        EscapeForMessage(name)));
      }
      options.policy = *policy;
      break;
    }
    case 3:
      options.page_size = static_cast<std::uint64_t>(
          json_diagnostics::ReadInteger(context, value, 1, kMaxPageSize, path));
      break;
    case 4:
      options.model = ReadNamedValue(context, value, path, kCacheModels);
      break;
    case 5:
      options.match_limit = ReadNamedValue(context, value, path, kMatchLimits);
      break;
    case 6:
      options.trigger = ReadNamedValue(context, value, path, kEvictionTriggers);
      break;
    default:
      ReadNamespaces(context, value, path, input.namespaces);
  }
}

ReplayInput ReplayDocumentReader::Finish() {
  const auto namespaces = places.find("namespaces");
  CheckNamespaceCount(namespaces == places.end() ? "" : namespaces->second,
                      input.namespaces, input.requests.size(), "request");
  CacheOptions& options = input.options;
  if (!places.contains("match_limit")) {
    options.match_limit = DefaultMatchLimit(options.model);
  }
  if (const auto problem =
          FindModelOptionsProblem(options, places.contains("trigger"))) {
    const auto place = places.find(problem->member);
    throw InputError(place == places.end() ? "$" : place->second,
                     problem->message);
  }
  return std::move(input);
}

ReplayInput ReadReplayDocument(simdjson::padded_string_view json,
                               DocumentPlaces* places) {
  ReplayDocumentReader reader;
  ReadRootObject(
      json, kReplayMembers, 1,
      [&](const Context& context, std::size_t index, Value value,
          const JsonPath& path) { reader.Read(context, index, value, path); });
  ReplayInput input = reader.Finish();
  if (places != nullptr) *places = std::move(reader.places);
  return input;
}

}  // namespace json_reader

ReplayInput ParseReplayDocument(std::string_view json) {
  const std::string padded = PaddedCopy(json);
  return json_reader::ReadReplayDocument(PaddedView(padded));
}

ReplayInput ReadReplayDocumentFile(const std::string& path,
                                   DocumentPlaces* places) {
  const std::string text = ReadPaddedFile(path);
  return json_reader::ReadReplayDocument(PaddedView(text), places);
}

}  // namespace kvprefix
