// Replay-document fuzz target for the SPEC §8 reader (io/replay_document.h).
//
// How bytes decode: the whole input, unchanged, is one candidate document
// given to ParseReplayDocument. Inputs over 64 KiB
// (kMaxReaderInputBytes) are ignored.
//
// What must hold: the reader either throws InputError with a location
// ("$..." or "byte N") and a problem, or it accepts. Any other exception,
// crash, leak or sanitizer report is a bug; the target runs on a small
// stack (small_stack.h), so that a reader recursing once per nesting level
// crashes within the depth a short input reaches. An accepted document,
// written back with AppendReplayDocumentJson and parsed again, gives the
// same ReplayInput (requests, capacity, policy, page size), and writing
// that again gives the same bytes. A failed check prints the written form
// and aborts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/reader_round_trip.h"
#include "io/json_output.h"
#include "io/replay_document.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  return fuzz::FuzzReader<ReplayInput>(
      "replay_document_fuzzer", data, size,
      [](std::string_view json) { return ParseReplayDocument(json); },
      [](const ReplayInput& input, std::string& out) {
        AppendReplayDocumentJson(input, out);
      });
}
