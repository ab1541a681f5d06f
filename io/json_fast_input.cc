// The fast path of ParseBatchInput: see json_fast_input.h.
#include "io/json_fast_input.h"

#include <cstdint>
#include <cstring>
#include <limits>

namespace kvprefix {
namespace {

// simdjson's largest document (SIMDJSON_MAXSIZE_BYTES, 4 GiB - 1): a longer
// one is the strict reader's IoError, so the fast path leaves it alone.
constexpr std::size_t kMaxDocumentBytes = 0xFFFFFFFF;

// A cursor over the document; nullptr-free: every reader returns false to
// decline, leaving the rest to the strict reader.
class FastReader {
 public:
  explicit FastReader(std::string_view json)
      : p_(json.data()), end_(json.data() + json.size()) {}

  // The batch document, into `out`.
  bool Document(BatchInput& out) {
    SkipSpace();
    if (!Take('{')) return false;
    bool seen[2] = {false, false};
    do {
      SkipSpace();
      const int member = Key();
      if (member < 0 || seen[member]) return false;
      seen[member] = true;
      SkipSpace();
      if (!Take(':')) return false;
      SkipSpace();
      if (!Sequences(member == 0 ? out.cached_sequences : out.requests)) {
        return false;
      }
      SkipSpace();
    } while (Take(','));
    if (!Take('}') || !seen[0] || !seen[1]) return false;
    SkipSpace();
    return p_ == end_;
  }

 private:
  static bool IsSpace(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }
  void SkipSpace() {
    while (p_ < end_ && IsSpace(*p_)) ++p_;
  }
  bool Take(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // Takes `text` if the bytes at the cursor are exactly it.
  bool TakeText(std::string_view text) {
    if (static_cast<std::size_t>(end_ - p_) < text.size() ||
        std::memcmp(p_, text.data(), text.size()) != 0) {
      return false;
    }
    p_ += text.size();
    return true;
  }
  // 0 for "cached_sequences", 1 for "requests", -1 for anything else.
  int Key() {
    if (TakeText("\"cached_sequences\"")) return 0;
    if (TakeText("\"requests\"")) return 1;
    return -1;
  }

  // An array of token arrays, appended to `out`.
  bool Sequences(SequenceList& out) {
    if (!Take('[')) return false;
    // Every token is at least a digit and a separator.
    out.Reserve(0, static_cast<std::size_t>(end_ - p_) / 2 + 1);
    SkipSpace();
    if (Take(']')) return true;
    do {
      SkipSpace();
      if (!Take('[') || !Tokens(out)) return false;
      SkipSpace();
    } while (Take(','));
    return Take(']');
  }

  // The rest of a token array after its '[', appended to `out` as one
  // sequence. The hot loop: one pass over the digits, the separator checked
  // before any whitespace is skipped (producers write "1,2,3").
  bool Tokens(SequenceList& out) {
    SkipSpace();
    if (Take(']')) {
      out.CloseSequence();
      return true;
    }
    while (true) {
      const bool negative = p_ < end_ && *p_ == '-';
      p_ += negative;
      const char* const digits = p_;
      std::uint64_t magnitude = 0;
      while (p_ < end_ && static_cast<unsigned char>(*p_ - '0') < 10) {
        magnitude = magnitude * 10 + static_cast<unsigned char>(*p_ - '0');
        ++p_;
      }
      const std::ptrdiff_t count = p_ - digits;
      // Up to 10 digits cannot overflow 64 bits; int32 needs at most 10.
      if (count == 0 || count > 10 || (*digits == '0' && count > 1)) {
        return false;
      }
      const std::int64_t token = negative
                                     ? -static_cast<std::int64_t>(magnitude)
                                     : static_cast<std::int64_t>(magnitude);
      if (token < std::numeric_limits<Token>::min() ||
          token > std::numeric_limits<Token>::max()) {
        return false;
      }
      out.PushToken(static_cast<Token>(token));
      if (Take(',')) {
        SkipSpace();
        continue;
      }
      SkipSpace();
      if (Take(',')) {
        SkipSpace();
        continue;
      }
      if (!Take(']')) return false;
      out.CloseSequence();
      return true;
    }
  }

  const char* p_;
  const char* const end_;
};

}  // namespace

std::optional<BatchInput> ParseBatchInputFast(std::string_view json) {
  if (json.size() > kMaxDocumentBytes) return std::nullopt;
  BatchInput input;
  if (!FastReader(json).Document(input)) return std::nullopt;
  return input;
}

}  // namespace kvprefix
