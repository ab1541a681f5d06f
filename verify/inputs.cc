// Inputs for `kvprefix verify`: see inputs.h.
#include "verify/inputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "checking/random_input.h"
#include "io/case_file.h"
#include "io/input_error.h"
#include "io/json_input.h"
#include "io/mooncake.h"

namespace kvprefix::verify {
namespace {

// Adds the file name to an InputError's location (ParseBatchInput does not
// know the file).
// Running out of memory becomes "out of memory while reading <path>".
template <typename Read>
auto WithFileName(const std::string& path, Read read) {
  try {
    return WhileDoing("reading " + path, read);
  } catch (const InputError& error) {
    throw InputError(path + ": " + error.location(), error.problem());
  }
}

SequenceList Slice(const SequenceList& list, std::size_t begin,
                   std::size_t end) {
  SequenceList slice;
  for (std::size_t i = begin; i < end; ++i) slice.Append(list[i]);
  return slice;
}

}  // namespace

std::vector<NamedInput> ReadInputFiles(const std::vector<std::string>& paths) {
  std::vector<NamedInput> inputs;
  for (const std::string& path : paths) {
    inputs.push_back(NamedInput{
        "file " + path,
        WithFileName(path, [&path] { return ReadBatchInputFile(path); }),
        std::nullopt});
  }
  return inputs;
}

std::vector<NamedInput> ReadCaseInputs(const std::string& path) {
  std::vector<CaseFile> cases = WhileDoing("reading " + path, [&] {
    return std::filesystem::is_directory(path)
               ? ReadCaseFolder(path)
               : std::vector<CaseFile>{ReadCaseFile(path)};
  });
  if (cases.empty()) {
    // Falling back to generated inputs would check something else than asked.
    throw std::invalid_argument("no case files (*.json) in " + path);
  }
  std::vector<NamedInput> inputs;
  for (CaseFile& found : cases) {
    inputs.push_back(NamedInput{"case " + found.name, std::move(found.input),
                                std::move(found.expected)});
  }
  return inputs;
}

std::vector<NamedInput> TraceWindowInputs(const std::string& path,
                                          std::size_t window) {
  if (window < 2) {
    throw std::invalid_argument("a trace window needs at least 2 requests");
  }
  const SequenceList trace = WithFileName(path, [&path] {
    return ReadMooncakeTrace(path, TraceOptions{.mode = TraceMode::kBlock});
  });
  std::vector<NamedInput> inputs;
  // Written with differences, not begin + window, which wraps around for a
  // window near SIZE_MAX.
  for (std::size_t begin = 0, end = 0; trace.size() - begin >= 2; begin = end) {
    end = begin + std::min(window, trace.size() - begin);
    const std::size_t middle = begin + (end - begin) / 2;
    inputs.push_back(NamedInput{
        fmt::format("trace {} requests {}..{} (block mode; first {} cached)",
                    path, begin + 1, end, middle - begin),
        BatchInput{Slice(trace, begin, middle), Slice(trace, middle, end)},
        std::nullopt});
  }
  return inputs;
}

NamedInput GeneratedInput(std::uint64_t seed, std::uint64_t run, int max_size) {
  const int size =
      static_cast<int>(run % (static_cast<std::uint64_t>(max_size) + 1));
  return NamedInput{
      fmt::format("generated input {} (--seed {}, size {})", run, seed, size),
      checking::RandomBatchInput(seed + run, size), std::nullopt};
}

}  // namespace kvprefix::verify
