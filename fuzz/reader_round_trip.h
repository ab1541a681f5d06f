// The check shared by the fuzz targets of io's document readers
// (json_input_fuzzer, replay_document_fuzzer): a reader either rejects its
// input cleanly or accepts something its writer writes back unchanged.
#ifndef KVPREFIX_FUZZ_READER_ROUND_TRIP_H_
#define KVPREFIX_FUZZ_READER_ROUND_TRIP_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/small_stack.h"
#include "io/input_error.h"

namespace kvprefix::fuzz {

// Prints "<target>: <what>" and `detail`, and aborts.
[[noreturn]] inline void Fail(const char* target, const char* what,
                              std::string_view detail) {
  std::fprintf(stderr, "%s: %s\n%.*s\n", target, what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// parse(bytes) must either throw InputError with a location ("$..." or
// "byte N") and a problem, or return a value that write() writes, parse()
// reads back equal, and write() writes again to the same bytes (the written
// form is a fixed point). Anything else aborts with the written form.
template <typename Input, typename Parse, typename Write>
void CheckReaderRoundTrip(const char* target, std::string_view bytes,
                          Parse&& parse, Write&& write) {
  Input input;
  try {
    input = parse(bytes);
  } catch (const InputError& error) {
    const std::string& location = error.location();
    if (error.problem().empty() ||
        !(location.starts_with("$") || location.starts_with("byte "))) {
      Fail(target, "rejection without a location and a problem", error.what());
    }
    return;
  }
  std::string written;
  write(input, written);
  Input reread;
  try {
    reread = parse(written);
  } catch (const InputError& error) {
    Fail(target, error.what(), written);
  }
  if (!(reread == input)) Fail(target, "round trip changed the input", written);
  std::string rewritten;
  write(reread, rewritten);
  if (rewritten != written) {
    Fail(target, "writing is not a fixed point", rewritten);
  }
}

// The whole of such a target: inputs longer than kMaxReaderInputBytes are
// ignored; the others are checked by CheckReaderRoundTrip on the small
// stack (small_stack.h).
inline constexpr std::size_t kMaxReaderInputBytes = 1 << 16;

template <typename Input, typename Parse, typename Write>
int FuzzReader(const char* target, const std::uint8_t* data, std::size_t size,
               Parse&& parse, Write&& write) {
  if (size > kMaxReaderInputBytes) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  RunOnSmallStack(
      [&] { CheckReaderRoundTrip<Input>(target, bytes, parse, write); });
  return 0;
}

}  // namespace kvprefix::fuzz

#endif  // KVPREFIX_FUZZ_READER_ROUND_TRIP_H_
