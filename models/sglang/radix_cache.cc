// RadixCache: see the header. The steps are SPEC §9.3's, as
// ReferenceRadixCache quotes them.
#include "models/sglang/radix_cache.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {

RadixCache::RadixCache()
    : RadixCache(CacheOptions{.model = CacheModel::kSglang}) {}

RadixCache::RadixCache(const CacheOptions& options) : CacheCore(options) {
  CheckModelEngineOptions("radix cache", CacheModel::kSglang, options);
}

std::size_t RadixCache::CommonTokens(Slot slot, TokenSpan key) const {
  const TokenSpan edge = Edge(slot);
  const std::size_t limit = std::min(edge.size(), key.size());
  const std::size_t common =
      std::mismatch(edge.begin(), edge.begin() + limit, key.begin()).first -
      edge.begin();
  return common / options().page_size * options().page_size;
}

std::uint64_t RadixCache::Priority(const Node& node) const {
  return options().policy == EvictionPolicy::kFifo ? node.creation
                                                   : node.access;
}

void RadixCache::PushIfCandidate(Slot slot) {
  if (options().bounded() && IsCandidate(slot)) {
    candidates_.Push(Priority(nodes_[slot]), slot);
  }
}

void RadixCache::Touch(Slot slot, std::uint64_t t) {
  nodes_[slot].access = t;
  if (options().policy == EvictionPolicy::kLru) PushIfCandidate(slot);
}

RadixCache::Slot RadixCache::NewNode(Slot parent, std::uint64_t offset,
                                     std::uint64_t length) {
  Slot slot;
  if (free_slots_.empty()) {
    slot = nodes_.size();
    ReserveGeometric(nodes_, nodes_.size() + 1);
    nodes_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const std::uint64_t time = Tick();
  nodes_[slot] = Node{.id = next_id_++,
                      .parent = parent,
                      .offset = offset,
                      .length = length,
                      .access = time,
                      .creation = time};
  ++present_;
  return slot;
}

RadixCache::Slot RadixCache::Split(Slot child, std::size_t tokens) {
  const Slot parent = nodes_[child].parent;
  children_.Erase(parent, FirstPage(child), child);
  const Slot head = NewNode(parent, nodes_[child].offset, tokens);
  Node& tail = nodes_[child];
  tail.offset += tokens;
  tail.length -= tokens;
  tail.parent = head;
  pins_.Copy(child, head);
  nodes_[head].children = 1;
  children_.Insert(parent, FirstPage(head), head);
  children_.Insert(head, FirstPage(child), child);
  return head;
}

RadixCache::Walk RadixCache::MatchKey(TokenSpan key) {
  key = WholePages(key);
  Walk walk;
  if (key.empty()) return walk;
  const std::uint64_t t = Tick();
  nodes_[kRootSlot].access = t;
  while (walk.tokens < key.size()) {
    const TokenSpan rest = key.subspan(walk.tokens);
    const Slot child = FindChild(walk.node, rest);
    if (child == PageMap::kNone) break;
    Touch(child, t);
    const std::size_t common = CommonTokens(child, rest);
    walk.tokens += common;
    if (common < nodes_[child].length) {
      walk.node = Split(child, common);
      break;
    }
    walk.node = child;
  }
  return walk;
}

Match RadixCache::MatchPrefix(TokenSpan request) const {
  const TokenSpan key = WholePages(request);
  Match match;
  Slot node = kRootSlot;
  while (match.matched_length < key.size()) {
    const TokenSpan rest = key.subspan(match.matched_length);
    const Slot child = FindChild(node, rest);
    if (child == PageMap::kNone) break;
    const std::size_t common = CommonTokens(child, rest);
    match.matched_length += common;
    if (common < nodes_[child].length) {
      match.cache_node = next_id_;  // the ID a split would give
      break;
    }
    node = child;
    match.cache_node = nodes_[child].id;
  }
  return match;
}

RadixCache::Slot RadixCache::InsertKey(TokenSpan key) {
  key = WholePages(key);
  const std::uint64_t t = Tick();
  nodes_[kRootSlot].access = t;
  Slot node = kRootSlot;
  std::size_t walked = 0;
  while (walked < key.size()) {
    const TokenSpan rest = key.subspan(walked);
    const Slot child = FindChild(node, rest);
    if (child == PageMap::kNone) break;
    Touch(child, t);  // the split-off tail keeps a = t
    const std::size_t common = CommonTokens(child, rest);
    walked += common;
    node = common < nodes_[child].length ? Split(child, common) : child;
  }
  if (walked == key.size()) return node;
  const TokenSpan leaf = key.subspan(walked);
  ReserveGeometric(arena_, arena_.size() + leaf.size());
  const std::uint64_t offset = arena_.size();
  arena_.insert(arena_.end(), leaf.begin(), leaf.end());
  const Slot created = NewNode(node, offset, leaf.size());
  ++nodes_[node].children;
  children_.Insert(node, FirstPage(created), created);
  size_ += leaf.size();
  PushIfCandidate(created);
  return created;
}

void RadixCache::TouchPath(Slot node) {
  const std::uint64_t t = Tick();
  nodes_[kRootSlot].access = t;
  for (; node != kRootSlot; node = nodes_[node].parent) Touch(node, t);
}

std::uint64_t RadixCache::Evict(std::uint64_t demand) {
  std::uint64_t freed = 0;
  while (freed < demand && !candidates_.empty()) {
    const auto entry = candidates_.front();
    const Slot victim = entry.handle;
    // The heap's own PopCurrent throws when it runs empty; running out of
    // candidates is an ordinary end here, so pop by hand.
    candidates_.PopCurrent([](const auto&) { return true; }, kName, present_,
                           options().capacity);
    if (!IsCandidate(victim) || Priority(nodes_[victim]) != entry.key) {
      continue;  // stale
    }
    Node& node = nodes_[victim];
    const Slot parent = node.parent;
    children_.Erase(parent, FirstPage(victim), victim);
    node.present = false;
    freed += node.length;
    size_ -= node.length;
    evicted_tokens_ += node.length;
    --present_;
    CountEvicted(1);
    ReportEvicted(Edge(victim));
    free_slots_.push_back(victim);
    --nodes_[parent].children;
    PushIfCandidate(parent);
  }
  return freed;
}

void RadixCache::AddLocks(Slot slot, bool lock) {
  for (; slot != kRootSlot; slot = nodes_[slot].parent) {
    if (lock) {
      pins_.Pin(slot, [this](Slot locked) {
        locked_tokens_ += nodes_[locked].length;
      });
    } else {
      pins_.Unpin(slot, [this](Slot unlocked) {
        locked_tokens_ -= nodes_[unlocked].length;
        PushIfCandidate(unlocked);
      });
    }
  }
}

std::uint64_t RadixCache::LimitTokens() const {
  return options().capacity >
                 std::numeric_limits<std::uint64_t>::max() / options().page_size
             ? std::numeric_limits<std::uint64_t>::max()
             : options().capacity * options().page_size;
}

void RadixCache::Tidy() {
  candidates_.RebuildIfOverfull(present_, [this](auto add) {
    for (Slot slot = 1; slot < nodes_.size(); ++slot) {
      if (IsCandidate(slot)) add(Priority(nodes_[slot]), slot);
    }
  });
  if (arena_.size() <= 2 * size_ + kArenaSlack) return;
  std::vector<Token> compact;
  compact.reserve(size_);
  for (Slot slot = 1; slot < nodes_.size(); ++slot) {
    if (!nodes_[slot].present) continue;
    const TokenSpan edge = Edge(slot);
    nodes_[slot].offset = compact.size();
    compact.insert(compact.end(), edge.begin(), edge.end());
  }
  arena_.swap(compact);
}

Match RadixCache::Access(TokenSpan request) {
  const TokenSpan match_key =
      request.first(MatchLimitTokens(options().match_limit, request.size(), 1));
  const Walk walk = MatchKey(match_key);
  const Match match{.matched_length = walk.tokens,
                    .cache_node = nodes_[walk.node].id};
  const std::uint64_t limit = LimitTokens();
  switch (options().trigger) {
    case EvictionTrigger::kAfterInsert:
      InsertKey(request);
      if (options().bounded()) {
        if (size_ > limit) Evict(size_ - limit);
        Tidy();
      }
      return match;
    case EvictionTrigger::kOnAllocate: {
      AddLocks(walk.node, true);
      const std::uint64_t need = request.size() - walk.tokens;
      bool refused = false;
      if (options().bounded()) {
        if (limit - size_ < need) Evict(need);
        refused = limit - size_ < need;
      }
      if (!refused) InsertKey(request);
      AddLocks(walk.node, false);
      if (options().bounded()) Tidy();
      return refused ? Match{} : match;
    }
  }
  return match;  // not reached: every trigger has a case
}

Match RadixCache::PeekMatch(TokenSpan request) const {
  return MatchPrefix(request.first(
      MatchLimitTokens(options().match_limit, request.size(), 1)));
}

Attempt RadixCache::Admit(RequestId id, TokenSpan prompt,
                          std::uint64_t stored_length) {
  // As ReferenceRadixCache::Admit, which quotes SPEC §10.4.
  const Walk walk = MatchKey(
      prompt.first(MatchLimitTokens(options().match_limit, prompt.size(), 1)));
  AddLocks(walk.node, true);
  const Match match{.matched_length = walk.tokens,
                    .cache_node = nodes_[walk.node].id};
  Running running{.node = walk.node,
                  .held = 0,
                  .matched = walk.tokens,
                  .key_tokens = WholePages(prompt).size()};
  if (options().trigger == EvictionTrigger::kOnAllocate) {
    const std::uint64_t need = stored_length - walk.tokens;
    if (options().bounded()) {
      const std::uint64_t limit = LimitTokens();
      if (stored_length > limit) {  // refused
        Evict(need);
        AddLocks(walk.node, false);
        Tidy();
        return Attempt{.outcome = AttemptOutcome::kRefuse, .match = {}};
      }
      const std::uint64_t free = limit - size_ - held_;
      if (need > free + (size_ - locked_tokens_)) {  // wait
        AddLocks(walk.node, false);
        Tidy();
        return Attempt{.outcome = AttemptOutcome::kWait, .match = {}};
      }
      if (free < need) Evict(need);
      Tidy();
    }
    running.held = need;
    held_ += need;
  }
  pins_.Admit(id, running);
  return Attempt{.outcome = AttemptOutcome::kStart, .match = match};
}

void RadixCache::PrefillEnd(RequestId id, TokenSpan prompt) {
  if (options().trigger != EvictionTrigger::kOnAllocate) return;
  Running& running = pins_.running(id);
  const TokenSpan key = WholePages(prompt);
  // The match of K after its insert ends where the insert did: the same
  // effects as MatchKey(K) without walking K's tokens again (an empty K's
  // match changes nothing).
  const Slot reached = InsertKey(key);
  if (!key.empty()) TouchPath(reached);
  const std::uint64_t leave = key.size() - running.matched;
  running.held -= leave;
  held_ -= leave;
  AddLocks(reached, true);
  AddLocks(running.node, false);
  running.node = reached;
  if (options().bounded()) Tidy();
}

void RadixCache::Finish(RequestId id, TokenSpan stored) {
  const Running running = pins_.Finish(id);
  if (options().trigger == EvictionTrigger::kAfterInsert) {
    AddLocks(running.node, false);
    InsertKey(stored);
    if (options().bounded() && size_ > LimitTokens()) {
      Evict(size_ - LimitTokens());
    }
  } else {
    // Output that fills no whole page leaves the stored sequence's pages
    // the prompt's K, whose path (locked since the prefill end) ends at
    // running.node: the insert only ticks and touches it.
    if (WholePages(stored).size() == running.key_tokens) {
      TouchPath(running.node);
    } else {
      InsertKey(stored);
    }
    held_ -= running.held;
    AddLocks(running.node, false);
  }
  if (options().bounded()) Tidy();
}

NodeId RadixCache::Insert(TokenSpan sequence) {
  Access(sequence);
  return MatchPrefix(sequence).cache_node;
}

std::size_t RadixCache::memory_bytes() const {
  return VectorHeapBytes<Node>(nodes_.capacity()) +
         VectorHeapBytes<Slot>(free_slots_.capacity()) +
         VectorHeapBytes<Token>(arena_.capacity()) + children_.memory_bytes() +
         candidates_.memory_bytes() + pins_.memory_bytes();
}

}  // namespace kvprefix
