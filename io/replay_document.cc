// Reading SPEC §8 replay documents with io's strict readers.
#include "io/replay_document.h"

#include <fmt/format.h>

#include <array>
#include <limits>

#include "io/json_reader.h"
#include "io/json_strings.h"
#include "io/padded_file.h"

namespace kvprefix {
namespace json_reader {

void ReadReplayMember(const Context& context, std::size_t index, Value value,
                      const JsonPath& path, ReplayInput& out) {
  switch (index) {
    case 0:
      ReadSequences(context, value, path, out.requests);
      break;
    case 1:
      out.options.capacity = ReadUnsigned(context, value, path);
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
      out.options.policy = *policy;
      break;
    }
    default:
      out.options.page_size = static_cast<std::uint64_t>(
          json_diagnostics::ReadInteger(context, value, 1, kMaxPageSize, path));
  }
}

ReplayInput ReadReplayDocument(simdjson::padded_string_view json) {
  ReplayInput input;
  ReadRootObject(json, kReplayMembers, 1,
                 [&](const Context& context, std::size_t index, Value value,
                     const JsonPath& path) {
                   ReadReplayMember(context, index, value, path, input);
                 });
  return input;
}

}  // namespace json_reader

ReplayInput ParseReplayDocument(std::string_view json) {
  const std::string padded = PaddedCopy(json);
  return json_reader::ReadReplayDocument(PaddedView(padded));
}

ReplayInput ReadReplayDocumentFile(const std::string& path) {
  const std::string text = ReadPaddedFile(path);
  return json_reader::ReadReplayDocument(PaddedView(text));
}

}  // namespace kvprefix
