// cooperative_groups.h for luacuda's simulator: CUDA's cooperative groups
// (the CUDA C++ Programming Guide's API) built on the simulator's warp
// functions and barriers (kernels/sim_runtime.h). The simulator's compiler
// finds this file first on its include path (src/backend/sim/compile.c);
// under NVRTC the toolkit's own header is used.
//
// Groups: this_thread_block(), this_grid() (whose sync() needs a
// cooperative launch), tiled_partition<N>(block or tile) giving
// thread_block_tile<N> (N a power of 2 up to 32), tiled_partition(group, n),
// coalesced_threads() (the lanes of the warp at that same call: a divergent
// branch's), labeled_partition, binary_partition, this_thread(). reduce
// and the scans are in <cooperative_groups/reduce.h> and <.../scan.h>.
#ifndef LUACUDA_SIM_COOPERATIVE_GROUPS_H
#define LUACUDA_SIM_COOPERATIVE_GROUPS_H

#ifndef __LC_SIM__
#error "this cooperative_groups.h is luacuda's simulator's"
#endif

namespace cooperative_groups {

namespace details {
enum : unsigned { coalesced_group_id = 1, grid_group_id = 3, thread_block_id = 4 };

// the calling thread: its index in the block, its lane
static inline unsigned cta_rank() { return __lc_current->cur; }
static inline unsigned cta_size() { return blockDim.x * blockDim.y * blockDim.z; }
static inline unsigned laneid() { return __lc_current->cur % warpSize; }
static inline unsigned lanemask_lt() { return (1u << laneid()) - 1u; }

// the lane of member n (0-based, in lane order) of mask, or 32
static inline unsigned nth_lane(unsigned mask, unsigned n) {
  for (; mask; mask &= mask - 1, n--)
    if (n == 0) return (unsigned)__builtin_ctz(mask);
  return 32;
}

// the bits of lanes, renumbered by their rank among the members of mask
static inline unsigned pack_lanes(unsigned mask, unsigned lanes) {
  unsigned out = 0, rank = 0;
  for (; mask; mask &= mask - 1, rank++)
    if (lanes >> __builtin_ctz(mask) & 1) out |= 1u << rank;
  return out;
}

// a warp function on a value of any trivially copyable type: 8 bytes at a time
template <typename T>
static inline T warp_op(int op, unsigned mask, const T &v, unsigned arg, int width) {
  static_assert(std::is_trivially_copyable<T>::value,
                "cooperative groups shuffle trivially copyable types only");
  unsigned char in[sizeof(T)], out[sizeof(T)];
  memcpy(in, &v, sizeof in);
  for (size_t at = 0; at < sizeof in; at += 8) {
    size_t n = sizeof in - at < 8 ? sizeof in - at : 8;
    unsigned long long u = 0;
    memcpy(&u, in + at, n);
    u = __lc_warp_op(op, mask, u, arg, width);
    memcpy(out + at, &u, n);
  }
  T r = v;
  memcpy(static_cast<void *>(&r), out, sizeof out);
  return r;
}

__attribute__((noinline, cold, noreturn))
static void bad_tile(unsigned n) {
  char t[48];
  __lc_fail("tiled_partition: a tile of %u threads (a power of 2 from 1 to 32 is needed) in "
            "thread %s of block (%u, %u, %u)", n,
            __lc_thread_name(__lc_current->cur, t, sizeof t), __lc_blockIdx.x,
            __lc_blockIdx.y, __lc_blockIdx.z);
}

struct access;
}  // namespace details

// The base of every group. A group of lanes of one warp (a tile, a
// coalesced group) keeps the members of the caller's warp in mask_.
class thread_group {
  friend struct details::access;

 protected:
  unsigned type_, mask_, size_, meta_rank_, meta_size_;
  bool tiled_;       // lanes mask_ are consecutive ranks of the parent's tiling
  explicit thread_group(unsigned type, unsigned mask = 0, unsigned size = 0,
                        unsigned meta_rank = 0, unsigned meta_size = 1, bool tiled = false)
      : type_(type), mask_(mask), size_(size), meta_rank_(meta_rank), meta_size_(meta_size),
        tiled_(tiled) {}

 public:
  unsigned long long size() const;
  unsigned long long num_threads() const { return size(); }
  unsigned long long thread_rank() const;
  void sync() const;
  unsigned get_type() const { return type_; }
};

// ---- the block ----------------------------------------------------------
class thread_block : public thread_group {
  friend thread_block this_thread_block();
  thread_block() : thread_group(details::thread_block_id) {}

 public:
  static constexpr unsigned _group_id = details::thread_block_id;
  static void sync() { __syncthreads(); }
  static unsigned thread_rank() { return details::cta_rank(); }
  static unsigned size() { return details::cta_size(); }
  static unsigned num_threads() { return details::cta_size(); }
  static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  static dim3 dim_threads() { return dim3(blockDim.x, blockDim.y, blockDim.z); }
  static dim3 group_dim() { return dim_threads(); }
  // a split barrier: arriving is nothing, waiting the block's barrier (as in
  // the toolkit's header)
  struct arrival_token {};
  arrival_token barrier_arrive() const { return arrival_token(); }
  void barrier_wait(arrival_token &&) const { __syncthreads(); }
};

inline thread_block this_thread_block() { return thread_block(); }

// ---- the grid -----------------------------------------------------------
class grid_group : public thread_group {
  friend grid_group this_grid();
  grid_group() : thread_group(details::grid_group_id) {}

 public:
  static constexpr unsigned _group_id = details::grid_group_id;
  // whether the launch was cooperative (on a GPU: whether sync() may be called)
  bool is_valid() const { return __lc_grid_valid(); }
  void sync() const { __lc_grid_sync(); }
  // a split barrier. Here a thread arrives when it waits: what it does in
  // between runs before the grid's barrier, which is all a GPU promises
  // of it too, but a thread that waits in between for another block's
  // work after that block's barrier_wait never gets it (nor could a thread
  // that spins on another of its own block, whose fibers take turns).
  using arrival_token = unsigned int;
  arrival_token barrier_arrive() const {
    if (!__lc_grid_valid()) __lc_grid_invalid("barrier_arrive");
    return 0;
  }
  void barrier_wait(arrival_token &&) const { __lc_grid_sync(); }
  static unsigned long long num_blocks() {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  }
  static unsigned long long block_rank() {
    return ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  }
  static unsigned long long num_threads() { return num_blocks() * details::cta_size(); }
  static unsigned long long size() { return num_threads(); }
  static unsigned long long thread_rank() {
    return block_rank() * details::cta_size() + details::cta_rank();
  }
  static dim3 dim_blocks() { return dim3(gridDim.x, gridDim.y, gridDim.z); }
  static dim3 group_dim() { return dim_blocks(); }
  static dim3 block_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 dim_threads() {
    return dim3(gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z);
  }
  static dim3 thread_index() {
    return dim3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y,
                blockIdx.z * blockDim.z + threadIdx.z);
  }
};

inline grid_group this_grid() { return grid_group(); }

// ---- lanes of one warp: coalesced groups ---------------------------------
class coalesced_group : public thread_group {
  friend struct details::access;

 protected:
  explicit coalesced_group(unsigned mask, unsigned meta_rank = 0, unsigned meta_size = 1,
                           bool tiled = false)
      : thread_group(details::coalesced_group_id, mask, (unsigned)__builtin_popcount(mask),
                     meta_rank, meta_size, tiled) {}

 public:
  static constexpr unsigned _group_id = details::coalesced_group_id;
  unsigned size() const { return size_; }
  unsigned num_threads() const { return size_; }
  unsigned thread_rank() const { return (unsigned)__builtin_popcount(mask_ & details::lanemask_lt()); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  void sync() const { __syncwarp(mask_); }

  // a rank past the group's size wraps around, as a shuffle's source lane does
  template <typename T>
  T shfl(T v, unsigned src_rank) const {
    unsigned lane = details::nth_lane(mask_, src_rank % size_);
    return details::warp_op(LC_W_SHFL, mask_, v, lane, 32);
  }
  // from the member delta ranks before (after); its own value where there is none
  template <typename T>
  T shfl_up(T v, unsigned delta) const {
    unsigned r = thread_rank();
    unsigned lane = r >= delta ? details::nth_lane(mask_, r - delta) : details::laneid();
    return details::warp_op(LC_W_SHFL, mask_, v, lane, 32);
  }
  template <typename T>
  T shfl_down(T v, unsigned delta) const {
    unsigned r = thread_rank();
    unsigned lane = (unsigned long long)r + delta < size_ ? details::nth_lane(mask_, r + delta)
                                                          : details::laneid();
    return details::warp_op(LC_W_SHFL, mask_, v, lane, 32);
  }
  int any(int p) const { return __ballot_sync(mask_, p) != 0; }
  int all(int p) const { return __ballot_sync(mask_, p) == mask_; }
  // bits by rank in the group
  unsigned ballot(int p) const { return details::pack_lanes(mask_, __ballot_sync(mask_, p)); }
  template <typename T>
  unsigned match_any(T v) const {
    static_assert(std::is_arithmetic<T>::value && sizeof(T) <= 8, "match_any takes an arithmetic type");
    return details::pack_lanes(mask_, (unsigned)__lc_warp_op(LC_W_MATCH_ANY, mask_, __lc_bits(v), 0, 0));
  }
  template <typename T>
  unsigned match_all(T v, int &pred) const {
    static_assert(std::is_arithmetic<T>::value && sizeof(T) <= 8, "match_all takes an arithmetic type");
    unsigned long long r = __lc_warp_op(LC_W_MATCH_ALL, mask_, __lc_bits(v), 0, 0);
    pred = (int)(r >> 32);
    return details::pack_lanes(mask_, (unsigned)r);
  }
};

// ---- tiles ------------------------------------------------------------------
// thread_block_tile<N>: N consecutive threads of the block (N a power of 2
// up to 32, so one warp's lanes), ParentT the group it was cut from.
template <unsigned N, typename ParentT = void>
class thread_block_tile;

template <unsigned N>
class thread_block_tile<N, void> : public thread_group {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0,
                "thread_block_tile<N>: N must be a power of 2 from 1 to 32");
  friend struct details::access;
  static unsigned build_mask() {
    unsigned ones = N == 32 ? 0xffffffffu : (1u << N) - 1u;
    return ones << (details::laneid() & ~(N - 1));
  }

 protected:
  thread_block_tile(unsigned meta_rank, unsigned meta_size)
      : thread_group(details::coalesced_group_id, build_mask(), N, meta_rank, meta_size, true) {}

 public:
  static constexpr unsigned _group_id = details::coalesced_group_id;
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  static unsigned thread_rank() { return details::cta_rank() & (N - 1); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  void sync() const { __syncwarp(mask_); }

  template <typename T>
  T shfl(T v, int src_rank) const { return details::warp_op(LC_W_SHFL, mask_, v, (unsigned)src_rank, N); }
  template <typename T>
  T shfl_up(T v, unsigned delta) const { return details::warp_op(LC_W_SHFL_UP, mask_, v, delta, N); }
  template <typename T>
  T shfl_down(T v, unsigned delta) const { return details::warp_op(LC_W_SHFL_DOWN, mask_, v, delta, N); }
  template <typename T>
  T shfl_xor(T v, unsigned lanes) const { return details::warp_op(LC_W_SHFL_XOR, mask_, v, lanes, N); }
  int any(int p) const { return __ballot_sync(mask_, p) != 0; }
  int all(int p) const { return __ballot_sync(mask_, p) == mask_; }
  // bits by rank in the tile
  unsigned ballot(int p) const { return __ballot_sync(mask_, p) >> (details::laneid() & ~(N - 1)); }
  template <typename T>
  unsigned match_any(T v) const {
    static_assert(std::is_arithmetic<T>::value && sizeof(T) <= 8, "match_any takes an arithmetic type");
    return (unsigned)__lc_warp_op(LC_W_MATCH_ANY, mask_, __lc_bits(v), 0, 0) >>
           (details::laneid() & ~(N - 1));
  }
  template <typename T>
  unsigned match_all(T v, int &pred) const {
    static_assert(std::is_arithmetic<T>::value && sizeof(T) <= 8, "match_all takes an arithmetic type");
    unsigned long long r = __lc_warp_op(LC_W_MATCH_ALL, mask_, __lc_bits(v), 0, 0);
    pred = (int)(r >> 32);
    return (unsigned)r >> (details::laneid() & ~(N - 1));
  }
};

// a tile that remembers its parent's type; it converts to thread_block_tile<N>
template <unsigned N, typename ParentT>
class thread_block_tile : public thread_block_tile<N, void> {
  friend struct details::access;

 protected:
  thread_block_tile(unsigned meta_rank, unsigned meta_size)
      : thread_block_tile<N, void>(meta_rank, meta_size) {}
};

namespace details {
// the constructors the functions below use
struct access {
  static coalesced_group coalesced(unsigned mask, unsigned meta_rank, unsigned meta_size,
                                   bool tiled) {
    return coalesced_group(mask, meta_rank, meta_size, tiled);
  }
  template <unsigned N, typename P>
  static thread_block_tile<N, P> tile(unsigned meta_rank, unsigned meta_size) {
    return thread_block_tile<N, P>(meta_rank, meta_size);
  }
  static unsigned mask(const thread_group &g) { return g.mask_; }
  static bool tiled(const thread_group &g) { return g.tiled_; }
};
}  // namespace details

// The lanes of the caller's warp that call it at the same place (a
// divergent branch's lanes), once no lane of the block can run on: the
// simulator runs lanes one after another, so "converged" means "here
// together". The call site (its file and line) comes in the default
// arguments.
static inline coalesced_group coalesced_threads(const char *lc_file = __builtin_FILE(),
                                                unsigned lc_line = __builtin_LINE()) {
  return details::access::coalesced(__lc_active_at(__lc_site(lc_file, lc_line)), 0, 1, false);
}

template <unsigned N>
static inline thread_block_tile<N, thread_block> tiled_partition(const thread_block &) {
  unsigned n = details::cta_size();
  return details::access::tile<N, thread_block>(details::cta_rank() / N, (n + N - 1) / N);
}

template <unsigned N, unsigned M, typename P>
static inline thread_block_tile<N, thread_block_tile<M, P> > tiled_partition(
    const thread_block_tile<M, P> &) {
  static_assert(N < M, "tiled_partition<N>(tile): N must be smaller than the tile");
  return details::access::tile<N, thread_block_tile<M, P> >((details::cta_rank() & (M - 1)) / N,
                                                           M / N);
}

// one thread
static inline thread_block_tile<1, void> this_thread() {
  return details::access::tile<1, void>(0, 1);
}

// tiled_partition(parent, n): tiles of n threads (a power of 2 up to 32)
// of a block, a tile or a coalesced group, as a group whose size is known
// at run time
namespace details {
static inline coalesced_group tile_of(unsigned mask, bool tiled, unsigned n) {
  if (n == 0 || n > 32 || (n & (n - 1)) != 0) bad_tile(n);
  unsigned size = (unsigned)__builtin_popcount(mask), rank = (unsigned)__builtin_popcount(mask & lanemask_lt());
  if (size <= n) return access::coalesced(mask, 0, 1, tiled);
  if (tiled) {            // consecutive lanes from a multiple of n: cut them as a block's
    unsigned base = rank & ~(n - 1), len = size - base < n ? size - base : n;
    unsigned ones = len == 32 ? 0xffffffffu : (1u << len) - 1u;
    return access::coalesced(ones << (laneid() & ~(n - 1)), rank / n, size / n, true);
  }
  unsigned first = rank / n * n, sub = 0;   // the members ranked first .. first + n - 1
  for (unsigned r = first; r < first + n && r < size; r++) sub |= 1u << nth_lane(mask, r);
  return access::coalesced(sub, rank / n, (size + n - 1) / n, false);
}
}  // namespace details

static inline coalesced_group tiled_partition(const coalesced_group &parent, unsigned n) {
  return details::tile_of(details::access::mask(parent), details::access::tiled(parent), n);
}

static inline thread_group tiled_partition(const thread_block &, unsigned n) {
  if (n == 0 || n > 32 || (n & (n - 1)) != 0) details::bad_tile(n);
  unsigned size = details::cta_size(), rank = details::cta_rank();
  unsigned base = rank & ~(n - 1), len = size - base < n ? size - base : n;
  unsigned ones = len == 32 ? 0xffffffffu : (1u << len) - 1u;
  return details::access::coalesced(ones << (details::laneid() & ~(n - 1)), rank / n,
                                    (size + n - 1) / n, true);
}

// a block, or lanes of a warp (a tile, a coalesced group); not the grid
static inline thread_group tiled_partition(const thread_group &parent, unsigned n) {
  if (parent.get_type() == details::thread_block_id)
    return tiled_partition(static_cast<const thread_block &>(parent), n);
  if (parent.get_type() != details::coalesced_group_id) details::bad_tile(n);
  return details::tile_of(details::access::mask(parent), details::access::tiled(parent), n);
}

// ---- partitions by a value -----------------------------------------------
namespace details {
template <typename G>
static inline coalesced_group binary_partition(const G &g, bool pred) {
  unsigned mask = access::mask(g), set = __ballot_sync(mask, pred);
  if (set == mask || set == 0) return access::coalesced(mask, 0, 1, false);
  return access::coalesced(mask & (pred ? set : ~set), pred ? 1 : 0, 2, false);
}

template <typename G, typename T>
static inline coalesced_group labeled_partition(const G &g, T label) {
  unsigned mask = access::mask(g);
  unsigned sub = (unsigned)__lc_warp_op(LC_W_MATCH_ANY, mask, __lc_bits(label), 0, 0);
  unsigned leader = (unsigned)__builtin_ctz(sub);
  unsigned leaders = __ballot_sync(mask, leader == laneid());
  // the partitions are ranked by their first lanes
  return access::coalesced(sub, (unsigned)__builtin_popcount(leaders & ((1u << leader) - 1u)),
                           (unsigned)__builtin_popcount(leaders), false);
}
}  // namespace details

static inline coalesced_group binary_partition(const coalesced_group &g, bool pred) {
  return details::binary_partition(g, pred);
}
template <unsigned N, typename P>
static inline coalesced_group binary_partition(const thread_block_tile<N, P> &g, bool pred) {
  return details::binary_partition(g, pred);
}

// the members that hold the same label: an integer or a pointer
template <typename T>
static inline coalesced_group labeled_partition(const coalesced_group &g, T label) {
  static_assert(std::is_integral<T>::value || std::is_pointer<T>::value,
                "labeled_partition's label must be an integer or a pointer");
  return details::labeled_partition(g, label);
}
template <typename T, unsigned N, typename P>
static inline coalesced_group labeled_partition(const thread_block_tile<N, P> &g, T label) {
  static_assert(std::is_integral<T>::value || std::is_pointer<T>::value,
                "labeled_partition's label must be an integer or a pointer");
  return details::labeled_partition(g, label);
}

// ---- thread_group's members, by the kind of group ----------------------------
inline unsigned long long thread_group::size() const {
  switch (type_) {
    case details::thread_block_id: return details::cta_size();
    case details::grid_group_id: return grid_group::size();
    default: return size_;
  }
}

inline unsigned long long thread_group::thread_rank() const {
  switch (type_) {
    case details::thread_block_id: return details::cta_rank();
    case details::grid_group_id: return grid_group::thread_rank();
    default: return (unsigned)__builtin_popcount(mask_ & details::lanemask_lt());
  }
}

inline void thread_group::sync() const {
  switch (type_) {
    case details::thread_block_id: __syncthreads(); break;
    case details::grid_group_id: __lc_grid_sync(); break;
    default: __syncwarp(mask_); break;
  }
}

// ---- the free functions ---------------------------------------------------
template <typename G>
static inline void sync(const G &g) { g.sync(); }
template <typename G>
static inline auto thread_rank(const G &g) -> decltype(g.thread_rank()) { return g.thread_rank(); }
template <typename G>
static inline auto group_size(const G &g) -> decltype(g.num_threads()) { return g.num_threads(); }

// ---- one member runs a function ----------------------------------------------
// A GPU that has elect.sync may pick any member; here it is always rank 0.
template <typename G, typename Fn, typename... Args>
static inline void invoke_one(const G &g, Fn &&fn, Args &&...args) {
  if (g.thread_rank() == 0) std::forward<Fn>(fn)(std::forward<Args>(args)...);
}

namespace details {
template <typename G, typename Fn, typename... Args>
static inline auto invoke_one_broadcast(const G &g, Fn &&fn, Args &&...args)
    -> typename std::remove_reference<decltype(std::forward<Fn>(fn)(std::forward<Args>(args)...))>::type {
  using R = decltype(std::forward<Fn>(fn)(std::forward<Args>(args)...));
  static_assert(!std::is_void<R>::value,
                "For invocables returning void invoke_one should be used instead");
  typename std::remove_cv<typename std::remove_reference<R>::type>::type result;
  if (g.thread_rank() == 0) result = std::forward<Fn>(fn)(std::forward<Args>(args)...);
  return g.shfl(result, 0);
}
}  // namespace details

// every member gets what the one that ran it returned: warp groups only
template <typename Fn, typename... Args>
static inline auto invoke_one_broadcast(const coalesced_group &g, Fn &&fn, Args &&...args)
    -> decltype(details::invoke_one_broadcast(g, std::forward<Fn>(fn), std::forward<Args>(args)...)) {
  return details::invoke_one_broadcast(g, std::forward<Fn>(fn), std::forward<Args>(args)...);
}
template <unsigned N, typename P, typename Fn, typename... Args>
static inline auto invoke_one_broadcast(const thread_block_tile<N, P> &g, Fn &&fn, Args &&...args)
    -> decltype(details::invoke_one_broadcast(g, std::forward<Fn>(fn), std::forward<Args>(args)...)) {
  return details::invoke_one_broadcast(g, std::forward<Fn>(fn), std::forward<Args>(args)...);
}

}  // namespace cooperative_groups

#endif
