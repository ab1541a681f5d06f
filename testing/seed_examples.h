// Test helper: the seed problem's worked examples (docs/seed/*.txt), as
// SPEC §4 input documents and the exact expected output lines.
#ifndef KVPREFIX_TESTING_SEED_EXAMPLES_H_
#define KVPREFIX_TESTING_SEED_EXAMPLES_H_

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kvprefix::test {

struct SeedExample {
  std::string input_json;   // {"cached_sequences":...,"requests":...}
  std::string output_line;  // the seed's Output line plus "\n"
};

// Reads every "Input: cached_sequences = A, requests = B" line and the
// "Output: ..." line after it from the seed files in `seed_dir`; empty if
// the folder is absent.
inline std::vector<SeedExample> LoadSeedExamples(const std::string& seed_dir) {
  std::vector<SeedExample> examples;
  if (!std::filesystem::is_directory(seed_dir)) return examples;
  for (const auto& entry : std::filesystem::directory_iterator(seed_dir)) {
    std::ifstream file(entry.path());
    const std::string kInput = "Input: cached_sequences = ";
    const std::string kSeparator = ", requests = ";
    const std::string kOutput = "Output: ";
    for (std::string line; std::getline(file, line);) {
      if (line.rfind(kInput, 0) == 0) {
        const std::size_t split = line.find(kSeparator);
        examples.push_back(
            {"{\"cached_sequences\":" +
                 line.substr(kInput.size(), split - kInput.size()) +
                 ",\"requests\":" + line.substr(split + kSeparator.size()) +
                 "}",
             ""});
      } else if (line.rfind(kOutput, 0) == 0 && !examples.empty()) {
        examples.back().output_line = line.substr(kOutput.size()) + "\n";
      }
    }
  }
  return examples;
}

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_SEED_EXAMPLES_H_
