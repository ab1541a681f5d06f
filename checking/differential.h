// The differential harness: runs the reference first and then every engine
// under test on the same operations, and reports the first disagreement with
// the engine, the operation history, and expected versus actual.
//
// Unit tests, RapidCheck properties, fuzzers and `kvprefix verify --engines`
// all go through this one harness (after RE2's re2/testing/tester.cc), so a
// fix to how engines are compared is made once.
#ifndef KVPREFIX_CHECKING_DIFFERENTIAL_H_
#define KVPREFIX_CHECKING_DIFFERENTIAL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvprefix/batch.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/types.h"

namespace kvprefix::checking {

// One step of an online workload (SPEC §3).
struct Operation {
  enum class Kind { kInsert, kMatch };
  Kind kind;
  std::vector<Token> tokens;
};

// Text form of a token list, "[1,2,-3]", and of an operation,
// "insert [1,2]" / "match [1,2]".
std::string FormatTokens(TokenSpan tokens);
std::string FormatOperation(const Operation& operation);

class DifferentialChecker {
 public:
  // Checks every registered engine except the reference.
  DifferentialChecker();
  // Checks the given engines (e.g. deliberately broken ones).
  explicit DifferentialChecker(
      std::vector<std::unique_ptr<PrefixIndex>> engines);

  // Applies `operation` to the reference, then to every engine, and compares
  // the result (the Match, or for an insert the returned node ID) and the
  // node count. Returns a report of the first disagreement, or nullopt. After
  // a disagreement the checker should be discarded.
  std::optional<std::string> Apply(const Operation& operation);

  // Applies an insert for each cached sequence, then a match for each
  // request (the batch job, SPEC §2).
  std::optional<std::string> ApplyBatch(const BatchInput& input);

  // The operations applied so far, in order.
  const std::vector<Operation>& history() const { return history_; }
  const PrefixIndex& reference() const { return *reference_; }

 private:
  std::string Report(const PrefixIndex& engine, const std::string& expected,
                     const std::string& actual) const;

  std::unique_ptr<PrefixIndex> reference_;
  std::vector<std::unique_ptr<PrefixIndex>> engines_;
  std::vector<Operation> history_;
};

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_DIFFERENTIAL_H_
