// The plugin loader: see plugin_engine.h.
#include "plugin/plugin_engine.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "kvprefix/options_refused.h"
#include "plugin/kvprefix_plugin.h"

namespace kvprefix {
namespace {

// A loaded library: its path and its validated table.
struct Library {
  std::string path;
  const kvprefix_plugin* table;
  // The ABI version it was built for: its entry symbol's (kEntries).
  std::uint32_t abi_version;
  // "plugin 'name' (path)", the prefix of every message about it.
  std::string label;
  // "plugin:name", its engine's name().
  std::string engine_name;
  // Its number among the libraries this process loaded or tried to
  // (LabelIndex), which a published call names it by.
  std::uint64_t index;
};

// The calls DescribePluginCallInFlight names.
// A cache's records_ are indexed by the first four (counted); kOther is
// any other call of a cache, kLoad the loader's.
enum class Call : std::uint8_t {
  // Counted kinds (CallRecord), first.
  kCreate,
  kInsert,
  kMatch,
  kAccess,
  kAdmit,
  kPrefillEnd,
  kFinish,
  kPeekMatch,
  kOther,
  kLoad
};

constexpr const char* CallName(Call call) {
  switch (call) {
    case Call::kLoad:
      return "loading (its constructors and entry point)";
    case Call::kCreate:
      return "create";
    case Call::kInsert:
      return "insert";
    case Call::kMatch:
      return "match";
    case Call::kAccess:
      return "access";
    case Call::kAdmit:
      return "admit";
    case Call::kPrefillEnd:
      return "prefill_end";
    case Call::kFinish:
      return "finish";
    case Call::kPeekMatch:
      return "peek_match";
    case Call::kOther:
      return "call";
  }
  return "call";
}

// A call in flight is published as one word: its number (that cache's
// count of such calls; 0: not counted) above kNumberShift bits, the
// library's index (LabelIndex) above 4 bits, and its Call plus 1 below; 0
// is no call. One store before and one after each call, to a slot of the
// calling thread's own (a cache line), which a crash handler in the same
// process and a supervising process sharing the slots' memory
// (PluginCallBoard) both read.
constexpr int kNumberShift = 12;
constexpr std::uint64_t kMaxLabels = 255;  // index 255: a library past them
constexpr std::uint64_t CallWord(std::uint64_t library_index, Call call) {
  return library_index << 4 | (static_cast<std::uint64_t>(call) + 1);
}

// One kind of call of one cache: its word without the number, and that
// cache's count of such calls. Atomic because const calls (match) may run
// concurrently (kvprefix/prefix_index.h); counted by a relaxed load and
// store, not a locked increment: concurrent matches may lose a count,
// which only a report's "#N" shows.
struct CallRecord {
  std::uint64_t word;
  std::atomic<std::uint64_t> number;
};

// The labels of the libraries by index ("plugin 'name' (path)", or while
// it loads "plugin PATH"), for describing a published call: immutable
// strings, never freed, so that a crash handler reads them safely.
std::atomic<const char*> labels[kMaxLabels + 1] = {};

// The board a supervising process reads (PublishPluginCalls), or nullptr.
PluginCallBoard* board = nullptr;

// The calling thread's slot: the board's, claimed at its first call, or
// its own when there is no board (or no free slot).
thread_local std::atomic<std::uint64_t>* call_slot = nullptr;
thread_local std::atomic<std::uint64_t> own_slot{0};

}  // namespace

// Shared with a supervising process: the libraries' labels, copied at
// each change, and one slot (a cache line) per thread that called a
// plugin.
struct PluginCallBoard {
  static constexpr std::size_t kLabels = 64;
  static constexpr std::size_t kLabelBytes = 512;
  static constexpr std::size_t kSlots = 1152;  // match's most threads, and more
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> call{0};
  };
  std::atomic<std::uint64_t> threads{0};  // slots claimed, may pass kSlots
  char labels[kLabels][kLabelBytes] = {};
  Slot slots[kSlots];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared across processes: must not hide a lock");

namespace {

// Copies label `index` to the board, cut to its size. Not thread-safe
// (called under Load's lock, or while the process has one thread).
void CopyLabelToBoard(std::uint64_t index) {
  const char* label = labels[index].load(std::memory_order_relaxed);
  if (board == nullptr || label == nullptr ||
      index >= PluginCallBoard::kLabels) {
    return;
  }
  std::strncpy(board->labels[index], label, PluginCallBoard::kLabelBytes - 1);
}

// Sets library `index`'s label to `label`, which must never be freed.
void SetLabel(std::uint64_t index, const char* label) {
  labels[index].store(label, std::memory_order_release);
  CopyLabelToBoard(index);
}

// The calling thread's slot, claimed: the cold path of its first call.
[[gnu::noinline, gnu::cold]] std::atomic<std::uint64_t>* ClaimCallSlot() {
  std::atomic<std::uint64_t>* slot = &own_slot;
  if (board != nullptr) {
    const std::uint64_t claimed =
        board->threads.fetch_add(1, std::memory_order_relaxed);
    if (claimed < PluginCallBoard::kSlots) slot = &board->slots[claimed].call;
  }
  call_slot = slot;
  return slot;
}

// Publishes `word` as the calling thread's call in flight for its
// lifetime.
class CallScope {
 public:
  explicit CallScope(std::uint64_t word) : slot_(call_slot) {
    if (slot_ == nullptr) [[unlikely]] {
      slot_ = ClaimCallSlot();
    }
    slot_->store(word, std::memory_order_relaxed);
  }
  ~CallScope() { slot_->store(0, std::memory_order_relaxed); }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  std::atomic<std::uint64_t>* slot_;
};

// The entry symbols the loader looks for, newest first, with the ABI
// version each names (plugin/kvprefix_plugin.h, "Versions"). Version 1's
// table is version 2's; its kvprefix_cache_options lack the model.
struct EntrySymbol {
  const char* name;
  std::uint32_t abi_version;
};
constexpr EntrySymbol kEntries[] = {
    {KVPREFIX_PLUGIN_ENTRY_SYMBOL, KVPREFIX_PLUGIN_ABI_VERSION},
    {"kvprefix_plugin_v1", 1}};
static_assert(KVPREFIX_PLUGIN_ABI_VERSION == 2,
              "a new ABI version gets its entry symbol in kEntries");

template <typename Member>
bool Has(const kvprefix_plugin& table, const Member member) {
  // A member past the size the plugin was built with is absent.
  const auto offset = reinterpret_cast<const char*>(&(table.*member)) -
                      reinterpret_cast<const char*>(&table);
  return static_cast<std::size_t>(offset) + sizeof(table.*member) <=
             table.size &&
         table.*member != nullptr;
}

const Library& Load(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, Library>* libraries =
      new std::map<std::string, Library>();  // never freed: never unloaded
  std::lock_guard lock(mutex);
  if (const auto it = libraries->find(path); it != libraries->end()) {
    return it->second;
  }
  const std::string where = "plugin " + path;
  // The library's constructors and entry point are its code too: a crash,
  // an exit() or a hang in them is reported as the plugin's.
  static std::uint64_t loaded = 0;  // libraries tried, under the lock
  static std::deque<std::string>* loading_labels =
      new std::deque<std::string>();  // never freed: read by crash handlers
  const std::uint64_t index = std::min(loaded++, kMaxLabels);
  if (index < kMaxLabels) {
    SetLabel(index, loading_labels->emplace_back(where).c_str());
  }
  const CallScope scope(CallWord(index, Call::kLoad));
  void* handle = OpenPluginLibrary(path);
  // A refused library is closed again: only accepted ones stay loaded
  // (for good: their tables and code outlive every engine made from them).
  const auto refuse = [&where, handle](const std::string& problem) {
    dlclose(handle);
    return PluginError(where + ": " + problem);
  };
  const EntrySymbol* symbol = nullptr;
  void* entry = nullptr;
  for (const EntrySymbol& candidate : kEntries) {
    entry = dlsym(handle, candidate.name);
    if (entry != nullptr) {
      symbol = &candidate;
      break;
    }
  }
  if (entry == nullptr) {
    throw refuse("no " KVPREFIX_PLUGIN_ENTRY_SYMBOL
                 " or kvprefix_plugin_v1 symbol (not a kvprefix plugin, or "
                 "one built for another plugin ABI version than 2 or 1)");
  }
  const std::string entry_name = symbol->name;
  const kvprefix_plugin* table =
      reinterpret_cast<kvprefix_plugin_entry>(entry)();
  if (table == nullptr) {
    throw refuse(entry_name + "() returned NULL");
  }
  // The symbol says which options the plugin reads; a table that says
  // otherwise is a build mixing two headers, trusted for neither.
  const std::string version = std::to_string(symbol->abi_version);
  if (table->abi_version != symbol->abi_version) {
    throw refuse("table of ABI version " + std::to_string(table->abi_version) +
                 ", expected " + version +
                 " (the version of its entry "
                 "symbol " +
                 entry_name + ")");
  }
  if (table->size < offsetof(kvprefix_plugin, access)) {
    throw refuse("table of " + std::to_string(table->size) +
                 " bytes, too small for ABI version " + version);
  }
  const std::pair<bool, const char*> required[] = {
      {table->name != nullptr && table->name[0] != '\0', "name"},
      {Has(*table, &kvprefix_plugin::create), "create"},
      {Has(*table, &kvprefix_plugin::destroy), "destroy"},
      {Has(*table, &kvprefix_plugin::insert), "insert"},
      {Has(*table, &kvprefix_plugin::match), "match"},
      {Has(*table, &kvprefix_plugin::node_count), "node_count"}};
  for (const auto& [present, member] : required) {
    if (!present) {
      throw refuse(std::string("the table's required member '") + member +
                   "' is NULL");
    }
  }
  Library& library = (*libraries)[path];
  library = {path,
             table,
             symbol->abi_version,
             "plugin '" + std::string(table->name) + "' (" + path + ")",
             std::string(kPluginPrefix) + table->name,
             index};
  if (index < kMaxLabels) SetLabel(index, library.label.c_str());
  return library;
}

// A cache of a plugin, as a PrefixIndex, and as a ServingCache when its
// table has SPEC §10's members (HasRequestLifecycle; the ServingCache
// members must not be called otherwise). name() and options() serve both.
class PluginEngine final : public PrefixIndex, public ServingCache {
 public:
  PluginEngine(const Library& library, const CacheOptions& options)
      : library_(library),
        table_(*library.table),
        options_(options),
        has_access_(Has(table_, &kvprefix_plugin::access)),
        has_evicted_count_(Has(table_, &kvprefix_plugin::evicted_count)),
        has_memory_bytes_(Has(table_, &kvprefix_plugin::memory_bytes)),
        has_eviction_callback_(
            Has(table_, &kvprefix_plugin::set_eviction_callback)) {
    // Version 1's options have no model: its cache would answer SPEC §8
    // for any, so the loader refuses the others on its behalf.
    if (library.abi_version == 1 &&
        (options.model != CacheModel::kSpec ||
         options.match_limit != MatchLimit::kAll ||
         options.trigger != EvictionTrigger::kAfterInsert)) {
      throw OptionsRefused(library_.label + " refuses " + Describe(options) +
                           ": built for ABI 1, which has no model");
    }
    // NUL-terminated copies: a string_view promises no NUL. Each fits in a
    // short string, so this allocates nothing.
    const std::string policy(EvictionPolicyName(options.policy));
    const std::string model(NameOf(kCacheModels, options.model));
    const std::string match_limit(NameOf(kMatchLimits, options.match_limit));
    const std::string trigger(NameOf(kEvictionTriggers, options.trigger));
    // A version 1 plugin reads the first three members only.
    const kvprefix_cache_options c_options{.capacity = options.capacity,
                                           .policy = policy.c_str(),
                                           .page_size = options.page_size,
                                           .model = model.c_str(),
                                           .match_limit = match_limit.c_str(),
                                           .trigger = trigger.c_str()};
    kvprefix_error error;
    error.message[0] = '\0';
    kvprefix_status status;
    {
      CallScope scope(Counted(Call::kCreate));
      status = table_.create(&c_options, &cache_, &error);
    }
    if (status == KVPREFIX_INVALID_ARGUMENT) {
      error.message[sizeof(error.message) - 1] = '\0';  // trust no plugin
      throw OptionsRefused(library_.label + " refuses " + Describe(options) +
                           ": " + error.message);
    }
    Check(status, error, "create");
    if (cache_ == nullptr) {
      throw PluginError(library_.label + ": create returned a NULL cache");
    }
  }
  ~PluginEngine() override {
    CallScope scope(Uncounted());
    table_.destroy(cache_);
  }
  PluginEngine(const PluginEngine&) = delete;
  PluginEngine& operator=(const PluginEngine&) = delete;

  std::string_view name() const override { return library_.engine_name; }

  NodeId Insert(TokenSpan sequence) override {
    std::uint64_t node = 0;
    kvprefix_error error;
    kvprefix_status status;
    {
      CallScope scope(Counted(Call::kInsert));
      status = table_.insert(cache_, sequence.data(), sequence.size(), &node,
                             &error);
    }
    Check(status, error, "insert");
    return node;
  }

  Match MatchPrefix(TokenSpan request) const override {
    return CallMatching(Call::kMatch, table_.match, request);
  }

  Match Access(TokenSpan request) override {
    if (!has_access_) [[unlikely]] {
      return MatchThenInsert(request);
    }
    return CallMatching(Call::kAccess, table_.access, request);
  }

  std::uint64_t node_count() const override {
    CallScope scope(Uncounted());
    return table_.node_count(cache_);
  }
  std::uint64_t evicted_count() const override {
    if (!has_evicted_count_) return 0;
    CallScope scope(Uncounted());
    return table_.evicted_count(cache_);
  }
  std::size_t memory_bytes() const override {
    if (!has_memory_bytes_) return 0;
    CallScope scope(Uncounted());
    return table_.memory_bytes(cache_);
  }
  const CacheOptions& options() const override { return options_; }

  // True if the table has every SPEC §10 member.
  static bool HasRequestLifecycle(const kvprefix_plugin& table) {
    return Has(table, &kvprefix_plugin::admit) &&
           Has(table, &kvprefix_plugin::prefill_end) &&
           Has(table, &kvprefix_plugin::finish) &&
           Has(table, &kvprefix_plugin::peek_match) &&
           Has(table, &kvprefix_plugin::pinned) &&
           Has(table, &kvprefix_plugin::cached_pages) &&
           Has(table, &kvprefix_plugin::evicted_pages);
  }

  Attempt Admit(RequestId id, TokenSpan prompt,
                std::uint64_t stored_length) override {
    kvprefix_attempt attempt{};
    kvprefix_error error;
    kvprefix_status status;
    {
      CallScope scope(Counted(Call::kAdmit));
      status = table_.admit(cache_, id, prompt.data(), prompt.size(),
                            stored_length, &attempt, &error);
    }
    if (status == KVPREFIX_INVALID_ARGUMENT) [[unlikely]] {
      // A cache need not implement every option of SPEC §10 (output
      // "unique", say): its admit refuses the replay, which is skipped.
      error.message[sizeof(error.message) - 1] = '\0';  // trust no plugin
      throw OptionsRefused(library_.label + " refuses this serving replay" +
                           " (admit of request " + std::to_string(id) +
                           "): " + error.message);
    }
    Check(status, error, "admit");
    if (attempt.outcome < KVPREFIX_ATTEMPT_START ||
        attempt.outcome > KVPREFIX_ATTEMPT_REFUSE) {
      throw PluginError(library_.label +
                        ": admit returned the unknown outcome " +
                        std::to_string(attempt.outcome));
    }
    if (attempt.match.matched_length > prompt.size()) {
      TooLong("admit", attempt.match.matched_length, prompt.size());
    }
    const auto outcome = static_cast<AttemptOutcome>(attempt.outcome);
    return Attempt{
        .outcome = outcome,
        .match =
            outcome == AttemptOutcome::kStart
                ? Match{static_cast<std::size_t>(attempt.match.matched_length),
                        attempt.match.cache_node}
                : Match{}};
  }
  void PrefillEnd(RequestId id, TokenSpan prompt) override {
    kvprefix_error error;
    kvprefix_status status;
    {
      CallScope scope(Counted(Call::kPrefillEnd));
      status =
          table_.prefill_end(cache_, id, prompt.data(), prompt.size(), &error);
    }
    Check(status, error, "prefill_end");
  }
  void Finish(RequestId id, TokenSpan stored) override {
    kvprefix_error error;
    kvprefix_status status;
    {
      CallScope scope(Counted(Call::kFinish));
      status = table_.finish(cache_, id, stored.data(), stored.size(), &error);
    }
    Check(status, error, "finish");
  }
  Match PeekMatch(TokenSpan request) const override {
    return CallMatching(Call::kPeekMatch, table_.peek_match, request);
  }
  std::uint64_t pinned() const override {
    CallScope scope(Uncounted());
    return table_.pinned(cache_);
  }
  std::uint64_t cached_pages() const override {
    CallScope scope(Uncounted());
    return table_.cached_pages(cache_);
  }
  std::uint64_t evicted_pages() const override {
    CallScope scope(Uncounted());
    return table_.evicted_pages(cache_);
  }

  void SetEvictionListener(EvictionListener listener) override {
    if (!has_eviction_callback_) return;
    listener_ = std::move(listener);
    kvprefix_error error;
    kvprefix_status status;
    {
      CallScope scope(Uncounted());
      status = table_.set_eviction_callback(
          cache_, listener_ ? &PluginEngine::OnEviction : nullptr, this,
          &error);
    }
    Check(status, error, "set_eviction_callback");
  }

 private:
  static void OnEviction(void* context, const std::int32_t* tokens,
                         std::size_t length) {
    static_cast<PluginEngine*>(context)->listener_(TokenSpan(tokens, length));
  }

  static std::string Describe(const CacheOptions& options) {
    std::string text = options.bounded()
                           ? "capacity " + std::to_string(options.capacity)
                           : std::string("unbounded");
    text += ", ";
    text += EvictionPolicyName(options.policy);
    text += ", page size " + std::to_string(options.page_size);
    // SPEC §9's options, named unless spec with match limit all, as the
    // differential checker's reports name them (FormatCacheOptions).
    if (options.model != CacheModel::kSpec ||
        options.match_limit != MatchLimit::kAll) {
      text += ", model ";
      text += NameOf(kCacheModels, options.model);
      text += ", match limit ";
      text += NameOf(kMatchLimits, options.match_limit);
    }
    if (options.trigger != EvictionTrigger::kAfterInsert) {
      text += ", trigger ";
      text += NameOf(kEvictionTriggers, options.trigger);
    }
    return text;
  }

  // The word of a call of kind `call`, counted (CallWord).
  std::uint64_t Counted(Call call) const {
    CallRecord& record = records_[static_cast<int>(call)];
    const std::uint64_t number =
        record.number.load(std::memory_order_relaxed) + 1;
    record.number.store(number, std::memory_order_relaxed);
    return record.word | number << kNumberShift;
  }
  // The word of a call of no counted kind (destroy, node_count, ...).
  std::uint64_t Uncounted() const { return other_word_; }

  // Access without the plugin's access: out of the hot path, so that
  // Access keeps a small frame.
  [[gnu::noinline]] Match MatchThenInsert(TokenSpan request) {
    const Match match = MatchPrefix(request);
    Insert(request);
    return match;
  }

  // Throws what a failed status means (see plugin_engine.h). Inline, with
  // the throwing out of line: a call costs one comparison when it succeeds.
  void Check(kvprefix_status status, kvprefix_error& error,
             const char* call) const {
    if (status != KVPREFIX_OK) [[unlikely]] {
      Fail(status, error, call);
    }
  }

  // Check's failure: throws the status's exception.
  [[noreturn, gnu::noinline, gnu::cold]] void Fail(kvprefix_status status,
                                                   kvprefix_error& error,
                                                   const char* call) const {
    error.message[sizeof(error.message) - 1] = '\0';  // trust no plugin
    const std::string message = library_.label + ": " + call + " failed: ";
    switch (status) {
      case KVPREFIX_CAPACITY_EXCEEDED:
        throw CapacityError(message + error.message);
      case KVPREFIX_OUT_OF_MEMORY:
        throw std::bad_alloc();
      case KVPREFIX_INVALID_ARGUMENT:
      case KVPREFIX_INTERNAL_ERROR:
        throw PluginError(message + error.message);
      default:
        throw PluginError(library_.label + ": " + call +
                          " returned the unknown status " +
                          std::to_string(status));
    }
  }

  // Calls `function`, the table's match or access (`call`), on `request`
  // and returns its answer, checked. Always inlined: the boundary's hot
  // path, where a call of its own (with its 0.5 KiB frame for the error)
  // cost 2 ns of a short request's 45 ns.
  template <typename Function>
  [[gnu::always_inline]] Match CallMatching(Call call, Function function,
                                            TokenSpan request) const {
    kvprefix_match match{};
    kvprefix_error error;
    kvprefix_status status;
    {
      CallScope scope(Counted(call));
      status = function(cache_, request.data(), request.size(), &match, &error);
    }
    Check(status, error, CallName(call));
    if (match.matched_length > request.size()) [[unlikely]] {
      TooLong(CallName(call), match.matched_length, request.size());
    }
    return Match{static_cast<std::size_t>(match.matched_length),
                 match.cache_node};
  }

  // CallMatching's failure: a matched length longer than the request.
  [[noreturn, gnu::noinline, gnu::cold]] void TooLong(
      const char* call, std::uint64_t matched_length,
      std::size_t length) const {
    throw PluginError(library_.label + ": " + call +
                      " returned matched_length " +
                      std::to_string(matched_length) + " for a request of " +
                      std::to_string(length) + " tokens");
  }

  const Library& library_;
  const kvprefix_plugin& table_;
  const CacheOptions options_;
  const bool has_access_;
  const bool has_evicted_count_;
  const bool has_memory_bytes_;
  const bool has_eviction_callback_;
  kvprefix_cache* cache_ = nullptr;
  EvictionListener listener_;
  const std::uint64_t other_word_ = CallWord(library_.index, Call::kOther);
  // Indexed by Call, of the counted kinds.
  mutable CallRecord records_[8] = {
      {CallWord(library_.index, Call::kCreate), 0},
      {CallWord(library_.index, Call::kInsert), 0},
      {CallWord(library_.index, Call::kMatch), 0},
      {CallWord(library_.index, Call::kAccess), 0},
      {CallWord(library_.index, Call::kAdmit), 0},
      {CallWord(library_.index, Call::kPrefillEnd), 0},
      {CallWord(library_.index, Call::kFinish), 0},
      {CallWord(library_.index, Call::kPeekMatch), 0}};
};

// Appends `text` to buffer[*used..size - 1) without allocating.
void Append(char* buffer, std::size_t size, std::size_t* used, const char* text,
            std::size_t length) {
  while (length > 0 && *used + 1 < size) {
    buffer[(*used)++] = *text++;
    --length;
  }
}

// Writes the description of the published call `word` (not 0) of the
// library labelled `label` (nullptr: unknown) into `buffer`, NUL-terminated
// and cut to `size` (> 0) bytes: "match #3 of plugin 'mycache' (path)".
// Async-signal-safe.
void FormatCall(std::uint64_t word, const char* label, char* buffer,
                std::size_t size) {
  const auto call = static_cast<Call>((word & 0xF) - 1);
  const std::uint64_t number = word >> kNumberShift;
  std::size_t used = 0;
  const char* name = CallName(call);
  Append(buffer, size, &used, name, std::strlen(name));
  if (number != 0) {
    char digits[24];
    std::size_t count = 0;
    for (std::uint64_t n = number; n != 0; n /= 10) {
      digits[count++] = static_cast<char>('0' + n % 10);
    }
    Append(buffer, size, &used, " #", 2);
    while (count > 0) Append(buffer, size, &used, &digits[--count], 1);
  }
  Append(buffer, size, &used, " of ", 4);
  if (label == nullptr) label = "a plugin (one of more than 254 loaded)";
  Append(buffer, size, &used, label, std::strlen(label));
  buffer[used] = '\0';
}

// The library index of a published call.
std::uint64_t LabelIndex(std::uint64_t word) {
  return (word >> 4) & ((std::uint64_t{1} << (kNumberShift - 4)) - 1);
}

}  // namespace

void* OpenPluginLibrary(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) return handle;
  std::string message = "plugin " + path + ": cannot load: " + dlerror();
  // dlopen searches the library path for a name without '/', not the
  // current folder: say so when it found nothing there and a regular file
  // of that name is right here.
  struct stat here;
  if (path.find('/') == std::string::npos &&
      message.find("cannot open shared object file") != std::string::npos &&
      stat(path.c_str(), &here) == 0 && S_ISREG(here.st_mode)) {
    message +=
        " (a name without '/' is searched on the library path; for the "
        "file in this folder write plugin:./" +
        path + ")";
  }
  throw PluginError(message);
}

bool IsPluginName(std::string_view name) {
  return name.size() > kPluginPrefix.size() && name.starts_with(kPluginPrefix);
}

std::unique_ptr<PrefixIndex> MakePluginEngine(std::string_view path,
                                              const CacheOptions& options) {
  return std::make_unique<PluginEngine>(Load(std::string(path)), options);
}

std::unique_ptr<ServingCache> MakePluginServingCache(
    std::string_view path, const CacheOptions& options) {
  const Library& library = Load(std::string(path));
  if (!PluginEngine::HasRequestLifecycle(*library.table)) return nullptr;
  return std::make_unique<PluginEngine>(library, options);
}

void LoadPlugin(std::string_view path) { Load(std::string(path)); }

bool DescribePluginCallInFlight(char* buffer, std::size_t size) {
  const std::atomic<std::uint64_t>* slot = call_slot;
  if (slot == nullptr || size == 0) return false;
  const std::uint64_t word = slot->load(std::memory_order_relaxed);
  if (word == 0) return false;
  FormatCall(word, labels[LabelIndex(word)].load(std::memory_order_acquire),
             buffer, size);
  return true;
}

std::size_t PluginCallBoardBytes() { return sizeof(PluginCallBoard); }

PluginCallBoard* CreatePluginCallBoard(void* memory) {
  return new (memory) PluginCallBoard();
}

void PublishPluginCalls(PluginCallBoard& shared) {
  board = &shared;
  call_slot = nullptr;
  for (std::uint64_t index = 0; index < PluginCallBoard::kLabels; ++index) {
    CopyLabelToBoard(index);
  }
}

std::size_t PluginCallSlots(const PluginCallBoard& shared) {
  return static_cast<std::size_t>(std::min<std::uint64_t>(
      shared.threads.load(std::memory_order_relaxed), PluginCallBoard::kSlots));
}

std::uint64_t PluginCallInSlot(const PluginCallBoard& shared,
                               std::size_t slot) {
  return shared.slots[slot].call.load(std::memory_order_relaxed);
}

std::string DescribePluginCall(const PluginCallBoard& shared,
                               std::uint64_t call) {
  const std::uint64_t index = LabelIndex(call);
  char label[PluginCallBoard::kLabelBytes];
  const bool known = index < PluginCallBoard::kLabels;
  if (known) {
    std::memcpy(label, shared.labels[index], sizeof(label));
    label[sizeof(label) - 1] = '\0';
  }
  char buffer[sizeof(label) + 64];
  FormatCall(call, known ? label : nullptr, buffer, sizeof(buffer));
  return buffer;
}

namespace {

// The handler InstallCrashHandler was given, and whether a crash is being
// reported. Several threads can crash at once (match runs a plugin on
// --threads threads, and a faulty plugin faults on each); with one-shot
// handlers (SA_RESETHAND) the second fault took the default action at once
// and ended the process in the middle of the first one's report. Now the
// first thread reports and ends the process; any other waits for that.
// Lock-free, so async-signal-safe.
void (*crash_handler)(int signal_number) = nullptr;
std::atomic_flag crash_reported = ATOMIC_FLAG_INIT;

extern "C" void ReportOneCrash(int signal_number) {
  if (crash_reported.test_and_set()) {
    for (;;) pause();  // the reporting thread ends the process
  }
  crash_handler(signal_number);
}

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

}  // namespace

void InstallCrashHandler(void (*handler)(int signal_number)) {
  static char stack[64 * 1024];
  stack_t alternate = {};
  alternate.ss_sp = stack;
  alternate.ss_size = sizeof(stack);
  sigaltstack(&alternate, nullptr);
  crash_handler = handler;
  struct sigaction action = {};
  action.sa_handler = ReportOneCrash;
  action.sa_flags = SA_ONSTACK;
  // Every crash signal is blocked while a report runs: one raised by the
  // handler itself then takes the default action (the kernel does not
  // deliver a blocked synchronous fault), instead of waiting for itself.
  sigemptyset(&action.sa_mask);
  for (const int signal_number : kCrashSignals) {
    sigaddset(&action.sa_mask, signal_number);
  }
  for (const int signal_number : kCrashSignals) {
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace kvprefix
