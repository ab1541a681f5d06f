// Reading the SPEC §9 options (kvprefix/cache.h's NamedValue lists) from
// Python arguments, shared by kvprefix_module.cc (replay, curve,
// PrefixIndex) and testing_module.cc (kvprefix.testing.check), so that an
// argument of either is refused in the same words.
#ifndef KVPREFIX_PYTHON_NAMED_VALUES_H_
#define KVPREFIX_PYTHON_NAMED_VALUES_H_

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "kvprefix/cache.h"

namespace kvprefix::python {

// The value of `entries` named by `value`, a str, of the Python argument
// `argument`. Throws, naming the argument and the choices, as CPython's own
// functions do: pybind11::type_error (TypeError) for a value that is not a
// str ("model must be a str, 'spec', 'vllm' or 'sglang', not int"),
// pybind11::value_error (ValueError) for another name ("model must be
// 'spec', 'vllm' or 'sglang', not 'lmcache'"). O(entries). Needs the GIL.
template <typename Enum, std::size_t N>
Enum ToNamedValue(const std::array<NamedValue<Enum>, N>& entries,
                  pybind11::handle value, const char* argument) {
  if (!pybind11::isinstance<pybind11::str>(value)) {
    throw pybind11::type_error(std::string(argument) + " must be a str, " +
                               ChoiceNames(entries, '\'') + ", not " +
                               Py_TYPE(value.ptr())->tp_name);
  }
  const std::optional<Enum> parsed =
      ParseNamedValue(entries, value.cast<std::string>());
  if (!parsed) {
    throw pybind11::value_error(std::string(argument) + " must be " +
                                ChoiceNames(entries, '\'') + ", not " +
                                std::string(pybind11::repr(value)));
  }
  return *parsed;
}

}  // namespace kvprefix::python

#endif  // KVPREFIX_PYTHON_NAMED_VALUES_H_
