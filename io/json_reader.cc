// The pieces of io's strict readers (json_reader.h).
#include "io/json_reader.h"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "io/json_strings.h"
#include "kvprefix/namespaces.h"

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

std::string CheckNamespaceLength(const Context& context, const JsonPath& path,
                                 std::string text) {
  if (text.size() > kMaxNamespaceBytes) {
    throw InputError(context.Prefix() + path.str(),
                     fmt::format("expected a namespace of at most {} bytes, "
                                 "found {} bytes",
                                 kMaxNamespaceBytes, text.size()));
  }
  return text;
}

void ReadNamespaces(const Context& context, Value value, const JsonPath& path,
                    std::vector<std::string>& out) {
  ondemand::array names;
  if (value.get_array().get(names) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path.str(),
                                       "an array of namespaces (strings)");
  }
  for (auto name : names) {
    const JsonPath name_path = path.Index(out.size());
    out.push_back(CheckNamespaceLength(context, name_path,
                                       ReadString(context, name, name_path)));
  }
}

void CheckCount(const std::string& at, std::size_t found, std::size_t count,
                std::string_view noun, std::string_view what) {
  if (at.empty() || found == count) return;
  throw InputError(
      at, fmt::format("expected {} {}{} (one per {}), found {}", count, noun,
                      count == 1 ? "" : "s", what, found));
}

void CheckNamespaceCount(const std::string& at,
                         const std::vector<std::string>& namespaces,
                         std::size_t count, std::string_view what) {
  CheckCount(at, namespaces.size(), count, "namespace", what);
}

void BatchNamespacesAt::Check(const BatchInput& input) const {
  CheckNamespaceCount(cached, input.cached_namespaces,
                      input.cached_sequences.size(), "cached sequence");
  CheckNamespaceCount(requests, input.namespaces, input.requests.size(),
                      "request");
}

void ReadBatchMember(const Context& context, std::size_t index, Value value,
                     const JsonPath& path, BatchInput& input,
                     BatchNamespacesAt& at) {
  switch (index) {
    case 0:
    case 1:
      ReadSequences(context, value, path,
                    index == 0 ? input.cached_sequences : input.requests);
      return;
    default:
      ReadNamespaces(context, value, path,
                     index == 2 ? input.cached_namespaces : input.namespaces);
      (index == 2 ? at.cached : at.requests) = context.Prefix() + path.str();
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
