// Names of the failure kinds: see failure.h.
#include "verify/failure.h"

namespace kvprefix::verify {

std::string_view FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kTimeout:
      return "timeout";
    case FailureKind::kCrash:
      return "crash";
    case FailureKind::kOutputLimit:
      return "output-limit";
    case FailureKind::kNotJson:
      return "not-json";
    case FailureKind::kWrongShape:
      return "wrong-shape";
    case FailureKind::kWrongAnswer:
      return "wrong-answer";
    case FailureKind::kFormat:
      return "format";
    case FailureKind::kRefused:
      return "refused";
  }
  return "unknown";
}

}  // namespace kvprefix::verify
