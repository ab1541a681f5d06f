// ReferenceRadixCache: see the header. Each step quotes SPEC §9.3.
#include "models/sglang/reference_radix_cache.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {

ReferenceRadixCache::ReferenceRadixCache()
    : ReferenceRadixCache(CacheOptions{.model = CacheModel::kSglang}) {}

ReferenceRadixCache::ReferenceRadixCache(const CacheOptions& options)
    : CacheCore(options) {
  CheckModelEngineOptions("reference radix cache", CacheModel::kSglang,
                          options);
}

std::vector<Token> ReferenceRadixCache::FirstPage(TokenSpan tokens) const {
  return {tokens.begin(), tokens.begin() + options().page_size};
}

TokenSpan ReferenceRadixCache::WholePages(TokenSpan key) const {
  // "A key is cut to whole pages (its trailing partial page dropped)."
  return key.first(key.size() / options().page_size * options().page_size);
}

std::size_t ReferenceRadixCache::CommonPages(const std::vector<Token>& edge,
                                             TokenSpan key) const {
  const std::size_t page = options().page_size;
  std::size_t pages = 0;
  while ((pages + 1) * page <= std::min(edge.size(), key.size()) &&
         std::equal(edge.begin() + pages * page,
                    edge.begin() + (pages + 1) * page,
                    key.begin() + pages * page)) {
    ++pages;
  }
  return pages;
}

NodeId ReferenceRadixCache::NewNode(NodeId parent, std::vector<Token> edge) {
  // "A new node gets the next ID (1, 2, 3, ..., in creation order, never
  // reused) and a = c = tick."
  const NodeId id = nodes_.size();
  const std::uint64_t time = Tick();
  Node node;
  node.edge = std::move(edge);
  node.parent = parent;
  node.access = time;
  node.creation = time;
  nodes_.push_back(std::move(node));
  ++present_;
  return id;
}

NodeId ReferenceRadixCache::Split(NodeId child, std::size_t pages) {
  // "a new node (next ID, fresh times) takes the edge's first j pages and
  // the child's place under its parent; the child keeps the rest of its
  // edge, its own times and ID, and becomes the new node's only child. The
  // new node copies the child's lock count."
  const std::size_t cut = pages * options().page_size;
  const NodeId parent = nodes_[child].parent;
  const std::vector<Token> first_page = FirstPage(nodes_[child].edge);
  std::vector<Token> head(nodes_[child].edge.begin(),
                          nodes_[child].edge.begin() + cut);
  const NodeId created = NewNode(parent, std::move(head));  // may reallocate
  Node& old = nodes_[child];
  old.edge.erase(old.edge.begin(), old.edge.begin() + cut);
  old.parent = created;
  pins_.Copy(child, created);
  if (page_events_ != nullptr) {
    nodes_[created].pages.assign(old.pages.begin(), old.pages.begin() + pages);
    old.pages.erase(old.pages.begin(), old.pages.begin() + pages);
  }
  nodes_[created].children.emplace(FirstPage(old.edge), child);
  nodes_[parent].children[first_page] = created;
  return created;
}

ReferenceRadixCache::Walk ReferenceRadixCache::MatchKey(TokenSpan key) {
  // "match(key): cut the key to whole pages; if it is empty, the answer is
  // (0, root) and nothing changes. Otherwise t = tick; root.a = t"
  key = WholePages(key);
  Walk walk;
  if (key.empty()) return walk;
  const std::uint64_t t = Tick();
  nodes_[kRootNode].access = t;
  while (walk.tokens < key.size()) {
    const TokenSpan rest = key.subspan(walk.tokens);
    const auto& children = nodes_[walk.node].children;
    const auto it = children.find(FirstPage(rest));
    if (it == children.end()) break;
    const NodeId child = it->second;
    // "set child.a = t (even if the match ends inside the edge)"
    nodes_[child].access = t;
    const std::size_t pages = CommonPages(nodes_[child].edge, rest);
    if (pages * options().page_size < nodes_[child].edge.size()) {
      // "split the child at j, the match ends at the new node and the walk
      // stops"
      walk.node = Split(child, pages);
      walk.tokens += pages * options().page_size;
      break;
    }
    walk.node = child;
    walk.tokens += nodes_[child].edge.size();
  }
  return walk;
}

Match ReferenceRadixCache::MatchPrefix(TokenSpan request) const {
  const TokenSpan key = WholePages(request);
  Match match;
  while (match.matched_length < key.size()) {
    const TokenSpan rest = key.subspan(match.matched_length);
    const auto& children = nodes_[match.cache_node].children;
    const auto it = children.find(FirstPage(rest));
    if (it == children.end()) break;
    const Node& child = nodes_[it->second];
    const std::size_t tokens =
        CommonPages(child.edge, rest) * options().page_size;
    match.matched_length += tokens;
    // A split would give its new node the next ID.
    match.cache_node = tokens < child.edge.size() ? nodes_.size() : it->second;
    if (tokens < child.edge.size()) break;
  }
  return match;
}

void ReferenceRadixCache::InsertKey(TokenSpan key) {
  // "insert(key): cut to whole pages; t = tick; root.a = t; walk as in
  // match, setting a = t on every node entered and splitting a child
  // whenever its j pages are shorter than its edge ... if tokens remain,
  // they become one new leaf (next ID, fresh times) under the node reached."
  key = WholePages(key);
  const std::uint64_t t = Tick();
  nodes_[kRootNode].access = t;
  NodeId node = kRootNode;
  std::size_t walked = 0;
  while (walked < key.size()) {
    const TokenSpan rest = key.subspan(walked);
    const auto& children = nodes_[node].children;
    const auto it = children.find(FirstPage(rest));
    if (it == children.end()) break;
    const NodeId child = it->second;
    nodes_[child].access = t;  // the split-off tail keeps a = t
    const std::size_t pages = CommonPages(nodes_[child].edge, rest);
    walked += pages * options().page_size;
    node = pages * options().page_size < nodes_[child].edge.size()
               ? Split(child, pages)  // its new node keeps its fresh times
               : child;
  }
  if (walked < key.size()) {
    const TokenSpan leaf = key.subspan(walked);
    const NodeId created =
        NewNode(node, std::vector<Token>(leaf.begin(), leaf.end()));
    nodes_[node].children.emplace(FirstPage(leaf), created);
    size_ += leaf.size();
    if (page_events_ != nullptr) {
      std::uint64_t parent = node == kRootNode ? PageEventListener::kRoot
                                               : nodes_[node].pages.back();
      for (std::size_t at = 0; at < leaf.size(); at += options().page_size) {
        parent =
            page_events_->Stored(parent, leaf.subspan(at, options().page_size));
        nodes_[created].pages.push_back(parent);
      }
    }
  }
}

std::uint64_t ReferenceRadixCache::Priority(NodeId id) const {
  // "the smallest priority (lru: a; fifo: c)"
  return options().policy == EvictionPolicy::kFifo ? nodes_[id].creation
                                                   : nodes_[id].access;
}

bool ReferenceRadixCache::IsCandidate(NodeId id) const {
  // "the leaves other than the root with lock count 0"
  const Node& node = nodes_[id];
  return id != kRootNode && node.present && node.children.empty() &&
         !pins_.is_pinned(id);
}

std::uint64_t ReferenceRadixCache::Evict(std::uint64_t demand) {
  // "Repeatedly remove the candidate with the smallest priority with its
  // whole edge, adding its length to the tokens freed, until at least D
  // tokens are freed or no candidate is left; a parent (not the root) left
  // childless and unlocked becomes a candidate."
  std::set<std::pair<std::uint64_t, NodeId>> candidates;
  for (NodeId id = 1; id < nodes_.size(); ++id) {
    if (IsCandidate(id)) candidates.emplace(Priority(id), id);
  }
  std::uint64_t freed = 0;
  while (freed < demand && !candidates.empty()) {
    const NodeId victim = candidates.begin()->second;
    candidates.erase(candidates.begin());
    Node& node = nodes_[victim];
    const NodeId parent = node.parent;
    nodes_[parent].children.erase(FirstPage(node.edge));
    node.present = false;
    freed += node.edge.size();
    size_ -= node.edge.size();
    evicted_tokens_ += node.edge.size();
    --present_;
    CountEvicted(1);
    ReportEvicted(TokenSpan(node.edge));
    if (page_events_ != nullptr) {
      for (auto page = node.pages.rbegin(); page != node.pages.rend(); ++page) {
        page_events_->Removed(*page);
      }
    }
    if (IsCandidate(parent)) candidates.emplace(Priority(parent), parent);
  }
  return freed;
}

void ReferenceRadixCache::AddLocks(NodeId node, bool lock) {
  // SGLang's inc_lock_ref / dec_lock_ref: a node's tokens count as locked
  // while its lock count is above 0.
  for (; node != kRootNode; node = nodes_[node].parent) {
    if (lock) {
      pins_.Pin(node, [this](NodeId locked) {
        locked_tokens_ += nodes_[locked].edge.size();
      });
    } else {
      pins_.Unpin(node, [this](NodeId unlocked) {
        locked_tokens_ -= nodes_[unlocked].edge.size();
      });
    }
  }
}

std::uint64_t ReferenceRadixCache::LimitTokens() const {
  // "C pages are C·P tokens"
  return options().capacity >
                 std::numeric_limits<std::uint64_t>::max() / options().page_size
             ? std::numeric_limits<std::uint64_t>::max()
             : options().capacity * options().page_size;
}

Match ReferenceRadixCache::Access(TokenSpan request) {
  // §10.7: with nothing else running, §9.3's steps for one request are
  // §10.4's attempt, prefill end and finish at one instant ("on-allocate"
  // refuses exactly when §9.3 does, and the extra match and insert only
  // refresh the times of the request's own path, already the newest).
  if (request.empty()) return Match{};
  constexpr RequestId kAlone = ~RequestId{0};
  const Attempt attempt = Admit(kAlone, request, request.size());
  if (attempt.outcome != AttemptOutcome::kStart) return Match{};
  PrefillEnd(kAlone, request);
  Finish(kAlone, request);
  return attempt.match;
}

Match ReferenceRadixCache::PeekMatch(TokenSpan request) const {
  // "The match key is the request itself (all) or its first n − 1 tokens
  // (all-but-last)"
  return MatchPrefix(request.first(
      MatchLimitTokens(options().match_limit, request.size(), 1)));
}

Attempt ReferenceRadixCache::Admit(RequestId id, TokenSpan prompt,
                                   std::uint64_t stored_length) {
  // §10.4 sglang: "attempt: match the match key (§9.3 match: a tick, access
  // times, a possible split; these stay whatever follows); lock the node
  // reached and its ancestors".
  const Walk walk = MatchKey(
      prompt.first(MatchLimitTokens(options().match_limit, prompt.size(), 1)));
  AddLocks(walk.node, true);
  const Match match{.matched_length = walk.tokens, .cache_node = walk.node};
  Running running{.node = walk.node, .held = 0, .matched = walk.tokens};
  if (options().trigger == EvictionTrigger::kOnAllocate) {
    // "need = L − m. If L > C·P, refuse as §9.3 does: evict(need) ... then
    // unlock. Else if need > free + evictable, wait: unlock (the match's
    // effects stay). Else start: if free < need, evict(need) (§9.3: the
    // whole need); the request holds need slots." Unbounded: "a started
    // request still holds need slots, but nothing waits, evicts or
    // refuses".
    const std::uint64_t need = stored_length - walk.tokens;
    if (options().bounded()) {
      const std::uint64_t limit = LimitTokens();
      if (stored_length > limit) {
        Evict(need);
        AddLocks(walk.node, false);
        return Attempt{.outcome = AttemptOutcome::kRefuse, .match = {}};
      }
      const std::uint64_t free = limit - size_ - held_;
      const std::uint64_t evictable = size_ - locked_tokens_;
      if (need > free + evictable) {
        AddLocks(walk.node, false);
        return Attempt{.outcome = AttemptOutcome::kWait, .match = {}};
      }
      if (free < need) Evict(need);
    }
    running.held = need;
    held_ += need;
  }
  pins_.Admit(id, running);
  return Attempt{.outcome = AttemptOutcome::kStart, .match = match};
}

void ReferenceRadixCache::PrefillEnd(RequestId id, TokenSpan prompt) {
  if (options().trigger != EvictionTrigger::kOnAllocate) return;
  // §10.4 on-allocate: "prefill end: insert the prompt cut to whole pages
  // (key K); of the request's held slots, |K| − m leave it ...; then match
  // K (a tick), lock the node reached, unlock the node locked before."
  Running& running = pins_.running(id);
  const TokenSpan key = WholePages(prompt);
  InsertKey(key);
  const std::uint64_t leave = key.size() - running.matched;
  running.held -= leave;
  held_ -= leave;
  const Walk reached = MatchKey(key);
  AddLocks(reached.node, true);
  AddLocks(running.node, false);
  running.node = reached.node;
}

void ReferenceRadixCache::Finish(RequestId id, TokenSpan stored) {
  const Running running = pins_.Finish(id);
  switch (options().trigger) {
    case EvictionTrigger::kAfterInsert:
      // "finish: unlock; insert the stored sequence; if the tree holds more
      // than C·P tokens, evict(size − C·P)"
      AddLocks(running.node, false);
      InsertKey(stored);
      if (options().bounded() && size_ > LimitTokens()) {
        Evict(size_ - LimitTokens());
      }
      return;
    case EvictionTrigger::kOnAllocate:
      // "finish: insert the stored sequence cut to whole pages; the
      // request's remaining held slots (output and the partial page) leave
      // it; unlock."
      InsertKey(stored);
      held_ -= running.held;
      AddLocks(running.node, false);
      return;
  }
}

NodeId ReferenceRadixCache::Insert(TokenSpan sequence) {
  Access(sequence);
  return MatchPrefix(sequence).cache_node;
}

std::size_t ReferenceRadixCache::memory_bytes() const {
  // libstdc++'s _Rb_tree_node: color + 3 pointers (32 bytes) + the value.
  constexpr std::size_t kTreeNode = 32;
  std::size_t bytes =
      VectorHeapBytes<Node>(nodes_.capacity()) + pins_.memory_bytes();
  for (const Node& node : nodes_) {
    bytes += VectorHeapBytes<Token>(node.edge.capacity());
    bytes +=
        node.children.size() *
        (MallocChunkBytes(kTreeNode +
                          sizeof(std::pair<const std::vector<Token>, NodeId>)) +
         VectorHeapBytes<Token>(options().page_size));
  }
  return bytes;
}

}  // namespace kvprefix
