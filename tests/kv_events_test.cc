// SPEC §11.11's block events (io/kv_events.h), read back as a router's
// indexer would (simdjson's DOM, apart from io/'s readers): per worker a
// count per block hash, and at every arrival line each worker's match from
// the counts equals the peek the line holds, which is the cache's own.
#include "io/kv_events.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engines/registry.h"
#include "router/router_spec.h"
#include "router/stream.h"
#include "serve/routed_replay.h"
#include "testing/generators.h"

namespace kvprefix {
namespace {

// A routed replay of `input` on the reference caches, logging to `log`.
RoutedAnswer Route(const ServeInput& input, const RoutingSpec& routing,
                   KvEventLog* log) {
  std::size_t made = 0;
  return RoutedReplay(
      input, routing,
      [&] {
        auto cache = MakeServingCache("reference", input.replay.options);
        if (log != nullptr) {
          EXPECT_TRUE(cache->SetPageEventListener(&log->worker(made++)));
        }
        return cache;
      },
      TokenUnit::kToken, log);
}

// What an indexer knows of one worker: how many copies of each page.
using PageCounts = absl::flat_hash_map<std::uint64_t, std::int64_t>;

// SPEC §11.11's rebuilt match: P times the leading pages of the match key
// whose hashes are all held.
std::uint64_t IndexMatch(const PageCounts& pages, TokenSpan prompt,
                         const CacheOptions& options) {
  const bool all_but_last = options.model == CacheModel::kVllm ||
                            options.match_limit == MatchLimit::kAllButLast;
  const std::size_t key =
      all_but_last && !prompt.empty() ? prompt.size() - 1 : prompt.size();
  const std::size_t p = options.page_size;
  std::uint64_t hash = 0;
  std::size_t matched = 0;
  for (; matched + p <= key; matched += p) {
    hash = KeyHash(prompt.subspan(matched, p), hash);
    const auto it = pages.find(hash);
    if (it == pages.end() || it->second == 0) break;
  }
  return matched;
}

std::uint64_t Uint(simdjson::dom::element element, const char* member) {
  return element[member].get_uint64().value();
}

// Reads `text` back, checking each line against the replay: the hashes
// chain, a stored page's parent is held, a removed page was held, the
// arrivals come in request order with their workers and peeks. Returns
// the number of page lines.
std::size_t CheckLog(const std::string& text, const ServeInput& input,
                     const RoutedAnswer& answer, std::size_t workers) {
  std::vector<PageCounts> pages(workers);
  simdjson::dom::parser parser;
  std::uint64_t time = 0;
  std::size_t next_request = 0;
  std::size_t page_lines = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    EXPECT_NE(end, std::string::npos) << "a line without its newline";
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    const simdjson::dom::element event = parser.parse(line).value();
    EXPECT_GE(Uint(event, "time_us"), time) << line;
    time = Uint(event, "time_us");
    const std::string_view type = event["type"].get_string().value();
    if (type == "arrival") {
      const std::size_t k = Uint(event, "request");
      EXPECT_EQ(k, next_request++) << line;
      EXPECT_EQ(Uint(event, "worker"), answer.workers_of[k]) << line;
      EXPECT_EQ(time, answer.requests[k].arrival_us) << line;
      const simdjson::dom::array peeks = event["peek"].get_array().value();
      EXPECT_EQ(peeks.size(), workers) << line;
      std::size_t w = 0;
      for (const simdjson::dom::element peek : peeks) {
        EXPECT_EQ(peek.get_uint64().value(),
                  IndexMatch(pages[w++], input.replay.requests[k],
                             input.replay.options))
            << line << " (worker " << w - 1 << ")";
      }
      continue;
    }
    ++page_lines;
    PageCounts& held = pages[Uint(event, "worker")];
    const std::uint64_t hash = Uint(event, "block_hash");
    if (type == "removed") {
      EXPECT_GT(held[hash], 0) << line;
      --held[hash];
      continue;
    }
    EXPECT_EQ(type, "stored") << line;
    std::vector<Token> tokens;
    const simdjson::dom::array page = event["tokens"].get_array().value();
    for (const simdjson::dom::element token : page) {
      tokens.push_back(static_cast<Token>(token.get_int64().value()));
    }
    EXPECT_EQ(tokens.size(), input.replay.options.page_size) << line;
    std::uint64_t parent = 0;
    if (!event["parent_hash"].is_null()) {
      parent = Uint(event, "parent_hash");
      EXPECT_GT(held[parent], 0) << line << ": its parent is not held";
    }
    EXPECT_EQ(hash, KeyHash(tokens, parent)) << line;
    ++held[hash];
  }
  EXPECT_EQ(next_request, input.replay.requests.size());
  return page_lines;
}

// Eight documents a case: a removed page needs a bounded cache that
// evicts, which one document in a few has.
RC_GTEST_PROP(KvEventsTest, RebuildingThePagesGivesEveryPeek, ()) {
  std::vector<RouterPolicy> policies;
  for (const auto& entry : kRouterPolicies) policies.push_back(entry.value);
  std::size_t page_lines = 0;
  for (int document = 0; document < 8; ++document) {
    ServeInput input = *test::GenServeInput();
    input.replay.namespaces.clear();  // refused with --kv-events
    const RoutingSpec routing{*rc::gen::inRange<std::uint64_t>(1, 5),
                              RouterSpec{*rc::gen::elementOf(policies),
                                         *rc::gen::arbitrary<std::uint64_t>(),
                                         {}}};
    KvEventLog log;
    const RoutedAnswer answer = Route(input, routing, &log);
    // The events change no answer.
    const RoutedAnswer plain = Route(input, routing, nullptr);
    RC_ASSERT(answer.requests == plain.requests);
    RC_ASSERT(answer.totals == plain.totals);
    page_lines += CheckLog(log.text(), input, answer, routing.workers);
    RC_ASSERT(!::testing::Test::HasFailure());
  }
  RC_TAG(page_lines > 0 ? "pages" : "no page");
}

// A worked example: model spec, one worker, two requests sharing a token.
TEST(KvEventsTest, Example) {
  ServeInput input;
  input.replay.requests.Append(std::vector<Token>{1, 2});
  input.replay.requests.Append(std::vector<Token>{1, 3});
  input.replay.options.capacity = 2;
  input.arrivals_us = {0, 10};
  KvEventLog log;
  Route(input, RoutingSpec{}, &log);
  const std::uint64_t h1 = KeyHash(std::vector<Token>{1});
  const std::uint64_t h12 = KeyHash(std::vector<Token>{1, 2});
  const std::uint64_t h13 = KeyHash(std::vector<Token>{1, 3});
  // The second request matches [1]; its finish inserts [1, 3], and the
  // capacity of 2 nodes evicts the least recent leaf, [1, 2].
  EXPECT_EQ(
      log.text(),
      R"({"time_us":0,"type":"arrival","request":0,"worker":0,"peek":[0]})"
      "\n"
      R"({"time_us":0,"worker":0,"type":"stored","block_hash":)" +
          std::to_string(h1) + R"(,"parent_hash":null,"tokens":[1]})" + "\n" +
          R"({"time_us":0,"worker":0,"type":"stored","block_hash":)" +
          std::to_string(h12) + R"(,"parent_hash":)" + std::to_string(h1) +
          R"(,"tokens":[2]})" + "\n" +
          R"({"time_us":10,"type":"arrival","request":1,"worker":0,"peek":[1]})"
          "\n" +
          R"({"time_us":10,"worker":0,"type":"stored","block_hash":)" +
          std::to_string(h13) + R"(,"parent_hash":)" + std::to_string(h1) +
          R"(,"tokens":[3]})" + "\n" +
          R"({"time_us":10,"worker":0,"type":"removed","block_hash":)" +
          std::to_string(h12) + "}\n");
}

}  // namespace
}  // namespace kvprefix
