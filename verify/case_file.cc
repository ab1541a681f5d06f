// Writing case files: see case_file.h.
#include "verify/case_file.h"

#include <nlohmann/json.hpp>

#include "io/json_output.h"

namespace kvprefix::verify {

std::string FormatCaseFile(const BatchInput& input,
                           std::span<const Match> expected,
                           std::string_view source) {
  // AppendBatchInputJson ends with "}\n" and AppendMatchesJson with "\n":
  // both are reused, not re-implemented, and spliced here.
  std::string text;
  AppendBatchInputJson(input, text);
  text.resize(text.size() - 2);
  text += ",\"expected\":";
  AppendMatchesJson(input.requests, expected, text);
  text.pop_back();
  text += ",\"source\":";
  text += nlohmann::json(std::string(source)).dump();
  text += "}\n";
  return text;
}

}  // namespace kvprefix::verify
