// Reading the batch job's JSON input (SPEC §4) with simdjson On Demand.
//
// The reader consumes every value it is given (it never lets On Demand skip
// a value unread), so every token is validated, and it checks the root for
// trailing content itself: On Demand checks neither on its own.
#include "io/json_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

#include "io/json_diagnostics.h"
#include "io/padded_file.h"

namespace kvprefix {
namespace {

using json_diagnostics::Context;
namespace ondemand = simdjson::ondemand;

constexpr std::array<std::string_view, 2> kMembers = {"cached_sequences",
                                                      "requests"};

// Reads the array of arrays of tokens at `path` (e.g. "$.requests").
void ReadSequences(const Context& context,
                   simdjson::simdjson_result<ondemand::value> value,
                   const std::string& path, SequenceList& out) {
  ondemand::array sequences;
  if (value.get_array().get(sequences) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path, "an array");
  }
  std::size_t i = 0;
  for (auto sequence : sequences) {
    ondemand::array tokens;
    if (sequence.get_array().get(tokens) != simdjson::SUCCESS) {
      throw json_diagnostics::Unexpected(context, sequence,
                                         fmt::format("{}[{}]", path, i),
                                         "an array of tokens");
    }
    std::size_t j = 0;
    for (auto token : tokens) {
      out.PushToken(static_cast<Token>(json_diagnostics::ReadInteger(
          context, token, std::numeric_limits<Token>::min(),
          std::numeric_limits<Token>::max(),
          [&] { return fmt::format("{}[{}][{}]", path, i, j); })));
      ++j;
    }
    out.CloseSequence();
    ++i;
  }
}

BatchInput Parse(simdjson::padded_string_view json) {
  ondemand::parser parser;
  ondemand::document document;
  ondemand::object root;
  simdjson::error_code error = parser.iterate(json).get(document);
  if (error == simdjson::SUCCESS) error = document.get_object().get(root);
  if (error != simdjson::SUCCESS) {
    throw json_diagnostics::DocumentError(error, json, "");
  }
  const Context context{document, json, ""};
  BatchInput input;
  std::array<bool, kMembers.size()> seen = {};
  for (auto member : root) {
    std::string_view key;
    if (member.unescaped_key().get(key) != simdjson::SUCCESS) {
      throw json_diagnostics::SyntaxError(context, "$",
                                          "a member name, ',' or '}'");
    }
    const std::string path = json_diagnostics::MemberPath(key);
    const std::size_t index = static_cast<std::size_t>(
        std::find(kMembers.begin(), kMembers.end(), key) - kMembers.begin());
    if (index == kMembers.size()) {
      throw InputError(
          path, fmt::format("expected \"{}\" or \"{}\", found an "
                            "unknown member \"{}\"",
                            kMembers[0], kMembers[1], EscapeForMessage(key)));
    }
    if (seen[index]) throw json_diagnostics::DuplicateMember("", key);
    seen[index] = true;
    ReadSequences(context, member.value(), path,
                  index == 0 ? input.cached_sequences : input.requests);
  }
  for (std::size_t index = 0; index < kMembers.size(); ++index) {
    if (!seen[index]) {
      throw json_diagnostics::MissingMember("", kMembers[index]);
    }
  }
  json_diagnostics::CheckAtEnd(context);
  return input;
}

}  // namespace

BatchInput ParseBatchInput(std::string_view json) {
  const simdjson::padded_string padded(json);
  return Parse(padded);
}

BatchInput ReadBatchInputFile(const std::string& path) {
  const std::string text = ReadPaddedFile(path);
  return Parse(PaddedView(text));
}

}  // namespace kvprefix
