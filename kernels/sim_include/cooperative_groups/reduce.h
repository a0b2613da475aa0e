// cg::reduce for luacuda's simulator: every member of a tile or coalesced
// group gets op folded over the members' values.
#ifndef LUACUDA_SIM_CG_REDUCE_H
#define LUACUDA_SIM_CG_REDUCE_H

#include "../cooperative_groups.h"
#include "details/functional.h"

namespace cooperative_groups {

// a tile: halves exchanged by butterfly shuffles, so every lane folds the
// same values in the same pairs
template <unsigned N, typename P, typename T, typename Op>
static inline auto reduce(const thread_block_tile<N, P> &g, T &&v, Op &&op) -> decltype(op(v, v)) {
  decltype(op(v, v)) acc = v;
  for (unsigned lanes = N / 2; lanes > 0; lanes /= 2) acc = op(acc, g.shfl_xor(acc, lanes));
  return acc;
}

// a coalesced group: every member folds the values in rank order
template <typename T, typename Op>
static inline auto reduce(const coalesced_group &g, T &&v, Op &&op) -> decltype(op(v, v)) {
  decltype(op(v, v)) mine = v, acc = g.shfl(mine, 0);
  for (unsigned r = 1; r < g.size(); r++) acc = op(acc, g.shfl(mine, r));
  return acc;
}

}  // namespace cooperative_groups

#endif
