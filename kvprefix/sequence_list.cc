// SequenceList: see the header.
#include "kvprefix/sequence_list.h"

namespace kvprefix {

SequenceList::SequenceList(
    std::initializer_list<std::initializer_list<Token>> sequences) {
  for (const auto& sequence : sequences) {
    Append(TokenSpan(sequence.begin(), sequence.size()));
  }
}

void SequenceList::Append(TokenSpan sequence) {
  PushTokens(sequence);
  CloseSequence();
}

void SequenceList::Reserve(std::size_t sequences, std::size_t tokens) {
  ends_.reserve(sequences);
  tokens_.reserve(tokens);
}

std::size_t SequenceList::memory_bytes() const {
  return tokens_.capacity() * sizeof(Token) +
         ends_.capacity() * sizeof(std::size_t);
}

}  // namespace kvprefix
