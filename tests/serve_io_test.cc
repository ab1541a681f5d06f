// Tests of SPEC §10's input and output in io/: serving replay documents
// (io/replay_document.h's ParseServeDocument, case_file.h's
// ReadServeDocumentOrCaseFile) with every error §10.1 lists, the shared
// cases' documents read back member by member, and the answer writer
// (io/serve_answer.h) against the shared cases' expected text, with its two
// numeric pieces checked against Python (fractions and repr) on tables
// tests/serve_answer_tables.py generated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/case_file.h"
#include "io/input_error.h"
#include "io/replay_document.h"
#include "io/serve_answer.h"
#include "testing/bad_inputs.h"
#include "testing/program_run.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;

// --- Documents ------------------------------------------------------------

TEST(ServeDocumentTest, ReadsEveryMemberInAnyOrder) {
  DocumentPlaces places;
  const ServeInput read = ParseServeDocument(
      R"({"output":"unique","overhead_us":4294967296,"max_running":2147483647,)"
      R"("arrivals_us":[0,5,5,9007199254740992],"decode_us_per_token":2,)"
      R"("requests":[[1],[2,3],[],[4]],"prefill_us_per_token":0,)"
      R"("output_lengths":[9007199254740992,0,1,-0],"capacity":3})");
  EXPECT_EQ(read.replay.requests, (SequenceList{{1}, {2, 3}, {}, {4}}));
  EXPECT_EQ(read.replay.options.capacity, 3u);
  EXPECT_EQ(read.arrivals_us,
            (std::vector<std::uint64_t>{0, 5, 5, kMaxServeTime}));
  EXPECT_EQ(read.output_lengths,
            (std::vector<std::uint64_t>{kMaxServeTime, 0, 1, 0}));
  EXPECT_EQ(read.serve, (ServeOptions{.max_running = kMaxRunning,
                                      .prefill_us_per_token = 0,
                                      .decode_us_per_token = 2,
                                      .overhead_us = kMaxServeRate,
                                      .output = OutputMode::kUnique}));
}

// A §8 document is a §10 document with every default (SPEC §10.1), and the
// §8 readers still refuse §10's members.
TEST(ServeDocumentTest, ASection8DocumentHasEveryDefault) {
  const std::string json =
      R"({"requests":[[1],[1],[2,3,4]],"capacity":2,"policy":"lfu"})";
  const ServeInput read = ParseServeDocument(json);
  EXPECT_EQ(read.replay, ParseReplayDocument(json));
  EXPECT_TRUE(read.arrivals_us.empty());
  EXPECT_TRUE(read.output_lengths.empty());
  EXPECT_EQ(read.serve, ServeOptions{});
  EXPECT_EQ(read.serve.max_running, 1u);
  EXPECT_EQ(read.serve.output, OutputMode::kNone);
  EXPECT_EQ(test::InputErrorOf([] {
              ParseReplayDocument(R"({"requests":[],"max_running":2})");
            }),
            "$.max_running: expected \"requests\", \"capacity\", \"policy\", "
            "\"page_size\", \"model\", \"match_limit\", \"trigger\" or "
            "\"namespaces\", found an unknown member \"max_running\"");
}

TEST(ServeDocumentTest, PlacesTellWhetherADocumentHasASection10Member) {
  const test::ScratchDir dir;
  const std::string path = dir.Path("serve.json");
  std::ofstream(path) << R"({"requests":[[1]],"capacity":1})";
  DocumentPlaces places;
  ReadServeDocumentFile(path, &places);
  EXPECT_EQ(places, (DocumentPlaces{{"requests", "$.requests"},
                                    {"capacity", "$.capacity"}}));
  EXPECT_FALSE(HasServeMember(places));
  for (const std::string_view member : kServeOnlyMembers) {
    const std::string value =
        member == "output"                                      ? "\"none\""
        : member == "arrivals_us" || member == "output_lengths" ? "[0]"
        : member == "max_running"                               ? "1"
                                                                : "0";
    std::ofstream(path) << R"({"requests":[[1]],")" << member << "\":" << value
                        << "}";
    const ServeInput read = ReadServeDocumentFile(path, &places);
    EXPECT_TRUE(HasServeMember(places)) << member;
    EXPECT_EQ(places.at(std::string(member)), "$." + std::string(member));
    EXPECT_EQ(read.serve, ServeOptions{}) << member;  // the defaults, given
  }
}

// Each bad document and the exact error it gets.
TEST(ServeDocumentTest, RejectsEachBadMemberAtItsPlace) {
  // The messages' common parts.
  const std::string time_range =
      ": expected an integer from 0 to "
      "9007199254740992, found ";
  const std::string running_range =
      "$.max_running: expected an integer from 1 to 2147483647, found ";
  const std::string rate_range =
      ": expected an integer from 0 to 4294967296, "
      "found ";
  const std::string array = ": expected an array of integers, found ";
  const std::string twice = ": expected each member once, found ";
  const struct {
    std::string members;  // after "requests":[[1],[2],[3]]
    std::string error;
  } kBad[] = {
      // Arrays: kind, null, elements, order, length.
      {R"("arrivals_us":null)", "$.arrivals_us" + array + "null"},
      {R"("arrivals_us":5)", "$.arrivals_us" + array + "5"},
      {R"("output_lengths":{})", "$.output_lengths" + array + "an object"},
      {R"("arrivals_us":[0,1,"2"])",
       "$.arrivals_us[2]" + time_range + "a string"},
      {R"("arrivals_us":[0,null,2])", "$.arrivals_us[1]" + time_range + "null"},
      {R"("arrivals_us":[-1,0,0])", "$.arrivals_us[0]" + time_range + "-1"},
      {R"("arrivals_us":[0,0,9007199254740993])",
       "$.arrivals_us[2]" + time_range + "9007199254740993"},
      {R"("arrivals_us":[0,1.5,2])",
       "$.arrivals_us[1]" + time_range + "1.5 (a number with a fraction)"},
      {R"("output_lengths":[0,9007199254740993,0])",
       "$.output_lengths[1]" + time_range + "9007199254740993"},
      {R"("arrivals_us":[0,7,5])",
       "$.arrivals_us[2]: expected an arrival of at least 7 (the one before "
       "it), found 5"},
      {R"("arrivals_us":[0,1])",
       "$.arrivals_us: expected 3 arrivals (one per request), found 2"},
      {R"("arrivals_us":[0,1,2,3])",
       "$.arrivals_us: expected 3 arrivals (one per request), found 4"},
      {R"("output_lengths":[])",
       "$.output_lengths: expected 3 output lengths (one per request), "
       "found 0"},
      // Integers.
      {R"("max_running":0)", running_range + "0"},
      {R"("max_running":2147483648)", running_range + "2147483648"},
      {R"("max_running":null)", running_range + "null"},
      {R"("prefill_us_per_token":4294967297)",
       "$.prefill_us_per_token" + rate_range + "4294967297"},
      {R"("decode_us_per_token":-1)",
       "$.decode_us_per_token" + rate_range + "-1"},
      {R"("overhead_us":"3")", "$.overhead_us" + rate_range + "a string"},
      {R"("overhead_us":true)", "$.overhead_us" + rate_range + "true"},
      // The output mode.
      {R"("output":"None")",
       "$.output: expected \"none\" or \"unique\", found \"None\""},
      {R"("output":null)", "$.output: expected a string, found null"},
      {R"("output":1)", "$.output: expected a string, found 1"},
      // Duplicates, and §11's members, which are not §10's.
      {R"("max_running":2,"max_running":2)",
       "$.max_running" + twice + "\"max_running\" a second time"},
      {R"("arrivals_us":[0,0,0],"arrivals_us":[0,0,0])",
       "$.arrivals_us" + twice + "\"arrivals_us\" a second time"},
      {R"("workers":2)",
       "$.workers: expected \"requests\", \"capacity\", \"policy\", "
       "\"page_size\", \"model\", \"match_limit\", \"trigger\", "
       "\"namespaces\", \"arrivals_us\", \"output_lengths\", "
       "\"max_running\", \"prefill_us_per_token\", \"decode_us_per_token\", "
       "\"overhead_us\" or \"output\", found an unknown member \"workers\""},
  };
  for (const auto& bad : kBad) {
    const std::string json =
        R"({"requests":[[1],[2],[3]],)" + bad.members + "}";
    EXPECT_EQ(test::InputErrorOf([&] { ParseServeDocument(json); }), bad.error)
        << json;
  }
  // "router" too, and the §8 errors are unchanged.
  EXPECT_THAT(test::InputErrorOf(
                  [] { ParseServeDocument(R"({"requests":[],"router":{}})"); }),
              ::testing::StartsWith("$.router: expected \"requests\""));
  EXPECT_EQ(test::InputErrorOf([] { ParseServeDocument(R"({"capacity":1})"); }),
            "$: expected member \"requests\", found an object without it");
}

TEST(ServeDocumentTest, CaseFilesAndDocumentsBothRead) {
  const test::ScratchDir dir;
  const std::string path = dir.Path("case.json");
  std::ofstream(path) << R"({"document":{"requests":[[1]],"max_running":3,)"
                         R"("arrivals_us":[4]},"expected":{"matches":[)"
                         R"({"matched_length":0,"cache_node":0,)"
                         R"("uncached_suffix":[1]}]}})";
  DocumentPlaces places;
  const ServeInput read = ReadServeDocumentOrCaseFile(path, &places);
  EXPECT_EQ(read.serve.max_running, 3u);
  EXPECT_EQ(read.arrivals_us, std::vector<std::uint64_t>{4});
  EXPECT_EQ(places.at("max_running"), "$.document.max_running");
  // The §8 reader refuses the §10 member inside a case file too.
  EXPECT_THAT(test::InputErrorOf([&] { ReadReplayDocumentOrCaseFile(path); }),
              ::testing::StartsWith("$.document.max_running: expected"));
  std::ofstream(path) << R"({"requests":[[1]],"output":"unique"})";
  EXPECT_EQ(ReadServeDocumentOrCaseFile(path).serve.output,
            OutputMode::kUnique);
  std::ofstream(path) << R"({"requests":[[1]],"output_lengths":[1,2]})";
  EXPECT_EQ(test::InputErrorOf([&] { ReadServeDocumentOrCaseFile(path); }),
            "$.output_lengths: expected 1 output length (one per request), "
            "found 2");
}

// --- The shared cases -----------------------------------------------------

struct ServeCase {
  std::string name;  // the file name
  std::string text;  // the whole file
};

// Every tests/data/cases/serve/s*.json (SPEC §10's cases; r*.json are
// §11's), by name, read by simdjson's DOM below, independently of io's
// readers.
std::vector<ServeCase> LoadServeCases() {
  std::vector<fs::path> paths;
  for (const auto& entry :
       fs::directory_iterator(KVPREFIX_SOURCE_DIR "/tests/data/cases/serve")) {
    if (entry.path().filename().string().starts_with("s")) {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<ServeCase> cases;
  for (const fs::path& path : paths) {
    std::ifstream file(path);
    cases.push_back({path.filename().string(),
                     std::string(std::istreambuf_iterator<char>(file), {})});
  }
  return cases;
}

std::vector<std::uint64_t> Integers(simdjson::dom::element array) {
  std::vector<std::uint64_t> out;
  for (simdjson::dom::element value : array.get_array()) {
    out.push_back(value.get_uint64().value());
  }
  return out;
}

// Each case's document, read by ParseServeDocument, holds what its members
// say: the §10 members as simdjson reads them, the others as
// ParseReplayDocument reads the document without the §10 members.
TEST(ServeDocumentTest, TheSharedCasesDocumentsReadAsGiven) {
  const std::vector<ServeCase> cases = LoadServeCases();
  ASSERT_EQ(cases.size(), 19u);
  for (const ServeCase& shared : cases) {
    simdjson::dom::parser parser;
    const simdjson::dom::element root = parser.parse(shared.text);
    const simdjson::dom::object document = root["document"].get_object();
    ServeInput expected;
    std::string section8 = "{";
    for (const auto [key, value] : document) {
      if (key == "arrivals_us") {
        expected.arrivals_us = Integers(value);
      } else if (key == "output_lengths") {
        expected.output_lengths = Integers(value);
      } else if (key == "max_running") {
        expected.serve.max_running = value.get_uint64();
      } else if (key == "prefill_us_per_token") {
        expected.serve.prefill_us_per_token = value.get_uint64();
      } else if (key == "decode_us_per_token") {
        expected.serve.decode_us_per_token = value.get_uint64();
      } else if (key == "overhead_us") {
        expected.serve.overhead_us = value.get_uint64();
      } else if (key == "output") {
        expected.serve.output = *ParseNamedValue(
            kOutputModes, std::string_view(value.get_string()));
      } else {
        section8 +=
            "\"" + std::string(key) + "\":" + simdjson::minify(value) + ",";
      }
    }
    section8.back() = '}';
    expected.replay = ParseReplayDocument(section8);
    const std::string json = simdjson::minify(document);
    EXPECT_EQ(ParseServeDocument(json), expected) << shared.name;
    // Whether it has a §10 member: all but s01, the §8 document.
    const test::ScratchDir dir;
    const std::string path = dir.Path("document.json");
    std::ofstream(path) << json;
    DocumentPlaces places;
    ReadServeDocumentFile(path, &places);
    EXPECT_EQ(HasServeMember(places),
              shared.name != "s01_default_is_section8.json")
        << shared.name;
  }
}

// The writer against each case's expected answer: the answer built from
// the expected members (total_wait_us the sum of the requests' waits), then
// written, is the case file's text byte for byte (the files are compact);
// hit_ratio and mean_wait_us are computed, not copied.
TEST(ServeAnswerTest, WritesTheSharedCasesExpectedTextExactly) {
  const std::vector<ServeCase> cases = LoadServeCases();
  ASSERT_EQ(cases.size(), 19u);
  for (const ServeCase& shared : cases) {
    simdjson::dom::parser parser;
    const simdjson::dom::element expected =
        parser.parse(shared.text)["expected"];
    ServeAnswer answer;
    for (simdjson::dom::element request : expected["requests"].get_array()) {
      ServedRequest& served = answer.requests.emplace_back();
      served.match.matched_length = request["matched_length"].get_uint64();
      served.match.cache_node = request["cache_node"].get_uint64();
      served.arrival_us = request["arrival_us"].get_uint64();
      served.start_us = request["start_us"].get_uint64();
      served.prefill_end_us = request["prefill_end_us"].get_uint64();
      served.finish_us = request["finish_us"].get_uint64();
      served.refused = request["refused"].get_bool();
      served.waited_for_room = request["waited_for_room"].get_bool();
      EXPECT_EQ(served.wait_us(), request["wait_us"].get_uint64().value());
      answer.totals.total_wait_us += served.wait_us();
    }
    const simdjson::dom::element totals = expected["totals"];
    ServeTotals& sums = answer.totals;
    for (auto [member, field] :
         {std::pair{"requests", &ServeTotals::requests},
          {"request_tokens", &ServeTotals::request_tokens},
          {"matched_tokens", &ServeTotals::matched_tokens},
          {"refused", &ServeTotals::refused},
          {"waited_for_room", &ServeTotals::waited_for_room},
          {"evicted_pages", &ServeTotals::evicted_pages},
          {"peak_pinned", &ServeTotals::peak_pinned},
          {"peak_running", &ServeTotals::peak_running},
          {"peak_queued", &ServeTotals::peak_queued},
          {"p50_wait_us", &ServeTotals::p50_wait_us},
          {"p99_wait_us", &ServeTotals::p99_wait_us},
          {"makespan_us", &ServeTotals::makespan_us}}) {
      sums.*field = totals[member].get_uint64();
    }
    std::string written;
    AppendServeAnswerJson(answer, written, true);
    ASSERT_EQ(written.back(), '\n');
    written.pop_back();
    EXPECT_NE(shared.text.find("\"expected\":" + written + ","),
              std::string::npos)
        << shared.name << " wrote " << written;
    // Without the requests: the totals alone.
    std::string totals_only;
    AppendServeAnswerJson(answer, totals_only, false);
    EXPECT_EQ(totals_only, "{\"totals\":" + simdjson::minify(totals) + "}\n")
        << shared.name;
  }
}

TEST(ServeAnswerTest, WritesNoRequestsAndLargeValues) {
  std::string out;
  AppendServeAnswerJson({}, out, true);
  EXPECT_EQ(out, R"({"requests":[],"totals":{"requests":0,"request_tokens":0,)"
                 R"("matched_tokens":0,"hit_ratio":0.0,"refused":0,)"
                 R"("waited_for_room":0,"evicted_pages":0,"peak_pinned":0,)"
                 R"("peak_running":0,"peak_queued":0,"mean_wait_us":0.0,)"
                 R"("p50_wait_us":0,"p99_wait_us":0,"makespan_us":0}})"
                 "\n");
  ServeAnswer answer;
  answer.requests.push_back({.match = {3, 18446744073709551615u},
                             .arrival_us = 1,
                             .start_us = 9007199254740993,
                             .prefill_end_us = 9007199254740994,
                             .finish_us = 18446744073709551615u,
                             .refused = true,
                             .waited_for_room = true});
  answer.totals = {.requests = 3,
                   .request_tokens = 3,
                   .matched_tokens = 3,
                   .total_wait_us = WaitSum{1} << 100};
  out.clear();
  AppendServeAnswerJson(answer, out, true);
  EXPECT_EQ(out,
            R"({"requests":[{"matched_length":3,)"
            R"("cache_node":18446744073709551615,"arrival_us":1,)"
            R"("start_us":9007199254740993,"prefill_end_us":9007199254740994,)"
            R"("finish_us":18446744073709551615,"wait_us":9007199254740992,)"
            R"("refused":true,"waited_for_room":true}],"totals":{"requests":3,)"
            R"("request_tokens":3,"matched_tokens":3,"hit_ratio":1.0,)"
            R"("refused":0,"waited_for_room":0,"evicted_pages":0,)"
            R"("peak_pinned":0,"peak_running":0,"peak_queued":0,)"
            R"("mean_wait_us":4.2255020007607644e+29,"p50_wait_us":0,)"
            R"("p99_wait_us":0,"makespan_us":0}})"
            "\n");
}

// --- Numbers --------------------------------------------------------------

struct QuotientCase {
  std::uint64_t numerator_high, numerator_low, denominator, expected_bits;
};
// float(fractions.Fraction(n, d)) for ties at the 54th bit and either side
// of them, powers of two, every path of the long division and random
// operands (tests/serve_answer_tables.py).
constexpr QuotientCase kQuotients[] = {
#include "serve_answer_quotients.inc"
};

TEST(NearestQuotientTest, IsPythonsCorrectlyRoundedQuotient) {
  for (const QuotientCase& c : kQuotients) {
    const WaitSum numerator =
        (WaitSum{c.numerator_high} << 64) | c.numerator_low;
    const double quotient = NearestQuotient(numerator, c.denominator);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(quotient), c.expected_bits)
        << std::hex << c.numerator_high << ":" << c.numerator_low << " / "
        << std::dec << c.denominator;
  }
  EXPECT_GT(std::size(kQuotients), 600u);
}

TEST(NearestQuotientTest, EdgeCases) {
  EXPECT_EQ(NearestQuotient(5, 0), 0.0);
  EXPECT_EQ(NearestQuotient(0, 7), 0.0);
  EXPECT_EQ(NearestQuotient(1, 5), 0.2);
  EXPECT_EQ(NearestQuotient(3, 7), 3.0 / 7.0);
  // 2^53 + 1 is a tie between 2^53 and 2^53 + 2: the even one, 2^53.
  EXPECT_EQ(NearestQuotient((std::uint64_t{1} << 53) + 1, 1),
            9007199254740992.0);
  // 2^53 + 3 ties between 2^53 + 2 and 2^53 + 4: the even one, + 4.
  EXPECT_EQ(NearestQuotient((std::uint64_t{1} << 53) + 3, 1),
            9007199254740996.0);
  // The largest operands: (2^128 - 1) / 1 rounds up to 2^128.
  EXPECT_EQ(NearestQuotient(~WaitSum{0}, 1), std::ldexp(1.0, 128));
  EXPECT_EQ(NearestQuotient(1, std::numeric_limits<std::uint64_t>::max()),
            1.0 / 18446744073709551615.0);
}

struct ReprCase {
  std::uint64_t bits;
  const char* repr;
};
// repr(float) of Python 3 for the edge cases and random doubles of every
// magnitude (tests/serve_answer_tables.py).
constexpr ReprCase kReprs[] = {
#include "serve_answer_reprs.inc"
};

std::string JsonDouble(double value) {
  std::string out;
  AppendJsonDouble(value, out);
  return out;
}

TEST(AppendJsonDoubleTest, IsPythonsRepr) {
  for (const ReprCase& c : kReprs) {
    EXPECT_EQ(JsonDouble(std::bit_cast<double>(c.bits)), c.repr)
        << std::hex << c.bits;
  }
  EXPECT_GT(std::size(kReprs), 600u);
}

TEST(AppendJsonDoubleTest, EdgeCases) {
  EXPECT_EQ(JsonDouble(0.0), "0.0");
  EXPECT_EQ(JsonDouble(1.0), "1.0");
  EXPECT_EQ(JsonDouble(1e16), "1e+16");
  EXPECT_EQ(JsonDouble(9999999999999998.0), "9999999999999998.0");
  EXPECT_EQ(JsonDouble(1e-5), "1e-05");
  EXPECT_EQ(JsonDouble(0.0001), "0.0001");
  EXPECT_EQ(JsonDouble(123456789012345680.0), "1.2345678901234568e+17");
  EXPECT_EQ(JsonDouble(5e-324), "5e-324");
  EXPECT_EQ(JsonDouble(0.2), "0.2");
  EXPECT_EQ(JsonDouble(1.5), "1.5");
  EXPECT_EQ(JsonDouble(1e25), "1e+25");
  EXPECT_EQ(JsonDouble(100.0), "100.0");
  EXPECT_EQ(JsonDouble(187.33333333333334), "187.33333333333334");
  EXPECT_EQ(JsonDouble(-0.5), "-0.5");
}

}  // namespace
}  // namespace kvprefix
