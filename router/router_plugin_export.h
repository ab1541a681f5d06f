// KVPREFIX_EXPORT_ROUTER_PLUGIN(Type): makes a C++ router class a kvprefix
// router plugin (plugin/kvprefix_router_plugin.h) in one line, so that a
// router written in C++ is replayed (`replay --router plugin:PATH`) and
// checked (`verify --router plugin:PATH --against POLICY`) by an installed
// kvprefix without kvprefix's sources.
//
//   #include "router/router_plugin_export.h"
//   class MyRouter final : public kvprefix::Router {
//    public:
//     static constexpr std::string_view kName = "myrouter";
//     explicit MyRouter(const kvprefix::RouterPluginSetup& setup);
//     std::size_t Choose(const kvprefix::RoutedRequest& request,
//                        const kvprefix::WorkerViews& workers) override;
//   };
//   KVPREFIX_EXPORT_ROUTER_PLUGIN(MyRouter)
//
// Any class with that constructor, kName and Choose will do (deriving from
// kvprefix::Router is not needed); so does one wrapping a built-in policy
// (kvprefix::MakeRouter, linking kvprefix::router), which is how
// tests/router_plugin/ exports §11.5's policies to check the boundary.
//
// Exceptions never cross the C boundary: std::invalid_argument from the
// constructor (the way to refuse a parameter or a setup) becomes
// KVPREFIX_INVALID_ARGUMENT, std::bad_alloc KVPREFIX_OUT_OF_MEMORY,
// anything else KVPREFIX_INTERNAL_ERROR, each with what() as the message
// (plugin/plugin_export.h's Guard). A worker index Choose returns is passed
// on as it is: kvprefix checks it.
#ifndef KVPREFIX_ROUTER_ROUTER_PLUGIN_EXPORT_H_
#define KVPREFIX_ROUTER_ROUTER_PLUGIN_EXPORT_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plugin/kvprefix_router_plugin.h"
#include "plugin/plugin_export.h"
#include "router/plugin_router.h"
#include "router/router.h"

namespace kvprefix::plugin {

// What KVPREFIX_EXPORT_ROUTER_PLUGIN needs of a router class (see above).
template <typename T>
concept ExportableRouter =
    std::constructible_from<T, const RouterPluginSetup&> &&
    requires(T& router, const RoutedRequest& request,
             const WorkerViews& workers) {
  { T::kName } -> std::convertible_to<std::string_view>;
  { router.Choose(request, workers) } -> std::convertible_to<std::size_t>;
};

namespace internal {

// kvprefix's views (kvprefix_router_views) as WorkerViews.
class CRouterViews final : public WorkerViews {
 public:
  explicit CRouterViews(const kvprefix_router_views& views) : views_(views) {}
  std::size_t size() const override {
    return static_cast<std::size_t>(views_.workers);
  }
  WorkerView view(std::size_t w) const override {
    const kvprefix_worker_view& view = views_.view[w];
    return WorkerView{.running = view.running,
                      .queued = view.queued,
                      .pinned = view.pinned,
                      .unprefilled_tokens = view.unprefilled_tokens,
                      .cached_pages = view.cached_pages};
  }
  std::uint64_t PeekMatch(std::size_t w, TokenSpan tokens) const override {
    return views_.peek_match(&views_, w, tokens.data(), tokens.size());
  }

 private:
  const kvprefix_router_views& views_;
};

// The router plugin table of router class T.
template <ExportableRouter T>
struct ExportedRouter {
  static kvprefix_status Create(const kvprefix_router_setup* setup,
                                kvprefix_router** router,
                                kvprefix_error* error) {
    return Guard(error, [&] {
      RouterPluginSetup cpp{
          .route = {.workers = static_cast<std::size_t>(setup->workers),
                    .page_size = setup->page_size,
                    .pinned_in_tokens = setup->pinned_in_tokens != 0},
          .seed = setup->seed,
          .block_tokens = setup->block_tokens != 0};
      for (std::size_t i = 0; i < setup->parameter_count; ++i) {
        cpp.parameters.emplace(setup->parameters[i].name,
                               setup->parameters[i].value);
      }
      *router = reinterpret_cast<kvprefix_router*>(new T(cpp));
    });
  }
  static void Destroy(kvprefix_router* router) {
    delete reinterpret_cast<T*>(router);
  }
  static kvprefix_status Choose(kvprefix_router* router,
                                const kvprefix_routed_request* request,
                                const kvprefix_router_views* views,
                                std::uint64_t* worker, kvprefix_error* error) {
    return Guard(error, [&] {
      const RoutedRequest cpp{
          .index = request->index,
          .tokens = TokenSpan(request->tokens, request->length),
          .arrival_us = request->arrival_us};
      *worker = reinterpret_cast<T*>(router)->Choose(cpp, CRouterViews(*views));
    });
  }

  static constexpr std::string_view kName = T::kName;
  static constexpr kvprefix_router_plugin kTable = {
      .abi_version = KVPREFIX_ROUTER_PLUGIN_ABI_VERSION,
      .size = sizeof(kvprefix_router_plugin),
      .name = kName.data(),
      .create = Create,
      .destroy = Destroy,
      .choose = Choose,
  };
};

}  // namespace internal
}  // namespace kvprefix::plugin

// Defines the router plugin's entry point
// (KVPREFIX_ROUTER_PLUGIN_ENTRY_SYMBOL) returning the table of router class
// `...` (an ExportableRouter, whose kName is a NUL-terminated literal).
// Use it once per shared library, at namespace scope.
#define KVPREFIX_EXPORT_ROUTER_PLUGIN(...)                                     \
  extern "C" KVPREFIX_PLUGIN_EXPORT const kvprefix_router_plugin*              \
  kvprefix_router_plugin_v1(void) {                                            \
    return &::kvprefix::plugin::internal::ExportedRouter<__VA_ARGS__>::kTable; \
  }
static_assert(KVPREFIX_ROUTER_PLUGIN_ABI_VERSION == 1,
              "KVPREFIX_EXPORT_ROUTER_PLUGIN defines the entry symbol of "
              "version 1");

#endif  // KVPREFIX_ROUTER_ROUTER_PLUGIN_EXPORT_H_
