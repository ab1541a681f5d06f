// The pieces of io's strict readers (json_reader.h).
#include "io/json_reader.h"

#include <fmt/format.h>

#include <limits>

#include "io/json_strings.h"

namespace kvprefix::json_reader {

namespace ondemand = simdjson::ondemand;

void ReadTokens(const Context& context, Value value, const std::string& path,
                SequenceList& out) {
  ondemand::array tokens;
  if (value.get_array().get(tokens) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path,
                                       "an array of tokens");
  }
  std::size_t j = 0;
  for (auto token : tokens) {
    out.PushToken(static_cast<Token>(json_diagnostics::ReadInteger(
        context, token, std::numeric_limits<Token>::min(),
        std::numeric_limits<Token>::max(),
        [&] { return fmt::format("{}[{}]", path, j); })));
    ++j;
  }
  out.CloseSequence();
}

void ReadSequences(const Context& context, Value value, const std::string& path,
                   SequenceList& out) {
  ondemand::array sequences;
  if (value.get_array().get(sequences) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path, "an array");
  }
  std::size_t i = 0;
  for (auto sequence : sequences) {
    ReadTokens(context, sequence, fmt::format("{}[{}]", path, i), out);
    ++i;
  }
}

std::uint64_t ReadUnsigned(const Context& context, Value value,
                           const std::string& path) {
  std::uint64_t number = 0;
  if (value.get_uint64().get(number) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path,
                                       "an unsigned 64-bit integer");
  }
  return number;
}

std::string ReadString(const Context& context, Value value,
                       const std::string& path) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path, "a string");
  }
  return std::string(text);
}

InputError UnknownMember(const Context& context, const std::string& path,
                         std::span<const std::string_view> names,
                         std::string_view raw_key) {
  std::string expected;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) expected += i + 1 == names.size() ? " or " : ", ";
    expected += fmt::format("\"{}\"", names[i]);
  }
  return InputError(
      context.prefix + json_diagnostics::MemberPath(raw_key, path),
      fmt::format("expected {}, found an unknown member \"{}\"", expected,
                  EscapeForMessage(raw_key)));
}

}  // namespace kvprefix::json_reader
