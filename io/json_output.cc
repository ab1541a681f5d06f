// Writing JSON (SPEC §4 and §5) with std::to_chars into one std::string, and
// replacing files atomically.
#include "io/json_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace kvprefix {
namespace {

// Longest decimal form of a token: "-2147483648" plus a comma.
constexpr std::size_t kMaxTokenChars = 12;
// Longest decimal form of a std::uint64_t.
constexpr std::size_t kMaxUint64Chars = 20;

void AppendUint(std::uint64_t value, std::string& out) {
  char buffer[kMaxUint64Chars];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

// Appends [t0,t1,...]: writes into spare room, then trims, so that a long
// sequence costs one resize instead of one append per token.
void AppendTokens(TokenSpan tokens, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + 2 + tokens.size() * kMaxTokenChars);
  char* cursor = out.data() + start;
  char* const limit = out.data() + out.size();
  *cursor++ = '[';
  for (const Token token : tokens) {
    cursor = std::to_chars(cursor, limit, token).ptr;
    *cursor++ = ',';
  }
  if (!tokens.empty()) --cursor;  // the last comma
  *cursor++ = ']';
  out.resize(static_cast<std::size_t>(cursor - out.data()));
}

void AppendSequences(const SequenceList& sequences, std::string& out) {
  out += '[';
  for (const TokenSpan sequence : sequences) {
    AppendTokens(sequence, out);
    out += ',';
  }
  if (!sequences.empty()) out.pop_back();
  out += ']';
}

[[noreturn]] void ThrowErrno(const std::string& path, const char* action) {
  throw IoError(path + ": cannot " + action + ": " + std::strerror(errno));
}

// Writes all of `contents` to `fd`, retrying short writes.
bool WriteAll(int fd, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t written = write(fd, contents.data(), contents.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

// The permissions a new file gets from open(..., 0666): mkstemp uses 0600.
mode_t NewFileMode() {
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void AppendMatchJson(TokenSpan request, const Match& match, std::string& out) {
  assert(match.matched_length <= request.size());
  out += "{\"matched_length\":";
  AppendUint(match.matched_length, out);
  out += ",\"cache_node\":";
  AppendUint(match.cache_node, out);
  out += ",\"uncached_suffix\":";
  AppendTokens(request.subspan(match.matched_length), out);
  out += '}';
}

void AppendMatchesJson(const SequenceList& requests,
                       std::span<const Match> matches, std::string& out) {
  assert(matches.size() == requests.size());
  std::size_t suffix_tokens = 0;
  for (std::size_t i = 0; i < matches.size(); ++i) {
    suffix_tokens += requests[i].size() - matches[i].matched_length;
  }
  // ~80 bytes of members per match plus ~8 per suffix token: one allocation.
  out.reserve(out.size() + 16 + 80 * matches.size() + 8 * suffix_tokens);
  out += "{\"matches\":[";
  for (std::size_t i = 0; i < matches.size(); ++i) {
    if (i != 0) out += ',';
    AppendMatchJson(requests[i], matches[i], out);
  }
  out += "]}\n";
}

void AppendBatchInputJson(const BatchInput& input, std::string& out) {
  out.reserve(out.size() + 48 +
              8 * (input.cached_sequences.total_tokens() +
                   input.requests.total_tokens()) +
              3 * (input.cached_sequences.size() + input.requests.size()));
  out += "{\"cached_sequences\":";
  AppendSequences(input.cached_sequences, out);
  out += ",\"requests\":";
  AppendSequences(input.requests, out);
  out += "}\n";
}

void WriteFileAtomically(const std::string& path, std::string_view contents) {
  if (path == "-") {
    if (std::fflush(stdout) != 0 || !WriteAll(STDOUT_FILENO, contents)) {
      ThrowErrno("<stdout>", "write");
    }
    return;
  }
  // Devices and pipes (-o /dev/null) cannot be replaced: write in place.
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) ThrowErrno(path, "open");
    const bool ok = WriteAll(fd, contents);
    const int error = errno;
    close(fd);
    errno = error;
    if (!ok) ThrowErrno(path, "write");
    return;
  }
  // The temporary file lives beside the target so that rename(2) stays on
  // one file system and therefore replaces the target atomically.
  const std::filesystem::path target(path);
  std::string temporary =
      (target.parent_path() / ("." + target.filename().string() + ".XXXXXX"))
          .string();
  const int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) ThrowErrno(path, "create a temporary file for");
  bool ok = fchmod(fd, NewFileMode()) == 0 && WriteAll(fd, contents) &&
            fsync(fd) == 0;
  int error = ok ? 0 : errno;
  if (close(fd) != 0 && ok) ok = false, error = errno;
  if (ok && rename(temporary.c_str(), path.c_str()) != 0) {
    ok = false, error = errno;
  }
  if (!ok) {
    unlink(temporary.c_str());
    errno = error;
    ThrowErrno(path, "write");
  }
}

}  // namespace kvprefix
