// OptionsRefused: a cache asked for options it does not implement.
#ifndef KVPREFIX_KVPREFIX_OPTIONS_REFUSED_H_
#define KVPREFIX_KVPREFIX_OPTIONS_REFUSED_H_

#include <stdexcept>

namespace kvprefix {

// Thrown when a cache is asked for options it does not implement (a model,
// policy, page size or capacity it leaves out): a plugin's create answering
// KVPREFIX_INVALID_ARGUMENT (plugin/plugin_engine.h), or a user's own cache
// class whose constructor refuses. what() names the cache, the options and
// the reason ("plugin 'mycache' (./libmycache.so) refuses capacity 4, lfu,
// page size 1: mycache implements the policies lru and fifo only"). A
// refusal is no bug: `kvprefix verify`, the differential fuzzer
// (checking/fuzz_input.h) and Python's kvprefix.testing skip the input and
// count it (they skip on any std::invalid_argument from building a cache);
// Python raises it as kvprefix.Refused, a ValueError. Header-only.
class OptionsRefused : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_OPTIONS_REFUSED_H_
