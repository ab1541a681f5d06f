// SequenceList: many token sequences stored back to back in one buffer.
//
// Inputs of hundreds of megabytes hold millions of sequences; one vector per
// sequence would cost an allocation and 24 bytes of header each. A
// SequenceList keeps every token in one contiguous array plus an array of end
// offsets, and hands out spans. Both arrays ask for transparent huge pages
// once they reach 2 MiB (kvprefix/huge_pages.h): a parsed input of hundreds
// of megabytes then costs a few hundred page faults, not tens of thousands.
#ifndef KVPREFIX_KVPREFIX_SEQUENCE_LIST_H_
#define KVPREFIX_KVPREFIX_SEQUENCE_LIST_H_

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "kvprefix/huge_pages.h"
#include "kvprefix/types.h"

namespace kvprefix {

class SequenceList {
 public:
  SequenceList() = default;
  // Builds a list from nested braces, for tests: {{1, 2}, {}, {3}}.
  SequenceList(std::initializer_list<std::initializer_list<Token>> sequences);

  // Appends one whole sequence. Amortized O(length).
  void Append(TokenSpan sequence);

  // Streaming form used by parsers: PushToken() any number of times, then
  // CloseSequence() to end the sequence (an empty one if no token was pushed).
  void PushToken(Token token) { tokens_.push_back(token); }
  // Pushes every token of `tokens`. Amortized O(tokens.size()).
  void PushTokens(TokenSpan tokens) {
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  }
  void CloseSequence() { ends_.push_back(tokens_.size()); }

  // Number of sequences.
  std::size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  // Sum of all sequence lengths, in tokens.
  std::size_t total_tokens() const { return tokens_.size(); }

  // The i-th sequence (0 <= i < size()). O(1); the span is invalidated by the
  // next Append/PushToken.
  TokenSpan operator[](std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    return TokenSpan(tokens_.data() + begin, ends_[i] - begin);
  }

  // Forward iteration over the sequences as spans.
  class Iterator {
   public:
    Iterator(const SequenceList* list, std::size_t i) : list_(list), i_(i) {}
    TokenSpan operator*() const { return (*list_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator&) const = default;

   private:
    const SequenceList* list_;
    std::size_t i_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size()); }

  // Removes every sequence but keeps the storage, so that a list refilled
  // again and again (a streaming reader's chunk) allocates only while it
  // grows past its largest size so far. O(1).
  void Clear() {
    tokens_.clear();
    ends_.clear();
  }

  // Reserves room for `sequences` sequences of `tokens` tokens in total.
  void Reserve(std::size_t sequences, std::size_t tokens);
  // Heap bytes held (capacity, not size).
  std::size_t memory_bytes() const;

  friend bool operator==(const SequenceList&, const SequenceList&) = default;

 private:
  std::vector<Token, HugePageAllocator<Token>> tokens_;
  std::vector<std::size_t, HugePageAllocator<std::size_t>>
      ends_;  // ends_[i]: one past sequence i's last token
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_SEQUENCE_LIST_H_
