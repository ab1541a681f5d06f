// Loading the shared regression cases with nlohmann-json (test-only code:
// clarity over speed; the product's parser is io/json_input). Every value is
// checked as strictly as io/json_input checks SPEC §4 input, since `kvprefix
// verify --cases` sends these tokens to the implementation under test:
// nlohmann's get<>() would turn 4294967297 into 1 and true into 1.
#include "testing/shared_cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>

#include "io/json_output.h"

namespace kvprefix::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

[[noreturn]] void ThrowUnexpected(const std::string& path,
                                  std::string_view expected,
                                  const Json& found) {
  throw InputError(
      path, fmt::format("expected {}, found {}", expected,
                        EscapeForMessage(found.dump(
                            -1, ' ', false, Json::error_handler_t::replace))));
}

// A parser callback rejecting duplicated members, which nlohmann would
// otherwise resolve silently (the last one wins). It tracks where the parser
// is (member names, element counts) and builds a JSON path only on error.
class DuplicateMemberCheck {
 public:
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        CountElement();
        frames_.push_back(
            Frame{event == Json::parse_event_t::object_start, "", 0, {}});
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames_.pop_back();
        break;
      case Json::parse_event_t::key: {
        Frame& object = frames_.back();
        object.key = parsed.get<std::string>();
        if (!object.keys.insert(object.key).second) {
          throw InputError(Path(frames_.size() - 1),
                           fmt::format("expected each member once, found "
                                       "\"{}\" a second time",
                                       EscapeForMessage(object.key)));
        }
        break;
      }
      case Json::parse_event_t::value:
        CountElement();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_object;
    std::string key;    // objects: the member being read
    std::size_t count;  // arrays: elements started so far
    std::set<std::string> keys;
  };

  void CountElement() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().count;
  }

  // The path of the container frames_[depth] ("$" for the root).
  std::string Path(std::size_t depth) const {
    std::string path = "$";
    for (std::size_t i = 0; i < depth; ++i) {
      if (frames_[i].is_object) {
        path += '.';
        path += EscapeForMessage(frames_[i].key);
      } else {
        path += fmt::format("[{}]", frames_[i].count - 1);
      }
    }
    return path;
  }

  std::vector<Frame> frames_;
};

// `value` as an object whose members are all among `allowed`.
const Json& Object(const Json& value, const std::string& path,
                   std::initializer_list<std::string_view> allowed) {
  if (!value.is_object()) ThrowUnexpected(path, "an object", value);
  for (const auto& [key, member] : value.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      throw InputError(path + "." + EscapeForMessage(key),
                       "expected a known member, found an unknown member");
    }
  }
  return value;
}

const Json& Member(const Json& object, const std::string& path,
                   const std::string& name) {
  const auto member = object.find(name);
  if (member == object.end()) {
    throw InputError(path, fmt::format("expected member \"{}\", found an "
                                       "object without it",
                                       name));
  }
  return *member;
}

// is_number_integer() excludes booleans and fractions; non-negative
// integers are stored unsigned, negative ones signed.
Token ToToken(const Json& value, const std::string& path) {
  constexpr auto kMin = std::numeric_limits<Token>::min();
  constexpr auto kMax = std::numeric_limits<Token>::max();
  if ((value.is_number_unsigned() &&
       value.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMax)) ||
      (value.is_number_integer() && !value.is_number_unsigned() &&
       value.get<std::int64_t>() >= kMin)) {
    return static_cast<Token>(value.get<std::int64_t>());
  }
  ThrowUnexpected(path, fmt::format("an integer from {} to {}", kMin, kMax),
                  value);
}

std::uint64_t ToUnsigned(const Json& value, const std::string& path) {
  if (!value.is_number_unsigned()) {
    ThrowUnexpected(path, "an unsigned 64-bit integer", value);
  }
  return value.get<std::uint64_t>();
}

std::vector<Token> ToTokens(const Json& array, const std::string& path) {
  if (!array.is_array()) ThrowUnexpected(path, "an array of tokens", array);
  std::vector<Token> tokens;
  for (std::size_t j = 0; j < array.size(); ++j) {
    tokens.push_back(ToToken(array[j], fmt::format("{}[{}]", path, j)));
  }
  return tokens;
}

SequenceList ToSequences(const Json& arrays, const std::string& path) {
  if (!arrays.is_array()) ThrowUnexpected(path, "an array", arrays);
  SequenceList list;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    list.Append(ToTokens(arrays[i], fmt::format("{}[{}]", path, i)));
  }
  return list;
}

void ReadCase(const Json& json, SharedCase& result) {
  Object(json, "$", {"cached_sequences", "requests", "expected", "source"});
  result.input.cached_sequences =
      ToSequences(Member(json, "$", "cached_sequences"), "$.cached_sequences");
  result.input.requests =
      ToSequences(Member(json, "$", "requests"), "$.requests");
  if (json.contains("source")) {
    if (!json["source"].is_string()) {
      ThrowUnexpected("$.source", "a string", json["source"]);
    }
    result.source = json["source"].get<std::string>();
  }
  const Json& matches =
      Member(Object(Member(json, "$", "expected"), "$.expected", {"matches"}),
             "$.expected", "matches");
  if (!matches.is_array() || matches.size() != result.input.requests.size()) {
    ThrowUnexpected("$.expected.matches",
                    fmt::format("an array of {} matches (one per request)",
                                result.input.requests.size()),
                    matches);
  }
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const std::string path = fmt::format("$.expected.matches[{}]", i);
    const Json& match = Object(
        matches[i], path, {"matched_length", "cache_node", "uncached_suffix"});
    const Match parsed{
        ToUnsigned(Member(match, path, "matched_length"),
                   path + ".matched_length"),
        ToUnsigned(Member(match, path, "cache_node"), path + ".cache_node")};
    const std::vector<Token> suffix = ToTokens(
        Member(match, path, "uncached_suffix"), path + ".uncached_suffix");
    const TokenSpan request = result.input.requests[i];
    if (parsed.matched_length > request.size() ||
        !std::equal(suffix.begin(), suffix.end(),
                    request.begin() + parsed.matched_length, request.end())) {
      throw InputError(path,
                       "expected an uncached_suffix that is the "
                       "request's tail after matched_length");
    }
    result.expected.push_back(parsed);
  }
}

// `path` as given names the file in errors (not its file name alone: that
// is "null" for /dev/null).
SharedCase ParseCase(const fs::path& path) {
  const std::string file_name = path.string();
  std::ifstream file(path);
  if (!file) throw IoError(file_name + ": cannot open");
  std::stringstream text;
  text << file.rdbuf();
  SharedCase result;
  result.name = path.filename().string();
  try {
    ReadCase(Json::parse(text.str(), DuplicateMemberCheck()), result);
  } catch (const InputError& error) {
    throw InputError(file_name + ": " + error.location(), error.problem());
  } catch (const Json::parse_error& error) {
    // what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 1: ...": it names the place itself.
    const std::string_view what = error.what();
    throw InputError(file_name, std::string(what.substr(what.find("] ") + 2)));
  }
  AppendMatchesJson(result.input.requests, result.expected,
                    result.expected_json);
  return result;
}

}  // namespace

std::string SharedCasesDir() { return KVPREFIX_SOURCE_DIR "/tests/data/cases"; }

SharedCase LoadSharedCase(const std::string& path) { return ParseCase(path); }

std::vector<SharedCase> LoadSharedCases(const std::string& dir) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<SharedCase> cases;
  for (const auto& path : paths) cases.push_back(ParseCase(path));
  return cases;
}

}  // namespace kvprefix::testing
