// Reading Mooncake FAST'25 request traces (SPEC §7) into token sequences.
#ifndef KVPREFIX_IO_MOONCAKE_H_
#define KVPREFIX_IO_MOONCAKE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "io/input_error.h"
#include "kvprefix/namespaces.h"
#include "kvprefix/request.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/splitmix64.h"

namespace kvprefix {

// Tokens per Mooncake prefix block.
inline constexpr std::int64_t kMooncakeBlockTokens = 512;
// Microseconds per millisecond: a trace's timestamps are milliseconds.
inline constexpr std::uint64_t kMillisecondUs = 1000;
// Default vocabulary size for token mode (Llama 3).
inline constexpr std::uint32_t kDefaultVocabulary = 128256;

enum class TraceMode {
  kBlock,  // one token per hash id: token = hash_id
  kToken,  // each block expands to its tokens (SPEC §7 token mode)
};

struct TraceOptions {
  TraceMode mode = TraceMode::kBlock;
  std::uint32_t vocabulary = kDefaultVocabulary;  // V, 1 <= V <= 2^31
  // SPEC §8.1: the member of a line that holds its request's namespace (a
  // string, or an integer read as its decimal text; a line without it is
  // in ""), or empty: every request in "". With a field, the reader folds
  // each request's namespace into its first token (NamespaceFolder,
  // kvprefix/namespaces.h), so the sequences read are the ones a cache
  // sees; it may not be "input_length" or "hash_ids" (nor, with `serving`,
  // "timestamp" or "output_length").
  std::string namespace_field = {};
  // SPEC §10.1: also read each line's "timestamp" (an integer from 0 to
  // kMaxServeTime / 1000 ms, so that its arrival in µs is at most
  // kMaxServeTime; non-decreasing from line to line) and "output_length"
  // (an integer from 0 to kMaxServeTime tokens), both required, into a
  // TraceServing. false: both are ignored like any other member (SPEC §3's
  // sequential replay, in file order whatever the timestamps), at no cost.
  bool serving = false;
};

// What a trace read with TraceOptions::serving brings to a SPEC §10 serving
// replay (ServeInput's arrivals_us and output_lengths, kvprefix/request.h):
// one value per request, in trace order.
struct TraceServing {
  // timestamp × 1000: µs, non-decreasing.
  std::vector<std::uint64_t> arrivals_us;
  // Block mode: ⌈output_length / kMooncakeBlockTokens⌉, the output in whole
  // blocks (a token is a block there); token mode: output_length tokens.
  std::vector<std::uint64_t> output_lengths;

  friend bool operator==(const TraceServing&, const TraceServing&) = default;
};

// Parses one trace line (a JSON object with at least "input_length" and
// "hash_ids"; other members are ignored) and appends its token sequence to
// `out` as one sequence. `line_number` (1-based) is used in error locations
// ("line 7: $.hash_ids[3]"). Throws InputError for invalid JSON, a missing or
// mistyped member, a hash id that is negative or (block mode) above INT32_MAX,
// an input_length inconsistent with the number of blocks (the last block
// must hold 1..512 tokens), or a namespace (options.namespace_field) that is
// neither a string nor an integer or is longer than 256 bytes, and
// std::invalid_argument if options.vocabulary is not in 1..2^31, or if
// options.namespace_field is set and `folder` is null (the folder of the
// whole trace, which numbers its first tokens: see TraceOptions). With
// options.serving, also appends the line's arrival and output length to
// `serving` (std::invalid_argument if it is null), and throws InputError for
// a missing, duplicated or out-of-range "timestamp" or "output_length"
// ("line 7: $: expected member \"timestamp\", found an object without it")
// and for a timestamp smaller than the last one in `serving` ("line 7:
// $.timestamp: expected a timestamp of at least 5 (the one of the line
// before it), found 3"); nothing
// is appended to `out` or `serving` on an error. O(tokens appended).
// Thread-safe (no shared state but `folder` and `serving`).
void AppendTraceLine(std::string_view line, std::size_t line_number,
                     const TraceOptions& options, SequenceList& out,
                     NamespaceFolder* folder = nullptr,
                     TraceServing* serving = nullptr);

// Reads a whole JSON Lines trace ("-" is standard input); blank lines are
// skipped but counted in line numbers. Parses every line before expanding,
// so the token storage is allocated once at its final size. Throws IoError
// if the file cannot be read, InputError and std::invalid_argument as
// AppendTraceLine. `serving` (if not null) is replaced with the trace's
// arrivals and output lengths with options.serving (one per request of the
// result; a line whose timestamp is smaller than the line's before it,
// blank lines aside, is an InputError naming it), and emptied without it.
// O(file bytes + tokens); memory ~ 4 bytes per token (+ 16 per request with
// serving). For a replay, which needs one request at a time, ForEachTraceChunk
// needs far less.
SequenceList ReadMooncakeTrace(const std::string& path,
                               const TraceOptions& options,
                               TraceServing* serving = nullptr);

// How ForEachTraceChunk cuts a trace into chunks and who reads them.
struct TraceChunking {
  // A chunk is whole requests in trace order, closed once it holds at least
  // `tokens` tokens or `requests` requests (both >= 1), or at the end of the
  // trace: fewer than tokens + (the longest request) tokens.
  std::size_t tokens = std::size_t{1} << 18;
  std::size_t requests = std::size_t{1} << 14;
  // true: a second thread reads, parses and expands the chunks while the
  // caller consumes them, at most kTraceChunksInFlight - 1 chunks ahead
  // (pipelining: a replay on one core, the expansion on another). false, or
  // if the thread cannot be started: the caller's thread does both in turn.
  // The chunks, and so everything consume() sees, are the same either way.
  bool background = true;
};

// Chunks held at once by ForEachTraceChunk with a background reader: the one
// consumed, the one ready next and the one being filled.
inline constexpr std::size_t kTraceChunksInFlight = 3;

// Streams a JSON Lines trace ("-" is standard input): reads it a buffer at
// a time, parses and expands each line as AppendTraceLine does (blank lines
// skipped but counted in line numbers) and calls consume(chunk) for each
// chunk in trace order, on the calling thread. The chunks concatenated are
// ReadMooncakeTrace(path, options). Memory: the window, at most
// kTraceChunksInFlight chunks of fewer than chunking.tokens + (the longest
// request) tokens at 4 bytes each (5.4 MB by default on the Mooncake traces,
// whose longest request has 191,378 tokens; a reused chunk's storage may
// have grown to twice what it holds), plus a read buffer of 256 KiB or the
// longest line; not the trace. Calls share nothing: any number may run at
// once on different threads.
//
// Errors come in trace order: consume() has seen every request before the
// line that is bad or cannot be read, whatever the chunking, then this
// throws what ReadMooncakeTrace would (IoError, InputError naming the line),
// and nothing after it is consumed. std::invalid_argument (a bad vocabulary
// or chunking) and IoError for a file that cannot be opened come before any
// chunk; std::bad_alloc as soon as the reader runs out of memory.
// A caller that must not act on a partial trace keeps its output until this
// returns. If consume() throws, the reader is stopped and joined, and the
// exception propagates. Returns the seconds spent reading, parsing and
// expanding (on the reader's thread when it is in the background: they
// overlap the consumer's). O(file bytes + tokens).
double ForEachTraceChunk(
    const std::string& path, const TraceOptions& options,
    const std::function<void(const SequenceList& chunk)>& consume,
    const TraceChunking& chunking = {});

// A chunk of ForEachServeTraceChunk: whole requests in trace order, and with
// TraceOptions::serving their arrivals and output lengths (one per request;
// empty without it).
struct TraceChunk {
  SequenceList requests;
  TraceServing serving;
};

// ForEachTraceChunk, with each chunk's serving fields: the same chunks, the
// same errors (with options.serving, also a missing field or a timestamp
// smaller than the line's before it, across chunks, as ReadMooncakeTrace
// throws it, after every request before the bad line was consumed). The
// chunks' `serving` concatenated are ReadMooncakeTrace's. Memory: + 16
// bytes per request of a chunk in flight with serving.
double ForEachServeTraceChunk(
    const std::string& path, const TraceOptions& options,
    const std::function<void(const TraceChunk& chunk)>& consume,
    const TraceChunking& chunking = {});

}  // namespace kvprefix

#endif  // KVPREFIX_IO_MOONCAKE_H_
