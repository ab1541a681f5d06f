#include "router/plugin_router.h"

#include <dlfcn.h>

#include <cstddef>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "plugin/kvprefix_router_plugin.h"
#include "plugin/plugin_engine.h"

namespace kvprefix {
namespace {

// A loaded router library: its validated table and the prefix of every
// message about it.
struct RouterLibrary {
  const kvprefix_router_plugin* table;
  std::string label;  // "router plugin 'name' (path)"
  std::string name;   // "plugin:name"
};

const RouterLibrary& LoadRouter(const std::string& path) {
  static std::mutex mutex;
  static auto* libraries =
      new std::map<std::string,
                   RouterLibrary>();  // never freed: never unloaded
  std::lock_guard lock(mutex);
  if (const auto it = libraries->find(path); it != libraries->end()) {
    return it->second;
  }
  void* handle = OpenPluginLibrary(path);
  // A refused library is closed again; accepted ones stay loaded.
  const auto refuse = [&path, handle](const std::string& problem) {
    dlclose(handle);
    return PluginError("router plugin " + path + ": " + problem);
  };
  void* entry = dlsym(handle, KVPREFIX_ROUTER_PLUGIN_ENTRY_SYMBOL);
  if (entry == nullptr) {
    throw refuse("no " KVPREFIX_ROUTER_PLUGIN_ENTRY_SYMBOL
                 " symbol (not a kvprefix router plugin, or one built for "
                 "another router plugin ABI version than 1)");
  }
  const kvprefix_router_plugin* table =
      reinterpret_cast<kvprefix_router_plugin_entry>(entry)();
  if (table == nullptr) {
    throw refuse(KVPREFIX_ROUTER_PLUGIN_ENTRY_SYMBOL "() returned NULL");
  }
  if (table->abi_version != KVPREFIX_ROUTER_PLUGIN_ABI_VERSION) {
    throw refuse("table of ABI version " + std::to_string(table->abi_version) +
                 ", expected 1 (the version of its entry symbol)");
  }
  if (table->size < sizeof(kvprefix_router_plugin)) {
    throw refuse("table of " + std::to_string(table->size) +
                 " bytes, too small for router ABI version 1");
  }
  const std::pair<bool, const char*> required[] = {
      {table->name != nullptr && table->name[0] != '\0', "name"},
      {table->create != nullptr, "create"},
      {table->destroy != nullptr, "destroy"},
      {table->choose != nullptr, "choose"}};
  for (const auto& [present, member] : required) {
    if (!present) {
      throw refuse(std::string("the table's required member '") + member +
                   "' is NULL");
    }
  }
  return libraries
      ->emplace(path,
                RouterLibrary{table,
                              "router plugin '" + std::string(table->name) +
                                  "' (" + path + ")",
                              "plugin:" + std::string(table->name)})
      .first->second;
}

// A router of a plugin, as a Router.
class PluginRouter final : public Router {
 public:
  PluginRouter(const RouterLibrary& library, const RouterPluginSetup& setup)
      : library_(library), table_(*library.table) {
    std::vector<kvprefix_router_parameter> parameters;
    for (const auto& [name, value] : setup.parameters) {
      parameters.push_back({name.c_str(), value.c_str()});
    }
    const kvprefix_router_setup c_setup{
        .workers = setup.route.workers,
        .page_size = setup.route.page_size,
        .seed = setup.seed,
        .pinned_in_tokens = setup.route.pinned_in_tokens ? 1 : 0,
        .block_tokens = setup.block_tokens ? 1 : 0,
        .parameters = parameters.empty() ? nullptr : parameters.data(),
        .parameter_count = parameters.size()};
    kvprefix_error error;
    error.message[0] = '\0';
    const kvprefix_status status = table_.create(&c_setup, &router_, &error);
    if (status == KVPREFIX_INVALID_ARGUMENT) {
      error.message[sizeof(error.message) - 1] = '\0';  // trust no plugin
      throw std::invalid_argument(library_.label +
                                  " refuses its setup: " + error.message);
    }
    Check(status, error, "create");
    if (router_ == nullptr) {
      throw PluginError(library_.label + ": create returned a NULL router");
    }
  }
  ~PluginRouter() override { table_.destroy(router_); }
  PluginRouter(const PluginRouter&) = delete;
  PluginRouter& operator=(const PluginRouter&) = delete;

  std::size_t Choose(const RoutedRequest& request,
                     const WorkerViews& workers) override {
    views_.resize(workers.size());
    for (std::size_t w = 0; w < views_.size(); ++w) {
      const WorkerView view = workers.view(w);
      views_[w] = {.running = view.running,
                   .queued = view.queued,
                   .pinned = view.pinned,
                   .unprefilled_tokens = view.unprefilled_tokens,
                   .cached_pages = view.cached_pages};
    }
    Context context{.workers = &workers};
    const kvprefix_router_views c_views{.workers = views_.size(),
                                        .view = views_.data(),
                                        .peek_match = &PeekMatch,
                                        .context = &context};
    const kvprefix_routed_request c_request{.index = request.index,
                                            .tokens = request.tokens.data(),
                                            .length = request.tokens.size(),
                                            .arrival_us = request.arrival_us};
    std::uint64_t worker = 0;
    kvprefix_error error;
    error.message[0] = '\0';
    const kvprefix_status status =
        table_.choose(router_, &c_request, &c_views, &worker, &error);
    if (context.failure) std::rethrow_exception(context.failure);
    if (!context.problem.empty()) {
      throw PluginError(library_.label + ": choose of request " +
                        std::to_string(request.index) + ": " + context.problem);
    }
    Check(status, error, "choose");
    if (worker >= workers.size()) {
      throw PluginError(library_.label + ": choose returned worker " +
                        std::to_string(worker) + " for request " +
                        std::to_string(request.index) + " of " +
                        std::to_string(workers.size()) + " workers");
    }
    return static_cast<std::size_t>(worker);
  }

 private:
  // What peek_match reaches through the views' context, and what went
  // wrong in it (reported once choose returns: no exception may cross the
  // plugin's frames).
  struct Context {
    const WorkerViews* workers = nullptr;
    std::string problem = {};
    std::exception_ptr failure = nullptr;
  };

  static std::uint64_t PeekMatch(const kvprefix_router_views* views,
                                 std::uint64_t worker,
                                 const std::int32_t* tokens,
                                 std::size_t length) noexcept {
    auto& context = *static_cast<Context*>(views->context);
    if (worker >= context.workers->size()) {
      if (context.problem.empty()) {
        context.problem = "peek_match of worker " + std::to_string(worker) +
                          " of " + std::to_string(context.workers->size()) +
                          " workers";
      }
      return 0;
    }
    try {
      return context.workers->PeekMatch(static_cast<std::size_t>(worker),
                                        TokenSpan(tokens, length));
    } catch (...) {
      if (!context.failure) context.failure = std::current_exception();
      return 0;
    }
  }

  // Throws what a failed status means.
  void Check(kvprefix_status status, kvprefix_error& error,
             const char* call) const {
    if (status == KVPREFIX_OK) return;
    error.message[sizeof(error.message) - 1] = '\0';  // trust no plugin
    if (status == KVPREFIX_OUT_OF_MEMORY) throw std::bad_alloc();
    if (status == KVPREFIX_INVALID_ARGUMENT ||
        status == KVPREFIX_INTERNAL_ERROR ||
        status == KVPREFIX_CAPACITY_EXCEEDED) {
      throw PluginError(library_.label + ": " + call +
                        " failed: " + error.message);
    }
    throw PluginError(library_.label + ": " + call +
                      " returned the unknown status " + std::to_string(status));
  }

  const RouterLibrary& library_;
  const kvprefix_router_plugin& table_;
  kvprefix_router* router_ = nullptr;
  std::vector<kvprefix_worker_view> views_;
};

}  // namespace

std::unique_ptr<Router> MakePluginRouter(const std::string& path,
                                         const RouterPluginSetup& setup) {
  return std::make_unique<PluginRouter>(LoadRouter(path), setup);
}

std::string_view PluginRouterName(const std::string& path) {
  return LoadRouter(path).name;
}

}  // namespace kvprefix
