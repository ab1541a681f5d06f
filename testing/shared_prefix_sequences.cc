// Test workloads: see the header.
#include "testing/shared_prefix_sequences.h"

#include <random>
#include <vector>

namespace kvprefix::test {

SequenceList SharedPrefixSequences(std::uint64_t seed, std::size_t count,
                                   std::size_t length, std::uint32_t alphabet) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::uint32_t> token(0, alphabet - 1);
  std::uniform_int_distribution<std::size_t> extra(0, length);
  SequenceList list;
  std::vector<Token> sequence;
  for (std::size_t i = 0; i < count; ++i) {
    sequence.clear();
    if (i > 0 && random() % 4 != 0) {
      const TokenSpan earlier = list[random() % i];
      const std::size_t shared = extra(random) % (earlier.size() + 1);
      sequence.assign(earlier.begin(), earlier.begin() + shared);
    }
    const std::size_t target = length / 2 + extra(random) / 2;
    while (sequence.size() < target) {
      sequence.push_back(static_cast<Token>(token(random)));
    }
    list.Append(sequence);
  }
  return list;
}

}  // namespace kvprefix::test
