// The pieces of io's strict readers (json_reader.h).
#include "io/json_reader.h"

#include <fmt/format.h>

#include <limits>

#include "io/json_strings.h"

namespace kvprefix::json_reader {

namespace ondemand = simdjson::ondemand;

void ReadTokens(const Context& context, Value value, const JsonPath& path,
                SequenceList& out) {
  ondemand::array tokens;
  if (value.get_array().get(tokens) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path.str(),
                                       "an array of tokens");
  }
  std::size_t j = 0;
  for (auto token : tokens) {
    out.PushToken(static_cast<Token>(json_diagnostics::ReadInteger(
        context, token, std::numeric_limits<Token>::min(),
        std::numeric_limits<Token>::max(), path.Index(j))));
    ++j;
  }
  out.CloseSequence();
}

void ReadSequences(const Context& context, Value value, const JsonPath& path,
                   SequenceList& out) {
  ondemand::array sequences;
  if (value.get_array().get(sequences) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path.str(), "an array");
  }
  std::size_t i = 0;
  for (auto sequence : sequences) {
    ReadTokens(context, sequence, path.Index(i), out);
    ++i;
  }
}

std::uint64_t ReadUnsigned(const Context& context, Value value,
                           const JsonPath& path) {
  std::uint64_t number = 0;
  if (value.get_uint64().get(number) == simdjson::SUCCESS) return number;
  // simdjson refuses a sign on an unsigned number, even on -0, which every
  // signed reader (tokens, page_size) takes as 0.
  std::int64_t zero = -1;
  if (value.get_int64().get(zero) == simdjson::SUCCESS && zero == 0) return 0;
  throw json_diagnostics::Unexpected(context, value, path.str(),
                                     "an unsigned 64-bit integer");
}

std::string ReadString(const Context& context, Value value,
                       const JsonPath& path) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    return std::string(text);
  }
  ondemand::value string;
  ondemand::json_type type;
  if (value.get(string) == simdjson::SUCCESS &&
      string.type().get(type) == simdjson::SUCCESS &&
      type == ondemand::json_type::string) {
    throw json_diagnostics::StringError(context, string.raw_json_token().data(),
                                        path.str());
  }
  throw json_diagnostics::Unexpected(context, value, path.str(), "a string");
}

InputError UnknownMember(const Context& context, const JsonPath& path,
                         std::span<const std::string_view> names,
                         std::string_view raw_key) {
  std::string expected;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) expected += i + 1 == names.size() ? " or " : ", ";
    expected += fmt::format("\"{}\"", names[i]);
  }
  return InputError(
      context.Prefix() + json_diagnostics::MemberPath(raw_key, path.str()),
      fmt::format("expected {}, found an unknown member \"{}\"", expected,
                  EscapeForMessage(raw_key)));
}

}  // namespace kvprefix::json_reader
