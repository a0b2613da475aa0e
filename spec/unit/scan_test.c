/*
** Unit tests for src/base/scan*.c (run them as unit.h says), and:
**   scan_test --stress N [SEED]  scan N random mutations of the test sources and
**                                check that every result is well formed (build
**                                with -fsanitize=address,undefined to catch bad
**                                reads)
**
** Every source is scanned from a heap copy of exactly its length, without a
** terminating NUL, so a read past the end is caught by AddressSanitizer.
*/
#include "scan.h"
#include "probe.h"

#include "unit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- scanning -------------------------------------------------------- */

#define MAXK 16
#define MAXS 16
#define MAXG 16
static lc_kernel_sig ks[MAXK];
static lc_shared_decl sh[MAXS];
static lc_global_decl gl[MAXG];
#define MAXST 8
static lc_struct_def st[MAXST];
static lc_scan_result res;
static const char *cur;          /* the source of the last scan (NUL-terminated) */

/* Scan n bytes of src from an exact-size heap copy. */
static int scan_n(const char *src, size_t n) {
  char *copy = malloc(n ? n : 1);
  if (!copy) abort();
  memcpy(copy, src, n);
  memset(&res, 0, sizeof res);
  res.kernels = ks;
  res.max_kernels = MAXK;
  res.shared = sh;
  res.max_shared = MAXS;
  res.globals = gl;
  res.max_globals = MAXG;
  res.structs = st;
  res.max_structs = MAXST;
  cur = src;
  int rc = lc_scan(copy, n, &res, err);
  free(copy);
  return rc;
}

static int scan(const char *src) {
  return scan_n(src, strlen(src));
}

/* lc_parse_signature on an exact-size copy. */
static int sig_n(const char *text, size_t n, lc_kernel_sig *sig) {
  char *copy = malloc(n ? n : 1);
  if (!copy) abort();
  memcpy(copy, text, n);
  int rc = lc_parse_signature(copy, n, sig, err);
  free(copy);
  return rc;
}

static int sig(const char *text, lc_kernel_sig *s) {
  return sig_n(text, strlen(text), s);
}

/* The kernel errors, "" when the parameters were understood. */
#define CHECK_KERNEL(i, nm, nparams_) do { \
    CHECK((i) < res.nkernels); \
    CHECK_STR(ks[i].name, nm); \
    CHECK_STR(ks[i].error, ""); \
    CHECK_EQ(ks[i].nparams, nparams_); \
  } while (0)

static int check_param(const char *file, int line, const lc_param *p, lc_param_kind kind,
                       int type, int is_const, int ndim, int64_t size, int64_t align,
                       const char *spelling, const char *name) {
  if (p->kind != kind)
    return failf(file, line, "%s: kind %d, expected %d", spelling, (int)p->kind, (int)kind);
  if (p->type != type)
    return failf(file, line, "%s: type %d, expected %d", spelling, p->type, type);
  if ((int)p->is_const != is_const)
    return failf(file, line, "%s: is_const %d, expected %d", spelling, (int)p->is_const, is_const);
  if (p->ndim != ndim)
    return failf(file, line, "%s: ndim %d, expected %d", spelling, p->ndim, ndim);
  if (p->size != size || p->align != align)
    return failf(file, line, "%s: size/align %lld/%lld, expected %lld/%lld", spelling,
                 (long long)p->size, (long long)p->align, (long long)size, (long long)align);
  if (strcmp(p->spelling, spelling) != 0)
    return failf(file, line, "spelling \"%s\", expected \"%s\"", p->spelling, spelling);
  if (strcmp(p->name, name) != 0)
    return failf(file, line, "name \"%s\", expected \"%s\"", p->name, name);
  return 0;
}

/* CHECK_PARAM(param, kind, type, is_const, ndim, size, align, spelling, name) */
#define CHECK_PARAM(p, ...) do { \
    if (check_param(__FILE__, __LINE__, &(p), __VA_ARGS__)) return 1; \
  } while (0)

#define SCALAR LC_PARAM_SCALAR
#define POINTER LC_PARAM_POINTER
#define ARRAY LC_PARAM_ARRAY

/* The text at src[b .. e) of the last scanned source equals want. */
#define CHECK_SPAN(b, e, want) do { \
    size_t b_ = (b), e_ = (e); \
    const char *w_ = (want); \
    if (e_ < b_ || e_ - b_ != strlen(w_) || memcmp(cur + b_, w_, e_ - b_) != 0) \
      return failf(__FILE__, __LINE__, "[%s, %s) is \"%.*s\", expected \"%s\"", #b, #e, \
                   (int)(e_ >= b_ && e_ - b_ < 200 ? e_ - b_ : 0), cur + b_, w_); \
  } while (0)

/* Where the n-th occurrence (1-based) of what lies in the last source. */
static size_t at(const char *what, int n) {
  const char *p = cur;
  for (;;) {
    p = strstr(p, what);
    if (!p) return (size_t)-1;
    if (--n == 0) return (size_t)(p - cur);
    p++;
  }
}

/* ---- a source that has a bit of everything ------------------------------ */

static const char sample[] =
  "// a kernel file\n"
  "#include <cuda_fp16.h>\n"
  "#define KERNEL_NOT_SEEN __global__ void notseen() { \\\n"
  "  }\n"
  "/* __global__ void commented(int x) { } */\n"
  "__constant__ float coef[4] = {1, 2, 3, 4};\n"
  "__device__ int counter;\n"
  "__device__ unsigned long long table[2][3];\n"
  "__device__ float square(float x) { return x * x; }\n"
  "extern __shared__ float dyn[];\n"
  "struct Pair { int a; float b; __device__ int sum() const { return a + (int)b; } };\n"
  "namespace detail {\n"
  "  __device__ float twice(float v) { return 2 * v; }\n"
  "  __constant__ int lut[8];\n"
  "}\n"
  "extern \"C\" {\n"
  "__global__ void __launch_bounds__(256, 2) saxpy(int n, float a, const float *__restrict__ x,\n"
  "                                              float *y) {\n"
  "  const char *s = \"}{ \\\" __global__ void fake() {\";\n"
  "  char c = '}';\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) { y[i] = a * x[i] + y[i]; }\n"
  "}\n"
  "__global__ void tiled(Array<float, 2> out, Array<const float, 2> in) {\n"
  "  __shared__ float tile[16][16 + 1];\n"
  "  extern __shared__ __align__(16) unsigned char smem[];\n"
  "  tile[threadIdx.y][threadIdx.x] = in(threadIdx.y, threadIdx.x);\n"
  "  __syncthreads();\n"
  "  out(threadIdx.x, threadIdx.y) = tile[threadIdx.x][threadIdx.y];\n"
  "}\n"
  "}  // extern \"C\"\n"
  "template <typename T, int N = (3 > 2)>\n"
  "__global__ void generic(T *p, int n) { p[n] = T(); }\n"
  "__global__ void mangled(double *d) { *d = 1.0; }\n"
  "extern \"C\" __global__ void declared_only(int);\n"
  "extern \"C\" __global__ void last(void) { }\n";

/* ---- the lexer ------------------------------------------------------------ */

static int test_sample(void) {
  CHECK_OK(scan(sample));
  CHECK_EQ(res.nkernels, 5);
  CHECK_KERNEL(0, "saxpy", 4);
  CHECK(ks[0].extern_c);
  CHECK_EQ(ks[0].line, 17);
  CHECK_KERNEL(1, "tiled", 2);
  CHECK(ks[1].extern_c);
  CHECK_STR(ks[2].name, "generic");
  CHECK(!ks[2].extern_c);
  CHECK(ks[2].is_template);
  CHECK_KERNEL(3, "mangled", 1);
  CHECK(!ks[3].extern_c);
  CHECK_KERNEL(4, "last", 0);
  CHECK(ks[4].extern_c);
  CHECK_EQ(ks[4].line, 36);
  CHECK_EQ(res.nshared, 3);
  CHECK_STR(sh[0].name, "dyn");
  CHECK(sh[0].is_extern);
  CHECK(!sh[0].in_function);
  CHECK_STR(sh[1].name, "tile");
  CHECK_EQ(sh[1].kernel, 1);
  CHECK_STR(sh[1].text, "float tile[16][16 + 1]");
  CHECK_STR(sh[2].name, "smem");
  CHECK(sh[2].is_extern);
  CHECK_EQ(sh[2].align, 16);
  CHECK_EQ(res.nglobals, 4);
  CHECK_STR(gl[0].name, "coef");
  CHECK_STR(gl[1].name, "counter");
  CHECK_STR(gl[2].name, "table");
  CHECK_STR(gl[3].name, "lut");
  CHECK(gl[3].in_namespace);
  return 0;
}

static int test_comments(void) {
  CHECK_OK(scan("// __global__ void a() {}\n"
                "/* __global__ void b() {}\n"
                "   more */ __global__ void c() {}\n"
                "// continued \\\n"
                "__global__ void d() {}\n"
                "/**/__global__/**/void/**/e/**/(/**/)/**/{/**/}\n"
                "//"));
  CHECK_EQ(res.nkernels, 2);
  CHECK_KERNEL(0, "c", 0);
  CHECK_EQ(ks[0].line, 3);
  CHECK_KERNEL(1, "e", 0);
  CHECK_EQ(ks[1].line, 6);
  /* a comment left open swallows the rest */
  CHECK_OK(scan("__global__ void a() {}\n/* __global__ void b() {}"));
  CHECK_EQ(res.nkernels, 1);
  /* comments inside a parameter list */
  CHECK_OK(scan("__global__ void k(int /* count */ n, // the data\n float *x) {}"));
  CHECK_KERNEL(0, "k", 2);
  CHECK_PARAM(ks[0].params[0], SCALAR, LC_INT32, 0, 0, 4, 4, "int", "n");
  CHECK_PARAM(ks[0].params[1], POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *", "x");
  return 0;
}

static int test_strings_and_chars(void) {
  CHECK_OK(scan("__global__ void a(char *s) {\n"
                "  const char *t = \"{ \\\"}\\\\\";\n"
                "  char c = '{', d = '\\'', e = '\\\\', f = '\"';\n"
                "  const char *u = \"__global__ void x() {\";\n"
                "}\n"
                "__global__ void b() { const char *r = R\"delim(}\" )\" { )delim\"; }\n"
                "__global__ void c() { auto w = L\"}\"; auto v = u8'{'; int big = 1'000'000; }\n"
                "__global__ void d() {}\n"));
  CHECK_EQ(res.nkernels, 4);
  CHECK_KERNEL(0, "a", 1);
  CHECK_KERNEL(1, "b", 0);
  CHECK_KERNEL(2, "c", 0);
  CHECK_KERNEL(3, "d", 0);
  CHECK_EQ(ks[3].line, 8);
  /* a string with an escaped newline counts the line */
  CHECK_OK(scan("__global__ void a() { const char *s = \"x\\\ny\"; }\n__global__ void b() {}"));
  CHECK_EQ(ks[1].line, 3);
  /* a raw string over several lines */
  CHECK_OK(scan("__global__ void a() { auto s = R\"(\n}\n}\n)\"; }\n__global__ void b() {}"));
  CHECK_EQ(res.nkernels, 2);
  CHECK_EQ(ks[1].line, 5);
  /* an unterminated string ends at the end of its line */
  CHECK_OK(scan("__global__ void a() { const char *s = \"abc\n; }\n__global__ void b() {}"));
  CHECK_EQ(res.nkernels, 2);
  return 0;
}

static int test_preprocessor(void) {
  CHECK_OK(scan("#include \"a.h\"\n"
                "#define K __global__ void hidden() {\n"
                "#define LONG(x) \\\n"
                "   __global__ void also_hidden() { \\\n"
                "   }\n"
                "  #  pragma once\n"
                "#error don't\n"
                "#define S \"/*\"\n"
                "__global__ void seen(int n) {\n"
                "#pragma unroll\n"
                "  for (int i = 0; i < n; i++) {}\n"
                "}\n"
                "int x = 1; # define NOT_AT_LINE_START\n"));
  CHECK_EQ(res.nkernels, 1);
  CHECK_KERNEL(0, "seen", 1);
  CHECK_EQ(ks[0].line, 9);
  /* a directive after a comment at the start of a line */
  CHECK_OK(scan("/* c */ #define X {\n__global__ void k() {}\n"));
  CHECK_EQ(res.nkernels, 1);
  CHECK_EQ(ks[0].line, 2);
  /* #if 0 and #if 1 ... #else: the dead branch is not read */
  CHECK_OK(scan("#if 0\n"
                "__global__ void dead0() {\n"
                "#if 1\n"
                "don't { {\n"
                "#endif\n"
                "#else\n"
                "__global__ void live0() {}\n"
                "#endif\n"
                "#if 1\n"
                "__global__ void live1() {}\n"
                "#elif X\n"
                "__global__ void dead1() {}\n"
                "#else\n"
                "__global__ void dead2() { {\n"
                "#endif\n"
                "#ifdef FOO\n"
                "__global__ void maybe1() {}\n"
                "#else\n"
                "__global__ void maybe2() {}\n"
                "#endif\n"
                "#if 0 // off\n"
                "__global__ void dead3() {\n"
                "#elif 0\n"
                "__global__ void dead4() {\n"
                "#elif 1\n"
                "__global__ void live2() {}\n"
                "#else\n"
                "__global__ void dead5() {\n"
                "#endif\n"
                "#if 0\n"
                "/*\n"
                "#endif\n"
                "*/\n"
                "__global__ void dead6() {\n"
                "#endif\n"
                "__global__ void end() {}\n"));
  CHECK_EQ(res.nkernels, 6);
  CHECK_STR(ks[0].name, "live0");
  CHECK_STR(ks[1].name, "live1");
  CHECK_STR(ks[2].name, "maybe1");
  CHECK_STR(ks[3].name, "maybe2");
  CHECK_STR(ks[4].name, "live2");
  CHECK_STR(ks[5].name, "end");
  CHECK_EQ(ks[5].line, 36);
  return 0;
}

static int test_line_numbers(void) {
  CHECK_OK(scan("\n\n/*\n\n*/ // x\n#define A \\\n  B\n"
                "extern \"C\" __global__ void\n"
                "\n"
                "  k(int n) {}\n"
                "__global__ void\r\nw() {}\r\n"
                "__global__ void \\\nspliced() {}\n"));
  CHECK_EQ(res.nkernels, 3);
  CHECK_EQ(ks[0].line, 10);
  CHECK_EQ(ks[1].line, 12);
  CHECK_EQ(ks[2].line, 14);
  /* a byte order mark is not a character of the source */
  CHECK_OK(scan("\xEF\xBB\xBF#include <x>\n__global__ void k() {}"));
  CHECK_KERNEL(0, "k", 0);
  CHECK_EQ(ks[0].line, 2);
  return 0;
}

/* ---- kernels ---------------------------------------------------------------- */

static int test_extern_c_forms(void) {
  CHECK_OK(scan("extern \"C\" __global__ void a() {}\n"
                "__global__ extern \"C\" void b() {}\n"
                "__global__ void c() {}\n"
                "extern \"C\" {\n"
                "  __global__ void d() {}\n"
                "  namespace ns { __global__ void e() {} }\n"
                "  extern \"C++\" __global__ void f() {}\n"
                "  extern \"C++\" { __global__ void g() {} }\n"
                "  __global__ void h() {}\n"
                "}\n"
                "__global__ void i() {}\n"
                "extern \"C\" { }\n"
                "extern \"C\" static __global__ void j() {}\n"));
  CHECK_EQ(res.nkernels, 10);
  const char *names = "abcdefghij";
  const bool c[] = { 1, 1, 0, 1, 1, 0, 0, 1, 0, 1 };
  for (int i = 0; i < 10; i++) {
    char nm[2] = { names[i], '\0' };
    CHECK_KERNEL(i, nm, 0);
    if (ks[i].extern_c != c[i]) return failf(__FILE__, __LINE__, "kernel %s: extern_c %d", nm, !c[i]);
  }
  return 0;
}

static int test_attributes(void) {
  CHECK_OK(scan("extern \"C\" __global__ void __launch_bounds__(256, 2) a(int n) {}\n"
                "extern \"C\" __global__ __launch_bounds__(128) void b(int n) {}\n"
                "__launch_bounds__(64, 1, 1) extern \"C\" __global__ void c(int n) {}\n"
                "extern \"C\" __global__ void __attribute__((noinline)) d(int n) {}\n"
                "[[deprecated(\"x\")]] extern \"C\" __global__ void e(int n) {}\n"
                "static __global__ void f(int n) {}\n"
                "static __forceinline__ __device__ int helper(int v) { return v; }\n"
                "__global__ __maxnreg__(32) void g(int n) {}\n"
                "__global__ void h(const __grid_constant__ Array<float, 1> a) {}\n"));
  CHECK_EQ(res.nkernels, 8);
  const char *names = "abcdefgh";
  for (int i = 0; i < 8; i++) {
    char nm[2] = { names[i], '\0' };
    CHECK_KERNEL(i, nm, 1);
  }
  CHECK(ks[0].extern_c && ks[1].extern_c && ks[2].extern_c && ks[3].extern_c && ks[4].extern_c);
  CHECK(!ks[5].extern_c);
  CHECK_PARAM(ks[7].params[0], ARRAY, LC_FLOAT32, 0, 1, 24, 8,
              "const __grid_constant__ Array<float, 1>", "a");
  return 0;
}

static int test_templates(void) {
  CHECK_OK(scan("template <typename T>\n"
                "__global__ void fill(T *p, T v) { p[0] = v; }\n"
                "extern \"C\" {\n"
                "template <typename T, int N = (1 < 2), typename U = Foo<Bar<int>>>\n"
                "__global__ void t2(float *x) {}\n"
                "}\n"
                "template <> __global__ void fill<float>(float *p, float v) { p[0] = v; }\n"
                "template __global__ void fill<int>(int *, int);\n"
                "extern \"C\" __global__ void after(int n) {}\n"));
  CHECK_EQ(res.nkernels, 4);
  CHECK_STR(ks[0].name, "fill");
  CHECK(!ks[0].extern_c);
  CHECK(ks[0].is_template);
  CHECK_EQ(ks[0].nparams, -1);
  CHECK_STR(ks[0].error, "kernel 'fill' parameter 1: unsupported type 'T *'");
  CHECK_KERNEL(1, "t2", 1);
  CHECK(!ks[1].extern_c);
  CHECK(ks[1].is_template);
  CHECK_KERNEL(2, "fill", 2);        /* the explicit specialization */
  CHECK(ks[2].is_template);
  CHECK_KERNEL(3, "after", 1);
  CHECK(ks[3].extern_c);
  CHECK(!ks[3].is_template);
  return 0;
}

static int test_declarations_skipped(void) {
  CHECK_OK(scan("__global__ void a(int n);\n"
                "extern \"C\" __global__ void b(float *x);\n"
                "extern \"C\" { __global__ void c(); }\n"
                "__device__ float f(float x);\n"
                "__device__ float g(float x) { return x; }\n"
                "__host__ __device__ inline int h(int v) { return v + 1; }\n"
                "struct S { __device__ S() : a{1}, b(2) {} int a, b; __device__ void m() {} };\n"
                "__device__ float2 operator+(float2 a, float2 b) { return a; }\n"
                "__device__ bool operator<(S a, S b) { return true; }\n"
                "S::S2() : x{3} { }\n"
                "typedef void (*fp)(int);\n"
                "using P = float *;\n"
                "enum class E : int { A = 1, B = 2 };\n"
                "union U { int i; float f; } u;\n"
                "static_assert(sizeof(int) == 4, \"int\");\n"
                "extern \"C\" __global__ void k(int n) {}\n"));
  CHECK_EQ(res.nkernels, 1);
  CHECK_KERNEL(0, "k", 1);
  CHECK_EQ(res.nglobals, 0);
  return 0;
}

static int test_body_offsets(void) {
  CHECK_OK(scan("extern \"C\" __global__ void k(int n) {\n"
                "  if (n) { { } }\n"
                "  auto f = [&](int v) { return v; };\n"
                "  struct L { int x; } l = { 1 };\n"
                "}\n"
                "__global__ void j() {}"));
  CHECK_EQ(res.nkernels, 2);
  CHECK_EQ(ks[0].body_begin, at("{", 1));
  CHECK_EQ(ks[0].body_end, at("\n}\n", 1) + 1);
  CHECK_EQ(cur[ks[1].body_begin], '{');
  CHECK_EQ(ks[1].body_end, strlen(cur) - 1);
  return 0;
}

static int test_unterminated_body(void) {
  CHECK_ERR(scan("extern \"C\" __global__ void k(int n) {\n  if (n) {\n}\n"),
            "kernel 'k' (line 1): no '}' closes its body");
  CHECK_ERR(scan("__global__ void k() { \"}\" /* } */ // }\n"), "no '}' closes its body");
  /* a brace too many at namespace scope is the compiler's business */
  CHECK_OK(scan("}\n__global__ void k() {}\n}"));
  CHECK_KERNEL(0, "k", 0);
  return 0;
}

static int test_zero_params(void) {
  CHECK_OK(scan("__global__ void a() {}\n__global__ void b(void) {}\n"
                "__global__ void c( /* none */ ) {}\n__global__ void d(void *p) {}\n"));
  CHECK_KERNEL(0, "a", 0);
  CHECK_KERNEL(1, "b", 0);
  CHECK_KERNEL(2, "c", 0);
  CHECK_KERNEL(3, "d", 1);
  CHECK_PARAM(ks[3].params[0], POINTER, -1, 0, 0, 8, 8, "void *", "p");
  return 0;
}

/* One parameter of a one-parameter kernel, from its text. */
static int param1(const char *text, lc_param *p) {
  static char src[512];
  snprintf(src, sizeof src, "__global__ void k(%s) {}", text);
  if (scan(src) != 0) return failf(__FILE__, __LINE__, "scan of (%s) failed: %s", text, err);
  if (res.nkernels != 1 || ks[0].nparams != 1)
    return failf(__FILE__, __LINE__, "(%s): %d kernels, nparams %d: %s", text, res.nkernels,
                 ks[0].nparams, ks[0].error);
  *p = ks[0].params[0];
  return 0;
}

#define CHECK_P1(text, ...) do { \
    lc_param p_; \
    if (param1(text, &p_)) return 1; \
    if (check_param(__FILE__, __LINE__, &p_, __VA_ARGS__)) return 1; \
  } while (0)

static int test_scalar_types(void) {
  static const struct { const char *text; int type; int64_t size; const char *spelling; } cases[] = {
    { "bool c", LC_BOOL, 1, "bool" },
    { "char c", LC_INT8, 1, "char" },
    { "signed char c", LC_INT8, 1, "signed char" },
    { "unsigned char c", LC_UINT8, 1, "unsigned char" },
    { "short c", LC_INT16, 2, "short" },
    { "short int c", LC_INT16, 2, "short int" },
    { "signed short c", LC_INT16, 2, "signed short" },
    { "unsigned short c", LC_UINT16, 2, "unsigned short" },
    { "unsigned short int c", LC_UINT16, 2, "unsigned short int" },
    { "int c", LC_INT32, 4, "int" },
    { "signed c", LC_INT32, 4, "signed" },
    { "signed int c", LC_INT32, 4, "signed int" },
    { "unsigned c", LC_UINT32, 4, "unsigned" },
    { "unsigned int c", LC_UINT32, 4, "unsigned int" },
    { "int unsigned c", LC_UINT32, 4, "int unsigned" },
    { "long c", LC_INT64, 8, "long" },
    { "long int c", LC_INT64, 8, "long int" },
    { "unsigned long c", LC_UINT64, 8, "unsigned long" },
    { "long long c", LC_INT64, 8, "long long" },
    { "long long int c", LC_INT64, 8, "long long int" },
    { "unsigned long long c", LC_UINT64, 8, "unsigned long long" },
    { "unsigned long long int c", LC_UINT64, 8, "unsigned long long int" },
    { "int8_t c", LC_INT8, 1, "int8_t" },
    { "int16_t c", LC_INT16, 2, "int16_t" },
    { "int32_t c", LC_INT32, 4, "int32_t" },
    { "int64_t c", LC_INT64, 8, "int64_t" },
    { "uint8_t c", LC_UINT8, 1, "uint8_t" },
    { "uint16_t c", LC_UINT16, 2, "uint16_t" },
    { "uint32_t c", LC_UINT32, 4, "uint32_t" },
    { "uint64_t c", LC_UINT64, 8, "uint64_t" },
    { "std::int64_t c", LC_INT64, 8, "std::int64_t" },
    { "std :: uint8_t c", LC_UINT8, 1, "std::uint8_t" },
    { "::uint16_t c", LC_UINT16, 2, "::uint16_t" },
    { "size_t c", LC_UINT64, 8, "size_t" },
    { "std::size_t c", LC_UINT64, 8, "std::size_t" },
    { "ptrdiff_t c", LC_INT64, 8, "ptrdiff_t" },
    { "float c", LC_FLOAT32, 4, "float" },
    { "double c", LC_FLOAT64, 8, "double" },
    { "__half c", LC_FLOAT16, 2, "__half" },
    { "half c", LC_FLOAT16, 2, "half" },
    { "const int c", LC_INT32, 4, "const int" },
    { "int const c", LC_INT32, 4, "int const" },
    { "const volatile float c", LC_FLOAT32, 4, "const volatile float" },
    { "double", LC_FLOAT64, 8, "double" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lc_param p;
    if (param1(cases[i].text, &p)) return 1;
    /* top-level const on a scalar is allowed and ignored */
    if (check_param(__FILE__, __LINE__, &p, SCALAR, cases[i].type, 0, 0, cases[i].size,
                    cases[i].size, cases[i].spelling, strchr(cases[i].text, ' ') &&
                    strcmp(cases[i].text + strlen(cases[i].text) - 2, " c") == 0 ? "c" : ""))
      return 1;
  }
  return 0;
}

static int test_pointer_types(void) {
  CHECK_P1("float *x", POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *", "x");
  CHECK_P1("float* x", POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *", "x");
  CHECK_P1("float*", POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *", "");
  CHECK_P1("const float *x", POINTER, LC_FLOAT32, 1, 0, 8, 8, "const float *", "x");
  CHECK_P1("float const *x", POINTER, LC_FLOAT32, 1, 0, 8, 8, "float const *", "x");
  CHECK_P1("float *const x", POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *const", "x");
  CHECK_P1("const float *__restrict__ x", POINTER, LC_FLOAT32, 1, 0, 8, 8,
           "const float *__restrict__", "x");
  CHECK_P1("float * __restrict x", POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *__restrict", "x");
  CHECK_P1("__restrict__ float *x", POINTER, LC_FLOAT32, 0, 0, 8, 8, "__restrict__ float *", "x");
  CHECK_P1("float *restrict x", POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *restrict", "x");
  CHECK_P1("volatile int *flag", POINTER, LC_INT32, 0, 0, 8, 8, "volatile int *", "flag");
  CHECK_P1("const volatile unsigned long long * const __restrict__ p", POINTER, LC_UINT64, 1,
           0, 8, 8, "const volatile unsigned long long *const __restrict__", "p");
  CHECK_P1("bool *b", POINTER, LC_BOOL, 0, 0, 8, 8, "bool *", "b");
  CHECK_P1("__half *h", POINTER, LC_FLOAT16, 0, 0, 8, 8, "__half *", "h");
  CHECK_P1("const std::uint8_t *p", POINTER, LC_UINT8, 1, 0, 8, 8, "const std::uint8_t *", "p");
  CHECK_P1("void *p", POINTER, -1, 0, 0, 8, 8, "void *", "p");
  CHECK_P1("const void *p", POINTER, -1, 1, 0, 8, 8, "const void *", "p");
  CHECK_P1("void const*", POINTER, -1, 1, 0, 8, 8, "void const *", "");
  CHECK_P1("float x[]", POINTER, LC_FLOAT32, 0, 0, 8, 8, "float[]", "x");
  CHECK_P1("int x[8]", POINTER, LC_INT32, 0, 0, 8, 8, "int[8]", "x");
  CHECK_P1("[[maybe_unused]] float *x", POINTER, LC_FLOAT32, 0, 0, 8, 8,
           "[[maybe_unused]] float *", "x");
  CHECK_P1("float *x __attribute__((unused))", POINTER, LC_FLOAT32, 0, 0, 8, 8,
           "float *__attribute__((unused))", "x");
  /* a pointer to a named type: a record's struct */
  CHECK_P1("Point *p", POINTER, LC_PARAM_STRUCT, 0, 0, 8, 8, "Point *", "p");
  CHECK_P1("const MyStruct *s", POINTER, LC_PARAM_STRUCT, 1, 0, 8, 8, "const MyStruct *", "s");
  CHECK_P1("struct Point *__restrict__ p", POINTER, LC_PARAM_STRUCT, 0, 0, 8, 8,
           "struct Point *__restrict__", "p");
  CHECK_P1("Point p[]", POINTER, LC_PARAM_STRUCT, 0, 0, 8, 8, "Point[]", "p");
  {
    lc_param p_;
    if (param1("const struct Pair *q", &p_)) return 1;
    CHECK_STR(p_.type_name, "Pair");
    if (param1("float *q", &p_)) return 1;
    CHECK_STR(p_.type_name, "");
  }
  return 0;
}

static int test_array_types(void) {
  CHECK_P1("Array<float, 2> a", ARRAY, LC_FLOAT32, 0, 2, 40, 8, "Array<float, 2>", "a");
  CHECK_P1("Array<float,1>", ARRAY, LC_FLOAT32, 0, 1, 24, 8, "Array<float, 1>", "");
  CHECK_P1("const Array<double, 3> a", ARRAY, LC_FLOAT64, 0, 3, 56, 8,
           "const Array<double, 3>", "a");
  CHECK_P1("Array<const float, 2> in", ARRAY, LC_FLOAT32, 1, 2, 40, 8,
           "Array<const float, 2>", "in");
  CHECK_P1("Array<unsigned long long, 32> a", ARRAY, LC_UINT64, 0, 32, 8 + 16 * 32, 8,
           "Array<unsigned long long, 32>", "a");
  CHECK_P1("Array<std::int16_t, 0x4> a", ARRAY, LC_INT16, 0, 4, 72, 8, "Array<std::int16_t, 0x4>", "a");
  CHECK_P1("Array<bool, 1> a", ARRAY, LC_BOOL, 0, 1, 24, 8, "Array<bool, 1>", "a");
  CHECK_P1("Array<__half, 2> a", ARRAY, LC_FLOAT16, 0, 2, 40, 8, "Array<__half, 2>", "a");
  CHECK_P1("Array<char, 1u> a", ARRAY, LC_INT8, 0, 1, 24, 8, "Array<char, 1u>", "a");
  return 0;
}

/* The message of a one-parameter kernel that cannot be read. */
static int bad1(const char *file, int line, const char *text, const char *msg) {
  static char src[2048];
  snprintf(src, sizeof src, "__global__ void foo(int n, %s) {}", text);
  if (scan(src) != 0) return failf(file, line, "scan of (%s) failed: %s", text, err);
  if (res.nkernels != 1) return failf(file, line, "(%s): %d kernels", text, res.nkernels);
  if (ks[0].nparams != -1) return failf(file, line, "(%s): nparams %d", text, ks[0].nparams);
  if (strcmp(ks[0].error, msg) != 0)
    return failf(file, line, "(%s): error \"%s\", expected \"%s\"", text, ks[0].error, msg);
  return 0;
}

#define CHECK_BAD(text, msg) do { if (bad1(__FILE__, __LINE__, text, msg)) return 1; } while (0)

/* typedef and using at namespace scope, of scalar and vector types */
static int test_typedefs(void) {
  CHECK(scan("typedef unsigned int u32;\n"
             "using real = const double;\n"
             "typedef u32 word;\n"
             "typedef float2 v2;\n"
             "using pair = int2;\n"
             "typedef struct { int a; } anon;\n"
             "typedef int (*fn)(int);\n"
             "typedef int *iptr;\n"
             "namespace ns { typedef short s16; }\n"
             "__global__ void k(u32 a, real b, word *c, v2 *d, pair e, s16 f, uint g,\n"
             "                  clock_t h, ushort i, ulong j, int_fast8_t l) {}\n"
             "__global__ void bad(iptr p) {}\n"
             "__constant__ word table[4];\n") == 0);
  CHECK_KERNEL(0, "k", 11);
  CHECK_PARAM(ks[0].params[0], SCALAR, LC_UINT32, 0, 0, 4, 4, "u32", "a");
  CHECK_PARAM(ks[0].params[1], SCALAR, LC_FLOAT64, 0, 0, 8, 8, "real", "b");
  CHECK_PARAM(ks[0].params[2], POINTER, LC_UINT32, 0, 0, 8, 8, "word *", "c");
  CHECK_PARAM(ks[0].params[3], POINTER, LC_FLOAT32, 0, 0, 8, 8, "v2 *", "d");
  CHECK_EQ(ks[0].params[3].vec, 2);
  CHECK_PARAM(ks[0].params[4], LC_PARAM_VALUE, LC_INT32, 0, 0, 8, 8, "pair", "e");
  CHECK_EQ(ks[0].params[4].vec, 2);
  CHECK_PARAM(ks[0].params[5], SCALAR, LC_INT16, 0, 0, 2, 2, "s16", "f");
  CHECK_PARAM(ks[0].params[6], SCALAR, LC_UINT32, 0, 0, 4, 4, "uint", "g");
  CHECK_PARAM(ks[0].params[7], SCALAR, LC_INT64, 0, 0, 8, 8, "clock_t", "h");
  CHECK_PARAM(ks[0].params[8], SCALAR, LC_UINT16, 0, 0, 2, 2, "ushort", "i");
  CHECK_PARAM(ks[0].params[9], SCALAR, LC_UINT64, 0, 0, 8, 8, "ulong", "j");
  CHECK_PARAM(ks[0].params[10], SCALAR, LC_INT8, 0, 0, 1, 1, "int_fast8_t", "l");
  /* a typedef of a pointer is not read: the compiler judges it */
  CHECK_EQ(ks[1].nparams, -1);
  CHECK_STR(ks[1].error, "kernel 'bad' parameter 1: unsupported type 'iptr' (a struct is passed by pointer)");
  CHECK_EQ(res.nglobals, 1);
  CHECK_EQ(gl[0].type, LC_UINT32);
  /* a typedef after the kernel does not reach back */
  CHECK(scan("__global__ void k(late x) {}\ntypedef int late;\n") == 0);
  CHECK_EQ(ks[0].nparams, -1);
  return 0;
}

/* enumerations: a parameter of one is its underlying integer type; an
** unscoped one's enumerators are constants */
static int test_enums(void) {
  CHECK(scan("enum class Op : int { Add, Mul = 4, Div };\n"
             "enum Small : unsigned char { LO = 1, HI = 0xff };\n"
             "typedef enum { RED, GREEN = RED + 2, BLUE } Colour;\n"
             "enum struct Wide : std::int64_t { Big = 1 };\n"
             "enum { TILE = 32, HALF = TILE / 2, };\n"
             "enum Huge { H = 0x100000000 };\n"
             "enum class Scoped { Z = 3 };\n"
             "struct S { Op op; Small s; };\n"
             "__device__ int tile[TILE][HALF];\n"
             "__device__ int z[Z];\n"
             "__global__ void k(Op a, Small b, Colour c, const Wide d, S e) {}\n"
             "__global__ void bad(Huge h) {}\n") == 0);
  CHECK_KERNEL(0, "k", 5);
  CHECK_PARAM(ks[0].params[0], SCALAR, LC_INT32, 0, 0, 4, 4, "Op", "a");
  CHECK_PARAM(ks[0].params[1], SCALAR, LC_UINT8, 0, 0, 1, 1, "Small", "b");
  CHECK_PARAM(ks[0].params[2], SCALAR, LC_INT32, 0, 0, 4, 4, "Colour", "c");
  CHECK_PARAM(ks[0].params[3], SCALAR, LC_INT64, 0, 0, 8, 8, "const Wide", "d");
  CHECK_EQ(ks[0].params[4].size, 8);
  /* an enumerator past int without a fixed type: not read, so refused */
  CHECK_EQ(ks[1].nparams, -1);
  CHECK_EQ(res.nglobals, 2);
  CHECK_STR(gl[0].name, "tile");
  CHECK_EQ(gl[0].ndim, 2);
  CHECK_EQ(gl[0].dims[0], 32);
  CHECK_EQ(gl[0].dims[1], 16);
  CHECK_EQ(gl[1].ndim, -1);        /* a scoped enumerator is no plain name */
  return 0;
}

/* CUDA's vector types, by pointer and by value: CUDA's sizes and alignments */
static int test_vector_types(void) {
  static const struct { const char *text; int type, vec; int64_t size, align; } cases[] = {
    { "float2 v", LC_FLOAT32, 2, 8, 8 },   { "float3 v", LC_FLOAT32, 3, 12, 4 },
    { "float4 v", LC_FLOAT32, 4, 16, 16 }, { "double2 v", LC_FLOAT64, 2, 16, 16 },
    { "double3 v", LC_FLOAT64, 3, 24, 8 }, { "double4 v", LC_FLOAT64, 4, 32, 16 },
    { "char4 v", LC_INT8, 4, 4, 4 },       { "uchar3 v", LC_UINT8, 3, 3, 1 },
    { "short2 v", LC_INT16, 2, 4, 4 },     { "ushort4 v", LC_UINT16, 4, 8, 8 },
    { "int1 v", LC_INT32, 1, 4, 4 },       { "uint4 v", LC_UINT32, 4, 16, 16 },
    { "long2 v", LC_INT64, 2, 16, 16 },    { "ulonglong2 v", LC_UINT64, 2, 16, 16 },
    { "longlong3 v", LC_INT64, 3, 24, 8 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lc_param p;
    if (param1(cases[i].text, &p)) return 1;
    if (check_param(__FILE__, __LINE__, &p, LC_PARAM_VALUE, cases[i].type, 0, 0, cases[i].size,
                    cases[i].align, p.spelling, "v"))
      return 1;
    CHECK_EQ(p.vec, cases[i].vec);
  }
  CHECK_P1("const float2 *__restrict__ p", POINTER, LC_FLOAT32, 1, 0, 8, 8,
           "const float2 *__restrict__", "p");
  CHECK_P1("uint4 q[]", POINTER, LC_UINT32, 0, 0, 8, 8, "uint4[]", "q");
  {
    lc_param p_;
    if (param1("uint4 *q", &p_)) return 1;
    CHECK_EQ(p_.vec, 4);
    CHECK_STR(p_.type_name, "");
    if (param1("float *q", &p_)) return 1;
    CHECK_EQ(p_.vec, 0);
  }
  /* not vector types: float5, float, int0 */
  CHECK_P1("float5 *p", POINTER, LC_PARAM_STRUCT, 0, 0, 8, 8, "float5 *", "p");
  CHECK_P1("int0 *p", POINTER, LC_PARAM_STRUCT, 0, 0, 8, 8, "int0 *", "p");
  CHECK_BAD("Array<float2, 1> a", "kernel 'foo' parameter 2: unsupported type 'Array<float2, 1>'");
  return 0;
}

/* default arguments: literals are kept, anything else as text */
static int test_defaults(void) {
  lc_param p;
  if (param1("int n = 4", &p)) return 1;
  CHECK(p.has_default && p.default_known && !p.default_float && !p.default_null);
  CHECK_EQ(p.default_int, 4);
  CHECK_STR(p.default_text, "4");
  CHECK_STR(p.spelling, "int");
  CHECK_STR(p.name, "n");
  if (param1("long n = -0x10", &p)) return 1;
  CHECK(p.default_known && p.default_int == -16);
  if (param1("float f = 2.5f", &p)) return 1;
  CHECK(p.default_known && p.default_float && p.default_num == 2.5);
  if (param1("double f = -1e-3", &p)) return 1;
  CHECK(p.default_known && p.default_float && p.default_num == -1e-3);
  if (param1("bool b = true", &p)) return 1;
  CHECK(p.default_known && p.default_int == 1);
  if (param1("const float *p = nullptr", &p)) return 1;
  CHECK(p.default_known && p.default_null);
  CHECK_EQ(p.kind, POINTER);
  if (param1("int *p = NULL", &p)) return 1;
  CHECK(p.default_known && p.default_null);
  if (param1("int *p = 0", &p)) return 1;
  CHECK(p.default_known && p.default_null);
  /* not literals a launch can pass */
  if (param1("int n = N * 2", &p)) return 1;
  CHECK(p.has_default && !p.default_known);
  CHECK_STR(p.default_text, "N * 2");
  if (param1("int *p = 1", &p)) return 1;
  CHECK(p.has_default && !p.default_known);
  if (param1("int n = NULL", &p)) return 1;
  CHECK(p.has_default && !p.default_known);
  if (param1("int n = f(1, 2)", &p)) return 1;
  CHECK(!p.default_known);
  CHECK_STR(p.default_text, "f(1, 2)");
  if (param1("float2 v = {}", &p)) return 1;
  CHECK(p.has_default && !p.default_known);
  if (param1("int n", &p)) return 1;
  CHECK(!p.has_default);
  /* a comma inside the default is part of it */
  CHECK(scan("__global__ void k(int *o, int a = g(1, 2), float b = 1) {}") == 0);
  CHECK_KERNEL(0, "k", 3);
  CHECK(!ks[0].params[0].has_default && ks[0].params[1].has_default &&
        ks[0].params[2].default_known);
  CHECK(scan("__global__ void k(int a = 1, int *b) {}") == 0);
  CHECK_EQ(ks[0].nparams, -1);
  CHECK_STR(ks[0].error, "kernel 'k' parameter 2: no default argument follows one");
  return 0;
}

static int test_param_errors(void) {
  CHECK_BAD("MyStruct s", "kernel 'foo' parameter 2: unsupported type 'MyStruct' (a struct is passed by pointer)");
  CHECK_BAD("MyStruct", "kernel 'foo' parameter 2: unsupported type 'MyStruct' (a struct is passed by pointer)");
  CHECK_BAD("MyStruct **s", "kernel 'foo' parameter 2: unsupported type 'MyStruct **' (only one level of pointer)");
  CHECK_BAD("Point int *p", "kernel 'foo' parameter 2: unsupported type 'Point int *'");
  CHECK_BAD("struct S s", "kernel 'foo' parameter 2: unsupported type 'struct S' (a struct is passed by pointer)");
  CHECK_BAD("std::vector<int> v", "kernel 'foo' parameter 2: unsupported type 'std::vector<int>'");
  CHECK_BAD("float **p",
            "kernel 'foo' parameter 2: unsupported type 'float **' (only one level of pointer)");
  CHECK_BAD("float *p[]",
            "kernel 'foo' parameter 2: unsupported type 'float *[]' (only one level of pointer)");
  CHECK_BAD("float &r",
            "kernel 'foo' parameter 2: unsupported type 'float &' (references are not supported)");
  CHECK_BAD("const Array<float, 2> &a",
            "kernel 'foo' parameter 2: unsupported type 'const Array<float, 2> &' "
            "(references are not supported)");
  CHECK_BAD("float &&r",
            "kernel 'foo' parameter 2: unsupported type 'float &&' (references are not supported)");
  CHECK_BAD("Array<float, 2> *a",
            "kernel 'foo' parameter 2: unsupported type 'Array<float, 2> *' "
            "(pointers to Array are not supported)");
  CHECK_BAD("void (*f)(int)", "kernel 'foo' parameter 2: unsupported type 'void(*f)(int)'");
  CHECK_BAD("Array<float, 0> a",
            "kernel 'foo' parameter 2: unsupported type 'Array<float, 0>' (the rank of an Array is 1 to 32)");
  CHECK_BAD("Array<float, 33> a",
            "kernel 'foo' parameter 2: unsupported type 'Array<float, 33>' (the rank of an Array is 1 to 32)");
  CHECK_BAD("Array<float, N> a", "kernel 'foo' parameter 2: unsupported type 'Array<float, N>'");
  CHECK_BAD("Array<MyType, 2> a", "kernel 'foo' parameter 2: unsupported type 'Array<MyType, 2>'");
  CHECK_BAD("Array<float *, 2> a", "kernel 'foo' parameter 2: unsupported type 'Array<float *, 2>'");
  CHECK_BAD("Array<float> a", "kernel 'foo' parameter 2: unsupported type 'Array<float>'");
  CHECK_BAD("void v", "kernel 'foo' parameter 2: a parameter cannot be void");
  CHECK_BAD("void", "kernel 'foo' parameter 2: a parameter cannot be void");
  CHECK_BAD("...", "kernel 'foo' parameter 2: variadic parameters are not supported");
  CHECK_BAD("long double d", "kernel 'foo' parameter 2: unsupported type 'long double'");
  CHECK_BAD("unsigned float f", "kernel 'foo' parameter 2: unsupported type 'unsigned float'");
  CHECK_BAD("signed unsigned x", "kernel 'foo' parameter 2: unsupported type 'signed unsigned'");
  CHECK_BAD("long long long x", "kernel 'foo' parameter 2: unsupported type 'long long long'");
  CHECK_BAD("short char x", "kernel 'foo' parameter 2: unsupported type 'short char'");
  CHECK_BAD("unsigned half x", "kernel 'foo' parameter 2: unsupported type 'unsigned half x'");
  CHECK_BAD("int float", "kernel 'foo' parameter 2: unsupported type 'int float'");
  CHECK_BAD("float x y", "kernel 'foo' parameter 2: unsupported type 'float x y'");
  CHECK_BAD("float x[][4]",
            "kernel 'foo' parameter 2: unsupported type 'float[][4]' (only one level of pointer)");
  CHECK_BAD("", "kernel 'foo' parameter 2: missing");
  CHECK_BAD("std::MyStruct s", "kernel 'foo' parameter 2: unsupported type 'std::MyStruct'");
  CHECK_BAD("float *"
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ __restrict__ __restrict__ p",
            "kernel 'foo' parameter 2: unsupported type 'float *__restrict__ __restrict__ "
            "__restrict__ __restrict__ __restrict__ __restrict__ ...'");
  /* the name of a parameter fits in 63 bytes */
  CHECK_BAD("int a123456789a123456789a123456789a123456789a123456789a123456789abcd",
            "kernel 'foo' parameter 2: the name is longer than 63 bytes");
  /* the other kernels are still read */
  CHECK_OK(scan("__global__ void bad(Foo f) {}\n__global__ void good(float *x) {}"));
  CHECK_EQ(res.nkernels, 2);
  CHECK_EQ(ks[0].nparams, -1);
  CHECK_KERNEL(1, "good", 1);
  return 0;
}

static int test_many_params(void) {
  static char src[4096];
  size_t k = (size_t)snprintf(src, sizeof src, "__global__ void wide(");
  for (int i = 0; i < 64; i++)
    k += (size_t)snprintf(src + k, sizeof src - k, "%sint a%d", i ? ", " : "", i);
  snprintf(src + k, sizeof src - k, ") {}");
  CHECK_OK(scan(src));
  CHECK_KERNEL(0, "wide", 64);
  CHECK_PARAM(ks[0].params[63], SCALAR, LC_INT32, 0, 0, 4, 4, "int", "a63");
  snprintf(src + k, sizeof src - k, ", int last) {}");
  CHECK_OK(scan(src));
  CHECK_EQ(ks[0].nparams, -1);
  CHECK_STR(ks[0].error, "kernel 'wide' has more than 64 parameters");
  return 0;
}

static int test_param_sizes(void) {
  CHECK_OK(scan("extern \"C\" __global__ void k(char c, double d, short s, Array<int, 3> a,"
                " bool b, const half *h, long long q, __half f) {}"));
  CHECK_KERNEL(0, "k", 8);
  const int64_t size[] = { 1, 8, 2, 56, 1, 8, 8, 2 };
  const int64_t align[] = { 1, 8, 2, 8, 1, 8, 8, 2 };
  for (int i = 0; i < 8; i++) {
    CHECK_EQ(ks[0].params[i].size, size[i]);
    CHECK_EQ(ks[0].params[i].align, align[i]);
  }
  CHECK_PARAM(ks[0].params[5], POINTER, LC_FLOAT16, 1, 0, 8, 8, "const half *", "h");
  return 0;
}

static int test_long_names(void) {
  static char src[1024];
  char name[200];
  memset(name, 'k', 127);
  name[127] = '\0';
  snprintf(src, sizeof src, "__global__ void %s(int n) {}", name);
  CHECK_OK(scan(src));
  CHECK_KERNEL(0, name, 1);
  memset(name, 'k', 128);
  name[128] = '\0';
  snprintf(src, sizeof src, "__global__ void %s(int n) {}", name);
  CHECK_ERR(scan(src), "line 1: a kernel name longer than 127 bytes");
  snprintf(src, sizeof src, "__constant__ float %s;", name);
  CHECK_ERR(scan(src), "line 1: a name longer than 127 bytes");
  snprintf(src, sizeof src, "__global__ void k() { __shared__ float %s[4]; }", name);
  CHECK_ERR(scan(src), "line 1: a name longer than 127 bytes");
  /* a shared declaration that does not fit its buffers */
  snprintf(src, sizeof src, "__global__ void k() { __shared__ float t[1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 +"
           " 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 +"
           " 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1]; }");
  CHECK_ERR(scan(src), "line 1: __shared__ declaration of 't' too long");
  return 0;
}

static int test_capacity(void) {
  static const char src[] =
    "__global__ void a() { __shared__ int x; }\n"
    "__global__ void b() { __shared__ int y, z; }\n"
    "__device__ int g1, g2, g3;\n";
  /* count only, then fill */
  memset(&res, 0, sizeof res);
  CHECK_OK(lc_scan(src, strlen(src), &res, err));
  CHECK_EQ(res.nkernels, 2);
  CHECK_EQ(res.nshared, 3);
  CHECK_EQ(res.nglobals, 3);
  lc_kernel_sig k1[1];
  memset(&res, 0, sizeof res);
  res.kernels = k1;
  res.max_kernels = 1;
  CHECK_ERR(lc_scan(src, strlen(src), &res, err), "more than 1 kernels in the source");
  memset(&res, 0, sizeof res);
  res.shared = sh;
  res.max_shared = 2;
  CHECK_ERR(lc_scan(src, strlen(src), &res, err), "more than 2 __shared__ declarations");
  memset(&res, 0, sizeof res);
  res.globals = gl;
  res.max_globals = 2;
  CHECK_ERR(lc_scan(src, strlen(src), &res, err), "more than 2 __constant__ / __device__ variables");
  /* lc_scan_kernels */
  int n = -1;
  CHECK_OK(lc_scan_kernels(src, strlen(src), ks, MAXK, &n, err));
  CHECK_EQ(n, 2);
  CHECK_STR(ks[1].name, "b");
  CHECK_OK(lc_scan_kernels(src, strlen(src), NULL, 0, &n, err));
  CHECK_EQ(n, 2);
  CHECK_ERR(lc_scan_kernels(src, strlen(src), ks, 1, &n, err), "more than 1 kernels");
  /* an empty source and a NULL one */
  CHECK_OK(lc_scan_kernels("", 0, ks, MAXK, &n, err));
  CHECK_EQ(n, 0);
  CHECK_OK(lc_scan_kernels(NULL, 0, ks, MAXK, &n, err));
  CHECK_EQ(n, 0);
  return 0;
}

/* ---- signatures ------------------------------------------------------------- */

static int test_signature(void) {
  lc_kernel_sig s;
  memset(&s, 0, sizeof s);
  CHECK_OK(sig("int, float, const float*, float*, Array<float, 2>", &s));
  CHECK_EQ(s.nparams, 5);
  CHECK_PARAM(s.params[0], SCALAR, LC_INT32, 0, 0, 4, 4, "int", "");
  CHECK_PARAM(s.params[1], SCALAR, LC_FLOAT32, 0, 0, 4, 4, "float", "");
  CHECK_PARAM(s.params[2], POINTER, LC_FLOAT32, 1, 0, 8, 8, "const float *", "");
  CHECK_PARAM(s.params[3], POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *", "");
  CHECK_PARAM(s.params[4], ARRAY, LC_FLOAT32, 0, 2, 40, 8, "Array<float, 2>", "");
  CHECK_OK(sig("int n, float *y", &s));
  CHECK_EQ(s.nparams, 2);
  CHECK_PARAM(s.params[0], SCALAR, LC_INT32, 0, 0, 4, 4, "int", "n");
  CHECK_PARAM(s.params[1], POINTER, LC_FLOAT32, 0, 0, 8, 8, "float *", "y");
  CHECK_OK(sig("  unsigned long long\tcount ,\n double  ", &s));
  CHECK_EQ(s.nparams, 2);
  CHECK_PARAM(s.params[0], SCALAR, LC_UINT64, 0, 0, 8, 8, "unsigned long long", "count");
  CHECK_PARAM(s.params[1], SCALAR, LC_FLOAT64, 0, 0, 8, 8, "double", "");
  CHECK_OK(sig("", &s));
  CHECK_EQ(s.nparams, 0);
  CHECK_OK(sig("  ", &s));
  CHECK_EQ(s.nparams, 0);
  CHECK_OK(sig("void", &s));
  CHECK_EQ(s.nparams, 0);
  CHECK_OK(sig_n("int, float", 3, &s));        /* only len bytes are read */
  CHECK_EQ(s.nparams, 1);
  CHECK_OK(lc_parse_signature(NULL, 0, &s, err));
  CHECK_EQ(s.nparams, 0);
  return 0;
}

static int test_signature_errors(void) {
  lc_kernel_sig s;
  memset(&s, 0, sizeof s);
  CHECK_ERR(sig("int, MyStruct", &s), "signature parameter 2: unsupported type 'MyStruct' (a struct is passed by pointer)");
  CHECK_ERR(sig("int,", &s), "signature parameter 2: missing");
  CHECK_ERR(sig(",int", &s), "signature parameter 1: missing");
  CHECK_ERR(sig("float**", &s), "signature parameter 1: unsupported type 'float **' (only one level");
  CHECK_ERR(sig("int n = 3, float x", &s), "signature parameter 2: no default argument follows one");
  CHECK_ERR(sig("void foo(int)", &s), "signature parameter 1: unsupported type");
  /* messages name the kernel when the caller set it; a failure changes nothing */
  strcpy(s.name, "foo");
  s.nparams = 1;
  s.params[0].kind = POINTER;
  strcpy(s.error, "kernel 'foo' parameter 1: unsupported type 'Foo'");
  CHECK_ERR(sig("int, float, Foo", &s), "kernel 'foo' parameter 3: unsupported type 'Foo'");
  CHECK_EQ(s.nparams, 1);
  CHECK_EQ(s.params[0].kind, POINTER);
  CHECK_STR(s.error, "kernel 'foo' parameter 1: unsupported type 'Foo'");
  /* a good one replaces the scanned parameters and clears the error */
  CHECK_OK(sig("Array<double, 2> a", &s));
  CHECK_EQ(s.nparams, 1);
  CHECK_STR(s.error, "");
  CHECK_STR(s.name, "foo");
  CHECK_PARAM(s.params[0], ARRAY, LC_FLOAT64, 0, 2, 40, 8, "Array<double, 2>", "a");
  return 0;
}

static int test_signature_override(void) {
  /* the scanner's kernel with an unknown type (declared, not defined), overridden */
  CHECK_OK(scan("struct P;\nextern \"C\" __global__ void k(P p, float *out) {}"));
  CHECK_EQ(res.nkernels, 1);
  CHECK_EQ(ks[0].nparams, -1);
  CHECK_STR(ks[0].error, "kernel 'k' parameter 1: unsupported type 'P' (a struct is passed by pointer)");
  CHECK_OK(sig("float, float, float *", &ks[0]));
  CHECK_EQ(ks[0].nparams, 3);
  CHECK_STR(ks[0].error, "");
  CHECK(ks[0].extern_c);
  CHECK_EQ(ks[0].line, 2);
  return 0;
}

/* ---- shared memory ---------------------------------------------------------- */

static int test_extern_shared(void) {
  CHECK_OK(scan("extern __shared__ float file_dyn[];\n"
                "extern \"C\" __global__ void k(int n) {\n"
                "  extern __shared__ __align__(16) unsigned char smem[];\n"
                "  extern __shared__ volatile int flags[ ] ;\n"
                "  extern __shared__ alignas(8) double d[], e[];\n"
                "  __shared__ extern float late[];\n"
                "}\n"
                "__device__ void helper() { extern __shared__ short h[]; }\n"));
  CHECK_EQ(res.nshared, 7);
  for (int i = 0; i < 7; i++) CHECK(sh[i].is_extern);
  CHECK_STR(sh[0].name, "file_dyn");
  CHECK_STR(sh[0].type, "float");
  CHECK(!sh[0].in_function);
  CHECK_EQ(sh[0].kernel, -1);
  CHECK_SPAN(sh[0].begin, sh[0].end, "extern __shared__ float file_dyn[];");
  CHECK_SPAN(sh[0].decl_begin, sh[0].decl_end, "file_dyn[]");
  CHECK_STR(sh[0].dims, "[]");
  CHECK_STR(sh[0].text, "float file_dyn[]");
  CHECK_EQ(sh[0].line, 1);
  CHECK_EQ(sh[0].align, 0);

  CHECK_STR(sh[1].name, "smem");
  CHECK_STR(sh[1].type, "unsigned char");
  CHECK_EQ(sh[1].align, 16);
  CHECK(sh[1].in_function);
  CHECK_EQ(sh[1].kernel, 0);
  CHECK_SPAN(sh[1].begin, sh[1].end, "extern __shared__ __align__(16) unsigned char smem[];");
  CHECK_EQ(sh[1].line, 3);

  CHECK_STR(sh[2].name, "flags");
  CHECK_STR(sh[2].type, "volatile int");
  CHECK_STR(sh[2].declarator, "flags[]");
  CHECK_SPAN(sh[2].begin, sh[2].end, "extern __shared__ volatile int flags[ ] ;");

  CHECK_STR(sh[3].name, "d");
  CHECK_STR(sh[4].name, "e");
  CHECK_EQ(sh[3].align, 8);
  CHECK_EQ(sh[3].begin, sh[4].begin);
  CHECK_EQ(sh[3].end, sh[4].end);
  CHECK_SPAN(sh[4].decl_begin, sh[4].decl_end, "e[]");
  CHECK_STR(sh[4].type, "double");

  CHECK_STR(sh[5].name, "late");
  CHECK_SPAN(sh[5].begin, sh[5].end, "__shared__ extern float late[];");

  CHECK_STR(sh[6].name, "h");
  CHECK(sh[6].in_function);
  CHECK_EQ(sh[6].kernel, -1);
  return 0;
}

static int test_static_shared(void) {
  CHECK_OK(scan("__shared__ int file_counter;\n"
                "extern \"C\" __global__ void a(float *x) {\n"
                "  __shared__ float tile[16][16];\n"
                "  for (int i = 0; i < 2; i++) {\n"
                "    static __shared__ __align__(8) double acc[TILE + 2 * R], one;\n"
                "  }\n"
                "}\n"
                "extern \"C\" __global__ void b() {\n"
                "  volatile __shared__ int flag;\n"
                "  __shared__ Pair pairs[4];\n"
                "  __shared__ float *ptrs[2];\n"
                "  int y = 0; __shared__ unsigned short u[0x10];\n"
                "}\n"
                "__device__ void helper() { __shared__ int hs[3]; }\n"));
  CHECK_EQ(res.nshared, 9);
  for (int i = 0; i < 9; i++) CHECK(!sh[i].is_extern);
  CHECK_STR(sh[0].text, "int file_counter");
  CHECK_STR(sh[0].dims, "");
  CHECK_EQ(sh[0].kernel, -1);
  CHECK(!sh[0].in_function);
  CHECK_STR(sh[1].text, "float tile[16][16]");
  CHECK_STR(sh[1].declarator, "tile[16][16]");
  CHECK_STR(sh[1].dims, "[16][16]");
  CHECK_EQ(sh[1].kernel, 0);
  CHECK(sh[1].in_function);
  CHECK_SPAN(sh[1].begin, sh[1].end, "__shared__ float tile[16][16];");
  CHECK_EQ(sh[1].line, 3);
  CHECK_STR(sh[2].text, "double acc[TILE + 2 *R]");
  CHECK_STR(sh[2].dims, "[TILE + 2 *R]");
  CHECK_EQ(sh[2].align, 8);
  CHECK_EQ(sh[2].kernel, 0);
  CHECK_STR(sh[3].text, "double one");
  CHECK_SPAN(sh[3].begin, sh[3].end,
             "static __shared__ __align__(8) double acc[TILE + 2 * R], one;");
  CHECK_STR(sh[4].text, "volatile int flag");
  CHECK_EQ(sh[4].kernel, 1);
  CHECK_STR(sh[5].text, "Pair pairs[4]");
  CHECK_STR(sh[5].type, "Pair");
  CHECK_STR(sh[6].text, "float *ptrs[2]");
  CHECK_STR(sh[6].declarator, "*ptrs[2]");
  CHECK_STR(sh[7].text, "unsigned short u[0x10]");
  CHECK_SPAN(sh[7].begin, sh[7].end, "__shared__ unsigned short u[0x10];");
  CHECK_STR(sh[8].name, "hs");
  CHECK_EQ(sh[8].kernel, -1);
  CHECK(sh[8].in_function);
  return 0;
}

static int test_shared_ranges(void) {
  /* statements in order, never overlapping: what a rewriter needs */
  CHECK_OK(scan("__global__ void k() {\n"
                "  __shared__ int a; __shared__ int b;\n"
                "  if (1) { __shared__ int c; } __shared__ int d\n"
                "  ; __shared__ __shared__ int e;\n"
                "  __shared__ int f = {1};\n"
                "  __shared__ int (*fp)(int);\n"
                "}\n"
                "struct S { __device__ void m() { __shared__ int g; } } __shared__ s;\n"));
  CHECK_EQ(res.nshared, 6);
  const char *names[] = { "a", "b", "c", "d", "e", "g" };
  for (int i = 0; i < 6; i++) {
    CHECK_STR(sh[i].name, names[i]);
    CHECK(sh[i].begin < sh[i].decl_begin && sh[i].decl_end < sh[i].end);
    CHECK_EQ(cur[sh[i].end - 1], ';');
    if (i) CHECK(sh[i - 1].end <= sh[i].begin);
  }
  CHECK_SPAN(sh[3].begin, sh[3].end, "__shared__ int d\n  ;");
  CHECK_EQ(sh[3].line, 3);
  CHECK(sh[5].in_function);
  return 0;
}

/* ---- globals ---------------------------------------------------------------- */

static int check_global(const char *file, int line, int i, const char *name, int type,
                        const char *type_text, int ndim, int64_t d0, int64_t d1, int64_t d2) {
  if (i >= res.nglobals) return failf(file, line, "no global %d (%d)", i, res.nglobals);
  const lc_global_decl *g = &gl[i];
  if (strcmp(g->name, name) != 0) return failf(file, line, "global %d is '%s', expected '%s'", i, g->name, name);
  if (g->type != type) return failf(file, line, "%s: type %d, expected %d", name, g->type, type);
  if (strcmp(g->type_text, type_text) != 0)
    return failf(file, line, "%s: type_text \"%s\", expected \"%s\"", name, g->type_text, type_text);
  if (g->ndim != ndim) return failf(file, line, "%s: ndim %d, expected %d", name, g->ndim, ndim);
  const int64_t d[3] = { d0, d1, d2 };
  for (int k = 0; k < 3; k++)
    if (g->dims[k] != d[k])
      return failf(file, line, "%s: dims[%d] %lld, expected %lld", name, k, (long long)g->dims[k],
                   (long long)d[k]);
  return 0;
}

#define CHECK_GLOBAL(...) do { if (check_global(__FILE__, __LINE__, __VA_ARGS__)) return 1; } while (0)

/* bounds that are macros or integer constants the source defines */
static int test_named_bounds(void) {
  CHECK_OK(scan("#define N 16\n"
                "#define M (4u)\n"
                "#define F(x) 8\n"
                "#define E N + 1\n"
                "constexpr int K = 3;\n"
                "static const unsigned long Q = 0x10;\n"
                "constexpr float R = 2;\n"
                "const int *P = 0;\n"
                "__constant__ float a[N];\n"
                "__device__ int b[M][K];\n"
                "__device__ int c[F];\n"
                "__device__ int d[E];\n"
                "__device__ int e[Q];\n"
                "__device__ int f[R];\n"
                "#undef N\n"
                "__device__ int g[N];\n"
                "#if 0\n#define H 5\n#endif\n"
                "__device__ int h[H];\n"
                "__global__ void k(int *p) { /* #define in a body: \n */ }\n"
                "#define N 2\n"
                "__device__ int i[N][N];\n"));
  CHECK_EQ(res.nglobals, 9);
  CHECK_STR(gl[0].name, "a");
  CHECK_EQ(gl[0].ndim, 1);
  CHECK_EQ(gl[0].dims[0], 16);
  CHECK_EQ(gl[1].ndim, 2);
  CHECK_EQ(gl[1].dims[0], 4);
  CHECK_EQ(gl[1].dims[1], 3);
  CHECK_EQ(gl[2].ndim, -1);      /* a function-like macro */
  CHECK_EQ(gl[3].ndim, 1);       /* a bound made of an unparenthesized macro alone */
  CHECK_EQ(gl[3].dims[0], 17);
  CHECK_EQ(gl[4].ndim, 1);
  CHECK_EQ(gl[4].dims[0], 16);
  CHECK_EQ(gl[5].ndim, -1);      /* a float constant */
  CHECK_EQ(gl[6].ndim, -1);      /* after #undef */
  CHECK_EQ(gl[7].ndim, -1);      /* defined in a dead branch */
  CHECK_EQ(gl[8].ndim, 2);
  CHECK_EQ(gl[8].dims[0], 2);
  CHECK_EQ(gl[8].dims[1], 2);
  return 0;
}

/* bounds that are integer constant expressions */
static int test_bound_expressions(void) {
  CHECK_OK(scan("#define R 3\n"
                "#define W (2 * R + 1)\n"
                "#define BARE R + 1\n"
                "#define ALIAS BARE\n"
                "#define SHIFTED (1 << R) // a comment\n"
                "#define LONG (R + \\\n  1)\n"
                "constexpr int K = (W - 1) / 2 % 2;\n"
                "constexpr unsigned NEG = -1;\n"
                "__device__ int a[W];\n"
                "__device__ int b[2 * R + 1][-(-R) + ~0 + 1];\n"
                "__device__ int c[BARE];\n"
                "__device__ int d[BARE * 2];\n"
                "__device__ int e[ALIAS * 2];\n"
                "__device__ int f[SHIFTED >> 1][LONG];\n"
                "__device__ int g[K];\n"
                "__device__ int h[NEG];\n"
                "__device__ int i[W / 0];\n"
                "__device__ int j[sizeof(int)];\n"
                "__device__ int k[R - 3];\n"
                "__device__ int m[1 << 50];\n"
                "__device__ int n[R | 4 ^ 1 & 7];\n"
                "struct S { float w[W]; int t[R * (R + 1)]; };\n"
                "__global__ void z(S s) {}\n"));
  CHECK_EQ(res.nglobals, 13);
  CHECK_GLOBAL(0, "a", LC_INT32, "int", 1, 7, 0, 0);
  CHECK_GLOBAL(1, "b", LC_INT32, "int", 2, 7, 3, 0);
  CHECK_GLOBAL(2, "c", LC_INT32, "int", 1, 4, 0, 0);
  CHECK_EQ(gl[3].ndim, -1);      /* R + 1 * 2 to the preprocessor */
  CHECK_EQ(gl[4].ndim, -1);      /* the same through an alias */
  CHECK_GLOBAL(5, "f", LC_INT32, "int", 2, 4, 4, 0);
  CHECK_GLOBAL(6, "g", LC_INT32, "int", 1, 1, 0, 0);
  CHECK_EQ(gl[7].ndim, -1);      /* an unsigned constant with a negative value */
  CHECK_EQ(gl[8].ndim, -1);      /* division by zero */
  CHECK_EQ(gl[9].ndim, -1);      /* sizeof */
  CHECK_EQ(gl[10].ndim, -1);     /* a bound of 0 */
  CHECK_EQ(gl[11].ndim, -1);     /* past 2^40 */
  CHECK_GLOBAL(12, "n", LC_INT32, "int", 1, 7, 0, 0);   /* 3 | (4 ^ (1 & 7)) */
  CHECK_EQ(res.nkernels, 1);
  CHECK_EQ(ks[0].params[0].size, 4 * 7 + 4 * 12);
  return 0;
}

static int test_globals(void) {
  CHECK_OK(scan("__constant__ float coef[4] = {1, 2, 3, 4};\n"
                "__device__ int counter;\n"
                "__device__ __constant__ double m[2][3][4];\n"
                "static __constant__ const unsigned char bytes[0x10];\n"
                "__device__ float a = 1.5f, b{2}, c[2] = {f(1, 2), 3};\n"
                "__device__ int four[1][2][3][4];\n"
                "__constant__ float sized[N];\n"
                "__constant__ float unsized[] = {1, 2};\n"
                "__device__ float *ptr;\n"
                "__device__ MyStruct st;\n"
                "__device__ float2 v2[3];\n"
                "__managed__ std::uint32_t managed_v;\n"
                "extern __device__ int ext;\n"
                "namespace ns { __device__ long long nsv; }\n"
                "__device__ float func(float x) { return x; }\n"
                "__device__ float proto(float x);\n"
                "__device__ int (*fptr)(int);\n"
                "template <typename T> __device__ T vt;\n"));
  CHECK_EQ(res.nglobals, 16);
  CHECK_GLOBAL(0, "coef", LC_FLOAT32, "float", 1, 4, 0, 0);
  CHECK(gl[0].is_constant);
  CHECK_EQ(gl[0].line, 1);
  CHECK_SPAN(gl[0].begin, gl[0].end, "__constant__ float coef[4] = {1, 2, 3, 4};");
  CHECK_GLOBAL(1, "counter", LC_INT32, "int", 0, 0, 0, 0);
  CHECK(!gl[1].is_constant);
  CHECK_GLOBAL(2, "m", LC_FLOAT64, "double", 3, 2, 3, 4);
  CHECK(gl[2].is_constant);
  CHECK_GLOBAL(3, "bytes", LC_UINT8, "const unsigned char", 1, 16, 0, 0);
  CHECK(gl[3].is_static);
  CHECK_GLOBAL(4, "a", LC_FLOAT32, "float", 0, 0, 0, 0);
  CHECK_GLOBAL(5, "b", LC_FLOAT32, "float", 0, 0, 0, 0);
  CHECK_GLOBAL(6, "c", LC_FLOAT32, "float", 1, 2, 0, 0);
  CHECK_EQ(gl[6].line, 5);
  CHECK_GLOBAL(7, "four", LC_INT32, "int", -1, 0, 0, 0);
  CHECK_GLOBAL(8, "sized", LC_FLOAT32, "float", -1, 0, 0, 0);
  CHECK_GLOBAL(9, "unsized", LC_FLOAT32, "float", -1, 0, 0, 0);
  CHECK_GLOBAL(10, "ptr", -1, "float *", 0, 0, 0, 0);
  CHECK_GLOBAL(11, "st", -1, "MyStruct", 0, 0, 0, 0);
  CHECK_GLOBAL(12, "v2", -1, "float2", 1, 3, 0, 0);
  CHECK_GLOBAL(13, "managed_v", LC_UINT32, "std::uint32_t", 0, 0, 0, 0);
  CHECK(gl[13].is_managed);
  CHECK_GLOBAL(14, "ext", LC_INT32, "int", 0, 0, 0, 0);
  CHECK(gl[14].is_extern);
  CHECK(!gl[13].is_extern);
  CHECK_GLOBAL(15, "nsv", LC_INT64, "long long", 0, 0, 0, 0);
  CHECK(gl[15].in_namespace);
  CHECK(!gl[14].in_namespace);
  CHECK_EQ(gl[15].line, 14);
  return 0;
}

static int test_globals_in_context(void) {
  /* only at namespace scope, and not inside a kernel's body */
  CHECK_OK(scan("extern \"C\" {\n"
                "__constant__ int in_c;\n"
                "__global__ void k() { __device__ int not_global; }\n"
                "}\n"
                "struct S { __device__ int member; };\n"
                "__constant__ struct { int x; } anon;\n"
                "#if 0\n__constant__ int dead;\n#endif\n"
                "__constant__ /* c */ int after // x\n = 3;\n"
                "auto lambda = [] __device__ (int v) { return v; };\n"));
  CHECK_EQ(res.nglobals, 2);
  CHECK_GLOBAL(0, "in_c", LC_INT32, "int", 0, 0, 0, 0);
  CHECK_GLOBAL(1, "after", LC_INT32, "int", 0, 0, 0, 0);
  CHECK_EQ(gl[1].line, 10);
  return 0;
}

/* ---- robustness ------------------------------------------------------------- */

/* What every successful scan must give, whatever the input. */
static int check_result(const char *src, size_t n, const lc_scan_result *r) {
  for (int i = 0; i < r->nkernels && i < r->max_kernels; i++) {
    const lc_kernel_sig *k = &r->kernels[i];
    if (!memchr(k->name, '\0', sizeof k->name) || !memchr(k->error, '\0', sizeof k->error))
      return failf(__FILE__, __LINE__, "kernel %d: unterminated text", i);
    if (k->body_begin >= k->body_end || k->body_end >= n || src[k->body_begin] != '{' ||
        src[k->body_end] != '}')
      return failf(__FILE__, __LINE__, "kernel %d: body [%zu, %zu] of %zu", i, k->body_begin,
                   k->body_end, n);
    if (i && k->body_begin <= r->kernels[i - 1].body_end)
      return failf(__FILE__, __LINE__, "kernel %d: bodies overlap", i);
    if (k->nparams < -1 || k->nparams > LC_MAXPARAMS)
      return failf(__FILE__, __LINE__, "kernel %d: nparams %d", i, k->nparams);
    if ((k->nparams == -1) != (k->error[0] != '\0'))
      return failf(__FILE__, __LINE__, "kernel %d: nparams %d with error \"%s\"", i, k->nparams, k->error);
    for (int j = 0; j < k->nparams; j++) {
      const lc_param *p = &k->params[j];
      if (!memchr(p->name, '\0', sizeof p->name) || !memchr(p->spelling, '\0', sizeof p->spelling))
        return failf(__FILE__, __LINE__, "kernel %d parameter %d: unterminated text", i, j);
      if ((p->type < -1 && p->type != LC_PARAM_STRUCT) || p->type >= LC_NTYPES ||
          (p->type < 0 && p->kind != LC_PARAM_POINTER) ||
          !memchr(p->type_name, '\0', sizeof p->type_name) ||
          (p->type == LC_PARAM_STRUCT) != (p->type_name[0] != '\0'))
        return failf(__FILE__, __LINE__, "kernel %d parameter %d: type %d", i, j, p->type);
      if (p->size < 1 || p->align < 1 || p->size % p->align)
        return failf(__FILE__, __LINE__, "kernel %d parameter %d: size %lld", i, j, (long long)p->size);
    }
  }
  for (int i = 0; i < r->nshared && i < r->max_shared; i++) {
    const lc_shared_decl *d = &r->shared[i];
    if (!(d->begin <= d->decl_begin && d->decl_begin <= d->decl_end && d->decl_end < d->end &&
          d->end <= n && src[d->end - 1] == ';'))
      return failf(__FILE__, __LINE__, "shared %d: ranges %zu %zu %zu %zu of %zu", i, d->begin,
                   d->decl_begin, d->decl_end, d->end, n);
    if (i && r->shared[i - 1].begin != d->begin && r->shared[i - 1].end > d->begin)
      return failf(__FILE__, __LINE__, "shared %d: statements overlap", i);
    if (d->kernel < -1 || d->kernel >= r->nkernels)
      return failf(__FILE__, __LINE__, "shared %d: kernel %d", i, d->kernel);
    if (!memchr(d->name, '\0', sizeof d->name) || !memchr(d->type, '\0', sizeof d->type) ||
        !memchr(d->dims, '\0', sizeof d->dims) || !memchr(d->text, '\0', sizeof d->text) ||
        !memchr(d->declarator, '\0', sizeof d->declarator) || d->name[0] == '\0')
      return failf(__FILE__, __LINE__, "shared %d: bad text", i);
  }
  for (int i = 0; i < r->nglobals && i < r->max_globals; i++) {
    const lc_global_decl *g = &r->globals[i];
    if (!memchr(g->name, '\0', sizeof g->name) || !memchr(g->type_text, '\0', sizeof g->type_text) ||
        g->name[0] == '\0')
      return failf(__FILE__, __LINE__, "global %d: bad text", i);
    if (g->ndim < -1 || g->ndim > 3 || g->type < -1 || g->type >= LC_NTYPES ||
        g->begin >= g->end || g->end > n || src[g->end - 1] != ';')
      return failf(__FILE__, __LINE__, "global %d: bad fields", i);
  }
  return 0;
}

/* Scan an exact-size copy of src[0 .. n): count, then fill arrays of exactly
** the counted sizes (so a write past them is caught too), check the result;
** then the same bytes as a signature. */
static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) abort();
  return p;
}

static int robust_scan(const char *src, size_t n) {
  char *copy = xmalloc(n);
  memcpy(copy, src, n);
  lc_scan_result cnt, r;
  memset(&cnt, 0, sizeof cnt);
  int bad = 0, rc = lc_scan(copy, n, &cnt, err);
  if (rc != 0 && (rc != -1 || err[0] == '\0' || !memchr(err, '\0', sizeof err)))
    bad = failf(__FILE__, __LINE__, "lc_scan returned %d: %s", rc, err);
  memset(&r, 0, sizeof r);
  r.max_kernels = rc == 0 ? cnt.nkernels : MAXK;
  r.max_shared = rc == 0 ? cnt.nshared : MAXS;
  r.max_globals = rc == 0 ? cnt.nglobals : MAXG;
  r.kernels = xmalloc(sizeof *r.kernels * (size_t)r.max_kernels);
  r.shared = xmalloc(sizeof *r.shared * (size_t)r.max_shared);
  r.globals = xmalloc(sizeof *r.globals * (size_t)r.max_globals);
  int rc2 = lc_scan(copy, n, &r, err);
  if (!bad && rc2 != rc)
    bad = failf(__FILE__, __LINE__, "counting returned %d, filling %d: %s", rc, rc2, err);
  if (!bad && rc == 0 && (cnt.nkernels != r.nkernels || cnt.nshared != r.nshared ||
                          cnt.nglobals != r.nglobals))
    bad = failf(__FILE__, __LINE__, "counts differ");
  if (!bad && rc == 0) bad = check_result(copy, n, &r);
  free(r.kernels);
  free(r.shared);
  free(r.globals);
  if (!bad) {
    lc_kernel_sig *s = xmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    rc = lc_parse_signature(copy, n, s, err);
    if (rc == 0 && (s->nparams < 0 || s->nparams > LC_MAXPARAMS))
      bad = failf(__FILE__, __LINE__, "signature nparams %d", s->nparams);
    if (rc != 0 && (rc != -1 || err[0] == '\0'))
      bad = failf(__FILE__, __LINE__, "lc_parse_signature returned %d: %s", rc, err);
    free(s);
  }
  free(copy);
  return bad;
}

static int test_every_prefix(void) {
  /* a source cut anywhere: never a bad read, always a well-formed result */
  for (size_t n = 0; n <= sizeof sample - 1; n++)
    if (robust_scan(sample, n)) return 1;
  return 0;
}

static int test_deep_nesting(void) {
  size_t n = 200000;
  char *src = malloc(n);
  if (!src) abort();
  /* a body far deeper than the scope stack: counted, still balanced */
  size_t k = (size_t)snprintf(src, n, "__global__ void k() "), k0 = k;
  size_t depth = 50000;
  memset(src + k, '{', depth);
  memset(src + k + depth, '}', depth);
  k += 2 * depth;
  k += (size_t)snprintf(src + k, n - k, "\n__global__ void j() {}");
  int rc = scan_n(src, k);
  if (rc == 0) {
    if (res.nkernels != 2 || ks[0].body_end != k0 + 2 * depth - 1) rc = 1;
  }
  /* namespaces nested deeper than the stack: an error, not a crash */
  k = 0;
  for (int i = 0; i < 300; i++) k += (size_t)snprintf(src + k, n - k, "namespace a{");
  int rc2 = scan_n(src, k);
  char err2[LC_ERRLEN];
  memcpy(err2, err, sizeof err2);
  /* many unclosed ( [ < at namespace scope */
  memset(src, '(', n);
  int rc3 = scan_n(src, n);
  memset(src, '<', n);
  memcpy(src, "template", 8);
  int rc4 = scan_n(src, n);
  free(src);
  CHECK_EQ(rc, 0);
  CHECK_EQ(rc2, -1);
  CHECK_STR(err2, "line 1: braces nested more than 256 deep");
  CHECK_EQ(rc3, 0);
  CHECK_EQ(rc4, 0);
  return 0;
}

static int test_linear_time(void) {
  /* inputs that would make a careless scanner quadratic: 1 MB each */
  size_t n = 1 << 20;
  char *src = malloc(n);
  if (!src) abort();
  static const char *const units[] = {
    "__shared__ ", "__global__ void k() { __shared__ ", "__device__ int ", "extern \"C\" ",
    "__global__ void f(", "a(", "x, ", "{ __shared__ int x, ", "R\"(", "#if 0\n", "/*",
  };
  for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
    size_t ul = strlen(units[u]);
    for (size_t i = 0; i < n; i++) src[i] = units[u][i % ul];
    if (robust_scan(src, n)) {
      free(src);
      return 1;
    }
  }
  free(src);
  return 0;
}

static int test_not_nul_terminated(void) {
  /* each ends in the middle of something; scan_n copies without a NUL */
  static const char *const srcs[] = {
    "__global__ void k(", "__global__ void k(int", "__global__ void k() {", "/", "/*", "//",
    "\"", "'", "\"\\", "R\"", "R\"abc(", "R\"abc()ab", "#", "#if", "#if 0", "#define X \\",
    "extern \"C", "__global__ void k() { __shared__ float", "__constant__ float c[",
    "__constant__ float c[4] = {", "Array<", "template <", "0x", "1'", "1e+", "\\", "u8",
    "__global__ void k(Array<float, 2", "__global__ void k() { extern __shared__ float s[]",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
    if (robust_scan(srcs[i], strlen(srcs[i]))) return 1;
  return 0;
}

/* ---- stress: random mutations -------------------------------------------- */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static const char *const dict[] = {
  "{", "}", "(", ")", "[", "]", "<", ">", ";", ",", "=", "*", "&", "::", ":", "\"", "'", "\\",
  "\\\n", "\n", "#", "#if 0\n", "#if 1\n", "#else\n", "#endif\n", "/*", "*/", "//", "R\"x(",
  ")x\"", "__global__", "__device__", "__constant__", "__shared__", "extern", "\"C\"",
  "extern \"C\" {", "template", "namespace n {", "Array<float, 2>", "void", "int", "float",
  "unsigned", "long", "const", "__align__(16)", "__launch_bounds__(1)", "operator", "struct",
  "0", "99999999999999999999", "__restrict__", "...", "\xEF\xBB\xBF", "\0", "\xff",
};

static const char *corpus[] = {
  sample,
  "extern \"C\" __global__ void k(int n, const float *x, Array<float, 2> a) {\n"
  "  __shared__ float t[4][4]; extern __shared__ char s[];\n}\n",
  "__constant__ float c[2][3] = {{1}, {2}};\n__device__ int a, b[4];\n",
  "template <typename T> __global__ void g(T *p) {}\n#if 0\n}\n#endif\n",
};

static int stress(long iters, uint64_t seed) {
  if (seed) rng = seed;
  size_t cap = 1 << 16;
  char *buf = malloc(cap);
  if (!buf) abort();
  long failures = 0;
  for (long it = 0; it < iters; it++) {
    const char *base = corpus[rnd() % (sizeof corpus / sizeof corpus[0])];
    size_t n = strlen(base);
    memcpy(buf, base, n);
    int muts = 1 + (int)(rnd() % 8);
    for (int m = 0; m < muts; m++) {
      size_t pos = n ? rnd() % (n + 1) : 0;
      switch (rnd() % 6) {
        case 0:                                   /* flip a byte */
          if (n) buf[rnd() % n] = (char)rnd();
          break;
        case 1: {                                 /* insert a token */
          const char *w = dict[rnd() % (sizeof dict / sizeof dict[0])];
          size_t wl = strlen(w) ? strlen(w) : 1;
          if (n + wl < cap) {
            memmove(buf + pos + wl, buf + pos, n - pos);
            memcpy(buf + pos, w, wl);
            n += wl;
          }
          break;
        }
        case 2: {                                 /* delete a range */
          size_t dl = rnd() % 16;
          if (pos + dl > n) dl = n - pos;
          memmove(buf + pos, buf + pos + dl, n - pos - dl);
          n -= dl;
          break;
        }
        case 3: {                                 /* duplicate a range */
          size_t dl = n - pos < 64 ? n - pos : 64;
          if (n + dl < cap) {
            memmove(buf + pos + dl, buf + pos, n - pos);
            n += dl;
          }
          break;
        }
        case 4:                                   /* cut */
          n = pos;
          break;
        default: {                                /* splice in another source */
          const char *o = corpus[rnd() % (sizeof corpus / sizeof corpus[0])];
          size_t ol = strlen(o), from = rnd() % (ol + 1), cl = rnd() % (ol - from + 1);
          if (n + cl < cap) {
            memmove(buf + pos + cl, buf + pos, n - pos);
            memcpy(buf + pos, o + from, cl);
            n += cl;
          }
        }
      }
    }
    if (robust_scan(buf, n)) {
      failures++;
      fprintf(stderr, "iteration %ld: %s\n", it, why);
      FILE *f = fopen("scan_stress_failure.cu", "wb");
      if (f) {
        fwrite(buf, 1, n, f);
        fclose(f);
      }
      break;
    }
  }
  free(buf);
  printf("%ld iterations, %ld failures\n", iters, failures);
  return failures ? 1 : 0;
}

static int test_stress_small(void) {
  /* a short run of the stress loop, so every test run has a little of it */
  uint64_t save = rng;
  rng = 12345;
  int bad = 0;
  for (int i = 0; i < 200 && !bad; i++) {
    const char *base = corpus[i % (sizeof corpus / sizeof corpus[0])];
    size_t n = strlen(base);
    char *b = malloc(n + 1);
    if (!b) abort();
    memcpy(b, base, n);
    for (int m = 0; m < 4 && n; m++) b[rnd() % n] = "{}()<>;\"'/*#\\\n"[rnd() % 14];
    bad = robust_scan(b, n);
    free(b);
  }
  rng = save;
  return bad;
}

/* ---- the table ------------------------------------------------------------------------------- */

/* Struct definitions: their C layout, and parameters that take one by value. */
static int test_structs(void) {
  CHECK_OK(scan(
    "#define N 3\n"
    "struct Particle { float3 pos; float mass; int id; };\n"
    "struct __align__(16) S { float a; double b; char c; };\n"
    "typedef struct alignas(8) { short h; unsigned char u[N]; } T;\n"
    "struct Inner { char tag; double w; __device__ double f() const { return w; } };\n"
    "typedef struct Outer { public: int n; Inner in[2]; float2 v; static int k; } Outer;\n"
    "struct P { float *data; int n; };\n"
    "union U { int i; float f; };\n"
    "typedef Particle Q;\n"
    "extern \"C\" __global__ void k(Particle p, S s, T t, Outer o, Q q, struct Inner *in) {}\n"
    "extern \"C\" __global__ void bad(P p) {}\n"
    "extern \"C\" __global__ void bad2(U u) {}\n"));
  CHECK_EQ(res.nstructs, 7);
  CHECK_STR(st[0].name, "Particle");
  CHECK_STR(st[0].error, "");
  CHECK_EQ(st[0].size, 20);
  CHECK_EQ(st[0].align, 4);
  CHECK_EQ(st[0].nmembers, 3);
  CHECK_STR(st[0].members[0].name, "pos");
  CHECK_EQ(st[0].members[0].type, LC_FLOAT32);
  CHECK_EQ(st[0].members[0].vec, 3);
  CHECK_EQ(st[0].members[1].offset, 12);
  CHECK_EQ(st[0].members[2].offset, 16);
  CHECK_EQ(st[0].members[2].type, LC_INT32);
  CHECK_EQ(st[1].size, 32);                         /* a 0, b 8, c 16; aligned to 16 */
  CHECK_EQ(st[1].align, 16);
  CHECK_EQ(st[1].members[1].offset, 8);
  CHECK_EQ(st[1].members[2].offset, 16);
  CHECK_STR(st[2].name, "T");
  CHECK_EQ(st[2].size, 8);
  CHECK_EQ(st[2].align, 8);
  CHECK_EQ(st[2].members[1].count, 3);              /* u[N], N a macro */
  CHECK_EQ(st[2].members[1].offset, 2);
  CHECK_EQ(st[3].size, 16);                          /* the member function takes no room */
  CHECK_EQ(st[3].nmembers, 2);
  CHECK_STR(st[4].name, "Outer");
  CHECK_EQ(st[4].nmembers, 3);                       /* not the static one */
  CHECK_EQ(st[4].members[1].sdef, 3);
  CHECK_EQ(st[4].members[1].type, LC_PARAM_STRUCT);
  CHECK_EQ(st[4].members[1].count, 2);
  CHECK_EQ(st[4].members[1].offset, 8);
  CHECK_EQ(st[4].members[2].offset, 40);
  CHECK_EQ(st[4].size, 48);
  CHECK_STR(st[5].error, "a pointer or reference member ('float *...') is not supported: pass "
            "the array as a parameter of its own");
  CHECK_STR(st[6].error, "unions are not supported");
  CHECK_KERNEL(0, "k", 6);
  const lc_param *p = ks[0].params;
  CHECK_EQ(p[0].kind, LC_PARAM_VALUE);
  CHECK_EQ(p[0].type, LC_PARAM_STRUCT);
  CHECK_STR(p[0].type_name, "Particle");
  CHECK_EQ(p[0].sdef, 0);
  CHECK_EQ(p[0].size, 20);
  CHECK_EQ(p[0].align, 4);
  CHECK_EQ(p[1].size, 32);
  CHECK_EQ(p[1].align, 16);
  CHECK_EQ(p[2].sdef, 2);
  CHECK_EQ(p[3].sdef, 4);
  CHECK_EQ(p[4].sdef, 0);                            /* typedef Particle Q */
  CHECK_EQ(p[5].kind, LC_PARAM_POINTER);
  CHECK_EQ(p[5].sdef, 3);
  CHECK_STR(ks[1].error, "kernel 'bad' parameter 1: unsupported type 'P' (struct P: a pointer "
            "or reference member ('float *...') is not supported: pass the array as a "
            "parameter of its own)");
  CHECK_STR(ks[2].error, "kernel 'bad2' parameter 1: unsupported type 'U' (struct U: unions "
            "are not supported)");
  /* counting only gives the same count */
  lc_scan_result cnt;
  memset(&cnt, 0, sizeof cnt);
  const char *src = "struct A { int x; }; typedef struct { A a; } B; struct { int y; } unnamed;";
  CHECK_OK(lc_scan(src, strlen(src), &cnt, err));
  CHECK_EQ(cnt.nstructs, 2);
  /* more structs than room */
  lc_struct_def one[1];
  memset(&cnt, 0, sizeof cnt);
  cnt.structs = one;
  cnt.max_structs = 1;
  CHECK_ERR(lc_scan(src, strlen(src), &cnt, err), "more than 1 structs in the source");
  /* other members it cannot read */
  CHECK_OK(scan("struct V { virtual void f(); int x; };\n"
                "struct B { int x : 3; };\n"
                "struct D : V { int y; };\n"
                "struct E { struct F { int z; } f; };\n"
                "struct G { int x; } __attribute__((packed));\n"
                "struct H { int __attribute__((aligned(8))); };\n"));
  CHECK_STR(st[0].error, "virtual functions are not supported");
  CHECK_STR(st[1].error, "member 'x': bit-fields are not supported");
  CHECK_STR(st[2].error, "base classes are not supported");
  CHECK_STR(st[3].error, "a type defined inside a struct is not supported: define it before");
  CHECK_STR(st[4].error, "an alignment attribute that is not a power-of-2 literal, or packed, "
            "is not supported");
  CHECK_STR(st[5].error, "a member of type 'int __attribute__((aligned(8)))' without a name");
  /* a signature override names the source's structs */
  lc_kernel_sig s;
  memset(&s, 0, sizeof s);
  CHECK_OK(scan("struct Inner { char tag; double w; };"));
  CHECK_OK(lc_parse_signature_structs("Inner v, struct Inner *p", 24, st, res.nstructs, &s, err));
  CHECK_EQ(s.nparams, 2);
  CHECK_EQ(s.params[0].kind, LC_PARAM_VALUE);
  CHECK_EQ(s.params[0].size, 16);
  CHECK_EQ(s.params[0].align, 8);
  CHECK_EQ(s.params[1].kind, LC_PARAM_POINTER);
  CHECK_ERR(sig("Inner v", &s), "signature parameter 1: unsupported type 'Inner' (a struct is "
            "passed by pointer)");
  return 0;
}

/* What the backends need to ask the compiler for a struct's layout
** (probe.h), and taking its answer. */
static int test_struct_probes(void) {
  const char *src =
    "struct Frame { float m[3][3]; short tag[2][2]; int n; };\n"
    "typedef struct Tag_ { int a; } Named;\n"
    "typedef Frame F2; using F3 = Frame;\n"
    "class C { int hidden; public: float x; };\n"
    "class D { public: int x; };\n"
    "namespace { struct Hidden { int h; }; }\n"
    "namespace ns { struct Shown { int s; }; }\n"
    "struct P { float *data; int n; };\n";
  CHECK_OK(scan(src));
  CHECK_EQ(res.nstructs, 7);
  /* where the probe goes: just past the ';' */
  CHECK_EQ((int)st[0].end, (int)(strstr(src, "};\ntypedef struct Tag_") - src) + 2);
  CHECK(st[0].tagged);
  CHECK(!st[1].tagged);                              /* Named, a typedef: no `struct` */
  CHECK_EQ(st[0].naliases, 2);
  CHECK_STR(st[0].aliases[0], "F2");
  CHECK_STR(st[0].aliases[1], "F3");
  CHECK_EQ(st[1].naliases, 1);
  CHECK_STR(st[1].aliases[0], "Tag_");
  CHECK_EQ(st[0].members[0].ndim, 2);
  CHECK_EQ(st[0].members[0].dims[0], 3);
  CHECK_EQ(st[0].members[0].dims[1], 3);
  CHECK_EQ(st[0].members[0].count, 9);
  CHECK_EQ(st[0].members[1].offset, 36);
  CHECK_EQ(st[0].members[2].offset, 44);
  CHECK_EQ(st[0].members[2].ndim, 0);
  CHECK(st[2].opaque);                               /* a class starts private */
  CHECK(!st[3].opaque);
  CHECK(st[4].internal);
  CHECK(!st[5].internal);
  /* the tables: every member of a struct read whole; size and alignment only
  ** of one with private members or members not read; none in an unnamed
  ** namespace */
  CHECK_EQ(lc_probe_kind(&st[0]), LC_PROBE_FULL);
  CHECK_EQ((int)lc_probe_count(&st[0]), 8);
  CHECK_EQ(lc_probe_kind(&st[2]), LC_PROBE_SIZE);
  CHECK_EQ((int)lc_probe_count(&st[6]), 2);
  CHECK_EQ(lc_probe_kind(&st[4]), LC_PROBE_NONE);
  CHECK_EQ((int)lc_probe_count(&st[4]), 0);
  lc_strbuf b = {0};
  lc_probe_initializer(&b, &st[1], false);
  CHECK_STR(b.p, "{sizeof(Named), alignof(Named), __builtin_offsetof(Named, a), "
            "sizeof(((Named *)0)->a)}");
  lc_sb_free(&b);
  lc_probe_initializer(&b, &st[5], true);
  CHECK_STR(b.p, "{sizeof(struct Shown), alignof(struct Shown), (unsigned long long)((const "
            "char *)&((struct Shown *)0)->s - (const char *)0), sizeof(((struct Shown *)0)->s)}");
  lc_sb_free(&b);
  /* the compiler's answer: taken when each member has the size read */
  const unsigned long long packed[] = {46, 2, 0, 36, 36, 8, 44, 4};
  lc_probe_apply(st, 0, packed, 8);
  CHECK_EQ(st[0].probed, LC_PROBE_FULL);
  CHECK_STR(st[0].conflict, "");
  CHECK_EQ(st[0].size, 46);
  CHECK_EQ(st[0].align, 2);
  CHECK_EQ(st[0].members[2].offset, 44);
  const unsigned long long wider[] = {16, 8, 0, 8};
  lc_probe_apply(st, 1, wider, 4);
  CHECK_EQ(st[1].probed, LC_PROBE_SIZE);
  CHECK_EQ(st[1].size, 16);
  CHECK_STR(st[1].conflict, "member 'a' takes 8 bytes in the compiled kernel, luacuda reads 4 "
            "(a macro or an #if it cannot see?)");
  lc_probe_apply(st, 6, NULL, 0);                    /* no table: nothing changes */
  CHECK_EQ(st[6].probed, LC_PROBE_NONE);
  const unsigned long long odd[] = {16, 3};          /* not an alignment */
  lc_probe_apply(st, 6, odd, 2);
  CHECK_EQ(st[6].probed, LC_PROBE_NONE);
  /* signatures= by any of a struct's names */
  lc_kernel_sig s;
  memset(&s, 0, sizeof s);
  CHECK_OK(scan(src));
  CHECK_OK(lc_parse_signature_structs("F3 a, const F2 *b, struct Tag_ c", 32, st, res.nstructs,
                                      &s, err));
  CHECK_EQ(s.params[0].sdef, 0);
  CHECK_EQ(s.params[0].size, 48);
  CHECK_EQ(s.params[1].sdef, 0);
  CHECK_EQ(s.params[2].sdef, 1);
  /* pointers to structs from elsewhere (a header): a table after the kernel */
  CHECK_OK(scan("struct Mine { int a; };\n"
                "extern \"C\" __global__ void k(Mine *m, int n, const Theirs *t) {}\n"
                "extern \"C\" __global__ void only_mine(Mine *m) {}\n"
                "template <class T> __global__ void tk(Theirs *t, T v) {}\n"));
  CHECK(lc_probe_has_pointees(&ks[0]));
  CHECK(!lc_probe_has_pointees(&ks[1]));
  CHECK(!lc_probe_has_pointees(&ks[2]));             /* a template: no */
  lc_probe_pointees(&b, &ks[0]);
  CHECK_STR(b.p, "{0, 0, 0, 0, __lc_pointee<Theirs>::size, __lc_pointee<Theirs>::align}");
  lc_sb_free(&b);
  CHECK_OK(lc_parse_signature("const Theirs *t", 15, &ks[0], err));
  CHECK(!lc_probe_has_pointees(&ks[0]));             /* an override's types: not asked */
  /* an array member of more than LC_MEMBER_MAXDIM dimensions */
  CHECK_OK(scan("struct Deep { int a[1][2][1][2][1]; };"));
  CHECK_STR(st[0].error, "an array member of more than 4 dimensions");
  return 0;
}

/* Whether the array declared by the statement ending at the first ';'
** after "decl" in src is used by subscripts only (strict memory checking
** checks it then: src/backend/sim/compile.c). */
static bool subscripted(const char *src, bool block) {
  const char *decl = strstr(src, "decl");
  size_t from = (size_t)(strchr(decl, ';') + 1 - src);
  return lc_scan_only_subscripted(src, strlen(src), "t", from, block);
}

static int test_only_subscripted(void) {
  CHECK(subscripted("{ decl float t[4]; t[0] = t[1] + t [2]; t[t[0]]++; }", true));
  /* comments and literals hold no use */
  CHECK(subscripted("{ decl float t[4]; t[0] = 1; /* t */ // t\n f(\"t\", 't', R\"(t)\"); }",
                    true));
  /* a pointer, a cast, sizeof, an attribute's brackets: other uses */
  CHECK(!subscripted("{ decl float t[4]; float *p = t; }", true));
  CHECK(!subscripted("{ decl char t[4]; f(reinterpret_cast<float *>(t)); }", true));
  CHECK(!subscripted("{ decl char t[4]; int n = sizeof t; }", true));
  CHECK(!subscripted("{ decl char t[4]; t[[maybe_unused]]; }", true));
  /* the declaration's own block only: another t after it is not this one */
  CHECK(subscripted("void f() { decl float t[4]; t[0] = 1; } void g(float *t) { h(t); }", true));
  CHECK(subscripted("void f() { decl float t[4]; { t[0] = 1; } } void g() { h(t); }", true));
  CHECK(!subscripted("void f() { decl float t[4]; { h(t); } }", true));
  /* at namespace scope, to the end */
  CHECK(!subscripted("decl float t[4]; void f() { t[0] = 1; } void g() { h(t); }", false));
  /* a macro's body, wherever it is defined, and a continued one */
  CHECK(!subscripted("#define P reinterpret_cast<float *>(t)\nvoid f() { decl char t[4]; P[0] = 1; }",
                     true));
  CHECK(!subscripted("#define P \\\n  (t + 1)\nvoid f() { decl char t[4]; t[0] = 1; }", true));
  CHECK(subscripted("#define AT(i) t[i]\nvoid f() { decl char t[4]; AT(0) = 1; }", true));
  /* a directive's braces do not end the scope */
  CHECK(!subscripted("void f() { decl char t[4];\n#define B }\n h(t); }", true));
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {
  T(sample), T(comments), T(strings_and_chars), T(preprocessor), T(line_numbers),
  T(extern_c_forms), T(attributes), T(templates), T(declarations_skipped), T(body_offsets),
  T(unterminated_body), T(zero_params), T(scalar_types), T(pointer_types), T(array_types),
  T(param_errors), T(typedefs), T(enums), T(vector_types), T(structs), T(struct_probes), T(defaults), T(many_params), T(param_sizes), T(long_names), T(capacity),
  T(signature), T(signature_errors), T(signature_override),
  T(extern_shared), T(static_shared), T(shared_ranges), T(only_subscripted),
  T(globals), T(globals_in_context), T(named_bounds), T(bound_expressions),
  T(every_prefix), T(deep_nesting), T(linear_time), T(not_nul_terminated), T(stress_small),
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  if ((argc == 3 || argc == 4) && strcmp(argv[1], "--stress") == 0)
    return stress(atol(argv[2]), argc == 4 ? strtoull(argv[3], NULL, 0) : 0);
  return unit_main("scan_test", tests, NTESTS, argc, argv);
}
