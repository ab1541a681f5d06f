// Const matches are safe from many threads at once (the thread-safety
// promise of kvprefix/prefix_index.h). Run under ThreadSanitizer by .ci/run
// (build with -DKVPREFIX_SANITIZE=thread); in a normal build it still checks
// that concurrent answers equal the single-threaded ones.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "kvprefix/batch.h"
#include "testing/engine_types.h"
#include "testing/shared_prefix_sequences.h"

namespace kvprefix {
namespace {

template <typename E>
class ConcurrencyTest : public ::testing::Test {};
TYPED_TEST_SUITE(ConcurrencyTest, test::GtestTypes<AllEngines>::type,
                 test::EngineTypeName);

TYPED_TEST(ConcurrencyTest, ConcurrentMatchesEqualSequentialOnes) {
  const SequenceList cached = test::SharedPrefixSequences(1, 400, 300, 50);
  const SequenceList requests = test::SharedPrefixSequences(1, 800, 300, 50);
  TypeParam engine;
  const std::vector<Match> expected =
      FindPrefixMatches(engine, cached, requests);
  ASSERT_GT(engine.node_count(), 0u);

  constexpr int kThreads = 4;
  std::vector<std::vector<Match>> answers(kThreads);
  std::vector<std::thread> threads;
  const TypeParam& shared = engine;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread walks the requests in a different order.
      for (std::size_t k = 0; k < requests.size(); ++k) {
        const std::size_t i = (k * (2 * t + 1)) % requests.size();
        answers[t].push_back(shared.MatchPrefix(requests[i]));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    for (std::size_t k = 0; k < requests.size(); ++k) {
      const std::size_t i = (k * (2 * t + 1)) % requests.size();
      ASSERT_EQ(answers[t][k], expected[i])
          << "thread " << t << " request " << i;
    }
  }
}

}  // namespace
}  // namespace kvprefix
