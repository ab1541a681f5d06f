// Generated batch inputs without RapidCheck: the shapes of checking/recipe.h
// drawn from std::mt19937_64, for `kvprefix verify` (whose inputs must be
// reproducible from a seed and must not need the test library).
#ifndef KVPREFIX_CHECKING_RANDOM_INPUT_H_
#define KVPREFIX_CHECKING_RANDOM_INPUT_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "kvprefix/batch.h"
#include "kvprefix/replay.h"

namespace kvprefix::checking {

// A batch input of recipe.h's shapes: at least one cached sequence, each
// related to the ones before it, and at least one request, each related to
// the cached sequences. `size` (0 or more; 100 is a RapidCheck run's
// largest) scales the number of sequences (up to ~size * 0.3 per list) and
// the fresh tokens per sequence. The same (seed, size) always gives the same
// input, on every platform: mt19937_64's outputs are fixed by the C++
// standard and every draw reduces them with `%`. Thread-safe.
BatchInput RandomBatchInput(std::uint64_t seed, int size);

// A replay (SPEC §8 replay document) of recipe.h's cache shapes: requests
// each derived from the ones before it (up to ~size * 1.5 of them), a policy,
// a page size from 1 to 3 and a capacity from 0 to twice the requests'
// distinct prefixes (in pages), so that about three inputs in four evict.
// Deterministic in (seed, size) as RandomBatchInput. Thread-safe.
ReplayInput RandomReplayInput(std::uint64_t seed, int size);

// The namespaces (SPEC §8.1) generated inputs draw from: the default "" and
// two others.
inline constexpr std::array<std::string_view, 3> kRandomNamespaces = {
    "", "lora-a", "salt-b"};

// Gives about one input in four (by `seed`, from a stream of its own, so the
// input's sequences and options stay RandomReplayInput's) namespaces: each
// request one of kRandomNamespaces, and one more request, a copy of an
// earlier one in another namespace right after it, so that equal tokens in
// two namespaces always occur. Leaves the other inputs as they are.
// Deterministic in (seed, input) as above. O(tokens). Thread-safe.
void AddRandomNamespaces(std::uint64_t seed, ReplayInput& input);

// Undoes AddRandomNamespaces(seed, input) on the replay it changed (the
// same seed): the copy it added is removed and the namespaces cleared, so
// the replay is RandomReplayInput's again; does nothing to a replay without
// namespaces. For inputs that take no namespaces (SPEC §10 documents).
// O(tokens).
void RemoveRandomNamespaces(std::uint64_t seed, ReplayInput& input);

// The same for a batch input: each cached sequence and request gets a
// namespace, and one more request, a copy of a cached sequence in another
// namespace than that sequence's.
void AddRandomNamespaces(std::uint64_t seed, BatchInput& input);

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_RANDOM_INPUT_H_
