// Writing JSON: the batch job's answer (SPEC §5) and SPEC §4 documents.
#ifndef KVPREFIX_IO_JSON_OUTPUT_H_
#define KVPREFIX_IO_JSON_OUTPUT_H_

#include <span>
#include <string>

#include "io/json_input.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

// Appends one match object, compact, members in SPEC §5 order:
// {"matched_length":N,"cache_node":N,"uncached_suffix":[...]}
// `request` is the matched request (the suffix is request[matched_length..]).
void AppendMatchJson(TokenSpan request, const Match& match, std::string& out);

// Appends {"matches":[...]}\n for matches[i] answering requests[i].
// Requires matches.size() == requests.size(). O(output bytes).
void AppendMatchesJson(const SequenceList& requests,
                       std::span<const Match> matches, std::string& out);

// Appends a compact SPEC §4 document {"cached_sequences":[...],"requests":[...]}
// followed by a newline; ParseBatchInput reads it back unchanged.
void AppendBatchInputJson(const BatchInput& input, std::string& out);

// Writes `contents` to `path` atomically: to a temporary file in the same
// folder, then rename(2), so a failure never leaves a partial file. "-" means
// standard output. Throws IoError naming the path and the reason.
void WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_JSON_OUTPUT_H_
