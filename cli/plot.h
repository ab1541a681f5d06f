// Drawing an LRU curve with matplotlib: the CLI hands the curve to
// plot_curve.py (beside this file; installed in share/kvprefix/), which
// returns the image, and writes it atomically.
#ifndef KVPREFIX_CLI_PLOT_H_
#define KVPREFIX_CLI_PLOT_H_

#include <string>
#include <string_view>

namespace kvprefix::cli {

// "" if `path` names a file DrawCurve can draw (it ends in .png or .svg),
// else the problem, e.g. "expected a .png or .svg file". O(path length).
std::string PlotPathProblem(const std::string& path);

// Draws the curve `csv` to `path`, a .png or .svg file, titled `title`,
// its capacity axis labeled `capacity_label` (what a node is): hit ratio
// against capacity on a log scale, with a second axis in GiB when
// capacity_bytes is given. `csv` has the header capacity,capacity_bytes,
// matched_tokens,request_tokens,hit_ratio[,mark,target_hit_ratio]; a row's
// mark is "line" (a point of the line drawn), "capacity" (a capacity asked
// for: a marker), "target" (a target_hit_ratio answer: a marker and its
// label; an empty capacity when unreachable) or "point" (not drawn);
// without the mark column every row is on the line. capacity_bytes may be
// empty. Throws IoError naming the problem (an unknown suffix, python3 or
// matplotlib missing, the script failing, the file not writable); the file
// is then untouched. Takes a second or two (Python starts).
void DrawCurve(const std::string& path, std::string_view csv,
               std::string_view title, std::string_view capacity_label);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_PLOT_H_
