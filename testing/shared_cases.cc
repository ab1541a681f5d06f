// Loading the shared regression cases with nlohmann-json (test-only code:
// clarity over speed; the product's parser is io/json_input).
#include "testing/shared_cases.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/json_output.h"

#ifndef KVPREFIX_SHARED_DIR
#define KVPREFIX_SHARED_DIR "../shared"
#endif

namespace kvprefix::testing {
namespace {

namespace fs = std::filesystem;

SequenceList ToSequences(const nlohmann::json& arrays) {
  SequenceList list;
  for (const auto& sequence : arrays) {
    for (const auto& token : sequence) list.PushToken(token.get<Token>());
    list.CloseSequence();
  }
  return list;
}

SharedCase ParseCase(const fs::path& path) {
  std::ifstream file(path);
  if (!file) throw IoError(path.string() + ": cannot open");
  std::stringstream text;
  text << file.rdbuf();
  SharedCase result;
  result.name = path.filename().string();
  try {
    const auto json = nlohmann::json::parse(text.str());
    result.input.cached_sequences = ToSequences(json.at("cached_sequences"));
    result.input.requests = ToSequences(json.at("requests"));
    result.source = json.value("source", "");
    const auto& matches = json.at("expected").at("matches");
    if (matches.size() != result.input.requests.size()) {
      throw InputError("$.expected.matches", "one match per request expected");
    }
    for (std::size_t i = 0; i < matches.size(); ++i) {
      Match match{matches[i].at("matched_length").get<std::size_t>(),
                  matches[i].at("cache_node").get<NodeId>()};
      const TokenSpan request = result.input.requests[i];
      const auto suffix =
          matches[i].at("uncached_suffix").get<std::vector<Token>>();
      if (match.matched_length > request.size() ||
          !std::equal(suffix.begin(), suffix.end(),
                      request.begin() + match.matched_length,
                      request.end())) {
        throw InputError("$.expected.matches[" + std::to_string(i) + "]",
                         "uncached_suffix is not the request's tail");
      }
      result.expected.push_back(match);
    }
  } catch (const nlohmann::json::exception& error) {
    throw InputError(result.name, error.what());
  }
  AppendMatchesJson(result.input.requests, result.expected,
                    result.expected_json);
  return result;
}

}  // namespace

std::string SharedCasesDir() {
  const char* env = std::getenv("KVPREFIX_SHARED_DIR");
  const fs::path dir = fs::path(env != nullptr ? env : KVPREFIX_SHARED_DIR) /
                       "cases";
  return fs::is_directory(dir) ? dir.string() : std::string();
}

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
