// Workload generators: see the header for what each one models.
#include "bench/workloads.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "io/input_error.h"
#include "io/mooncake.h"

namespace kvprefix::bench {
namespace {

using Tokens = std::vector<Token>;

// Random numbers from a fixed seed. Reductions are `rng() % n` rather than
// std::uniform_int_distribution, whose output the standard leaves to the
// library, so that the tokens are the same with every standard library.
class Random {
 public:
  explicit Random(std::uint64_t seed) : rng_(seed) {}

  // Uniform in [low, high).
  std::size_t Between(std::size_t low, std::size_t high) {
    return low + rng_() % (high - low);
  }
  // A vocabulary ID.
  Token VocabularyToken() {
    return static_cast<Token>(rng_() % kDefaultVocabulary);
  }
  // Appends `count` random vocabulary IDs to `out`.
  void AppendTokens(std::size_t count, Tokens& out) {
    for (std::size_t i = 0; i < count; ++i) out.push_back(VocabularyToken());
  }
  Tokens MakeTokens(std::size_t count) {
    Tokens out;
    AppendTokens(count, out);
    return out;
  }
  // Fisher-Yates, written out so the order does not depend on std::shuffle.
  template <typename T>
  void Shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[Between(0, i)]);
    }
  }
  std::uint64_t Bits() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

void Append(const Tokens& tokens, SequenceList& out) { out.Append(tokens); }

// Each sequence of `list` as its own vector, for editing.
std::vector<Tokens> Copies(const SequenceList& list) {
  std::vector<Tokens> copies;
  copies.reserve(list.size());
  for (TokenSpan sequence : list)
    copies.emplace_back(sequence.begin(), sequence.end());
  return copies;
}

}  // namespace

BatchInput SystemPromptWorkload(std::size_t sequences) {
  Random random(0x5157e3);
  const Tokens prompt = random.MakeTokens(4096);
  BatchInput workload;
  for (SequenceList* list : {&workload.cached_sequences, &workload.requests}) {
    for (std::size_t i = 0; i < sequences; ++i) {
      Tokens sequence = prompt;
      random.AppendTokens(random.Between(64, 192), sequence);
      Append(sequence, *list);
    }
  }
  return workload;
}

BatchInput MultiTurnWorkload(std::size_t conversations) {
  Random random(0xc4a7);
  const Tokens system_prompt = random.MakeTokens(256);
  BatchInput workload;
  for (std::size_t c = 0; c < conversations; ++c) {
    Tokens history = system_prompt;
    const std::size_t turns = random.Between(2, 9);
    for (std::size_t turn = 1; turn < turns; ++turn) {
      random.AppendTokens(random.Between(16, 128), history);  // user
      random.AppendTokens(random.Between(32, 384), history);  // assistant
      Append(history, workload.cached_sequences);
    }
    random.AppendTokens(random.Between(16, 128), history);  // next user turn
    Append(history, workload.requests);
  }
  return workload;
}

BatchInput FewShotWorkload(std::size_t sequences) {
  constexpr std::size_t kPool = 64;
  constexpr std::size_t kShots = 5;
  Random random(0xf3e5);
  const Tokens instruction = random.MakeTokens(128);
  std::vector<Tokens> pool;
  for (std::size_t i = 0; i < kPool; ++i) {
    pool.push_back(random.MakeTokens(random.Between(96, 224)));
  }
  std::vector<std::size_t> order(kPool);
  BatchInput workload;
  for (SequenceList* list : {&workload.cached_sequences, &workload.requests}) {
    for (std::size_t i = 0; i < sequences; ++i) {
      std::iota(order.begin(), order.end(), 0);
      random.Shuffle(order);
      Tokens prompt = instruction;
      for (std::size_t shot = 0; shot < kShots; ++shot) {
        prompt.insert(prompt.end(), pool[order[shot]].begin(),
                      pool[order[shot]].end());
      }
      random.AppendTokens(random.Between(32, 64), prompt);  // the question
      Append(prompt, *list);
    }
  }
  return workload;
}

BatchInput TreeOfThoughtWorkload(std::size_t leaves) {
  constexpr std::size_t kBranching = 4;
  std::size_t depth = 1;
  for (std::size_t width = kBranching; width < leaves; width *= kBranching) {
    ++depth;
  }
  // The step at a tree node depends only on the node (numbered as in a heap:
  // children of n are n * 4 + 1 .. n * 4 + 4), so paths through the same
  // node share that step's tokens exactly.
  auto append_step = [](std::uint64_t node, Tokens& out) {
    Random step(SplitMix64(node));
    step.AppendTokens(step.Between(32, 65), out);
  };
  Random random(0x7007);
  const Tokens problem = random.MakeTokens(512);
  auto path_to = [&](std::size_t leaf, std::size_t steps) {
    Tokens path = problem;
    std::uint64_t node = 0;
    std::size_t digits = leaf;
    for (std::size_t level = 0; level < steps; ++level) {
      node = node * kBranching + 1 + digits % kBranching;
      digits /= kBranching;
      append_step(node, path);
    }
    return path;
  };
  BatchInput workload;
  for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
    Append(path_to(leaf, depth), workload.cached_sequences);
  }
  for (std::size_t i = 0; i < leaves; ++i) {
    Tokens request =
        path_to(random.Between(0, leaves), random.Between(1, depth));
    random.AppendTokens(random.Between(32, 65), request);  // a new branch
    Append(request, workload.requests);
  }
  return workload;
}

BatchInput NoSharingWorkload(std::size_t sequences) {
  constexpr std::size_t kLength = 64;
  constexpr std::size_t kChanged = 8;
  Random random(0x5a4e);
  BatchInput workload;
  for (std::size_t i = 0; i < sequences; ++i) {
    Append(random.MakeTokens(kLength), workload.cached_sequences);
  }
  for (std::size_t i = 0; i < sequences; ++i) {
    Append(random.MakeTokens(kLength), workload.requests);
    TokenSpan cached = workload.cached_sequences[random.Between(0, sequences)];
    Tokens changed(cached.begin(), cached.end() - kChanged);
    random.AppendTokens(kChanged, changed);
    Append(changed, workload.requests);
  }
  return workload;
}

BatchInput WideWorkload(std::size_t first_tokens) {
  constexpr std::size_t kLength = 16;
  Random random(0x771de);
  std::vector<Token> firsts(kDefaultVocabulary);
  std::iota(firsts.begin(), firsts.end(), 0);
  random.Shuffle(firsts);
  firsts.resize(std::min<std::size_t>(first_tokens, firsts.size()));
  BatchInput workload;
  for (Token first : firsts) {
    Tokens sequence{first};
    random.AppendTokens(kLength - 1, sequence);
    Append(sequence, workload.cached_sequences);
  }
  std::vector<Tokens> requests = Copies(workload.cached_sequences);
  random.Shuffle(requests);
  for (Tokens& request : requests) {
    request[random.Between(1, kLength)] = random.VocabularyToken();
    Append(request, workload.requests);
  }
  return workload;
}

BatchInput RootFanoutWorkload(std::size_t children) {
  Random random(0xfa40);
  std::vector<Token> tokens;
  tokens.reserve(children * 2);
  while (tokens.size() < children) {
    // Draw extra, then deduplicate: collisions are rare over 2^32 values.
    for (std::size_t i = tokens.size(); i < children * 2; ++i) {
      tokens.push_back(
          static_cast<Token>(static_cast<std::uint32_t>(random.Bits())));
    }
    std::sort(tokens.begin(), tokens.end());
    tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  }
  random.Shuffle(tokens);
  tokens.resize(children);
  BatchInput workload;
  for (Token token : tokens) Append({token}, workload.cached_sequences);
  random.Shuffle(tokens);
  for (Token token : tokens) {
    Append({token, random.VocabularyToken()}, workload.requests);
  }
  return workload;
}

BatchInput DistinctTokensWorkload(std::size_t requests) {
  BatchInput workload;
  for (std::size_t i = 1; i <= requests; ++i) {
    Append({static_cast<Token>(i)},
           i <= requests / 2 ? workload.cached_sequences : workload.requests);
  }
  return workload;
}

BatchInput ChainWorkload(std::size_t length) {
  Random random(0xc8a1);
  BatchInput workload;
  Append(random.MakeTokens(length), workload.cached_sequences);
  workload.requests = workload.cached_sequences;
  return workload;
}

BatchInput RepeatedTokenWorkload(std::size_t length) {
  BatchInput workload;
  Append(Tokens(length, 42), workload.cached_sequences);
  workload.requests = workload.cached_sequences;
  return workload;
}

BatchInput SharedPrefixWorkload(std::size_t prefix_tokens) {
  constexpr std::size_t kSequences = 32;
  constexpr std::size_t kUnique = 64;
  Random random(0x9f1c);
  const Tokens prefix = random.MakeTokens(prefix_tokens);
  BatchInput workload;
  for (SequenceList* list : {&workload.cached_sequences, &workload.requests}) {
    for (std::size_t i = 0; i < kSequences; ++i) {
      Tokens sequence = prefix;
      random.AppendTokens(kUnique, sequence);
      Append(sequence, *list);
    }
  }
  return workload;
}

BatchInput SequenceCountWorkload(std::size_t sequences) {
  constexpr std::size_t kHeaders = 16;
  constexpr std::size_t kHalf = 64;
  constexpr std::size_t kChanged = 32;
  Random random(0xc0c0);
  std::vector<Tokens> headers;
  for (std::size_t i = 0; i < kHeaders; ++i) {
    headers.push_back(random.MakeTokens(kHalf));
  }
  BatchInput workload;
  for (std::size_t i = 0; i < sequences; ++i) {
    Tokens sequence = headers[random.Between(0, kHeaders)];
    random.AppendTokens(kHalf, sequence);
    Append(sequence, workload.cached_sequences);
  }
  std::vector<Tokens> requests = Copies(workload.cached_sequences);
  random.Shuffle(requests);
  for (Tokens& request : requests) {
    request.resize(request.size() - kChanged);
    random.AppendTokens(kChanged, request);
    Append(request, workload.requests);
  }
  return workload;
}

SequenceList ReadMooncakeHead(const std::string& path, std::size_t requests,
                              TraceMode mode) {
  std::ifstream file(path);
  if (!file) throw IoError(path + ": cannot open the Mooncake trace");
  const TraceOptions options{.mode = mode};
  SequenceList trace;
  std::string line;
  for (std::size_t line_number = 1;
       trace.size() < requests && std::getline(file, line); ++line_number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    AppendTraceLine(line, line_number, options, trace);
  }
  return trace;
}

BatchInput MooncakeBatchWorkload(const std::string& path, std::size_t requests,
                                 TraceMode mode) {
  const SequenceList trace = ReadMooncakeHead(path, requests, mode);
  BatchInput workload;
  const std::size_t half = trace.size() / 2;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    (i < half ? workload.cached_sequences : workload.requests).Append(trace[i]);
  }
  return workload;
}

BatchInput InNamespaces(BatchInput workload,
                        const std::vector<std::string>& names) {
  std::size_t i = 0;
  for (std::vector<std::string>* list :
       {&workload.cached_namespaces, &workload.namespaces}) {
    const std::size_t count = list == &workload.namespaces
                                  ? workload.requests.size()
                                  : workload.cached_sequences.size();
    for (std::size_t j = 0; j < count; ++j, ++i) {
      list->push_back(names[i % names.size()]);
    }
  }
  return workload;
}

}  // namespace kvprefix::bench
