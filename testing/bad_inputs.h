// Test data: one malformed SPEC §4 document per kind of bad input the
// contract lists, with the JSON location its error must name. Shared by the
// library tests (json_io_test.cc) and the CLI tests (cli_test.cc).
#ifndef KVPREFIX_TESTING_BAD_INPUTS_H_
#define KVPREFIX_TESTING_BAD_INPUTS_H_

#include <ostream>
#include <string>
#include <vector>

#include "io/input_error.h"

namespace kvprefix::test {

// The what() of the InputError `parse()` throws ("" if it throws none);
// any other exception propagates.
template <typename Parse>
std::string InputErrorOf(Parse&& parse) {
  try {
    parse();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

struct BadInput {
  std::string name;      // a GoogleTest-friendly name of the kind
  std::string json;      // the malformed document
  std::string location;  // InputError::location()
  std::string problem;   // a part of InputError::problem()
};

inline std::ostream& operator<<(std::ostream& out, const BadInput& bad) {
  return out << bad.name;
}

inline std::vector<BadInput> BadInputs() {
  const std::string ok = R"("cached_sequences":[[1,2]])";
  return {
      {"EmptyInput", "", "$", "found end of input"},
      {"WhitespaceOnly", " \n\t ", "$", "found end of input"},
      {"RootNotObject", "[[1,2],[3]]", "$",
       "expected an object, found an array"},
      {"MissingRequests", "{" + ok + "}", "$", "\"requests\""},
      {"MissingCached", R"({"requests":[]})", "$", "\"cached_sequences\""},
      {"UnknownMember", "{" + ok + R"(,"requests":[],"extra":[]})", "$.extra",
       "unknown member \"extra\""},
      {"DuplicatedMember", "{" + ok + R"(,"requests":[],"requests":[[1]]})",
       "$.requests", "second time"},
      {"MemberNotArray", R"({"cached_sequences":5,"requests":[]})",
       "$.cached_sequences", "expected an array, found 5"},
      {"SequenceNotArray", R"({"cached_sequences":[[1],[2],3],"requests":[]})",
       "$.cached_sequences[2]", "found 3"},
      {"Fraction", "{" + ok + R"(,"requests":[[1],[4,5,2.5]]})",
       "$.requests[1][2]", "2.5 (a number with a fraction)"},
      {"FractionZero", "{" + ok + R"(,"requests":[[1.0]]})", "$.requests[0][0]",
       "fraction"},
      {"Exponent", "{" + ok + R"(,"requests":[[1e3]]})", "$.requests[0][0]",
       "1e3 (a number with an exponent)"},
      {"AboveInt32", "{" + ok + R"(,"requests":[[2147483648]]})",
       "$.requests[0][0]",
       "expected an integer from -2147483648 to 2147483647, found 2147483648"},
      {"BelowInt32", R"({"cached_sequences":[[0,-2147483649]],"requests":[]})",
       "$.cached_sequences[0][1]", "found -2147483649"},
      {"BeyondInt64", "{" + ok + R"(,"requests":[[9223372036854775808]]})",
       "$.requests[0][0]", "found 9223372036854775808"},
      {"BeyondUint64",
       "{" + ok + R"(,"requests":[[1,123456789012345678901234567890]]})",
       "$.requests[0][1]", "found 123456789012345678901234"},
      {"True", "{" + ok + R"(,"requests":[[true]]})", "$.requests[0][0]",
       "found true"},
      {"False", "{" + ok + R"(,"requests":[[1,false]]})", "$.requests[0][1]",
       "found false"},
      {"Null", "{" + ok + R"(,"requests":[null]})", "$.requests[0]",
       "found null"},
      {"String", "{" + ok + R"(,"requests":[[1,"2"]]})", "$.requests[0][1]",
       "found a string"},
      {"Object", "{" + ok + R"(,"requests":[[{}]]})", "$.requests[0][0]",
       "found an object"},
      {"NestedArray", "{" + ok + R"(,"requests":[[[1]]]})", "$.requests[0][0]",
       "found an array"},
      {"LeadingZero", "{" + ok + R"(,"requests":[[01]]})", "$.requests[0][0]",
       "invalid number 01"},
      {"MissingComma", "{" + ok + R"(,"requests":[[1 2]]})", "$.requests[0][1]",
       "expected ',' or ']', found '2' at byte 43"},
      {"TrailingComma", "{" + ok + R"(,"requests":[[1,]]})", "$.requests[0][1]",
       "found ']' at byte 43"},
      {"TrailingCommaInObject", "{" + ok + R"(,"requests":[],})", "$",
       "expected a member name, found '}' at byte 42"},
      {"TrailingGarbage", "{" + ok + R"(,"requests":[]} x)", "$",
       "found 'x' at byte 43"},
      {"TrailingBrace", "{" + ok + R"(,"requests":[]}})", "$",
       "found '}' at byte 42"},
      {"SecondDocument", "{" + ok + R"(,"requests":[]}{})", "$",
       "found '{' at byte 42"},
      {"InvalidUtf8", "{" + ok + ",\"requests\":[]}\xff", "byte 42",
       "invalid byte 0xFF"},
      {"InvalidUtf8InKey", "{\"req\xc3\x28\":[]}", "$ (a member name), byte 5",
       "invalid byte 0xC3"},
      {"TruncatedInToken", R"({"cached_sequences":[[1,2)",
       "$.cached_sequences[0][1]", "found end of input"},
      {"TruncatedAfterComma", "{" + ok + R"(,"requests":[[1],)",
       "$.requests[1]", "expected a value, found end of input"},
      {"TruncatedAfterColon", R"({"cached_sequences":)", "$.cached_sequences",
       "expected a value, found end of input"},
      {"TruncatedObject", "{" + ok, "$.cached_sequences", "found end of input"},
      {"TruncatedString", "{" + ok + R"(,"requ)", "$", "found end of input"},
  };
}

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_BAD_INPUTS_H_
