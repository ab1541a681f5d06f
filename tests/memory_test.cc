// memory_bytes() is honest: it agrees, within 15%, with the heap growth that
// glibc's mallinfo2() sees while an engine is built.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cmath>
#include <memory>

#include "kvprefix/batch.h"
#include "testing/engine_types.h"
#include "testing/shared_prefix_sequences.h"

namespace kvprefix {
namespace {

// Bytes in use by the program's heap, mmap'ed chunks included.
std::size_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

template <typename E>
void ExpectHonestMemory(const SequenceList& sequences) {
  const std::size_t before = HeapInUse();
  auto engine = std::make_unique<E>();
  for (TokenSpan sequence : sequences) engine->Insert(sequence);
  const std::size_t growth = HeapInUse() - before;
  const double reported = static_cast<double>(engine->memory_bytes());
  EXPECT_NEAR(reported / static_cast<double>(growth), 1.0, 0.15)
      << E::kName << ": memory_bytes() " << reported << " vs heap growth "
      << growth << " for " << engine->node_count() << " nodes";
}

template <typename E>
class MemoryTest : public ::testing::Test {};
TYPED_TEST_SUITE(MemoryTest, test::GtestTypes<AllEngines>::type,
                 test::EngineTypeName);

// Long shared prefixes, like chat and agent traffic.
TYPED_TEST(MemoryTest, SharedPrefixWorkload) {
  ExpectHonestMemory<TypeParam>(
      test::SharedPrefixSequences(7, 400, 4000, 128256));
}

// Many short branches from few nodes, like a wide vocabulary at the root.
TYPED_TEST(MemoryTest, WideWorkload) {
  ExpectHonestMemory<TypeParam>(
      test::SharedPrefixSequences(8, 60000, 4, 1u << 30));
}

}  // namespace
}  // namespace kvprefix
