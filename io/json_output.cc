// Writing JSON (SPEC §4 and §5) with std::to_chars into one std::string, and
// replacing files atomically.
#include "io/json_output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <charconv>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "io/input_error.h"
#include "io/json_strings.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;

// Longest decimal form of a token: "-2147483648" plus a comma.
constexpr std::size_t kMaxTokenChars = 12;
// Longest decimal form of a std::uint64_t.
constexpr std::size_t kMaxUint64Chars = 20;

void AppendUint(std::uint64_t value, std::string& out) {
  char buffer[kMaxUint64Chars];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

// Appends [t0,t1,...]: formats into a stack buffer and appends it a few
// kilobytes at a time. (Growing `out` first and trimming after would
// zero-fill 12 bytes a token: in `match` on large inputs that memset cost
// more than the formatting.)
void AppendTokens(TokenSpan tokens, std::string& out) {
  char buffer[4096];
  char* cursor = buffer;
  *cursor++ = '[';
  for (const Token token : tokens) {
    if (cursor > buffer + sizeof buffer - kMaxTokenChars) {
      out.append(buffer, cursor);
      cursor = buffer;
    }
    cursor = std::to_chars(cursor, buffer + sizeof buffer, token).ptr;
    *cursor++ = ',';
  }
  if (!tokens.empty()) --cursor;  // the last comma
  *cursor++ = ']';
  out.append(buffer, cursor);
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

[[noreturn]] void ThrowErrno(const std::string& path, std::string_view action) {
  throw ErrnoError(path, action);
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

// Writes `contents` to the existing `path` through its links, in place: for
// devices, pipes and /proc/<pid>/fd links, which rename(2) cannot replace.
// O_APPEND so that `-o /dev/stdout >> log` adds to the log like stdout does.
void WriteInPlace(const std::string& path,
                  std::span<const std::string_view> pieces) {
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) ThrowErrno(path, "open");
  bool ok = true;
  for (const std::string_view piece : pieces) ok = ok && WriteAll(fd, piece);
  const int error = errno;
  close(fd);
  errno = error;
  if (!ok) ThrowErrno(path, "write");
}

// The permissions a new file gets from open(..., 0666): mkstemp uses 0600.
mode_t NewFileMode() {
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

// Whether the folder holding `path` is in /proc (magic links such as
// /proc/self/fd/1 live there).
bool IsInProcFs(const fs::path& path) {
  struct statfs info;
  const fs::path folder = path.has_parent_path() ? path.parent_path() : ".";
  return statfs(folder.c_str(), &info) == 0 && info.f_type == PROC_SUPER_MAGIC;
}

// Where the symbolic link(s) at `path` lead, so that rename(2) replaces the
// file they name and not the link; `path` itself when it is no link. Sets
// `in_proc` when a link is a /proc/<pid>/fd entry (an open file, not a name
// in a folder: -o /dev/stdout). Throws IoError for a loop of links.
fs::path FollowSymlinks(const std::string& path, bool& in_proc) {
  constexpr int kMaxLinks = 40;  // Linux's limit (ELOOP)
  fs::path current(path);
  std::error_code error;
  for (int links = 0; links < kMaxLinks; ++links) {
    if (!fs::is_symlink(fs::symlink_status(current, error))) return current;
    if (IsInProcFs(current)) {
      in_proc = true;
      return current;
    }
    const fs::path target = fs::read_symlink(current, error);
    if (error) return current;
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  errno = ELOOP;
  ThrowErrno(path, "resolve");
}

// "<target>: cannot create a temporary file in <folder>: <strerror(errno)>",
// `folder` "" being the working folder.
[[noreturn]] void ThrowCannotCreateTemporaryFile(const std::string& target,
                                                 const fs::path& folder) {
  const int error = errno;
  const std::string action =
      "create a temporary file in " +
      (folder.empty() ? std::string("the working folder")
                      : EscapeForMessage(folder.string(), 1024));
  errno = error;
  ThrowErrno(target, action);
}

// The temporary file being written beside an output file, for
// RemoveTemporaryFileInFlight, which a signal handler may call: a fixed
// buffer and a std::sig_atomic_t flag, since such a handler may only touch
// these and call async-signal-safe functions (unlink).
char g_temporary_path[PATH_MAX];
volatile std::sig_atomic_t g_has_temporary = 0;

// A temporary file beside the output, removed by the destructor unless
// renamed (a failed write leaves no `.name.XXXXXX` behind), and registered
// for RemoveTemporaryFileInFlight while it exists. One at a time per
// process: the registry has one path buffer, so a mutex serializes writers.
class TemporaryFile {
 public:
  // Creates the file from `pattern` (ending in XXXXXX), a name in `folder`
  // ("" for the working folder); throws IoError naming `target` and the
  // folder on failure.
  TemporaryFile(const std::string& pattern, const fs::path& folder,
                const std::string& target)
      : lock_(mutex_) {
    const auto fail = [&] { ThrowCannotCreateTemporaryFile(target, folder); };
    if (pattern.size() >= sizeof g_temporary_path) {
      errno = ENAMETOOLONG;
      fail();
    }
    const SignalBlock block;
    std::memcpy(g_temporary_path, pattern.c_str(), pattern.size() + 1);
    fd_ = mkostemp(g_temporary_path, O_CLOEXEC);
    if (fd_ < 0) fail();
    g_has_temporary = 1;
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    const SignalBlock block;
    if (fd_ >= 0) close(fd_);
    if (g_has_temporary) unlink(g_temporary_path);
    g_has_temporary = 0;
  }

  int fd() const { return fd_; }

  // Closes the file; false (errno set) on failure.
  bool Close() {
    const int fd = fd_;
    fd_ = -1;
    return close(fd) == 0;
  }

  // Renames the file to `target`; false (errno set) on failure, and when
  // RemoveTemporaryFileInFlight removed it (ENOENT).
  bool RenameTo(const fs::path& target) {
    const SignalBlock block;
    if (!g_has_temporary) {
      errno = ENOENT;
      return false;
    }
    if (rename(g_temporary_path, target.c_str()) != 0) return false;
    g_has_temporary = 0;
    return true;
  }

 private:
  // Holds kSignalsThatEndAWrite back in this thread for a scope, so
  // that a handler calling RemoveTemporaryFileInFlight never sees the path
  // and flag half updated (nor a file created but not yet registered). Only
  // the thread's mask changes, and only for the scope.
  class SignalBlock {
   public:
    SignalBlock() {
      sigset_t set;
      sigemptyset(&set);
      for (const int signal_number : kSignalsThatEndAWrite) {
        sigaddset(&set, signal_number);
      }
      pthread_sigmask(SIG_BLOCK, &set, &previous_);
    }
    ~SignalBlock() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

   private:
    sigset_t previous_;
  };

  static inline std::mutex mutex_;
  std::unique_lock<std::mutex> lock_;
  int fd_ = -1;
};

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
  out.reserve(out.size() + 16 +
              MatchJsonBytesEstimate(matches.size(), suffix_tokens));
  out += "{\"matches\":[";
  for (std::size_t i = 0; i < matches.size(); ++i) {
    if (i != 0) out += ',';
    AppendMatchJson(requests[i], matches[i], out);
  }
  out += "]}\n";
}

namespace {

// ,"name":["a","b",...] when `namespaces` is not empty (SPEC §8.1: absent
// puts every sequence in ""), so that a document without namespaces reads
// as before and every document reads back the same.
void AppendNamespacesMember(std::string_view name,
                            std::span<const std::string> namespaces,
                            std::string& out) {
  if (namespaces.empty()) return;
  out += ",\"";
  out += name;
  out += "\":[";
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    if (i != 0) out += ',';
    AppendJsonString(namespaces[i], out);
  }
  out += ']';
}

}  // namespace

void AppendBatchInputJson(const BatchInput& input, std::string& out) {
  out.reserve(out.size() + 48 +
              8 * (input.cached_sequences.total_tokens() +
                   input.requests.total_tokens()) +
              3 * (input.cached_sequences.size() + input.requests.size()));
  out += "{\"cached_sequences\":";
  AppendSequences(input.cached_sequences, out);
  out += ",\"requests\":";
  AppendSequences(input.requests, out);
  AppendNamespacesMember("cached_namespaces", input.cached_namespaces, out);
  AppendNamespacesMember("namespaces", input.namespaces, out);
  out += "}\n";
}

void AppendReplayDocumentJson(const ReplayInput& input, std::string& out) {
  out.reserve(out.size() + 96 + 8 * input.requests.total_tokens() +
              3 * input.requests.size());
  out += "{\"requests\":";
  AppendSequences(input.requests, out);
  if (input.options.bounded()) {
    out += ",\"capacity\":";
    AppendUint(input.options.capacity, out);
  }
  out += ",\"policy\":\"";
  out += EvictionPolicyName(input.options.policy);
  out += "\",\"page_size\":";
  AppendUint(input.options.page_size, out);
  // SPEC §9.4's members only where they differ from the defaults, so that a
  // §8 document reads as before and every document reads back the same.
  const CacheOptions& options = input.options;
  const auto append_member = [&](std::string_view name,
                                 std::string_view value) {
    out += ",\"";
    out += name;
    out += "\":\"";
    out += value;
    out += '"';
  };
  if (options.model != CacheModel::kSpec) {
    append_member("model", NameOf(kCacheModels, options.model));
  }
  if (options.match_limit != DefaultMatchLimit(options.model)) {
    append_member("match_limit", NameOf(kMatchLimits, options.match_limit));
  }
  if (options.model == CacheModel::kSglang &&
      options.trigger != EvictionTrigger::kAfterInsert) {
    append_member("trigger", NameOf(kEvictionTriggers, options.trigger));
  }
  AppendNamespacesMember("namespaces", input.namespaces, out);
  out += "}\n";
}

void AppendServeDocumentJson(const ServeInput& input, std::string& out) {
  AppendReplayDocumentJson(input.replay, out);
  out.resize(out.size() - 2);  // "}\n"
  const auto append_numbers = [&](std::string_view name,
                                  const std::vector<std::uint64_t>& values) {
    if (values.empty()) return;
    out += ",\"";
    out += name;
    out += "\":[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out += ',';
      AppendUint(values[i], out);
    }
    out += ']';
  };
  append_numbers("arrivals_us", input.arrivals_us);
  append_numbers("output_lengths", input.output_lengths);
  const auto append_number = [&](std::string_view name, std::uint64_t value,
                                 std::uint64_t default_value) {
    if (value == default_value) return;
    out += ",\"";
    out += name;
    out += "\":";
    AppendUint(value, out);
  };
  const ServeOptions& serve = input.serve;
  append_number("max_running", serve.max_running, 1);
  append_number("prefill_us_per_token", serve.prefill_us_per_token, 0);
  append_number("decode_us_per_token", serve.decode_us_per_token, 0);
  append_number("overhead_us", serve.overhead_us, 0);
  if (serve.output != OutputMode::kNone) {
    out += ",\"output\":\"";
    out += NameOf(kOutputModes, serve.output);
    out += '"';
  }
  out += "}\n";
}

void AppendRoutedDocumentJson(const ServeInput& input,
                              const RoutingSpec& routing, std::string& out) {
  if (!routing.router.plugin.empty()) {
    throw std::invalid_argument("a router plugin has no document form");
  }
  AppendServeDocumentJson(input, out);
  out.resize(out.size() - 2);  // "}\n"
  if (routing.workers != 1) {
    out += ",\"workers\":";
    AppendUint(routing.workers, out);
  }
  out += ",\"router\":{\"name\":\"";
  out += NameOf(kRouterPolicies, routing.router.policy);
  out += '"';
  if (routing.router.seed != 0) {
    out += ",\"seed\":";
    AppendUint(routing.router.seed, out);
  }
  for (const auto& [name, value] : routing.router.parameters) {
    const bool quoted = std::holds_alternative<std::string>(value);
    out += ",\"" + name + "\":";
    if (quoted) out += '"';
    out += RouterValueText(value);
    if (quoted) out += '"';
  }
  out += "}}\n";
}

void WriteFileAtomically(const std::string& path, std::string_view contents) {
  WriteFileAtomically(path, std::span<const std::string_view>(&contents, 1));
}

void WriteFileAtomically(const std::string& path,
                         std::span<const std::string_view> pieces) {
  const auto write_all = [&](int fd) {
    for (const std::string_view piece : pieces) {
      if (!WriteAll(fd, piece)) return false;
    }
    return true;
  };
  if (path == "-") {
    if (std::fflush(stdout) != 0 || !write_all(STDOUT_FILENO)) {
      ThrowErrno("<stdout>", "write");
    }
    return;
  }
  if (path.empty()) throw std::invalid_argument("the output path is empty");
  // Devices and pipes (-o /dev/null) cannot be replaced: write in place.
  struct stat info;
  const bool exists = stat(path.c_str(), &info) == 0;
  bool in_proc = false;
  const fs::path target = FollowSymlinks(path, in_proc);
  if (in_proc || (exists && !S_ISREG(info.st_mode))) {
    WriteInPlace(path, pieces);
    return;
  }
  // The temporary file lives beside the target so that rename(2) stays on
  // one file system and therefore replaces the target atomically.
  TemporaryFile temporary(
      (target.parent_path() /
       fmt::format(".{}.XXXXXX", target.filename().string()))
          .string(),
      target.parent_path(), path);
  // A replaced file keeps its permissions; a new one gets the umask's.
  const mode_t mode = exists ? info.st_mode & 07777 : NewFileMode();
  if (fchmod(temporary.fd(), mode) != 0 || !write_all(temporary.fd()) ||
      fsync(temporary.fd()) != 0 || !temporary.Close() ||
      !temporary.RenameTo(target)) {
    ThrowErrno(path, "write");
  }
}

void CheckOutputPath(const std::string& path) {
  if (path == "-") return;
  if (path.empty()) throw std::invalid_argument("the output path is empty");
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    if (!S_ISDIR(info.st_mode)) return;  // a device or pipe: written in place
    errno = EISDIR;  // what WriteInPlace's open(2) fails with
    ThrowErrno(path, "open");
  }
  bool in_proc = false;
  const fs::path target = FollowSymlinks(path, in_proc);
  if (in_proc) return;
  // mkostemp(3) in the folder needs it to exist, be a folder, searchable
  // and writable; access(2) fails with the errno mkostemp would.
  const fs::path folder = target.parent_path();
  const std::string folder_name = folder.empty() ? "." : folder.string();
  if (stat(folder_name.c_str(), &info) != 0) {
    ThrowCannotCreateTemporaryFile(path, folder);
  }
  if (!S_ISDIR(info.st_mode)) {
    errno = ENOTDIR;
    ThrowCannotCreateTemporaryFile(path, folder);
  }
  if (access(folder_name.c_str(), W_OK | X_OK) != 0) {
    ThrowCannotCreateTemporaryFile(path, folder);
  }
}

void RemoveTemporaryFileInFlight() {
  if (g_has_temporary) {
    unlink(g_temporary_path);
    g_has_temporary = 0;
  }
}

}  // namespace kvprefix
