/*
** random: luacuda.random(seed | state) and its generators: counter-based
** random numbers, Philox4x32-10 keyed by the seed (kernels/philox.h says
** how each value is made). An element's value depends on the seed, the
** call's counter and its own index only, so every backend and every memory
** kind gives the same bits. Device-accessible results (device, managed,
** mapped) are computed by the backend, queued on the stream given or the
** default stream; host and pinned ones here, on the host (base/random.c),
** once the work queued on them is done.
*/
#include "array.h"

#include <math.h>
#include <string.h>

#include "gate.h"
#include "pending.h"
#include "random.h"
#include "stream.h"
#include "device.h"

#define GEN_MT "luacuda.generator"

/* the counter stays a Lua integer: it may not pass this */
#define COUNTER_MAX ((uint64_t)INT64_MAX)

typedef struct generator {
  uint64_t key;                /* the seed */
  uint64_t counter;            /* the next block */
} generator;

static generator *push_generator(lua_State *L, uint64_t key, uint64_t counter) {
  generator *g = lua_newuserdatauv(L, sizeof *g, 0);
  g->key = key;
  g->counter = counter;
  luaL_setmetatable(L, GEN_MT);
  return g;
}

static generator *check_self(lua_State *L, const char *fname) {
  return lc_check_userdata(L, 1, GEN_MT, "a generator", fname);
}

/* A seed or a counter at idx: an integer >= 0 (a float with an integral
** value too). */
static uint64_t check_count(lua_State *L, int idx, const char *what, const char *fname) {
  int ok = 0;
  lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
  if (!ok) {
    if (lua_type(L, idx) == LUA_TNUMBER)
      lc_error(L, fname, "%s must be a non-negative integer, got %g", what,
               lua_tonumber(L, idx));
    lc_error(L, fname, "%s must be a non-negative integer, got %s", what, lc_typename(L, idx));
  }
  if (v < 0) lc_error(L, fname, "%s must be a non-negative integer, got %lld", what, (long long)v);
  return (uint64_t)v;
}

/*** @module luacuda */

/***
A counter-based random generator (Philox4x32-10): a seed gives the same
numbers on the simulator, on any GPU and on the host, whatever the launch
shape.
@function random
@tparam integer|table seed an integer from 0 to 2^63 - 1, or a state
`{seed =, counter =}` from @{Generator:state} to resume from
@treturn Generator
@raise `luacuda.random: seed must be a non-negative integer, got -1`; `a state has
the keys seed and counter only, got 'x'`; `a state needs its seed ...`
@usage local g = luacuda.random(2024)
local x = g:uniform({1000})           -- a device array, float64 on [0, 1)
local h = g:normal({4}, "float32", {kind = "host"})
*/

/* luacuda.random(seed | {seed =, counter =}) */
static int l_random(lua_State *L) {
  uint64_t key, counter = 0;
  if (lua_type(L, 1) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, 1)) {
      const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
      if (k == NULL || (strcmp(k, "seed") != 0 && strcmp(k, "counter") != 0))
        lc_error(L, "random", "a state has the keys seed and counter only, got %s%s%s",
                 k ? "'" : "a ", k ? k : luaL_typename(L, -2), k ? "'" : " key");
      lua_pop(L, 1);
    }
    if (lc_opt_get(L, 1, "seed") == LUA_TNIL)
      lc_error(L, "random", "a state needs its seed (g:state() gives {seed =, counter =})");
    key = check_count(L, -1, "the state's seed", "random");
    if (lc_opt_get(L, 1, "counter") != LUA_TNIL)
      counter = check_count(L, -1, "the state's counter", "random");
  } else if (lua_type(L, 1) == LUA_TNUMBER) {
    key = check_count(L, 1, "seed", "random");
  } else {
    lc_error(L, "random", "seed must be a non-negative integer or a state {seed =, counter =}, "
             "got %s", lc_typename(L, 1));
  }
  push_generator(L, key, counter);
  return 1;
}

/* ---- the calls: arguments ------------------------------------------------- */

typedef struct request {
  int dist;
  const char *fname;
  const lc_dtype *dt;
  int nd;
  int64_t shape[LC_MAXDIM];
  int64_t count;               /* the shape's elements (lc_shape_count) */
  lc_array *out;               /* given, or NULL */
  lc_stream *stream;           /* given, or NULL */
  lc_kind kind;                /* the result's */
  double p[4];                 /* the call's parameters (lc_random_call) */
  uint64_t low, range;         /* integers */
} request;

static const char *const uniform_opts[] = {"low", "high", "stream", "out", "kind", "dtype", NULL};
static const char *const normal_opts[] = {"mean", "std", "stream", "out", "kind", "dtype", NULL};
static const char *const integers_opts[] = {"stream", "out", "kind", "dtype", NULL};

/* The option key of the table at oidx as a finite number, dflt when absent. */
static double opt_number(lua_State *L, int oidx, const char *key, double dflt,
                         const char *fname) {
  if (oidx == 0) return dflt;
  int t = lc_opt_get(L, oidx, key);
  double v = dflt;
  if (t != LUA_TNIL) {
    if (t != LUA_TNUMBER)
      lc_error(L, fname, "%s must be a number, got %s", key, lc_typename(L, -1));
    v = lua_tonumber(L, -1);
    if (!isfinite(v)) lc_error(L, fname, "%s must be finite, got %g", key, v);
  }
  lua_pop(L, 1);
  return v;
}

static bool same_shape(int nd, const int64_t *shape, const lc_layout *l) {
  if (l->ndim != nd) return false;
  for (int i = 0; i < nd; i++)
    if (l->shape[i] != shape[i]) return false;
  return true;
}

/* shape [, dtype] [, opts] from idx on: the result's shape, dtype (dflt
** unless given or out's), kind, stream and output. Returns the options
** table's index (0: none). Every value read stays on the stack. */
static int read_shape_dtype_opts(lua_State *L, int idx, request *r, const char *const *known,
                                 const lc_dtype *dflt) {
  const char *fname = r->fname;
  int didx = idx + 1, oidx = idx + 2;
  if (lua_type(L, didx) == LUA_TTABLE) {     /* no dtype: the options */
    oidx = didx;
    didx = 0;
  }
  bool have = lc_check_opts(L, oidx, known, fname);
  if (!have) oidx = 0;
  r->out = NULL;
  r->stream = NULL;
  r->kind = LC_DEVICE;
  if (have) {
    if (lc_opt_get(L, oidx, "out") != LUA_TNIL) {
      if (lc_array_test(L, -1) == NULL)
        lc_error(L, fname, "out must be an array, got %s", lc_typename(L, -1));
      r->out = lc_array_check(L, -1, fname);     /* stays on the stack */
      lc_check_current_device(L, r->out, "out=", fname);
    }
    lc_opt_get(L, oidx, "stream");
    r->stream = lc_opt_stream(L, -1, fname);      /* stays on the stack */
    if (lc_opt_get(L, oidx, "kind") != LUA_TNIL) {
      const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
      int i = 0;
      while (k && i < LC_NKINDS && strcmp(k, lc_kind_names[i]) != 0) i++;
      if (k == NULL || i == LC_NKINDS)
        lc_error(L, fname, "kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', "
                 "got %s%s%s", k ? "'" : "", k ? k : lc_typename(L, -1), k ? "'" : "");
      if (r->out) lc_error(L, fname, "give out or kind, not both (the output's kind is its own)");
      r->kind = (lc_kind)i;
    }
    lua_pop(L, 1);
  }

  /* the dtype: an argument, or dtype= (one form everywhere) */
  const lc_dtype *dt = didx ? lc_dtype_opt(L, didx, NULL, fname) : NULL;
  if (have && lc_opt_get(L, oidx, "dtype") != LUA_TNIL) {      /* stays on the stack */
    if (dt) lc_error(L, fname, "the dtype is given twice (an argument and dtype=)");
    dt = lc_dtype_check(L, -1, fname);
  }
  if (dt == NULL) dt = r->out ? r->out->dtype : dflt;
  if (r->dist == LC_RNG_INTEGERS) {
    if (dt->rec || (dt->kind != 'i' && dt->kind != 'u'))
      lc_error(L, fname, "dtype must be an integer dtype (int8 ... uint64), got %s", dt->name);
  } else if (dt->code != LC_FLOAT32 && dt->code != LC_FLOAT64) {
    lc_error(L, fname, "dtype must be float32 or float64, got %s", dt->name);
  }
  r->dt = dt;

  /* the shape: out's when not given */
  if (lua_isnoneornil(L, idx) && r->out) {
    r->nd = r->out->lay.ndim;
    memcpy(r->shape, r->out->lay.shape, sizeof(int64_t) * (size_t)r->nd);
  } else {
    r->nd = lc_check_dims(L, idx, false, false, r->shape, "shape", fname);
  }
  /* checked as every shape is, before the blocks are counted from it */
  char err[LC_ERRLEN];
  if (lc_shape_count(r->nd, r->shape, dt->size, &r->count, err)) lc_error(L, fname, "%s", err);
  if (r->out) {
    lc_array *o = r->out;
    if (!same_shape(r->nd, r->shape, &o->lay) || o->dtype != dt) {
      char want[LC_SHAPE_STRLEN], got[LC_SHAPE_STRLEN];
      lc_shape_format(want, sizeof want, r->nd, r->shape);
      lc_shape_format(got, sizeof got, o->lay.ndim, o->lay.shape);
      lc_error(L, fname, "out must be a %s array of shape %s, got %s of shape %s", dt->name,
               want, o->dtype->name, got);
    }
    for (int d = 0; d < o->lay.ndim; d++)
      if (o->lay.shape[d] > 1 && o->lay.strides[d] == 0)
        lc_error(L, fname, "out has axes of stride 0 (a broadcast view), whose elements are "
                 "one another: give an array with an element for each value");
    r->kind = lc_array_kind(o);
  }
  return oidx;
}

/* ---- the calls: running one --------------------------------------------- */

/* Fill the result of r from g: allocated (pushed) unless out was given
** (pushed again), then computed on its side. Returns with it on top. */
static void run(lua_State *L, generator *g, request *r) {
  const char *fname = r->fname;
  uint64_t blocks = lc_random_blocks(r->dist, r->dt, r->range, r->count);
  if (blocks > COUNTER_MAX - g->counter)
    lc_error(L, fname, "the generator's counter (%llu) would pass 2^63 - 1 with the %llu blocks "
             "this call takes: it is used up (seed another, or split one)",
             (unsigned long long)g->counter, (unsigned long long)blocks);

  const lc_backend *be = r->out ? r->out->buf->backend : lc_backend_get(NULL);
  bool device = lc_kind_device_accessible(r->kind);
  lc_stream *s = NULL;
  if (device) s = r->stream ? r->stream : be->default_stream();
  lc_array *out = r->out;
  if (out) {
    int top = lua_gettop(L);
    for (int idx = 1; idx <= top; idx++)
      if (lc_array_test(L, idx) == out) {
        lua_pushvalue(L, idx);
        break;
      }
  } else {
    out = lc_array_empty(L, r->kind, r->dt, r->nd, r->shape, 'C', s, fname);
  }
  int out_idx = lua_gettop(L);

  lc_random_call c;
  memset(&c, 0, sizeof c);
  c.dist = r->dist;
  c.dtype = r->dt;
  c.key = g->key;
  memcpy(c.p, r->p, sizeof c.p);
  c.low = r->low;
  c.range = r->range;
  c.lay = out->lay;
  char err[LC_ERRLEN];
  if (!device) {
    lc_pending_wait(L, out, true, fname);
    c.data = lc_array_data(out);
  } else {
    lc_buffer_use(L, out->buf, s, fname);
    c.data = lc_array_device_data(out);
    if (be->random == NULL) lc_error(L, fname, "the %s backend has no random numbers", be->name);
  }
  /* the counter now: Lua code (a finalizer) may have drawn from g since */
  if (blocks > COUNTER_MAX - g->counter)
    lc_error(L, fname, "the generator's counter (%llu) would pass 2^63 - 1 with the %llu blocks "
             "this call takes: it is used up (seed another, or split one)",
             (unsigned long long)g->counter, (unsigned long long)blocks);
  c.counter = g->counter;
  if (!device) {
    lc_random_host(&c);
  } else {
    if (be->random(&c, s, err)) lc_error(L, fname, "%s", err);
    lc_pending_add(out->buf, s, true);
  }
  g->counter += blocks;
  lua_pushvalue(L, out_idx);
}

/***
A random generator, from @{random}. Each call moves its counter past the
random blocks it used, so calls in one order give one stream of numbers
on any backend. Results are new device arrays unless `kind` or `out` says
otherwise; device-side work is queued on `stream` (the default stream
otherwise).
@type Generator
*/

/***
Uniform floats on `[low, high)`.
@function Generator:uniform
@tparam table|integer shape the result's shape (may be nil with `out`)
@tparam[opt="float64"] string dtype `"float32"` or `"float64"`
@tparam[opt] table opts `{low = 0, high = 1, stream =, out =, kind = "device", dtype =}`:
`out` an array to fill (any kind and strides), `kind` the new array's memory
@treturn Array
@raise `luacuda.uniform: low must be less than high, got low = 1, high = 0`;
`dtype must be float32 or float64, got int32`; `give out or kind, not both ...`;
a range beyond the dtype's; `array size overflows` for a shape as @{zeros} refuses it
@usage local g = luacuda.random(7)
local u = g:uniform({2, 3}, "float32", {low = -1, high = 1})
*/

/* g:uniform(shape [, dtype] [, {low =, high =, stream =, out =, kind =}]) */
static int gen_uniform(lua_State *L) {
  generator *g = check_self(L, "uniform");
  request r;
  memset(&r, 0, sizeof r);
  r.dist = LC_RNG_UNIFORM;
  r.fname = "uniform";
  int oidx = read_shape_dtype_opts(L, 2, &r, uniform_opts, &lc_dtypes[LC_FLOAT64]);
  double low = opt_number(L, oidx, "low", 0, r.fname);
  double high = opt_number(L, oidx, "high", 1, r.fname);
  if (!(low < high))
    lc_error(L, r.fname, "low must be less than high, got low = %g, high = %g", low, high);
  if (r.dt->code == LC_FLOAT32) {
    float lo = (float)low, hi = (float)high;
    if (!isfinite(lo) || !isfinite(hi))
      lc_error(L, r.fname, "low = %g, high = %g: beyond float32's range", low, high);
    if (!(lo < hi))
      lc_error(L, r.fname, "low = %g and high = %g are the same float32: give a wider range",
               low, high);
    float scale = hi - lo;
    if (!isfinite(scale))
      lc_error(L, r.fname, "high - low overflows float32 (low = %g, high = %g)", low, high);
    r.p[0] = lo;
    r.p[1] = scale;
    r.p[2] = hi;
    r.p[3] = nextafterf(hi, -INFINITY);
  } else {
    double scale = high - low;
    if (!isfinite(scale))
      lc_error(L, r.fname, "high - low overflows float64 (low = %g, high = %g)", low, high);
    r.p[0] = low;
    r.p[1] = scale;
    r.p[2] = high;
    r.p[3] = nextafter(high, -INFINITY);
  }
  run(L, g, &r);
  return 1;
}

/***
Normally distributed floats (Box-Muller on pairs of uniforms).
@function Generator:normal
@tparam table|integer shape the result's shape (may be nil with `out`)
@tparam[opt="float64"] string dtype `"float32"` or `"float64"`
@tparam[opt] table opts `{mean = 0, std = 1, stream =, out =, kind = "device", dtype =}`
@treturn Array
@raise `luacuda.normal: std must be >= 0, got -1`; a bad dtype or option;
`array size overflows` for a shape as @{zeros} refuses it
@usage local g = luacuda.random(7)
local n = g:normal({1000}, "float64", {mean = 10, std = 2, kind = "host"})
*/

/* g:normal(shape [, dtype] [, {mean =, std =, stream =, out =, kind =}]) */
static int gen_normal(lua_State *L) {
  generator *g = check_self(L, "normal");
  request r;
  memset(&r, 0, sizeof r);
  r.dist = LC_RNG_NORMAL;
  r.fname = "normal";
  int oidx = read_shape_dtype_opts(L, 2, &r, normal_opts, &lc_dtypes[LC_FLOAT64]);
  double mean = opt_number(L, oidx, "mean", 0, r.fname);
  double std = opt_number(L, oidx, "std", 1, r.fname);
  if (std < 0) lc_error(L, r.fname, "std must be >= 0, got %g", std);
  if (r.dt->code == LC_FLOAT32) {
    if (!isfinite((float)mean) || !isfinite((float)std))
      lc_error(L, r.fname, "mean = %g, std = %g: beyond float32's range", mean, std);
    mean = (float)mean;
    std = (float)std;
  }
  r.p[0] = mean;
  r.p[1] = std;
  run(L, g, &r);
  return 1;
}

/***
Uniform integers on `[low, high)` (high left out), unbiased.
@function Generator:integers
@tparam integer low the smallest value
@tparam integer high one above the largest
@tparam table|integer shape the result's shape (may be nil with `out`)
@tparam[opt="int64"] string dtype any integer dtype that holds the range
@tparam[opt] table opts `{stream =, out =, kind = "device", dtype =}`
@treturn Array
@raise `luacuda.integers: low must be less than high, got low = 5, high = 5`;
`[low, high) = [0, 300) does not fit uint8 (0 to 255)`; `array size overflows`
for a shape as @{zeros} refuses it
@usage local g = luacuda.random(7)
local dice = g:integers(1, 7, {10}, "int32", {kind = "host"})
*/

/* g:integers(low, high, shape [, dtype] [, {stream =, out =, kind =}]):
** on [low, high) */
static int gen_integers(lua_State *L) {
  generator *g = check_self(L, "integers");
  request r;
  memset(&r, 0, sizeof r);
  r.dist = LC_RNG_INTEGERS;
  r.fname = "integers";
  int64_t low = lc_check_integer(L, 2, "low", 0, r.fname);
  int64_t high = lc_check_integer(L, 3, "high", 0, r.fname);
  if (low >= high)
    lc_error(L, r.fname, "low must be less than high, got low = %lld, high = %lld",
             (long long)low, (long long)high);
  read_shape_dtype_opts(L, 4, &r, integers_opts, &lc_dtypes[LC_INT64]);
  int bits = (int)r.dt->size * 8;
  bool fits;
  long long lo = 0, hi_max = 0;       /* the dtype's least and greatest, where below 64 bits */
  if (r.dt->kind == 'i') {
    fits = bits == 64 || (low >= -(1ll << (bits - 1)) && high - 1 <= (1ll << (bits - 1)) - 1);
    if (bits < 64) {
      lo = -(1ll << (bits - 1));
      hi_max = (1ll << (bits - 1)) - 1;
    }
  } else {
    fits = low >= 0 && (bits == 64 || high - 1 <= (long long)((1ull << bits) - 1));
    if (bits < 64) hi_max = (long long)((1ull << bits) - 1);
  }
  if (!fits) {
    if (bits == 64)
      lc_error(L, r.fname, "[low, high) = [%lld, %lld) does not fit uint64 (low must be >= 0)",
               (long long)low, (long long)high);
    lc_error(L, r.fname, "[low, high) = [%lld, %lld) does not fit %s (%lld to %lld)",
             (long long)low, (long long)high, r.dt->name, lo, hi_max);
  }
  r.low = (uint64_t)low;
  r.range = (uint64_t)high - (uint64_t)low;
  run(L, g, &r);
  return 1;
}

/***
The generator's state, a plain table, to resume from with @{random}.
@function Generator:state
@treturn table `{seed =, counter =}`
@raise `luacuda.state: expected a generator, got <type>`
@usage local g = luacuda.random(7)
g:uniform({10})
local again = luacuda.random(g:state())   -- continues where g is
*/

/* g:state() -> {seed =, counter =} */
static int gen_state(lua_State *L) {
  generator *g = check_self(L, "state");
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, (lua_Integer)g->key);
  lua_setfield(L, -2, "seed");
  lua_pushinteger(L, (lua_Integer)g->counter);
  lua_setfield(L, -2, "counter");
  return 1;
}

/***
`n` new generators, each with a key of its own derived from this one's key
and counter (the same state splits the same way), starting at counter 0;
this generator's counter moves on by one.
@function Generator:split
@tparam integer n how many, from 1
@treturn {Generator,...}
@raise `luacuda.split: n must be an integer from 1 to 2147483647, got 0`;
`the generator's counter (...) is used up (seed another)`
@usage local gs = luacuda.random(7):split(4)
local x = gs[1]:uniform({8})
*/

/* g:split(n) -> a sequence of n generators, each with a key of its own */
static int gen_split(lua_State *L) {
  generator *g = check_self(L, "split");
  int ok = 0;
  lua_Integer n = lua_type(L, 2) == LUA_TNUMBER ? lua_tointegerx(L, 2, &ok) : 0;
  if (!ok || n < 1 || n > INT32_MAX) {
    if (lua_type(L, 2) == LUA_TNUMBER)
      lc_error(L, "split", "n must be an integer from 1 to %d, got %g", INT32_MAX,
               lua_tonumber(L, 2));
    lc_error(L, "split", "n must be an integer from 1 to %d, got %s", INT32_MAX,
             lc_typename(L, 2));
  }
  if (g->counter >= COUNTER_MAX)
    lc_error(L, "split", "the generator's counter (%llu) is used up (seed another)",
             (unsigned long long)g->counter);
  /* the counter moves on first: a finalizer run by the allocations below
  ** that splits g too gets other keys */
  uint64_t key = g->key, counter = g->counter++;
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 0; i < n; i++) {
    push_generator(L, lc_random_split_key(key, counter, (uint32_t)i), 0);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int gen_tostring(lua_State *L) {
  generator *g = check_self(L, "tostring");
  lua_pushfstring(L, "luacuda.generator(seed %I, counter %I)", (lua_Integer)g->key,
                  (lua_Integer)g->counter);
  return 1;
}

/* _generator_methods(): the generators' method table, to which
** lua/luacuda/sampling.lua adds permutation, shuffle and choice (an
** internal name: init.lua leaves it out of the module) */
static int l_generator_methods(lua_State *L) {
  luaL_getmetatable(L, GEN_MT);
  lua_getfield(L, -1, "__index");
  return 1;
}

void lc_random_open(lua_State *L) {
  static const luaL_Reg meta[] = {{"__tostring", gen_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
    {"uniform", gen_uniform}, {"normal", gen_normal}, {"integers", gen_integers},
    {"state", gen_state}, {"split", gen_split}, {NULL, NULL}
  };
  lc_new_type(L, GEN_MT, meta, methods);
  static const luaL_Reg fns[] = {{"random", l_random}, {"_generator_methods", l_generator_methods},
                                 {NULL, NULL}};
  lc_setfuncs(L, fns);
}
