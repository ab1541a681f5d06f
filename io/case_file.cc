// Reading and writing case files (case_file.h), with the same simdjson
// readers and JSON writers as SPEC §4 input.
#include "io/case_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <system_error>

#include "io/json_output.h"
#include "io/json_reader.h"
#include "io/json_strings.h"
#include "io/padded_file.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;
using json_reader::Context;
using json_reader::JsonPath;
using json_reader::Value;

// The first three required; the namespaces and source optional.
constexpr std::array<std::string_view, 6> kMembers = {
    "cached_sequences",  "requests",   "expected",
    "cached_namespaces", "namespaces", "source"};
// source and why (the shared cases' description) optional.
constexpr std::array<std::string_view, 4> kReplayCaseMembers = {
    "document", "expected", "source", "why"};
constexpr std::array<std::string_view, 1> kExpectedMembers = {"matches"};
constexpr std::array<std::string_view, 3> kMatchMembers = {
    "matched_length", "cache_node", "uncached_suffix"};

// The matches as written, checked against the requests once all is read:
// "expected" may come before "requests".
struct WrittenMatches {
  std::vector<Match> matches;
  SequenceList suffixes;
};

void ReadMatch(const Context& context, Value value, const JsonPath& path,
               WrittenMatches& out) {
  Match& match = out.matches.emplace_back();
  json_reader::ReadObject(
      context, value, path, kMatchMembers, kMatchMembers.size(),
      [&](std::size_t index, Value member, const JsonPath& member_path) {
        if (index == 2) {
          json_reader::ReadTokens(context, member, member_path, out.suffixes);
          return;
        }
        const std::uint64_t number =
            json_reader::ReadUnsigned(context, member, member_path);
        (index == 0 ? match.matched_length : match.cache_node) = number;
      });
}

void ReadExpected(const Context& context, Value value, const JsonPath& path,
                  WrittenMatches& out) {
  json_reader::ReadObject(
      context, value, path, kExpectedMembers, kExpectedMembers.size(),
      [&](std::size_t, Value matches, const JsonPath& matches_path) {
        simdjson::ondemand::array array;
        if (matches.get_array().get(array) != simdjson::SUCCESS) {
          throw json_diagnostics::Unexpected(
              context, matches, matches_path.str(), "an array of matches");
        }
        for (auto match : array) {
          ReadMatch(context, match, matches_path.Index(out.matches.size()),
                    out);
        }
      });
}

// One match per request, each suffix the request's tail.
void CheckMatches(const WrittenMatches& written, const SequenceList& requests) {
  if (written.matches.size() != requests.size()) {
    throw InputError("$.expected.matches",
                     fmt::format("expected {} matches (one per request), "
                                 "found {}",
                                 requests.size(), written.matches.size()));
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const TokenSpan request = requests[i];
    const std::size_t matched = written.matches[i].matched_length;
    if (matched > request.size() ||
        !std::ranges::equal(written.suffixes[i], request.subspan(matched))) {
      throw InputError(fmt::format("$.expected.matches[{}]", i),
                       "expected an uncached_suffix that is the request's "
                       "tail after matched_length");
    }
  }
}

CaseFile Parse(simdjson::padded_string_view json) {
  CaseFile result;
  WrittenMatches written;
  json_reader::BatchNamespacesAt namespaces_at;
  json_reader::ReadRootObject(
      json, kMembers, 3,
      [&](const Context& context, std::size_t index, Value value,
          const JsonPath& path) {
        switch (index) {
          case 0:
          case 1:
            json_reader::ReadBatchMember(context, index, value, path,
                                         result.input, namespaces_at);
            break;
          case 2:
            ReadExpected(context, value, path, written);
            break;
          case 3:
          case 4:  // ReadBatchMember's 2 and 3
            json_reader::ReadBatchMember(context, index - 1, value, path,
                                         result.input, namespaces_at);
            break;
          default:
            result.source = json_reader::ReadString(context, value, path);
        }
      });
  namespaces_at.Check(result.input);
  CheckMatches(written, result.input.requests);
  result.expected = std::move(written.matches);
  return result;
}

// A replay case file whose document's members are `names`
// (json_reader::kReplayMembers or kServeMembers), and where the document
// set each member (`places`, if not null).
template <std::size_t N>
CaseFileOf<ServeInput> ParseReplayWithPlaces(
    simdjson::padded_string_view json,
    const std::array<std::string_view, N>& names, DocumentPlaces* places,
    RoutingSpec* routing = nullptr, bool read_expected = true) {
  CaseFileOf<ServeInput> result;
  WrittenMatches written;
  json_reader::ReplayDocumentReader document;
  json_reader::ReadRootObject(
      json, kReplayCaseMembers, 2,
      [&](const Context& context, std::size_t index, Value value,
          const JsonPath& path) {
        switch (index) {
          case 0:
            json_reader::ReadObject(context, value, path, names, 1,
                                    [&](std::size_t member, Value member_value,
                                        const JsonPath& member_path) {
                                      document.Read(context, member,
                                                    member_value, member_path);
                                    });
            result.input = document.Finish();
            if (places != nullptr) *places = document.places;
            if (routing != nullptr) *routing = document.routing;
            break;
          case 1:
            // A §10 or §11 case's answer is §10.5's or §11.8's: whoever
            // reads its document replays it again (not read).
            if (read_expected) ReadExpected(context, value, path, written);
            break;
          case 2:
            result.source = json_reader::ReadString(context, value, path);
            break;
          default:
            json_reader::ReadString(context, value, path);  // why: prose
        }
      });
  if (read_expected) CheckMatches(written, result.input.replay.requests);
  result.expected = std::move(written.matches);
  return result;
}

ReplayCaseFile ParseReplay(simdjson::padded_string_view json) {
  CaseFileOf<ServeInput> read =
      ParseReplayWithPlaces(json, json_reader::kReplayMembers, nullptr);
  return {std::move(read.name), std::move(read.input.replay),
          std::move(read.expected), std::move(read.source)};
}

// True if the case file `json`'s "expected" is an object whose first
// member is "matches" (SPEC §5's answer), as every answer verify writes
// for a §8 or §10 document with every default. O(bytes).
bool ExpectedHoldsMatches(simdjson::padded_string_view json) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document root;
  simdjson::ondemand::object expected;
  if (parser.iterate(json).get(root) != simdjson::SUCCESS ||
      root["expected"].get_object().get(expected) != simdjson::SUCCESS) {
    return false;
  }
  for (auto field : expected) {
    std::string_view key;
    return field.unescaped_key().get(key) == simdjson::SUCCESS &&
           key == "matches";
  }
  return false;
}

// A document whose members are `names`, or a replay case file holding one
// (ReadReplayDocumentOrCaseFile's rules).
template <std::size_t N>
ServeInput ReadDocumentOrCaseFile(const std::string& path,
                                  const std::array<std::string_view, N>& names,
                                  DocumentPlaces* places,
                                  RoutingSpec* routing = nullptr) {
  const std::string text = ReadPaddedFile(path);
  try {
    return json_reader::ReadDocument(PaddedView(text), names, places, routing);
  } catch (const InputError& error) {
    // A replay document has none of a case file's own members.
    const bool case_file = std::ranges::any_of(
        kReplayCaseMembers, [&error](std::string_view member) {
          return error.location() == fmt::format("$.{}", member) &&
                 error.problem().find("unknown member") != std::string::npos;
        });
    if (!case_file) throw;
  }
  // A §5 answer (matches) is read strictly; a §10 or §11 reader takes the
  // document of a case whose answer is §10.5's or §11.8's, not reading it.
  const bool section_5 = N == json_reader::kReplayMembers.size() ||
                         ExpectedHoldsMatches(PaddedView(text));
  return ParseReplayWithPlaces(PaddedView(text), names, places, routing,
                               section_5)
      .input;
}

// The case file `path`, parsed by `parse`; errors name the path as given
// (its file name alone is "null" for /dev/null).
template <typename Case>
Case ReadCase(const std::string& path,
              Case (*parse)(simdjson::padded_string_view)) {
  const std::string text = ReadPaddedFile(path);
  try {
    Case result = parse(PaddedView(text));
    result.name = fs::path(path).filename().string();
    return result;
  } catch (const InputError& error) {
    throw InputError(EscapeForMessage(path, 1024) + ": " + error.location(),
                     error.problem());
  }
}

template <typename Case>
std::vector<Case> ReadFolder(const std::string& dir,
                             Case (*parse)(simdjson::padded_string_view)) {
  std::vector<fs::path> paths;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path());
  }
  if (error) {
    throw IoError(fmt::format("{}: cannot read the folder: {}",
                              EscapeForMessage(dir, 1024), error.message()));
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Case> cases;
  for (const fs::path& path : paths) cases.push_back(ReadCase(path, parse));
  return cases;
}

// Ends a case file whose input members are in `text` (which ends with the
// input's closing "}\n"): "expected", "source", and the closing brace.
void AppendExpectedAndSource(const SequenceList& requests,
                             std::span<const Match> expected,
                             std::string_view source, std::string& text) {
  text.resize(text.size() - 2);
  text += ",\"expected\":";
  AppendMatchesJson(requests, expected, text);
  text.pop_back();
  text += ",\"source\":";
  AppendJsonString(source, text);
  text += "}\n";
}

}  // namespace

CaseFile ParseCaseFile(std::string_view json) {
  const simdjson::padded_string padded(json);
  return Parse(padded);
}

CaseFile ReadCaseFile(const std::string& path) {
  return ReadCase(path, &Parse);
}

std::vector<CaseFile> ReadCaseFolder(const std::string& dir) {
  return ReadFolder(dir, &Parse);
}

ReplayCaseFile ParseReplayCaseFile(std::string_view json) {
  const simdjson::padded_string padded(json);
  return ParseReplay(padded);
}

ReplayCaseFile ReadReplayCaseFile(const std::string& path) {
  return ReadCase(path, &ParseReplay);
}

std::vector<ReplayCaseFile> ReadReplayCaseFolder(const std::string& dir) {
  return ReadFolder(dir, &ParseReplay);
}

ReplayInput ReadReplayDocumentOrCaseFile(const std::string& path,
                                         DocumentPlaces* places) {
  return ReadDocumentOrCaseFile(path, json_reader::kReplayMembers, places)
      .replay;
}

ServeInput ReadServeDocumentOrCaseFile(const std::string& path,
                                       DocumentPlaces* places) {
  return ReadDocumentOrCaseFile(path, json_reader::kServeMembers, places);
}

ServeInput ReadRoutedDocumentOrCaseFile(const std::string& path,
                                        DocumentPlaces* places,
                                        RoutingSpec* routing) {
  return ReadDocumentOrCaseFile(path, json_reader::kRoutedMembers, places,
                                routing);
}

ServeInput ReadRoutedCaseDocument(const std::string& path,
                                  RoutingSpec* routing) {
  const std::string text = ReadPaddedFile(path);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document root;
  simdjson::ondemand::object document;
  std::string_view raw;
  if (parser.iterate(PaddedView(text)).get(root) != simdjson::SUCCESS ||
      root["document"].get_object().get(document) != simdjson::SUCCESS ||
      document.raw_json().get(raw) != simdjson::SUCCESS) {
    throw InputError(EscapeForMessage(path, 1024) + ": $.document",
                     "expected a case file's document object");
  }
  const std::string copy = PaddedCopy(raw);
  try {
    return json_reader::ReadDocument(
        PaddedView(copy), json_reader::kRoutedMembers, nullptr, routing);
  } catch (const InputError& error) {
    throw InputError(EscapeForMessage(path, 1024) + ": $.document" +
                         error.location().substr(
                             std::min<std::size_t>(1, error.location().size())),
                     error.problem());
  }
}

std::string FormatCaseFile(const BatchInput& input,
                           std::span<const Match> expected,
                           std::string_view source) {
  // AppendBatchInputJson ends with "}\n" and AppendMatchesJson with "\n":
  // both are reused, not re-implemented, and spliced here.
  std::string text;
  AppendBatchInputJson(input, text);
  AppendExpectedAndSource(input.requests, expected, source, text);
  return text;
}

std::string FormatReplayCaseFile(const ReplayInput& input,
                                 std::span<const Match> expected,
                                 std::string_view source) {
  std::string text = "{\"document\":";
  AppendReplayDocumentJson(input, text);
  text.pop_back();  // the document's newline
  text += "}\n";    // as if the case ended here, then extended
  AppendExpectedAndSource(input.requests, expected, source, text);
  return text;
}

}  // namespace kvprefix
