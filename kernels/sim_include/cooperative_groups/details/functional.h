// The operations cooperative groups reduce and scan with (luacuda's
// simulator; <cooperative_groups/reduce.h> and <.../scan.h> include it).
#ifndef LUACUDA_SIM_CG_FUNCTIONAL_H
#define LUACUDA_SIM_CG_FUNCTIONAL_H

namespace cooperative_groups {
template <typename T> struct plus { T operator()(T a, T b) const { return a + b; } };
// less and greater keep the smaller and the larger of the two
template <typename T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <typename T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <typename T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <typename T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <typename T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };
}  // namespace cooperative_groups

#endif
