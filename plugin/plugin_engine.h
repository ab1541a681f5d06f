// The plugin loader: a cache built as a shared library against
// plugin/kvprefix_plugin.h, opened by path (dlopen) and used as a
// kvprefix::PrefixIndex, so every part of kvprefix that takes an engine by
// name (`--engine plugin:PATH`, `verify --engines plugin:PATH`, the
// benchmarks, the differential fuzzer, the Python module) takes it too.
//
// The plugin boundary costs one indirect call per sequence, as the virtual
// PrefixIndex does, never one per token.
//
// What the plugin returns is checked for what can never be right (a status
// the ABI does not define, a matched length longer than the request):
// those raise PluginError naming the plugin, the call and the value, so a
// broken plugin is reported as the plugin's fault. Wrong but possible
// answers are the differential checker's job (checking/differential.h).
#ifndef KVPREFIX_PLUGIN_PLUGIN_ENGINE_H_
#define KVPREFIX_PLUGIN_PLUGIN_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kvprefix/cache.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/request.h"

namespace kvprefix {

// A plugin that cannot be loaded, or that failed or answered what cannot be
// right. what() names the plugin ('name' and path), the call and the
// problem, e.g. "plugin 'mycache' (./libmycache.so): match returned
// matched_length 7 for a request of 3 tokens".
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Engine names of the form "plugin:PATH" denote a plugin.
inline constexpr std::string_view kPluginPrefix = "plugin:";

// True if `name` is "plugin:" followed by a non-empty path. Thread-safe.
bool IsPluginName(std::string_view name);

// dlopen(path, RTLD_NOW | RTLD_LOCAL): the handle of the shared library at
// `path` (an engine's or a router's plugin). Throws PluginError "plugin
// PATH: cannot load: <dlerror>", saying "write plugin:./NAME" when `path`
// has no '/' and names a file in the current folder (dlopen searches the
// library path for it). Thread-safe (as dlopen).
void* OpenPluginLibrary(const std::string& path);

// A new, empty cache of the plugin at `path` (a file path; as dlopen reads
// it, so a name without '/' is searched on the library path, and the
// error for such a name says so when a file of that name is in the current
// folder: "write plugin:./NAME") built with
// `options`, SPEC §9's model, match limit and trigger included. The
// library is loaded once per path and process and never unloaded; one
// refused (see below) is closed again, and a later call opens and refuses
// it anew. Thread-safe.
//
// Throws PluginError if the library cannot be loaded, lacks both entry
// symbols (KVPREFIX_PLUGIN_ENTRY_SYMBOL, then version 1's
// "kvprefix_plugin_v1": e.g. built for another ABI version), has a table
// whose ABI version is not its symbol's, a size too small, or a required
// member NULL, or if create fails other than by refusing the options;
// OptionsRefused (kvprefix/options_refused.h, a std::invalid_argument; message:
// the plugin, the options and its reason) if create refuses the options
// (KVPREFIX_INVALID_ARGUMENT), or if a plugin built for ABI version 1 is given
// options that version cannot carry: a model other than spec, a match limit
// other than all or a trigger other than after-insert ("... refuses capacity 4,
// lru, page size 1, model vllm, match limit all-but-last: built for ABI 1,
// which has no model").
//
// The engine's calls throw CapacityError for KVPREFIX_CAPACITY_EXCEEDED,
// std::bad_alloc for KVPREFIX_OUT_OF_MEMORY, and PluginError for any other
// failure or impossible answer. name() is "plugin:" and the plugin's table
// name, e.g. "plugin:mycache" (as the benchmarks' rows name it), so that
// reports tell it from a built-in engine of the same name.
// memory_bytes() is 0 and evicted_count() 0 when the plugin omits them.
// Thread safety: as the plugin's (kvprefix/prefix_index.h's rules when the
// plugin keeps to its header's).
std::unique_ptr<PrefixIndex> MakePluginEngine(std::string_view path,
                                              const CacheOptions& options);

// Loads the plugin at `path` as MakePluginEngine does, building no cache:
// whether it can be used at all, before any input's options are known (it
// may still refuse every options it is given). Throws PluginError as
// MakePluginEngine does for a library that cannot be loaded or is refused.
// Thread-safe.
// The plugin at `path` as a cache with a request lifecycle (SPEC §10.4), if
// its table has the seven members of kvprefix_plugin.h's "Requests in
// flight"; nullptr if it has none of them (then MakeServingCache replays
// MakePluginEngine's cache one request at a time). Loads and creates as
// MakePluginEngine, with its errors; a call that fails throws as theirs
// (PluginError naming the plugin and the call: "admit failed: ...", an
// unknown outcome, a matched length longer than the prompt). Thread-safe
// (the cache itself is not).
std::unique_ptr<ServingCache> MakePluginServingCache(
    std::string_view path, const CacheOptions& options);

void LoadPlugin(std::string_view path);

// While the calling thread is inside a plugin's function, writes a
// NUL-terminated description of the call into `buffer` (cut to `size`
// bytes), e.g. "access #1234 of plugin 'mycache' (./libmycache.so)" (the
// number counts that cache's calls of that kind from 1), or "loading (its
// constructors and entry point) of plugin PATH" while dlopen and the entry
// point run, and returns true; else returns false. For a crash handler or
// an exit handler (a plugin that calls exit()): async-signal-safe (reads
// the thread's slot, set around each call, formats without allocating).
bool DescribePluginCallInFlight(char* buffer, std::size_t size);

// The plugin calls in flight of a process, published for another one: a
// supervising process that forks a child to run plugins (verify/isolation.h)
// maps PluginCallBoardBytes() bytes shared with it (MAP_SHARED) before the
// fork, the child publishes its calls there (PublishPluginCalls), and the
// parent reads which call each of the child's threads is in, even after
// the child died (by a signal, exit() or _exit()) or while it hangs, and
// names it as DescribePluginCallInFlight does. A call costs the same
// published or not: one store to the calling thread's slot (a cache line
// of its own) before it and one after.
struct PluginCallBoard;

// The bytes of a PluginCallBoard (about 110 KiB). O(1).
std::size_t PluginCallBoardBytes();

// An empty board made in `memory`: PluginCallBoardBytes() bytes aligned to
// 64, not yet used by one. It holds no resource: unmapping the memory ends
// it. O(its bytes).
PluginCallBoard* CreatePluginCallBoard(void* memory);

// From now on the process publishes its plugin calls on `board` (which
// must outlive them): the calling thread's and those of threads it starts
// later, one slot each (the first 1152 threads; a thread beyond them keeps
// its calls to itself), and the labels of the plugins loaded. For a child
// right after fork, while it has one thread. Not thread-safe.
void PublishPluginCalls(PluginCallBoard& board);

// Slots of `board` in use: one per thread that called a plugin. Any
// process; thread-safe. O(1).
std::size_t PluginCallSlots(const PluginCallBoard& board);

// The call in flight in `slot` (< PluginCallSlots(board)): 0 when none,
// else a word that differs from the word of the thread's previous call of
// the same kind to the same cache (its number grew), so that a caller
// seeing the same word over time sees one call that has not returned.
// Any process; thread-safe. O(1).
std::uint64_t PluginCallInSlot(const PluginCallBoard& board, std::size_t slot);

// The description of `call` (a word PluginCallInSlot returned, not 0), as
// DescribePluginCallInFlight writes it: "match #3 of plugin 'mycache'
// (./libmycache.so)". Meant for a board whose process has ended or is
// stopped (a label being rewritten may read cut). O(label bytes).
std::string DescribePluginCall(const PluginCallBoard& board,
                               std::uint64_t call);

// Installs `handler` for the signals of a crash (SIGSEGV, SIGBUS, SIGFPE,
// SIGILL, SIGABRT), on a 64 KiB alternate stack of the calling thread, so
// that a plugin's stack overflow reaches it too. One crash is reported: the
// first thread to crash runs `handler`, which must end the process (reset
// the signal to SIG_DFL and raise it); a thread that crashes meanwhile
// waits for that end. The crash signals are blocked while `handler` runs,
// so a crash inside it takes the default action. For a program's
// main() or a child process it forks to report plugin crashes
// (DescribePluginCallInFlight); kvprefix's libraries never call it on their
// own. `handler` must be async-signal-safe. Not thread-safe.
void InstallCrashHandler(void (*handler)(int signal_number));

}  // namespace kvprefix

#endif  // KVPREFIX_PLUGIN_PLUGIN_ENGINE_H_
