// DrawCurve: see plot.h.
#include "cli/plot.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

#include "io/input_error.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "verify/subprocess.h"

namespace kvprefix::cli {
namespace {

namespace fs = std::filesystem;

// `script` (plot_curve.py, plot_routers.py): installed beside the tool
// (<prefix>/share/kvprefix/), else in the source tree the tool was built
// from.
fs::path PlotScript(std::string_view script) {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed =
        exe.parent_path().parent_path() / "share/kvprefix" / script;
    if (fs::exists(installed, error)) return installed;
  }
  return fs::path(KVPREFIX_SOURCE_DIR "/cli") / script;
}

// The image `script` draws for `path` (.png or .svg) from `csv` on its
// standard input, given `arguments` (shell-quoted already) after --format;
// `what` names the drawing in errors ("the curve"). Throws IoError.
std::string RunPlotScript(std::string_view script, const std::string& path,
                          std::string_view csv, std::string_view arguments,
                          std::string_view what) {
  if (const std::string problem = PlotPathProblem(path); !problem.empty()) {
    throw IoError(
        fmt::format("--plot {}: {}", EscapeForMessage(path, 1024), problem));
  }
  const std::string command = fmt::format(
      "{} {} --format {} {}", verify::ShellQuote(KVPREFIX_PLOT_PYTHON),
      verify::ShellQuote(PlotScript(script).string()),
      fs::path(path).extension().string().substr(1), arguments);
  const verify::SubprocessResult result =
      verify::RunSubprocess(command, csv, {.timeout = std::chrono::minutes(2)});
  if (result.kind != verify::ExitKind::kExited || result.exit_status != 0) {
    std::string reason(result.stderr_data);
    while (!reason.empty() && reason.back() == '\n') reason.pop_back();
    if (const auto line = reason.rfind('\n'); line != std::string::npos) {
      reason = reason.substr(line + 1);  // a traceback's last line
    }
    throw IoError(fmt::format(
        "--plot {}: cannot draw {}: {}", EscapeForMessage(path, 1024), what,
        reason.empty() ? "python3 failed" : EscapeForMessage(reason, 300)));
  }
  return std::string(result.stdout_data);
}

}  // namespace

std::string PlotPathProblem(const std::string& path) {
  const std::string suffix = fs::path(path).extension().string();
  return suffix == ".png" || suffix == ".svg" ? ""
                                              : "expected a .png or .svg file";
}

std::string DrawCurve(const std::string& path, std::string_view csv,
                      std::string_view title, std::string_view capacity_label,
                      std::string_view line_label) {
  return RunPlotScript(
      "plot_curve.py", path, csv,
      fmt::format("--title {} --capacity-label {} --line-label {}",
                  verify::ShellQuote(title), verify::ShellQuote(capacity_label),
                  verify::ShellQuote(line_label)),
      "the curve");
}

std::string DrawRouterTable(const std::string& path, std::string_view csv,
                            std::string_view title) {
  return RunPlotScript("plot_routers.py", path, csv,
                       fmt::format("--title {}", verify::ShellQuote(title)),
                       "the router table");
}

void WritePlotWithOutput(const std::string& path, std::string_view image,
                         const std::function<void()>& write_output) {
  const auto fail = [&](std::string_view problem) {
    throw IoError(
        fmt::format("--plot {}: {}", EscapeForMessage(path, 1024), problem));
  };
  std::error_code error;
  // The file a symbolic link leads to is replaced, as WriteFileAtomically
  // replaces it; a dangling link is replaced itself.
  fs::path target = path;
  if (fs::is_symlink(target, error)) {
    target = fs::weakly_canonical(target, error);
    if (error) target = path;
  }
  const fs::file_status status = fs::status(target, error);
  const bool exists = fs::exists(status);
  if (exists && !fs::is_regular_file(status)) fail("not a regular file");
  // Beside the target, so that the rename stays in one file system; the
  // process id keeps two runs apart.
  const fs::path temporary =
      target.parent_path() /
      fmt::format(".{}.{}.plot", target.filename().string(), getpid());
  try {
    WriteFileAtomically(temporary.string(), image);
  } catch (const IoError& e) {
    fail(e.what());  // names the temporary file and the reason
  }
  const auto remove_temporary = [&] { fs::remove(temporary, error); };
  if (exists) fs::permissions(temporary, status.permissions(), error);
  try {
    write_output();
  } catch (...) {
    remove_temporary();
    throw;
  }
  fs::rename(temporary, target, error);
  if (error) {
    remove_temporary();
    fail(fmt::format("cannot write: {}", error.message()));
  }
}

}  // namespace kvprefix::cli
