// Checking a value that a reader does not use (json_diagnostics.h,
// ValidateValue): iteratively, with an explicit stack bounded by
// kMaxJsonDepth.
//
// A recursive walk (one call per nesting level, as this file once had)
// overflows the call stack on valid JSON nested ~26,000 deep (a 50 KB trace
// line) and, building each level's location string, takes quadratic time
// and memory. Here one loop keeps one Level per open
// container (an On Demand iterator and the index or name of the child being
// read) and builds a location only when it throws. This file holds
// ValidateValue alone so that fuzz/recursive_validate_value.cc (the old
// recursive walk, for the fuzzers' teeth) can replace it at link time.
#include <fmt/format.h>

#include <vector>

#include "io/json_diagnostics.h"
#include "io/json_limits.h"

namespace kvprefix::json_diagnostics {
namespace {

// One open container: where its iteration is and which child is being read.
struct Level {
  bool is_array = false;
  bool started = false;  // the first child has been taken
  ondemand::array_iterator element;
  ondemand::array_iterator elements_end;
  ondemand::object_iterator member;
  ondemand::object_iterator members_end;
  std::size_t index = 0;  // arrays: the index of the child being read
  std::string_view name;  // objects: the name of the child being read
};

// The location of the value being read `levels` levels below `path`.
std::string LocationOf(const JsonPath& path, const std::vector<Level>& stack,
                       std::size_t levels) {
  std::string location = path.str();
  for (std::size_t i = 0; i < levels; ++i) {
    if (stack[i].is_array) {
      location += fmt::format("[{}]", stack[i].index);
    } else {
      AppendMemberStep(stack[i].name, location);
    }
  }
  return location;
}

}  // namespace

void ValidateValue(const Context& context, Value element, const JsonPath& path,
                   std::size_t depth) {
  std::vector<Level> stack;
  Value current = std::move(element);
  while (true) {
    // `current` is the value at LocationOf(path, stack, stack.size()).
    const auto location = [&] { return LocationOf(path, stack, stack.size()); };
    ondemand::value value;
    ondemand::json_type type;
    if (current.get(value) != simdjson::SUCCESS ||
        value.type().get(type) != simdjson::SUCCESS) {
      throw SyntaxError(context, location(), "a JSON value");
    }
    if (type == ondemand::json_type::array ||
        type == ondemand::json_type::object) {
      if (depth + stack.size() >= kMaxJsonDepth) {
        throw TooDeep(context, value.raw_json_token().data(), location());
      }
      Level level;
      level.is_array = type == ondemand::json_type::array;
      bool opened = false;
      if (level.is_array) {
        ondemand::array array;
        opened = value.get_array().get(array) == simdjson::SUCCESS &&
                 array.begin().get(level.element) == simdjson::SUCCESS &&
                 array.end().get(level.elements_end) == simdjson::SUCCESS;
      } else {
        ondemand::object object;
        opened = value.get_object().get(object) == simdjson::SUCCESS &&
                 object.begin().get(level.member) == simdjson::SUCCESS &&
                 object.end().get(level.members_end) == simdjson::SUCCESS;
      }
      if (!opened) throw SyntaxError(context, location(), "a JSON value");
      stack.push_back(level);
    } else {
      ValidateScalar(context, value, type, location);
    }
    // The next value: the next child of the innermost open container, or
    // the end of the walk when every container is closed.
    while (true) {
      if (stack.empty()) return;
      Level& top = stack.back();
      if (top.is_array) {
        if (top.started) {
          ++top.element;
          ++top.index;
        }
        top.started = true;
        if (top.element != top.elements_end) {
          current = *top.element;
          break;
        }
      } else {
        if (top.started) ++top.member;
        top.started = true;
        if (top.member != top.members_end) {
          const Member member = ReadMember(context, *top.member, [&] {
            return LocationOf(path, stack, stack.size() - 1);
          });
          top.name = member.name;
          current = member.value;
          break;
        }
      }
      stack.pop_back();
    }
  }
}

}  // namespace kvprefix::json_diagnostics
