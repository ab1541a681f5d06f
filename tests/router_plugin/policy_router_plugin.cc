// A C++ router exported as a router plugin (router/router_plugin_export.h):
// SPEC §11.5's policy named by KVPREFIX_TEST_POLICY, carrying the routing
// mutant named by KVPREFIX_TEST_ROUTING_MUTANT (testing/routing_mutants.h;
// unset: the baseline), with the seed and parameters kvprefix passes. It
// checks the export helper and the C boundary both ways: the baseline must
// pass `verify --router plugin:... --against POLICY`, a mutant must not.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "router/router_plugin_export.h"
#include "router/router_spec.h"
#include "testing/routing_mutants.h"

namespace {

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

class PolicyRouter {
 public:
  static constexpr std::string_view kName = "policy";

  explicit PolicyRouter(const kvprefix::RouterPluginSetup& setup) {
    using namespace kvprefix;
    const auto policy =
        ParseNamedValue(kRouterPolicies, Environment("KVPREFIX_TEST_POLICY"));
    if (!policy) throw std::invalid_argument("KVPREFIX_TEST_POLICY: no policy");
    RouterSpec spec{.policy = *policy, .seed = setup.seed};
    for (const auto& [name, text] : setup.parameters) {
      const RouterParameter* parameter = FindRouterParameter(name);
      const auto value = parameter == nullptr
                             ? std::nullopt
                             : ParseRouterValue(*parameter, text);
      if (!value) throw std::invalid_argument("bad parameter " + name);
      spec.parameters[name] = *value;
    }
    const std::string mutant = Environment("KVPREFIX_TEST_ROUTING_MUTANT");
    router_ = test::MakeRoutingMutant(
        mutant.empty() ? test::RoutingBug::kNone
                       : test::ParseRoutingMutant(mutant),
        spec, setup.route,
        setup.block_tokens ? TokenUnit::kBlock : TokenUnit::kToken);
  }

  std::size_t Choose(const kvprefix::RoutedRequest& request,
                     const kvprefix::WorkerViews& workers) {
    return router_->Choose(request, workers);
  }

 private:
  std::unique_ptr<kvprefix::Router> router_;
};

}  // namespace

KVPREFIX_EXPORT_ROUTER_PLUGIN(PolicyRouter)
