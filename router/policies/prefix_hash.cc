#include "router/policies/prefix_hash.h"

#include <optional>

#include "router/policies/consistent_hash.h"

namespace kvprefix {

std::size_t PrefixHashRouter::Choose(const RoutedRequest& request,
                                     const WorkerViews& workers) {
  const std::size_t owner = ring_.Owner(RingKey(request.tokens, hash_prefix_));
  std::uint64_t total = 0;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    total += workers.view(w).load();
  }
  const Rational limit = Rational::FromUnsigned(total + 1) * load_factor_;
  const auto ok = [&](std::size_t w) {
    return total == 0 || Rational(static_cast<Int128>(workers.view(w).load()) *
                                      static_cast<Int128>(workers.size()),
                                  1) <= limit;
  };
  if (ok(owner)) return owner;
  std::optional<std::size_t> best;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    if (ok(w) &&
        (!best || workers.view(w).load() < workers.view(*best).load())) {
      best = w;
    }
  }
  return best.value_or(owner);
}

}  // namespace kvprefix
