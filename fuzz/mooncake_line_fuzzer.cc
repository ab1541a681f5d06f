// Trace-line fuzz target for the Mooncake JSON Lines reader (io/mooncake.h).
//
// How bytes decode: the LAST byte picks the vocabulary size V from
// kVocabularies (byte % 5, FuzzedDataProvider order); the remaining bytes,
// unchanged, are one trace line. Lines longer than kMaxLineBytes are ignored,
// which also bounds a token-mode sequence (512 tokens per hash id, at most
// ~2,000 ids); 4 KiB lets unused members nest past kMaxJsonDepth (1024).
//
// What must hold: AppendTraceLine in block mode and in token mode either
// throws InputError whose location names the line ("line 7...") or appends
// exactly one sequence. Block mode rejects more than token mode (hash ids
// above INT32_MAX), so a line block mode accepts, token mode accepts too,
// and the block-mode sequence is the oracle for token mode (SPEC §7): the
// token sequence holds 512 tokens per block but the last, which holds 1..512
// (none at all without blocks), and its token j of block h is SplitMix64(h *
// 512 + j) mod V. A failed check prints the line and aborts. The target
// runs on a small stack (small_stack.h): a checker of unused members that
// recurses once per nesting level (fuzz/recursive_validate_value.cc, the
// teeth build) crashes within the depth a 4 KiB line reaches.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "fuzz/small_stack.h"
#include "io/input_error.h"
#include "io/mooncake.h"

namespace kvprefix {
namespace {

constexpr std::size_t kMaxLineBytes = 4096;
constexpr std::size_t kLineNumber = 7;
constexpr std::uint32_t kVocabularies[] = {1, 2, 1000, kDefaultVocabulary,
                                           std::uint32_t{1} << 31};

[[noreturn]] void Fail(const char* what, const std::string& line) {
  std::fprintf(stderr, "mooncake_line_fuzzer: %s\nline: %s\n", what,
               line.c_str());
  std::abort();
}

// The line's one sequence, or nullopt after a clean rejection.
std::optional<SequenceList> Parse(const std::string& line,
                                  const TraceOptions& options) {
  SequenceList out;
  try {
    AppendTraceLine(line, kLineNumber, options, out);
  } catch (const InputError& error) {
    if (!error.location().starts_with("line " + std::to_string(kLineNumber))) {
      Fail(error.what(), line);
    }
    return std::nullopt;
  }
  if (out.size() != 1) Fail("accepted line did not append one sequence", line);
  return out;
}

// Checks the token-mode sequence against SPEC §7 applied to the hash ids.
void CheckTokenExpansion(TokenSpan hash_ids, TokenSpan tokens,
                         std::uint32_t vocabulary, const std::string& line) {
  // A line without blocks has no tokens in either mode.
  const std::size_t blocks = hash_ids.size();
  const std::size_t full =
      blocks == 0 ? 0 : kMooncakeBlockTokens * (blocks - 1);
  if ((blocks == 0) != tokens.empty() || tokens.size() < full ||
      tokens.size() > full + kMooncakeBlockTokens ||
      (blocks > 0 && tokens.size() == full)) {
    Fail("token mode length does not fit the number of blocks", line);
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::uint64_t hash_id =
        static_cast<std::uint64_t>(hash_ids[i / kMooncakeBlockTokens]);
    const std::uint64_t x =
        hash_id * kMooncakeBlockTokens + i % kMooncakeBlockTokens;
    if (static_cast<std::uint64_t>(tokens[i]) != SplitMix64(x) % vocabulary) {
      Fail("token mode token differs from SPEC §7", line);
    }
  }
}

}  // namespace
}  // namespace kvprefix

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace kvprefix;
  if (size > kMaxLineBytes + 1) return 0;
  FuzzedDataProvider provider(data, size);
  const TraceOptions token_mode{TraceMode::kToken,
                                provider.PickValueInArray(kVocabularies)};
  const std::string line = provider.ConsumeRemainingBytesAsString();
  fuzz::RunOnSmallStack([&] {
    const auto blocks = Parse(line, TraceOptions{TraceMode::kBlock});
    const auto tokens = Parse(line, token_mode);
    if (!blocks) return;
    if (!tokens) Fail("token mode rejects a line block mode accepts", line);
    CheckTokenExpansion((*blocks)[0], (*tokens)[0], token_mode.vocabulary,
                        line);
  });
  return 0;
}
