// JSON-input fuzz target for the SPEC §4 reader (io/json_input.h).
//
// How bytes decode: the whole input, unchanged, is one candidate document
// given to ParseBatchInput. Inputs over 64 KiB
// (kMaxReaderInputBytes) are ignored.
//
// What must hold: the reader either throws InputError with a location
// ("$..." or "byte N") and a problem, or it accepts. Any other exception,
// crash, leak or sanitizer report is a bug; the target runs on a small
// stack (small_stack.h), so that a reader recursing once per nesting level
// crashes within the depth a short input reaches. An accepted document, written
// back with AppendBatchInputJson and parsed again, gives the same BatchInput,
// and writing that again gives the same bytes (the written form is a fixed
// point). Both readers read it: the fast path (io/json_fast_input.h) may
// decline, but whatever it accepts the strict reader accepts with the same
// tokens. A failed check prints the input's canonical form and aborts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz/reader_round_trip.h"
#include "io/json_fast_input.h"
#include "io/json_input.h"
#include "io/json_output.h"

namespace {

// The strict reader's result, after checking the fast path against it.
kvprefix::BatchInput ParseBothWays(std::string_view json) {
  using namespace kvprefix;
  const std::optional<BatchInput> fast = ParseBatchInputFast(json);
  BatchInput strict;
  try {
    strict = ParseBatchInputStrict(json);
  } catch (const InputError&) {
    if (fast) fuzz::Fail("json_input_fuzzer", "fast path accepted", json);
    throw;
  }
  if (fast && !(*fast == strict)) {
    fuzz::Fail("json_input_fuzzer", "fast path read other tokens", json);
  }
  return strict;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  return fuzz::FuzzReader<BatchInput>(
      "json_input_fuzzer", data, size, ParseBothWays,
      [](const BatchInput& input, std::string& out) {
        AppendBatchInputJson(input, out);
      });
}
