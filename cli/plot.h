// Drawing an LRU curve (or a router table) with matplotlib: the CLI hands
// the data to plot_curve.py (plot_routers.py) (beside this file; installed
// in share/kvprefix/), which
// returns the image; WritePlotWithOutput then writes it together with the
// command's output, so that a failure of either leaves neither written.
#ifndef KVPREFIX_CLI_PLOT_H_
#define KVPREFIX_CLI_PLOT_H_

#include <functional>
#include <string>
#include <string_view>

namespace kvprefix::cli {

// "" if `path` names a file DrawCurve can draw (it ends in .png or .svg),
// else the problem, e.g. "expected a .png or .svg file". O(path length).
std::string PlotPathProblem(const std::string& path);

// The image of the curve `csv` for `path`, a .png or .svg file (whose
// suffix picks the format; nothing is written to it), titled `title`,
// its capacity axis labeled `capacity_label` (what a node is), its line
// `line_label` (how the curve was computed): hit ratio
// against capacity on a log scale, with a second axis in GiB when
// capacity_bytes is given. `csv` has the header capacity,capacity_bytes,
// matched_tokens,request_tokens,hit_ratio[,mark,target_hit_ratio]; a row's
// mark is "line" (a point of the line drawn), "capacity" (a capacity asked
// for: a marker), "target" (a target_hit_ratio answer: a marker and its
// label; an empty capacity when unreachable) or "point" (not drawn);
// without the mark column every row is on the line. capacity_bytes may be
// empty. Throws IoError naming the problem (an unknown suffix, python3 or
// matplotlib missing, the script failing). Takes a second or two (Python
// starts).
std::string DrawCurve(const std::string& path, std::string_view csv,
                      std::string_view title, std::string_view capacity_label,
                      std::string_view line_label);

// The chart of a router table (cli/router_table.h) for `path` (.png or
// .svg), titled `title`, drawn by plot_routers.py (beside plot_curve.py):
// two panels against the worker count N on a log-2 axis, one line per
// router: the hit ratio, and imbalance_requests (SPEC §11.8). `csv` is the
// table's CSV (header router,workers,...,hit_ratio,imbalance_requests,...;
// rows in any order). Throws IoError as DrawCurve does. Takes a second or
// two.
std::string DrawRouterTable(const std::string& path, std::string_view csv,
                            std::string_view title);

// Writes `image` to `path` and runs `write_output` (which writes the
// command's other output, e.g. with WriteFileAtomically, and throws on
// failure) so that a failure of either leaves neither file new: `image` is
// first written to a temporary file beside `path` (symbolic links
// followed), then `write_output` runs, then the temporary file is renamed
// onto `path`, keeping the permissions of a file it replaces. On any
// failure the temporary file is removed and the exception propagates
// (IoError for the plot: "--plot <path>: ..."). A `path` that exists but is
// not a regular file is refused before anything is written. The one window
// left is a failing rename(2) after `write_output` succeeded, within one
// folder. O(image bytes).
void WritePlotWithOutput(const std::string& path, std::string_view image,
                         const std::function<void()>& write_output);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_PLOT_H_
