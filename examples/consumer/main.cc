// A program that uses kvprefix as a library, as a user's would: built by
// CMakeLists.txt beside it against an installed kvprefix (find_package) or
// a kvprefix source tree (add_subdirectory). The packaging tests build it
// both ways and compare its output with the seed's.
//
//   consumer            answers the seed's first example, as
//                       `kvprefix match examples/seed-1.json` does
//   consumer FILE...    answers each SPEC §4 input file the same way
//
// Every answer is computed by every engine (MakeEngine), which must agree,
// and by the compile-time RadixTrie; it is printed as SPEC §5 JSON (io's
// writer). stderr names the kvprefix version built against. Exit status:
// 0, or 1 with a message if reading fails or two answers differ.
#include <exception>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engines/registry.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "kvprefix/batch.h"
#include "kvprefix/version.h"
#include "optimized/radix_trie.h"

namespace {

// The SPEC §5 answer of `matches` to `input`'s requests.
std::string Json(const kvprefix::BatchInput& input,
                 const std::vector<kvprefix::Match>& matches) {
  std::string json;
  kvprefix::AppendMatchesJson(input.requests, matches, json);
  return json;
}

// The answer of every engine to `input`; throws if two differ.
std::string Answer(const kvprefix::BatchInput& input) {
  kvprefix::RadixTrie radix;  // an engine chosen at compile time
  const std::string answer =
      Json(input, kvprefix::FindPrefixMatches(radix, input));
  for (std::string_view name : kvprefix::EngineNames()) {  // at run time
    std::unique_ptr<kvprefix::PrefixIndex> engine = kvprefix::MakeEngine(name);
    if (Json(input, kvprefix::FindPrefixMatches(*engine, input)) != answer) {
      throw std::runtime_error("engine " + std::string(name) +
                               " disagrees with RadixTrie");
    }
  }
  return answer;
}

}  // namespace

int main(int argc, char** argv) {
  std::cerr << "consumer: kvprefix " << kvprefix::kVersion << "\n";
  try {
    if (argc == 1) {
      kvprefix::BatchInput seed;
      seed.cached_sequences = {{1, 2}, {1, 2, 3}, {4}};
      seed.requests = {{1, 2, 9}, {4, 5}, {5}};
      std::cout << Answer(seed);
    }
    for (int i = 1; i < argc; ++i) {
      std::cout << Answer(kvprefix::ReadBatchInputFile(argv[i]));
    }
  } catch (const std::exception& error) {
    std::cerr << "consumer: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
