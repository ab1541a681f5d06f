// Checking an implementation's printed answer: see output_check.h.
#include "verify/output_check.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <limits>
#include <new>
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

[[noreturn]] void Fail(const Place& place, std::string_view expected,
                       element found) {
  std::string text = simdjson::minify(found);
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
  Fail(place, "an unsigned 64-bit integer", value);
}

Token ReadToken(element value, const Place& place) {
  if (value.type() == element_type::INT64) {
    const std::int64_t token = value.get_int64().value();
    if (token >= std::numeric_limits<Token>::min() &&
        token <= std::numeric_limits<Token>::max()) {
      return static_cast<Token>(token);
    }
  }
  Fail(place, "an integer in the int32 range", value);
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
    match.cache_node_json = simdjson::minify(members[1]);
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
                                            const std::string& canonical) {
  if (text == canonical) return std::nullopt;
  const std::size_t at = static_cast<std::size_t>(
      std::ranges::mismatch(text, canonical).in1 - text.begin());
  constexpr std::size_t kShown = 24;
  return Failure{
      FailureKind::kFormat,
      fmt::format("the answers are right, but the bytes are not SPEC §5's "
                  "compact form (no spaces, members in order, one trailing "
                  "newline): first difference at byte {}: expected {:?}, "
                  "found {:?}",
                  at, std::string_view(canonical).substr(at, kShown),
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

}  // namespace

std::variant<std::vector<PrintedMatch>, Failure> ParsePrintedMatches(
    std::string_view text, std::size_t request_count,
    checking::Comparison comparison) {
  // The DOM parser is iterative and stops at kMaxJsonDepth levels, the
  // limit of every reader of the tool (io/json_limits.h).
  simdjson::dom::parser parser;
  element document;
  const simdjson::padded_string padded(text);
  simdjson::error_code error = parser.allocate(padded.size(), kMaxJsonDepth);
  if (error == simdjson::SUCCESS) error = parser.parse(padded).get(document);
  if (error == simdjson::MEMALLOC) throw std::bad_alloc();
  if (error == simdjson::DEPTH_ERROR) {
    return Failure{FailureKind::kWrongShape, NestingError(text).what()};
  }
  if (error != simdjson::SUCCESS) {
    return Failure{
        FailureKind::kNotJson,
        fmt::format(
            "standard output ({} bytes) is not one JSON document: "
            "{}{}; it begins {:?}",
            text.size(), simdjson::error_message(error),
            error == simdjson::STRING_ERROR ? DescribeInvalidEscape(text) : "",
            text.substr(0, 60))};
  }
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

}  // namespace kvprefix::verify
