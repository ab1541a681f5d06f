// The `kvprefix` Python module (pybind11): the seed's function
// find_prefix_matches(cached_sequences, requests) returning the seed's exact
// dictionary, PrefixIndex for online insert/match, replay (SPEC §3, §8,
// §9, and §10's serving replay) and curve on any registered engine;
// read_trace, the tool's Mooncake trace reader; and run_command_line, the
// tool's own command line (cli/run.h) for `python3 -m kvprefix`.
//
// Input conversion is the part that decides speed from Python, so it is done
// here in C++ with the CPython API, never with a Python-level loop per token:
//  * a buffer (NumPy array, array.array, memoryview) of a native integer type
//    is read through the buffer protocol; a C-contiguous int32 buffer is one
//    memcpy into the SequenceList;
//  * any other sequence (list, tuple, ...) goes through PySequence_Fast, and
//    each item must be an int (or have __index__, like NumPy integer
//    scalars), read with PyLong_AsLongLongAndOverflow.
// Errors are the ones a Python user expects, and name the place
// (`requests[3][17]`): TypeError for a non-sequence, text, a float, a bool or
// a float/bool buffer; OverflowError for a token outside int32; ValueError for
// an unknown engine; kvprefix.CapacityError (a MemoryError) when an engine
// runs out of node IDs.
//
// The GIL is released while the engine inserts and matches; it is held while
// reading Python objects and building the result.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cli/capacity_search.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "engines/registry.h"
#include "io/input_error.h"
#include "io/json_input.h"
#include "io/json_output.h"
#include "io/json_strings.h"
#include "io/serve_answer.h"
#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/namespaces.h"
#include "kvprefix/options_refused.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"
#include "optimized/radix_trie.h"
#include "plugin/plugin_engine.h"
#include "python/named_values.h"
#include "python/testing_module.h"
#include "router/router_spec.h"
#include "serve/routed_replay.h"
#include "serve/serving_replay.h"

namespace kvprefix {
namespace {

namespace py = pybind11;
using python::ToNamedValue;

// Raises the Python exception `type` with `message` through pybind11.
[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

std::string TypeName(PyObject* object) { return Py_TYPE(object)->tp_name; }

// str, bytes and bytearray are sequences (and bytes are integer buffers), but
// text passed as tokens is always a caller's mistake, so it is refused.
bool IsText(PyObject* object) {
  return PyUnicode_Check(object) || PyBytes_Check(object) ||
         PyByteArray_Check(object);
}

// True for numpy.bool_ scalars, which NumPy 1.x still lets pass as an index.
// NumPy is looked up only once the caller has imported it; the type is then
// kept (a strong reference, never released) so that the lookup is done once.
bool IsNumpyBool(PyObject* object) {
  static PyObject* bool_type = nullptr;  // guarded by the GIL
  if (bool_type == nullptr) {
    py::object numpy = py::reinterpret_steal<py::object>(
        PyImport_GetModule(py::str("numpy").ptr()));
    if (!numpy) {
      PyErr_Clear();
      return false;
    }
    bool_type = py::object(numpy.attr("bool_")).release().ptr();
  }
  return PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(bool_type));
}

// Converts one Python object to a token: an int, or an object with
// __index__ (NumPy integer scalars). Bools and floats are TypeErrors.
// `sequence` and `index` name its place for error messages.
Token ToToken(PyObject* item, std::string_view sequence, Py_ssize_t index) {
  const auto where = [&] {
    return std::string(sequence) + "[" + std::to_string(index) + "]";
  };
  if (PyBool_Check(item) || !PyIndex_Check(item) || IsNumpyBool(item)) {
    Raise(PyExc_TypeError,
          where() + ": expected an int token, got " + TypeName(item));
  }
  py::object number = py::reinterpret_steal<py::object>(PyNumber_Index(item));
  if (!number) throw py::error_already_set();
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || !std::in_range<Token>(value)) {
    Raise(PyExc_OverflowError, where() + ": token " +
                                   py::str(number).cast<std::string>() +
                                   " is outside the int32 range");
  }
  return static_cast<Token>(value);
}

// Appends the `length` elements of type T found `stride` bytes apart.
template <typename T>
void AppendBufferTokens(const char* data, Py_ssize_t length, Py_ssize_t stride,
                        const std::string& where, SequenceList& out) {
  for (Py_ssize_t i = 0; i < length; ++i) {
    T value;
    std::memcpy(&value, data + i * stride, sizeof(T));
    if (!std::in_range<Token>(value)) {
      Raise(PyExc_OverflowError, where + "[" + std::to_string(i) + "]: token " +
                                     std::to_string(value) +
                                     " is outside the int32 range");
    }
    out.PushToken(static_cast<Token>(value));
  }
}

// Appends a one-dimensional buffer of native-endian integers as one sequence.
void AppendBuffer(PyObject* object, const std::string& where,
                  SequenceList& out) {
  Py_buffer view;
  if (PyObject_GetBuffer(object, &view, PyBUF_RECORDS_RO) != 0) {
    throw py::error_already_set();
  }
  // Releases the view however this function exits.
  std::unique_ptr<Py_buffer, decltype(&PyBuffer_Release)> release(
      &view, &PyBuffer_Release);
  std::string_view format = view.format == nullptr ? "B" : view.format;
  if (!format.empty() &&
      (format[0] == '@' || format[0] == '=' ||
       (format[0] == '<' && PY_LITTLE_ENDIAN) ||
       ((format[0] == '>' || format[0] == '!') && !PY_LITTLE_ENDIAN))) {
    format.remove_prefix(1);
  }
  static constexpr std::string_view kSigned = "bhilqn";
  static constexpr std::string_view kUnsigned = "BHILQN";
  const bool is_signed =
      format.size() == 1 && kSigned.find(format[0]) != std::string_view::npos;
  const bool is_unsigned =
      format.size() == 1 && kUnsigned.find(format[0]) != std::string_view::npos;
  if (!is_signed && !is_unsigned) {
    Raise(PyExc_TypeError, where + ": expected a buffer of integers, got " +
                               TypeName(object) + " of format '" +
                               std::string(view.format ? view.format : "") +
                               "'");
  }
  if (view.ndim != 1) {
    Raise(PyExc_TypeError, where + ": expected a one-dimensional buffer, got " +
                               std::to_string(view.ndim) + " dimensions");
  }
  const Py_ssize_t length = view.shape[0];
  const Py_ssize_t stride = view.strides[0];
  const char* data = static_cast<const char*>(view.buf);
  if (is_signed && view.itemsize == sizeof(Token) && stride == sizeof(Token)) {
    out.Append(TokenSpan(reinterpret_cast<const Token*>(data), length));
    return;
  }
  using Reader = void (*)(const char*, Py_ssize_t, Py_ssize_t,
                          const std::string&, SequenceList&);
  Reader append = nullptr;
  switch (view.itemsize) {
    case 1:
      append = is_signed ? &AppendBufferTokens<std::int8_t>
                         : &AppendBufferTokens<std::uint8_t>;
      break;
    case 2:
      append = is_signed ? &AppendBufferTokens<std::int16_t>
                         : &AppendBufferTokens<std::uint16_t>;
      break;
    case 4:
      append = is_signed ? &AppendBufferTokens<std::int32_t>
                         : &AppendBufferTokens<std::uint32_t>;
      break;
    case 8:
      append = is_signed ? &AppendBufferTokens<std::int64_t>
                         : &AppendBufferTokens<std::uint64_t>;
      break;
    default:
      Raise(PyExc_TypeError, where + ": unsupported integer size " +
                                 std::to_string(view.itemsize));
  }
  append(data, length, stride, where, out);
  out.CloseSequence();
}

// A new reference to a list or tuple holding the items of `object`, which
// must be a sequence but not text. `what` describes the expected shape.
py::object FastSequence(PyObject* object, const std::string& where,
                        std::string_view what) {
  if (!IsText(object) && PySequence_Check(object)) {
    py::object items =
        py::reinterpret_steal<py::object>(PySequence_Fast(object, ""));
    if (!items) throw py::error_already_set();
    return items;
  }
  Raise(PyExc_TypeError, where + ": expected " + std::string(what) + ", got " +
                             TypeName(object));
}

// Appends one sequence of tokens (list, tuple or integer buffer) to `out`.
// Returns the list or tuple of its items (null for a buffer), which
// SuffixList() may share int objects from.
py::object AppendSequence(PyObject* object, const std::string& where,
                          SequenceList& out) {
  if (!IsText(object) && PyObject_CheckBuffer(object)) {
    AppendBuffer(object, where, out);
    return py::object();
  }
  py::object items = FastSequence(object, where, "a sequence of int tokens");
  // Size and items are read again on every step: an __index__ method is
  // Python code and may resize the caller's list under us.
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.ptr()); ++i) {
    PyObject* token = PySequence_Fast_GET_ITEM(items.ptr(), i);
    // Exact ints, by far the common case, skip the __index__ protocol.
    if (PyLong_CheckExact(token)) {
      int overflow = 0;
      const long long value = PyLong_AsLongLongAndOverflow(token, &overflow);
      if (overflow == 0 && std::in_range<Token>(value)) {
        out.PushToken(static_cast<Token>(value));
        continue;
      }
    }
    const py::object held = py::reinterpret_borrow<py::object>(token);
    out.PushToken(ToToken(held.ptr(), where, i));
  }
  out.CloseSequence();
  return items;
}

// Token sequences converted from Python: the tokens, and for each sequence
// the items AppendSequence() returned.
struct ConvertedSequences {
  SequenceList tokens;
  std::vector<py::object> items;
};

// Converts a sequence of token sequences; `name` is the argument's name.
ConvertedSequences ConvertSequences(py::handle sequences,
                                    const std::string& name) {
  py::object items =
      FastSequence(sequences.ptr(), name, "a sequence of token sequences");
  ConvertedSequences converted;
  converted.tokens.Reserve(PySequence_Fast_GET_SIZE(items.ptr()), 0);
  // As in AppendSequence, Python code may resize the list while it is read.
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.ptr()); ++i) {
    const py::object sequence = py::reinterpret_borrow<py::object>(
        PySequence_Fast_GET_ITEM(items.ptr(), i));
    converted.items.push_back(
        AppendSequence(sequence.ptr(), name + "[" + std::to_string(i) + "]",
                       converted.tokens));
  }
  return converted;
}

// One namespace (SPEC §8.1) of the argument item `where`: a str of at most
// kMaxNamespaceBytes bytes of UTF-8. Raises TypeError for anything else,
// ValueError for a longer one.
std::string ToNamespace(py::handle name, const std::string& where) {
  if (!PyUnicode_Check(name.ptr())) {
    Raise(PyExc_TypeError, where + ": expected a namespace (a str), got " +
                               TypeName(name.ptr()));
  }
  Py_ssize_t size = 0;
  const char* bytes = PyUnicode_AsUTF8AndSize(name.ptr(), &size);
  if (bytes == nullptr) throw py::error_already_set();  // lone surrogates
  if (static_cast<std::size_t>(size) > kMaxNamespaceBytes) {
    Raise(PyExc_ValueError,
          fmt::format("{}: expected a namespace of at most {} bytes of "
                      "UTF-8, found {} bytes",
                      where, kMaxNamespaceBytes, size));
  }
  return std::string(bytes, static_cast<std::size_t>(size));
}

// Raises ValueError unless the argument `name` has `found` items, `count`,
// one `noun` per item of the argument `sequences_name`: "namespaces:
// expected 3 namespaces (one per item of requests), found 2".
void CheckOnePerItem(const std::string& name, std::size_t found,
                     std::size_t count, std::string_view noun,
                     const std::string& sequences_name) {
  if (found != count) {
    Raise(
        PyExc_ValueError,
        fmt::format("{}: expected {} {}{} (one per item of {}), found {}", name,
                    count, noun, count == 1 ? "" : "s", sequences_name, found));
  }
}

// The argument `name`, None (every sequence in "": an empty vector) or a
// sequence of one namespace (ToNamespace) per sequence of the argument
// `sequences_name`, which has `count`. Raises TypeError for a
// non-sequence or a non-str item, ValueError for another length.
std::vector<std::string> ToNamespaces(py::handle namespaces,
                                      const std::string& name,
                                      std::size_t count,
                                      const std::string& sequences_name) {
  std::vector<std::string> names;
  if (namespaces.is_none()) return names;
  const py::object items =
      FastSequence(namespaces.ptr(), name, "a sequence of str namespaces");
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.ptr()); ++i) {
    names.push_back(ToNamespace(PySequence_Fast_GET_ITEM(items.ptr(), i),
                                name + "[" + std::to_string(i) + "]"));
  }
  CheckOnePerItem(name, names.size(), count, "namespace", sequences_name);
  return names;
}

// Interned dictionary keys, made once and kept for the process's lifetime
// (never released, so no destructor runs after the interpreter is gone).
PyObject* Key(const char* name) { return PyUnicode_InternFromString(name); }

// request[begin:] as a list of Python ints. Creating an int object costs
// more than matching its token, so where the caller's list or tuple `items`
// still holds an exact int of the same value at the same place, that object
// is shared instead (ints are immutable). The check is needed because another
// thread may have changed the caller's list while the GIL was released.
py::list SuffixList(TokenSpan request, std::size_t begin, py::handle items) {
  const TokenSpan suffix = request.subspan(begin);
  PyObject** source = nullptr;
  if (items && static_cast<std::size_t>(
                   PySequence_Fast_GET_SIZE(items.ptr())) == request.size()) {
    source = PySequence_Fast_ITEMS(items.ptr()) + begin;
  }
  py::list tokens(suffix.size());
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    PyObject* token = nullptr;
    if (source != nullptr && PyLong_CheckExact(source[i])) {
      int overflow = 0;
      const long value = PyLong_AsLongAndOverflow(source[i], &overflow);
      if (overflow == 0 && value == suffix[i]) token = Py_NewRef(source[i]);
    }
    if (token == nullptr) {
      token = PyLong_FromLong(suffix[i]);
      if (token == nullptr) throw py::error_already_set();
    }
    PyList_SET_ITEM(tokens.ptr(), static_cast<Py_ssize_t>(i), token);
  }
  return tokens;
}

// The seed's match dictionary for `match` of `request`, whose Python items
// (or null) `items` are.
py::dict MatchDict(const Match& match, TokenSpan request, py::handle items) {
  static PyObject* const kMatchedLength = Key("matched_length");
  static PyObject* const kCacheNode = Key("cache_node");
  static PyObject* const kUncachedSuffix = Key("uncached_suffix");
  py::list tokens = SuffixList(request, match.matched_length, items);
  py::dict result;
  result[py::handle(kMatchedLength)] = py::int_(match.matched_length);
  result[py::handle(kCacheNode)] = py::int_(match.cache_node);
  result[py::handle(kUncachedSuffix)] = std::move(tokens);
  return result;
}

// `value` as an int from `min` to `max`; `name` is the argument's name.
// Raises TypeError for a non-int (bools included), ValueError out of range.
std::uint64_t ToUint(py::handle value, const char* name, std::uint64_t min,
                     std::uint64_t max) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    Raise(PyExc_TypeError,
          std::string(name) + " must be an int, not " + TypeName(value.ptr()));
  }
  const py::int_ number = py::reinterpret_borrow<py::object>(value);
  if (number < py::int_(min) || number > py::int_(max)) {
    Raise(PyExc_ValueError, std::string(name) + " must be from " +
                                std::to_string(min) + " to " +
                                std::to_string(max) + ", not " +
                                std::string(py::str(py::handle(number))));
  }
  return number.cast<std::uint64_t>();
}

// The name of the policy a cache has when none is given: "lru".
std::string DefaultPolicyName() {
  return std::string(EvictionPolicyName(CacheOptions{}.policy));
}

// The cache model arguments of SPEC §9.4 (model, match_limit, trigger;
// None: the default, match_limit DefaultMatchLimit(model)), set on
// `options` and checked with its policy by FindModelOptionsProblem. Raises
// ValueError naming the argument ("trigger: a trigger needs model
// 'sglang'; ...").
void SetModelOptions(py::handle model, py::handle match_limit,
                     py::handle trigger, CacheOptions& options) {
  if (!model.is_none()) {
    options.model = ToNamedValue(kCacheModels, model, "model");
  }
  options.match_limit =
      match_limit.is_none()
          ? DefaultMatchLimit(options.model)
          : ToNamedValue(kMatchLimits, match_limit, "match_limit");
  if (!trigger.is_none()) {
    options.trigger = ToNamedValue(kEvictionTriggers, trigger, "trigger");
  }
  if (const auto problem =
          FindModelOptionsProblem(options, !trigger.is_none())) {
    Raise(PyExc_ValueError,
          std::string(problem->member) + ": " + problem->message);
  }
}

// The engine named by `engine` (a str, or None for model `model`'s: the
// default engine if it implements the model, else the model's last, the
// reference being first). Raises TypeError for anything else.
std::string EngineOrDefault(py::handle engine, CacheModel model) {
  if (!engine.is_none() && !py::isinstance<py::str>(engine)) {
    Raise(PyExc_TypeError,
          "engine must be a str or None, not " + TypeName(engine.ptr()));
  }
  if (!engine.is_none()) return engine.cast<std::string>();
  const std::vector<std::string_view> names = EngineNames(model);
  const bool has_default =
      std::find(names.begin(), names.end(), DefaultEngineName()) != names.end();
  return std::string(has_default ? DefaultEngineName() : names.back());
}

// The cache of SPEC §8 from Python arguments: capacity None (unbounded) or
// an int >= 0, policy a name of kEvictionPolicies, page_size an int from 1
// to 2^31 - 1.
// Raises ValueError naming the argument, TypeError for a wrong type.
CacheOptions ToCacheOptions(py::handle capacity, const std::string& policy,
                            py::handle page_size) {
  CacheOptions options;
  if (!capacity.is_none()) {
    options.capacity = ToUint(capacity, "capacity", 0, kUnbounded);
  }
  const auto parsed = ParseEvictionPolicy(policy);
  if (!parsed) {
    Raise(PyExc_ValueError, "policy must be " + EvictionPolicyChoices('\'') +
                                ", not '" + policy + "'");
  }
  options.policy = *parsed;
  options.page_size = ToUint(page_size, "page_size", 1, kMaxPageSize);
  return options;
}

// Raises ValueError listing the engines unless `engine` names one.
void CheckEngineOrRaise(const std::string& engine) {
  if (!IsEngineName(engine)) {
    std::string valid;
    for (std::string_view name : EngineNames()) {
      valid += valid.empty() ? "" : ", ";
      valid += name;
    }
    Raise(PyExc_ValueError,
          "unknown engine '" + engine + "' (available: " + valid + ")");
  }
}

std::unique_ptr<PrefixIndex> MakeEngineOrRaise(
    const std::string& engine, const CacheOptions& options = {}) {
  CheckEngineOrRaise(engine);
  return MakeEngine(engine, options);
}

// {"matches": [...]} for matches[i] answering requests[i].
py::dict MatchesDict(const std::vector<Match>& matches,
                     const ConvertedSequences& requests) {
  py::list entries(matches.size());
  for (std::size_t i = 0; i < matches.size(); ++i) {
    entries[i] = MatchDict(matches[i], requests.tokens[i], requests.items[i]);
  }
  py::dict result;
  result["matches"] = std::move(entries);
  return result;
}

// The arguments of replay() that every replay takes (SPEC §3, §8, §9), as
// Python gave them.
struct ReplayArguments {
  py::handle requests;
  py::handle capacity;
  std::string policy;
  py::handle page_size;
  py::handle engine;
  py::handle model;
  py::handle match_limit;
  py::handle trigger;
  py::handle namespaces;
};

// The cache `arguments` name (ToCacheOptions, SetModelOptions).
CacheOptions ReplayCacheOptions(const ReplayArguments& arguments) {
  CacheOptions options =
      ToCacheOptions(arguments.capacity, arguments.policy, arguments.page_size);
  SetModelOptions(arguments.model, arguments.match_limit, arguments.trigger,
                  options);
  return options;
}

// {"matches": [...]} and the summary `kvprefix replay` prints for a trace,
// under the same names: the engine, the cache, the counts of `summary`, the
// hit ratio, and the index's node, eviction and memory counts at the end.
py::dict ReplayPy(const ReplayArguments& arguments) {
  const CacheOptions options = ReplayCacheOptions(arguments);
  const std::string engine = EngineOrDefault(arguments.engine, options.model);
  std::unique_ptr<PrefixIndex> index = MakeEngineOrRaise(engine, options);
  const ConvertedSequences queries =
      ConvertSequences(arguments.requests, "requests");
  const std::vector<std::string> names = ToNamespaces(
      arguments.namespaces, "namespaces", queries.tokens.size(), "requests");
  std::vector<Match> matches;
  ReplaySummary summary;
  std::uint64_t nodes = 0;
  std::uint64_t evictions = 0;
  std::size_t memory_bytes = 0;
  {
    py::gil_scoped_release release;
    matches.reserve(queries.tokens.size());
    summary = Replay(*index, queries.tokens, names,
                     [&](std::size_t, TokenSpan, const Match& match) {
                       matches.push_back(match);
                     });
    nodes = index->node_count();
    evictions = index->evicted_count();
    memory_bytes = index->memory_bytes();
    index.reset();
  }
  py::dict result = MatchesDict(matches, queries);
  result["engine"] = engine;
  result["capacity"] = options.bounded()
                           ? py::object(py::int_(options.capacity))
                           : py::object(py::none());
  result["policy"] = EvictionPolicyName(options.policy);
  result["page_size"] = options.page_size;
  result["model"] = NameOf(kCacheModels, options.model);
  result["match_limit"] = NameOf(kMatchLimits, options.match_limit);
  if (options.model == CacheModel::kSglang) {
    result["trigger"] = NameOf(kEvictionTriggers, options.trigger);
  }
  result["requests"] = summary.requests;
  result["request_tokens"] = summary.request_tokens;
  result["matched_tokens"] = summary.matched_tokens;
  result["hit_ratio"] = summary.hit_ratio();
  result["nodes"] = nodes;
  result["peak_nodes"] = summary.peak_nodes;
  result["evictions"] = evictions;
  result["memory_bytes"] = memory_bytes;
  return result;
}

// SPEC §10's arguments of replay(), each None when not given.
struct ServeArguments {
  py::handle arrivals_us;
  py::handle output_lengths;
  py::handle max_running;
  py::handle prefill_us_per_token;
  py::handle decode_us_per_token;
  py::handle overhead_us;
  py::handle output;

  // True when one is given: the call is a serving replay.
  bool given() const {
    return !(arrivals_us.is_none() && output_lengths.is_none() &&
             max_running.is_none() && prefill_us_per_token.is_none() &&
             decode_us_per_token.is_none() && overhead_us.is_none() &&
             output.is_none());
  }
};

// `value` as ToUint reads it, or `absent` for None.
std::uint64_t ToUintOr(py::handle value, const char* name, std::uint64_t min,
                       std::uint64_t max, std::uint64_t absent) {
  return value.is_none() ? absent : ToUint(value, name, min, max);
}

// SPEC §10.1's worker options of `arguments`, the defaults where None.
// Raises TypeError or ValueError naming the argument (ToUint,
// ToNamedValue).
ServeOptions ToServeOptions(const ServeArguments& arguments) {
  const ServeOptions defaults;
  ServeOptions options;
  options.max_running = ToUintOr(arguments.max_running, "max_running", 1,
                                 kMaxRunning, defaults.max_running);
  options.prefill_us_per_token =
      ToUintOr(arguments.prefill_us_per_token, "prefill_us_per_token", 0,
               kMaxServeRate, defaults.prefill_us_per_token);
  options.decode_us_per_token =
      ToUintOr(arguments.decode_us_per_token, "decode_us_per_token", 0,
               kMaxServeRate, defaults.decode_us_per_token);
  options.overhead_us = ToUintOr(arguments.overhead_us, "overhead_us", 0,
                                 kMaxServeRate, defaults.overhead_us);
  options.output = arguments.output.is_none()
                       ? defaults.output
                       : ToNamedValue(kOutputModes, arguments.output, "output");
  return options;
}

// The argument `name`: None (an empty vector: every value 0) or a sequence
// of `count` ints (one per request) from 0 to 2^53, SPEC §10.1's times
// and lengths. Raises TypeError for a non-sequence or an item that is not
// an int (bools included), ValueError for an item out of range
// ("arrivals_us[2] must be from 0 to ...") or another length.
std::vector<std::uint64_t> ToPerRequestInts(py::handle values,
                                            const std::string& name,
                                            std::size_t count) {
  std::vector<std::uint64_t> result;
  if (values.is_none()) return result;
  const py::object items =
      FastSequence(values.ptr(), name, "a sequence of ints");
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.ptr()); ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(items.ptr(), i);
    // Exact ints, the common case, skip building the item's name.
    if (PyLong_CheckExact(item)) {
      int overflow = 0;
      const long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
      if (overflow == 0 && value >= 0 &&
          static_cast<std::uint64_t>(value) <= kMaxServeTime) {
        result.push_back(static_cast<std::uint64_t>(value));
        continue;
      }
    }
    const std::string where = name + "[" + std::to_string(i) + "]";
    if (IsNumpyBool(item)) {
      Raise(PyExc_TypeError, where + " must be an int, not " + TypeName(item));
    }
    const py::object held = py::reinterpret_borrow<py::object>(item);
    result.push_back(ToUint(held, where.c_str(), 0, kMaxServeTime));
  }
  CheckOnePerItem(name, result.size(), count, "int", "requests");
  return result;
}

// Raises ValueError at the first of `values` (the argument `name`) smaller
// than the one before it (SPEC §10.1: arrivals are non-decreasing).
void CheckNonDecreasing(const std::vector<std::uint64_t>& values,
                        const std::string& name) {
  for (std::size_t i = 1; i < values.size(); ++i) {
    if (values[i] < values[i - 1]) {
      Raise(PyExc_ValueError,
            fmt::format("{}[{}]: {} is smaller than the arrival before it "
                        "({}); arrivals must be non-decreasing",
                        name, i, values[i], values[i - 1]));
    }
  }
}

// The SPEC §10 document of replay()'s arguments on the cache `options`.
ServeInput ToServeInput(const ReplayArguments& arguments,
                        const ServeArguments& serve,
                        const CacheOptions& options) {
  ServeInput input;
  input.replay.options = options;
  input.serve = ToServeOptions(serve);
  input.replay.requests =
      ConvertSequences(arguments.requests, "requests").tokens;
  const std::size_t count = input.replay.requests.size();
  input.replay.namespaces =
      ToNamespaces(arguments.namespaces, "namespaces", count, "requests");
  input.arrivals_us = ToPerRequestInts(serve.arrivals_us, "arrivals_us", count);
  CheckNonDecreasing(input.arrivals_us, "arrivals_us");
  input.output_lengths =
      ToPerRequestInts(serve.output_lengths, "output_lengths", count);
  return input;
}

// The engines with a request lifecycle for `model` (HasRequestLifecycle),
// comma-separated: "reference, hash".
std::string LifecycleEngines(CacheModel model) {
  std::string names;
  for (const std::string_view name : EngineNames(model)) {
    if (!HasRequestLifecycle(name, model)) continue;
    names += names.empty() ? "" : ", ";
    names += name;
  }
  return names;
}

// The serving cache of `engine` for `input` (MakeServingCache). Raises
// ValueError for an unknown engine, one that lacks the model, or one that
// answers one request at a time (SPEC §10.7) asked for more, naming the
// engines that have a request lifecycle for the model.
std::unique_ptr<ServingCache> MakeServingCacheOrRaise(const std::string& engine,
                                                      const ServeInput& input) {
  CheckEngineOrRaise(engine);
  std::unique_ptr<ServingCache> cache =
      MakeServingCache(engine, input.replay.options);
  const ServeOptions& serve = input.serve;
  if (cache->one_at_a_time() &&
      (serve.max_running != 1 || serve.output != OutputMode::kNone)) {
    const CacheModel model = input.replay.options.model;
    Raise(PyExc_ValueError,
          fmt::format("engine: '{}' answers a serving replay of model '{}' "
                      "one request at a time (max_running 1, output "
                      "'none'), not max_running {} with output '{}'; "
                      "engines with a request lifecycle for it: {} "
                      "(engine=\"{}\" implements every model)",
                      engine, NameOf(kCacheModels, model), serve.max_running,
                      NameOf(kOutputModes, serve.output),
                      LifecycleEngines(model), EngineNames().front()));
  }
  return cache;
}

// The double nearest to numerator / denominator (Python's int division
// rounds the exact quotient once, as SPEC §10.5 asks); 0.0 for 0.
py::object NearestQuotient(const py::object& numerator,
                           std::uint64_t denominator) {
  if (denominator == 0) return py::float_(0.0);
  return numerator / py::int_(denominator);
}

// `value` as a Python int.
py::object WaitSumInt(WaitSum value) {
  const py::int_ high(static_cast<std::uint64_t>(value >> 64));
  const py::int_ low(static_cast<std::uint64_t>(value));
  return (high << py::int_(64)) | low;
}

// SPEC §10.5's answer for one request, its members in the SPEC's order.
py::dict ServedRequestDict(const ServedRequest& request) {
  static PyObject* const kMatchedLength = Key("matched_length");
  static PyObject* const kCacheNode = Key("cache_node");
  static PyObject* const kArrival = Key("arrival_us");
  static PyObject* const kStart = Key("start_us");
  static PyObject* const kPrefillEnd = Key("prefill_end_us");
  static PyObject* const kFinish = Key("finish_us");
  static PyObject* const kWait = Key("wait_us");
  static PyObject* const kRefused = Key("refused");
  static PyObject* const kWaitedForRoom = Key("waited_for_room");
  py::dict result;
  result[py::handle(kMatchedLength)] = py::int_(request.match.matched_length);
  result[py::handle(kCacheNode)] = py::int_(request.match.cache_node);
  result[py::handle(kArrival)] = py::int_(request.arrival_us);
  result[py::handle(kStart)] = py::int_(request.start_us);
  result[py::handle(kPrefillEnd)] = py::int_(request.prefill_end_us);
  result[py::handle(kFinish)] = py::int_(request.finish_us);
  result[py::handle(kWait)] = py::int_(request.wait_us());
  result[py::handle(kRefused)] = py::bool_(request.refused);
  result[py::handle(kWaitedForRoom)] = py::bool_(request.waited_for_room);
  return result;
}

// SPEC §10.5's totals, their members in the SPEC's order.
py::dict ServeTotalsDict(const ServeTotals& totals) {
  py::dict result;
  result["requests"] = totals.requests;
  result["request_tokens"] = totals.request_tokens;
  result["matched_tokens"] = totals.matched_tokens;
  result["hit_ratio"] =
      NearestQuotient(py::int_(totals.matched_tokens), totals.request_tokens);
  result["refused"] = totals.refused;
  result["waited_for_room"] = totals.waited_for_room;
  result["evicted_pages"] = totals.evicted_pages;
  result["peak_pinned"] = totals.peak_pinned;
  result["peak_running"] = totals.peak_running;
  result["peak_queued"] = totals.peak_queued;
  result["mean_wait_us"] =
      NearestQuotient(WaitSumInt(totals.total_wait_us), totals.requests);
  result["p50_wait_us"] = totals.p50_wait_us;
  result["p99_wait_us"] = totals.p99_wait_us;
  result["makespan_us"] = totals.makespan_us;
  return result;
}

// SPEC §10.5's answer: {"requests": [...], "totals": {...}}.
py::dict ServeAnswerDict(const ServeAnswer& answer) {
  py::list requests(answer.requests.size());
  for (std::size_t i = 0; i < answer.requests.size(); ++i) {
    requests[i] = ServedRequestDict(answer.requests[i]);
  }
  py::dict result;
  result["requests"] = std::move(requests);
  result["totals"] = ServeTotalsDict(answer.totals);
  return result;
}

// The engine of a serving replay: the one named, else the reference (every
// model's request lifecycle).
std::string ServingEngine(const ReplayArguments& arguments,
                          const CacheOptions& options) {
  return arguments.engine.is_none()
             ? std::string(EngineNames().front())
             : EngineOrDefault(arguments.engine, options.model);
}

// A serving replay (SPEC §10) of replay()'s arguments, on engine
// "reference" unless one is named.
py::dict ServeReplayPy(const ReplayArguments& arguments,
                       const ServeArguments& serve) {
  const CacheOptions options = ReplayCacheOptions(arguments);
  const std::string engine = ServingEngine(arguments, options);
  const ServeInput input = ToServeInput(arguments, serve, options);
  std::unique_ptr<ServingCache> cache = MakeServingCacheOrRaise(engine, input);
  ServeAnswer answer;
  {
    py::gil_scoped_release release;
    answer = ServeReplay(input, *cache);
    cache.reset();
  }
  return ServeAnswerDict(answer);
}

// SPEC §11's arguments of replay(), each None when not given.
struct RoutingArguments {
  py::handle workers;
  py::handle router;
  py::handle seed;
  py::handle router_parameters;

  // True when one is given: the call is a routed replay (N = 1 too).
  bool given() const {
    return !(workers.is_none() && router.is_none() && seed.is_none() &&
             router_parameters.is_none());
  }
};

// The text of one router parameter's value, as a document's JSON writes it:
// an int (not a bool) as its digits; for a decimal also a float (its repr,
// the shortest text reading back to it), a decimal.Decimal or a str (its
// text, read exactly); for a name a str. Raises TypeError naming `where`.
std::string RouterValueText(const RouterParameter& parameter, py::handle value,
                            const std::string& where) {
  PyObject* object = value.ptr();
  const bool is_int = !PyBool_Check(object) && !IsNumpyBool(object) &&
                      PyIndex_Check(object) != 0;
  if (parameter.kind == ParameterKind::kName) {
    if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  } else if (is_int) {
    return std::string(
        py::str(py::int_(py::reinterpret_borrow<py::object>(value))));
  } else if (parameter.kind == ParameterKind::kDecimal) {
    if (PyFloat_Check(object)) return std::string(py::repr(value));
    if (py::isinstance<py::str>(value)) return value.cast<std::string>();
    if (TypeName(object) == std::string("decimal.Decimal")) {
      return std::string(py::str(value));
    }
  }
  const char* expected = parameter.kind == ParameterKind::kName ? "a str"
                         : parameter.kind == ParameterKind::kInteger
                             ? "an int"
                             : "an int, float, str or decimal.Decimal";
  Raise(PyExc_TypeError, fmt::format("{} must be {}, not {}", where, expected,
                                     TypeName(object)));
}

// SPEC §11.1's routing of `arguments`: N, the policy (round-robin when
// None), the seed and the parameters, each checked as the document reader
// checks its members. Raises TypeError or ValueError naming the argument
// ("router_parameters['load_factor']: router 'round-robin' takes no such
// parameter").
RoutingSpec ToRoutingSpec(const RoutingArguments& arguments) {
  RoutingSpec routing;
  routing.workers =
      ToUintOr(arguments.workers, "workers", 1, kMaxWorkers, routing.workers);
  if (!arguments.router.is_none()) {
    // "plugin:PATH": the user's own router (plugin/kvprefix_router_plugin.h),
    // given every parameter, as the CLI's --router plugin:PATH.
    if (py::isinstance<py::str>(arguments.router) &&
        IsPluginName(arguments.router.cast<std::string>())) {
      routing.router.plugin =
          arguments.router.cast<std::string>().substr(kPluginPrefix.size());
    } else {
      routing.router.policy =
          ToNamedValue(kRouterPolicies, arguments.router, "router");
    }
  }
  routing.router.seed = ToUintOr(arguments.seed, "seed", 0, kMaxRouterU64, 0);
  if (arguments.router_parameters.is_none()) return routing;
  if (!py::isinstance<py::dict>(arguments.router_parameters)) {
    Raise(PyExc_TypeError, "router_parameters must be a dict, not " +
                               TypeName(arguments.router_parameters.ptr()));
  }
  const std::string_view policy =
      NameOf(kRouterPolicies, routing.router.policy);
  for (const auto& [key, value] :
       py::reinterpret_borrow<py::dict>(arguments.router_parameters)) {
    if (!py::isinstance<py::str>(key)) {
      Raise(PyExc_TypeError,
            "router_parameters' keys must be str, not " + TypeName(key.ptr()));
    }
    const std::string name = key.cast<std::string>();
    const std::string where =
        fmt::format("router_parameters[{}]", std::string(py::repr(key)));
    const RouterParameter* parameter = FindRouterParameter(name);
    if (parameter == nullptr) {
      Raise(PyExc_ValueError,
            fmt::format("{}: no router takes such a parameter (SPEC section "
                        "11.5)",
                        where));
    }
    if (routing.router.plugin.empty() &&
        !Takes(routing.router.policy, *parameter)) {
      Raise(PyExc_ValueError,
            fmt::format("{}: router '{}' takes no such parameter", where,
                        policy));
    }
    const std::string text = RouterValueText(*parameter, value, where);
    std::optional<RouterValue> parsed = ParseRouterValue(*parameter, text);
    if (!parsed) {
      Raise(PyExc_ValueError, fmt::format("{} must be {}, not {}", where,
                                          ExpectedRouterValue(*parameter),
                                          std::string(py::repr(value))));
    }
    routing.router.parameters[name] = std::move(*parsed);
  }
  return routing;
}

// SPEC §11.8's answer: {"requests": [... each with "worker"], "totals":
// {... §10.5's, "workers", "router", "imbalance_requests",
// "imbalance_tokens", "imbalance_uncached"}, "per_worker": [...]}.
py::dict RoutedAnswerDict(const RoutedAnswer& answer) {
  py::list requests(answer.requests.size());
  for (std::size_t i = 0; i < answer.requests.size(); ++i) {
    py::dict request = ServedRequestDict(answer.requests[i]);
    request["worker"] = answer.workers_of[i];
    requests[i] = std::move(request);
  }
  py::dict totals = ServeTotalsDict(answer.totals);
  totals["workers"] = answer.per_worker.size();
  totals["router"] = std::string(answer.router);
  const std::array<double, 3> imbalances = RoutedImbalances(answer);
  for (std::size_t i = 0; i < imbalances.size(); ++i) {
    totals[kImbalanceNames[i]] = imbalances[i];
  }
  py::list per_worker(answer.per_worker.size());
  for (std::size_t w = 0; w < answer.per_worker.size(); ++w) {
    per_worker[w] = ServeTotalsDict(answer.per_worker[w]);
  }
  py::dict result;
  result["requests"] = std::move(requests);
  result["totals"] = std::move(totals);
  result["per_worker"] = std::move(per_worker);
  return result;
}

// A serving replay of replay()'s arguments on N workers (SPEC §11), each
// with a cache of engine "reference" unless one is named; a token is a
// token (§11.1's defaults of a document).
py::dict RoutedReplayPy(const ReplayArguments& arguments,
                        const ServeArguments& serve,
                        const RoutingArguments& routing_arguments) {
  const CacheOptions options = ReplayCacheOptions(arguments);
  const std::string engine = ServingEngine(arguments, options);
  const ServeInput input = ToServeInput(arguments, serve, options);
  const RoutingSpec routing = ToRoutingSpec(routing_arguments);
  // One cache made here, with the GIL, raises what a worker's would.
  MakeServingCacheOrRaise(engine, input);
  RoutedAnswer answer;
  {
    py::gil_scoped_release release;
    answer = RoutedReplay(
        input, routing,
        [&] { return MakeServingCache(engine, input.replay.options); },
        TokenUnit::kToken);
  }
  return RoutedAnswerDict(answer);
}

// replay(): a routed replay (RoutedReplayPy) when a SPEC §11 argument is
// given, else a serving replay (ServeReplayPy) when a SPEC §10 argument is,
// else the sequential replay of SPEC §3, §8 and §9 (ReplayPy).
py::dict ReplayOrServePy(
    py::handle requests, py::handle capacity, const std::string& policy,
    py::handle page_size, py::handle engine, py::handle model,
    py::handle match_limit, py::handle trigger, py::handle namespaces,
    py::handle arrivals_us, py::handle output_lengths, py::handle max_running,
    py::handle prefill_us_per_token, py::handle decode_us_per_token,
    py::handle overhead_us, py::handle output, py::handle workers,
    py::handle router, py::handle seed, py::handle router_parameters) {
  const ReplayArguments arguments{requests,    capacity, policy,
                                  page_size,   engine,   model,
                                  match_limit, trigger,  namespaces};
  const ServeArguments serve{
      arrivals_us,         output_lengths, max_running, prefill_us_per_token,
      decode_us_per_token, overhead_us,    output};
  const RoutingArguments routing{workers, router, seed, router_parameters};
  if (routing.given()) return RoutedReplayPy(arguments, serve, routing);
  return serve.given() ? ServeReplayPy(arguments, serve) : ReplayPy(arguments);
}

// `values` as a NumPy array of `dtype` when NumPy is installed, else a list.
template <typename T>
py::object ArrayOrList(const std::vector<T>& values, const char* dtype) {
  py::list list = py::cast(values);
  try {
    return py::module_::import("numpy").attr("array")(list, dtype);
  } catch (const py::error_already_set& error) {
    if (!error.matches(PyExc_ImportError)) throw;
    return list;
  }
}

// The numbers of curve()'s target_hit_ratios: each a real number (not a
// bool) from 0 to 1.
std::vector<double> ToHitRatios(py::handle ratios) {
  std::vector<double> result;
  for (py::handle ratio : py::iter(ratios)) {
    if (PyBool_Check(ratio.ptr()) || !py::hasattr(ratio, "__float__")) {
      Raise(PyExc_TypeError,
            std::string("target_hit_ratios must hold numbers, not ") +
                TypeName(ratio.ptr()));
    }
    const double value =
        py::float_(py::reinterpret_borrow<py::object>(ratio)).cast<double>();
    if (!(value >= 0 && value <= 1)) {  // also NaN
      Raise(PyExc_ValueError,
            "target_hit_ratios must hold numbers from 0 to 1, not " +
                std::string(py::str(ratio)));
    }
    result.push_back(value);
  }
  return result;
}

// The matched tokens of replaying `requests` on model `cache` (not spec) at
// each of `capacities` (empty: `points` log-spaced ones up to the distinct
// prefixes), and the smallest capacity reaching each of `targets`: the
// replays and the bisection of `kvprefix curve` (cli/capacity_search.h), on
// as many threads as its default --jobs, so that both give the same
// capacities. Call without the GIL.
struct ModelCurve {
  std::vector<std::uint64_t> matched;
  std::uint64_t request_tokens = 0;
  std::uint64_t distinct_prefixes = 0;
  // One per target: its capacity (nullopt: unreachable) and matched tokens
  // there (the unbounded cache's when unreachable).
  std::vector<std::optional<std::uint64_t>> target_capacities;
  std::vector<std::uint64_t> target_matched;
};
ModelCurve ReplayModelCurve(const SequenceList& requests,
                            const CacheOptions& cache,
                            std::vector<std::uint64_t>& capacities,
                            std::size_t points,
                            std::span<const double> targets) {
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  ModelCurve curve;
  curve.request_tokens = requests.total_tokens();
  curve.distinct_prefixes = cli::CountDistinctPrefixes(requests, cache);
  if (capacities.empty()) {
    capacities = LogSpacedCapacities(curve.distinct_prefixes, points);
  }
  curve.matched = cli::ReplayEachCapacity(requests, capacities, cache, jobs);
  if (targets.empty()) return curve;
  cli::TargetBisection bisection(requests, cache, curve.distinct_prefixes,
                                 curve.request_tokens, jobs);
  const std::uint64_t best = bisection.Matched(curve.distinct_prefixes);
  for (const double target : targets) {
    curve.target_capacities.push_back(bisection.SmallestReaching(target));
    curve.target_matched.push_back(
        curve.target_capacities.back()
            ? bisection.Matched(*curve.target_capacities.back())
            : best);
  }
  return curve;
}

// curve()'s "targets": one dict per target, {"target_hit_ratio",
// "capacity" (None: unreachable), "matched_tokens", "hit_ratio"}.
py::list TargetAnswers(std::span<const double> targets,
                       std::span<const std::optional<std::uint64_t>> capacities,
                       std::span<const std::uint64_t> matched,
                       std::uint64_t request_tokens) {
  py::list answers;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    py::dict answer;
    answer["target_hit_ratio"] = targets[i];
    answer["capacity"] = capacities[i] ? py::object(py::int_(*capacities[i]))
                                       : py::object(py::none());
    answer["matched_tokens"] = matched[i];
    answer["hit_ratio"] = ReplaySummary{.request_tokens = request_tokens,
                                        .matched_tokens = matched[i]}
                              .hit_ratio();
    answers.append(answer);
  }
  return answers;
}

// curve()'s result: the points, their hit ratios and the totals, with
// "targets" when `targets` were asked for.
py::dict CurveResult(const std::vector<std::uint64_t>& capacities,
                     const std::vector<std::uint64_t>& matched,
                     std::uint64_t request_tokens,
                     std::uint64_t distinct_prefixes,
                     std::optional<py::list> targets) {
  std::vector<double> ratios;
  for (const std::uint64_t tokens : matched) {
    ratios.push_back(ReplaySummary{.request_tokens = request_tokens,
                                   .matched_tokens = tokens}
                         .hit_ratio());
  }
  py::dict result;
  if (targets) result["targets"] = *targets;
  result["capacities"] = ArrayOrList(capacities, "uint64");
  result["matched_tokens"] = ArrayOrList(matched, "uint64");
  result["hit_ratios"] = ArrayOrList(ratios, "float64");
  result["request_tokens"] = request_tokens;
  result["distinct_prefixes"] = distinct_prefixes;
  return result;
}

// The requests of curve(): converted, and folded with their namespaces
// (SPEC §8.1; a curve reports no request's tokens).
SequenceList CurveRequests(py::handle requests, py::handle namespaces) {
  SequenceList tokens = ConvertSequences(requests, "requests").tokens;
  FoldNamespaces(tokens, ToNamespaces(namespaces, "namespaces", tokens.size(),
                                      "requests"));
  return tokens;
}

py::dict CurvePy(py::handle requests, py::handle page_size,
                 py::handle capacities, py::handle points,
                 py::handle target_hit_ratios, py::handle model,
                 py::handle match_limit, py::handle trigger,
                 py::handle namespaces) {
  CacheOptions cache = ToCacheOptions(py::none(), "lru", page_size);
  SetModelOptions(model, match_limit, trigger, cache);
  const std::uint64_t pages = cache.page_size;
  if (!capacities.is_none() && !points.is_none()) {
    Raise(PyExc_ValueError, "give capacities or points, not both");
  }
  std::vector<std::uint64_t> chosen;
  if (!capacities.is_none()) {
    for (py::handle capacity : py::iter(capacities)) {
      chosen.push_back(ToCacheOptions(capacity, "lru", py::int_(1)).capacity);
    }
    // Given but empty is a mistake, as the CLI's --capacities "" is, not a
    // request for the default points.
    if (chosen.empty()) Raise(PyExc_ValueError, "capacities must not be empty");
  }
  const std::size_t count =
      points.is_none() ? 32 : ToUint(points, "points", 1, kMaxCurvePoints);
  const std::vector<double> targets = target_hit_ratios.is_none()
                                          ? std::vector<double>{}
                                          : ToHitRatios(target_hit_ratios);
  const auto answers = [&](const auto& found, const auto& matched,
                           std::uint64_t request_tokens) {
    return target_hit_ratios.is_none()
               ? std::optional<py::list>()
               : TargetAnswers(targets, found, matched, request_tokens);
  };
  if (cache.model != CacheModel::kSpec) {
    // Not a stack algorithm: a replay per capacity, and the targets by
    // `kvprefix curve`'s bisection.
    const SequenceList queries = CurveRequests(requests, namespaces);
    ModelCurve curve;
    {
      py::gil_scoped_release release;
      curve = ReplayModelCurve(queries, cache, chosen, count, targets);
    }
    return CurveResult(chosen, curve.matched, curve.request_tokens,
                       curve.distinct_prefixes,
                       answers(curve.target_capacities, curve.target_matched,
                               curve.request_tokens));
  }
  const SequenceList queries = CurveRequests(requests, namespaces);
  LruCurve<PagedIndex<RadixTrie>> curve(pages, cache.match_limit);
  std::vector<std::uint64_t> matched;
  std::vector<std::optional<std::uint64_t>> target_capacities;
  std::vector<std::uint64_t> target_matched;
  {
    py::gil_scoped_release release;
    for (TokenSpan request : queries) curve.Add(request);
    if (chosen.empty()) {
      chosen = LogSpacedCapacities(curve.distinct_prefixes(), count);
    }
    matched = curve.MatchedTokens(chosen);
    for (const double target : targets) {
      target_capacities.push_back(curve.SmallestCapacityReaching(target));
      const std::uint64_t at[] = {
          target_capacities.back().value_or(kUnbounded)};
      target_matched.push_back(curve.MatchedTokens(at)[0]);
    }
  }
  return CurveResult(
      chosen, matched, curve.request_tokens(), curve.distinct_prefixes(),
      answers(target_capacities, target_matched, curve.request_tokens()));
}

// kvprefix.InputError, set when the module is initialized.
PyObject* input_error_type = nullptr;

// The bytes of the path `path` names (str, bytes or os.PathLike), as
// os.fsencode gives them, so that any file name the OS takes can be named.
// Raises ValueError for a NUL byte, at which a C string would end.
std::string PathArgument(py::handle path) {
  std::string bytes =
      py::module_::import("os").attr("fsencode")(path).cast<std::string>();
  if (bytes.find('\0') != std::string::npos) {
    Raise(PyExc_ValueError, "embedded null byte in path");
  }
  return bytes;
}

// The requests of a trace as Python objects, each a one-dimensional int32
// buffer that replay() and curve() read with one memcpy: NumPy arrays,
// views of one array holding the whole trace, when NumPy can be imported;
// else array.array('i') objects.
py::list RequestBuffers(const SequenceList& requests) {
  static_assert(sizeof(int) == sizeof(Token), "array.array('i') is int32");
  py::list result(requests.size());
  py::object numpy;
  try {
    numpy = py::module_::import("numpy");
  } catch (const py::error_already_set& error) {
    if (!error.matches(PyExc_ImportError)) throw;
  }
  if (!numpy) {
    const py::object array = py::module_::import("array").attr("array");
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const TokenSpan request = requests[i];
      result[i] =
          array("i", py::bytes(reinterpret_cast<const char*>(request.data()),
                               request.size_bytes()));
    }
    return result;
  }
  const py::object flat =
      numpy.attr("empty")(requests.total_tokens(), py::arg("dtype") = "int32");
  {
    Py_buffer view;
    if (PyObject_GetBuffer(flat.ptr(), &view,
                           PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
      throw py::error_already_set();
    }
    std::unique_ptr<Py_buffer, decltype(&PyBuffer_Release)> release(
        &view, &PyBuffer_Release);
    Token* out = static_cast<Token*>(view.buf);
    for (const TokenSpan request : requests) {
      std::copy(request.begin(), request.end(), out);
      out += request.size();
    }
  }
  std::size_t begin = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::size_t end = begin + requests[i].size();
    result[i] = flat[py::slice(static_cast<py::ssize_t>(begin),
                               static_cast<py::ssize_t>(end), 1)];
    begin = end;
  }
  return result;
}

// The requests of the Mooncake trace `path` (SPEC §7), read by the tool's
// own reader (cli::ReadTrace), so that the tokens and the error messages
// are those of `kvprefix replay|curve TRACE --mode mode --vocab vocab`.
py::list ReadTracePy(py::handle path, const std::string& mode,
                     py::handle vocab) {
  if (mode != "block" && mode != "token") {
    Raise(PyExc_ValueError,
          "mode must be 'block' or 'token', not '" + mode + "'");
  }
  cli::TraceArguments trace;
  trace.path = PathArgument(path);
  trace.mode = mode;
  trace.options.vocabulary = static_cast<std::uint32_t>(
      ToUint(vocab, "vocab", 1, std::uint64_t{1} << 31));
  SequenceList requests;
  try {
    py::gil_scoped_release release;
    requests = cli::ReadTrace(trace);
  } catch (const cli::FileInputError& error) {
    Raise(input_error_type, error.what());
  } catch (const ResourceError& error) {
    Raise(PyExc_MemoryError, error.what());
  } catch (const IoError& error) {
    Raise(PyExc_OSError, error.what());
  }
  return RequestBuffers(requests);
}

// `kvprefix ARGUMENTS...` with the tool's match, replay and curve commands
// (cli::RunCommandLine), without the GIL: its exit status.
int RunCommandLinePy(const std::vector<std::string>& arguments) {
  std::vector<std::string> strings = {"kvprefix"};
  for (const std::string& argument : arguments) {
    if (argument.find('\0') != std::string::npos) {
      Raise(PyExc_ValueError, "embedded null byte in an argument");
    }
    strings.push_back(argument);
  }
  std::vector<char*> argv;
  for (std::string& text : strings) argv.push_back(text.data());
  argv.push_back(nullptr);
  static constexpr cli::RegisterCommand kCommands[] = {
      cli::RegisterMatchCommand, cli::RegisterReplayCommand,
      cli::RegisterCurveCommand};
  py::gil_scoped_release release;
  return cli::RunCommandLine(static_cast<int>(strings.size()), argv.data(),
                             kCommands);
}

py::dict FindPrefixMatchesPy(py::handle cached_sequences, py::handle requests,
                             const std::string& engine, py::handle page_size,
                             py::handle cached_namespaces,
                             py::handle namespaces) {
  std::unique_ptr<PrefixIndex> index = MakeEngineOrRaise(
      engine, ToCacheOptions(py::none(), DefaultPolicyName(), page_size));
  BatchInput input;
  input.cached_sequences =
      ConvertSequences(cached_sequences, "cached_sequences").tokens;
  ConvertedSequences queries = ConvertSequences(requests, "requests");
  input.requests = std::move(queries.tokens);
  input.cached_namespaces =
      ToNamespaces(cached_namespaces, "cached_namespaces",
                   input.cached_sequences.size(), "cached_sequences");
  input.namespaces =
      ToNamespaces(namespaces, "namespaces", input.requests.size(), "requests");
  std::vector<Match> matches;
  {
    py::gil_scoped_release release;
    matches = FindPrefixMatches(*index, input);
    index.reset();  // a large trie takes a while to free: do it without the GIL
  }
  queries.tokens = std::move(input.requests);
  return MatchesDict(matches, queries);
}

// The Python PrefixIndex: one engine plus a reader-writer lock, because the
// GIL is released during insert and match and Python threads may share the
// object (engines allow concurrent const calls, exclusive Insert).
class PyPrefixIndex {
 public:
  PyPrefixIndex(const std::string& engine, py::handle capacity,
                const std::string& policy, py::handle page_size,
                py::handle model, py::handle match_limit, py::handle trigger)
      : index_(MakeEngineOrRaise(engine, [&] {
          CacheOptions options = ToCacheOptions(capacity, policy, page_size);
          SetModelOptions(model, match_limit, trigger, options);
          return options;
        }())) {}

  // The calls below take a namespace (SPEC §8.1) and fold it into the
  // sequence's first token (kvprefix/namespaces.h): every sequence is
  // folded, "" included, so that any namespace may come at any time.

  NodeId Insert(py::handle sequence, py::handle name_space) {
    SequenceList tokens;
    AppendSequence(sequence.ptr(), "sequence", tokens);
    const std::string name = ToNamespace(name_space, "namespace");
    py::gil_scoped_release release;
    std::unique_lock lock(mutex_);
    return index_->Insert(Folded(tokens[0], name)[0]);
  }

  py::dict MatchPrefix(py::handle request, py::handle name_space) const {
    SequenceList tokens;
    const py::object items = AppendSequence(request.ptr(), "request", tokens);
    const std::string name = ToNamespace(name_space, "namespace");
    Match match;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mutex_);
      const TokenSpan tokens_seen = tokens[0];
      // A first token never folded in this namespace starts no node.
      const std::optional<Token> first =
          tokens_seen.empty() ? std::nullopt
                              : folder_.Find(name, tokens_seen.front());
      if (first) {
        std::vector<Token> folded(tokens_seen.begin(), tokens_seen.end());
        folded.front() = *first;
        match = index_->MatchPrefix(folded);
      }
    }
    return MatchDict(match, tokens[0], items);
  }

  // SPEC §8 steps 1-4: the match, then the insert (touch, evict).
  py::dict Access(py::handle request, py::handle name_space) {
    SequenceList tokens;
    const py::object items = AppendSequence(request.ptr(), "request", tokens);
    const std::string name = ToNamespace(name_space, "namespace");
    Match match;
    {
      py::gil_scoped_release release;
      std::unique_lock lock(mutex_);
      match = index_->Access(Folded(tokens[0], name)[0]);
    }
    return MatchDict(match, tokens[0], items);
  }

  std::uint64_t node_count() const {
    std::shared_lock lock(mutex_);
    return index_->node_count();
  }
  std::uint64_t evicted_count() const {
    std::shared_lock lock(mutex_);
    return index_->evicted_count();
  }
  py::object capacity() const {
    const CacheOptions& options = index_->options();
    return options.bounded() ? py::object(py::int_(options.capacity))
                             : py::object(py::none());
  }
  std::string_view policy() const {
    return EvictionPolicyName(index_->options().policy);
  }
  std::uint64_t page_size() const { return index_->options().page_size; }
  std::size_t memory_bytes() const {
    std::shared_lock lock(mutex_);
    return index_->memory_bytes();
  }
  std::string_view engine() const { return index_->name(); }

 private:
  // `sequence` folded in namespace `name`, as a list of one sequence.
  // Requires the exclusive lock.
  SequenceList Folded(TokenSpan sequence, const std::string& name) {
    SequenceList folded;
    folder_.AppendFolded(sequence, name, folded);
    return folded;
  }

  std::unique_ptr<PrefixIndex> index_;
  NamespaceFolder folder_;  // guarded by mutex_
  mutable std::shared_mutex mutex_;
};

// The bytes `kvprefix match path --engine engine --page-size page_size`
// prints, through the CLI's reader, engine and writer, so that both give the
// same bytes, and bad input raises the CLI's message (cli/commands.h's
// FileInputError: the file, then the InputError) as kvprefix.InputError, as
// read_trace does.
py::bytes MatchFilePy(const std::string& path, const std::string& engine,
                      py::handle page_size) {
  // A C string ends at the first NUL: "a\0b" would name the file "a".
  if (path.find('\0') != std::string::npos) {
    Raise(PyExc_ValueError, "embedded null byte in path");
  }
  std::unique_ptr<PrefixIndex> index = MakeEngineOrRaise(
      engine, ToCacheOptions(py::none(), DefaultPolicyName(), page_size));
  std::string json;
  try {
    py::gil_scoped_release release;
    const BatchInput input = ReadBatchInputFile(path);
    const auto matches = FindPrefixMatches(*index, input);
    AppendMatchesJson(input.requests, matches, json);
    index.reset();
  } catch (const InputError& error) {
    const std::string file =
        path == "-" ? "<stdin>" : EscapeForMessage(path, 1024);
    PyErr_SetString(input_error_type, (file + ": " + error.what()).c_str());
    throw py::error_already_set();
  } catch (const IoError& error) {
    PyErr_SetString(PyExc_OSError, error.what());
    throw py::error_already_set();
  }
  return py::bytes(json);
}

// The lists of engines and policies, and their defaults.
void DefineNameLists(py::module_& m) {
  m.def(
      "engines",
      [] {
        std::vector<std::string> names;
        for (std::string_view name : EngineNames()) {
          names.emplace_back(name);
        }
        return names;
      },
      "Names of the built-in engines, the reference first.");
  m.def(
      "default_engine", [] { return std::string(DefaultEngineName()); },
      "The engine used when none is named.");
  m.def(
      "policies",
      [] {
        std::vector<std::string> names;
        for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
          names.emplace_back(entry.name);
        }
        return names;
      },
      "Names of the eviction policies a capacity-bounded cache takes (the "
      "`policy` arguments, `kvprefix policies`), the default first.");
  m.def("default_policy", &DefaultPolicyName,
        "The eviction policy used when none is named.");
}

// What each policy evicts, for the docstrings: "'lru' evicts the least
// recently used leaf; 'fifo' evicts the oldest created leaf".
std::string PolicyVictims() {
  std::string victims;
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    victims += victims.empty() ? "" : "; ";
    victims += fmt::format("'{}' evicts {}", entry.name, entry.victim);
  }

  return victims;
}

// find_prefix_matches and match_file: the batch job (SPEC §2).
void DefineBatchFunctions(py::module_& m) {
  const std::string default_engine(DefaultEngineName());
  m.def(
      "find_prefix_matches", &FindPrefixMatchesPy, py::arg("cached_sequences"),
      py::arg("requests"), py::arg("engine") = default_engine, py::kw_only(),
      py::arg("page_size") = 1, py::arg("cached_namespaces") = py::none(),
      py::arg("namespaces") = py::none(),
      R"doc(Inserts every cached sequence in order, then matches every request.

Each argument is a sequence of token sequences; a token sequence is a list or
tuple of ints, or a 1-D buffer of integers (NumPy array, array.array).
Returns {"matches": [{"matched_length": int, "cache_node": int,
"uncached_suffix": [int, ...]}, ...]}, one entry per request, in order.
With page_size P > 1 the trie is built over whole pages of P tokens (SPEC
section 8): a trailing partial page is dropped and matched_length is a
multiple of P.
cached_namespaces and namespaces (SPEC section 8.1; None: every sequence in
""): one str per cached sequence and per request; a request matches only
what sequences of its own namespace cached.
Raises TypeError (not a sequence, non-int or bool token, float buffer, a
namespace that is not a str), OverflowError (token outside int32),
ValueError (unknown engine, page_size out of range, a namespace list of
another length or a namespace over 256 bytes of UTF-8),
kvprefix.CapacityError (the engine ran out of node IDs; a
MemoryError). The GIL is released while the engine inserts and matches.)doc");

  m.def("match_file", &MatchFilePy, py::arg("path"),
        py::arg("engine") = default_engine, py::arg("page_size") = 1,
        R"doc(The SPEC §5 answer to the SPEC §4 input file `path` ("-": standard
input), as the bytes `kvprefix match path --page-size page_size` prints (one
line of JSON).
Raises kvprefix.InputError (a ValueError) for bad input, with the message the
CLI prints after "kvprefix: " (the file, the JSON location, the problem);
OSError when the file cannot be read; ValueError for an unknown engine or a
page size outside 1 to 2^31 - 1; kvprefix.CapacityError as
find_prefix_matches.)doc");
}

// replay: SPEC §3's replay, on a cache of §8 and §9.
void DefineReplay(py::module_& m) {
  const std::string victims = PolicyVictims();
  const std::string choices = EvictionPolicyChoices('\'');
  m.def("replay", &ReplayOrServePy, py::arg("requests"), py::kw_only(),
        py::arg("capacity") = py::none(),
        py::arg("policy") = DefaultPolicyName(), py::arg("page_size") = 1,
        py::arg("engine") = py::none(), py::arg("model") = py::none(),
        py::arg("match_limit") = py::none(), py::arg("trigger") = py::none(),
        py::arg("namespaces") = py::none(), py::arg("arrivals_us") = py::none(),
        py::arg("output_lengths") = py::none(),
        py::arg("max_running") = py::none(),
        py::arg("prefill_us_per_token") = py::none(),
        py::arg("decode_us_per_token") = py::none(),
        py::arg("overhead_us") = py::none(), py::arg("output") = py::none(),
        py::arg("workers") = py::none(), py::arg("router") = py::none(),
        py::arg("seed") = py::none(), py::arg("router_parameters") = py::none(),
        (R"doc(Replays requests on a prefix cache as a serving system does.

Each request is matched, then inserted (SPEC section 3); with a capacity C
(nodes besides the root; None: unbounded) the request's path is then touched
and leaves are evicted by `policy` until at most C nodes remain (SPEC
section 8); policies() lists the policies:
)doc" + victims +
         R"doc(.
page_size P builds the trie over pages of P tokens.
model (SPEC section 9: 'spec', the default, 'vllm' (a block pool of C
blocks) or 'sglang' (a radix cache of C pages)), match_limit ('all' or
'all-but-last'; None: 'all', but 'all-but-last' for vllm) and trigger
('after-insert' or 'on-allocate'; sglang only) are `kvprefix replay`'s
--model, --match-limit and --trigger; engine None is the default engine,
or for a model it lacks the model's own (the reference).
namespaces (SPEC section 8.1; None: every request in ""): one str per
request, as a replay document's "namespaces": requests of different
namespaces never share a node (vLLM's cache_salt or LoRA, SGLang's
extra_key), in one cache of one capacity.
Returns a dict: "matches", a list as find_prefix_matches returns, each
request's match taken before its insert; and the summary `kvprefix replay`
prints for a trace, under the same names: "engine", "capacity" (None if
unbounded), "policy", "page_size", "model", "match_limit", "trigger" (sglang
only), "requests", "request_tokens" and
"matched_tokens" (sums of request and matched lengths, in tokens; in nodes
for a block-mode trace), "hit_ratio" (matched_tokens / request_tokens, 0.0
for no tokens), "nodes" (at the end, root excluded), "peak_nodes" (the most
after any request), "evictions" and "memory_bytes" (the engine's heap bytes
at the end).
Raises as find_prefix_matches, TypeError naming the argument for a value
of the wrong type (a capacity or page_size that is not an int; a policy,
engine, model, match_limit or trigger that is not a str), and ValueError
naming the argument for a
capacity below 0, a model, match_limit or trigger not listed above or a
combination SPEC section 9.4 refuses (vllm with match_limit 'all' or a
policy other than 'lru'; sglang with a policy other than 'lru' or 'fifo'; a
trigger without sglang), an engine that lacks the model, or a
policy other than )doc" +
         choices + R"doc(.

Serving replay (SPEC section 10): given any of arrivals_us, output_lengths,
max_running, prefill_us_per_token, decode_us_per_token, overhead_us or
output (not None), the requests arrive at their times on one worker, wait
in a FIFO queue, run at most max_running at a time with their cache
entries pinned, and end their prefill and finish at
start + overhead_us + prefill_us_per_token * (n - matched_length) and
that + decode_us_per_token * output_length (all times integer
microseconds). arrivals_us: one int per request, 0 to 2^53,
non-decreasing (None: all 0); output_lengths: one int per request, 0 to
2^53, the tokens each generates (None: all 0); max_running: 1 to
2^31 - 1 (default 1); the three rates: 0 to 2^32 (default 0); output
'none' (the default: output takes time, never cache space) or 'unique'
(output tokens are stored, each equal to no other token). The engine is
'reference' unless named: the reference has every model's request
lifecycle, hash model spec's and vllm's, radix sglang's (the ValueError
below names them); any other engine answers max_running 1 with output
'none' only, one request at a time (SPEC section 10.7: exactly the
sequential answers). namespaces work as above. Returns {"requests": [{"matched_length",
"cache_node", "arrival_us", "start_us", "prefill_end_us", "finish_us",
"wait_us", "refused", "waited_for_room"}, ...], "totals": {"requests",
"request_tokens", "matched_tokens", "hit_ratio", "refused",
"waited_for_room", "evicted_pages", "peak_pinned", "peak_running",
"peak_queued", "mean_wait_us", "p50_wait_us", "p99_wait_us",
"makespan_us"}} in that order (SPEC section 10.5; hit_ratio and
mean_wait_us floats, the nearest to the exact quotient, 0.0 for none).
Raises TypeError naming the argument for a value of the wrong type (a
non-sequence, an item or a number that is not an int, an output that is not
a str) and ValueError naming it for a value out of range, a list of
another length than requests, an arrival smaller than the one before it
(arrivals_us[i]), an output other than 'none' and 'unique', an engine
without a request lifecycle for the model asked for max_running above 1
or output 'unique', or a finish past 2^64 - 1 us.

Routing across workers (SPEC section 11): given any of workers, router,
seed or router_parameters (not None), the serving replay above runs on
`workers` workers (1 to 2^31 - 1; default 1), each with its own cache,
queue and max_running, and `router` (a name of SPEC section 11.5: )doc" +
         ChoiceNames(kRouterPolicies, '\'') +
         R"doc(; default 'round-robin') chooses each request's worker at its
arrival; seed (0 to 2^64 - 1, default 0) seeds the router's draws;
router_parameters: a dict of the router's parameters by their SPEC names
({"load_factor": 1.5, "hash_prefix": 1, "ties": "first"}), integers as
ints, decimals as ints, floats (their repr), str or decimal.Decimal (read
exactly, no sign or exponent), names as str; the defaults are a document's
(token units: hash_prefix 256, chunk 32, kv_aware_threshold 2000; pass 1,
1 and 4 for a block-mode trace, as `kvprefix replay` does). Returns SPEC
section 11.8's answer, as `kvprefix replay --workers N` prints it for a
document: {"requests": [... each with "worker"], "totals": {... the section
10.5 totals over all workers, "workers", "router", "imbalance_requests",
"imbalance_tokens", "imbalance_uncached"}, "per_worker": [one section 10.5
totals dict per worker]}. Raises TypeError or ValueError naming the
argument (workers, router, seed, router_parameters['name']) for a value of
the wrong type or out of range, a parameter no router takes or that this
router does not take.)doc")
            .c_str());
}

// curve: the hit ratio at many capacities.
void DefineCurve(py::module_& m) {
  m.def(
      "curve", &CurvePy, py::arg("requests"), py::kw_only(),
      py::arg("page_size") = 1, py::arg("capacities") = py::none(),
      py::arg("points") = py::none(), py::arg("target_hit_ratios") = py::none(),
      py::arg("model") = py::none(), py::arg("match_limit") = py::none(),
      py::arg("trigger") = py::none(), py::arg("namespaces") = py::none(),
      R"doc(The exact LRU hit ratio of replaying `requests` at many capacities.

model, match_limit, trigger and namespaces as replay() takes them (SPEC
sections 9 and 8.1):
model 'spec' under either match limit is one pass; 'vllm' and 'sglang', not
stack algorithms, replay once per capacity (and take no target_hit_ratios).

One pass (SPEC section 8, "The LRU curve"; Mattson's stack algorithm) gives
what replay(requests, capacity=C, policy='lru') gives at every C. Capacities
are in nodes (pages of page_size tokens): the given ones, in their order, or
`points` (default 32) log-spaced from 1 to the number of distinct prefixes
(exactly that many, or all of them if there are fewer).
Returns {"capacities", "matched_tokens", "hit_ratios", "request_tokens",
"distinct_prefixes"}; the first three are NumPy arrays when NumPy is
installed, else lists. With target_hit_ratios (numbers from 0 to 1), also
"targets": for each, in order, {"target_hit_ratio", "capacity",
"matched_tokens", "hit_ratio"}: the smallest capacity whose hit ratio is at
least the target, exact from every stack distance (as `kvprefix curve
--target-hit-ratio`), and what it matches; capacity None if no capacity
reaches it (then the unbounded replay's matched tokens and hit ratio).
Raises as replay, ValueError for both capacities and points, an empty
capacities (as the CLI's --capacities "" is an error), points outside 1 to
100000 or a target outside 0 to 1, and TypeError for points that are not an
int or a target that is not a number.)doc");
}

// read_trace and run_command_line: the tool's reader and command line.
void DefineToolFunctions(py::module_& m) {
  m.def("read_trace", &ReadTracePy, py::arg("path"), py::arg("mode") = "block",
        py::arg("vocab") = kDefaultVocabulary,
        R"doc(The requests of the Mooncake trace `path` (SPEC section 7: JSON
Lines with input_length and hash_ids; str, bytes or os.PathLike; "-" is
standard input), read by the tool's own reader: the tokens `kvprefix replay
path --mode mode --vocab vocab` replays. mode 'block': one token per hash id
(token = hash_id); 'token': each block expands to its tokens,
splitmix64(hash_id * 512 + j) mod vocab.
Returns a list with one token sequence per request, in trace order, that
replay() and curve() take as they are: one-dimensional int32 NumPy arrays
(views of one array holding the whole trace, 4 bytes per token) when NumPy
is installed, else array.array('i') objects.
Raises kvprefix.InputError (a ValueError) for bad input, with the message the
CLI prints after "kvprefix: " (the file, the line and JSON location, the
problem); OSError when the file cannot be read; MemoryError when memory runs
out; ValueError for a mode other than 'block' and 'token', a vocab outside 1
to 2^31 or a NUL byte in the path. The GIL is released while reading.)doc");

  m.def(
      "run_command_line", &RunCommandLinePy, py::arg("arguments"),
      R"doc(Runs the command-line tool's `kvprefix ARGUMENTS...` with its match,
replay and curve commands, through the tool's own parser and code (what
`python3 -m kvprefix` does): the same options, output bytes, one-line
errors and exit status. `arguments` is a list of str or bytes (os.fsencode
gives the bytes of a command line's arguments), without the program name.
Output and errors go to the process's standard output and error (file
descriptors 1 and 2, not sys.stdout and sys.stderr: flush those first).
Returns the exit status: 0 success, 2 bad input or usage, 1 an input/output
or resource failure. Raises ValueError for a NUL byte in an argument. The GIL
is released while the command runs.)doc");
}

// The PrefixIndex class.
void DefinePrefixIndex(py::module_& m) {
  const std::string default_engine(DefaultEngineName());
  const std::string choices = EvictionPolicyChoices('\'');
  py::class_<PyPrefixIndex>(m, "PrefixIndex",
                            "An online prefix index: insert and match in any "
                            "order. Thread-safe: matches run concurrently, "
                            "inserts exclusively, all without the GIL.")
      .def(py::init<const std::string&, py::handle, const std::string&,
                    py::handle, py::handle, py::handle, py::handle>(),
           py::arg("engine") = default_engine, py::kw_only(),
           py::arg("capacity") = py::none(),
           py::arg("policy") = DefaultPolicyName(), py::arg("page_size") = 1,
           py::arg("model") = py::none(), py::arg("match_limit") = py::none(),
           py::arg("trigger") = py::none(),
           ("A prefix index of `engine`; with a capacity (nodes besides the "
            "root) a cache that evicts leaves by `policy` (" +
            choices +
            "); page_size P builds it over pages of P tokens (SPEC section "
            "8); model, match_limit and trigger as replay() takes them (SPEC "
            "section 9; the engine must implement the model).")
               .c_str())
      .def("insert", &PyPrefixIndex::Insert, py::arg("sequence"),
           py::arg("namespace") = "",
           "Inserts a token sequence in `namespace` (SPEC section 8.1, a str "
           "of at most 256 bytes of UTF-8; default \"\"); returns the ID of "
           "the node its last token reaches (0 for an empty sequence).")
      .def("match", &PyPrefixIndex::MatchPrefix, py::arg("request"),
           py::arg("namespace") = "",
           "The longest prefix of `request` cached in its `namespace`, as "
           "{\"matched_length\", \"cache_node\", \"uncached_suffix\"}. "
           "Inserts nothing.")
      .def("access", &PyPrefixIndex::Access, py::arg("request"),
           py::arg("namespace") = "",
           "The serving step: matches `request` in its `namespace` "
           "(returned as match() returns it), then inserts it, touching its "
           "path and evicting when the index has a capacity.")
      .def_property_readonly("node_count", &PyPrefixIndex::node_count,
                             "Number of nodes present, root excluded.")
      .def_property_readonly("evicted_count", &PyPrefixIndex::evicted_count,
                             "Nodes evicted so far.")
      .def_property_readonly("capacity", &PyPrefixIndex::capacity,
                             "The capacity in nodes, or None if unbounded.")
      .def_property_readonly("policy", &PyPrefixIndex::policy,
                             ("The eviction policy: " + choices + ".").c_str())
      .def_property_readonly("page_size", &PyPrefixIndex::page_size,
                             "Tokens per node.")
      .def_property_readonly("memory_bytes", &PyPrefixIndex::memory_bytes,
                             "Heap bytes owned by the engine.")
      .def_property_readonly("engine", &PyPrefixIndex::engine,
                             "The engine's registry name.")
      .def("__repr__", [](const PyPrefixIndex& index) {
        return "<kvprefix.PrefixIndex engine='" + std::string(index.engine()) +
               "' node_count=" + std::to_string(index.node_count()) + ">";
      });
}

}  // namespace
}  // namespace kvprefix

// The extension kvprefix._kvprefix; the package kvprefix (python/src/kvprefix/)
// re-exports it.
PYBIND11_MODULE(_kvprefix, m) {
  namespace py = pybind11;
  m.doc() =
      "Longest reusable KV-cache prefix of each LLM request (token trie).\n"
      "Tokens are int32; node IDs are the root 0, then 1, 2, ... in creation "
      "order.";
  m.attr("__version__") = KVPREFIX_VERSION;
  // An engine with narrower node IDs or offsets ran out of them (SPEC §1):
  // a resource limit, not bad input, hence a MemoryError.
  py::register_exception<kvprefix::CapacityError>(m, "CapacityError",
                                                  PyExc_MemoryError);
  // A cache asked for options it does not implement (a plugin's create
  // answering KVPREFIX_INVALID_ARGUMENT): a ValueError, as any bad option,
  // that kvprefix.testing.check takes for a refusal and skips.
  py::register_exception<kvprefix::OptionsRefused>(m, "Refused",
                                                   PyExc_ValueError);
  // Raised by match_file and read_trace for bad input.
  static py::exception<kvprefix::InputError>& input_error =
      py::register_exception<kvprefix::InputError>(m, "InputError",
                                                   PyExc_ValueError);
  kvprefix::input_error_type = input_error.ptr();
  kvprefix::DefineNameLists(m);
  kvprefix::DefineBatchFunctions(m);
  kvprefix::DefineReplay(m);
  kvprefix::DefineCurve(m);
  kvprefix::DefineToolFunctions(m);
  kvprefix::DefinePrefixIndex(m);
  // kvprefix.testing's C++ half (python/testing_module.h).
  kvprefix::python_testing::DefineTestingModule(m);
}
