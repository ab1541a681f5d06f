// Reading SPEC §8 replay documents: the requests of a replay and the cache
// it runs on, the input of `kvprefix replay --input-format requests`, of
// `kvprefix verify --format requests` and of the capacity cases.
#ifndef KVPREFIX_IO_REPLAY_DOCUMENT_H_
#define KVPREFIX_IO_REPLAY_DOCUMENT_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "io/input_error.h"
#include "kvprefix/replay.h"

namespace kvprefix {

// Where a document set each of its members: the member's name ("policy")
// to its JSON location ("$.policy"; "$.document.policy" in a case file).
// A member absent from the document (defaulted) is absent here, so that an
// option may tell a member the document chose from a default (SPEC §9.4).
using DocumentPlaces = std::map<std::string, std::string, std::less<>>;

// Parses one SPEC §8 replay document: an object with the member "requests"
// (an array of arrays of int32 tokens, as in SPEC §4) and optionally
// "capacity" (an integer from 0 to 2^64 - 1, -0 being 0; absent:
// unbounded), "policy" (a name of kEvictionPolicies, kvprefix/cache.h:
// "lru", "fifo" or "lfu"; default "lru"), "page_size" (an integer from 1 to
// 2^31 - 1; default 1), SPEC §9.4's "model", "match_limit" and "trigger",
// and SPEC §8.1's "namespaces" (one string of at most 256 bytes per
// request; absent: every request in ""), in any order, each once, and
// nothing after it but whitespace. Throws InputError naming the JSON
// location of the first problem (an unknown, duplicated or missing member,
// null, a value of the wrong kind or out of range, a namespace list of
// another length than the requests', anything SPEC §4 rejects).
// O(input bytes). Thread-safe.
ReplayInput ParseReplayDocument(std::string_view json);

// Reads and parses a file ("-" is standard input); with `places`, also
// where the document set each member. Throws IoError if it cannot be read,
// InputError as ParseReplayDocument.
ReplayInput ReadReplayDocumentFile(const std::string& path,
                                   DocumentPlaces* places = nullptr);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_REPLAY_DOCUMENT_H_
