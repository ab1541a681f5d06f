// The radix engine as a plugin, right but for the one fault its FAULT macro
// names, which strikes only on some inputs: what `kvprefix verify` must
// catch, report with the input and shrink without dying (verify_test.cc,
// plugin_test.cc); or, for FAULT_REFUSE_LFU, not a fault at all: a cache
// that does not implement lfu and refuses it, which verify must skip; or,
// for FAULT_IGNORE_MODEL, a cache written for SPEC §8 that reads no model
// and answers §8's trie for vllm and sglang too, which verify and the
// fuzzer must catch.
#include <cstdint>
#include <stdexcept>

#include "kvprefix/paged_index.h"
#include "optimized/radix_trie.h"
#include "plugin/plugin_export.h"

#define FAULT_CRASH 1    // a match containing token 3 after 2 inserts: NULL
#define FAULT_HANG 2     // a match of 3 or more tokens starting with 4: loops
#define FAULT_GARBAGE 3  // a match containing token 5: one token too many
#define FAULT_REFUSE_LFU 4    // create refuses the policy lfu
#define FAULT_IGNORE_MODEL 5  // builds SPEC §8's trie whatever the model

namespace {

class FaultyRadix : public kvprefix::PagedIndex<kvprefix::RadixTrie> {
 public:
  using PagedIndex::PagedIndex;
  explicit FaultyRadix(const kvprefix::CacheOptions& options)
      : PagedIndex(FAULT == FAULT_IGNORE_MODEL ? SpecOptions(options)
                                               : options) {
    // std::invalid_argument is how a constructor refuses options
    // (plugin/plugin_export.h): KVPREFIX_INVALID_ARGUMENT.
    if (FAULT == FAULT_REFUSE_LFU &&
        options.policy == kvprefix::EvictionPolicy::kLfu) {
      throw std::invalid_argument("this cache implements lru and fifo only");
    }
  }

  kvprefix::NodeId Insert(kvprefix::TokenSpan sequence) {
    ++inserts_;
    return PagedIndex::Insert(sequence);
  }

  kvprefix::Match MatchPrefix(kvprefix::TokenSpan request) const {
    kvprefix::Match match = PagedIndex::MatchPrefix(request);
    if (FAULT == FAULT_CRASH && inserts_ >= 2 && Contains(request, 3)) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;
    }
    if (FAULT == FAULT_HANG && request.size() >= 3 && request[0] == 4) {
      for (volatile bool forever = true; forever;) {
      }
    }
    if (FAULT == FAULT_GARBAGE && Contains(request, 5)) {
      match.matched_length = request.size() + 1;
    }
    return match;
  }

  // The serving step through the faulty match.
  kvprefix::Match Access(kvprefix::TokenSpan request) {
    const kvprefix::Match match = MatchPrefix(request);
    Insert(request);
    return match;
  }

 private:
  // `options` as a cache that knows only SPEC §8 reads them: without the
  // model, match limit and trigger of SPEC §9.
  static kvprefix::CacheOptions SpecOptions(
      const kvprefix::CacheOptions& options) {
    return {.capacity = options.capacity,
            .policy = options.policy,
            .page_size = options.page_size};
  }

  static bool Contains(kvprefix::TokenSpan tokens, kvprefix::Token token) {
    for (const kvprefix::Token t : tokens) {
      if (t == token) return true;
    }
    return false;
  }

  std::uint64_t inserts_ = 0;
};

}  // namespace

KVPREFIX_EXPORT_PLUGIN(FaultyRadix)
