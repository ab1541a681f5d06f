#include "cli/router_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cli/parallel.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/serving.h"
#include "cli/supervised.h"
#include "io/input_error.h"
#include "io/json_strings.h"
#include "io/serve_answer.h"

namespace kvprefix::cli {
namespace {

// A row's values as text, in kRouterTableColumns' order (the router's name
// unquoted).
std::vector<std::string> RowValues(const RoutedAnswer& answer, double seconds) {
  const ServeTotals& totals = answer.totals;
  const auto number = [](double value) {
    std::string text;
    AppendJsonDouble(value, text);
    return text;
  };
  const std::array<double, 3> imbalances = RoutedImbalances(answer);
  return {std::string(answer.router),
          fmt::format("{}", answer.per_worker.size()),
          fmt::format("{}", totals.requests),
          fmt::format("{}", totals.request_tokens),
          fmt::format("{}", totals.matched_tokens),
          number(NearestQuotient(totals.matched_tokens, totals.request_tokens)),
          number(imbalances[0]),
          number(imbalances[1]),
          number(imbalances[2]),
          fmt::format("{}", totals.refused),
          fmt::format("{}", totals.waited_for_room),
          fmt::format("{}", totals.evicted_pages),
          fmt::format("{}", totals.peak_pinned),
          fmt::format("{}", totals.peak_running),
          fmt::format("{}", totals.peak_queued),
          number(NearestQuotient(totals.total_wait_us, totals.requests)),
          fmt::format("{}", totals.p50_wait_us),
          fmt::format("{}", totals.p99_wait_us),
          fmt::format("{}", totals.makespan_us),
          fmt::format("{:.3f}", seconds)};
}

std::vector<std::string_view> Columns() {
  std::vector<std::string_view> columns;
  const std::string_view all = kRouterTableColumns;
  for (std::size_t begin = 0;;) {
    const std::size_t end = all.find(',', begin);
    columns.push_back(all.substr(begin, end - begin));
    if (end == std::string_view::npos) return columns;
    begin = end + 1;
  }
}

// `text` as a CSV field (RFC 4180): quoted, with its quotes doubled, when
// it holds a comma, a quote or a line break.
std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(text);
  }
  std::string field = "\"";
  for (const char c : text) {
    if (c == '"') field += '"';
    field += c;
  }
  return field + "\"";
}

// One row as a CSV line and a JSON line. The router's name is a plugin's
// text for a router plugin: a quoted CSV field and an escaped JSON string
// when it needs them.
std::pair<std::string, std::string> RowLines(
    const std::vector<std::string>& values) {
  const std::vector<std::string_view> columns = Columns();
  std::string csv = CsvField(values[0]);
  for (std::size_t i = 1; i < values.size(); ++i) csv += "," + values[i];
  csv += '\n';
  std::string json = fmt::format("{{\"{}\":", columns[0]);
  AppendJsonString(values[0], json);
  for (std::size_t i = 1; i < values.size(); ++i) {
    fmt::format_to(std::back_inserter(json), ",\"{}\":{}", columns[i],
                   values[i]);
  }
  json += "}\n";
  return {std::move(csv), std::move(json)};
}

}  // namespace

void RunRouterTable(const RouterTableRequest& request) {
  Progress progress;
  const std::size_t count = request.rows.size();
  std::vector<std::vector<std::string>> values(count);
  std::atomic<std::size_t> done = 0;
  const std::thread::id progress_thread = std::this_thread::get_id();
  WhileDoing("replaying", [&] {
    ForEachInParallel(count, request.jobs, [&](std::size_t i) {
      const auto start = std::chrono::steady_clock::now();
      const RoutedAnswer answer = RunRoutedReplay(
          request.input, request.rows[i], request.cache, request.unit);
      values[i] =
          RowValues(answer, std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count());
      const std::size_t finished = ++done;
      if (std::this_thread::get_id() == progress_thread) {
        progress.Count("rows replayed", finished);
      }
    });
  });
  const unsigned threads =
      static_cast<unsigned>(std::min<std::size_t>(request.jobs, count));
  progress.Note(fmt::format("{} routed replays of {} requests on {} thread{}",
                            count, request.input.replay.requests.size(),
                            threads, threads == 1 ? "" : "s"));
  std::string csv = std::string(kRouterTableColumns) + "\n";
  std::string jsonl;
  for (const std::vector<std::string>& row : values) {
    auto [csv_line, json_line] = RowLines(row);
    csv += csv_line;
    jsonl += json_line;
  }
  const auto write_output = [&] {
    WriteOutput(request.output, request.format == "csv" ? csv : jsonl);
  };
  if (request.plot.empty()) return write_output();
  WritePlotWithOutput(request.plot,
                      DrawRouterTable(request.plot, csv, request.title),
                      write_output);
}

}  // namespace kvprefix::cli
