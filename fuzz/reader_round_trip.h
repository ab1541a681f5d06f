// The check shared by the fuzz targets of io's document readers
// (json_input_fuzzer, replay_document_fuzzer): a reader either rejects its
// input cleanly or accepts something its writer writes back unchanged.
#ifndef KVPREFIX_FUZZ_READER_ROUND_TRIP_H_
#define KVPREFIX_FUZZ_READER_ROUND_TRIP_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

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

}  // namespace kvprefix::fuzz

#endif  // KVPREFIX_FUZZ_READER_ROUND_TRIP_H_
