// Checking an implementation's printed answer: see output_check.h.
#include "verify/output_check.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "checking/differential.h"
#include "io/json_limits.h"
#include "io/json_output.h"
#include "io/json_strings.h"

namespace kvprefix::verify {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Thrown inside the parser, caught at its top, to keep the walk readable.
struct ShapeError {
  std::string message;
};

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// A place in an answer, printed only for an error: "$", "$.matches",
// "$.matches[3]", "$.matches[3].cache_node",
// "$.matches[3].uncached_suffix[7]".
struct Place {
  explicit Place(std::string_view root = "$", std::size_t match = kNone,
                 std::string_view member = {}, std::size_t token = kNone)
      : root(root), match(match), member(member), token(token) {}

  std::string_view root;    // "$" or "$.matches"
  std::size_t match;        // the index of a match
  std::string_view member;  // a member of that match
  std::size_t token;        // the index of a token of its suffix

  std::string str() const {
    std::string text(root);
    if (match != kNone) text += fmt::format("[{}]", match);
    if (!member.empty()) text += fmt::format(".{}", member);
    if (token != kNone) text += fmt::format("[{}]", token);
    return text;
  }
};

// A number JSON allows but simdjson cannot hold (an integer past 64 bits,
// 1e400) is replaced, before the walk, by a string of this prefix and the
// number as written (SubstituteUnrepresentable), so that the walk reports
// it at its JSON location, with the range expected there, as the number.
constexpr std::string_view kUnrepresentable = "\x01kvprefix-number:";

// `value` as printed: minified, or the number a kUnrepresentable string
// stands for.
std::string Shown(element value) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS &&
      text.starts_with(kUnrepresentable)) {
    return std::string(text.substr(kUnrepresentable.size()));
  }
  return simdjson::minify(value);
}

[[noreturn]] void Fail(const Place& place, std::string_view expected,
                       element found) {
  std::string text = Shown(found);
  constexpr std::size_t kMaxShown = 40;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  throw ShapeError{
      fmt::format("{}: expected {}, found {}", place.str(), expected, text)};
}

std::uint64_t ReadUnsigned(element value, const Place& place) {
  if (value.type() == element_type::UINT64) return value.get_uint64().value();
  if (value.type() == element_type::INT64 && value.get_int64().value() >= 0) {
    return static_cast<std::uint64_t>(value.get_int64().value());
  }
  Fail(place,
       fmt::format("an integer from 0 to {}",
                   std::numeric_limits<std::uint64_t>::max()),
       value);
}

Token ReadToken(element value, const Place& place) {
  if (value.type() == element_type::INT64) {
    const std::int64_t token = value.get_int64().value();
    if (token >= std::numeric_limits<Token>::min() &&
        token <= std::numeric_limits<Token>::max()) {
      return static_cast<Token>(token);
    }
  }
  Fail(
      place,
      fmt::format("an integer from {} to {}", std::numeric_limits<Token>::min(),
                  std::numeric_limits<Token>::max()),
      value);
}

simdjson::dom::array ReadArray(element value, const Place& place) {
  if (value.type() != element_type::ARRAY) Fail(place, "an array", value);
  return value.get_array().value();
}

// The members of object `value`, which must be exactly `names`, but for
// `optional` ones, which may be missing: then (*present)[i] is false.
template <std::size_t N>
std::array<element, N> ReadMembers(element value, const Place& place,
                                   const std::array<std::string_view, N>& names,
                                   const std::array<bool, N>& optional = {},
                                   std::array<bool, N>* present = nullptr) {
  if (value.type() != element_type::OBJECT) {
    Fail(place,
         fmt::format("an object with members {}", fmt::join(names, ", ")),
         value);
  }
  std::array<element, N> members;
  std::array<bool, N> seen{};
  const simdjson::dom::object object = value.get_object().value();
  for (simdjson::dom::key_value_pair field : object) {
    const auto it = std::find(names.begin(), names.end(), field.key);
    if (it == names.end()) {
      throw ShapeError{
          fmt::format("{}: unknown member \"{}\"", place.str(), field.key)};
    }
    const std::size_t i = static_cast<std::size_t>(it - names.begin());
    if (seen[i]) {
      throw ShapeError{
          fmt::format("{}: duplicated member \"{}\"", place.str(), field.key)};
    }
    seen[i] = true;
    members[i] = field.value;
  }
  if (present != nullptr) *present = seen;
  for (std::size_t i = 0; i < N; ++i) {
    if (!seen[i] && !optional[i]) {
      throw ShapeError{
          fmt::format("{}: missing member \"{}\"", place.str(), names[i])};
    }
  }
  return members;
}

// Match number `index` of the answer. No location is built unless it fails.
PrintedMatch ReadMatch(element value, std::size_t index,
                       checking::Comparison comparison) {
  static constexpr std::array<std::string_view, 3> kNames = {
      "matched_length", "cache_node", "uncached_suffix"};
  const bool lengths = comparison == checking::Comparison::kLengths;
  std::array<bool, 3> present{};
  const std::array<element, 3> members =
      ReadMembers(value, Place("$.matches", index), kNames,
                  std::array<bool, 3>{false, lengths, false}, &present);
  PrintedMatch match;
  match.matched_length =
      ReadUnsigned(members[0], Place("$.matches", index, kNames[0]));
  if (!lengths) {
    match.cache_node =
        ReadUnsigned(members[1], Place("$.matches", index, kNames[1]));
  } else if (present[1]) {
    match.cache_node_json = Shown(members[1]);
  }
  std::size_t i = 0;
  for (element token :
       ReadArray(members[2], Place("$.matches", index, kNames[2]))) {
    match.uncached_suffix.push_back(
        ReadToken(token, Place("$.matches", index, kNames[2], i++)));
  }
  return match;
}

// One match in a report; without its cache_node when only lengths count.
std::string FormatMatch(std::uint64_t matched_length, std::uint64_t cache_node,
                        TokenSpan uncached_suffix,
                        checking::Comparison comparison) {
  if (comparison == checking::Comparison::kLengths) {
    return fmt::format("matched_length {}, uncached_suffix {}", matched_length,
                       checking::FormatTokens(uncached_suffix));
  }
  return fmt::format("matched_length {}, cache_node {}, uncached_suffix {}",
                     matched_length, cache_node,
                     checking::FormatTokens(uncached_suffix));
}

std::optional<Failure> FindWrongAnswer(const SequenceList& requests,
                                       std::span<const Match> expected,
                                       const std::vector<PrintedMatch>& actual,
                                       checking::Comparison comparison) {
  const bool lengths = comparison == checking::Comparison::kLengths;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const TokenSpan request = requests[i];
    const TokenSpan suffix = request.subspan(expected[i].matched_length);
    const PrintedMatch& printed = actual[i];
    if (printed.matched_length == expected[i].matched_length &&
        (lengths || printed.cache_node == expected[i].cache_node) &&
        std::ranges::equal(printed.uncached_suffix, suffix)) {
      continue;
    }
    return Failure{
        FailureKind::kWrongAnswer,
        fmt::format(
            "request {} of {}, tokens {}:\n  expected {}\n  actual   {}", i,
            requests.size(), checking::FormatTokens(request),
            FormatMatch(expected[i].matched_length, expected[i].cache_node,
                        suffix, comparison),
            FormatMatch(printed.matched_length, printed.cache_node,
                        printed.uncached_suffix, comparison)),
        i};
  }
  return std::nullopt;
}

// SPEC §5's compact bytes for the expected answer. With kLengths each
// match's cache_node member is the one printed (`printed`, minified), or
// none where none was printed: only its layout is checked.
std::string CanonicalAnswer(const SequenceList& requests,
                            std::span<const Match> expected,
                            const std::vector<PrintedMatch>& printed,
                            checking::Comparison comparison) {
  std::string canonical;
  if (comparison == checking::Comparison::kAll) {
    AppendMatchesJson(requests, expected, canonical);
    return canonical;
  }
  constexpr std::string_view kNode = ",\"cache_node\":0,";
  canonical += "{\"matches\":[";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (i != 0) canonical += ',';
    const std::size_t start = canonical.size();
    AppendMatchJson(requests[i], Match{expected[i].matched_length, 0},
                    canonical);
    const std::size_t at = canonical.find(kNode, start);
    const std::optional<std::string>& node = printed[i].cache_node_json;
    canonical.replace(at, kNode.size(),
                      node ? ",\"cache_node\":" + *node + "," : ",");
  }
  canonical += "]}\n";
  return canonical;
}

std::optional<Failure> FindFormatDifference(std::string_view text,
                                            const std::string& canonical,
                                            std::string_view section = "§5") {
  if (text == canonical) return std::nullopt;
  const std::size_t at = static_cast<std::size_t>(
      std::ranges::mismatch(text, canonical).in1 - text.begin());
  constexpr std::size_t kShown = 24;
  return Failure{
      FailureKind::kFormat,
      fmt::format("the answers are right, but the bytes are not SPEC {}'s "
                  "compact form (no spaces, members in order, one trailing "
                  "newline): first difference at byte {}: expected {:?}, "
                  "found {:?}",
                  section, at, std::string_view(canonical).substr(at, kShown),
                  text.substr(at, kShown))};
}

// " at byte N: found '\\ud800' (why)" for the first invalid escape of a
// string in `text`, or "" when none is found. O(bytes).
std::string DescribeInvalidEscape(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    std::size_t end = i + 1;
    while (end < text.size() && text[end] != '"') {
      end += text[end] == '\\' ? 2 : 1;
    }
    end = std::min(end, text.size());
    const std::string_view body = text.substr(i + 1, end - i - 1);
    if (const auto escape = FirstInvalidEscape(body)) {
      return fmt::format(
          " at byte {}: found '\\{}'{}", i + 1 + escape->offset,
          EscapeForMessage(body.substr(escape->offset + 1, escape->length - 1)),
          escape->why.empty() ? "" : fmt::format(" ({})", escape->why));
    }
    i = end;
  }
  return "";
}

// Whether `token` is a number as JSON writes one: -?(0|[1-9][0-9]*)
// (.[0-9]+)?([eE][+-]?[0-9]+)?.
bool IsJsonNumber(std::string_view token) {
  std::size_t i = 0;
  const auto at = [&](std::string_view chars) {
    return i < token.size() && chars.find(token[i]) != std::string_view::npos;
  };
  const auto digits = [&] {
    const std::size_t start = i;
    while (at("0123456789")) ++i;
    return i > start;
  };
  if (at("-")) ++i;
  if (at("0")) {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (at(".")) {
    ++i;
    if (!digits()) return false;
  }
  if (at("eE")) {
    ++i;
    if (at("+-")) ++i;
    if (!digits()) return false;
  }
  return i == token.size();
}

// `text` with each number that JSON allows and simdjson cannot hold
// replaced by a kUnrepresentable string, or nullopt if it has none. The
// error path of a parse that failed on a number: O(bytes).
std::optional<std::string> SubstituteUnrepresentable(std::string_view text) {
  std::string substituted;
  std::size_t copied = 0;
  simdjson::dom::parser parser;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if (std::string_view("-0123456789").find(text[i]) ==
        std::string_view::npos) {
      continue;
    }
    std::size_t end = i;
    while (end < text.size() &&
           std::string_view(" \t\r\n[]{},:\"").find(text[end]) ==
               std::string_view::npos) {
      ++end;
    }
    const std::string_view token = text.substr(i, end - i);
    // Only 19 digits or more, or an exponent, can be out of range.
    const bool may_overflow =
        token.size() >= 19 || token.find_first_of("eE") != token.npos;
    element ignored;
    if (may_overflow && IsJsonNumber(token) &&
        parser.parse(simdjson::padded_string(token)).get(ignored) !=
            simdjson::SUCCESS) {
      substituted.append(text.substr(copied, i - copied));
      // The prefix's \x01 as JSON writes it.
      substituted += "\"\\u0001";
      substituted.append(kUnrepresentable.substr(1));
      substituted.append(token);
      substituted += '"';
      copied = end;
    }
    i = end - 1;
  }
  if (copied == 0) return std::nullopt;
  substituted.append(text.substr(copied));
  return substituted;
}

// Parses `text`, an answer printed by the implementation under test, into
// `document` (parser's), with SPEC §6's messages: the depth rule first, a
// number no 64-bit type holds parsed as a kUnrepresentable string (for the
// walk to name with its range), else kNotJson naming the problem. Throws
// std::bad_alloc when memory runs out.
std::optional<Failure> ParseAnswer(std::string_view text,
                                   simdjson::dom::parser& parser,
                                   element& document) {
  // The DOM parser is iterative and stops at kMaxJsonDepth levels, the
  // limit of every reader of the tool (io/json_limits.h).
  const auto parse = [&](std::string_view json) {
    const simdjson::padded_string padded(json);
    simdjson::error_code error = parser.allocate(padded.size(), kMaxJsonDepth);
    if (error == simdjson::SUCCESS) error = parser.parse(padded).get(document);
    if (error == simdjson::MEMALLOC) throw std::bad_alloc();
    return error;
  };
  simdjson::error_code error = parse(text);
  // SPEC §6: text nested too deep is told so first, whatever simdjson
  // stopped at ("improper structure" for 200,000 unclosed '[').
  if (error == simdjson::DEPTH_ERROR ||
      (error != simdjson::SUCCESS && NestsTooDeep(text))) {
    return Failure{FailureKind::kWrongShape, NestingError(text).what()};
  }
  // A number JSON allows but no 64-bit type holds is a value out of the
  // range expected at its place: the walk names both.
  if (error == simdjson::NUMBER_ERROR) {
    if (const std::optional<std::string> substituted =
            SubstituteUnrepresentable(text)) {
      if (parse(*substituted) == simdjson::SUCCESS) error = simdjson::SUCCESS;
    }
  }
  if (error == simdjson::SUCCESS) return std::nullopt;
  return Failure{
      FailureKind::kNotJson,
      fmt::format(
          "standard output ({} bytes) is not one JSON document: "
          "{}{}; it begins {:?}",
          text.size(), simdjson::error_message(error),
          error == simdjson::STRING_ERROR ? DescribeInvalidEscape(text) : "",
          text.substr(0, 60))};
}

// Both values are JSON numbers and equal: as integers when both are, else
// as doubles (0 and 0.0 are one number).
bool SameNumber(element expected, element printed) {
  const auto integer = [](element value) {
    return value.type() == element_type::INT64 ||
           value.type() == element_type::UINT64;
  };
  if (integer(expected) && integer(printed)) {
    return simdjson::minify(expected) == simdjson::minify(printed);
  }
  double a = 0;
  double b = 0;
  return expected.get_double().get(a) == simdjson::SUCCESS &&
         printed.get_double().get(b) == simdjson::SUCCESS && a == b;
}

bool IsNumber(element value) {
  return value.type() == element_type::INT64 ||
         value.type() == element_type::UINT64 ||
         value.type() == element_type::DOUBLE;
}

// The first place where `printed` differs from `expected` (the reference's
// answer), walked in `expected`'s order: shape (a type, a missing, unknown
// or duplicated member, an array's length) is kWrongShape, a value
// kWrongAnswer. nullopt when they are the same JSON value.
std::optional<Failure> FindJsonDifference(element expected, element printed,
                                          const std::string& place,
                                          std::string_view ignored) {
  const auto differs = [&](FailureKind kind, std::string_view what) {
    return Failure{kind, fmt::format("{}: expected {}, found {}", place, what,
                                     Shown(printed).substr(0, 40))};
  };
  switch (expected.type()) {
    case element_type::OBJECT: {
      simdjson::dom::object want = expected.get_object().value();
      simdjson::dom::object got;
      if (printed.get_object().get(got) != simdjson::SUCCESS) {
        return differs(FailureKind::kWrongShape, "an object");
      }
      std::set<std::string_view> seen;
      for (simdjson::dom::key_value_pair field : got) {
        if (!seen.insert(field.key).second) {
          return Failure{
              FailureKind::kWrongShape,
              fmt::format("{}: duplicated member \"{}\"", place, field.key)};
        }
        if (field.key != ignored &&
            want[field.key].error() != simdjson::SUCCESS) {
          return Failure{
              FailureKind::kWrongShape,
              fmt::format("{}: unknown member \"{}\"", place, field.key)};
        }
      }
      for (simdjson::dom::key_value_pair field : want) {
        if (field.key == ignored) continue;
        element value;
        if (got[field.key].get(value) != simdjson::SUCCESS) {
          return Failure{
              FailureKind::kWrongShape,
              fmt::format("{}: missing member \"{}\"", place, field.key)};
        }
        if (auto failure = FindJsonDifference(
                field.value, value, fmt::format("{}.{}", place, field.key),
                ignored)) {
          return failure;
        }
      }
      return std::nullopt;
    }
    case element_type::ARRAY: {
      simdjson::dom::array want = expected.get_array().value();
      simdjson::dom::array got;
      if (printed.get_array().get(got) != simdjson::SUCCESS) {
        return differs(FailureKind::kWrongShape, "an array");
      }
      if (got.size() != want.size()) {
        return Failure{FailureKind::kWrongShape,
                       fmt::format("{}: expected {} entries, found {}", place,
                                   want.size(), got.size())};
      }
      std::size_t i = 0;
      for (auto want_it = want.begin(), got_it = got.begin();
           want_it != want.end(); ++want_it, ++got_it, ++i) {
        if (auto failure = FindJsonDifference(
                *want_it, *got_it, fmt::format("{}[{}]", place, i), ignored)) {
          return failure;
        }
      }
      return std::nullopt;
    }
    default:
      if (expected.type() == element_type::UINT64 ||
          expected.type() == element_type::INT64) {
        // Every integer of a serving answer is a count or a time: unsigned.
        const bool unsigned_integer = printed.type() == element_type::UINT64 ||
                                      (printed.type() == element_type::INT64 &&
                                       printed.get_int64().value() >= 0);
        if (!unsigned_integer) {
          return differs(
              FailureKind::kWrongShape,
              fmt::format("an integer from 0 to {}",
                          std::numeric_limits<std::uint64_t>::max()));
        }
        if (SameNumber(expected, printed)) return std::nullopt;
      } else if (IsNumber(expected)) {
        if (!IsNumber(printed)) {
          return differs(FailureKind::kWrongShape, "a number a double holds");
        }
        if (SameNumber(expected, printed)) return std::nullopt;
      } else if (expected.type() == printed.type() &&
                 simdjson::minify(expected) == simdjson::minify(printed)) {
        return std::nullopt;
      } else if (expected.type() != printed.type()) {
        return differs(FailureKind::kWrongShape,
                       expected.type() == element_type::BOOL ? "true or false"
                                                             : "a string");
      }
      return differs(FailureKind::kWrongAnswer, simdjson::minify(expected));
  }
}

}  // namespace

std::variant<std::vector<PrintedMatch>, Failure> ParsePrintedMatches(
    std::string_view text, std::size_t request_count,
    checking::Comparison comparison) {
  simdjson::dom::parser parser;
  element document;
  if (auto failure = ParseAnswer(text, parser, document)) return *failure;
  try {
    static constexpr std::array<std::string_view, 1> kNames = {"matches"};
    const simdjson::dom::array matches = ReadArray(
        ReadMembers(document, Place(), kNames)[0], Place("$.matches"));
    if (matches.size() != request_count) {
      throw ShapeError{
          fmt::format("$.matches: expected {} matches (one per "
                      "request), found {}",
                      request_count, matches.size())};
    }
    std::vector<PrintedMatch> result;
    result.reserve(request_count);
    for (element match : matches) {
      result.push_back(ReadMatch(match, result.size(), comparison));
    }
    return result;
  } catch (const ShapeError& error) {
    return Failure{FailureKind::kWrongShape, error.message};
  }
}

std::optional<std::string> ParseRefusal(std::string_view text) {
  // Most answers are matches: those are not parsed twice.
  if (text.find("\"refused\"") == std::string_view::npos) return std::nullopt;
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::dom::object object;
  simdjson::error_code error = parser.allocate(padded.size(), kMaxJsonDepth);
  if (error == simdjson::SUCCESS) error = parser.parse(padded).get(object);
  if (error == simdjson::MEMALLOC) throw std::bad_alloc();
  std::string_view reason;
  if (error != simdjson::SUCCESS || object.size() != 1 ||
      object["refused"].get(reason) != simdjson::SUCCESS) {
    return std::nullopt;  // CheckPrintedMatches names what is wrong
  }
  return std::string(reason);
}

std::optional<Failure> CheckPrintedMatches(std::string_view text,
                                           const SequenceList& requests,
                                           std::span<const Match> expected,
                                           bool check_format,
                                           checking::Comparison comparison) {
  auto parsed = ParsePrintedMatches(text, requests.size(), comparison);
  if (auto* failure = std::get_if<Failure>(&parsed)) return *failure;
  const auto& printed = std::get<std::vector<PrintedMatch>>(parsed);
  if (auto failure = FindWrongAnswer(requests, expected, printed, comparison)) {
    return failure;
  }
  if (!check_format) return std::nullopt;
  return FindFormatDifference(
      text, CanonicalAnswer(requests, expected, printed, comparison));
}

std::optional<Failure> CheckPrintedJsonAnswer(std::string_view text,
                                              const std::string& canonical,
                                              bool check_format,
                                              std::string_view section,
                                              std::string_view ignored) {
  simdjson::dom::parser printed_parser;
  element printed;
  if (auto failure = ParseAnswer(text, printed_parser, printed)) {
    return failure;
  }
  simdjson::dom::parser expected_parser;
  element expected;
  if (auto failure = ParseAnswer(canonical, expected_parser, expected)) {
    throw std::logic_error("the reference's answer is no JSON: " +
                           failure->message);
  }
  if (auto failure = FindJsonDifference(expected, printed, "$", ignored)) {
    return failure;
  }
  if (!check_format || !ignored.empty()) return std::nullopt;
  return FindFormatDifference(text, canonical, section);
}

}  // namespace kvprefix::verify
