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
// `argument`. Throws pybind11::value_error (ValueError) naming the argument
// and the choices otherwise, e.g. "model must be 'spec', 'vllm' or
// 'sglang', not 'lmcache'" (a non-str shown by its repr: "..., not 1").
// O(entries). Needs the GIL.
template <typename Enum, std::size_t N>
Enum ToNamedValue(const std::array<NamedValue<Enum>, N>& entries,
                  pybind11::handle value, const char* argument) {
  const std::optional<Enum> parsed =
      pybind11::isinstance<pybind11::str>(value)
          ? ParseNamedValue(entries, value.cast<std::string>())
          : std::nullopt;
  if (!parsed) {
    throw pybind11::value_error(std::string(argument) + " must be " +
                                ChoiceNames(entries, '\'') + ", not " +
                                std::string(pybind11::repr(value)));
  }
  return *parsed;
}

}  // namespace kvprefix::python

#endif  // KVPREFIX_PYTHON_NAMED_VALUES_H_
