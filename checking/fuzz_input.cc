// Differential fuzz inputs: see the header.
#include "checking/fuzz_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <utility>

#include "engines/registry.h"
#include "io/json_strings.h"
#include "reference/reference_trie.h"

namespace kvprefix::checking {
namespace {

constexpr std::uint8_t kFirstExtremeByte = 0xE0;
static_assert(kFirstExtremeByte + kFuzzExtremeTokens.size() <= 0xFF);
constexpr std::uint8_t kAlphabetSizes = 8;
// The alphabet byte's bit 3: every operation has a namespace byte.
constexpr std::uint8_t kNamespacesBit = 1 << 3;
// The alphabet byte's high bits (see the header): the SPEC §9 options.
constexpr std::uint8_t kAllButLastBit = 1 << 4;
constexpr std::uint8_t kOnAllocateBit = 1 << 5;
constexpr int kModelShift = 6;
constexpr std::array<CacheModel, 4> kModelOfBits = {
    CacheModel::kSpec, CacheModel::kVllm, CacheModel::kSglang,
    CacheModel::kSpec};
// The cache byte (see the header).
constexpr std::uint8_t kPageSizeBits = 3;
constexpr int kPolicyLowShift = 2;   // bit 2: the policy number's low bit
constexpr int kPolicyHighShift = 4;  // bits 4-7: the rest of it
constexpr std::uint8_t kBoundedBit = 1 << 3;
constexpr std::uint8_t kWideCapacityByte = 0xFF;
// The op byte.
constexpr std::uint8_t kKindBits = 3;
constexpr std::uint8_t kDerivedBit = 1 << 2;
constexpr int kFreshShift = 3;

// The integer reads of libFuzzer's FuzzedDataProvider, which the corpus was
// written for (fuzz/ has only clang's copy of that header; the library is
// built by any compiler): bytes are taken from the end.
class TailReader {
 public:
  explicit TailReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::size_t remaining() const { return bytes_.size(); }

  // FuzzedDataProvider::ConsumeIntegralInRange<T>(min, max).
  template <typename T>
  T InRange(T min, T max) {
    const std::uint64_t range =
        static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
    std::uint64_t result = 0;
    std::size_t offset = 0;
    while (offset < sizeof(T) * CHAR_BIT && (range >> offset) > 0 &&
           !bytes_.empty()) {
      result = (result << CHAR_BIT) | bytes_.back();
      bytes_ = bytes_.first(bytes_.size() - 1);
      offset += CHAR_BIT;
    }
    if (range != std::numeric_limits<std::uint64_t>::max()) {
      result %= range + 1;
    }
    return static_cast<T>(static_cast<std::uint64_t>(min) + result);
  }

  // FuzzedDataProvider::ConsumeIntegral<T>().
  template <typename T>
  T Integral() {
    return InRange(std::numeric_limits<T>::min(),
                   std::numeric_limits<T>::max());
  }

 private:
  std::span<const std::uint8_t> bytes_;
};

CacheOptions ReadCacheOptions(TailReader& reader) {
  const auto byte = reader.Integral<std::uint8_t>();
  CacheOptions options;
  options.page_size = 1 + (byte & kPageSizeBits);
  const std::size_t policy_number =
      ((byte >> kPolicyLowShift) & 1) | (byte >> kPolicyHighShift) << 1;
  options.policy =
      kEvictionPolicies[policy_number % kEvictionPolicies.size()].policy;
  if ((byte & kBoundedBit) != 0) {
    options.capacity = reader.Integral<std::uint8_t>();
    if (options.capacity == kWideCapacityByte) {
      options.capacity = reader.Integral<std::uint16_t>();
    }
  }
  return options;
}

Token ReadToken(TailReader& reader, Token alphabet_size) {
  const auto byte = reader.Integral<std::uint8_t>();
  if (byte < kFirstExtremeByte) return byte % alphabet_size;
  const std::size_t extreme = byte - kFirstExtremeByte;
  if (extreme < kFuzzExtremeTokens.size()) return kFuzzExtremeTokens[extreme];
  return reader.Integral<Token>();
}

Operation ReadOperation(TailReader& reader, Token alphabet_size,
                        bool namespaces,
                        const std::vector<Operation>& history) {
  const auto op = reader.Integral<std::uint8_t>();
  constexpr Operation::Kind kKinds[] = {
      Operation::Kind::kInsert, Operation::Kind::kMatch,
      Operation::Kind::kAccess, Operation::Kind::kAccess};
  Operation operation{kKinds[op & kKindBits], {}};
  if (namespaces) {
    operation.name_space = kFuzzNamespaces[reader.Integral<std::uint8_t>() %
                                           kFuzzNamespaces.size()];
  }
  const int fresh = op >> kFreshShift;
  if ((op & kDerivedBit) != 0 && !history.empty()) {
    const std::vector<Token>& earlier =
        history[reader.InRange<std::size_t>(0, history.size() - 1)].tokens;
    const std::size_t keep =
        reader.Integral<std::uint8_t>() % (earlier.size() + 1);
    // One allocation per operation, not one per doubling (each costs a
    // stack trace under ASan).
    operation.tokens.reserve(keep + fresh);
    operation.tokens.assign(earlier.begin(), earlier.begin() + keep);
  } else {
    operation.tokens.reserve(fresh);
  }
  for (int i = fresh; i > 0; --i) {
    operation.tokens.push_back(ReadToken(reader, alphabet_size));
  }
  if (operation.tokens.size() > kMaxFuzzSequenceTokens) {
    operation.tokens.resize(kMaxFuzzSequenceTokens);
  }
  return operation;
}

// True if some operation of `operations` has a namespace other than "".
bool AnyNamespaces(std::span<const Operation> operations) {
  return std::ranges::any_of(operations, [](const Operation& operation) {
    return !operation.name_space.empty();
  });
}

// Replays all but the last operation on a fresh `engine` (matches too: a
// broken engine's match may change its state), each in its namespace as the
// checker hands it, then describes its answer to the last one.
std::string AnswerToLast(PrefixIndex& engine,
                         std::span<const Operation> history) {
  OperationTokens tokens(AnyNamespaces(history));
  const auto of = [&](const Operation& operation) {
    tokens.Prepare(operation);
    return tokens.For(engine, operation);
  };
  for (std::size_t i = 0; i + 1 < history.size(); ++i) {
    switch (history[i].kind) {
      case Operation::Kind::kInsert:
        engine.Insert(of(history[i]));
        break;
      case Operation::Kind::kMatch:
        engine.MatchPrefix(of(history[i]));
        break;
      case Operation::Kind::kAccess:
        engine.Access(of(history[i]));
        break;
    }
  }
  const Operation& last = history.back();
  switch (last.kind) {
    case Operation::Kind::kInsert: {
      const NodeId node = engine.Insert(of(last));
      return fmt::format(
          "insert returns node {}, node_count {}, evicted_count {}", node,
          engine.node_count(), engine.evicted_count());
    }
    case Operation::Kind::kMatch: {
      const Match match = engine.MatchPrefix(of(last));
      return fmt::format("matched_length {}, cache_node {}",
                         match.matched_length, match.cache_node);
    }
    case Operation::Kind::kAccess: {
      const Match match = engine.Access(of(last));
      const Match after = engine.MatchPrefix(tokens.For(engine, last));
      return fmt::format(
          "access matches (matched_length {}, cache_node {}), then "
          "(matched_length {}, cache_node {}); node_count {}, evicted_count "
          "{}",
          match.matched_length, match.cache_node, after.matched_length,
          after.cache_node, engine.node_count(), engine.evicted_count());
    }
  }
  return "";
}

// CheckOperations on `operations`, a range of Operations: each is handed
// to the checker with std::move, so a vector's operations are moved into
// its history (CheckFuzzInput's decoded input, needed no more) and a span
// of const ones is copied.
template <typename Operations>
std::optional<std::string> CheckEach(
    const CacheOptions& options, Operations&& operations,
    const EngineFactory& make_engines,
    std::vector<std::unique_ptr<PrefixIndex>> engines, Comparison comparison) {
  DifferentialChecker checker(options, std::move(engines), comparison);
  if (AnyNamespaces(operations)) checker.FoldNamespaces();
  for (auto& operation : operations) {
    const auto report = checker.Apply(std::move(operation));
    if (!report) continue;
    const std::vector<Operation>& history = checker.history();
    std::string text =
        *report + "every engine's answer to the last operation:\n";
    auto reference = MakeEngine(ReferenceTrie::kName, options);
    text += fmt::format("  {}: {}\n", reference->name(),
                        AnswerToLast(*reference, history));
    for (auto& engine : make_engines(options)) {
      text += fmt::format("  {}: {}\n", EscapeControlCharacters(engine->name()),
                          AnswerToLast(*engine, history));
    }
    return text;
  }
  return std::nullopt;
}

// Sets the SPEC §9 options the alphabet byte picks, valid for the model
// (SPEC §9.4): vllm has one order (lru) and match limit (all-but-last);
// sglang orders by lru or fifo (any other policy is read as lru); only
// sglang has a trigger.
void SetModelOptions(std::uint8_t byte, CacheOptions& options) {
  options.model = kModelOfBits[byte >> kModelShift];
  options.match_limit =
      (byte & kAllButLastBit) != 0 ? MatchLimit::kAllButLast : MatchLimit::kAll;
  switch (options.model) {
    case CacheModel::kSpec:
      break;
    case CacheModel::kVllm:
      options.policy = EvictionPolicy::kLru;
      options.match_limit = MatchLimit::kAllButLast;
      break;
    case CacheModel::kSglang:
      if (options.policy != EvictionPolicy::kFifo) {
        options.policy = EvictionPolicy::kLru;
      }
      if ((byte & kOnAllocateBit) != 0) {
        options.trigger = EvictionTrigger::kOnAllocate;
      }
      break;
  }
}

}  // namespace

std::optional<FuzzInput> DecodeFuzzInput(std::span<const std::uint8_t> bytes) {
  if (bytes.size() > kMaxFuzzInputBytes) return std::nullopt;
  TailReader reader(bytes);
  FuzzInput input;
  const std::uint8_t alphabet_byte = reader.Integral<std::uint8_t>();
  const Token alphabet_size = 1 + alphabet_byte % kAlphabetSizes;
  input.options = ReadCacheOptions(reader);
  SetModelOptions(alphabet_byte, input.options);
  while (reader.remaining() > 0 &&
         input.operations.size() < kMaxFuzzOperations) {
    Operation operation =
        ReadOperation(reader, alphabet_size,
                      (alphabet_byte & kNamespacesBit) != 0, input.operations);
    input.operations.push_back(std::move(operation));
  }
  return input;
}

std::optional<std::string> CheckOperations(
    const CacheOptions& options, std::span<const Operation> operations,
    const EngineFactory& make_engines, Comparison comparison) {
  return CheckEach(options, operations, make_engines, make_engines(options),
                   comparison);
}

FuzzTally::FuzzTally(const FuzzTally& other) {
  const std::lock_guard<std::mutex> lock(other.mutex_);
  checked_ = other.checked_;
  refused_ = other.refused_;
  too_long_ = other.too_long_;
  first_refusal_ = other.first_refusal_;
}

void FuzzTally::Checked() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++checked_;
}

void FuzzTally::Refused(std::string_view reason) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (refused_++ == 0) first_refusal_ = reason;
}

void FuzzTally::TooLong() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++too_long_;
}

std::uint64_t FuzzTally::checked() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return checked_;
}

std::uint64_t FuzzTally::skipped() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return refused_ + too_long_;
}

std::string FuzzTally::Format(std::string_view target) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string text = fmt::format("{}: checked {} inputs, skipped {}", target,
                                 checked_, refused_ + too_long_);
  if (refused_ + too_long_ == 0) return text;
  return text + fmt::format(" ({} refused{}{}; {} longer than {} bytes)",
                            refused_, refused_ > 0 ? ", the first: " : "",
                            first_refusal_, too_long_, kMaxFuzzInputBytes);
}

std::optional<std::string> CheckFuzzInput(std::span<const std::uint8_t> bytes,
                                          const EngineFactory& make_engines,
                                          const FuzzCheckOptions& check) {
  std::optional<FuzzInput> input = DecodeFuzzInput(bytes);
  if (!input) {
    if (check.tally != nullptr) check.tally->TooLong();
    return std::nullopt;
  }
  CacheOptions options = check.unbounded ? CacheOptions{} : input->options;
  if (check.adjust) check.adjust(options);
  if (!Implements(check.implemented, options)) {
    SequenceList requests;
    for (const Operation& operation : input->operations) {
      requests.Append(operation.tokens);
    }
    // FNV-1a of the bytes: the same input makes the same choices anywhere.
    std::uint64_t bits = 0xCBF29CE484222325ull;
    for (const std::uint8_t byte : bytes)
      bits = (bits ^ byte) * 0x100000001B3ull;
    RestrictOptions(check.implemented, bits, requests, options);
  }
  std::vector<std::unique_ptr<PrefixIndex>> engines;
  try {
    engines = make_engines(options);
  } catch (const std::invalid_argument& error) {
    // A cache need not implement every policy or page size: one that
    // refuses these options (a plugin's KVPREFIX_INVALID_ARGUMENT) has
    // nothing to answer, and the input is skipped, not a finding.
    if (check.tally != nullptr) check.tally->Refused(error.what());
    return std::nullopt;
  }
  if (check.tally != nullptr) check.tally->Checked();
  return CheckEach(options, input->operations, make_engines, std::move(engines),
                   check.comparison);
}

std::vector<std::string> ParseEngineList(std::string_view list) {
  std::vector<std::string> names;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    if (name.empty()) {
      throw std::invalid_argument(
          names.empty() && comma == std::string_view::npos
              ? "no engine named"
              : fmt::format("engine {} of the list is empty",
                            names.size() + 1));
    }
    names.emplace_back(name);
    if (comma == std::string_view::npos) return names;
    list.remove_prefix(comma + 1);
  }
}

EngineFactory NamedEngines(std::vector<std::string> names) {
  return [names = std::move(names)](const CacheOptions& options) {
    std::vector<std::unique_ptr<PrefixIndex>> engines;
    engines.reserve(names.size());
    for (const std::string& name : names) {
      engines.push_back(MakeEngine(name, options));
    }
    return engines;
  };
}

}  // namespace kvprefix::checking
