// JSON-input fuzz target for the SPEC §4 reader (io/json_input.h).
//
// How bytes decode: the whole input, unchanged, is one candidate document
// given to ParseBatchInput. Inputs longer than kMaxInputBytes are ignored.
//
// What must hold: the reader either throws InputError with a location
// ("$..." or "byte N") and a problem, or it accepts. Any other exception,
// crash, leak or sanitizer report is a bug. An accepted document, written
// back with AppendBatchInputJson and parsed again, gives the same BatchInput,
// and writing that again gives the same bytes (the written form is a fixed
// point). A failed check prints the input's canonical form and aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/input_error.h"
#include "io/json_input.h"
#include "io/json_output.h"

namespace kvprefix {
namespace {

constexpr std::size_t kMaxInputBytes = 1 << 16;

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "json_input_fuzzer: %s\n%.*s\n", what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

void CheckCleanRejection(const InputError& error) {
  const std::string& location = error.location();
  if (error.problem().empty() ||
      !(location.starts_with("$") || location.starts_with("byte "))) {
    Fail("rejection without a location and a problem", error.what());
  }
}

}  // namespace
}  // namespace kvprefix

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  if (size > kMaxInputBytes) return 0;
  BatchInput input;
  try {
    input = ParseBatchInput(
        std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const InputError& error) {
    CheckCleanRejection(error);
    return 0;
  }
  std::string written;
  AppendBatchInputJson(input, written);
  BatchInput reread;
  try {
    reread = ParseBatchInput(written);
  } catch (const InputError& error) {
    Fail(error.what(), written);
  }
  if (!(reread == input)) Fail("round trip changed the input", written);
  std::string rewritten;
  AppendBatchInputJson(reread, rewritten);
  if (rewritten != written) Fail("writing is not a fixed point", rewritten);
  return 0;
}
