// Checking one answer printed by an implementation under test against the
// reference's answer: strict SPEC §5 parsing, then values, then bytes.
#ifndef KVPREFIX_VERIFY_OUTPUT_CHECK_H_
#define KVPREFIX_VERIFY_OUTPUT_CHECK_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "checking/differential.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"
#include "verify/failure.h"

namespace kvprefix::verify {

// One match as printed. Fields are wider than Match's so that any printed
// value (a matched_length past the request, say) survives to the report.
struct PrintedMatch {
  std::uint64_t matched_length = 0;
  std::uint64_t cache_node = 0;  // 0 with Comparison::kLengths
  std::vector<Token> uncached_suffix;
  // Comparison::kLengths only: the cache_node member's value as printed,
  // minified (any JSON value), or nullopt when the member is missing.
  std::optional<std::string> cache_node_json;
};

// Parses `text` as SPEC §5 {"matches":[...]} with exactly `request_count`
// entries, each with exactly the members matched_length and cache_node
// (unsigned 64-bit integers) and uncached_suffix (an array of int32
// integers), in any order and any whitespace. Returns the matches, or a
// Failure of kind kNotJson (not one JSON document: empty, truncated, trailing
// garbage, an invalid escape, whose byte is named) or kWrongShape (a
// missing, unknown or duplicated member, a wrong type, a fraction, the wrong
// number of matches, arrays and objects nested deeper than kMaxJsonDepth of
// io/json_limits.h), whose message names the JSON location
// ("$.matches[3].cache_node"). Throws std::bad_alloc when memory runs out:
// that is the checker's failure, not the implementation's. With
// Comparison::kLengths the member cache_node may be missing or hold any
// JSON value (a cache with no kvprefix node IDs). O(text bytes) time and
// memory, whatever the nesting. Thread-safe.
std::variant<std::vector<PrintedMatch>, Failure> ParsePrintedMatches(
    std::string_view text, std::size_t request_count,
    checking::Comparison comparison = checking::Comparison::kAll);

// The refusal answer (verify/README.md, "Refusing an input"): the reason
// if `text` is one JSON object whose one member is "refused", a string
// (`{"refused":"mycache implements lru only"}`, in any layout), else
// nullopt (then `text` is to be checked as SPEC §5 matches). An
// implementation answers it for an input whose cache options it does not
// implement: verify skips the input (FailureKind::kRefused) instead of
// comparing. Throws std::bad_alloc when memory runs out. O(text bytes).
// Thread-safe.
std::optional<std::string> ParseRefusal(std::string_view text);

// Checks `text`, printed for `requests`, against the reference's `expected`
// matches (expected.size() == requests.size()): ParsePrintedMatches, then
// kWrongAnswer naming the first request whose match differs (request index
// and tokens, expected versus actual; with Comparison::kLengths only
// matched_length and the uncached suffix are compared and shown), then, if
// `check_format`, kFormat when the answers are right but the bytes differ
// from SPEC §5's compact form (naming the first differing byte; with
// kLengths the cache_node member as printed, or none, is part of that
// form). nullopt when everything agrees. O(text bytes + request tokens).
// Thread-safe.
std::optional<Failure> CheckPrintedMatches(
    std::string_view text, const SequenceList& requests,
    std::span<const Match> expected, bool check_format,
    checking::Comparison comparison = checking::Comparison::kAll);

// Checks `text`, an answer printed by the implementation under test,
// against `canonical`, the reference's answer as the tool prints it (any
// JSON answer: SPEC §10.5's serving answer for verify --serving --cmd):
// parsed with ParsePrintedMatches' rules (kNotJson; kWrongShape for text
// nested too deep), then walked in `canonical`'s order, the first
// difference named by its JSON location ("$.requests[3].start_us: expected
// 5, found 7"): kWrongShape for a type, a missing, unknown or duplicated
// member or an array of another length, an integer's place holding no
// integer from 0 to 2^64 - 1 (a fraction, a negative number), kWrongAnswer
// for a value (doubles compare as numbers: 0.5 and 5e-1 agree); then, if
// `check_format`, kFormat
// when the bytes differ from `canonical` (`section` names the SPEC section
// whose compact form it is, e.g. "§10.5"). Members named `ignored` (when
// not empty; "cache_node" for a cache with its own node IDs) are not
// compared, may be missing, and the bytes are then not checked. nullopt
// when everything agrees.
// Throws std::logic_error if `canonical` is no JSON, std::bad_alloc when
// memory runs out. O(text bytes + canonical bytes). Thread-safe.
std::optional<Failure> CheckPrintedJsonAnswer(std::string_view text,
                                              const std::string& canonical,
                                              bool check_format,
                                              std::string_view section,
                                              std::string_view ignored = {});

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_OUTPUT_CHECK_H_
