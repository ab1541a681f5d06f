// KVPREFIX_EXPORT_PLUGIN(Type): makes a C++ cache class a kvprefix engine
// plugin (plugin/kvprefix_plugin.h) in one line, so that a cache written in
// C++ is checked, fuzzed and benchmarked by an installed kvprefix without
// kvprefix's sources.
//
//   #include "plugin/plugin_export.h"
//   class MyCache {
//    public:
//     static constexpr std::string_view kName = "mycache";
//     explicit MyCache(const kvprefix::CacheOptions& options);
//     kvprefix::NodeId Insert(kvprefix::TokenSpan sequence);
//     kvprefix::Match MatchPrefix(kvprefix::TokenSpan request) const;
//     std::uint64_t node_count() const;
//     // optional: Access, evicted_count, memory_bytes, SetEvictionListener,
//     // with the meanings of kvprefix/prefix_index.h's PrefixCacheEngine.
//   };
//   KVPREFIX_EXPORT_PLUGIN(MyCache)
//
// Every kvprefix engine has this shape, so `KVPREFIX_EXPORT_PLUGIN(
// kvprefix::RadixTrie)` builds the radix engine as a plugin (bench/ does,
// to measure what the plugin boundary costs). The optional members are
// detected at compile time; a missing one becomes a NULL table entry.
//
// Exceptions never cross the C boundary: kvprefix::CapacityError becomes
// KVPREFIX_CAPACITY_EXCEEDED, std::invalid_argument (the constructor's way
// to refuse options) KVPREFIX_INVALID_ARGUMENT, std::bad_alloc
// KVPREFIX_OUT_OF_MEMORY and anything else KVPREFIX_INTERNAL_ERROR, each
// with the exception's what() as the message. The constructor gets every
// option, SPEC §9's model, match limit and trigger included, and must
// refuse (std::invalid_argument) what the class does not implement: a
// class written for SPEC §8 alone refuses every model but spec with match
// limit all, as kvprefix's trie engines do (CheckTrieEngineOptions,
// kvprefix/cache.h). A policy, model, match limit or trigger name the core
// does not know (kvprefix/cache.h's lists) is refused before the
// constructor runs.
#ifndef KVPREFIX_PLUGIN_PLUGIN_EXPORT_H_
#define KVPREFIX_PLUGIN_PLUGIN_EXPORT_H_

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "kvprefix/cache.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"
#include "plugin/kvprefix_plugin.h"

namespace kvprefix::plugin {

// What KVPREFIX_EXPORT_PLUGIN needs of a cache class (see above).
template <typename T>
concept ExportableCache = std::constructible_from<T, const CacheOptions&> &&
    requires(T& cache, const T& const_cache, TokenSpan tokens) {
  { T::kName } -> std::convertible_to<std::string_view>;
  { cache.Insert(tokens) } -> std::convertible_to<NodeId>;
  { const_cache.MatchPrefix(tokens) } -> std::same_as<Match>;
  { const_cache.node_count() } -> std::convertible_to<std::uint64_t>;
};

static_assert(
    static_cast<int>(AttemptOutcome::kStart) == KVPREFIX_ATTEMPT_START &&
        static_cast<int>(AttemptOutcome::kWait) == KVPREFIX_ATTEMPT_WAIT &&
        static_cast<int>(AttemptOutcome::kRefuse) == KVPREFIX_ATTEMPT_REFUSE,
    "the C outcomes are AttemptOutcome's values");

namespace internal {

// Copies `message` into `error`, cut to fit with its NUL.
inline void SetMessage(kvprefix_error* error, std::string_view message) {
  const std::size_t length =
      std::min(message.size(), sizeof(error->message) - 1);
  std::memcpy(error->message, message.data(), length);
  error->message[length] = '\0';
}

// The value `parse` reads from the option name `name` (NULL reads as ""),
// else std::invalid_argument naming the option (`what`) and the names
// `entries` list, e.g. "unknown model 'vlm' (expected 'spec', 'vllm' or
// 'sglang')".
template <typename Entry, std::size_t N, typename Parse>
auto ParseName(const std::array<Entry, N>& entries, Parse parse,
               std::string_view what, const char* name) {
  const std::string_view text = name == nullptr ? "" : name;
  const auto value = parse(text);
  if (!value) {
    throw std::invalid_argument("unknown " + std::string(what) + " '" +
                                std::string(text) + "' (expected " +
                                ChoiceNames(entries, '\'') + ")");
  }
  return *value;
}

// ParseName for a list of NamedValue (kvprefix/cache.h).
template <typename Enum, std::size_t N>
Enum ParseNamed(const std::array<NamedValue<Enum>, N>& entries,
                std::string_view what, const char* name) {
  return ParseName(
      entries,
      [&entries](std::string_view text) {
        return ParseNamedValue(entries, text);
      },
      what, name);
}

// The CacheOptions `options` name; throws std::invalid_argument for a name
// the core does not know.
inline CacheOptions ToCacheOptions(const kvprefix_cache_options& options) {
  return CacheOptions{
      .capacity = options.capacity,
      .policy = ParseName(kEvictionPolicies, ParseEvictionPolicy,
                          "eviction policy", options.policy),
      .page_size = options.page_size,
      .model = ParseNamed(kCacheModels, "model", options.model),
      .match_limit =
          ParseNamed(kMatchLimits, "match limit", options.match_limit),
      .trigger = ParseNamed(kEvictionTriggers, "trigger", options.trigger)};
}

// Runs `body`, mapping what it throws to a status and a message.
template <typename F>
kvprefix_status Guard(kvprefix_error* error, F&& body) noexcept {
  try {
    std::forward<F>(body)();
    return KVPREFIX_OK;
  } catch (const CapacityError& e) {
    SetMessage(error, e.what());
    return KVPREFIX_CAPACITY_EXCEEDED;
  } catch (const std::invalid_argument& e) {
    SetMessage(error, e.what());
    return KVPREFIX_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    SetMessage(error, "out of memory");
    return KVPREFIX_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    SetMessage(error, e.what());
    return KVPREFIX_INTERNAL_ERROR;
  } catch (...) {
    SetMessage(error, "an exception that is not a std::exception");
    return KVPREFIX_INTERNAL_ERROR;
  }
}

// The plugin table of cache class T; each function casts the opaque
// kvprefix_cache* back to the T that Create allocated.
// The table's SPEC §10 members (kvprefix_plugin.h's "Requests in flight"),
// null when a cache has no request lifecycle.
struct ServingFunctions {
  decltype(kvprefix_plugin::admit) admit = nullptr;
  decltype(kvprefix_plugin::prefill_end) prefill_end = nullptr;
  decltype(kvprefix_plugin::finish) finish = nullptr;
  decltype(kvprefix_plugin::peek_match) peek_match = nullptr;
  decltype(kvprefix_plugin::pinned) pinned = nullptr;
  decltype(kvprefix_plugin::cached_pages) cached_pages = nullptr;
  decltype(kvprefix_plugin::evicted_pages) evicted_pages = nullptr;
};

// Those members for a cache class T with a request lifecycle: its
// ServingEngine members behind the C ABI, exceptions caught by Guard.
template <typename T>
struct ServingExported {
  static T& Of(kvprefix_cache* cache) { return *reinterpret_cast<T*>(cache); }
  static const T& Of(const kvprefix_cache* cache) {
    return *reinterpret_cast<const T*>(cache);
  }
  static TokenSpan Span(const std::int32_t* tokens, std::size_t length) {
    return TokenSpan(tokens, length);
  }
  static void Store(const Match& from, kvprefix_match* match) {
    match->matched_length = from.matched_length;
    match->cache_node = from.cache_node;
  }
  static kvprefix_status Admit(kvprefix_cache* cache, std::uint64_t request,
                               const std::int32_t* tokens, std::size_t length,
                               std::uint64_t stored_length,
                               kvprefix_attempt* attempt,
                               kvprefix_error* error) {
    return Guard(error, [&] {
      const Attempt result =
          Of(cache).Admit(request, Span(tokens, length), stored_length);
      attempt->outcome = static_cast<std::int32_t>(result.outcome);
      Store(result.match, &attempt->match);
    });
  }
  static kvprefix_status PrefillEnd(kvprefix_cache* cache,
                                    std::uint64_t request,
                                    const std::int32_t* tokens,
                                    std::size_t length, kvprefix_error* error) {
    return Guard(error,
                 [&] { Of(cache).PrefillEnd(request, Span(tokens, length)); });
  }
  static kvprefix_status Finish(kvprefix_cache* cache, std::uint64_t request,
                                const std::int32_t* stored, std::size_t length,
                                kvprefix_error* error) {
    return Guard(error,
                 [&] { Of(cache).Finish(request, Span(stored, length)); });
  }
  static kvprefix_status PeekMatch(const kvprefix_cache* cache,
                                   const std::int32_t* tokens,
                                   std::size_t length, kvprefix_match* match,
                                   kvprefix_error* error) {
    return Guard(error, [&] {
      Store(Of(cache).PeekMatch(Span(tokens, length)), match);
    });
  }
  static std::uint64_t Pinned(const kvprefix_cache* cache) {
    return Of(cache).pinned();
  }
  static std::uint64_t CachedPages(const kvprefix_cache* cache) {
    return Of(cache).cached_pages();
  }
  static std::uint64_t EvictedPages(const kvprefix_cache* cache) {
    return Of(cache).evicted_pages();
  }

  static constexpr ServingFunctions kFunctions = {
      .admit = Admit,
      .prefill_end = PrefillEnd,
      .finish = Finish,
      .peek_match = PeekMatch,
      .pinned = Pinned,
      .cached_pages = CachedPages,
      .evicted_pages = EvictedPages};
};

template <ExportableCache T>
struct Exported {
  static T& Of(kvprefix_cache* cache) { return *reinterpret_cast<T*>(cache); }
  static const T& Of(const kvprefix_cache* cache) {
    return *reinterpret_cast<const T*>(cache);
  }
  static TokenSpan Span(const std::int32_t* tokens, std::size_t length) {
    return TokenSpan(tokens, length);
  }
  // Two 8-byte stores of the two registers the answer returns in. GCC's
  // SLP vectoriser merged them into one 16-byte store by way of the stack:
  // two 8-byte stores read back at once as 16 bytes, which store-to-load
  // forwarding cannot serve, a stall in every call. The empty asm keeps the
  // values in general registers.
  static void Store(const Match& from, kvprefix_match* match) {
    std::uint64_t length = from.matched_length;
    std::uint64_t node = from.cache_node;
    asm("" : "+r"(length), "+r"(node));
    match->matched_length = length;
    match->cache_node = node;
  }

  static kvprefix_status Create(const kvprefix_cache_options* options,
                                kvprefix_cache** cache, kvprefix_error* error) {
    return Guard(error, [&] {
      const CacheOptions cache_options = ToCacheOptions(*options);
      *cache = reinterpret_cast<kvprefix_cache*>(new T(cache_options));
    });
  }
  static void Destroy(kvprefix_cache* cache) { delete &Of(cache); }
  static kvprefix_status Insert(kvprefix_cache* cache,
                                const std::int32_t* tokens, std::size_t length,
                                std::uint64_t* node, kvprefix_error* error) {
    return Guard(error,
                 [&] { *node = Of(cache).Insert(Span(tokens, length)); });
  }
  static kvprefix_status MatchPrefix(const kvprefix_cache* cache,
                                     const std::int32_t* tokens,
                                     std::size_t length, kvprefix_match* match,
                                     kvprefix_error* error) {
    return Guard(error, [&] {
      Store(Of(cache).MatchPrefix(Span(tokens, length)), match);
    });
  }
  static kvprefix_status Access(kvprefix_cache* cache,
                                const std::int32_t* tokens, std::size_t length,
                                kvprefix_match* match, kvprefix_error* error) {
    return Guard(error,
                 [&] { Store(Of(cache).Access(Span(tokens, length)), match); });
  }
  static std::uint64_t NodeCount(const kvprefix_cache* cache) {
    return Of(cache).node_count();
  }
  static std::uint64_t EvictedCount(const kvprefix_cache* cache) {
    return Of(cache).evicted_count();
  }
  static std::uint64_t MemoryBytes(const kvprefix_cache* cache) {
    return Of(cache).memory_bytes();
  }
  static kvprefix_status SetEvictionCallback(
      kvprefix_cache* cache, kvprefix_eviction_callback callback, void* context,
      kvprefix_error* error) {
    return Guard(error, [&] {
      if (callback == nullptr) {
        Of(cache).SetEvictionListener(EvictionListener());
        return;
      }
      Of(cache).SetEvictionListener([callback, context](TokenSpan evicted) {
        callback(context, evicted.data(), evicted.size());
      });
    });
  }

  // SPEC §10.4's members: ServingExported<T>'s for a ServingEngine
  // (kvprefix/request.h), none otherwise.
  static constexpr ServingFunctions kServing = [] {
    if constexpr (ServingEngine<T>) {
      return ServingExported<T>::kFunctions;
    } else {
      return ServingFunctions{};
    }
  }();

  static constexpr kvprefix_plugin kTable = {
      .abi_version = KVPREFIX_PLUGIN_ABI_VERSION,
      .size = sizeof(kvprefix_plugin),
      .name = T::kName.data(),
      .create = Create,
      .destroy = Destroy,
      .insert = Insert,
      .match = MatchPrefix,
      .access =
          [] {
            if constexpr (requires(T & t, TokenSpan s) {
                            { t.Access(s) } -> std::same_as<Match>;
                          }) {
              return &Access;
            } else {
              return nullptr;
            }
          }(),
      .node_count = NodeCount,
      .evicted_count =
          [] {
            if constexpr (requires(const T& t) { t.evicted_count(); }) {
              return &EvictedCount;
            } else {
              return nullptr;
            }
          }(),
      .memory_bytes =
          [] {
            if constexpr (requires(const T& t) { t.memory_bytes(); }) {
              return &MemoryBytes;
            } else {
              return nullptr;
            }
          }(),
      .set_eviction_callback =
          [] {
            if constexpr (requires(T & t, EvictionListener listener) {
                            t.SetEvictionListener(std::move(listener));
                          }) {
              return &SetEvictionCallback;
            } else {
              return nullptr;
            }
          }(),
      .admit = kServing.admit,
      .prefill_end = kServing.prefill_end,
      .finish = kServing.finish,
      .peek_match = kServing.peek_match,
      .pinned = kServing.pinned,
      .cached_pages = kServing.cached_pages,
      .evicted_pages = kServing.evicted_pages,
  };
};

}  // namespace internal
}  // namespace kvprefix::plugin

// Defines the plugin's entry point (KVPREFIX_PLUGIN_ENTRY_SYMBOL) returning
// the table of cache class `...` (an ExportableCache). Use it once per
// shared library, at namespace scope.
#define KVPREFIX_EXPORT_PLUGIN(...)                                            \
  extern "C" KVPREFIX_PLUGIN_EXPORT const kvprefix_plugin* kvprefix_plugin_v2( \
      void) {                                                                  \
    return &::kvprefix::plugin::internal::Exported<__VA_ARGS__>::kTable;       \
  }
static_assert(KVPREFIX_PLUGIN_ABI_VERSION == 2,
              "KVPREFIX_EXPORT_PLUGIN defines the entry symbol of version 2");

#endif  // KVPREFIX_PLUGIN_PLUGIN_EXPORT_H_
