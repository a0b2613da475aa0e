// cg::inclusive_scan and cg::exclusive_scan for luacuda's simulator, over
// the members of a tile or coalesced group in rank order. The exclusive
// scan gives the first member a value-initialised T.
#ifndef LUACUDA_SIM_CG_SCAN_H
#define LUACUDA_SIM_CG_SCAN_H

#include "../cooperative_groups.h"
#include "details/functional.h"

namespace cooperative_groups {

namespace details {
// Hillis and Steele's scan: in each round a member folds in the value of
// the member d ranks before it
template <typename G, typename R, typename Op>
static inline R scan_ranks(const G &g, R acc, Op &op) {
  unsigned rank = g.thread_rank();
  for (unsigned d = 1; d < g.size(); d *= 2) {
    R before = g.shfl_up(acc, d);
    if (rank >= d) acc = op(before, acc);
  }
  return acc;
}
}  // namespace details

template <unsigned N, typename P, typename T, typename Op>
static inline auto inclusive_scan(const thread_block_tile<N, P> &g, T &&v, Op &&op)
    -> decltype(op(v, v)) {
  return details::scan_ranks<thread_block_tile<N, P>, decltype(op(v, v))>(g, v, op);
}
template <typename T, typename Op>
static inline auto inclusive_scan(const coalesced_group &g, T &&v, Op &&op) -> decltype(op(v, v)) {
  return details::scan_ranks<coalesced_group, decltype(op(v, v))>(g, v, op);
}

template <typename G, typename T, typename Op>
static inline auto exclusive_scan(const G &g, T &&v, Op &&op) -> decltype(op(v, v)) {
  using R = decltype(op(v, v));
  R inclusive = inclusive_scan(g, v, op);
  R before = g.shfl_up(inclusive, 1);
  return g.thread_rank() == 0 ? R{} : before;
}

template <typename G, typename T>
static inline typename std::remove_cv<typename std::remove_reference<T>::type>::type
inclusive_scan(const G &g, T &&v) {
  using R = typename std::remove_cv<typename std::remove_reference<T>::type>::type;
  return inclusive_scan(g, v, plus<R>());
}
template <typename G, typename T>
static inline typename std::remove_cv<typename std::remove_reference<T>::type>::type
exclusive_scan(const G &g, T &&v) {
  using R = typename std::remove_cv<typename std::remove_reference<T>::type>::type;
  return exclusive_scan(g, v, plus<R>());
}

}  // namespace cooperative_groups

#endif
