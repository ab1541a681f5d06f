// Small deterministic workloads for tests: sequences that share prefixes the
// way real traffic does (a few system prompts, multi-turn extensions,
// branches), generated from a seed so every failure can be replayed.
#ifndef KVPREFIX_TESTING_SHARED_PREFIX_SEQUENCES_H_
#define KVPREFIX_TESTING_SHARED_PREFIX_SEQUENCES_H_

#include <cstdint>

#include "kvprefix/sequence_list.h"

namespace kvprefix::test {

// `count` sequences of about `length` tokens: each starts as a copy of a
// prefix (random length) of an earlier sequence, or of nothing, and then
// continues with tokens from an alphabet of `alphabet` values. Deterministic
// in `seed`. O(count * length).
SequenceList SharedPrefixSequences(std::uint64_t seed, std::size_t count,
                                   std::size_t length, std::uint32_t alphabet);

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_SHARED_PREFIX_SEQUENCES_H_
