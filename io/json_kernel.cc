// simdjson's kernels (see the header).
#include "io/json_kernel.h"

#include <simdjson.h>

#include <stdexcept>

namespace kvprefix {

std::string ActiveJsonKernel() {
  return simdjson::get_active_implementation()->name();
}

std::vector<std::string> SupportedJsonKernels() {
  std::vector<std::string> names;
  for (const simdjson::implementation* kernel :
       simdjson::get_available_implementations()) {
    if (kernel->supported_by_runtime_system()) names.push_back(kernel->name());
  }
  return names;
}

ScopedJsonKernel::ScopedJsonKernel(const std::string& name)
    : saved_(simdjson::get_active_implementation()) {
  const simdjson::implementation* kernel =
      simdjson::get_available_implementations()[name];
  if (kernel == nullptr || !kernel->supported_by_runtime_system()) {
    throw std::invalid_argument("simdjson kernel " + name +
                                " does not run on this CPU");
  }
  simdjson::get_active_implementation() = kernel;
}

ScopedJsonKernel::~ScopedJsonKernel() {
  simdjson::get_active_implementation() =
      static_cast<const simdjson::implementation*>(saved_);
}

}  // namespace kvprefix
