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

// Draws the curve `csv` (header capacity,capacity_bytes,matched_tokens,
// request_tokens,hit_ratio, one row per capacity; capacity_bytes may be
// empty) to `path`, a .png or .svg file, titled `title`: hit ratio against
// capacity on a log scale, with a second axis in GiB when capacity_bytes is
// given. Throws IoError naming the problem (an unknown suffix, python3 or
// matplotlib missing, the script failing, the file not writable); the file
// is then untouched. Takes a second or two (Python starts).
void DrawCurve(const std::string& path, std::string_view csv,
               std::string_view title);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_PLOT_H_
