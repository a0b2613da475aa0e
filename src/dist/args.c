/*
** args: the arguments of a call (arrays, op, root or peer, options), each
** checked and its facts written into the call's header: what is wrong is
** this rank's argument error, which the agreement raises on every rank.
*/
#include <stdio.h>
#include <string.h>

#include "dist.h"
#include "bigcount.h"      /* lc_mpi_chunk */

static bool c_contiguous(const luacuda_arrayinfo *in) {
  int64_t want = in->itemsize;
  for (int i = in->ndim - 1; i >= 0; i--) {
    if (in->shape[i] == 0) return true;
    if (in->shape[i] != 1 && in->strides[i] != want) return false;
    want *= in->shape[i];
  }
  return true;
}

static int wait_array(lua_State *L) {
  luacuda_waitarray(L, 1, lua_toboolean(L, 2));
  return 0;
}

/* Wait for the work a script queued on streams that writes (or, when
** writing, reads) the array at idx, as a host access from Lua does; its
** error (LUACUDA_STRICT_ASYNC=1) becomes this rank's argument error. */
static bool wait_queued(lua_State *L, int idx, bool writing, header *h) {
  lua_pushcfunction(L, wait_array);
  lua_pushvalue(L, idx);
  lua_pushboolean(L, writing);
  if (lua_pcall(L, 2, 0, 0) == LUA_OK) return true;
  dist_header_error(h, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
  return false;
}

/* The shape (ndim and extents) as one number for the header: FNV-1a over
** their bytes, whose collisions (2^-64 for two shapes) would only miss the
** report of shapes that differ with the same element count. */
static int64_t shape_hash(const luacuda_arrayinfo *in) {
  uint64_t h = 14695981039346656037u;
  int64_t words[LC_MAXDIM + 1];
  int n = in->ndim < LC_MAXDIM ? in->ndim : LC_MAXDIM;
  words[0] = n;
  for (int i = 0; i < n; i++) words[i + 1] = in->shape[i];
  const unsigned char *b = (const unsigned char *)words;
  for (size_t i = 0; i < (size_t)(n + 1) * sizeof words[0]; i++) h = (h ^ b[i]) * 1099511628211u;
  return (int64_t)(h >> 1);    /* >= 0: the header negates its fields */
}

/* The array argument at idx into *a, its facts into the header (when
** describe); what is wrong with it into h's error. Unless the call goes
** on a stream (o), the work queued on it is waited for: the call reads it
** (and writes it, when writes). */
bool dist_read_array(lua_State *L, int idx, const char *what, header *h, arr *a, bool describe,
                     bool writes, const dopts *o) {
  memset(a, 0, sizeof *a);
  a->code = -1;
  a->data = luacuda_toarray(L, idx, &a->info);
  if (a->info.dtype == NULL) {      /* left as it was: not an open array */
    dist_header_error(h, "%s must be an open array, got %s", what, luaL_typename(L, idx));
    return false;
  }
  a->code = dist_dtype_code(a->info.dtype);
  a->what = what;
  if (!c_contiguous(&a->info)) {
    dist_header_error(h, "%s is not C-contiguous: call the method on the communicator, which "
                      "copies it", what);
    return false;
  }
  if (!o->has_stream && !wait_queued(L, idx, writes, h)) return false;
  if (describe) {
    h->f[F_CHUNK] = lc_mpi_chunk();
    h->f[F_DTYPE] = a->code;
    h->f[F_ITEMSIZE] = a->info.itemsize;
    h->f[F_COUNT] = a->info.size;
    h->f[F_SHAPE] = shape_hash(&a->info);
  }
  return true;
}

/* MPI's count for n elements of a (records move as bytes) */
int64_t dist_mpi_count(const arr *a, int64_t n) {
  return a->code == LC_RECORD ? n * a->info.itemsize : n;
}

/* The op argument at idx (default "sum"), into the header. */
int dist_read_op(lua_State *L, int idx, header *h, const arr *x) {
  int op = OP_SUM_;
  if (!lua_isnoneornil(L, idx)) {
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    op = OP_NONE;
    for (int i = OP_SUM_; s && dist_op_names[i]; i++)
      if (strcmp(s, dist_op_names[i]) == 0) op = i;
    if (op == OP_NONE) {
      dist_header_error(h, "op must be \"sum\", \"prod\", \"min\" or \"max\", got %s",
                        s ? s : luaL_typename(L, idx));
      op = OP_SUM_;
    }
  }
  h->f[F_OP] = op;
  if (x->code == LC_RECORD)
    dist_header_error(h, "a record array cannot be reduced (%s takes numbers and booleans)",
                      dist_kind_names[h->f[F_KIND]]);
  return op;
}

/* A root or peer: a rank 1..size, 0-based in *out. */
bool dist_read_rank(lua_State *L, int idx, dcomm *c, const char *what, header *h, int *out) {
  int isnum = 0;
  lua_Integer r = lua_tointegerx(L, idx, &isnum);
  *out = 0;
  if (!isnum) {
    dist_header_error(h, "%s must be a rank (an integer 1 to %d), got %s", what, c->size,
                      luaL_typename(L, idx));
    return false;
  }
  if (r < 1 || r > c->size) {
    dist_header_error(h, "%s %lld is not a rank of this communicator (1 to %d)", what, (long long)r,
                      c->size);
    return false;
  }
  *out = (int)(r - 1);
  return true;
}

/* Same dtype as x (and record size), for an output. */
void dist_same_dtype(header *h, const arr *x, const arr *out, const char *what) {
  if (x->code != out->code || x->info.itemsize != out->info.itemsize)
    dist_header_error(h, "%s is %s, the input %s (no implicit casting)", what, out->info.dtype,
                      x->info.dtype);
}

bool dist_overlap(const arr *a, const arr *b) {
  const char *p = a->data, *q = b->data;
  int64_t na = a->info.size * a->info.itemsize, nb = b->info.size * b->info.itemsize;
  return na > 0 && nb > 0 && p < q + nb && q < p + na;
}

/* the output of allgather and reduce_scatter: `big` has size times the
** elements of `small` */
void dist_check_blocks(header *h, dcomm *c, const arr *big, const arr *small, const char *bigname,
                       const char *smallname) {
  if (big->info.size != (int64_t)c->size * small->info.size)
    dist_header_error(h, "%s has %lld elements, not %d (ranks) x %lld (the elements of %s)",
                      bigname, (long long)big->info.size, c->size, (long long)small->info.size,
                      smallname);
  else if (dist_overlap(big, small))
    dist_header_error(h, "out overlaps x");
}

static int to_stream(lua_State *L) {
  lua_pushlightuserdata(L, luacuda_tostream(L, 1));
  return 1;
}

/* The option table at idx (nil, or a table of the keys in known, which
** ends with "stream") into *o; what is wrong into h's error. */
void dist_read_options(lua_State *L, int idx, const char *const *known, header *h, dopts *o) {
  o->has_stream = false;
  o->stream = NULL;
  if (lua_isnoneornil(L, idx)) return;
  if (!lua_istable(L, idx)) {
    dist_header_error(h, "options must be a table, got %s", luaL_typename(L, idx));
    return;
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    bool ok = false;
    for (int i = 0; known[i] && lua_type(L, -1) == LUA_TSTRING; i++)
      ok = ok || strcmp(lua_tostring(L, -1), known[i]) == 0;
    if (!ok) {
      dist_header_error(h, "unknown option %s (it takes %s)",
                        lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1),
                        known[1] ? "out= and stream=" : "stream=");
      lua_pop(L, 1);
      return;
    }
  }
  lua_pushliteral(L, "stream");
  lua_rawget(L, idx);
  if (!lua_isnil(L, -1)) {
    lua_pushcfunction(L, to_stream);
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
      lua_pushliteral(L, "stream");
      lua_rawget(L, idx);
      dist_header_error(h, "stream must be an open luacuda stream, got %s",
                        luaL_testudata(L, -1, "luacuda.stream") ? "a closed one"
                                                                : luaL_typename(L, -1));
      lua_pop(L, 1);
    } else {
      o->has_stream = true;
      o->stream = lua_touserdata(L, -1);
    }
  }
  lua_pop(L, 1);
}
