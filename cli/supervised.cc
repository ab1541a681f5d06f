// Running a command that runs a plugin in a child process: see
// supervised.h.
#include "cli/supervised.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "cli/option_checks.h"
#include "cli/run.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "plugin/plugin_engine.h"
#include "verify/isolation.h"
#include "verify/run.h"

namespace kvprefix::cli {
namespace {

// The outputs a supervised child keeps for its parent, encoded as they
// come: per output, its path's and its contents' sizes (8 bytes each),
// then the path and the contents. nullptr outside a child.
std::string* kept_outputs = nullptr;

void AppendSize(std::uint64_t size, std::string& out) {
  out.append(reinterpret_cast<const char*>(&size), sizeof(size));
}

std::uint64_t TakeSize(std::string_view& bytes) {
  std::uint64_t size;
  std::memcpy(&size, bytes.data(), sizeof(size));
  bytes.remove_prefix(sizeof(size));
  return size;
}

std::string_view TakeBytes(std::string_view& bytes, std::uint64_t size) {
  const std::string_view taken = bytes.substr(0, size);
  bytes.remove_prefix(size);
  return taken;
}

// The child's answer: 'O' and the outputs, or 'F', the exit status (one
// byte) and the failure's message.
std::string RunChild(const std::function<void()>& work) {
  std::string outputs = "O";
  kept_outputs = &outputs;
  try {
    work();
  } catch (...) {
    kept_outputs = nullptr;
    const CommandFailure failure = CurrentFailure();
    return "F" + std::string(1, static_cast<char>(failure.status())) +
           failure.what();
  }
  kept_outputs = nullptr;
  return outputs;
}

}  // namespace

void AddPluginTimeoutOption(CLI::App& command, double& seconds) {
  seconds = kDefaultPluginTimeout;
  command
      .add_option("--timeout", seconds,
                  "With --engine plugin:PATH: seconds any one call of the "
                  "plugin (loading it, create, insert, match, ...) may take; "
                  "past it the run stops with exit status 1, naming the "
                  "call, and writes nothing")
      ->capture_default_str()
      ->check(FiniteNumberIn(verify::kMinTimeout, verify::kMaxSeconds));
}

void RunSupervised(std::string_view engine, double timeout_seconds,
                   const std::function<void()>& work) {
  if (!IsPluginName(engine)) {
    work();
    return;
  }
  const auto timeout = std::chrono::milliseconds(
      std::max<std::int64_t>(1, std::llround(timeout_seconds * 1000)));
  const verify::ChildResult result = verify::RunInChild(
      1, timeout, [&](verify::ChildProgress&) { return RunChild(work); });
  if (result.end != verify::ChildResult::End::kFinished) {
    throw CommandFailure(1, verify::DescribeChildEnd(
                                result, timeout,
                                fmt::format("the process running {}",
                                            EscapeForMessage(engine, 1024))));
  }
  std::string_view bytes = result.payload;
  if (bytes.substr(0, 1) == "F") {
    throw CommandFailure(static_cast<unsigned char>(bytes[1]),
                         std::string(bytes.substr(2)));
  }
  bytes.remove_prefix(1);
  while (!bytes.empty()) {
    const std::uint64_t path_size = TakeSize(bytes);
    const std::uint64_t contents_size = TakeSize(bytes);
    const std::string path(TakeBytes(bytes, path_size));
    WriteFileAtomically(path, TakeBytes(bytes, contents_size));
  }
}

void WriteOutput(const std::string& path,
                 std::span<const std::string_view> pieces) {
  if (kept_outputs == nullptr) {
    WriteFileAtomically(path, pieces);
    return;
  }
  std::uint64_t size = 0;
  for (const std::string_view piece : pieces) size += piece.size();
  AppendSize(path.size(), *kept_outputs);
  AppendSize(size, *kept_outputs);
  *kept_outputs += path;
  for (const std::string_view piece : pieces) *kept_outputs += piece;
}

void WriteOutput(const std::string& path, std::string_view contents) {
  WriteOutput(path, std::span<const std::string_view>(&contents, 1));
}

}  // namespace kvprefix::cli
