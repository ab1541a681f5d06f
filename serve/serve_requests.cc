#include "serve/serve_requests.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "kvprefix/namespaces.h"

namespace kvprefix {
namespace {

void CheckLength(const std::vector<std::uint64_t>& values, std::size_t requests,
                 const char* member) {
  if (!values.empty() && values.size() != requests) {
    throw std::invalid_argument(
        std::string(member) + " has " + std::to_string(values.size()) +
        " entries for " + std::to_string(requests) + " requests");
  }
}

}  // namespace

ServeRequests::ServeRequests(const ServeInput& input)
    : prompts_(&input.replay.requests),
      arrivals_(input.arrivals_us),
      outputs_(input.output_lengths),
      options_(input.serve) {
  const std::size_t requests = input.replay.requests.size();
  CheckLength(arrivals_, requests, "arrivals_us");
  CheckLength(outputs_, requests, "output_lengths");
  for (std::size_t i = 1; i < arrivals_.size(); ++i) {
    if (arrivals_[i] < arrivals_[i - 1]) {
      throw std::invalid_argument("arrivals_us[" + std::to_string(i) +
                                  "] is smaller than the arrival before it");
    }
  }
  if (HasNamespaces(input.replay.namespaces)) {
    NamespaceFolder folder;
    folded_ = folder.Folded(input.replay.requests, input.replay.namespaces);
    prompts_ = &folded_;
  }
  if (options_.output != OutputMode::kUnique) return;
  // §10.4: "L − n output tokens equal to no other token of the replay".
  std::int64_t next = 0;
  for (const TokenSpan prompt : *prompts_) {
    for (const Token token : prompt) {
      next = std::max<std::int64_t>(next, std::int64_t{token} + 1);
    }
  }
  first_output_token_.reserve(requests);
  for (RequestId id = 0; id < requests; ++id) {
    first_output_token_.push_back(static_cast<Token>(
        std::min<std::int64_t>(next, std::numeric_limits<Token>::max())));
    const std::uint64_t count = StoredOutput(id);
    if (count > static_cast<std::uint64_t>(std::numeric_limits<Token>::max()) -
                    static_cast<std::uint64_t>(next) + 1) {
      throw std::invalid_argument(
          "output \"unique\": the output tokens of request " +
          std::to_string(id) +
          " pass 2^31 - 1 above the replay's largest token");
    }
    next += static_cast<std::int64_t>(count);
  }
}

std::uint64_t ServeRequests::StoredOutput(RequestId id) const {
  // §10.4: "L ... is n under output "none", and n + max(o − 1, 0) under
  // "unique" (the last output token is produced but never stored; L = 0
  // when n = 0)".
  if (options_.output != OutputMode::kUnique || prompt(id).empty()) return 0;
  const std::uint64_t output = output_tokens(id);
  return output == 0 ? 0 : output - 1;
}

std::uint64_t ServeRequests::stored_length(RequestId id) const {
  return prompt(id).size() + StoredOutput(id);
}

TokenSpan ServeRequests::Stored(RequestId id,
                                std::vector<Token>& buffer) const {
  const TokenSpan tokens = prompt(id);
  const std::uint64_t output = StoredOutput(id);
  if (output == 0) return tokens;
  buffer.assign(tokens.begin(), tokens.end());
  for (std::uint64_t i = 0; i < output; ++i) {
    buffer.push_back(static_cast<Token>(first_output_token_[id] + i));
  }
  return buffer;
}

}  // namespace kvprefix
