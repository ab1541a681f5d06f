// The C++ half of kvprefix.testing (python/src/kvprefix/testing/): checks a
// Python cache object against the reference engine, in-process, on the
// inputs `kvprefix verify` generates (checking/random_input.h) and on given
// documents, and shrinks the first disagreement with verify's shrinker
// (verify/shrink.h), so that Python gets verify's inputs, comparison and
// minimal cases without a process per input.
#ifndef KVPREFIX_PYTHON_TESTING_MODULE_H_
#define KVPREFIX_PYTHON_TESTING_MODULE_H_

#include <pybind11/pybind11.h>

namespace kvprefix::python_testing {

// Adds the submodule `_testing` to the extension `parent`
// (kvprefix._kvprefix._testing): the class Input (one batch input or replay
// document, parsed or generated) and the functions parse_input,
// generated_input, generated_model, model_combinations, output_modes,
// check_input and run (and the class GeneratedModel);
// kvprefix/testing/__init__.py documents what they do for users. Call once,
// from PYBIND11_MODULE, after kvprefix.InputError is registered (parse errors
// are raised as it).
void DefineTestingModule(pybind11::module_& parent);

}  // namespace kvprefix::python_testing

#endif  // KVPREFIX_PYTHON_TESTING_MODULE_H_
