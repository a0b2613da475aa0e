/*
** hash: two 64-bit lanes, each word mixed in with a strong finalizer
** (xor-shift-multiply), so every input bit reaches every output bit of
** both lanes (see hash.h).
*/
#include "hash.h"

#include <string.h>

static uint64_t mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return x;
}

static void add_word(lc_hash *h, uint64_t w) {
  h->a = mix(h->a ^ w) + 0x9e3779b97f4a7c15ull;
  h->b = mix(h->b + w * 0xd6e8feb86659fd93ull) ^ h->a;
}

void lc_hash_init(lc_hash *h) {
  h->a = 0x243f6a8885a308d3ull;
  h->b = 0x13198a2e03707344ull;
}

void lc_hash_add(lc_hash *h, const void *data, size_t n) {
  const unsigned char *p = data;
  add_word(h, (uint64_t)n);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    add_word(h, w);
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  if (n) memcpy(&w, p, n);        /* an empty field may have no pointer */
  add_word(h, w);
}

void lc_hash_add_str(lc_hash *h, const char *s) { lc_hash_add(h, s, strlen(s)); }
