/*
** Unit tests for src/base/random.c (run them as unit.h says): the host's
** loop gives, for contiguous and strided views, the elements philox.h
** defines block by block (the reference here is philox.h's one-block
** functions). The Makefile builds this file twice: against random.c as
** it is (the AVX2 path where the CPU has it) and with -DLC_RANDOM_AVX2=0
** (the portable path), so both give philox.h's bits.
*/
#include "random.h"

#include "unit.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "philox.h"

#define DT(code) (&lc_dtypes[LC_##code])

enum { MAXN = 200 };

/* element j of a call, as philox.h defines it */
static double reference(const lc_random_call *c, int64_t j) {
  bool f32 = c->dtype->code == LC_FLOAT32;
  int per = f32 ? 4 : 2;
  lc_philox_block v = lc_philox_main(c->key, c->counter + (uint64_t)(j / per));
  float f[4];
  double d[2];
  float pf[4];
  for (int k = 0; k < 4; k++) pf[k] = (float)c->p[k];
  if (c->dist == LC_RNG_UNIFORM) {
    if (f32) lc_rng_uniform_f32(v, pf[0], pf[1], pf[2], pf[3], f);
    else lc_rng_uniform_f64(v, c->p[0], c->p[1], c->p[2], c->p[3], d);
  } else {
    if (f32) lc_rng_normal_f32(v, pf[0], pf[1], f);
    else lc_rng_normal_f64(v, c->p[0], c->p[1], d);
  }
  return f32 ? (double)f[j % per] : d[j % per];
}

static lc_random_call make(int dist, lc_typecode t, double a, double b, void *data) {
  lc_random_call c;
  memset(&c, 0, sizeof c);
  c.dist = dist;
  c.dtype = &lc_dtypes[t];
  c.key = 0x0123456789abcdefull;
  c.counter = 0xfffffff0ull;    /* the counter's low word wraps inside a call */
  if (dist == LC_RNG_UNIFORM) {
    double high = a + b;
    c.p[0] = a;
    c.p[1] = b;
    c.p[2] = high;
    c.p[3] = t == LC_FLOAT32 ? (double)nextafterf((float)high, -INFINITY) : nextafter(high, -INFINITY);
  } else {
    c.p[0] = a;
    c.p[1] = b;
  }
  c.data = data;
  return c;
}

static double element(const lc_random_call *c, const char *p) {
  if (c->dtype->code == LC_FLOAT32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  double d;
  memcpy(&d, p, 8);
  return d;
}

static const struct { int dist; double a, b; } cases[] = {
  {LC_RNG_UNIFORM, 0, 1}, {LC_RNG_UNIFORM, -3, 5.5}, {LC_RNG_NORMAL, 0, 1}, {LC_RNG_NORMAL, 2, 3},
};

/* every size up to MAXN, contiguous: element j is philox.h's element j */
static int test_contiguous(void) {
  static double buf[MAXN + 1];
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    for (int t = 0; t < 2; t++)
      for (int64_t n = 1; n <= MAXN; n += n < 40 ? 1 : 13) {
        lc_typecode code = t ? LC_FLOAT64 : LC_FLOAT32;
        memset(buf, 0x7f, sizeof buf);
        lc_random_call c = make(cases[k].dist, code, cases[k].a, cases[k].b, buf);
        CHECK_OK(lc_layout_contiguous(&c.lay, 1, &n, c.dtype->size, 'C', err));
        lc_random_host(&c);
        for (int64_t j = 0; j < n; j++) {
          double got = element(&c, (char *)buf + j * c.dtype->size), want = reference(&c, j);
          if (memcmp(&got, &want, sizeof got) != 0)
            return failf(__FILE__, __LINE__, "case %zu %s n=%lld: element %lld is %a, want %a", k,
                         c.dtype->name, (long long)n, (long long)j, got, want);
        }
        /* nothing written past the end */
        CHECK(((unsigned char *)buf)[n * c.dtype->size] == 0x7f);
      }
  return 0;
}

/* a strided view (every other element) gets the same elements in order */
static int test_strided(void) {
  static double buf[2 * MAXN];
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    for (int t = 0; t < 2; t++) {
      lc_typecode code = t ? LC_FLOAT64 : LC_FLOAT32;
      int64_t n = 77, span;
      memset(buf, 0, sizeof buf);
      lc_random_call c = make(cases[k].dist, code, cases[k].a, cases[k].b, buf);
      int64_t stride = 2 * c.dtype->size;
      CHECK_OK(lc_layout_strided(&c.lay, 1, &n, 1, &stride, c.dtype->size, &span, err));
      lc_random_host(&c);
      for (int64_t j = 0; j < n; j++) {
        double got = element(&c, (char *)buf + j * stride), want = reference(&c, j);
        if (memcmp(&got, &want, sizeof got) != 0)
          return failf(__FILE__, __LINE__, "case %zu %s: element %lld is %a, want %a", k,
                       c.dtype->name, (long long)j, got, want);
        CHECK(element(&c, (char *)buf + j * stride + c.dtype->size) == 0);
      }
    }
  return 0;
}

#define T(name) { #name, test_##name }

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    T(contiguous),
    T(strided),
  };
  return unit_main(argv[0], tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
