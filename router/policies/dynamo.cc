#include "router/policies/dynamo.h"

namespace kvprefix {

Rational DynamoRouter::Cost(const WorkerViews& workers, std::size_t w,
                            TokenSpan tokens) const {
  const std::uint64_t page = setup_.page_size;
  const WorkerView view = workers.view(w);
  const Rational matched = MatchedPages(workers, w, tokens, page);
  const Rational raw(
      static_cast<Int128>(view.unprefilled_tokens) + tokens.size(), page);
  const Rational prefill =
      weights_.prefill_load_scale *
      Max(raw - weights_.overlap_score_credit * matched, 0);
  const Rational pinned_pages = setup_.pinned_in_tokens
                                    ? Rational(view.pinned, page)
                                    : Rational::FromUnsigned(view.pinned);
  const Rational pages =
      Rational::FromUnsigned((tokens.size() + page - 1) / page);
  return prefill + (pinned_pages + pages - matched) +
         weights_.decode_active_request_weight *
             Rational::FromUnsigned(view.load());
}

std::size_t DynamoRouter::Choose(const RoutedRequest& request,
                                 const WorkerViews& workers) {
  std::size_t best = 0;
  Rational best_cost = Cost(workers, 0, request.tokens);
  std::uint64_t count = 1;
  for (std::size_t w = 1; w < workers.size(); ++w) {
    const Rational cost = Cost(workers, w, request.tokens);
    if (cost < best_cost) {
      best = w;
      best_cost = cost;
      count = 1;
    } else if (cost == best_cost && weights_.random_ties &&
               stream_.Below(++count) == 0) {
      best = w;
    }
  }
  return best;
}

}  // namespace kvprefix
