// simdjson's kernels, named: which one parses, and choosing another for a
// while (benchmarks and tests compare them). libsimdjson picks the best
// kernel the CPU runs at its first parse (icelake, haswell, westmere on
// x86-64; fallback, its portable one, anywhere); the environment variable
// SIMDJSON_FORCE_IMPLEMENTATION=<name> overrides that choice for a whole
// process. io's readers give the same answers and the same error messages
// with every kernel (json_diagnostics.h, RethrowWithUtf8First).
#ifndef KVPREFIX_IO_JSON_KERNEL_H_
#define KVPREFIX_IO_JSON_KERNEL_H_

#include <string>
#include <vector>

namespace kvprefix {

// The name of the kernel that parses now, e.g. "icelake". Thread-safe.
std::string ActiveJsonKernel();

// The kernels this CPU runs, best first (always ending with "fallback").
std::vector<std::string> SupportedJsonKernels();

// Makes the kernel `name` parse while it lives, then restores the one
// before. Throws std::invalid_argument for a kernel this CPU does not run.
// Changes a process-wide setting: not for use while other threads parse.
class ScopedJsonKernel {
 public:
  explicit ScopedJsonKernel(const std::string& name);
  ScopedJsonKernel(const ScopedJsonKernel&) = delete;
  ScopedJsonKernel& operator=(const ScopedJsonKernel&) = delete;
  ~ScopedJsonKernel();

 private:
  const void* saved_;  // the simdjson::implementation active before
};

}  // namespace kvprefix

#endif  // KVPREFIX_IO_JSON_KERNEL_H_
