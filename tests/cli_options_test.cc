// The command line's numbers and names (hostile input): every integer option of
// every subcommand is a decimal integer in a stated range (found from
// --help, so options added later are checked too), --cached-fraction is
// the decimal the user typed (floor(F * n) exact), and an unknown command
// is named.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "io/json_input.h"
#include "testing/program_run.h"

namespace kvprefix {
namespace {

using ::testing::HasSubstr;

test::ProgramRun Kvprefix(const std::vector<std::string>& args) {
  return test::RunProgram(KVPREFIX_CLI, args);
}

// The subcommand paths of the tool ("match", "convert mooncake", ...), read
// from the "Subcommands:" part of --help, recursively.
std::vector<std::vector<std::string>> Subcommands(
    const std::vector<std::string>& path = {}) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  const std::string help = Kvprefix(args).out;
  std::vector<std::vector<std::string>> found;
  const std::size_t start = help.find("Subcommands:");
  if (start == std::string::npos) return found;
  std::istringstream lines(help.substr(start));
  std::string line;
  std::getline(lines, line);
  const std::regex name(R"(^  ([a-z][a-z-]*)\b.*)");
  while (std::getline(lines, line)) {
    std::smatch match;
    if (!std::regex_match(line, match, name)) continue;
    std::vector<std::string> sub = path;
    sub.push_back(match[1]);
    const auto nested = Subcommands(sub);
    if (nested.empty()) {
      found.push_back(sub);
    } else {
      found.insert(found.end(), nested.begin(), nested.end());
    }
  }
  return found;
}

struct IntegerOption {
  std::string name;  // "--vocab"
  std::string min;   // as --help prints them: decimal
  std::string max;
};

// The decimal `text` plus one (text >= 0).
std::string PlusOne(std::string text) {
  std::size_t i = text.size();
  while (i > 0 && text[i - 1] == '9') text[--i] = '0';
  if (i == 0) return std::string("1").append(text);
  ++text[i - 1];
  return text;
}

// The decimal `text` minus one.
std::string MinusOne(const std::string& text) {
  if (text == "0") return "-1";
  if (text[0] == '-') {
    // std::string("-").append(...), not "-" + ...: GCC 12's -Wrestrict
    // misfires on operator+(const char*, string&&).
    return std::string("-").append(PlusOne(text.substr(1)));
  }
  std::string result = text;
  std::size_t i = result.size();
  while (result[i - 1] == '0') result[--i] = '9';
  --result[i - 1];
  if (result.size() > 1 && result[0] == '0') result.erase(0, 1);
  return result;
}

// The options of `help` whose value is numeric, by their type in --help:
// integers must all be "INTEGER in [min - max]" (AddIntegerOption); an
// option showing CLI11's own INT or UINT has escaped the check.
std::vector<IntegerOption> IntegerOptions(const std::string& help,
                                          const std::string& command) {
  std::vector<IntegerOption> options;
  std::istringstream lines(help);
  const std::regex checked(
      R"(^\s+(?:-\w, ?)?(--[a-z-]+) INTEGER in \[(-?\d+) - (\d+)\].*)");
  const std::regex unchecked(R"(^\s+(?:-\w, ?)?(--[a-z-]+) U?INT\b.*)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_match(line, match, checked)) {
      options.push_back({match[1], match[2], match[3]});
    }
    EXPECT_FALSE(std::regex_match(line, unchecked))
        << command << ": an integer option without the decimal check: " << line;
  }
  return options;
}

// --vocab 0x10 was taken as 16, -1 as the maximum of
// unsigned options, overflow was capped, 1.5 reported a misleading range.
TEST(CliOptionsTest, IntegerOptionsAreStrictDecimalsInRange) {
  const auto commands = Subcommands();
  ASSERT_GE(commands.size(), 5u);  // match, replay, convert mooncake, ...
  std::size_t checked = 0;
  for (const auto& command : commands) {
    std::vector<std::string> help_args = command;
    help_args.push_back("--help");
    const std::string name = fmt::format("{}", fmt::join(command, " "));
    for (const IntegerOption& option :
         IntegerOptions(Kvprefix(help_args).out, name)) {
      ++checked;
      const std::string expected =
          fmt::format("kvprefix: {}: expected an integer from {} to {}, found ",
                      option.name, option.min, option.max);
      std::vector<std::string> bad = {
          "0x10",
          "1.5",
          "+5",
          "010",
          " 5",
          "5 ",
          "1e3",
          "",
          "ten",
          "-",
          PlusOne(option.max),
          MinusOne(option.min),
          "123456789012345678901234567890123456789012"};
      for (const std::string& value : bad) {
        std::vector<std::string> args = command;
        args.insert(args.end(), {option.name, value});
        const test::ProgramRun run = Kvprefix(args);
        EXPECT_EQ(run.status, 2)
            << name << " " << option.name << " '" << value << "'";
        EXPECT_EQ(run.out, "");
        EXPECT_EQ(run.err, expected + value + " (run with --help for usage)\n")
            << name;
      }
      // The bounds themselves pass the check; the unknown flag after them
      // stops the run before any work (CLI11 checks values first).
      for (const std::string& value : {option.min, option.max}) {
        std::vector<std::string> args = command;
        args.insert(args.end(), {option.name, value, "--no-such-flag"});
        const test::ProgramRun run = Kvprefix(args);
        EXPECT_EQ(run.status, 2);
        EXPECT_THAT(run.err, ::testing::Not(HasSubstr(option.name + ":")))
            << name << " " << option.name << " " << value;
      }
    }
  }
  // --vocab (replay, curve, convert mooncake), --page-size (match, replay,
  // curve), --kv-bytes-per-token (replay, curve), --threads, --points, and
  // verify's --trace-window, --runs, --seed, --max-size, --jobs and
  // --shrink-attempts at least.
  EXPECT_GE(checked, 16u);
}

TEST(CliOptionsTest, UnknownCommandIsNamed) {
  test::ProgramRun run = Kvprefix({"bogus"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "kvprefix: unknown command 'bogus' (commands: match, replay, "
            "curve, convert, engines, policies, verify)\n");
  run = Kvprefix({"convert", "bogus", "trace.jsonl"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(
      run.err,
      "kvprefix: convert: unknown command 'bogus' (commands: mooncake)\n");
  run = Kvprefix({"--bogus", "match"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err,
            "kvprefix: unknown option '--bogus' (commands: match, replay, "
            "curve, convert, engines, policies, verify)\n");
  run = Kvprefix({});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err,
            "kvprefix: a command is required (commands: match, replay, "
            "curve, convert, engines, policies, verify)\n");
  run = Kvprefix({"convert"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err,
            "kvprefix: convert: a command is required (commands: mooncake)\n");
  EXPECT_EQ(Kvprefix({"--help"}).status, 0);
  EXPECT_EQ(Kvprefix({"--version"}).status, 0);
  EXPECT_EQ(Kvprefix({"convert", "-h"}).status, 0);
}

// `kvprefix convert trace.jsonl` (the `mooncake` word forgotten) named
// "convert trace.jsonl" as the unknown command; and a name is escaped, so
// that the message stays one line.
TEST(CliOptionsTest, UnknownConvertCommandIsNamedAfterConvert) {
  test::ProgramRun run = Kvprefix({"convert", "trace.jsonl", "-o", "x.json"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "kvprefix: convert: unknown command 'trace.jsonl' (commands: "
            "mooncake)\n");
  run = Kvprefix({"bo\ngus"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err,
            "kvprefix: unknown command 'bo\\ngus' (commands: match, replay, "
            "curve, convert, engines, policies, verify)\n");
  run = Kvprefix({"convert", "--x\ty"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err,
            "kvprefix: convert: unknown option '--x\\ty' (commands: "
            "mooncake)\n");
}

// A trace of `n` one-block requests, hash ids 0 .. n-1.
std::string TraceOf(const test::ScratchDir& dir, std::size_t n) {
  const std::string path = dir.Path(fmt::format("trace-{}.jsonl", n));
  std::string text;
  for (std::size_t i = 0; i < n; ++i) {
    text += fmt::format("{{\"input_length\":1,\"hash_ids\":[{}]}}\n", i);
  }
  test::WriteTextFile(path, text);
  return path;
}

// --cached-fraction 0.29 cached 28 of 100 requests,
// because 0.29 * 100 is 28.999999999999996 in binary floating point. The
// expected counts are floor(F * n) in exact rational arithmetic (Python's
// fractions.Fraction(decimal.Decimal(F)) * n); those marked "float" are
// where the double product rounds the other way.
TEST(CliOptionsTest, CachedFractionIsTheDecimalAsTyped) {
  test::ScratchDir dir;
  const struct {
    std::size_t n;
    std::vector<std::pair<std::string, std::size_t>> cached;
  } kCases[] = {
      {100, {{"0.29", 29},  // float: 28
             {"0.57", 57},  // float: 56
             {"0.58", 58},  // float: 57
             {"0.07", 7},
             {"0.14", 14},
             {"0.28", 28},
             {"0.56", 56},
             {"0.55", 55},
             {"1", 100},
             {"0", 0},
             {"0.999", 99},
             {"0.9999999999999999999999999", 99},  // float: 100
             {"0.01", 1},
             {".5", 50},
             {"1.000", 100},
             {"0.005", 0},
             {"0.015", 1},
             {"0.1", 10},
             {"0.3", 30},
             {"0.7", 70},
             {"0.9", 90},
             {"0.0", 0}}},
      {3,
       {{"0.34", 1},
        {"0.66", 1},
        {"0.67", 2},
        {"0.333333333333333333", 0},  // float: 1
        {"0.9999999", 2},
        {"1", 3}}},
      {7,
       {{"0.29", 2},
        {"0.57", 3},
        {"0.58", 4},
        {"0.142857", 0},
        {"0.142858", 1},
        {"0.714285715", 5}}},
      {1000,
       {{"0.001", 1},
        {"0.029", 29},
        {"0.057", 57},
        {"0.58", 580},
        {"0.4095", 409}}},
  };
  for (const auto& each : kCases) {
    const std::string trace = TraceOf(dir, each.n);
    for (const auto& [fraction, cached] : each.cached) {
      const test::ProgramRun run = Kvprefix(
          {"convert", "mooncake", trace, "--cached-fraction", fraction});
      ASSERT_EQ(run.status, 0) << fraction << ": " << run.err;
      const BatchInput input = ParseBatchInput(run.out);
      EXPECT_EQ(input.cached_sequences.size(), cached)
          << fraction << " of " << each.n;
      EXPECT_EQ(input.cached_sequences.size() + input.requests.size(), each.n);
    }
  }
}

TEST(CliOptionsTest, CachedFractionMustBeADecimalFrom0To1) {
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 4);
  for (const char* fraction :
       {"nan",    "inf", "-inf", "-0.5",  "-0",    "+0.5", "1.5",
        "1.0001", "2",   "1e-1", "0.5e0", "1e400", "0x1",  "0.",
        ".",      "",    " 0.5", "0.5 ",  "00.5",  "x"}) {
    const test::ProgramRun run = Kvprefix({"convert", "mooncake", trace, "-f",
                                           fraction, "-o", dir.Path("o.json")});
    EXPECT_EQ(run.status, 2) << fraction;
    EXPECT_EQ(run.err,
              fmt::format("kvprefix: --cached-fraction: expected a decimal "
                          "from 0 to 1 (such as 0.25; no exponent), found {} "
                          "(run with --help for usage)\n",
                          fraction));
    EXPECT_FALSE(std::filesystem::exists(dir.Path("o.json")));
  }
}

// --- Cache options: one rule per kind of value (SPEC §6, §8) ----------------

// The "capacity":C member of a replay summary line.
std::string CapacityOf(const std::string& summary) {
  const std::size_t start = summary.find("\"capacity\":");
  if (start == std::string::npos) return "";
  const std::size_t end = summary.find(',', start);
  return summary.substr(start + 11, end - start - 11);
}

// A capacity given is checked, even as "": "" was taken as unbounded (and
// overrode a document's capacity), 05 and 05KiB were read as 5, while
// --page-size 05 was refused.
TEST(CliOptionsTest, EmptyOrMalformedCapacityIsAUsageError) {
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 4);
  const std::string document = dir.Path("doc.json");
  test::WriteTextFile(document, R"({"requests":[[1,2],[1,2]],"capacity":1})");
  const std::vector<std::string> bad = {
      "",        "05",      "00",    "-1",    "+1",   "0x10",   "1e3",
      "1.5",     " 1",      "1 ",    "KiB",   ".KiB", "5.KiB",  "05KiB",
      "00.5KiB", "1..2KiB", "-1KiB", "1 KiB", "1kib", "1.5.2GB"};
  const std::vector<std::vector<std::string>> commands = {
      {"replay", trace, "--kv-bytes-per-token", "1", "--capacity"},
      {"replay", document, "--input-format", "requests", "--kv-bytes-per-token",
       "1", "--capacity"},
  };
  for (const auto& command : commands) {
    for (const std::string& value : bad) {
      std::vector<std::string> args = command;
      args.push_back(value);
      const test::ProgramRun run = Kvprefix(args);
      EXPECT_EQ(run.status, 2) << command[1] << " --capacity '" << value << "'";
      EXPECT_EQ(run.out, "");
      EXPECT_EQ(run.err,
                fmt::format("kvprefix: --capacity: expected a number of nodes "
                            "(a decimal integer, no leading zero) or a size "
                            "such as 80GiB or 0.5GB (units B, KB, MB, GB, TB, "
                            "KiB, MiB, GiB, TiB), found '{}'\n",
                            value));
    }
  }
  // Every item of curve's list, on a trace and on a document.
  for (const std::string input_format : {"mooncake", "requests"}) {
    const std::string input = input_format == "requests" ? document : trace;
    for (const char* list : {"", "1,", ",1", "1,,2", "1,05", "1,-1"}) {
      const test::ProgramRun run =
          Kvprefix({"curve", input, "--input-format", input_format,
                    "--kv-bytes-per-token", "1", "--capacities", list});
      EXPECT_EQ(run.status, 2) << "--capacities '" << list << "'";
      EXPECT_EQ(run.out, "");
      EXPECT_THAT(run.err, ::testing::StartsWith(
                               "kvprefix: --capacities: expected a number of "
                               "nodes (a decimal integer, no leading zero)"));
    }
  }
  // What the rule takes: an integer as JSON writes one (-0 is 0), and a
  // decimal with a unit; in token mode a node is one token of 1 byte.
  const struct {
    const char* capacity;
    const char* nodes;
  } kGood[] = {{"0", "0"},
               {"-0", "0"},
               {"7", "7"},
               {"10", "10"},
               {"0.5KiB", "512"},
               {".5KiB", "512"},
               {"1.000KiB", "1024"},
               {"0.0KiB", "0"},
               {"3B", "3"},
               // 2^64 - 1 is the capacity no trie reaches (SPEC §8): unbounded.
               {"18446744073709551615", "null"}};
  for (const auto& good : kGood) {
    const test::ProgramRun run =
        Kvprefix({"replay", trace, "--mode", "token", "--kv-bytes-per-token",
                  "1", "--capacity", good.capacity});
    EXPECT_EQ(run.status, 0) << good.capacity << ": " << run.err;
    EXPECT_EQ(CapacityOf(run.out), good.nodes) << good.capacity;
  }
}

// A size is exact for any number of digits: fractions of 19 or more digits
// and whole parts of 21 or more were refused as "not a size", even 1 GiB
// written 1.00000000000000000000GiB. Bytes are floor(size * unit), worked
// out by hand: 2^-40 TiB is 0.0000000000009094947017729282379150390625TiB
// (40 digits), 1 byte, and one less in the last digit is 0 bytes.
TEST(CliOptionsTest, SizeIsExactForAnyNumberOfDigits) {
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 4);
  const struct {
    const char* capacity;
    const char* nodes;  // at 1 byte per node
  } kGood[] = {
      {"0.0000000000000000001TiB", "0"},
      {"1.00000000000000000000GiB", "1073741824"},
      {"0.0000000000009094947017729282379150390625TiB", "1"},
      {"0.0000000000009094947017729282379150390624TiB", "0"},
      // 3 * 2^-40 TiB, 3 bytes; a hair less is 2.
      {"0.0000000000027284841053187847137451171875TiB", "3"},
      {"0.0000000000027284841053187847137451171874999TiB", "2"},
      {"2.0000000000000000000000000001GiB", "2147483648"},
      {"0.3333333333333333333333333333KB", "333"},
      {"0.99999999999999999999B", "0"},
      // 2^64 - 2^40 + (2^40 - 1) bytes: the largest size, the capacity no
      // trie reaches (SPEC §8), shown as unbounded.
      {"16777215.999999999999999999999999TiB", "null"},
      {"18446744073709551615.9999999999999999999999B", "null"},
  };
  for (const auto& good : kGood) {
    const test::ProgramRun run =
        Kvprefix({"replay", trace, "--mode", "token", "--kv-bytes-per-token",
                  "1", "--capacity", good.capacity});
    EXPECT_EQ(run.status, 0) << good.capacity << ": " << run.err;
    EXPECT_EQ(CapacityOf(run.out), good.nodes) << good.capacity;
  }
  // (2^64 - 1) / 3 nodes of 3 bytes.
  const test::ProgramRun third =
      Kvprefix({"replay", trace, "--mode", "token", "--kv-bytes-per-token", "3",
                "--capacity", "16777215.999999999999999999999999TiB"});
  EXPECT_EQ(third.status, 0) << third.err;
  EXPECT_EQ(CapacityOf(third.out), "6148914691236517205");
  for (const char* too_large :
       {"100000000000000000000B", "18446744073709551616B",
        "123456789012345678901234567890.5KiB", "16777216TiB",
        "16777216.0000000000000000000000000000001TiB"}) {
    const test::ProgramRun run =
        Kvprefix({"replay", trace, "--mode", "token", "--kv-bytes-per-token",
                  "1", "--capacity", too_large});
    EXPECT_EQ(run.status, 2) << too_large;
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err, fmt::format("kvprefix: --capacity: {} is 2^64 bytes "
                                   "or more\n",
                                   too_large));
  }
}

// `replay --format requests` converted a size with the command line's page
// size (1 unless given), not the document's: 1KiB at 256 bytes a token kept
// 4 pages of a page-size-2 document where `curve` kept 2.
TEST(CliOptionsTest, ReplayDocumentConvertsASizeWithItsPageSize) {
  test::ScratchDir dir;
  const std::string document = dir.Path("doc.json");
  // Two pages per request; with 2 pages of room the third request finds
  // the first evicted, with 4 it matches all 4 tokens at node 2.
  test::WriteTextFile(
      document,
      R"({"requests":[[1,2,3,4],[5,6,7,8],[1,2,3,4]],"page_size":2})");
  const std::string two_pages =
      R"({"matches":[{"matched_length":0,"cache_node":0,"uncached_suffix":[1,2,3,4]},)"
      R"({"matched_length":0,"cache_node":0,"uncached_suffix":[5,6,7,8]},)"
      R"({"matched_length":0,"cache_node":0,"uncached_suffix":[1,2,3,4]}]})"
      "\n";
  const test::ProgramRun replay =
      Kvprefix({"replay", document, "--input-format", "requests", "--capacity",
                "1KiB", "--kv-bytes-per-token", "256"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(replay.out, two_pages);
  // The same as the capacity in pages, and as curve's conversion.
  const test::ProgramRun pages = Kvprefix(
      {"replay", document, "--input-format", "requests", "--capacity", "2"});
  EXPECT_EQ(pages.out, two_pages);
  const test::ProgramRun curve =
      Kvprefix({"curve", document, "--input-format", "requests", "--capacities",
                "1KiB", "--kv-bytes-per-token", "256"});
  EXPECT_EQ(curve.status, 0) << curve.err;
  EXPECT_EQ(curve.out,
            R"({"capacity":2,"capacity_bytes":1024,"matched_tokens":0,)"
            R"("request_tokens":12,"hit_ratio":0})"
            "\n");
  // --page-size given replaces the document's, in the conversion too:
  // 1KiB at 128 bytes a token is 4 pages of 2 tokens, room for both.
  const test::ProgramRun given =
      Kvprefix({"replay", document, "--input-format", "requests", "--capacity",
                "1KiB", "--kv-bytes-per-token", "128", "--page-size", "2"});
  EXPECT_EQ(given.status, 0) << given.err;
  EXPECT_THAT(given.out, HasSubstr(R"({"matched_length":4,"cache_node":2,)"
                                   R"("uncached_suffix":[]}]})"));
}

// In JSON -0 is the integer 0 wherever an integer is read: tokens took it,
// "capacity":-0 was refused ("expected an unsigned 64-bit integer").
TEST(CliOptionsTest, JsonMinusZeroIsZeroInEveryInteger) {
  test::ScratchDir dir;
  const std::string document = dir.Path("doc.json");
  test::WriteTextFile(document, R"({"requests":[[-0,1],[0,1]],"capacity":-0})");
  const test::ProgramRun run =
      Kvprefix({"replay", document, "--input-format", "requests"});
  EXPECT_EQ(run.status, 0) << run.err;
  // Capacity 0: nothing is kept, so the second request matches nothing.
  EXPECT_EQ(
      run.out,
      R"({"matches":[{"matched_length":0,"cache_node":0,"uncached_suffix":[0,1]},)"
      R"({"matched_length":0,"cache_node":0,"uncached_suffix":[0,1]}]})"
      "\n");
  for (const char* capacity : {"-1", "-0.0", "0.0", "-00", "1e0"}) {
    test::WriteTextFile(
        document, fmt::format(R"({{"requests":[],"capacity":{}}})", capacity));
    const test::ProgramRun bad =
        Kvprefix({"replay", document, "--input-format", "requests"});
    EXPECT_EQ(bad.status, 2) << capacity;
    EXPECT_THAT(bad.err, HasSubstr("$.capacity: expected")) << capacity;
  }
  test::WriteTextFile(document, R"({"requests":[],"page_size":-0})");
  const test::ProgramRun page =
      Kvprefix({"replay", document, "--input-format", "requests"});
  EXPECT_EQ(page.status, 2);
  EXPECT_THAT(page.err,
              HasSubstr("$.page_size: expected an integer from 1 to "));
}

// One name for the input's format: --input-format in `replay` as in
// `curve`, whose --format is its output's; replay's -f/--format of 0.2.0
// still works, no longer shown.
TEST(CliOptionsTest, InputFormatHasOneName) {
  test::ScratchDir dir;
  const std::string document = dir.Path("doc.json");
  test::WriteTextFile(document, R"({"requests":[[1],[1]]})");
  const std::string expected =
      R"({"matches":[{"matched_length":0,"cache_node":0,"uncached_suffix":[1]},)"
      R"({"matched_length":1,"cache_node":1,"uncached_suffix":[]}]})"
      "\n";
  for (const char* name : {"--input-format", "--format", "-f"}) {
    const test::ProgramRun run =
        Kvprefix({"replay", document, name, "requests"});
    EXPECT_EQ(run.status, 0) << name << ": " << run.err;
    EXPECT_EQ(run.out, expected) << name;
  }
  for (const char* command : {"replay", "curve"}) {
    const std::string help = Kvprefix({command, "--help"}).out;
    EXPECT_THAT(help, HasSubstr("--input-format")) << command;
  }
  EXPECT_THAT(Kvprefix({"replay", "--help"}).out,
              ::testing::Not(HasSubstr("--format")));
  const test::ProgramRun mode = Kvprefix(
      {"replay", document, "--input-format", "requests", "--mode", "token"});
  EXPECT_EQ(mode.status, 2);
  EXPECT_EQ(mode.err,
            "kvprefix: --mode does not apply to --input-format requests\n");
}

// Every subcommand that prints a result takes -o (written atomically):
// replay's summary refused it ("--output does not apply to --format
// mooncake") and `engines` had none.
TEST(CliOptionsTest, EveryResultCanGoToAnOutputFile) {
  for (const auto& command : Subcommands()) {
    if (command[0] == "verify") continue;  // a report, and --out for a case
    std::vector<std::string> args = command;
    args.push_back("--help");
    EXPECT_THAT(Kvprefix(args).out, HasSubstr("-o,--output"))
        << fmt::format("{}", fmt::join(command, " "));
  }
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 3);
  const std::string output = dir.Path("out.json");
  const test::ProgramRun replay =
      Kvprefix({"replay", trace, "--capacity", "2", "-o", output});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(replay.out, "");
  const std::string summary = test::ReadTextFile(output);
  EXPECT_THAT(summary, ::testing::StartsWith(R"({"engine":")"));
  EXPECT_THAT(
      summary,
      HasSubstr(
          R"("capacity":2,"policy":"lru",)"
          R"("page_size":1,"model":"spec","match_limit":"all","requests":3,)"));
  EXPECT_EQ(summary.back(), '\n');
  // A bad line leaves the existing file untouched.
  test::WriteTextFile(trace, "{\"input_length\":1,\"hash_ids\":[1]}\n{}\n");
  const test::ProgramRun bad = Kvprefix({"replay", trace, "-o", output});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(test::ReadTextFile(output), summary);
  const test::ProgramRun engines = Kvprefix({"engines", "-o", output});
  EXPECT_EQ(engines.status, 0) << engines.err;
  EXPECT_EQ(engines.out, "");
  EXPECT_EQ(test::ReadTextFile(output), Kvprefix({"engines"}).out);
  EXPECT_THAT(test::ReadTextFile(output), HasSubstr(" (default)\n"));
}

// An empty output path is a usage error naming the option, for every option
// that names a file to write. Two bugs: `replay --matches ''` read as "no
// --matches" and wrote the summary alone, exit 0; `-o ''` said "the output
// path is empty" without naming -o.
TEST(CliOptionsTest, EmptyOutputPathIsAUsageErrorNamingTheOption) {
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 3);
  for (const auto& command : Subcommands()) {
    if (command[0] == "verify") continue;  // --out, below
    std::vector<std::string> args = command;
    args.insert(args.end(), {"-o", ""});
    const test::ProgramRun run = Kvprefix(args);
    EXPECT_EQ(run.status, 2) << fmt::format("{}", fmt::join(command, " "));
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err,
              "kvprefix: --output: the output path is empty (run with --help "
              "for usage)\n")
        << fmt::format("{}", fmt::join(command, " "));
  }
  const test::ProgramRun matches = Kvprefix({"replay", trace, "--matches", ""});
  EXPECT_EQ(matches.status, 2);
  EXPECT_EQ(matches.out, "");
  EXPECT_EQ(matches.err,
            "kvprefix: --matches: the output path is empty (run with --help "
            "for usage)\n");
  const test::ProgramRun out =
      Kvprefix({"verify", "--engines", "all", "--out", ""});
  EXPECT_EQ(out.status, 2);
  EXPECT_EQ(out.err,
            "kvprefix: --out: the output path is empty (run with --help for "
            "usage)\n");
}

// Two outputs naming one file: the second write replaced the first, exit 0
// (`replay --matches x -o x` kept the summary alone, `curve -o x --plot x`
// the image). Now a usage error before any work, however the path is
// spelled; standard output may still be shared.
TEST(CliOptionsTest, TwoOutputsNamingOneFileAreAUsageError) {
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 3);
  const std::string same = dir.Path("same.out");
  const std::string link = dir.Path("link.out");
  test::WriteTextFile(same, "previous\n");
  std::filesystem::create_symlink(same, link);
  for (const std::string& other :
       {same, dir.path() + "/./sub/../same.out", link}) {
    const test::ProgramRun run =
        Kvprefix({"replay", trace, "--matches", other, "-o", same});
    EXPECT_EQ(run.status, 2) << other;
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err, "kvprefix: --matches and --output name the same file: " +
                           same + " (run with --help for usage)\n");
  }
  EXPECT_EQ(test::ReadTextFile(same), "previous\n");
  // Files not there yet, spelled relative and absolute (missed at first:
  // a relative name was compared as it was typed); a dangling link and the
  // file it points to; standard output redirected to a regular file (as
  // RunProgram does) and /dev/stdout.
  const std::string fresh = dir.Path("fresh.out");
  const std::string fresh_relative = std::filesystem::relative(fresh).string();
  const std::string dangling = dir.Path("dangling.out");
  std::filesystem::create_symlink(dir.Path("target.out"), dangling);
  for (const auto& [first, second] :
       std::vector<std::pair<std::string, std::string>>{
           {fresh_relative, fresh},
           {dangling, dir.Path("target.out")},
           {"/dev/stdout", "-"},
           {"/proc/self/fd/1", "-"}}) {
    const test::ProgramRun run =
        Kvprefix({"replay", trace, "--matches", first, "-o", second});
    EXPECT_EQ(run.status, 2) << first << " " << second;
    EXPECT_THAT(run.err,
                HasSubstr("--matches and --output name the same file"));
  }
  EXPECT_FALSE(std::filesystem::exists(fresh));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("target.out")));
  // Writes that replace nothing: /dev/null twice, two hard links of one
  // file (the atomic write replaces a name, the other keeps the old file).
  const std::string linked = dir.Path("linked.out");
  std::filesystem::create_hard_link(same, linked);
  for (const auto& [first, second] :
       std::vector<std::pair<std::string, std::string>>{
           {"/dev/null", "/dev/null"}, {linked, same}}) {
    const test::ProgramRun run =
        Kvprefix({"replay", trace, "--matches", first, "-o", second});
    EXPECT_EQ(run.status, 0) << first << " " << run.err;
  }
  const std::string plot = dir.Path("curve.svg");
  const test::ProgramRun curve =
      Kvprefix({"curve", trace, "--points", "3", "-o", plot, "--plot", plot});
  EXPECT_EQ(curve.status, 2);
  EXPECT_EQ(curve.err, "kvprefix: --output and --plot name the same file: " +
                           plot + " (run with --help for usage)\n");
  EXPECT_FALSE(std::filesystem::exists(plot));
  // Distinct files, and standard output shared, are fine.
  const test::ProgramRun apart =
      Kvprefix({"replay", trace, "--matches", dir.Path("m.jsonl"), "-o", same});
  EXPECT_EQ(apart.status, 0) << apart.err;
  EXPECT_THAT(test::ReadTextFile(dir.Path("m.jsonl")),
              HasSubstr("\"matched_length\""));
  const test::ProgramRun shared =
      Kvprefix({"replay", trace, "--matches", "-", "-o", "-"});
  EXPECT_EQ(shared.status, 0) << shared.err;
  EXPECT_THAT(shared.out, HasSubstr("\"request\":2"));
  EXPECT_THAT(shared.out, HasSubstr("\"hit_ratio\""));
}

// CLI11 quotes a bad value raw in its message; a value holding an escape
// sequence reached the terminal ("--policy: ^[[2J not in {lru,fifo,lfu}").
// Every failure line now has its control characters escaped.
TEST(CliOptionsTest, ControlCharactersInMessagesAreEscaped) {
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 3);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"replay", trace, "--policy", "\x1b[2J"},
           {"replay", trace, "--engine", "radix\x1b[2J"},
           {"match", "--bad\x1b[2J"},
           {"replay", trace, "extra\nline"},
           {"replay", trace, "--capacity",
            "\xc2\x9b"
            "2J"},
           {"replay", trace, "--capacity",
            "a\xe2\x80\xae"
            "b"}}) {
    const test::ProgramRun run = Kvprefix(args);
    EXPECT_EQ(run.status, 2) << args.back();
    EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("\xc2\x9b"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("\xe2\x80\xae"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << run.err;  // one line
    EXPECT_THAT(run.err, ::testing::AnyOf(
                             HasSubstr("\\u001b[2J"), HasSubstr("extra\\nline"),
                             HasSubstr("\\u009b2J"), HasSubstr("a\\u202eb")));
  }
}

// The summary line named members --help did not list (model, match_limit,
// trigger, capacity_bytes); convert's TRACE offered replay documents,
// which convert does not read.
TEST(CliOptionsTest, HelpNamesWhatTheCommandsPrintAndRead) {
  test::ScratchDir dir;
  const std::string trace = TraceOf(dir, 3);
  const test::ProgramRun run =
      Kvprefix({"replay", trace, "--capacity", "2", "--model", "sglang",
                "--kv-bytes-per-token", "100"});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string help = Kvprefix({"replay", "--help"}).out;
  const std::regex member("\"([a-z_]+)\":");
  std::size_t members = 0;
  for (std::sregex_iterator it(run.out.begin(), run.out.end(), member), end;
       it != end; ++it, ++members) {
    EXPECT_THAT(help, HasSubstr((*it)[1].str())) << (*it)[1];
  }
  EXPECT_GE(members, 20u);
  EXPECT_THAT(help, HasSubstr("or with --input-format requests a SPEC §8 "
                              "replay document"));
  const std::string convert = Kvprefix({"convert", "mooncake", "--help"}).out;
  EXPECT_THAT(convert, HasSubstr("Mooncake trace"));
  EXPECT_THAT(convert, ::testing::Not(HasSubstr("--input-format")));
}

// `verify --engines radix hash` read "hash" as a FILE and said only that
// the file does not exist; an engine's name now gets the list's syntax.
TEST(CliOptionsTest, AnEngineNameReadAsAFileSaysEnginesTakeAList) {
  const test::ProgramRun run =
      Kvprefix({"verify", "--engines", "radix", "hash"});
  EXPECT_EQ(run.status, 2);
  EXPECT_THAT(run.err, HasSubstr("File does not exist: hash (an engine's "
                                 "name: --engines takes one comma-separated "
                                 "list, e.g. --engines radix,hash)"));
  const test::ProgramRun other =
      Kvprefix({"verify", "--engines", "radix", "nosuch"});
  EXPECT_EQ(other.status, 2);
  EXPECT_THAT(other.err, HasSubstr("File does not exist: nosuch"));
  EXPECT_THAT(other.err, ::testing::Not(HasSubstr("engine's name")));
}

}  // namespace
}  // namespace kvprefix
