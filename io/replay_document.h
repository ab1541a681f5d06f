// Reading SPEC §8 replay documents: the requests of a replay and the cache
// it runs on, the input of `kvprefix replay --input-format requests`, of
// `kvprefix verify --format requests` and of the capacity cases; and SPEC
// §10.1's serving replay documents, the same with each request's arrival and
// output length and the worker's service-time options. One reader reads
// both: a §8 document is a §10 document with every §10 member at its
// default.
#ifndef KVPREFIX_IO_REPLAY_DOCUMENT_H_
#define KVPREFIX_IO_REPLAY_DOCUMENT_H_

#include <array>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "io/input_error.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"
#include "router/router_spec.h"

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

// The members SPEC §10.1 adds to a §8/§9.4 replay document.
inline constexpr std::array<std::string_view, 7> kServeOnlyMembers = {
    "arrivals_us",
    "output_lengths",
    "max_running",
    "prefill_us_per_token",
    "decode_us_per_token",
    "overhead_us",
    "output"};

// The members SPEC §11.1 adds to a §10 document.
inline constexpr std::array<std::string_view, 2> kRouteOnlyMembers = {"workers",
                                                                      "router"};

// Whether a document set any member of kServeOnlyMembers (`places` as
// ReadServeDocumentFile gives it): whether it asks for a serving replay
// rather than a sequential one. O(1). Thread-safe.
bool HasServeMember(const DocumentPlaces& places);

// Parses one SPEC §10.1 serving replay document: a §8 replay document
// (ParseReplayDocument's members and rules) that may also have
//   "arrivals_us": an array of one integer per request, each 0 to
//     kMaxServeTime (2^53) µs, non-decreasing (default: all 0);
//   "output_lengths": an array of one integer per request, each 0 to
//     kMaxServeTime tokens generated (default: all 0);
//   "max_running": an integer 1 to kMaxRunning (2^31 - 1) (default 1);
//   "prefill_us_per_token", "decode_us_per_token", "overhead_us": integers
//     0 to kMaxServeRate (2^32) µs (default 0);
//   "output": "none" or "unique" (kOutputModes; default "none").
// The result's arrivals_us and output_lengths are empty when the member is
// absent (all 0), else hold one value per request. Throws InputError as
// ParseReplayDocument, naming the JSON location of the first problem: an
// unknown (SPEC §11's "workers" and "router" too), duplicated member, null,
// a value of the wrong kind or out of range ("$.max_running", an element
// "$.output_lengths[2]"), an arrival smaller than the one before it
// ("$.arrivals_us[5]: expected an arrival of at least 7 (the one before
// it), found 5"), an array of another length than the requests'
// ("$.arrivals_us: expected 3 arrivals (one per request), found 2"). O(input
// bytes); memory O(requests + tokens). Thread-safe.
ServeInput ParseServeDocument(std::string_view json);

// Parses one SPEC §11.1 routed replay document: a §10.1 serving replay
// document (ParseServeDocument's members and rules) that may also have
//   "workers": an integer 1 to kMaxWorkers (2^31 - 1) (default 1);
//   "router": an object with "name" (required: a name of kRouterPolicies,
//     router/router_spec.h), "seed" (an integer 0 to 2^64 - 1, default 0)
//     and the parameters of kRouterParameters its policy takes, each with
//     its kind and range (a decimal read exactly: JSON digits, optionally
//     '.' and digits, never signed, no exponent); absent: round-robin.
// Sets *routing (the defaults where absent; its parameters only those
// given); `places` tells whether "workers" or "router" was there
// (HasRouteMember). Throws InputError as ParseServeDocument, naming the
// member: "$.workers", "$.router" (not an object, no "name"),
// "$.router.name" (not a policy), "$.router.foo" (an unknown member),
// "$.router.load_factor" (a parameter another policy takes, or a value of
// the wrong kind, out of range, a duplicate, null). O(input bytes).
// Thread-safe.
ServeInput ParseRoutedDocument(std::string_view json, RoutingSpec* routing,
                               DocumentPlaces* places = nullptr);

// Whether a document set any member of kRouteOnlyMembers: whether it asks
// for a routed replay (SPEC §11.8's answer). O(1). Thread-safe.
bool HasRouteMember(const DocumentPlaces& places);

// Reads and parses a serving replay document file ("-" is standard input);
// with `places`, also where the document set each member (HasServeMember
// tells whether it set a §10 one). Throws IoError if it cannot be read,
// InputError as ParseServeDocument.
ServeInput ReadServeDocumentFile(const std::string& path,
                                 DocumentPlaces* places = nullptr);

}  // namespace kvprefix

#endif  // KVPREFIX_IO_REPLAY_DOCUMENT_H_
