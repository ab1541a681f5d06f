// Internal to io/: the pieces io's strict readers (SPEC §4 documents, case
// files) are built from, on simdjson On Demand: objects whose members come
// from a fixed list, arrays of token arrays, unsigned integers and strings.
// Each one consumes the whole value it is given, so every byte is checked,
// and reports a problem at its JSON location through json_diagnostics.
#ifndef KVPREFIX_IO_JSON_READER_H_
#define KVPREFIX_IO_JSON_READER_H_

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/json_diagnostics.h"
#include "io/replay_document.h"
#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "kvprefix/sequence_list.h"
#include "router/router_spec.h"

namespace kvprefix::json_reader {

using json_diagnostics::Context;
using json_diagnostics::JsonPath;
using json_diagnostics::Value;

// Appends the array of tokens `value` (at `path`) to `out` as one sequence.
// Throws InputError unless it is an array of integers in the int32 range.
void ReadTokens(const Context& context, Value value, const JsonPath& path,
                SequenceList& out);

// Appends every array of tokens of the array `value` (at `path`) to `out`.
void ReadSequences(const Context& context, Value value, const JsonPath& path,
                   SequenceList& out);

// Throws InputError at `path` unless `text` is a namespace's length, at
// most kMaxNamespaceBytes bytes (SPEC §8.1). Returns `text`.
std::string CheckNamespaceLength(const Context& context, const JsonPath& path,
                                 std::string text);

// Appends every namespace of the array `value` (at `path`) to `out`: each
// a string of at most kMaxNamespaceBytes bytes (SPEC §8.1; UTF-8 is the
// document's rule), else InputError at its place ("$.namespaces[3]").
void ReadNamespaces(const Context& context, Value value, const JsonPath& path,
                    std::vector<std::string>& out);

// Throws InputError at `at` (the member's location, e.g. "$.arrivals_us")
// unless `at` is empty (the member is absent) or `found` == `count`, with
// `noun` the singular of what the member holds and `what` what there is one
// of per element: "expected 3 arrivals (one per request), found 2".
void CheckCount(const std::string& at, std::size_t found, std::size_t count,
                std::string_view noun, std::string_view what);

// CheckCount for a member holding `namespaces`, one per `what` ("request",
// "cached sequence"): "expected 3 namespaces (one per request), found 2".
void CheckNamespaceCount(const std::string& at,
                         const std::vector<std::string>& namespaces,
                         std::size_t count, std::string_view what);

// Where a batch input's (SPEC §4) namespace members were (empty: absent).
struct BatchNamespacesAt {
  std::string cached, requests;
  // CheckNamespaceCount for both lists of `input`.
  void Check(const BatchInput& input) const;
};

// Reads member `index` of a batch input (or a batch case file, whose first
// members are the same): 0 "cached_sequences", 1 "requests",
// 2 "cached_namespaces", 3 "namespaces" (ReadNamespaces), noting in `at`
// where the namespaces were.
void ReadBatchMember(const Context& context, std::size_t index, Value value,
                     const JsonPath& path, BatchInput& input,
                     BatchNamespacesAt& at);

// The members of a SPEC §8 replay document, "requests" (required) first,
// then §8's cache, §9.4's model options and §8.1's namespaces.
inline constexpr std::array<std::string_view, 8> kReplayMembers = {
    "requests", "capacity",    "policy",  "page_size",
    "model",    "match_limit", "trigger", "namespaces"};

// The members of a SPEC §10 serving replay document: kReplayMembers, then
// kServeOnlyMembers (io/replay_document.h).
inline constexpr auto kServeMembers = [] {
  std::array<std::string_view, kReplayMembers.size() + kServeOnlyMembers.size()>
      names;
  std::ranges::copy(kServeOnlyMembers,
                    std::ranges::copy(kReplayMembers, names.begin()).out);
  return names;
}();

// The members of a SPEC §11 routed replay document: kServeMembers, then
// kRouteOnlyMembers (io/replay_document.h).
inline constexpr auto kRoutedMembers = [] {
  std::array<std::string_view, kServeMembers.size() + kRouteOnlyMembers.size()>
      names;
  std::ranges::copy(kRouteOnlyMembers,
                    std::ranges::copy(kServeMembers, names.begin()).out);
  return names;
}();

// A replay document as it is read: the input, and where each member it set
// was (DocumentPlaces), for Finish's checks and for the options that may
// replace the members (SPEC §9.4, §10.1).
struct ReplayDocumentReader {
  ServeInput input;
  DocumentPlaces places;
  RoutingSpec routing;  // SPEC §11.1's members, kRoutedMembers only

  // Reads member kRoutedMembers[index] (replay_document.h says what each may
  // hold).
  void Read(const Context& context, std::size_t index, Value value,
            const JsonPath& path);
  // After the last member: one namespace, arrival and output length per
  // request (CheckCount), the model's default match limit where none was
  // given, then SPEC §9.4's combined rules (FindModelOptionsProblem), an
  // InputError at the member that breaks one. Returns the input; `places`
  // stays.
  ServeInput Finish();
};

// The whole of `json` as one document whose members are `names`
// (kReplayMembers: ParseReplayDocument's rules; kServeMembers:
// ParseServeDocument's; kRoutedMembers: ParseRoutedDocument's), parsed in
// place; with `places`, also where it set each member, with `routing` its
// §11.1 members.
template <std::size_t N>
ServeInput ReadDocument(simdjson::padded_string_view json,
                        const std::array<std::string_view, N>& names,
                        DocumentPlaces* places = nullptr,
                        RoutingSpec* routing = nullptr);

// An integer from 0 to 2^64 - 1 (-0 is 0, as for every integer read: SPEC
// §6), or InputError at `path`.
std::uint64_t ReadUnsigned(const Context& context, Value value,
                           const JsonPath& path);

// A string (unescaped; an invalid escape is reported at its byte), or
// InputError at `path`.
std::string ReadString(const Context& context, Value value,
                       const JsonPath& path);

// The error for member `name` of the object at `path`, which is none of
// `names`.
InputError UnknownMember(const Context& context, const JsonPath& path,
                         std::span<const std::string_view> names,
                         std::string_view name);

// Reads every member of `object` (at `path`): each must be one of `names`,
// at most once, and the first `required` names must all be there. Calls
// read(index in names, value, member path) for each member, in input order.
template <std::size_t N, typename Read>
void ReadMembers(const Context& context, simdjson::ondemand::object object,
                 const JsonPath& path,
                 const std::array<std::string_view, N>& names,
                 std::size_t required, Read&& read) {
  std::array<bool, N> seen = {};
  for (auto field : object) {
    const json_diagnostics::Member member =
        json_diagnostics::ReadMember(context, std::move(field), path);
    std::size_t index = 0;
    while (index < N && names[index] != member.name) ++index;
    if (index == N) throw UnknownMember(context, path, names, member.name);
    if (seen[index]) {
      throw json_diagnostics::DuplicateMember(context, member.name, path);
    }
    seen[index] = true;
    const JsonPath member_path = path.Member(names[index]);
    read(index, member.value, member_path);
  }
  for (std::size_t index = 0; index < required; ++index) {
    if (!seen[index]) {
      throw json_diagnostics::MissingMember(context, names[index], path);
    }
  }
}

// ReadMembers on `value`, which must be an object.
template <std::size_t N, typename Read>
void ReadObject(const Context& context, Value value, const JsonPath& path,
                const std::array<std::string_view, N>& names,
                std::size_t required, Read&& read) {
  simdjson::ondemand::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    throw json_diagnostics::Unexpected(context, value, path.str(), "an object");
  }
  ReadMembers(context, object, path, names, required, read);
}

// ReadRootObject's work, with errors that may depend on simdjson's kernel.
template <std::size_t N, typename Read>
void ReadRootObjectAnyKernel(simdjson::padded_string_view json,
                             const std::array<std::string_view, N>& names,
                             std::size_t required, Read&& read) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document document;
  simdjson::ondemand::object root;
  simdjson::error_code error = parser.iterate(json).get(document);
  if (error == simdjson::SUCCESS) error = document.get_object().get(root);
  if (error != simdjson::SUCCESS) {
    throw json_diagnostics::DocumentError(error, json, "");
  }
  const Context context{document, json};
  const JsonPath root_path;
  ReadMembers(context, root, root_path, names, required,
              [&](std::size_t index, Value value, const JsonPath& path) {
                read(context, index, value, path);
              });
  json_diagnostics::CheckAtEnd(context);
}

// Parses `json` as one object read by ReadMembers at "$", calling
// read(context, index, value, path) for each member, and requires that
// nothing but whitespace follows it. Throws InputError (see DocumentError
// for the document as a whole; the same with every simdjson kernel:
// RethrowWithUtf8First), IoError for a document over 4 GiB, and
// std::bad_alloc when memory runs out.
template <std::size_t N, typename Read>
void ReadRootObject(simdjson::padded_string_view json,
                    const std::array<std::string_view, N>& names,
                    std::size_t required, Read&& read) {
  try {
    ReadRootObjectAnyKernel(json, names, required, read);
  } catch (const InputError&) {
    json_diagnostics::RethrowWithUtf8First(json, "");
  }
}

}  // namespace kvprefix::json_reader

#endif  // KVPREFIX_IO_JSON_READER_H_
