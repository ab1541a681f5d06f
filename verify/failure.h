// The kinds of failure `kvprefix verify` tells apart, and one failure found.
#ifndef KVPREFIX_VERIFY_FAILURE_H_
#define KVPREFIX_VERIFY_FAILURE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvprefix::verify {

// Each kind is reported under its own name (FailureKindName), so a user sees
// at once whether the implementation is wrong, slow, or broken.
enum class FailureKind {
  kTimeout,      // did not finish within --timeout
  kCrash,        // killed by a signal, non-zero exit, or an engine threw
  kOutputLimit,  // printed far more than the answer can take
  kNotJson,      // standard output is not one JSON document
  kWrongShape,   // JSON, but not SPEC §5's shape (members, types, count)
  kWrongAnswer,  // SPEC §5's shape, but some match differs from the reference
  kFormat,       // right answers, but not SPEC §5's compact bytes
  // Not a failure: an engine refuses the input's cache options (a plugin's
  // create answering KVPREFIX_INVALID_ARGUMENT, e.g. for a policy it does
  // not implement). The runner skips the input, counts it and says so; the
  // shrinker never takes it for a failing candidate (another kind).
  kRefused,
};

// "timeout", "crash", "output-limit", "not-json", "wrong-shape",
// "wrong-answer", "format" or "refused". Thread-safe.
std::string_view FailureKindName(FailureKind kind);

struct Failure {
  FailureKind kind;
  // What went wrong, for a human: the request, expected versus actual, the
  // exit status, the JSON location... May span several lines.
  std::string message;
  // The request (index in the input's requests) whose answer was wrong, when
  // one is to blame: a wrong-answer, or an engine disagreeing on a replay
  // document's step. The report then describes the reference's cache there.
  std::optional<std::size_t> request = std::nullopt;
  // True when the input passes on its own (checked again on a new
  // long-lived process) and failed only after the inputs before it: shown
  // as found, but never taken as a shrinking step.
  bool depends_on_earlier_input = false;
};

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_FAILURE_H_
