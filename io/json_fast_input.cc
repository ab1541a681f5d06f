// The fast path of ParseBatchInput: see json_fast_input.h.
#include "io/json_fast_input.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kvprefix {
namespace {

// simdjson's largest document (SIMDJSON_MAXSIZE_BYTES, 4 GiB - 1): a longer
// one is the strict reader's IoError, so the fast path leaves it alone.
constexpr std::size_t kMaxDocumentBytes = 0xFFFFFFFF;

// A cursor over the document. Every reader returns false to decline, and
// ParseBatchInputFast then gives up on the whole document.
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
    // Every token is at least a digit and a separator. Only virtual memory:
    // if the system will not give that much, grow by doubling instead.
    try {
      out.Reserve(0, static_cast<std::size_t>(end_ - p_) / 2 + 1);
    } catch (const std::bad_alloc&) {
    }
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
  // sequence. The hot loop: the cursor in a register, tokens gathered in a
  // small buffer appended in blocks, and the separator checked before any
  // whitespace is skipped (producers write "1,2,3").
  bool Tokens(SequenceList& out) {
    SkipSpace();
    if (Take(']')) {
      out.CloseSequence();
      return true;
    }
    constexpr std::size_t kBlock = 256;
    std::array<Token, kBlock> block;
    std::size_t held = 0;
    const char* p = p_;
    while (true) {
#if defined(__SSE2__)
      if (end_ - p >= kCommaRunsReach) {
        if (held > kBlock - kMaxCommaRuns) {
          out.PushTokens(TokenSpan(block.data(), held));
          held = 0;
        }
        held += CommaRuns(p, block.data() + held);
        p = SkipSpace(p);  // what may follow the last comma it took
      }
#endif
      const bool negative = p < end_ && *p == '-';
      p += negative;
      const char* const digits = p;
      const std::uint64_t magnitude = Magnitude(p, end_);
      const std::ptrdiff_t count = p - digits;
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
      block[held++] = static_cast<Token>(token);
      if (held == kBlock) {
        out.PushTokens(TokenSpan(block.data(), held));
        held = 0;
      }
      if (p < end_ && *p == ',') {
        ++p;
        if (p < end_ && IsSpace(*p)) p = SkipSpace(p);
        continue;
      }
      p = SkipSpace(p);
      if (p < end_ && *p == ',') {
        p = SkipSpace(p + 1);
        continue;
      }
      if (p == end_ || *p != ']') return false;
      p_ = p + 1;
      out.PushTokens(TokenSpan(block.data(), held));
      out.CloseSequence();
      return true;
    }
  }

#if defined(__SSE2__)
  // CommaRuns reads 64 bytes and its last 8-byte load may start at byte 63.
  static constexpr std::ptrdiff_t kCommaRunsReach = 64 + 8;
  // At most this many tokens end with a comma in 64 bytes ("1,1,...").
  static constexpr std::size_t kMaxCommaRuns = 32;

  // Reads the tokens in the 64 bytes at `p` (a token's start) that are 1 to
  // 7 digits ended by a comma into `to` (room for kMaxCommaRuns), and moves
  // `p` past them; returns how many. The token boundaries come from a mask
  // of the commas (SSE2 compares), not from the previous token's length, so
  // the tokens are parsed independently of one another where the loop of
  // Tokens() waits for each token before it can load the next. Stops before
  // the first token that is anything else (a '-', whitespace, a leading
  // zero, 8 digits or more, the last token of the array, or one crossing
  // the 64 bytes) and leaves it to that loop, which takes every decision;
  // `p` is then after a comma, where whitespace may come before the token.
  // Needs kCommaRunsReach bytes from `p`.
  static std::size_t CommaRuns(const char*& p, Token* to) {
    std::uint64_t digits = 0;
    std::uint64_t commas = 0;
    for (int i = 0; i < 4; ++i) {
      const __m128i bytes =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      const __m128i offset = _mm_sub_epi8(bytes, _mm_set1_epi8('0'));
      const __m128i is_digit = _mm_cmpeq_epi8(
          _mm_min_epu8(offset, _mm_set1_epi8(9)), offset);  // unsigned <= 9
      const __m128i is_comma = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(','));
      digits |= static_cast<std::uint64_t>(
                    static_cast<std::uint16_t>(_mm_movemask_epi8(is_digit)))
                << (16 * i);
      commas |= static_cast<std::uint64_t>(
                    static_cast<std::uint16_t>(_mm_movemask_epi8(is_comma)))
                << (16 * i);
    }
    // Only the commas before the first byte that is neither.
    const std::uint64_t other = ~(digits | commas);
    if (other != 0) commas &= (other & (~other + 1)) - 1;
    std::size_t count = 0;
    std::size_t start = 0;
    for (; commas != 0; commas &= commas - 1) {
      const std::size_t end =
          static_cast<std::size_t>(std::countr_zero(commas));
      const std::size_t length = end - start;
      if (length == 0 || length > 7 || (length > 1 && p[start] == '0')) break;
      std::uint64_t word;
      std::memcpy(&word, p + start, sizeof word);
      to[count++] =
          static_cast<Token>(DigitsValue(word, static_cast<int>(length)));
      start = end + 1;
    }
    p += start;
    return count;
  }
#endif

  // The first non-whitespace byte at or after `p`.
  const char* SkipSpace(const char* p) const {
    while (p < end_ && IsSpace(*p)) ++p;
    return p;
  }

  // The value of the decimal digits at `p` (none: 0), leaving `p` after
  // them. Where 8 bytes are left, up to 7 digits are read at once (SWAR:
  // LeadingDigits, DigitsValue); more, and the end of the text, go one digit
  // at a time. More than 10 digits wrap around (unsigned arithmetic); the
  // caller declines those by their count.
  static std::uint64_t Magnitude(const char*& p, const char* end) {
    if constexpr (std::endian::native == std::endian::little) {
      if (end - p >= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, sizeof word);
        const int count = LeadingDigits(word);
        if (count > 0 && count < 8) {
          p += count;
          return DigitsValue(word, count);
        }
      }
    }
    std::uint64_t magnitude = 0;
    while (p < end && static_cast<unsigned char>(*p - '0') < 10) {
      magnitude = magnitude * 10 + static_cast<unsigned char>(*p - '0');
      ++p;
    }
    return magnitude;
  }

  // How many of the 8 bytes of `word` (the first byte in its lowest byte)
  // are ASCII digits before the first one that is not, 0 to 8. A byte is a
  // digit when its high nibble is 3 and stays 3 when 6 is added (0x30 to
  // 0x39). Adding 6 carries into the next byte only from a byte above 0xF9,
  // never from a digit, so it cannot disturb a byte before the first
  // non-digit.
  static int LeadingDigits(std::uint64_t word) {
    constexpr std::uint64_t kHigh = 0xF0F0F0F0F0F0F0F0;
    constexpr std::uint64_t kThrees = 0x3030303030303030;
    constexpr std::uint64_t kSixes = 0x0606060606060606;
    const std::uint64_t not_digit =
        ((word & kHigh) ^ kThrees) | (((word + kSixes) & kHigh) ^ kThrees);
    return not_digit == 0 ? 8 : std::countr_zero(not_digit) / 8;
  }

  // The value of the first `count` (1 to 8) digits of `word`: shifted to its
  // top, the digits read as an 8-digit number with leading zeros, combined
  // pairwise in three multiplications (Lemire's parse_eight_digits_unrolled,
  // as in simdjson and fast_float).
  static std::uint32_t DigitsValue(std::uint64_t word, int count) {
    word = (word << (8 * (8 - count))) & 0x0F0F0F0F0F0F0F0F;
    word = (word * 2561) >> 8;
    word = ((word & 0x00FF00FF00FF00FF) * 6553601) >> 16;
    return static_cast<std::uint32_t>(
        ((word & 0x0000FFFF0000FFFF) * 42949672960001) >> 32);
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
