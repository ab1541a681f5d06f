// Deterministic workloads for the benchmark suite: what a prefix cache sees
// in LLM serving, as cached sequences plus requests.
//
// Every generator is a pure function of its size argument: tokens come from
// std::mt19937_64 with a fixed seed per generator (the sequence of
// mt19937_64 outputs is fixed by the C++ standard), so two runs, two commits
// or two machines benchmark the same tokens. Synthetic tokens are vocabulary
// IDs below kDefaultVocabulary (Llama 3's 128,256) unless a generator says
// otherwise. The Mooncake readers take the real FAST'25 traces in SPEC §7
// token mode.
//
// Each workload is a BatchInput (kvprefix/batch.h), which the three
// benchmark operations use as follows:
//   Build:  insert `cached_sequences` into an empty index;
//   Match:  with `cached_sequences` inserted, match every request (warm);
//   Replay: replay `cached_sequences` then `requests` as one trace (SPEC §3).
//
// Thread safety: the functions share no state; each call allocates its own
// result.
#ifndef KVPREFIX_BENCH_WORKLOADS_H_
#define KVPREFIX_BENCH_WORKLOADS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "io/mooncake.h"
#include "kvprefix/batch.h"
#include "kvprefix/sequence_list.h"

namespace kvprefix::bench {

// Models: an API deployment where every request carries the same long system
// prompt (4,096 tokens) followed by a short unique user message (64..191
// tokens), as in SGLang's RadixAttention evaluation. `sequences` cached
// conversations and as many new requests with the same prompt.
BatchInput SystemPromptWorkload(std::size_t sequences);

// Models: multi-turn chat. Each of `conversations` conversations has a shared
// 256-token system prompt and 2..8 turns (user 16..127 tokens, assistant
// 32..383 tokens); every completed turn's history is cached, and the request
// is the full history plus the next user message (the Mooncake conversation
// pattern: each turn extends the last).
BatchInput MultiTurnWorkload(std::size_t conversations);

// Models: few-shot prompting as in evaluation harnesses (MMLU 5-shot): a
// 128-token instruction, 5 distinct examples drawn from a pool of 64
// (96..223 tokens each) in random order, then a 32..63-token question.
// `sequences` cached prompts and as many fresh ones as requests.
BatchInput FewShotWorkload(std::size_t sequences);

// Models: tree-of-thought / parallel sampling (SGLang fork): a 512-token
// problem statement, then a tree with branching factor 4 whose steps are
// 32..64 tokens; `leaves` root-to-leaf paths are cached. Each request follows
// a random cached path to a random depth and continues with a new step.
BatchInput TreeOfThoughtWorkload(std::size_t leaves);

// Models: unrelated requests with no reuse, the overhead case of a prefix
// cache (the key workloads' no-sharing one): `sequences` random 64-token
// sequences cached; requests alternate between a fresh random sequence and a
// cached one with its last 8 tokens changed (2 * `sequences` requests).
BatchInput NoSharingWorkload(std::size_t sequences);

// Models: many short unrelated prompts whose first tokens already differ
// (the key workloads' wide one): `first_tokens` (<= vocabulary) 16-token
// sequences with distinct first tokens; each request is a cached sequence, in
// shuffled order, with one token at position 1..15 changed.
BatchInput WideWorkload(std::size_t first_tokens);

// Adversarial: `children` single-token sequences whose tokens are distinct
// random values over the whole int32 range (negatives included), i.e. that
// many children at the root. Requests: each token again, shuffled, followed
// by one more token.
BatchInput RootFanoutWorkload(std::size_t children);

// Models: a bounded prefix cache that has not filled yet, on a trace whose
// requests share nothing (Mooncake block mode, where one token is a block
// hash and a new conversation starts with a new block): the `requests`
// single-token sequences {1}, {2}, ..., {requests}, the first half cached,
// the second half as requests, so every insert of the replay adds a leaf
// and, with a capacity above `requests`, the leaves pile up.
BatchInput DistinctTokensWorkload(std::size_t requests);

// Adversarial: one `length`-token random chain, requested once in full.
BatchInput ChainWorkload(std::size_t length);

// Adversarial: one token repeated `length` times, requested once in full.
BatchInput RepeatedTokenWorkload(std::size_t length);

// Sweep of shared-prefix length: 32 cached sequences that share their first
// `prefix_tokens` tokens and end in 64 unique tokens; 32 requests with the
// same prefix and new 64-token endings. Models growing system prompts /
// documents in RAG.
BatchInput SharedPrefixWorkload(std::size_t prefix_tokens);

// Sweep of number of sequences: `sequences` cached 128-token sequences, each
// one of 16 shared 64-token headers (prompt templates) plus 64 random
// tokens; the requests are the cached sequences, shuffled, with their last 32
// tokens changed.
BatchInput SequenceCountWorkload(std::size_t sequences);

// The first `requests` lines of a Mooncake trace (SPEC §7, token mode with
// the default vocabulary unless `mode` says block), as one list of token
// sequences. Throws IoError if the file cannot be read and InputError if a
// line is malformed. Reads only the lines it needs.
SequenceList ReadMooncakeHead(const std::string& path, std::size_t requests,
                              TraceMode mode = TraceMode::kToken);

// A Mooncake trace's first `requests` requests in batch form: the first half
// cached, the second half as requests (the key workloads take 2,000 of
// conversation_trace.jsonl); replaying both halves in order replays the
// trace's head. Throws as ReadMooncakeHead.
BatchInput MooncakeBatchWorkload(const std::string& path, std::size_t requests,
                                 TraceMode mode = TraceMode::kToken);

// `workload` with every sequence in a namespace (SPEC §8.1): the trace's
// i-th (cached sequences first, then requests) in names[i mod size]. For
// replays, whose halves run as one trace. Requires names not empty.
// O(sequences).
BatchInput InNamespaces(BatchInput workload,
                        const std::vector<std::string>& names);

}  // namespace kvprefix::bench

#endif  // KVPREFIX_BENCH_WORKLOADS_H_
