// Namespaces (SPEC §8.1): requests that must not share KV even when their
// tokens are equal (vLLM's LoRA adapter and cache_salt, SGLang's extra_key).
// Two symbols are equal only when their contents and their requests'
// namespaces are; everything else (one trie, one capacity, one clock) is
// shared.
//
// Design: the one home of the rule, in front of unchanged engines and
// models. Only the root's edges need the namespace (every node below a root
// child is in that child's namespace), and a first page is equal to another
// exactly when their first tokens and the rest of their tokens are, so a
// run folds a request's namespace into its FIRST TOKEN: NamespaceFolder
// replaces it by a dense symbol of (namespace, token). Every engine and
// model compares symbols only with symbols at the same position of a
// request (a trie's child of a depth-d node, a vLLM chain page by page,
// SGLang's edges from the root), so first tokens live in a value space of
// their own and the other tokens keep theirs. Lengths, node IDs,
// capacities, evictions and the LRU curve's stack property are those of the
// folded requests, which have the same lengths: SPEC §8.1's answers. A
// run folds all its requests or none: a run with only the default
// namespace folds none and is exactly, and as fast as, a run without
// namespaces (HasNamespaces decides for a document).
#ifndef KVPREFIX_KVPREFIX_NAMESPACES_H_
#define KVPREFIX_KVPREFIX_NAMESPACES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "kvprefix/memory.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

// The longest namespace, in bytes of UTF-8 (SPEC §8.1).
inline constexpr std::size_t kMaxNamespaceBytes = 256;

// True if some namespace of `namespaces` is not the default "": a run whose
// namespaces are all "" (or absent, an empty span) folds nothing. O(size).
// Thread-safe.
inline bool HasNamespaces(std::span<const std::string> namespaces) {
  for (const std::string& name : namespaces) {
    if (!name.empty()) return true;
  }
  return false;
}

// Folds namespaces into the first tokens of one run's requests (see the
// top of this file). Memory: one entry per namespace and one per distinct
// (namespace, first token) pair seen, about 16 bytes each (a trace's first
// tokens are few: its system prompts). Not thread-safe.
class NamespaceFolder {
 public:
  // The small integer of `name`: "" is 0, the others 1, 2, ... in order of
  // first use. Throws std::invalid_argument ("namespace of N bytes: at most
  // 256") for a name longer than kMaxNamespaceBytes; UTF-8 is the
  // readers' to check (their inputs are JSON or Python strings). O(|name|)
  // expected.
  std::uint32_t Intern(std::string_view name) {
    if (name.size() > kMaxNamespaceBytes) {
      throw std::invalid_argument(
          "namespace of " + std::to_string(name.size()) + " bytes: at most " +
          std::to_string(kMaxNamespaceBytes));
    }
    const auto [it, added] = ids_.try_emplace(
        AbslView(name), static_cast<std::uint32_t>(ids_.size()));
    return it->second;
  }

  // The symbol standing for `first_token` in namespace `id`: 0, 1, 2, ...
  // in order of first use (equal pairs, equal symbols). Throws
  // CapacityError past 2^32 distinct pairs. O(1) expected.
  Token Fold(std::uint32_t id, Token first_token) {
    const auto [it, added] = symbols_.try_emplace(Key(id, first_token), 0);
    if (added) {
      if (symbols_.size() > kMaxSymbols) {
        symbols_.erase(it);
        throw CapacityError("namespaces: more than 2^32 distinct first tokens");
      }
      it->second =
          static_cast<Token>(static_cast<std::uint32_t>(symbols_.size() - 1));
    }
    return it->second;
  }

  // The symbol Fold gave `first_token` in namespace `name`, or nullopt if
  // it gave none (a request starting so matches nothing yet). Changes
  // nothing: may run concurrently with other const calls. O(|name|)
  // expected.
  std::optional<Token> Find(std::string_view name, Token first_token) const {
    const auto id = ids_.find(AbslView(name));
    if (id == ids_.end()) return std::nullopt;
    const auto symbol = symbols_.find(Key(id->second, first_token));
    if (symbol == symbols_.end()) return std::nullopt;
    return symbol->second;
  }

  // Appends `sequence` to `out` as one sequence, its first token (if any)
  // folded in namespace `name`. Throws as Intern and Fold. O(|sequence|).
  void AppendFolded(TokenSpan sequence, std::string_view name,
                    SequenceList& out) {
    if (!sequence.empty()) {
      out.PushToken(Fold(Intern(name), sequence.front()));
      out.PushTokens(sequence.subspan(1));
    }
    out.CloseSequence();
  }

  // `sequences` as a run's engine sees them: sequence i folded in namespace
  // namespaces[i] ("" for every one when `namespaces` is empty). Throws
  // std::invalid_argument if `namespaces` is neither empty nor one per
  // sequence, and as Intern and Fold. O(tokens).
  SequenceList Folded(const SequenceList& sequences,
                      std::span<const std::string> namespaces) {
    if (!namespaces.empty() && namespaces.size() != sequences.size()) {
      throw std::invalid_argument(
          std::to_string(namespaces.size()) + " namespaces for " +
          std::to_string(sequences.size()) + " sequences");
    }
    SequenceList folded;
    folded.Reserve(sequences.size(), sequences.total_tokens());
    for (std::size_t i = 0; i < sequences.size(); ++i) {
      AppendFolded(sequences[i],
                   namespaces.empty() ? std::string_view() : namespaces[i],
                   folded);
    }
    return folded;
  }

  // Heap bytes of the two tables. O(1).
  std::size_t memory_bytes() const {
    return FlatHashTableBytes(ids_) + FlatHashTableBytes(symbols_);
  }

 private:
  static constexpr std::size_t kMaxSymbols = std::size_t{1} << 32;

  // Abseil's own string_view, which this Abseil does not alias to std's.
  static absl::string_view AbslView(std::string_view name) {
    return absl::string_view(name.data(), name.size());
  }

  static std::uint64_t Key(std::uint32_t id, Token first_token) {
    return (std::uint64_t{id} << 32) | static_cast<std::uint32_t>(first_token);
  }

  absl::flat_hash_map<std::string, std::uint32_t> ids_{{"", 0}};
  // (namespace id << 32 | first token as uint32) -> symbol
  absl::flat_hash_map<std::uint64_t, Token> symbols_;
};

// Replaces `sequences` by the sequences a run's engine sees when some of
// `namespaces` (one per sequence, or none) is not "": NamespaceFolder's
// Folded, by a folder of its own; leaves them as they are otherwise. For a
// run that reports no sequence's tokens (a curve, a summary). Throws as
// Folded. O(tokens).
inline void FoldNamespaces(SequenceList& sequences,
                           std::span<const std::string> namespaces) {
  if (!HasNamespaces(namespaces)) return;
  NamespaceFolder folder;
  sequences = folder.Folded(sequences, namespaces);
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_NAMESPACES_H_
