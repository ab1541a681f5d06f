// The teeth of the trace-line fuzzer (fuzz/recursion_teeth.sh): the
// recursive ValidateValue that io/json_diagnostics.cc had before the fix
// (tests/former_bugs_test.cc: a trace line nested ~26,500 deep crashed),
// kept as it was (one call per nesting level, no depth limit, each level's
// location string built on the way down) under the new signature; only its
// check of scalars is today's (ValidateScalar). The
// teeth build links this file ahead of kvprefix_io, so the linker takes
// this definition and never pulls io/json_validate.cc from the archive
// (fuzz/CMakeLists.txt). The fuzzer, running its targets on a small stack,
// must crash on it; no shipped binary contains it.
#include <fmt/format.h>

#include "io/json_diagnostics.h"

namespace kvprefix::json_diagnostics {
namespace {

void ValidateRecursively(const Context& context, Value element,
                         const std::string& location) {
  ondemand::value value;
  ondemand::json_type type;
  if (element.get(value) != simdjson::SUCCESS ||
      value.type().get(type) != simdjson::SUCCESS) {
    throw SyntaxError(context, location, "a JSON value");
  }
  switch (type) {
    case ondemand::json_type::array: {
      ondemand::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) break;
      std::size_t index = 0;
      for (auto item : array) {
        ValidateRecursively(context, item,
                            fmt::format("{}[{}]", location, index++));
      }
      return;
    }
    case ondemand::json_type::object: {
      ondemand::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) break;
      for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
          throw SyntaxError(context, location, "a member name, ',' or '}'");
        }
        ValidateRecursively(context, field.value(), MemberPath(key, location));
      }
      return;
    }
    default:
      ValidateScalar(context, value, type, [&] { return location; });
      return;
  }
  throw SyntaxError(context, location, "a JSON value");
}

}  // namespace

void ValidateValue(const Context& context, Value element, const JsonPath& path,
                   std::size_t /*depth: the old walk had no limit*/) {
  ValidateRecursively(context, std::move(element), path.str());
}

}  // namespace kvprefix::json_diagnostics
