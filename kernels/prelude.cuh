// luacuda prelude: Numba's (and ROC's) kernel vocabulary for CUDA C++.
// Injected before every user kernel on both backends. It is written only
// in terms of CUDA's own built-ins, which NVRTC provides on the GPU and
// kernels/sim_runtime.h provides on the simulator, so both backends compile
// the very same text.
#ifndef LUACUDA_PRELUDE
#define LUACUDA_PRELUDE

// The kernel argument ABI: built into the module in front of this file
// (src/base/kernels.c), so only a compiler reading it from disk needs the
// include; so is the random numbers' kernels/philox.h.
#ifndef LUACUDA_ABI_H
#include "abi.h"
#endif
// Philox4x32-10 and the rules of luacuda.random: built in after the ABI
#ifndef LUACUDA_PHILOX_H
#include "philox.h"
#endif

#ifndef __LC_SIM__
// NVRTC has no C library headers: the fixed-width types kernels use.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
// and the short names CUDA code takes from the host's <sys/types.h> (the
// simulator's host compiler has them)
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned long ulong;

// nor math.h's INFINITY, NAN, HUGE_VALF, HUGE_VAL and M_PI..., which the simulator's
// host compiler has: the same values from their bit patterns. Where NVRTC
// has __builtin_bit_cast they are constant expressions, as math.h's are
// (so `__device__ const float lo = -INFINITY;` compiles); elsewhere CUDA's
// reinterpreting built-ins give them in device code.
#if defined(__has_builtin)
#if __has_builtin(__builtin_bit_cast)
#define LC_FLOAT_BITS_(b) __builtin_bit_cast(float, (unsigned int)(b))
#define LC_DOUBLE_BITS_(b) __builtin_bit_cast(double, (unsigned long long)(b))
#endif
#endif
#ifndef LC_FLOAT_BITS_
#define LC_FLOAT_BITS_(b) __int_as_float((int)(b))
#define LC_DOUBLE_BITS_(b) __longlong_as_double((long long)(b))
#endif
#ifndef INFINITY
#define INFINITY LC_FLOAT_BITS_(0x7f800000u)
#endif
#ifndef NAN
#define NAN LC_FLOAT_BITS_(0x7fc00000u)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF LC_FLOAT_BITS_(0x7f800000u)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL LC_DOUBLE_BITS_(0x7ff0000000000000ull)
#endif
// and its (POSIX) constants, as doubles
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
#endif

// ---- shared, local and dynamic shared arrays --------------------------
#define LC_DIMS1_(a) [a]
#define LC_DIMS2_(a, b) [a][b]
#define LC_DIMS3_(a, b, c) [a][b][c]
#define LC_PICK_(a, b, c, f, ...) f
#define LC_DIMS_(...) LC_PICK_(__VA_ARGS__, LC_DIMS3_, LC_DIMS2_, LC_DIMS1_, )(__VA_ARGS__)

#if defined(__LC_SIM__) && defined(LC_SIM_STRICT)
// The simulator's strict memory checking (LUACUDA_SIM_MEMCHECK=2): each
// index is checked against its bound, and one out of range fails the
// launch naming the array. A tag type carries the array's name.
template <typename Tag, typename T, long long... D> struct __lc_bounded;
template <typename Tag, typename T, long long N, long long... R>
struct __lc_bounded<Tag, T, N, R...> {
  using row = typename std::conditional<sizeof...(R) == 0, T, __lc_bounded<Tag, T, R...>>::type;
  row v[N];
  // not copied, as a C array is not: `auto r = tile[i]` must not copy a row
  // where a C array's decays to a pointer (it fails to compile instead, and
  // the module is compiled unchecked: src/backend/sim/compile.c)
  __lc_bounded() = default;
  __lc_bounded(const __lc_bounded &) = delete;
  __lc_bounded &operator=(const __lc_bounded &) = delete;
  template <typename I> __device__ row &operator[](I i) { return v[check(i)]; }
  template <typename I> __device__ const row &operator[](I i) const { return v[check(i)]; }
  __device__ operator row *() { return v; }
  __device__ operator const row *() const { return v; }
  __device__ row *begin() { return v; }
  __device__ row *end() { return v + N; }
  template <typename I> static long long check(I i) {
    long long k = (long long)i;
    if (__builtin_expect(k < 0 || k >= N, 0)) {
      char t[48];
      __lc_fail("index %lld is out of bounds of %s array '%s' (dimension %d of %d has %lld "
                "elements) in block (%u, %u, %u), thread %s", k, Tag::__lc_kind(), Tag::__lc_name(),
                Tag::__lc_ndim() - (int)sizeof...(R), Tag::__lc_ndim(), N, __lc_blockIdx.x,
                __lc_blockIdx.y, __lc_blockIdx.z, __lc_thread_name(__lc_current->cur, t, sizeof t));
    }
    return k;
  }
};
#define LC_NARGS_(...) LC_PICK_(__VA_ARGS__, 3, 2, 1, )
#define LC_BOUNDS_TAG_(kind, name, ...)                                                   \
  struct __lc_tag_##name {                                                                \
    static const char *__lc_name() { return #name; }                                      \
    static const char *__lc_kind() { return kind; }                                       \
    static int __lc_ndim() { return LC_NARGS_(__VA_ARGS__); }                             \
  }
#define SHARED_ARRAY(type, name, ...)                                                     \
  LC_BOUNDS_TAG_("shared", name, __VA_ARGS__);                                            \
  __shared__ __lc_bounded<__lc_tag_##name, type, __VA_ARGS__> name
#define LOCAL_ARRAY(type, name, ...)                                                      \
  LC_BOUNDS_TAG_("local", name, __VA_ARGS__);                                             \
  __lc_bounded<__lc_tag_##name, type, __VA_ARGS__> name
#else
// cuda.shared.array(shape, type): one per block
#define SHARED_ARRAY(type, name, ...) __shared__ type name LC_DIMS_(__VA_ARGS__)
// cuda.local.array(shape, type): one per thread
#define LOCAL_ARRAY(type, name, ...) type name LC_DIMS_(__VA_ARGS__)
#endif

#ifndef __LC_SIM__
__device__ __forceinline__ unsigned char *__lc_dynamic_shared() {
  extern __shared__ __align__(16) unsigned char __lc_dynamic_smem[];
  return __lc_dynamic_smem;
}
#endif
// the launch's dynamic shared memory; every declaration shares it
#define DYNAMIC_SHARED(type, name) type *name = reinterpret_cast<type *>(__lc_dynamic_shared())

// ---- barriers and fences ----------------------------------------------
__device__ __forceinline__ void syncthreads() { __syncthreads(); }
__device__ __forceinline__ int syncthreads_count(int p) { return __syncthreads_count(p); }
__device__ __forceinline__ int syncthreads_and(int p) { return __syncthreads_and(p); }
__device__ __forceinline__ int syncthreads_or(int p) { return __syncthreads_or(p); }
__device__ __forceinline__ void threadfence() { __threadfence(); }
__device__ __forceinline__ void threadfence_block() { __threadfence_block(); }

// ROC / OpenCL spellings
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
__device__ __forceinline__ void mem_fence(int flags) {
  if (flags & CLK_GLOBAL_MEM_FENCE) __threadfence();
  else __threadfence_block();
}
__device__ __forceinline__ void barrier(int flags = CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE) {
  if (flags & CLK_GLOBAL_MEM_FENCE) __threadfence();
  __syncthreads();
}
// synchronises the threads of one warp
__device__ __forceinline__ void wavebarrier() { __syncwarp(); }

// ---- thread positions -------------------------------------------------
__device__ __forceinline__ int grid1() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int2 grid2() {
  return make_int2(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y);
}
__device__ __forceinline__ int3 grid3() {
  return make_int3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y,
                   blockIdx.z * blockDim.z + threadIdx.z);
}
__device__ __forceinline__ int gridsize1() { return blockDim.x * gridDim.x; }
__device__ __forceinline__ int2 gridsize2() {
  return make_int2(blockDim.x * gridDim.x, blockDim.y * gridDim.y);
}
__device__ __forceinline__ int3 gridsize3() {
  return make_int3(blockDim.x * gridDim.x, blockDim.y * gridDim.y, blockDim.z * gridDim.z);
}
// the lane within the warp: warps are cut from the linear thread index
__device__ __forceinline__ int laneid() {
  return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & (warpSize - 1);
}

// OpenCL / ROC ids; dimension d is 0, 1 or 2 (others give 0, or 1 for sizes)
#define LC_DIM_(v, d) ((d) == 0 ? (v).x : (d) == 1 ? (v).y : (d) == 2 ? (v).z : 0)
__device__ __forceinline__ int get_local_id(int d) { return LC_DIM_(threadIdx, d); }
__device__ __forceinline__ int get_group_id(int d) { return LC_DIM_(blockIdx, d); }
__device__ __forceinline__ int get_local_size(int d) { return d >= 0 && d < 3 ? LC_DIM_(blockDim, d) : 1; }
__device__ __forceinline__ int get_num_groups(int d) { return d >= 0 && d < 3 ? LC_DIM_(gridDim, d) : 1; }
__device__ __forceinline__ int get_global_id(int d) {
  return get_group_id(d) * get_local_size(d) + get_local_id(d);
}
__device__ __forceinline__ int get_global_size(int d) { return get_num_groups(d) * get_local_size(d); }

// ---- random numbers ---------------------------------------------------
// luacuda.random's generator, Philox4x32-10 (kernels/philox.h, built into
// the module in front of this file, has the rules; docs/guide/
// random-and-matmul.md, "Random numbers"). lc_philox4x32(ctr, key): the ten rounds of the 128-bit counter
// under the 64-bit key. A generator of state {seed = s, counter = c} reads
// word i of its next call as lc_random_word(s, c, i), so g:uniform(n,
// "float32") gives element i = lc_uniform_float(lc_random_word(s, c, i)),
// and float64 element i = lc_uniform_double(lc_random_word(s, c, 2 * i),
// lc_random_word(s, c, 2 * i + 1)).
__device__ __forceinline__ uint4 lc_philox4x32(uint4 ctr, uint2 key) {
  lc_philox_block b = lc_philox4x32_10(ctr.x, ctr.y, ctr.z, ctr.w, key.x, key.y);
  return make_uint4(b.v[0], b.v[1], b.v[2], b.v[3]);
}
// the key of a seed: its low word, then its high word
__device__ __forceinline__ uint2 lc_philox_key(unsigned long long seed) {
  return make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
}
// word i of the stream from block counter on: word i % 4 of block
// counter + i / 4, the counter (lo32, hi32, 0, 0)
__device__ __forceinline__ unsigned int lc_random_word(unsigned long long seed,
                                                       unsigned long long counter,
                                                       unsigned long long i) {
  return lc_philox_main(seed, counter + i / 4).v[i % 4];
}
// [0, 1) from a word: (u >> 8) * 2^-24
__device__ __forceinline__ float lc_uniform_float(unsigned int u) { return lc_rng_u01f(u); }
// [0, 1) from two words: (((second << 32) | first) >> 11) * 2^-53
__device__ __forceinline__ double lc_uniform_double(unsigned int first, unsigned int second) {
  return lc_rng_u01d(first, second);
}
// two normal deviates from two words (float32) or four (float64), Box-Muller
// as g:normal makes them: elements 2i and 2i+1 of g:normal from the words of
// elements 2i and 2i+1 of the same call
__device__ __forceinline__ float2 lc_normal_float2(unsigned int a, unsigned int b) {
  float2 z;
  lc_rng_pair_f32(a, b, &z.x, &z.y);
  return z;
}
__device__ __forceinline__ double2 lc_normal_double2(unsigned int a0, unsigned int a1,
                                                     unsigned int b0, unsigned int b1) {
  double2 z;
  lc_rng_pair_f64(a0, a1, b0, b1, &z.x, &z.y);
  return z;
}

// ---- strided views ----------------------------------------------------
// Array<T, N>: what a luacuda array passed to an Array<T, N> parameter
// becomes: the address of its first element, its shape, and its strides
// in bytes (any sign). a(i, j) is a reference to element (i, j), 0-based.
// The fields are abi.h's, which the launch packs.
template <typename T, int N>
struct Array {
  LC_ARRAY_FIELDS(T, N);

  static constexpr int ndim = N;

  __device__ __forceinline__ long long size() const {
    long long n = 1;
    for (int k = 0; k < N; k++) n *= shape[k];
    return n;
  }

  template <typename... I>
  __device__ __forceinline__ T &operator()(I... idx) const {
    static_assert(sizeof...(I) == N, "Array<T, N>: give exactly N indices");
    const long long at[] = {static_cast<long long>(idx)...};
    // byte arithmetic; the C casts keep T's own qualifiers (Array<const T, N>)
    char *p = (char *)data;
    for (int k = 0; k < N; k++) p += at[k] * strides[k];
    return *(T *)p;
  }
};
// the template as abi.h lays the fields out, at the least and greatest
// rank (no padding, so the offsets follow: abi.h's checks)
static_assert(sizeof(Array<char, 1>) == LC_ARRAY_SIZE(1) &&
              alignof(Array<char, 1>) == LC_ARRAY_ALIGN &&
              sizeof(Array<double, LC_MAXDIM>) == LC_ARRAY_SIZE(LC_MAXDIM),
              "Array<T, N> is not laid out as kernels/abi.h says");

/* The size and alignment of T for luacuda's check of the records a kernel
** takes through a pointer to a struct from a header (src/base/probe.h);
** 0 where T is incomplete. */
template <class T, class = void> struct __lc_pointee {
  static constexpr unsigned long long size = 0, align = 0;
};
template <class T> struct __lc_pointee<T, decltype(void(sizeof(T)))> {
  static constexpr unsigned long long size = sizeof(T), align = alignof(T);
};

#endif  // LUACUDA_PRELUDE
