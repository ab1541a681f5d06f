// Writing JSON: the batch job's answer (SPEC §5) and SPEC §4 documents.
#ifndef KVPREFIX_IO_JSON_OUTPUT_H_
#define KVPREFIX_IO_JSON_OUTPUT_H_

#include <array>
#include <csignal>
#include <cstddef>
#include <span>
#include <string>

#include "kvprefix/batch.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"
#include "router/router_spec.h"

namespace kvprefix {

// Appends one match object, compact, members in SPEC §5 order:
// {"matched_length":N,"cache_node":N,"uncached_suffix":[...]}
// `request` is the matched request (the suffix is request[matched_length..]).
void AppendMatchJson(TokenSpan request, const Match& match, std::string& out);

// About the bytes AppendMatchJson writes for matches whose uncached
// suffixes hold `suffix_tokens` tokens in all, `matches` of them: ~80 bytes
// of members per match, ~8 per token (a token of up to 6 digits and a
// comma; larger tokens may need more). For reserving output buffers. O(1).
constexpr std::size_t MatchJsonBytesEstimate(std::size_t matches,
                                             std::size_t suffix_tokens) {
  return 80 * matches + 8 * suffix_tokens;
}

// Appends {"matches":[...]}\n for matches[i] answering requests[i].
// Requires matches.size() == requests.size(). O(output bytes).
void AppendMatchesJson(const SequenceList& requests,
                       std::span<const Match> matches, std::string& out);

// Appends a compact SPEC §4 document
// {"cached_sequences":[...],"requests":[...]} followed by a newline, and
// "cached_namespaces" and "namespaces" (SPEC §8.1) where their lists are
// not empty; ParseBatchInput reads it back unchanged.
void AppendBatchInputJson(const BatchInput& input, std::string& out);

// Appends a compact SPEC §8 replay document followed by a newline:
// {"requests":[...],"capacity":C,"policy":"lru","page_size":P}, capacity
// left out when unbounded, "namespaces" (SPEC §8.1) when its list is not
// empty; ParseReplayDocument reads it back unchanged.
void AppendReplayDocumentJson(const ReplayInput& input, std::string& out);

// Appends a compact SPEC §10.1 serving replay document followed by a
// newline: AppendReplayDocumentJson's members, then those of §10.1 that
// differ from their defaults, in this order: "arrivals_us" and
// "output_lengths" (when not empty), "max_running" (when not 1),
// "prefill_us_per_token", "decode_us_per_token", "overhead_us" (when not
// 0), "output" (when "unique"). A document with every §10 default is the
// §8 document. ParseServeDocument reads it back unchanged. O(tokens).
// Thread-safe.
void AppendServeDocumentJson(const ServeInput& input, std::string& out);

// Appends SPEC §11.1's routed replay document: `input`'s §10 document
// (AppendServeDocumentJson) with "workers" (when not 1) and "router":
// {"name":...} with "seed" (when not 0) and the parameters given, each as
// §11.1 writes it (RouterValueText; names quoted). A plugin's router
// (routing.router.plugin) cannot be written: std::invalid_argument.
// ParseRoutedDocument reads it back unchanged. O(tokens). Thread-safe.
void AppendRoutedDocumentJson(const ServeInput& input,
                              const RoutingSpec& routing, std::string& out);

// The signals whose default action ends the process and that a program may
// catch to remove the temporary file first (RemoveTemporaryFileInFlight).
// SIGXFSZ is not one: a program ignores it, and the write then fails with
// EFBIG ("File too large"), an IoError.
inline constexpr std::array<int, 10> kSignalsThatEndAWrite = {
    SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,   SIGXCPU,
    SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF};

// Writes `contents` to `path` atomically: to a temporary file in the same
// folder, then rename(2), so a failure never leaves a partial file. "-" means
// standard output. Symbolic links are followed: the file they lead to is
// replaced and the links stay. A replaced file keeps its permissions; a new
// one gets 0666 minus the umask. Devices, pipes and /proc/<pid>/fd links
// (-o /dev/stdout) cannot be replaced and are written in place (appending).
// Signals: it installs no handler and changes no disposition (the program
// owns its signals); kSignalsThatEndAWrite are only blocked in the calling
// thread while the temporary file is created, renamed or removed, so that
// RemoveTemporaryFileInFlight never sees a half-updated path. A program
// that wants no `.name.XXXXXX` left behind when such a signal kills it calls
// RemoveTemporaryFileInFlight from its handlers (the CLI's main does).
// Calls from several threads are serialized. Throws IoError naming the path
// and the reason ("<path>: cannot create a temporary file in <folder>:
// <reason>", "<path>: cannot write: <reason>"), std::invalid_argument for an
// empty path. O(bytes).
void WriteFileAtomically(const std::string& path, std::string_view contents);

// The same for contents made of `pieces`, written in order (no copy joins
// them).
void WriteFileAtomically(const std::string& path,
                         std::span<const std::string_view> pieces);

// Removes the temporary file that a WriteFileAtomically in progress is
// writing, if there is one; does nothing otherwise. For a signal handler
// about to end the process (kSignalsThatEndAWrite): async-signal-safe, it
// makes one unlink(2) of a path kept in a static buffer and clears a
// volatile std::sig_atomic_t flag. When the process goes on instead, the
// write in progress fails with IoError (its rename finds no file) and
// leaves the target as it was. The writing thread blocks
// kSignalsThatEndAWrite while it updates the path, so a handler for those
// signals run by that thread never sees a half-updated one (one run by another
// thread at that very moment may miss the file). O(1).
void RemoveTemporaryFileInFlight();

// Throws what WriteFileAtomically(path, ...) would throw for a reason the
// path alone shows, creating nothing: so that a long run finds a bad output
// path before it starts, not at its end. std::invalid_argument "the output
// path is empty" for ""; IoError "<path>: cannot open: Is a directory" for
// a folder, "<path>: cannot create a temporary file in <folder>: <reason>"
// for a missing, unsearchable or unwritable folder. Accepts "-", devices
// and pipes. Not a promise that the write will succeed (the disk may fill,
// the folder may go). O(symbolic links followed).
void CheckOutputPath(const std::string& path);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_JSON_OUTPUT_H_
