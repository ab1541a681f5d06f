#include "router/policies/consistent_hash.h"

#include <algorithm>

namespace kvprefix {

TokenSpan RingKey(TokenSpan tokens, std::uint64_t hash_prefix) {
  return tokens.first(std::min<std::uint64_t>(tokens.size(), hash_prefix));
}

}  // namespace kvprefix
