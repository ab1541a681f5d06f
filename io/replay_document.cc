// Reading SPEC §8 replay documents and §10.1 serving replay documents with
// io's strict readers: one member loop, one reader for both.
#include "io/replay_document.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// Reads the array `value` (at `path`) of one integer per request, each 0 to
// kMaxServeTime, into `out`; with `non_decreasing` (arrivals), each at least
// the one before it.
void ReadServeTimes(const Context& context, Value value, const JsonPath& path,
                    bool non_decreasing, std::vector<std::uint64_t>& out) {
  simdjson::ondemand::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path.str(),
                                       "an array of integers");
  }
  for (auto element : array) {
    const JsonPath element_path = path.Index(out.size());
    const auto number =
        static_cast<std::uint64_t>(json_diagnostics::ReadInteger(
            context, element, 0, kMaxServeTime, element_path));
    if (non_decreasing && !out.empty() && number < out.back()) {
      throw InputError(context.Prefix() + element_path.str(),
                       fmt::format("expected an arrival of at least {} (the "
                                   "one before it), found {}",
                                   out.back(), number));
    }
    out.push_back(number);
  }
}

// An integer from `min` to `max`, or InputError at `path`.
std::uint64_t ReadBounded(const Context& context, Value value,
                          const JsonPath& path, std::uint64_t min,
                          std::uint64_t max) {
  return static_cast<std::uint64_t>(json_diagnostics::ReadInteger(
      context, value, static_cast<std::int64_t>(min),
      static_cast<std::int64_t>(max), path));
}

// The place `member` was read at, "" if the document lacks it.
const std::string& PlaceOf(const DocumentPlaces& places,
                           std::string_view member) {
  static const std::string kAbsent;
  const auto place = places.find(member);
  return place == places.end() ? kAbsent : place->second;
}

// The members of a router object: "name" (required), "seed", then every
// parameter of kRouterParameters.
constexpr auto kRouterMembers = [] {
  std::array<std::string_view, 2 + kRouterParameters.size()> names = {"name",
                                                                      "seed"};
  for (std::size_t i = 0; i < kRouterParameters.size(); ++i) {
    names[2 + i] = kRouterParameters[i].name;
  }
  return names;
}();

// A decimal parameter (SPEC §11.1): a JSON number whose text is a decimal
// within the parameter's range, read exactly.
Rational ReadDecimal(const Context& context, Value value, const JsonPath& path,
                     const RouterParameter& parameter) {
  simdjson::ondemand::value scalar;
  simdjson::ondemand::json_type type;
  if (value.get(scalar) == simdjson::SUCCESS &&
      scalar.type().get(type) == simdjson::SUCCESS &&
      type == simdjson::ondemand::json_type::number) {
    std::string_view text = scalar.raw_json_token();
    text = text.substr(0, text.find_first_of(" \t\r\n"));
    const std::optional<Rational> decimal = Rational::FromDecimal(text);
    if (decimal && InDecimalRange(parameter, *decimal)) {
      json_diagnostics::ValidateScalar(context, scalar, type,
                                       [&path] { return path.str(); });
      return *decimal;
    }
  }
  throw json_diagnostics::Unexpected(context, value, path.str(),
                                     ExpectedRouterValue(parameter));
}

// One parameter's value, of its kind and within its range.
RouterValue ReadParameter(const Context& context, Value value,
                          const JsonPath& path,
                          const RouterParameter& parameter) {
  switch (parameter.kind) {
    case ParameterKind::kInteger:
      return parameter.max == kMaxRouterU64
                 ? ReadUnsigned(context, value, path)
                 : ReadBounded(context, value, path, parameter.min,
                               parameter.max);
    case ParameterKind::kDecimal:
      return ReadDecimal(context, value, path, parameter);
    case ParameterKind::kName:
      break;
  }
  std::string name = ReadString(context, value, path);
  if (!ParseRouterValue(parameter, name)) {
    throw InputError(
        context.Prefix() + path.str(),
        fmt::format("expected {}, found \"{}\"", ExpectedRouterValue(parameter),
                    EscapeForMessage(name)));
  }
  return name;
}

// The router object `value` (at `path`, "$.router"): SPEC §11.1. A
// parameter its policy does not take is reported after the whole object
// (the name may come last), the first one in document order.
RouterSpec ReadRouter(const Context& context, Value value,
                      const JsonPath& path) {
  RouterSpec spec;
  std::vector<std::pair<const RouterParameter*, std::string>> given;
  ReadObject(
      context, value, path, kRouterMembers, 1,
      [&](std::size_t index, Value member, const JsonPath& at) {
        if (index == 0) {
          spec.policy = ReadNamedValue(context, member, at, kRouterPolicies);
        } else if (index == 1) {
          spec.seed = ReadUnsigned(context, member, at);
        } else {
          const RouterParameter& parameter = kRouterParameters[index - 2];
          spec.parameters[std::string(parameter.name)] =
              ReadParameter(context, member, at, parameter);
          given.emplace_back(&parameter, context.Prefix() + at.str());
        }
      });
  for (const auto& [parameter, place] : given) {
    if (!Takes(spec.policy, *parameter)) {
      throw InputError(
          place,
          fmt::format("\"{}\" is no parameter of router \"{}\"",
                      parameter->name, NameOf(kRouterPolicies, spec.policy)));
    }
  }
  return spec;
}

}  // namespace

void ReplayDocumentReader::Read(const Context& context, std::size_t index,
                                Value value, const JsonPath& path) {
  CacheOptions& options = input.replay.options;
  ServeOptions& serve = input.serve;
  places[std::string(kRoutedMembers[index])] = context.Prefix() + path.str();
  switch (index) {
    case 0:
      ReadSequences(context, value, path, input.replay.requests);
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
    case 7:
      ReadNamespaces(context, value, path, input.replay.namespaces);
      break;
    case 8:
    case 9:
      ReadServeTimes(context, value, path, index == 8,
                     index == 8 ? input.arrivals_us : input.output_lengths);
      break;
    case 10:
      serve.max_running = ReadBounded(context, value, path, 1, kMaxRunning);
      break;
    case 11:
    case 12:
    case 13:
      (index == 11   ? serve.prefill_us_per_token
       : index == 12 ? serve.decode_us_per_token
                     : serve.overhead_us) =
          ReadBounded(context, value, path, 0, kMaxServeRate);
      break;
    case 14:
      serve.output = ReadNamedValue(context, value, path, kOutputModes);
      break;
    case 15:
      routing.workers = ReadBounded(context, value, path, 1, kMaxWorkers);
      break;
    default:
      routing.router = ReadRouter(context, value, path);
  }
}

ServeInput ReplayDocumentReader::Finish() {
  const std::size_t requests = input.replay.requests.size();
  CheckNamespaceCount(PlaceOf(places, "namespaces"), input.replay.namespaces,
                      requests, "request");
  CacheOptions& options = input.replay.options;
  if (!places.contains("match_limit")) {
    options.match_limit = DefaultMatchLimit(options.model);
  }
  if (const auto problem =
          FindModelOptionsProblem(options, places.contains("trigger"))) {
    const auto place = places.find(problem->member);
    throw InputError(place == places.end() ? "$" : place->second,
                     problem->message);
  }
  CheckCount(PlaceOf(places, "arrivals_us"), input.arrivals_us.size(), requests,
             "arrival", "request");
  CheckCount(PlaceOf(places, "output_lengths"), input.output_lengths.size(),
             requests, "output length", "request");
  return std::move(input);
}

template <std::size_t N>
ServeInput ReadDocument(simdjson::padded_string_view json,
                        const std::array<std::string_view, N>& names,
                        DocumentPlaces* places, RoutingSpec* routing) {
  ReplayDocumentReader reader;
  ReadRootObject(
      json, names, 1,
      [&](const Context& context, std::size_t index, Value value,
          const JsonPath& path) { reader.Read(context, index, value, path); });
  ServeInput input = reader.Finish();
  if (places != nullptr) *places = std::move(reader.places);
  if (routing != nullptr) *routing = std::move(reader.routing);
  return input;
}

template ServeInput ReadDocument(simdjson::padded_string_view,
                                 const decltype(kReplayMembers)&,
                                 DocumentPlaces*, RoutingSpec*);
template ServeInput ReadDocument(simdjson::padded_string_view,
                                 const decltype(kServeMembers)&,
                                 DocumentPlaces*, RoutingSpec*);
template ServeInput ReadDocument(simdjson::padded_string_view,
                                 const decltype(kRoutedMembers)&,
                                 DocumentPlaces*, RoutingSpec*);

}  // namespace json_reader

namespace {

template <std::size_t N>
bool HasAny(const DocumentPlaces& places,
            const std::array<std::string_view, N>& members) {
  return std::ranges::any_of(members, [&](std::string_view member) {
    return places.contains(member);
  });
}

}  // namespace

bool HasServeMember(const DocumentPlaces& places) {
  return HasAny(places, kServeOnlyMembers);
}

bool HasRouteMember(const DocumentPlaces& places) {
  return HasAny(places, kRouteOnlyMembers);
}

ServeInput ParseRoutedDocument(std::string_view json, RoutingSpec* routing,
                               DocumentPlaces* places) {
  const std::string padded = PaddedCopy(json);
  return json_reader::ReadDocument(
      PaddedView(padded), json_reader::kRoutedMembers, places, routing);
}

ReplayInput ParseReplayDocument(std::string_view json) {
  const std::string padded = PaddedCopy(json);
  return json_reader::ReadDocument(PaddedView(padded),
                                   json_reader::kReplayMembers)
      .replay;
}

ReplayInput ReadReplayDocumentFile(const std::string& path,
                                   DocumentPlaces* places) {
  const std::string text = ReadPaddedFile(path);
  return json_reader::ReadDocument(PaddedView(text),
                                   json_reader::kReplayMembers, places)
      .replay;
}

ServeInput ParseServeDocument(std::string_view json) {
  const std::string padded = PaddedCopy(json);
  return json_reader::ReadDocument(PaddedView(padded),
                                   json_reader::kServeMembers);
}

ServeInput ReadServeDocumentFile(const std::string& path,
                                 DocumentPlaces* places) {
  const std::string text = ReadPaddedFile(path);
  return json_reader::ReadDocument(PaddedView(text), json_reader::kServeMembers,
                                   places);
}

}  // namespace kvprefix
