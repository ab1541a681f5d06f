// PagedIndex<E>: any engine as a trie over pages of P tokens (SPEC §8, "Page
// size"), the layout of vLLM's block-level prefix cache and SGLang's paged
// RadixCache.
//
// Design: the engine is left unchanged and indexes symbols instead of
// tokens. A PageTable gives every distinct page content a small symbol
// (0, 1, 2, ...) and finds a page's symbol by hashing its tokens and then
// comparing them, so two pages are the same symbol only if their contents
// are equal: never by hash alone (tests force every page onto one hash).
// A sequence of n tokens is the sequence of its floor(n / P) page symbols; the
// trailing partial page is dropped. Node IDs, capacity and eviction are the
// engine's, counted in pages; matched lengths are multiplied back by P.
//
// Dense symbols suit every engine (the double-array codes them directly).
// A bounded cache forgets a page when no node holds it any more: the table
// counts the nodes labelled with each symbol (new nodes are the request's
// pages past its match; the engine reports evictions through its
// EvictionListener) and reuses the symbols that fall to zero, so the table
// stays proportional to the nodes present, not to the pages ever seen.
#ifndef KVPREFIX_KVPREFIX_PAGED_INDEX_H_
#define KVPREFIX_KVPREFIX_PAGED_INDEX_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "kvprefix/cache.h"
#include "kvprefix/cache_model.h"
#include "kvprefix/memory.h"
#include "kvprefix/page_events.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix {

// The hash of a page's tokens. Any function will do for correctness (pages
// are compared after hashing); tests pass a constant one.
struct PageContentHash {
  std::size_t operator()(TokenSpan page) const {
    return absl::HashOf(absl::MakeSpan(page.data(), page.size()));
  }
};

// Distinct page contents of `page_size` tokens each, numbered densely.
// Not thread-safe for writes; Find may run concurrently with other Finds.
template <typename Hash = PageContentHash>
class PageTable {
 public:
  static constexpr Token kNoSymbol = -1;

  explicit PageTable(std::size_t page_size)
      : page_size_(page_size), symbols_(0, SymbolHash{this}, SymbolEq{this}) {}
  PageTable(const PageTable&) = delete;
  PageTable& operator=(const PageTable&) = delete;

  // The symbol of `page` (page_size tokens), or kNoSymbol. O(page_size)
  // expected.
  Token Find(TokenSpan page) const {
    const auto it = symbols_.find(page);
    return it == symbols_.end() ? kNoSymbol : *it;
  }

  // The symbol of `page`, giving it the lowest free symbol if it has none
  // (its count is then 0). Throws CapacityError past 2^31 - 1 symbols.
  Token FindOrAdd(TokenSpan page) {
    if (const Token found = Find(page); found != kNoSymbol) return found;
    Token symbol;
    if (!free_.empty()) {
      symbol = free_.back();
      free_.pop_back();
    } else {
      if (counts_.size() > static_cast<std::size_t>(kMaxToken)) {
        throw CapacityError("page table: more than 2^31 - 1 distinct pages");
      }
      symbol = static_cast<Token>(counts_.size());
      counts_.push_back(0);
      contents_.resize(contents_.size() + page_size_);
    }
    std::copy(page.begin(), page.end(), contents_.begin() + Offset(symbol));
    symbols_.insert(symbol);
    return symbol;
  }

  // One more node holds `symbol`.
  void Ref(Token symbol) { ++counts_[symbol]; }
  // One node fewer holds `symbol`; at zero the page is forgotten and its
  // symbol reused.
  void Unref(Token symbol) {
    if (--counts_[symbol] == 0) {
      symbols_.erase(symbol);
      free_.push_back(symbol);
    }
  }

  // The tokens of `symbol`'s page (page_size of them).
  TokenSpan Content(Token symbol) const {
    return TokenSpan(contents_.data() + Offset(symbol), page_size_);
  }

  std::size_t size() const { return symbols_.size(); }
  std::size_t memory_bytes() const {
    return VectorHeapBytes<Token>(contents_.capacity()) +
           VectorHeapBytes<std::uint64_t>(counts_.capacity()) +
           VectorHeapBytes<Token>(free_.capacity()) +
           FlatHashTableBytes(symbols_);
  }

 private:
  static constexpr Token kMaxToken = 0x7fffffff;

  std::size_t Offset(Token symbol) const {
    return static_cast<std::size_t>(symbol) * page_size_;
  }

  // Heterogeneous lookup: the set holds symbols, hashed and compared by the
  // content they stand for, and is searched with a page's tokens.
  struct SymbolHash {
    using is_transparent = void;
    const PageTable* table;
    std::size_t operator()(Token symbol) const {
      return Hash()(table->Content(symbol));
    }
    std::size_t operator()(TokenSpan page) const { return Hash()(page); }
  };
  struct SymbolEq {
    using is_transparent = void;
    const PageTable* table;
    TokenSpan Of(Token symbol) const { return table->Content(symbol); }
    static TokenSpan Of(TokenSpan page) { return page; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const TokenSpan x = Of(a);
      const TokenSpan y = Of(b);
      return std::equal(x.begin(), x.end(), y.begin(), y.end());
    }
  };

  std::size_t page_size_;
  std::vector<Token> contents_;        // symbol s: [s * P, (s + 1) * P)
  std::vector<std::uint64_t> counts_;  // nodes holding each symbol
  std::vector<Token> free_;            // symbols no node holds
  absl::flat_hash_set<Token, SymbolHash, SymbolEq> symbols_;
};

// Engine E over pages of options.page_size tokens; a PrefixCacheEngine
// itself, named as E. Costs: E's on floor(n / P) symbols, plus O(n) to hash
// and compare a sequence's pages; with P = 1 the tokens go to E as they are,
// at E's own cost. Thread safety as E's.
template <PrefixCacheEngine E, typename Hash = PageContentHash>
class PagedIndex {
 public:
  static constexpr std::string_view kName = E::kName;

  PagedIndex() : PagedIndex(CacheOptions{}) {}
  // Throws std::invalid_argument unless 1 <= options.page_size <=
  // kMaxPageSize, or if E refuses the options (a trie engine every model but
  // spec: CheckTrieEngineOptions).
  explicit PagedIndex(const CacheOptions& options)
      : options_(CheckPageSize(options)),
        engine_(CacheOptions{
            .capacity = options.capacity,
            .policy = options.policy,
            // E's to refuse: dropped, a trie answered SPEC §8 for model
            // vllm or sglang (KVPREFIX_EXPORT_PLUGIN(PagedIndex<RadixTrie>)
            // did, once plugins were given the model).
            .model = options.model,
            // Over pages the limit is floor((n - 1) / P) pages of n tokens,
            // which the engine cannot see in its symbols: Access applies it.
            .match_limit = options.page_size == 1 ? options.match_limit
                                                  : MatchLimit::kAll}),
        pages_(std::make_unique<Pages>(options.page_size)) {
    if (!options.bounded()) return;
    if (Tokens()) {
      engine_.SetEvictionListener([pages = pages_.get()](TokenSpan tokens) {
        if (pages->listener) pages->listener(tokens);
      });
      return;
    }
    engine_.SetEvictionListener([pages = pages_.get()](TokenSpan symbols) {
      for (Token symbol : symbols) {
        if (pages->listener) pages->listener(pages->table.Content(symbol));
        pages->table.Unref(symbol);
      }
    });
  }

  // As E::Insert on the sequence's pages; returns a page node's ID.
  NodeId Insert(TokenSpan sequence) {
    if (Tokens()) return engine_.Insert(sequence);
    const std::vector<Token> symbols = Symbols(sequence);
    RefNewNodes(symbols);
    return engine_.Insert(symbols);
  }

  // matched_length is in tokens: P times the pages matched.
  Match MatchPrefix(TokenSpan request) const {
    if (Tokens()) return engine_.MatchPrefix(request);
    std::vector<Token> symbols;
    symbols.reserve(request.size() / options_.page_size);
    for (std::size_t i = 0; i + options_.page_size <= request.size();
         i += options_.page_size) {
      const Token symbol =
          pages_->table.Find(request.subspan(i, options_.page_size));
      if (symbol == PageTable<Hash>::kNoSymbol) break;  // no node holds it
      symbols.push_back(symbol);
    }
    return Scale(engine_.MatchPrefix(symbols));
  }

  // One walk of E's Access. A bounded cache counts every page of the request
  // first (so that evictions during the insert release only counted pages),
  // then gives back the count of the pages that matched: their nodes
  // existed already, while the rest are the nodes the insert created.
  Match Access(TokenSpan request) {
    if (Tokens()) [[likely]] {
      return engine_.Access(request);
    }
    return AccessOverPages(request);
  }

  // Access reporting the matched path's runs as E's does (in pages), for
  // LruCurve; only if E offers it.
  template <typename OnRun>
  Match Access(TokenSpan request, OnRun&& on_run) {
    if (Tokens()) return engine_.Access(request, std::forward<OnRun>(on_run));
    return AccessPages(request, [&](const std::vector<Token>& symbols) {
      return engine_.Access(symbols, std::forward<OnRun>(on_run));
    });
  }

  // SPEC §10.4 over pages, if E has a request's life (ServingEngine):
  // E's members on the request's pages. Admit and PeekMatch look up the
  // prompt's pages within the match limit (floor(n / P) pages, or
  // floor((n - 1) / P): SPEC §9.1) and answer in tokens; Finish adds the
  // stored sequence's pages as Insert does.
  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) requires ServingEngine<E> {
    if (Tokens()) return engine_.Admit(id, prompt, stored_length);
    Attempt attempt = engine_.Admit(id, KnownPages(prompt), stored_length);
    attempt.match = Scale(attempt.match);
    return attempt;
  }
  void PrefillEnd(RequestId id, TokenSpan prompt) requires ServingEngine<E> {
    engine_.PrefillEnd(id, prompt);  // nothing for a trie of model spec
  }
  void Finish(RequestId id, TokenSpan stored) requires ServingEngine<E> {
    if (Tokens()) return engine_.Finish(id, stored);
    const std::vector<Token> symbols = Symbols(stored);
    RefNewNodes(symbols);
    engine_.Finish(id, symbols);
  }
  Match PeekMatch(TokenSpan request) const requires ServingEngine<E> {
    if (Tokens()) return engine_.PeekMatch(request);
    return Scale(engine_.PeekMatch(KnownPages(request)));
  }
  std::uint64_t pinned() const requires ServingEngine<E> {
    return engine_.pinned();
  }
  std::uint64_t cached_pages() const requires ServingEngine<E> {
    return engine_.cached_pages();
  }
  std::uint64_t evicted_pages() const requires ServingEngine<E> {
    return engine_.evicted_pages();
  }

  std::uint64_t node_count() const { return engine_.node_count(); }
  std::uint64_t evicted_count() const { return engine_.evicted_count(); }
  const CacheOptions& options() const { return options_; }
  // Reports each evicted page's tokens (P tokens per call).
  void SetEvictionListener(EvictionListener listener) {
    pages_->listener = std::move(listener);
  }
  // Reports E's pages with their tokens (kvprefix/page_events.h), if E
  // reports its nodes: over pages, a node's symbol is looked up.
  void SetPageEventListener(PageEventListener* listener) requires
      requires(E& engine) {
    engine.SetPageEventListener(listener);
  }
  {
    if (Tokens()) return engine_.SetPageEventListener(listener);
    pages_->events.listener = listener;
    engine_.SetPageEventListener(listener == nullptr ? nullptr
                                                     : &pages_->events);
  }
  std::size_t memory_bytes() const {
    return engine_.memory_bytes() + pages_->table.memory_bytes() +
           MallocChunkBytes(sizeof(Pages));
  }

  const E& engine() const { return engine_; }

 private:
  // Page size 1: a page is a token, and E indexes tokens itself.
  bool Tokens() const { return options_.page_size == 1; }

  // The symbols of the whole pages of `sequence`, new pages added.
  std::vector<Token> Symbols(TokenSpan sequence) {
    std::vector<Token> symbols;
    symbols.reserve(sequence.size() / options_.page_size);
    for (std::size_t i = 0; i + options_.page_size <= sequence.size();
         i += options_.page_size) {
      symbols.push_back(
          pages_->table.FindOrAdd(sequence.subspan(i, options_.page_size)));
    }
    return symbols;
  }

  // The symbols of `request`'s pages within the match limit, up to the
  // first page no node holds (no match can pass it).
  std::vector<Token> KnownPages(TokenSpan request) const {
    const std::size_t pages =
        MatchLimitTokens(options_.match_limit, request.size(),
                         options_.page_size) /
        options_.page_size;
    std::vector<Token> symbols;
    symbols.reserve(pages);
    for (std::size_t k = 0; k < pages; ++k) {
      const Token symbol = pages_->table.Find(
          request.subspan(k * options_.page_size, options_.page_size));
      if (symbol == PageTable<Hash>::kNoSymbol) break;
      symbols.push_back(symbol);
    }
    return symbols;
  }

  // Counts the nodes that inserting `symbols` will create: those past its
  // current match (SPEC §1). Done before the insert, whose evictions may
  // already release some of them. Returns the match.
  Match RefNewNodes(const std::vector<Token>& symbols) {
    const Match match = engine_.MatchPrefix(symbols);
    if (options_.bounded()) {
      for (std::size_t i = match.matched_length; i < symbols.size(); ++i) {
        pages_->table.Ref(symbols[i]);
      }
    }
    return match;
  }

  // Access for page sizes above 1, out of line: inlined, it gave the call
  // of a page size of 1 (a plugin's every access) a frame of six saved
  // registers.
  [[gnu::noinline]] Match AccessOverPages(TokenSpan request) {
    if (options_.match_limit != MatchLimit::kAll) {
      return AccessWithMatchLimit(*this, request, options_);
    }
    return AccessPages(request, [&](const std::vector<Token>& symbols) {
      return engine_.Access(symbols);
    });
  }

  template <typename EngineAccess>
  Match AccessPages(TokenSpan request, EngineAccess&& access) {
    const std::vector<Token> symbols = Symbols(request);
    if (!options_.bounded()) return Scale(access(symbols));
    for (Token symbol : symbols) pages_->table.Ref(symbol);
    const Match match = access(symbols);
    for (std::size_t i = 0; i < match.matched_length; ++i) {
      pages_->table.Unref(symbols[i]);
    }
    return Scale(match);
  }

  Match Scale(Match match) const {
    match.matched_length *= options_.page_size;
    return match;
  }

  // E's page events, a node's symbol replaced by its page's tokens.
  struct SymbolEvents final : PageEventListener {
    explicit SymbolEvents(const PageTable<Hash>& pages) : table(pages) {}
    std::uint64_t Stored(std::uint64_t parent, TokenSpan symbol) override {
      return listener->Stored(parent, table.Content(symbol[0]));
    }
    void Removed(std::uint64_t handle) override { listener->Removed(handle); }
    const PageTable<Hash>& table;
    PageEventListener* listener = nullptr;  // the user's
  };

  // On the heap, so that the engine's listeners can point at it while the
  // index itself moves.
  struct Pages {
    explicit Pages(std::size_t page_size) : table(page_size) {}
    PageTable<Hash> table;
    EvictionListener listener;  // the user's, for SetEvictionListener
    SymbolEvents events{table};
  };

  CacheOptions options_;
  E engine_;
  std::unique_ptr<Pages> pages_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_PAGED_INDEX_H_
