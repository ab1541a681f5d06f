// `kvprefix convert mooncake`: turns a Mooncake trace into a SPEC §4 input,
// so that the batch job can run on real data.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/progress.h"
#include "io/json_input.h"
#include "io/json_output.h"

namespace kvprefix::cli {
namespace {

struct ConvertOptions {
  TraceArguments trace;
  std::string cached_fraction;  // checked by DecimalFractionFrom0To1
  std::string output = "-";
};

void RunConvert(const ConvertOptions& options) {
  Progress progress;
  const SequenceList trace = ReadTrace(options.trace);
  progress.Note(fmt::format("parsed {} requests", trace.size()));
  // floor(F * n) on the digits as typed (option_checks.h): 0.29 of 100
  // requests is 29, as the user means, not 28 as 0.29 * 100.0 would give.
  const std::uint64_t cached =
      FloorTimes(*ParseDecimalFraction(options.cached_fraction), trace.size());
  std::string json;
  WhileDoing("converting", [&] {
    BatchInput input;
    for (std::size_t i = 0; i < trace.size(); ++i) {
      (i < cached ? input.cached_sequences : input.requests).Append(trace[i]);
    }
    AppendBatchInputJson(input, json);
  });
  WriteFileAtomically(options.output, json);
}

}  // namespace

void RegisterConvertCommand(CLI::App& app) {
  CLI::App* convert =
      app.add_subcommand("convert", "Convert other formats to SPEC §4 input");
  convert->require_subcommand(1);
  auto options = std::make_shared<ConvertOptions>();
  CLI::App* command = convert->add_subcommand(
      "mooncake",
      "Turn a Mooncake trace into a SPEC §4 input: the first "
      "floor(F * requests) requests become cached_sequences, the rest "
      "requests, computed exactly on F's decimal digits (0.29 of 100 "
      "requests is 29).");
  command
      ->add_option("-f,--cached-fraction", options->cached_fraction,
                   "Fraction F of the requests that become cached sequences: "
                   "a decimal from 0 to 1 (0, 0.25, .5, 1; no exponent)")
      ->required()
      ->check(DecimalFractionFrom0To1())
      ->type_name("DECIMAL in [0 - 1]");
  AddTraceArguments(*command, options->trace, /*reads_documents=*/false);
  AddOutputOption(*command, "-o,--output", options->output,
                  "Output file, replaced atomically; - is standard output");
  command->callback([options] { RunConvert(*options); });
}

}  // namespace kvprefix::cli
