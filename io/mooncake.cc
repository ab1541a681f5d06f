// Reading Mooncake traces (SPEC §7): one simdjson On Demand parse per line.
#include "io/mooncake.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <vector>

#include "io/json_diagnostics.h"
#include "io/padded_file.h"

namespace kvprefix {
namespace {

using json_diagnostics::Context;
using json_diagnostics::JsonPath;
namespace ondemand = simdjson::ondemand;

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// The members of one trace line that kvprefix reads.
struct TraceLine {
  std::int64_t input_length = -1;  // -1: not seen
  std::vector<std::int64_t> hash_ids;
  bool has_hash_ids = false;
};

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

void ReadLine(ondemand::parser& parser, simdjson::padded_string_view json,
              std::size_t line_number, std::int64_t max_id, TraceLine& line) {
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

// Appends the tokens of a line ParsePaddedLine has checked.
void AppendTokens(const TraceLine& line, const TraceOptions& options,
                  SequenceList& out) {
  const std::int64_t last_block_tokens = LastBlockTokens(line, 0);
  const std::size_t blocks = line.hash_ids.size();
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto id = static_cast<std::uint64_t>(line.hash_ids[b]);
    if (options.mode == TraceMode::kBlock) {
      out.PushToken(static_cast<Token>(id));
      continue;
    }
    const std::uint64_t count =
        b + 1 < blocks ? kMooncakeBlockTokens : last_block_tokens;
    for (std::uint64_t j = 0; j < count; ++j) {
      out.PushToken(static_cast<Token>(
          SplitMix64(id * kMooncakeBlockTokens + j) % options.vocabulary));
    }
  }
  out.CloseSequence();
}

void CheckOptions(const TraceOptions& options) {
  if (options.vocabulary == 0 || options.vocabulary > (1U << 31)) {
    throw std::invalid_argument(fmt::format(
        "vocabulary size must be 1 to 2147483648, not {}", options.vocabulary));
  }
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
  try {
    ReadLine(parser, json, line_number, MaxHashId(options), line);
  } catch (const InputError&) {
    json_diagnostics::RethrowWithUtf8First(json, LinePrefix(line_number));
  }
  LastBlockTokens(line, line_number);
}

// Tokens AppendTokens will append for a checked line.
std::uint64_t TokenCount(const TraceLine& line, const TraceOptions& options) {
  return options.mode == TraceMode::kBlock
             ? line.hash_ids.size()
             : static_cast<std::uint64_t>(line.input_length);
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

void AppendTraceLine(std::string_view line, std::size_t line_number,
                     const TraceOptions& options, SequenceList& out) {
  CheckOptions(options);
  ondemand::parser parser;
  TraceLine parsed;
  const simdjson::padded_string padded(line);
  ParsePaddedLine(parser, padded, line_number, options, parsed);
  AppendTokens(parsed, options, out);
}

SequenceList ReadMooncakeTrace(const std::string& path,
                               const TraceOptions& options) {
  CheckOptions(options);
  const std::string text = ReadPaddedFile(path);
  // Parse every line first, so that the token storage (hundreds of MB in
  // token mode) is allocated once at its final size, not grown by copying.
  ondemand::parser parser;
  std::vector<TraceLine> lines;
  std::uint64_t tokens = 0;
  std::size_t line_number = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    const std::string_view line(text.data() + begin, end - begin);
    if (!IsBlank(line)) {
      // The rest of the file and its padding follow the line: it is padded.
      const simdjson::padded_string_view padded(line.data(), line.size(),
                                                text.capacity() - begin);
      ParsePaddedLine(parser, padded, line_number, options,
                      lines.emplace_back());
      tokens += TokenCount(lines.back(), options);
    }
    begin = end + 1;
  }
  SequenceList trace;
  trace.Reserve(lines.size(), tokens);
  for (const TraceLine& line : lines) AppendTokens(line, options, trace);
  return trace;
}

}  // namespace kvprefix
