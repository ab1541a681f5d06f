// Reading the batch job's JSON input (SPEC §4) with simdjson On Demand.
//
// The reader consumes every value it is given (it never lets On Demand skip
// a value unread), so every token is validated, and it checks the root for
// trailing content itself: On Demand checks neither on its own. A document
// in the plain form every producer writes is read by the fast path
// (json_fast_input.h) instead; on anything else it declines and the whole
// document is read here, so every error is this reader's.
#include "io/json_input.h"

#include <array>
#include <utility>

#include "io/json_fast_input.h"
#include "io/json_reader.h"
#include "io/padded_file.h"

namespace kvprefix {
namespace {

constexpr std::array<std::string_view, 4> kMembers = {
    "cached_sequences", "requests", "cached_namespaces", "namespaces"};

BatchInput Parse(simdjson::padded_string_view json) {
  BatchInput input;
  json_reader::BatchNamespacesAt at;
  json_reader::ReadRootObject(
      json, kMembers, 2,
      [&](const json_reader::Context& context, std::size_t index,
          json_reader::Value value, const json_reader::JsonPath& path) {
        json_reader::ReadBatchMember(context, index, value, path, input, at);
      });
  at.Check(input);
  return input;
}

}  // namespace

BatchInput ParseBatchInput(std::string_view json) {
  if (auto input = ParseBatchInputFast(json)) return std::move(*input);
  return ParseBatchInputStrict(json);
}

BatchInput ParseBatchInputStrict(std::string_view json) {
  const std::string padded = PaddedCopy(json);
  return Parse(PaddedView(padded));
}

BatchInput ReadBatchInputFile(const std::string& path) {
  const std::string text = ReadPaddedFile(path);
  if (auto input = ParseBatchInputFast(text)) return std::move(*input);
  return Parse(PaddedView(text));
}

}  // namespace kvprefix
