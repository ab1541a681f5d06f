// Turns kvprefix's EngineList into GoogleTest's ::testing::Types, so typed
// suites are instantiated for exactly the engines of engines/all_engines.h.
#ifndef KVPREFIX_TESTING_ENGINE_TYPES_H_
#define KVPREFIX_TESTING_ENGINE_TYPES_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engines/all_engines.h"

namespace kvprefix::test {

template <typename List>
struct GtestTypes;
template <typename... Engines>
struct GtestTypes<EngineList<Engines...>> {
  using type = ::testing::Types<Engines...>;
};

// Test names print the engine's registry name ("radix"), not a mangled type.
struct EngineTypeName {
  template <typename E>
  static std::string GetName(int) {
    std::string name(E::kName);
    std::replace(name.begin(), name.end(), '-', '_');  // gtest identifiers
    return name;
  }
};

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_ENGINE_TYPES_H_
