// Reading Mooncake traces (SPEC §7): one simdjson On Demand parse per line,
// whole or streamed in chunks.
#include "io/mooncake.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "io/block_tokens.h"
#include "io/json_diagnostics.h"
#include "io/json_reader.h"
#include "io/padded_lines.h"

namespace kvprefix {
namespace {

using json_diagnostics::Context;
using json_diagnostics::JsonPath;
namespace ondemand = simdjson::ondemand;

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
// The largest timestamp (ms) whose arrival (µs) is at most kMaxServeTime.
constexpr auto kMaxTimestampMs =
    static_cast<std::int64_t>(kMaxServeTime / kMillisecondUs);

// The members of one trace line that kvprefix reads.
struct TraceLine {
  std::int64_t input_length = -1;  // -1: not seen
  std::vector<std::int64_t> hash_ids;
  bool has_hash_ids = false;
  std::string name_space;  // TraceOptions::namespace_field's; "" if absent
  bool has_namespace = false;
  // TraceOptions::serving only; -1: not seen.
  std::int64_t timestamp = -1;      // ms
  std::int64_t output_length = -1;  // tokens
};

// The namespace `value` (at `path`) names: a string, or an integer as its
// decimal text (-0 is 0, SPEC §6), of at most kMaxNamespaceBytes bytes.
std::string ReadNamespace(const Context& context,
                          simdjson::simdjson_result<ondemand::value> value,
                          const JsonPath& path) {
  std::string text;
  std::int64_t signed_number = 0;
  std::uint64_t number = 0;
  ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS ||
      (type != ondemand::json_type::string &&
       type != ondemand::json_type::number)) {
    throw json_diagnostics::Unexpected(context, value, path.str(),
                                       "a namespace (a string or an integer)");
  }
  if (type == ondemand::json_type::string) {
    text = json_reader::ReadString(context, value, path);
  } else if (value.get_int64().get(signed_number) == simdjson::SUCCESS) {
    text = std::to_string(signed_number);
  } else if (value.get_uint64().get(number) == simdjson::SUCCESS) {
    text = std::to_string(number);
  } else {
    throw json_diagnostics::Unexpected(context, value, path.str(),
                                       "a namespace (a string or an integer)");
  }
  return json_reader::CheckNamespaceLength(context, path, std::move(text));
}

void ReadHashIds(const Context& context,
                 simdjson::simdjson_result<ondemand::value> value,
                 const JsonPath& path, std::int64_t max_id,
                 std::vector<std::int64_t>& out) {
  ondemand::array ids;
  if (value.get_array().get(ids) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path.str(),
                                       "an array of hash ids");
  }
  for (auto id : ids) {
    out.push_back(json_diagnostics::ReadInteger(context, id, 0, max_id,
                                                path.Index(out.size())));
  }
}

// "line 7: ", for errors found outside a Context.
std::string LinePrefix(std::size_t line_number) {
  return fmt::format("line {}: ", line_number);
}

// Reads TraceOptions::serving's member `name` ("timestamp" or
// "output_length") of a line into `line`; false for any other member.
bool ReadServingMember(const Context& context,
                       const json_diagnostics::Member& member,
                       const JsonPath& root_path, TraceLine& line) {
  const bool is_timestamp = member.name == "timestamp";
  if (!is_timestamp && member.name != "output_length") return false;
  std::int64_t& field = is_timestamp ? line.timestamp : line.output_length;
  if (field >= 0) {
    throw json_diagnostics::DuplicateMember(context, member.name, root_path);
  }
  field = json_diagnostics::ReadInteger(
      context, member.value, 0,
      is_timestamp ? kMaxTimestampMs : static_cast<std::int64_t>(kMaxServeTime),
      root_path.Member(member.name));
  return true;
}

void ReadLine(ondemand::parser& parser, simdjson::padded_string_view json,
              std::size_t line_number, std::int64_t max_id,
              const TraceOptions& options, TraceLine& line) {
  const std::string_view namespace_field = options.namespace_field;
  ondemand::document document;
  ondemand::object root;
  simdjson::error_code error = parser.iterate(json).get(document);
  if (error == simdjson::SUCCESS) error = document.get_object().get(root);
  if (error != simdjson::SUCCESS) {
    throw json_diagnostics::DocumentError(error, json, LinePrefix(line_number));
  }
  const Context context{document, json, line_number};
  const JsonPath root_path;
  for (auto field : root) {
    const json_diagnostics::Member member =
        json_diagnostics::ReadMember(context, std::move(field), root_path);
    const bool is_length = member.name == "input_length";
    if (!namespace_field.empty() && member.name == namespace_field) {
      if (line.has_namespace) {
        throw json_diagnostics::DuplicateMember(context, member.name,
                                                root_path);
      }
      line.has_namespace = true;
      line.name_space =
          ReadNamespace(context, member.value, root_path.Member(member.name));
      continue;
    }
    if (options.serving &&
        ReadServingMember(context, member, root_path, line)) {
      continue;
    }
    if (!is_length && member.name != "hash_ids") {
      // Unused, but it must be JSON: On Demand would skip it unchecked.
      json_diagnostics::ValidateValue(context, member.value,
                                      root_path.Member(member.name), 1);
      continue;
    }
    if (is_length ? line.input_length >= 0 : line.has_hash_ids) {
      throw json_diagnostics::DuplicateMember(context, member.name, root_path);
    }
    const JsonPath path = root_path.Member(member.name);
    if (is_length) {
      line.input_length = json_diagnostics::ReadInteger(context, member.value,
                                                        0, kMaxInt64, path);
    } else {
      line.has_hash_ids = true;
      ReadHashIds(context, member.value, path, max_id, line.hash_ids);
    }
  }
  if (line.input_length < 0) {
    throw json_diagnostics::MissingMember(context, "input_length", root_path);
  }
  if (!line.has_hash_ids) {
    throw json_diagnostics::MissingMember(context, "hash_ids", root_path);
  }
  if (options.serving && line.timestamp < 0) {
    throw json_diagnostics::MissingMember(context, "timestamp", root_path);
  }
  if (options.serving && line.output_length < 0) {
    throw json_diagnostics::MissingMember(context, "output_length", root_path);
  }
  json_diagnostics::CheckAtEnd(context);
}

// Tokens in the last block; throws unless it holds 1..512 (0 blocks: none).
// `line_number` names the line in the error (0: no line known).
std::int64_t LastBlockTokens(const TraceLine& line, std::size_t line_number) {
  const auto blocks = static_cast<std::int64_t>(line.hash_ids.size());
  if (blocks == 0 && line.input_length == 0) return 0;
  const std::int64_t low =
      blocks == 0 ? 0 : (blocks - 1) * kMooncakeBlockTokens + 1;
  const std::int64_t high = blocks * kMooncakeBlockTokens;
  if (line.input_length < low || line.input_length > high) {
    throw InputError(
        (line_number == 0 ? "" : LinePrefix(line_number)) + "$.input_length",
        fmt::format("expected {} to {} tokens for {} hash ids, "
                    "found {}",
                    low, high, blocks, line.input_length));
  }
  return line.input_length - (blocks - 1) * kMooncakeBlockTokens;
}

// Appends the tokens of a line ParsePaddedLine has checked. `remainder`
// takes tokens mod options.vocabulary; `folder`, given when
// options.namespace_field is, folds the line's namespace into its first
// token.
void AppendTokens(const TraceLine& line, const TraceOptions& options,
                  const Remainder& remainder, NamespaceFolder* folder,
                  SequenceList& out) {
  // The request's first token, folded with its namespace.
  const auto first = [&](Token token) {
    return folder == nullptr
               ? token
               : folder->Fold(folder->Intern(line.name_space), token);
  };
  const std::int64_t last_block_tokens = LastBlockTokens(line, 0);
  const std::size_t blocks = line.hash_ids.size();
  // One block is expanded into a local array (vectorized), then appended at
  // once.
  std::array<Token, kMooncakeBlockTokens> block;
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto id = static_cast<std::uint64_t>(line.hash_ids[b]);
    if (options.mode == TraceMode::kBlock) {
      const auto token = static_cast<Token>(id);
      out.PushToken(b == 0 ? first(token) : token);
      continue;
    }
    const std::uint64_t count =
        b + 1 < blocks ? kMooncakeBlockTokens : last_block_tokens;
    ExpandBlockTokens(id, count, remainder, block.data());
    if (b == 0) block[0] = first(block[0]);
    out.PushTokens(TokenSpan(block.data(), count));
  }
  out.CloseSequence();
}

void CheckOptions(const TraceOptions& options) {
  if (options.vocabulary == 0 || options.vocabulary > (1U << 31)) {
    throw std::invalid_argument(fmt::format(
        "vocabulary size must be 1 to 2147483648, not {}", options.vocabulary));
  }
  if (options.namespace_field == "input_length" ||
      options.namespace_field == "hash_ids" ||
      (options.serving && (options.namespace_field == "timestamp" ||
                           options.namespace_field == "output_length"))) {
    throw std::invalid_argument(fmt::format(
        "the namespace field cannot be \"{}\", a member every trace line "
        "needs for its tokens",
        options.namespace_field));
  }
}

// The trace's folder, when its lines carry namespaces.
NamespaceFolder* FolderFor(const TraceOptions& options,
                           NamespaceFolder& folder) {
  return options.namespace_field.empty() ? nullptr : &folder;
}

std::int64_t MaxHashId(const TraceOptions& options) {
  return options.mode == TraceMode::kBlock ? std::numeric_limits<Token>::max()
                                           : kMaxInt64;
}

// Parses and checks one line into `line` (reused: its vector keeps capacity).
void ParsePaddedLine(ondemand::parser& parser,
                     simdjson::padded_string_view json, std::size_t line_number,
                     const TraceOptions& options, TraceLine& line) {
  line.input_length = -1;
  line.hash_ids.clear();
  line.has_hash_ids = false;
  line.name_space.clear();
  line.has_namespace = false;
  line.timestamp = -1;
  line.output_length = -1;
  try {
    ReadLine(parser, json, line_number, MaxHashId(options), options, line);
  } catch (const InputError&) {
    json_diagnostics::RethrowWithUtf8First(json, LinePrefix(line_number));
  }
  LastBlockTokens(line, line_number);
}

// The serving fields of the lines read so far (TraceOptions::serving):
// checks each line's timestamp against the one before it and appends its
// arrival and output length.
class ServingLines {
 public:
  // Starts after `before` (whose last arrival, if any, is the one before).
  explicit ServingLines(const TraceServing* before = nullptr) {
    if (before != nullptr && !before->arrivals_us.empty()) {
      previous_ms_ = before->arrivals_us.back() / kMillisecondUs;
    }
  }

  // Throws InputError at line `line_number`'s $.timestamp if it is smaller
  // than the line's before it; else appends the line's values to `out`.
  void Append(const TraceLine& line, std::size_t line_number,
              const TraceOptions& options, TraceServing& out) {
    const auto timestamp = static_cast<std::uint64_t>(line.timestamp);
    if (previous_ms_ && timestamp < *previous_ms_) {
      throw InputError(
          LinePrefix(line_number) + "$.timestamp",
          fmt::format("expected a timestamp of at least {} (the one of the "
                      "line before it), found {}",
                      *previous_ms_, timestamp));
    }
    previous_ms_ = timestamp;
    const auto output = static_cast<std::uint64_t>(line.output_length);
    out.arrivals_us.push_back(timestamp * kMillisecondUs);
    out.output_lengths.push_back(options.mode == TraceMode::kBlock
                                     ? (output + kMooncakeBlockTokens - 1) /
                                           kMooncakeBlockTokens
                                     : output);
  }

 private:
  std::optional<std::uint64_t> previous_ms_;
};

// Tokens AppendTokens will append for a checked line.
std::uint64_t TokenCount(const TraceLine& line, const TraceOptions& options) {
  return options.mode == TraceMode::kBlock
             ? line.hash_ids.size()
             : static_cast<std::uint64_t>(line.input_length);
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Reads a trace's requests a chunk at a time (TraceChunking), each line
// parsed and expanded as it is read. Not thread-safe.
class ChunkReader {
 public:
  ChunkReader(const std::string& path, const TraceOptions& options,
              const TraceChunking& chunking)
      : lines_(path),
        options_(options),
        chunking_(chunking),
        remainder_(options.vocabulary) {}

  // Replaces `chunk` with the next requests; false if none are left.
  // Throws as ForEachTraceChunk: a bad or unreadable line ends the chunk
  // before it, and is thrown by the next call, so that the requests before
  // it are consumed whatever the chunk limits.
  bool Fill(TraceChunk& chunk) {
    SequenceList& requests = chunk.requests;
    requests.Clear();
    chunk.serving.arrivals_us.clear();
    chunk.serving.output_lengths.clear();
    if (failed_line_) std::rethrow_exception(failed_line_);
    simdjson::padded_string_view json;
    try {
      while (requests.total_tokens() < chunking_.tokens &&
             requests.size() < chunking_.requests && lines_.Next(json)) {
        if (IsBlank(json)) continue;
        ParsePaddedLine(parser_, json, lines_.line_number(), options_, line_);
        if (options_.serving) {
          serving_.Append(line_, lines_.line_number(), options_, chunk.serving);
        }
        AppendTokens(line_, options_, remainder_, FolderFor(options_, folder_),
                     requests);
      }
    } catch (const std::exception& error) {
      // A bad line (InputError) or a failed read (IoError) comes before
      // the line's first token is appended, so the chunk holds whole
      // requests. Running out of memory may come in the middle of one: it
      // is thrown at once.
      const bool line_error = dynamic_cast<const InputError*>(&error) ||
                              dynamic_cast<const IoError*>(&error);
      if (!line_error || requests.empty()) throw;
      failed_line_ = std::current_exception();
    }
    return !requests.empty();
  }

 private:
  PaddedLineReader lines_;
  TraceOptions options_;
  TraceChunking chunking_;
  Remainder remainder_;
  ondemand::parser parser_;
  TraceLine line_;                  // reused: its vector keeps its capacity
  std::exception_ptr failed_line_;  // to throw once the chunk is consumed
  NamespaceFolder folder_;          // the trace's, with a namespace field
  ServingLines serving_;            // with TraceOptions::serving
};

// A reader thread filling kTraceChunksInFlight chunks in turn, and the
// consumer taking them in order (one producer, one consumer, a ring of
// chunks guarded by one mutex: a hand-off per chunk, not per request).
class ChunkPipeline {
 public:
  explicit ChunkPipeline(ChunkReader& reader) : reader_(reader) {}
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // Starts the reader thread; throws std::system_error if it cannot.
  void Start() {
    thread_ = std::thread([this] { Produce(); });
  }

  // Stops the reader at its next chunk and waits for it.
  ~ChunkPipeline() {
    {
      const std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // Calls consume(chunk) for every chunk in order, then rethrows the
  // reader's error if it had one. Returns the reader's seconds.
  double Consume(const std::function<void(const TraceChunk& chunk)>& consume) {
    for (;;) {
      std::size_t slot;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return full_ > 0 || finished_; });
        if (full_ == 0) break;
        slot = first_;
      }
      consume(chunks_[slot]);
      {
        const std::lock_guard lock(mutex_);
        first_ = (first_ + 1) % kTraceChunksInFlight;
        --full_;
      }
      changed_.notify_all();
    }
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return read_seconds_;
  }

 private:
  void Produce() {
    for (;;) {
      std::size_t slot;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(
            lock, [this] { return full_ < kTraceChunksInFlight || stopped_; });
        if (stopped_) return;
        slot = (first_ + full_) % kTraceChunksInFlight;
      }
      bool more = false;
      try {
        const auto start = std::chrono::steady_clock::now();
        more = reader_.Fill(chunks_[slot]);
        read_seconds_ += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
      } catch (...) {
        error_ = std::current_exception();
      }
      {
        const std::lock_guard lock(mutex_);
        if (more) {
          ++full_;
        } else {
          finished_ = true;
        }
      }
      changed_.notify_all();
      if (!more) return;
    }
  }

  ChunkReader& reader_;
  std::array<TraceChunk, kTraceChunksInFlight> chunks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t first_ = 0;  // the oldest full chunk
  std::size_t full_ = 0;   // full chunks, from first_ on
  bool finished_ = false;  // the reader has ended: end of trace or error_
  bool stopped_ = false;   // the consumer has ended: the reader must too
  // Written by the reader thread only, read after it is joined.
  std::exception_ptr error_;
  double read_seconds_ = 0;
  std::thread thread_;
};

}  // namespace

void AppendTraceLine(std::string_view line, std::size_t line_number,
                     const TraceOptions& options, SequenceList& out,
                     NamespaceFolder* folder, TraceServing* serving) {
  CheckOptions(options);
  if (!options.namespace_field.empty() && folder == nullptr) {
    throw std::invalid_argument(
        "a trace line with a namespace field needs the trace's folder");
  }
  if (options.serving && serving == nullptr) {
    throw std::invalid_argument(
        "a trace line read for serving needs somewhere to put its arrival");
  }
  ondemand::parser parser;
  TraceLine parsed;
  const simdjson::padded_string padded(line);
  ParsePaddedLine(parser, padded, line_number, options, parsed);
  if (options.serving) {
    ServingLines(serving).Append(parsed, line_number, options, *serving);
  }
  AppendTokens(parsed, options, Remainder(options.vocabulary),
               options.namespace_field.empty() ? nullptr : folder, out);
}

SequenceList ReadMooncakeTrace(const std::string& path,
                               const TraceOptions& options,
                               TraceServing* serving) {
  CheckOptions(options);
  TraceServing ignored;
  TraceServing& serving_out = serving == nullptr ? ignored : *serving;
  serving_out = {};
  ServingLines serving_lines;
  PaddedLineReader reader(path);
  // Parse every line first, so that the token storage (hundreds of MB in
  // token mode) is allocated once at its final size, not grown by copying.
  ondemand::parser parser;
  std::vector<TraceLine> lines;
  std::uint64_t tokens = 0;
  simdjson::padded_string_view json;
  while (reader.Next(json)) {
    if (IsBlank(json)) continue;
    ParsePaddedLine(parser, json, reader.line_number(), options,
                    lines.emplace_back());
    if (options.serving) {
      serving_lines.Append(lines.back(), reader.line_number(), options,
                           serving_out);
    }
    tokens += TokenCount(lines.back(), options);
  }
  SequenceList trace;
  trace.Reserve(lines.size(), tokens);
  const Remainder remainder(options.vocabulary);
  NamespaceFolder folder;
  for (const TraceLine& line : lines) {
    AppendTokens(line, options, remainder, FolderFor(options, folder), trace);
  }
  return trace;
}

double ForEachTraceChunk(
    const std::string& path, const TraceOptions& options,
    const std::function<void(const SequenceList& chunk)>& consume,
    const TraceChunking& chunking) {
  return ForEachServeTraceChunk(
      path, options,
      [&consume](const TraceChunk& chunk) { consume(chunk.requests); },
      chunking);
}

double ForEachServeTraceChunk(
    const std::string& path, const TraceOptions& options,
    const std::function<void(const TraceChunk& chunk)>& consume,
    const TraceChunking& chunking) {
  CheckOptions(options);
  if (chunking.tokens == 0 || chunking.requests == 0) {
    throw std::invalid_argument("a trace chunk must hold at least 1 request");
  }
  ChunkReader reader(path, options, chunking);
  if (chunking.background) {
    ChunkPipeline pipeline(reader);
    bool started = true;
    try {
      pipeline.Start();
    } catch (const std::system_error&) {
      started = false;  // no thread to spare: read on this one, below
    }
    if (started) return pipeline.Consume(consume);
  }
  double read_seconds = 0;
  TraceChunk chunk;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    const bool more = reader.Fill(chunk);
    read_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!more) return read_seconds;
    consume(chunk);
  }
}

}  // namespace kvprefix
