// A libFuzzer target for a user's own cache (my_trie.h), from the installed
// kvprefix: bytes decode into operations that run on the trie and on the
// reference (checking/fuzz_input.h), and a disagreement aborts with the
// report. Unbounded: the trie never evicts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "checking/fuzz_input.h"
#include "my_trie.h"

#ifndef MY_TRIE_PACK16
#define MY_TRIE_PACK16 false
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  const auto failure = kvprefix::checking::CheckFuzzInput(
      {data, size},
      [](const kvprefix::CacheOptions&) {
        std::vector<std::unique_ptr<kvprefix::PrefixIndex>> engines;
        engines.push_back(std::make_unique<
                          kvprefix::EngineAdapter<MyTrie<MY_TRIE_PACK16>>>());
        return engines;
      },
      {.unbounded = true});
  if (failure) {
    std::fputs(failure->c_str(), stderr);
    std::abort();
  }
  return 0;
}
