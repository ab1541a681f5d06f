// The requests of a serving replay as a worker reads them (SPEC §10.1,
// §10.4): each prompt (namespaces folded, SPEC §8.1), arrival, output
// length, stored length L and stored sequence.
#ifndef KVPREFIX_SERVE_SERVE_REQUESTS_H_
#define KVPREFIX_SERVE_SERVE_REQUESTS_H_

#include <cstdint>
#include <vector>

#include "kvprefix/request.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

class ServeRequests {
 public:
  // Reads `input` (kept by reference: it must outlive this object), with
  // its namespaces folded into the prompts' first tokens. Under output
  // "unique" request r's output tokens are the next L - n of one counter
  // that starts above the largest token of the replay, so that they equal
  // no other token (§10.4). Throws std::invalid_argument if the arrivals
  // or output lengths are not one per request, the arrivals decrease, or
  // the output tokens would pass 2^31 - 1. O(tokens).
  explicit ServeRequests(const ServeInput& input);

  std::size_t size() const { return prompts_->size(); }
  // Request `id`'s prompt (folded), arrival (µs), output length (tokens,
  // the decode's), stored length L (§10.4). O(1).
  TokenSpan prompt(RequestId id) const { return (*prompts_)[id]; }
  std::uint64_t arrival_us(RequestId id) const {
    return arrivals_.empty() ? 0 : arrivals_[id];
  }
  std::uint64_t output_tokens(RequestId id) const {
    return outputs_.empty() ? 0 : outputs_[id];
  }
  std::uint64_t stored_length(RequestId id) const;
  // The stored sequence: the prompt, then L - n output tokens, in `buffer`
  // (replaced). O(L).
  TokenSpan Stored(RequestId id, std::vector<Token>& buffer) const;
  const ServeOptions& options() const { return options_; }

 private:
  // §10.4: L - n.
  std::uint64_t StoredOutput(RequestId id) const;

  SequenceList folded_;  // the prompts when some namespace is not ""
  const SequenceList* prompts_;
  std::vector<std::uint64_t> arrivals_;
  std::vector<std::uint64_t> outputs_;
  ServeOptions options_;
  // Output "unique": the first output token of each request.
  std::vector<Token> first_output_token_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_SERVE_SERVE_REQUESTS_H_
