// The router plugin loader: a routing policy built as a shared library
// against plugin/kvprefix_router_plugin.h, opened by path (dlopen) and used
// as a kvprefix::Router, so that `--router plugin:PATH` replays through it
// and `verify --router plugin:PATH --against POLICY` checks it.
//
// What the plugin does that can never be right (a status it may not
// return, a worker not below N, a peek of a worker not below N, a NULL
// router) raises PluginError naming the plugin, the call and the request;
// a wrong but possible choice is the routing checker's job
// (checking/routing_check.h).
#ifndef KVPREFIX_ROUTER_PLUGIN_ROUTER_H_
#define KVPREFIX_ROUTER_PLUGIN_ROUTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "router/router.h"

namespace kvprefix {

// What a router plugin is made for (kvprefix_router_setup).
struct RouterPluginSetup {
  RouteSetup route;
  std::uint64_t seed = 0;
  bool block_tokens = false;  // a token is a 512-token block (§11.1)
  // The parameters given: SPEC §11.5's member names and their values as
  // §11.1 writes them ("1.5", "first").
  std::map<std::string, std::string, std::less<>> parameters = {};
};

// A new router of the plugin at `path` (a file path, as dlopen reads it:
// write "./NAME" for a file of this folder) made for `setup`. The library
// is loaded once per path and process and never unloaded. Throws
// PluginError (plugin/plugin_engine.h) if the library cannot be loaded,
// lacks KVPREFIX_ROUTER_PLUGIN_ENTRY_SYMBOL, has a table of another ABI
// version, too small, or with a NULL member, or if create fails or
// returns no router; std::invalid_argument ("router plugin 'name' (path)
// refuses ...: <message>", a usage error) if create answers
// KVPREFIX_INVALID_ARGUMENT. The router's Choose throws PluginError as the
// top comment says, std::bad_alloc for KVPREFIX_OUT_OF_MEMORY. Thread-safe
// (the router is not).
std::unique_ptr<Router> MakePluginRouter(const std::string& path,
                                         const RouterPluginSetup& setup);

// "plugin:NAME", NAME the table's: the router's name in reports and
// answers, valid as long as the process. Loads the plugin as
// MakePluginRouter, with its errors. Thread-safe.
std::string_view PluginRouterName(const std::string& path);

}  // namespace kvprefix

#endif  // KVPREFIX_ROUTER_PLUGIN_ROUTER_H_
