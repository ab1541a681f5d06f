// Vocabulary types shared by every kvprefix engine: tokens, node IDs, match
// results and the errors engines throw. See SPEC §1 for the semantics.
#ifndef KVPREFIX_KVPREFIX_TYPES_H_
#define KVPREFIX_KVPREFIX_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace kvprefix {

// A token is any signed 32-bit value; the whole range is valid, including
// zero, negatives, INT32_MIN and INT32_MAX.
using Token = std::int32_t;

// A node ID. The root is 0; every other node gets the next unused ID
// (1, 2, 3, ...) in creation order, and keeps it forever.
using NodeId = std::uint64_t;

// A read-only view of a sequence of tokens (a cached sequence or a request).
using TokenSpan = std::span<const Token>;

inline constexpr NodeId kRootNode = 0;

// The answer to matching one request against the index (SPEC §1).
//   matched_length: number of leading request tokens found as a path from the
//                   root (tokens, 0 <= matched_length <= request length);
//   cache_node:     ID of the node that path ends at (kRootNode if 0 tokens).
// The uncached suffix is not stored: it is request[matched_length..].
struct Match {
  std::size_t matched_length = 0;
  NodeId cache_node = kRootNode;

  friend bool operator==(const Match&, const Match&) = default;
};

// Thrown by an engine that stores node IDs (or offsets) narrower than 64 bits
// when an insert would need more than it can represent. The index is left
// unchanged by the failing insert (strong guarantee) unless the engine's
// header says otherwise.
class CapacityError : public std::length_error {
 public:
  using std::length_error::length_error;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_TYPES_H_
