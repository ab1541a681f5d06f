// kvprefix._kvprefix._testing: see testing_module.h.
//
// Everything per input runs here in C++ with the GIL held: generating the
// input, the reference's answers, converting each token sequence to a Python
// list once per call, reading the cache's answers and comparing them. Only
// the cache itself runs Python code, so that a check costs little more than
// the cache's own work (python/README.md, "Check your own cache in Python").
#include "python/testing_module.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "checking/differential.h"
#include "checking/implemented_options.h"
#include "checking/recipe.h"
#include "engines/registry.h"
#include "io/case_file.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "io/replay_document.h"
#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"
#include "python/named_values.h"
#include "reference/reference_trie.h"
#include "verify/cache_state.h"
#include "verify/checker.h"
#include "verify/failure.h"
#include "verify/inputs.h"
#include "verify/shrink.h"

namespace kvprefix::python_testing {
namespace {

namespace py = pybind11;
using verify::Failure;
using verify::FailureKind;

// What is compared: everything (matched_length, cache_node and an insert's
// node ID), or matched_length alone, for a cache without kvprefix's node IDs
// (the uncached suffix follows from matched_length).
enum class Compare { kAll, kLengths };

// One input of either kind, with where it came from.
struct Input {
  std::string name;
  std::variant<BatchInput, ReplayInput> input;
};

// One disagreement between the cache and the reference, as CheckFailure
// (kvprefix/testing/__init__.py) reports it.
struct Finding {
  Failure failure;            // kind, report text, request index
  std::string step;           // make_cache, insert, match or access
  std::size_t index = 0;      // of the operation in its list
  std::vector<Token> tokens;  // the operation's tokens
  py::object expected;        // the reference's answer (None: none)
  py::object actual;          // the cache's answer, as read, or as returned
  py::object exception;       // what the cache raised (None: nothing)
};

py::list ToList(TokenSpan tokens) {
  py::list list(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i),
                    PyLong_FromLong(tokens[i]));
  }
  return list;
}

py::dict MatchDict(const Match& match, TokenSpan request) {
  py::dict dict;
  dict["matched_length"] = match.matched_length;
  dict["cache_node"] = match.cache_node;
  dict["uncached_suffix"] =
      ToList(request.subspan(std::min(match.matched_length, request.size())));
  return dict;
}

std::string Repr(py::handle value) {
  std::string text = py::repr(value).cast<std::string>();
  constexpr std::size_t kMaxShown = 200;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

// An unsigned 64-bit integer (an int, or an object with __index__ such as a
// NumPy integer; not a bool), or nullopt.
std::optional<std::uint64_t> ReadUnsigned(py::handle value) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    return std::nullopt;
  }
  py::object number =
      py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!number) throw py::error_already_set();
  const unsigned long long result = PyLong_AsUnsignedLongLong(number.ptr());
  if (result == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
      throw py::error_already_set();
    }
    PyErr_Clear();  // negative, or past 2^64 - 1: not a length or node ID
    return std::nullopt;
  }
  return result;
}

// A match as the cache answered it: matched_length, and cache_node and
// uncached_suffix when the answer has them.
struct Answer {
  std::uint64_t matched_length = 0;
  std::optional<std::uint64_t> cache_node;
  py::object uncached_suffix;  // null when absent
};

// The member `name` of a dict or the attribute of another object; null
// when it has none.
py::object Member(py::handle answer, const char* name) {
  if (PyDict_Check(answer.ptr())) {
    PyObject* item = PyDict_GetItemString(answer.ptr(), name);
    return item == nullptr ? py::object()
                           : py::reinterpret_borrow<py::object>(item);
  }
  if (!py::hasattr(answer, name)) return py::object();
  return answer.attr(name);
}

// Reads one match answer: an int (matched_length); a 2-tuple or 2-list
// (matched_length, cache_node); a dict, or an object with attributes,
// holding matched_length and optionally cache_node and uncached_suffix.
// Returns what is wrong with its shape instead when it is none of those.
std::variant<Answer, std::string> ReadAnswer(py::handle answer) {
  static constexpr std::string_view kShapes =
      "expected matched_length (an int), (matched_length, cache_node), or a "
      "dict or an object with matched_length and optionally cache_node and "
      "uncached_suffix";
  Answer read;
  py::object length;
  py::object node;
  if (!PyBool_Check(answer.ptr()) && PyIndex_Check(answer.ptr())) {
    length = py::reinterpret_borrow<py::object>(answer);
  } else if (PyTuple_Check(answer.ptr()) || PyList_Check(answer.ptr())) {
    if (py::len(answer) != 2) {
      return fmt::format("{}: {}", Repr(answer), kShapes);
    }
    length = answer[py::int_(0)];
    node = answer[py::int_(1)];
  } else {
    length = Member(answer, "matched_length");
    if (!length) return fmt::format("{}: {}", Repr(answer), kShapes);
    node = Member(answer, "cache_node");
    read.uncached_suffix = Member(answer, "uncached_suffix");
  }
  const std::optional<std::uint64_t> matched_length = ReadUnsigned(length);
  if (!matched_length) {
    return fmt::format("matched_length {} is not an unsigned 64-bit integer",
                       Repr(length));
  }
  read.matched_length = *matched_length;
  if (node && !node.is_none()) {
    read.cache_node = ReadUnsigned(node);
    if (!read.cache_node) {
      return fmt::format("cache_node {} is not an unsigned 64-bit integer",
                         Repr(node));
    }
  }
  return read;
}

// True if `suffix` holds exactly the ints of `tokens`.
bool SameTokens(py::handle suffix, TokenSpan tokens) {
  if (PyUnicode_Check(suffix.ptr()) || !PySequence_Check(suffix.ptr())) {
    return false;
  }
  py::object items =
      py::reinterpret_steal<py::object>(PySequence_Fast(suffix.ptr(), ""));
  if (!items) throw py::error_already_set();
  if (static_cast<std::size_t>(PySequence_Fast_GET_SIZE(items.ptr())) !=
      tokens.size()) {
    return false;
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    PyObject* item =
        PySequence_Fast_GET_ITEM(items.ptr(), static_cast<Py_ssize_t>(i));
    if (PyBool_Check(item) || !PyLong_Check(item)) return false;
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow != 0 || value != tokens[i]) return false;
  }
  return true;
}

// "request 3 of 5 (access), tokens [1,2]" or "cached sequence 0 of 2
// (insert), tokens []".
std::string Where(const Finding& finding, std::size_t count) {
  const bool cached =
      finding.step == "insert" && finding.failure.request == std::nullopt;
  return fmt::format("{} {} of {} ({}), tokens {}",
                     cached ? "cached sequence" : "request", finding.index,
                     count, finding.step,
                     checking::FormatTokens(finding.tokens));
}

std::string FormatMatch(std::uint64_t length, std::optional<std::uint64_t> node,
                        TokenSpan request, Compare compare) {
  std::string text = fmt::format("matched_length {}", length);
  if (compare == Compare::kAll) {
    text += node ? fmt::format(", cache_node {}", *node) : ", no cache_node";
  }
  text += length <= request.size()
              ? ", uncached_suffix " +
                    checking::FormatTokens(request.subspan(length))
              : " (past the request's end)";
  return text;
}

// The fields of kvprefix.testing.CacheOptions for `options`, in its order:
// capacity (None: unbounded), policy, page_size, model, match_limit, trigger,
// the names as kvprefix/cache.h's lists and the CLI spell them.
py::tuple OptionsFields(const CacheOptions& options) {
  return py::make_tuple(options.bounded()
                            ? py::object(py::int_(options.capacity))
                            : py::object(py::none()),
                        EvictionPolicyName(options.policy), options.page_size,
                        NameOf(kCacheModels, options.model),
                        NameOf(kMatchLimits, options.match_limit),
                        NameOf(kEvictionTriggers, options.trigger));
}

// The cache under test, and how one input is run on it.
class Target {
 public:
  Target(py::object make_cache, py::object options_type, Compare compare)
      : make_cache_(std::move(make_cache)),
        options_type_(std::move(options_type)),
        compare_(compare) {}

  // SPEC §8.1: a document's namespaces are folded into the first tokens
  // the cache is given (kvprefix/namespaces.h), as a plugin gets them, and
  // the reference answers the folded sequences.
  std::optional<Finding> Check(const BatchInput& given) const {
    const std::optional<BatchInput> folded = FoldedBatch(given);
    const BatchInput& input = folded ? *folded : given;
    Finding finding;
    const CacheOptions options;
    py::object cache;
    if (!MakeCache(options, cache, finding)) return finding;
    const py::object insert = Method(cache, "insert", options);
    const py::object match = Method(cache, "match", options);
    const auto reference = MakeEngine(ReferenceTrie::kName, options);
    const std::size_t cached_count = input.cached_sequences.size();
    for (std::size_t i = 0; i < cached_count; ++i) {
      const TokenSpan sequence = input.cached_sequences[i];
      const NodeId expected = reference->Insert(sequence);
      py::object actual;
      if (!Call(insert, sequence, "insert", i, std::nullopt, actual, finding)) {
        return Complete(std::move(finding), cached_count);
      }
      if (compare_ == Compare::kLengths || actual.is_none()) continue;
      const std::optional<std::uint64_t> node = ReadUnsigned(actual);
      if (!node || *node != expected) {
        Locate(finding, "insert", i, std::nullopt, sequence);
        finding.failure.kind =
            node ? FailureKind::kWrongAnswer : FailureKind::kWrongShape;
        finding.expected = py::int_(expected);
        finding.actual = actual;
        finding.failure.message =
            node ? fmt::format("  expected node {}\n  actual   node {}",
                               expected, *node)
                 : fmt::format(
                       "  insert returned {}: expected a node ID (an "
                       "unsigned 64-bit integer) or None",
                       Repr(actual));
        return Complete(std::move(finding), cached_count);
      }
    }
    for (std::size_t i = 0; i < input.requests.size(); ++i) {
      const TokenSpan request = input.requests[i];
      const Match expected = reference->MatchPrefix(request);
      py::object actual;
      if (!Call(match, request, "match", i, i, actual, finding) ||
          !CompareMatch(actual, expected, request, "match", i, finding)) {
        return Complete(std::move(finding), input.requests.size());
      }
    }
    return std::nullopt;
  }

  std::optional<Finding> Check(const ReplayInput& given) const {
    ReplayInput input;
    input.options = given.options;
    input.requests = given.requests;
    FoldNamespaces(input.requests, given.namespaces);
    Finding finding;
    py::object cache;
    if (!MakeCache(input.options, cache, finding)) return finding;
    py::object access;
    py::object insert;
    py::object match;
    if (py::hasattr(cache, "access")) {
      access = cache.attr("access");
    } else {
      insert = Method(cache, "insert", input.options);
      match = Method(cache, "match", input.options);
    }
    const auto reference = MakeEngine(ReferenceTrie::kName, input.options);
    const std::size_t count = input.requests.size();
    for (std::size_t i = 0; i < count; ++i) {
      const TokenSpan request = input.requests[i];
      const Match expected = reference->Access(request);
      py::object actual;
      if (access) {
        if (!Call(access, request, "access", i, i, actual, finding)) {
          return Complete(std::move(finding), count);
        }
      } else {
        py::object ignored;
        if (!Call(match, request, "match", i, i, actual, finding) ||
            !Call(insert, request, "insert", i, i, ignored, finding)) {
          return Complete(std::move(finding), count);
        }
      }
      if (!CompareMatch(actual, expected, request, access ? "access" : "match",
                        i, finding)) {
        return Complete(std::move(finding), count);
      }
    }
    return std::nullopt;
  }

 private:
  py::object OptionsObject(const CacheOptions& options) const {
    return options_type_(*OptionsFields(options));
  }

  // Calls make_cache(options); false (and a crash finding) if it raised.
  bool MakeCache(const CacheOptions& options, py::object& cache,
                 Finding& finding) const {
    const py::object options_object = OptionsObject(options);
    try {
      cache = make_cache_(options_object);
      return true;
    } catch (py::error_already_set& error) {
      if (!error.matches(PyExc_Exception)) throw;
      // kvprefix.Refused: the cache does not implement these options (a
      // plugin's create refusing them raises it too). Skipped, not a crash.
      static const py::handle refused =
          py::object(py::module_::import("kvprefix._kvprefix").attr("Refused"))
              .release();
      if (error.matches(refused)) {
        finding.step = "make_cache";
        // A plugin's refusal names the options already.
        const std::string reason = py::str(error.value()).cast<std::string>();
        const std::string named = checking::FormatCacheOptions(options);
        finding.failure = Failure{
            FailureKind::kRefused,
            reason.find(named) != std::string::npos
                ? reason
                : fmt::format("make_cache refuses {}: {}", named, reason)};
        return false;
      }
      finding.step = "make_cache";
      finding.exception = error.value();
      finding.failure =
          Failure{FailureKind::kCrash,
                  fmt::format("make_cache({}) raised {}", Repr(options_object),
                              ExceptionText(error))};
      return false;
    }
  }

  // The method `name` of the cache; a TypeError (the caller's mistake, not
  // a finding) when it has none.
  py::object Method(const py::object& cache, const char* name,
                    const CacheOptions& options) const {
    if (!py::hasattr(cache, name)) {
      PyErr_SetString(
          PyExc_TypeError,
          fmt::format("make_cache({}) returned {}, which has no "
                      "{}() method (kvprefix.testing.check)",
                      Repr(OptionsObject(options)), Repr(cache), name)
              .c_str());
      throw py::error_already_set();
    }
    return cache.attr(name);
  }

  static std::string ExceptionText(py::error_already_set& error) {
    return fmt::format(
        "{}: {}", py::str(error.type().attr("__name__")).cast<std::string>(),
        py::str(error.value()).cast<std::string>());
  }

  // Calls method(tokens as a list); false (and a crash finding) if it
  // raised an Exception (anything else, KeyboardInterrupt, propagates).
  bool Call(const py::object& method, TokenSpan tokens, const char* step,
            std::size_t index, std::optional<std::size_t> request,
            py::object& result, Finding& finding) const {
    try {
      result = method(ToList(tokens));
      return true;
    } catch (py::error_already_set& error) {
      if (!error.matches(PyExc_Exception)) throw;
      Locate(finding, step, index, request, tokens);
      finding.exception = error.value();
      finding.failure.kind = FailureKind::kCrash;
      finding.failure.message =
          fmt::format("  the cache raised {}", ExceptionText(error));
      return false;
    }
  }

  static void Locate(Finding& finding, const char* step, std::size_t index,
                     std::optional<std::size_t> request, TokenSpan tokens) {
    finding.step = step;
    finding.index = index;
    finding.failure.request = request;
    finding.tokens.assign(tokens.begin(), tokens.end());
  }

  // Compares one match answer with the reference's; false (and a finding
  // of kind wrong-shape or wrong-answer) if it differs.
  bool CompareMatch(const py::object& actual, const Match& expected,
                    TokenSpan request, const char* step, std::size_t index,
                    Finding& finding) const {
    auto answer = ReadAnswer(actual);
    const auto fail = [&](FailureKind kind, std::string message,
                          py::object read) {
      Locate(finding, step, index, index, request);
      finding.failure.kind = kind;
      finding.failure.message = std::move(message);
      finding.expected = MatchDict(expected, request);
      finding.actual = std::move(read);
      return false;
    };
    if (auto* problem = std::get_if<std::string>(&answer)) {
      return fail(FailureKind::kWrongShape, "  the answer " + *problem, actual);
    }
    const Answer& read = std::get<Answer>(answer);
    if (compare_ == Compare::kAll && !read.cache_node) {
      return fail(FailureKind::kWrongShape,
                  fmt::format("  the answer {} has no cache_node "
                              "(compare='lengths' checks a cache without "
                              "kvprefix's node IDs)",
                              Repr(actual)),
                  actual);
    }
    const bool suffix_right =
        !read.uncached_suffix || read.uncached_suffix.is_none() ||
        (read.matched_length <= request.size() &&
         SameTokens(read.uncached_suffix,
                    request.subspan(read.matched_length)));
    const bool right = read.matched_length == expected.matched_length &&
                       (compare_ == Compare::kLengths ||
                        *read.cache_node == expected.cache_node) &&
                       suffix_right;
    if (right) return true;
    py::dict read_dict;
    read_dict["matched_length"] = read.matched_length;
    read_dict["cache_node"] = read.cache_node
                                  ? py::object(py::int_(*read.cache_node))
                                  : py::object(py::none());
    read_dict["uncached_suffix"] =
        read.uncached_suffix ? read.uncached_suffix
        : read.matched_length <= request.size()
            ? py::object(ToList(request.subspan(read.matched_length)))
            : py::object(py::none());
    std::string message = fmt::format(
        "  expected {}\n  actual   {}",
        FormatMatch(expected.matched_length, expected.cache_node, request,
                    compare_),
        FormatMatch(read.matched_length, read.cache_node, request, compare_));
    if (!suffix_right) {
      message +=
          fmt::format(", but uncached_suffix {}", Repr(read.uncached_suffix));
    }
    return fail(FailureKind::kWrongAnswer, std::move(message),
                std::move(read_dict));
  }

  // Puts "where" before the finding's message.
  static Finding Complete(Finding finding, std::size_t count) {
    finding.failure.message =
        Where(finding, count) + ":\n" + finding.failure.message;
    return finding;
  }

  py::object make_cache_;
  py::object options_type_;
  Compare compare_;
};

Compare ParseCompare(const std::string& compare) {
  if (compare == "all") return Compare::kAll;
  if (compare == "lengths") return Compare::kLengths;
  throw py::value_error("compare: expected 'all' or 'lengths', got '" +
                        compare + "'");
}

std::string DocumentJson(const BatchInput& input) {
  std::string json;
  AppendBatchInputJson(input, json);
  return json;
}
std::string DocumentJson(const ReplayInput& input) {
  std::string json;
  AppendReplayDocumentJson(input, json);
  return json;
}
std::string CaseJson(const BatchInput& input, std::string_view source) {
  return FormatCaseFile(input, verify::ReferenceMatches(input), source);
}
std::string CaseJson(const ReplayInput& input, std::string_view source) {
  return FormatReplayCaseFile(input, verify::ReferenceMatches(input), source);
}
std::string CacheState(const BatchInput&, const Failure&) { return ""; }
std::string CacheState(const ReplayInput& input, const Failure& failure) {
  if (!failure.request || *failure.request >= input.requests.size()) return "";
  return verify::DescribeReferenceCache(input, *failure.request);
}

// Budget of the shrinker: verify's --shrink-attempts and --shrink-time.
struct ShrinkBudget {
  bool shrink = true;
  std::size_t max_attempts = 5000;
  double seconds = 120;
};

// The report of `finding` on `failing` (named `name`) for CheckFailure:
// shrinks it first (unless told not to), then checks the shrunk input once
// more for the details of its disagreement.
template <typename InputType>
py::dict Report(const Target& target, const InputType& failing,
                const std::string& name, Finding finding,
                const ShrinkBudget& budget) {
  InputType shrunk = failing;
  std::size_t attempts = 0;
  std::string shrink_report;  // verify's line; "" when not shrinking
  if (budget.shrink) {
    const verify::CheckerOf<InputType> check =
        [&target](const InputType& input) -> std::optional<Failure> {
      std::optional<Finding> found = target.Check(input);
      if (!found) return std::nullopt;
      return found->failure;
    };
    verify::ShrinkResultOf<InputType> result = verify::Shrink(
        failing, finding.failure, check,
        verify::ShrinkOptions{
            .max_attempts = budget.max_attempts,
            .deadline =
                std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(budget.seconds))});
    attempts = result.attempts;
    if (attempts > 0) shrink_report = verify::DescribeShrink(failing, result);
    if (result.accepted > 0) {
      shrunk = std::move(result.input);
      // The shrinker kept a failure of the same kind; its details are read
      // again from the shrunk input. A cache that does not fail the same
      // way twice (it depends on more than its input) keeps the original.
      if (std::optional<Finding> again = target.Check(shrunk)) {
        finding = *std::move(again);
      } else {
        shrunk = failing;
        shrink_report = fmt::format(
            "not shrunk: the shrunk input passed when checked again ({} "
            "checks)",
            attempts);
      }
    }
  }
  const std::string kind(verify::FailureKindName(finding.failure.kind));
  py::dict report;
  report["kind"] = kind;
  report["input_name"] = name;
  report["step"] = finding.step;
  report["index"] = finding.index;
  report["request"] = finding.failure.request
                          ? py::object(py::int_(*finding.failure.request))
                          : py::object(py::none());
  report["tokens"] = ToList(finding.tokens);
  report["expected"] = finding.expected ? finding.expected : py::none();
  report["actual"] = finding.actual ? finding.actual : py::none();
  report["exception"] = finding.exception ? finding.exception : py::none();
  report["message"] =
      finding.failure.message + "\n" + CacheState(shrunk, finding.failure);
  report["shrink_attempts"] = attempts;
  report["shrink_report"] = shrink_report;
  report["original_document"] = DocumentJson(failing);
  report["document"] = DocumentJson(shrunk);
  report["case"] =
      CaseJson(shrunk, fmt::format("kvprefix.testing: {} on {}", kind, name));
  return report;
}

// nullopt when the cache answers `input` as the reference does; {"refused":
// message} when make_cache refuses its options (kvprefix.Refused); else
// the failure's Report.
std::optional<py::dict> CheckOne(const Target& target, const Input& input,
                                 const ShrinkBudget& budget) {
  return std::visit(
      [&](const auto& document) -> std::optional<py::dict> {
        std::optional<Finding> finding = target.Check(document);
        if (!finding) return std::nullopt;
        if (finding->failure.kind == FailureKind::kRefused) {
          py::dict refused;
          refused["refused"] = finding->failure.message;
          return refused;
        }
        return Report(target, document, input.name, *std::move(finding),
                      budget);
      },
      input.input);
}

// Options forced on generated replay documents: each is left as generated
// when nullopt. Forcing a page size on a document whose capacity is
// generated scales the capacity by the ratio of distinct prefixes at the
// two page sizes, so that it evicts about as often as generated.
struct Overrides {
  std::optional<std::uint64_t> capacity;  // kUnbounded: unbounded
  std::optional<EvictionPolicy> policy;
  std::optional<std::uint64_t> page_size;
};

void ApplyOverrides(const Overrides& overrides, ReplayInput& input) {
  CacheOptions& options = input.options;
  if (overrides.policy) options.policy = *overrides.policy;
  if (overrides.page_size && *overrides.page_size != options.page_size) {
    if (!overrides.capacity && options.bounded()) {
      const std::uint64_t before =
          checking::DistinctPrefixes(input.requests, options.page_size);
      const std::uint64_t after =
          checking::DistinctPrefixes(input.requests, *overrides.page_size);
      if (before > 0) options.capacity = options.capacity * after / before;
    }
    options.page_size = *overrides.page_size;
  }
  if (overrides.capacity) options.capacity = *overrides.capacity;
}

EvictionPolicy ParsePolicy(const std::string& policy) {
  const std::optional<EvictionPolicy> parsed = ParseEvictionPolicy(policy);
  if (!parsed) {
    throw py::value_error("policy: expected " + EvictionPolicyChoices('\'') +
                          ", got '" + policy + "'");
  }
  return *parsed;
}

// check()'s model, match_limit and trigger, those given as the members of
// `given` (the others left to vary per document), as `verify --model M
// --match-limit L --trigger T` takes them: nullopt when none is given (plain
// SPEC §8 documents), else the model given or spec. Raises ValueError
// naming the argument: for a name not in kvprefix/cache.h's lists (with the
// choices), or a combination SPEC §9.4 refuses (a trigger without sglang,
// vllm with match limit all), the forced `policy` included (vllm with
// fifo, sglang with lfu): generated documents must be valid ones.
std::optional<verify::GeneratedModel> ReadGeneratedModel(
    const py::dict& given, const std::optional<std::string>& policy) {
  if (given.empty()) return std::nullopt;
  for (const auto& [key, value] : given) {
    const std::string name = py::str(key);
    if (name != "model" && name != "match_limit" && name != "trigger") {
      throw py::value_error("expected model, match_limit or trigger, got " +
                            name);
    }
  }
  verify::GeneratedModel model;
  if (given.contains("model")) {
    model.model = python::ToNamedValue(kCacheModels, given["model"], "model");
  }
  if (given.contains("match_limit")) {
    model.match_limit =
        python::ToNamedValue(kMatchLimits, given["match_limit"], "match_limit");
  }
  if (given.contains("trigger")) {
    model.trigger =
        python::ToNamedValue(kEvictionTriggers, given["trigger"], "trigger");
  }
  // std::invalid_argument ("trigger: a trigger needs model ...") becomes a
  // ValueError by pybind11's translation.
  verify::CheckGeneratedModel(model);
  if (policy) {
    const CacheOptions options{.policy = ParsePolicy(*policy),
                               .model = model.model,
                               .match_limit = model.match_limit.value_or(
                                   DefaultMatchLimit(model.model))};
    if (const auto problem = FindModelOptionsProblem(options, false)) {
      throw py::value_error(std::string(problem->member) + ": " +
                            problem->message);
    }
  }
  return model;
}

// Every combination of SPEC §9 options FindModelOptionsProblem accepts, in
// the order of kvprefix/cache.h's lists (model, then match limit, policy and
// for sglang trigger; the first of each model has policy lru): (model,
// match_limit, policy, trigger or None, members), members being the JSON
// object of what a replay document writes for it besides its requests and
// page size (AppendReplayDocumentJson: "policy", and "model",
// "match_limit", "trigger" where they differ from the defaults).
py::list ModelCombinations() {
  py::list combinations;
  for (const auto& model : kCacheModels) {
    for (const auto& limit : kMatchLimits) {
      for (const EvictionPolicyEntry& policy : kEvictionPolicies) {
        const bool sglang = model.value == CacheModel::kSglang;
        for (const auto& trigger : kEvictionTriggers) {
          ReplayInput input;
          input.options = CacheOptions{.policy = policy.policy,
                                       .model = model.value,
                                       .match_limit = limit.value,
                                       .trigger = trigger.value};
          if (FindModelOptionsProblem(input.options, sglang)) continue;
          py::dict members =
              py::module_::import("json").attr("loads")(DocumentJson(input));
          members.attr("pop")("requests");
          members.attr("pop")("page_size");
          combinations.append(py::make_tuple(
              model.name, limit.name, policy.name,
              sglang ? py::object(py::str(trigger.name)) : py::none(),
              std::move(members)));
          if (!sglang) break;  // one combination: the trigger is not given
        }
      }
    }
  }
  return combinations;
}

Input Generated(const std::string& format, std::uint64_t seed,
                std::uint64_t run, int size,
                const std::optional<verify::GeneratedModel>& model,
                const checking::ImplementedOptions& implemented = {}) {
  if (format == "batch") {
    verify::NamedInput named = verify::GeneratedInput(seed, run, size);
    return Input{std::move(named.name), std::move(named.input)};
  }
  if (format == "requests") {
    // As verify's Generate: GeneratedModel{} is the plain document.
    verify::NamedReplayInput named = verify::GeneratedReplayInput(
        seed, run, size, model.value_or(verify::GeneratedModel{}), implemented);
    return Input{std::move(named.name), std::move(named.input)};
  }
  throw py::value_error("format: expected 'batch' or 'requests', got '" +
                        format + "'");
}

Input ParseInput(const std::string& text, const std::string& kind,
                 const std::string& name) {
  if (kind == "batch") return Input{name, ParseBatchInput(text)};
  if (kind == "requests") return Input{name, ParseReplayDocument(text)};
  if (kind == "batch-case") return Input{name, ParseCaseFile(text).input};
  if (kind == "requests-case") {
    return Input{name, ParseReplayCaseFile(text).input};
  }
  throw py::value_error(
      "kind: expected batch, requests, batch-case or "
      "requests-case, got '" +
      kind + "'");
}

std::size_t RequestCount(const Input& input) {
  return std::visit(
      [](const auto& document) { return document.requests.size(); },
      input.input);
}

// The options a cache implements, as run()'s `implemented` dict gives them
// (lists of str under models, match_limits, policies, page_sizes,
// capacities). std::invalid_argument ("policies: unknown policy ...")
// becomes a ValueError.
checking::ImplementedOptions ParseImplemented(
    std::map<std::string, std::vector<std::string>> values) {
  return checking::ParseImplementedOptions(
      checking::ImplementedOptionValues{
          .models = std::move(values["models"]),
          .match_limits = std::move(values["match_limits"]),
          .policies = std::move(values["policies"]),
          .page_sizes = std::move(values["page_sizes"]),
          .capacities = std::move(values["capacities"])},
      checking::ImplementedOptionNames{.models = "models",
                                       .match_limits = "match_limits",
                                       .policies = "policies",
                                       .page_sizes = "page_sizes",
                                       .capacities = "capacities"});
}

// run()'s overrides of generated replay documents' options. Raises
// ValueError for page size 0 and, through ParsePolicy, an unknown policy.
Overrides MakeOverrides(bool override_capacity,
                        std::optional<std::uint64_t> capacity,
                        const std::optional<std::string>& policy,
                        std::optional<std::uint64_t> page_size) {
  Overrides overrides;
  if (override_capacity) overrides.capacity = capacity.value_or(kUnbounded);
  if (policy) overrides.policy = ParsePolicy(*policy);
  if (page_size && *page_size == 0) {
    throw py::value_error("page_size: expected 1 or more, got 0");
  }
  overrides.page_size = page_size;
  return overrides;
}

// What run() counts while it checks inputs, and its result dict.
class RunTally {
 public:
  RunTally(const Target& target, ShrinkBudget budget)
      : target_(target), budget_(budget) {}

  // Checks one input: false at the first failure (then kept for Result).
  bool Check(const Input& input) {
    std::optional<py::dict> report = CheckOne(target_, input, budget_);
    if (report && report->contains("refused")) {
      if (skipped_++ == 0) first_refusal_ = (*report)["refused"];
      return true;
    }
    if (report) {
      failure_ = std::move(report);
      return false;
    }
    ++inputs_;
    requests_ += RequestCount(input);
    return true;
  }

  // {'inputs', 'requests', 'skipped', 'skip_reason', 'failure'}.
  py::dict Result() {
    py::dict result;
    result["inputs"] = inputs_;
    result["requests"] = requests_;
    result["skipped"] = skipped_;
    result["skip_reason"] = first_refusal_;
    result["failure"] =
        failure_ ? py::object(*std::move(failure_)) : py::object(py::none());
    return result;
  }

 private:
  const Target& target_;
  ShrinkBudget budget_;
  std::uint64_t inputs_ = 0;
  std::uint64_t requests_ = 0;
  std::uint64_t skipped_ = 0;
  py::object first_refusal_ = py::none();
  std::optional<py::dict> failure_;
};

// kvprefix._testing.run (see its doc string in DefineChecks).
py::dict Run(py::object make_cache, py::object options_type,
             const std::vector<const Input*>& given, const std::string& format,
             std::uint64_t runs, std::uint64_t seed, int max_size,
             bool override_capacity, std::optional<std::uint64_t> capacity,
             std::optional<std::string> policy,
             std::optional<std::uint64_t> page_size,
             const std::optional<verify::GeneratedModel>& model,
             std::map<std::string, std::vector<std::string>> implemented_values,
             const std::string& compare, bool shrink,
             std::size_t max_shrink_attempts, double shrink_seconds) {
  const checking::ImplementedOptions implemented =
      ParseImplemented(std::move(implemented_values));
  verify::CheckGeneratedOptions(model, implemented);
  const Target target(std::move(make_cache), std::move(options_type),
                      ParseCompare(compare));
  const Overrides overrides =
      MakeOverrides(override_capacity, capacity, policy, page_size);
  RunTally tally(target,
                 ShrinkBudget{shrink, max_shrink_attempts, shrink_seconds});
  for (const Input* input : given) {
    if (!tally.Check(*input)) return tally.Result();
  }
  for (std::uint64_t run = 0; run < runs; ++run) {
    Input input =
        Generated(format, seed, run, verify::GeneratorSize(run, runs, max_size),
                  model, implemented);
    if (auto* replay = std::get_if<ReplayInput>(&input.input)) {
      ApplyOverrides(overrides, *replay);
    }
    if (!tally.Check(input)) return tally.Result();
  }
  return tally.Result();
}

// kvprefix._testing.Input: an input and what the checker reads of it.
void DefineInputClass(py::module_& m) {
  py::class_<Input>(m, "Input",
                    "One batch input (SPEC §4) or replay document (SPEC §8).")
      .def_property_readonly(
          "format",
          [](const Input& input) {
            return std::holds_alternative<BatchInput>(input.input) ? "batch"
                                                                   : "requests";
          },
          "'batch' (SPEC §4) or 'requests' (a SPEC §8 replay document).")
      .def_readonly("name", &Input::name, "Where the input came from.")
      .def_property_readonly(
          "document",
          [](const Input& input) {
            return std::visit(
                [](const auto& document) { return DocumentJson(document); },
                input.input);
          },
          "The input as compact JSON (SPEC §4 or §8), one line.")
      .def_property_readonly(
          "reference_answer",
          [](const Input& input) {
            return std::visit(
                [](const auto& document) {
                  std::string json;
                  AppendMatchesJson(document.requests,
                                    verify::ReferenceMatches(document), json);
                  return json;
                },
                input.input);
          },
          "The reference's SPEC §5 answer as JSON, one line (a replay "
          "document's: each request's match at step 1).")
      .def_property_readonly("requests", &RequestCount,
                             "The number of requests.")
      .def_property_readonly(
          "options",
          [](const Input& input) {
            const auto* replay = std::get_if<ReplayInput>(&input.input);
            return OptionsFields(replay ? replay->options : CacheOptions{});
          },
          "The fields of kvprefix.testing.CacheOptions the cache of the "
          "input is built with: (capacity or None, policy, page_size, model, "
          "match_limit, trigger); a batch input's are the defaults.");
}

// The generators and parsers: GeneratedModel, generated_model,
// model_combinations, output_modes, parse_input, generated_input.
void DefineInputFunctions(py::module_& m) {
  py::class_<verify::GeneratedModel>(
      m, "GeneratedModel",
      "The SPEC §9 options of generated replay documents, as verify's "
      "--model, --match-limit and --trigger give them (generated_model "
      "makes one).")
      .def_property_readonly("flags", &verify::GeneratedModelFlags,
                             "The verify flags that generate the same "
                             "documents, e.g. '--model vllm'.");
  m.def("generated_model", &ReadGeneratedModel, py::arg("given"),
        py::arg("policy"),
        "The GeneratedModel of check()'s model, match_limit and trigger, "
        "those given as the members of the dict `given`, or None when it is "
        "empty; `policy` the policy forced on the documents (a str) or "
        "None. Raises ValueError naming the argument for a name not listed "
        "(with the choices) or a combination SPEC §9.4 refuses.");
  m.def("model_combinations", &ModelCombinations,
        "Every combination of SPEC §9 options SPEC §9.4 accepts: a list of "
        "(model, match_limit, policy, trigger or None, members), members "
        "the dict of what a replay document holds for it besides requests "
        "and page_size.");
  m.def(
      "output_modes",
      [] {
        std::vector<std::string_view> names;
        for (const auto& entry : kOutputModes) names.push_back(entry.name);
        return names;
      },
      "SPEC §10.1's \"output\" values (kOutputModes), the default first.");

  m.def("parse_input", &ParseInput, py::arg("text"), py::arg("kind"),
        py::arg("name"),
        "Parses `text` as kind 'batch' (SPEC §4), 'requests' (SPEC §8 replay "
        "document), 'batch-case' or 'requests-case' (case files, "
        "io/case_file.h; their expected answer is not used). Raises "
        "kvprefix.InputError naming the JSON location.");
  m.def(
      "generated_input",
      [](const std::string& format, std::uint64_t seed, std::uint64_t run,
         int size, const std::optional<verify::GeneratedModel>& model) {
        return Generated(format, seed, run, size, model);
      },
      py::arg("format"), py::arg("seed"), py::arg("run"), py::arg("size"),
      py::arg("model") = py::none(),
      "Generated input number `run` of `seed` at generator size `size`: "
      "what `kvprefix verify --seed SEED` checks as that input ('batch'), "
      "or with --format requests ('requests'; with `model`, a "
      "GeneratedModel, also with its flags).");
}

// check_input and run: a Python cache checked against the reference.
void DefineChecks(py::module_& m) {
  m.def(
      "check_input",
      [](py::object make_cache, py::object options_type, const Input& input,
         const std::string& compare, bool shrink,
         std::size_t max_shrink_attempts, double shrink_seconds) -> py::object {
        const Target target(std::move(make_cache), std::move(options_type),
                            ParseCompare(compare));
        std::optional<py::dict> report =
            CheckOne(target, input,
                     ShrinkBudget{shrink, max_shrink_attempts, shrink_seconds});
        return report ? py::object(*std::move(report)) : py::object(py::none());
      },
      py::arg("make_cache"), py::arg("options_type"), py::arg("input"),
      py::arg("compare"), py::arg("shrink"), py::arg("max_shrink_attempts"),
      py::arg("shrink_seconds"),
      "Runs `input` on make_cache(options_type(*input.options)) "
      "and the reference; None when they agree, else the failure report "
      "(a dict; shrunk if `shrink`).");

  m.def("run", &Run, py::arg("make_cache"), py::arg("options_type"),
        py::arg("given"), py::arg("format"), py::arg("runs"), py::arg("seed"),
        py::arg("max_size"), py::arg("override_capacity"), py::arg("capacity"),
        py::arg("policy"), py::arg("page_size"), py::arg("model"),
        py::arg("implemented"), py::arg("compare"), py::arg("shrink"),
        py::arg("max_shrink_attempts"), py::arg("shrink_seconds"),
        "Checks the given inputs, then `runs` generated inputs of `format` "
        "(replay documents of `model`, a GeneratedModel or None, their "
        "options overridden as asked), stopping at "
        "the first failure: {'inputs', 'requests', 'skipped' (inputs whose "
        "options make_cache refused with kvprefix.Refused), 'skip_reason' (the "
        "first refusal, or None), 'failure' (None or the report)}; "
        "`implemented` the options the cache implements (a dict of models, "
        "match_limits, policies, page_sizes, capacities: lists of str), which "
        "generated replay documents keep to.");
}

}  // namespace

void DefineTestingModule(py::module_& parent) {
  py::module_ m = parent.def_submodule(
      "_testing",
      "The C++ half of kvprefix.testing (use that module): generated and "
      "parsed inputs, the reference's answers, and the check of a Python "
      "cache with verify's shrinker.");
  DefineInputClass(m);
  DefineInputFunctions(m);
  DefineChecks(m);
}

}  // namespace kvprefix::python_testing
