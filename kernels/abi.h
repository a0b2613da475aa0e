/* abi.h: the kernel argument ABI, written once for both sides of a launch:
** the C that checks launches and packs arguments (src/, the fake driver
** in spec/fake) includes it; the kernel code receives it as text, built into
** the module in front of the prelude, the library's kernels and the
** simulator's ABI (src/base/kernels.c, src/backend/sim/compile.c).
**
** So it must be valid C11, host C++ and CUDA C++ under NVRTC, which has
** no C library headers: it includes nothing and uses built-in types only
** (long long, not int64_t); C++ also gets lc_elem, the dtype rows as
** types. Its names start with LC_ / lc_, which user kernels see too.
** The checks at the end hold the layouts written here to what each
** compiler makes of them. */
#ifndef LUACUDA_ABI_H
#define LUACUDA_ABI_H

/* ---- sizes ------------------------------------------------------------ */

/* The dimensions of a view at most (NumPy's historical limit), and so the
** greatest N of an Array<T, N> parameter. */
#define LC_MAXDIM 32
/* The parameters of a kernel at most. */
#define LC_MAXPARAMS 64

/* ---- Array<T, N> --------------------------------------------------------
** What an array passed to an Array<T, N> parameter becomes: the address of
** its first element, its shape, then its strides in bytes (any sign). The
** prelude's template declares its fields with LC_ARRAY_FIELDS; the packer
** (src/binding/launch.c) writes them at the offsets below, and the scanner
** (src/base/scan.c) gives the parameter LC_ARRAY_SIZE(N) bytes at
** LC_ARRAY_ALIGN. A 64-bit device pointer, as on both backends. */
#define LC_ARRAY_FIELDS(T, N) \
  T *data;                    \
  long long shape[N];         \
  long long strides[N]
#define LC_ARRAY_ALIGN 8
#define LC_ARRAY_SHAPE_OFFSET 8
#define LC_ARRAY_STRIDES_OFFSET(n) (8 + 8 * (n))
#define LC_ARRAY_SIZE(n) (8 + 16 * (n))

/* The bytes one launch's packed arguments may take: room for every
** parameter an Array of the greatest rank (which needs no padding). */
#define LC_MAX_ARG_BYTES (LC_MAXPARAMS * LC_ARRAY_SIZE(LC_MAXDIM))

/* ---- launch limits ------------------------------------------------------
** CUDA's for every device luacuda supports: checked for every launch above
** the backends, kept by the simulator, and by the fake driver as a GPU's
** driver keeps them. */
#define LC_MAX_GRID_X 2147483647u
#define LC_MAX_GRID_Y 65535u
#define LC_MAX_GRID_Z 65535u
#define LC_MAX_BLOCK_X 1024u
#define LC_MAX_BLOCK_Y 1024u
#define LC_MAX_BLOCK_Z 64u
#define LC_MAX_BLOCK_THREADS 1024u
/* Shared memory of a block, static and dynamic together, that every device
** gives a kernel without asking (a launch over it opts the kernel in:
** cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)). */
#define LC_SHARED_DEFAULT (48u * 1024u)
/* The most dynamic shared memory any device gives a block once the kernel
** opts in: an H100's or H200's 227 KiB (their
** CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN). Checked for every
** launch above the backends; each device's own limit, less the kernel's
** static shared memory, is the CUDA backend's check. The simulator gives
** every launch this much. */
#define LC_MAX_SHARED (227u * 1024u)
#define LC_WARP_SIZE 32

/* ---- element types ------------------------------------------------------
** The builtin dtypes, one row each: the one list every typed list derives
** from, on the host (src/base/dtype.h's lc_typecode and lc_dtypes[], the
** host reductions' loads) and in the library's kernels (ufunc.cu's,
** reduce.cu's and gather.cu's loads and stores by type code). A new row is
** a new dtype everywhere; its kernel type, where the toolkit lacks one, is
** the prelude's (kernels/prelude.cuh) and the simulator's
** (kernels/sim_runtime.h). Only X-macro users expand it, so the C types
** named need only exist there.
** Columns: code, name, size (= alignment), kind ('b', 'i', 'u', 'f'),
** NumPy alias (NULL: none), the names a kernel spells it by other than
** C's own words (space-separated; the scanner reads them), the C type of
** a record member holding it (record.lua), how its bits are read (B bool,
** I signed, U unsigned, F C's float or double, H float16, Z bfloat16, N
** any other float format: by its significand and exponent bits; with the
** size, LC_BITS_ below names the C type typed loops load), the
** DLPack type code, the C++ type the device's array math
** (kernels/ufunc.cu) computes in for it (float16 and bfloat16 have no
** operations there: a cast to them goes through double), and for floats
** the significand bits (with the implicit one) and exponent bits: a float
** other than C's float and double is converted by these (round to nearest
** even), and printed to the digits they hold. dtype.c checks at compile
** time that each row is one its conversions handle. */
#define LC_DTYPE_LIST(X)                                                                                               \
  X(BOOL,     "bool",     1, 'b', "b1", NULL,                        "bool",     B, LC_DL_BOOL,   "bool",     0,   0) \
  X(INT8,     "int8",     1, 'i', "i1", "int8_t",                    "int8_t",   I, LC_DL_INT,    "int8_t",   0,   0) \
  X(INT16,    "int16",    2, 'i', "i2", "int16_t",                   "int16_t",  I, LC_DL_INT,    "int16_t",  0,   0) \
  X(INT32,    "int32",    4, 'i', "i4", "int32_t",                   "int32_t",  I, LC_DL_INT,    "int32_t",  0,   0) \
  X(INT64,    "int64",    8, 'i', "i8", "int64_t",                   "int64_t",  I, LC_DL_INT,    "int64_t",  0,   0) \
  X(UINT8,    "uint8",    1, 'u', "u1", "uint8_t",                   "uint8_t",  U, LC_DL_UINT,   "uint8_t",  0,   0) \
  X(UINT16,   "uint16",   2, 'u', "u2", "uint16_t",                  "uint16_t", U, LC_DL_UINT,   "uint16_t", 0,   0) \
  X(UINT32,   "uint32",   4, 'u', "u4", "uint32_t",                  "uint32_t", U, LC_DL_UINT,   "uint32_t", 0,   0) \
  X(UINT64,   "uint64",   8, 'u', "u8", "uint64_t",                  "uint64_t", U, LC_DL_UINT,   "uint64_t", 0,   0) \
  X(FLOAT16,  "float16",  2, 'f', "f2", "__half half",               "uint16_t", H, LC_DL_FLOAT,  "double",   11,  5) \
  X(BFLOAT16, "bfloat16", 2, 'f', NULL, "__nv_bfloat16 nv_bfloat16", "uint16_t", Z, LC_DL_BFLOAT, "double",   8,   8) \
  X(FLOAT32,  "float32",  4, 'f', "f4", NULL,                        "float",    F, LC_DL_FLOAT,  "float",    24,  8) \
  X(FLOAT64,  "float64",  8, 'f', "f8", NULL,                        "double",   F, LC_DL_FLOAT,  "double",   53, 11)

/* ---- the library's kernels' parameters ---------------------------------- */

/* lc_copy_strided(char *dst, const char *src, lc_strided_args a)
** (kernels/strided.cu): n elements of itemsize bytes in a view of this
** shape, each side at its own byte strides from dst and src. */
typedef struct lc_strided_args {
  long long n;
  int ndim;
  int itemsize;
  long long shape[LC_MAXDIM];
  long long dst_strides[LC_MAXDIM];
  long long src_strides[LC_MAXDIM];
} lc_strided_args;

/* lc_fill_strided(char *dst, lc_fill_args a) (kernels/strided.cu): n
** elements of itemsize bytes, each the value's first itemsize bytes, in a
** view of this shape at these byte strides from dst. The value travels in
** the arguments, so a fill needs no memory of its own; a longer element (a
** record) takes the copy kernel from one element instead. flags:
** LC_FILL_CONTIGUOUS: element i is at dst + i * itemsize (shape and strides
** unused: no division per element); LC_FILL_INDEX32: n and every byte
** offset from dst fit in 32 bits (signed), so indices are 32-bit. word (1,
** 2, 4 or 8) divides itemsize, dst and every stride: the width of each
** store. */
#define LC_FILL_VALUE_MAX 64
#define LC_FILL_CONTIGUOUS 1
#define LC_FILL_INDEX32 2
typedef struct lc_fill_args {
  long long n;
  int ndim;
  int itemsize;
  int word;
  int flags;
  long long shape[LC_MAXDIM];
  long long strides[LC_MAXDIM];
  unsigned long long value[LC_FILL_VALUE_MAX / 8];
} lc_fill_args;

/* lc_reduce<OP, IN, DOM, OUT>(const char *in, char *out, char *work,
** lc_reduce_args a) (kernels/reduce.cu): a reduction or scan, OP and DOM
** being src/base/reduce.h's lc_reduce_op and lc_reduce_domain, IN and OUT
** dtype.h's type codes of the input and the output. Its loops are reduce.h's
** plan: nout outputs (a scan's lines) over the kept axes (kshape; byte
** strides kin in the input, kout in the output), count elements reduced
** into each over the reduced axes (rshape, rin; a scan writes at rout),
** flattened in C order, the last axis fastest. A reduction's output is
** parts blocks' work: each reduces chunk of its elements, and where parts
** > 1 writes its partial to work (LC_REDUCE_PART bytes each: the domain's
** value, then the index of argmin's or argmax's element), which a second
** launch with LC_REDUCE_FINISH reduces into the output. A mean of an
** integer dtype= divides its sum as an integer of acc_size bytes
** (acc_signed). LC_REDUCE_BYTES_IN (_OUT): an element may be misaligned for
** its type, and is read (written) byte by byte. */
#define LC_REDUCE_THREADS 256
#define LC_REDUCE_PART 16
#define LC_REDUCE_FINISH 1
#define LC_REDUCE_BYTES_IN 2
#define LC_REDUCE_BYTES_OUT 4
typedef struct lc_reduce_args {
  long long nout;
  long long count;
  long long chunk;
  long long parts;
  int nkept, nred;
  int flags;
  int acc_size, acc_signed;
  int pad_;
  long long kshape[LC_MAXDIM];
  long long kin[LC_MAXDIM];
  long long kout[LC_MAXDIM];
  long long rshape[LC_MAXDIM];
  long long rin[LC_MAXDIM];
  long long rout[LC_MAXDIM];
} lc_reduce_args;

/* ---- array math's elementwise kernels (kernels/ufunc.cu) --------------------
** The operations: code, name, inputs, family (src/base/ufunc.h says what the
** families mean); a kernel is lc_ufunc<op code, loop type>. */
#define LC_UFUNC_LIST(X)                             \
  X(ADD, "add", 2, ARITH)                            \
  X(SUBTRACT, "subtract", 2, NUM)                    \
  X(MULTIPLY, "multiply", 2, ARITH)                  \
  X(DIVIDE, "divide", 2, FLOAT)                      \
  X(FLOOR_DIVIDE, "floor_divide", 2, INT)            \
  X(MOD, "mod", 2, INT)                              \
  X(POWER, "power", 2, NUM)                          \
  X(MAXIMUM, "maximum", 2, ARITH)                    \
  X(MINIMUM, "minimum", 2, ARITH)                    \
  X(ATAN2, "atan2", 2, FLOAT)                        \
  X(HYPOT, "hypot", 2, FLOAT)                        \
  X(EQ, "eq", 2, CMP)                                \
  X(NE, "ne", 2, CMP)                                \
  X(LT, "lt", 2, CMP)                                \
  X(LE, "le", 2, CMP)                                \
  X(GT, "gt", 2, CMP)                                \
  X(GE, "ge", 2, CMP)                                \
  X(LOGICAL_AND, "logical_and", 2, LOGIC)            \
  X(LOGICAL_OR, "logical_or", 2, LOGIC)              \
  X(LOGICAL_XOR, "logical_xor", 2, LOGIC)            \
  X(NEGATIVE, "negative", 1, NUM)                    \
  X(ABS, "abs", 1, ARITH)                            \
  X(SIGN, "sign", 1, NUM)                            \
  X(SQRT, "sqrt", 1, FLOAT)                          \
  X(EXP, "exp", 1, FLOAT)                            \
  X(LOG, "log", 1, FLOAT)                            \
  X(LOG2, "log2", 1, FLOAT)                          \
  X(LOG10, "log10", 1, FLOAT)                        \
  X(SIN, "sin", 1, FLOAT)                            \
  X(COS, "cos", 1, FLOAT)                            \
  X(TAN, "tan", 1, FLOAT)                            \
  X(TANH, "tanh", 1, FLOAT)                          \
  X(FLOOR, "floor", 1, FLOAT)                        \
  X(CEIL, "ceil", 1, FLOAT)                          \
  X(LOG1P, "log1p", 1, FLOAT)                        \
  X(EXPM1, "expm1", 1, FLOAT)                        \
  X(RINT, "rint", 1, FLOAT)                          \
  X(LOGADDEXP, "logaddexp", 2, FLOAT)                \
  X(ISNAN, "isnan", 1, TEST)                         \
  X(ISINF, "isinf", 1, TEST)                         \
  X(ISFINITE, "isfinite", 1, TEST)                   \
  X(LOGICAL_NOT, "logical_not", 1, LOGIC)            \
  X(CLIP, "clip", 3, ARITH)                          \
  X(WHERE, "where", 3, WHERE)                        \
  X(CAST, "astype", 1, CAST)

typedef enum lc_ufunc_op {
#define LC_UF_CODE(code, ...) LC_UF_##code,
  LC_UFUNC_LIST(LC_UF_CODE)
#undef LC_UF_CODE
  LC_UF_NOPS
} lc_ufunc_op;

/* The built-in C type of an element's bits, by its row's reading and size
** (LC_BITS_##repr##_##size): what typed loops load and store. */
#define LC_BITS_B_1 unsigned char
#define LC_BITS_I_1 signed char
#define LC_BITS_I_2 short
#define LC_BITS_I_4 int
#define LC_BITS_I_8 long long
#define LC_BITS_U_1 unsigned char
#define LC_BITS_U_2 unsigned short
#define LC_BITS_U_4 unsigned int
#define LC_BITS_U_8 unsigned long long
#define LC_BITS_H_2 unsigned short
#define LC_BITS_Z_2 unsigned short
#define LC_BITS_F_4 float
#define LC_BITS_F_8 double
#define LC_BITS_N_1 unsigned char
#define LC_BITS_N_2 unsigned short
#define LC_BITS_N_4 unsigned int
#define LC_BITS_N_8 unsigned long long
#define LC_BITS_OF(repr, size) LC_BITS_##repr##_##size

/* an operand's element type: LC_DTYPE_LIST's row number (dtype.h's
** lc_typecode) */
enum {
#define LC_UFT_CODE(code, ...) LC_UFT_##code,
  LC_DTYPE_LIST(LC_UFT_CODE)
#undef LC_UFT_CODE
  LC_UFT_COUNT
};

#ifdef __cplusplus
/* Each row as a type, for typed kernel code (the library's kernels):
** lc_elem<LC_UFT_code>::bits, and its kind, size and float format. */
template <int CODE> struct lc_elem;
#define LC_ELEM_ROW(code, name, size, kind, numpy, knames, member, repr, dl, uctype, mant, exp) \
  template <> struct lc_elem<LC_UFT_##code> {                                                 \
    typedef LC_BITS_OF(repr, size) bits;                                                      \
    static const char kind_ = kind;                                                           \
    static const int size_ = size, mant_ = mant, exp_ = exp;                                  \
    /* a float other than C's float and double: converted by its bits */                     \
    static const bool narrow_ = kind == 'f' && !(mant == 24 && exp == 8) &&                   \
                                !(mant == 53 && exp == 11);                                   \
  };
LC_DTYPE_LIST(LC_ELEM_ROW)
#undef LC_ELEM_ROW
#endif

/* lc_ufunc<op, T>(lc_ufunc_args a): n elements of the output's shape
** (collapsed to ndim axes), each operand (the inputs, then the output) of
** element type code[k] at data[k] + its byte strides, or a scalar held in
** value[k] (already of the loop's type). contiguous: ndim 1, each array
** operand at a stride of its element size or 0 (broadcast); direct: ndim 1,
** each array operand at a stride of its element size and of the type the
** loop reads or writes (no conversions); unaligned: some operand's
** elements are not aligned to their size (a packed record's fields), so
** every load and store goes byte by byte. */
#define LC_UF_MAXOPS 4
typedef struct lc_ufunc_args {
  long long n;
  int ndim;
  int nin;
  int code[LC_UF_MAXOPS];
  int scalar[LC_UF_MAXOPS];
  int contiguous;
  int direct;
  int unaligned;
  int unused;
  unsigned long long value[LC_UF_MAXOPS][2];
  char *data[LC_UF_MAXOPS];
  long long shape[LC_MAXDIM];
  long long strides[LC_UF_MAXOPS][LC_MAXDIM];
} lc_ufunc_args;

/* ---- random numbers (kernels/random.cu) ------------------------------------
** lc_random<dist, T>(lc_random_args a): n elements of a view (shape and
** byte strides; contiguous: ndim 1 at a stride of sizeof(T)) at data, from
** block counter on of the generator with this key, words words per element
** (kernels/philox.h says how). uniform: p0 low, p1 high - low, p2 high, p3
** the largest value below high; normal: p0 mean, p1 std; integers: low and
** range (T then holds the element's bits: an unsigned type of its size). */
enum { LC_RNG_UNIFORM, LC_RNG_NORMAL, LC_RNG_INTEGERS };
typedef struct lc_random_args {
  unsigned long long key;
  unsigned long long counter;
  long long n;
  double p0, p1, p2, p3;
  unsigned long long low;
  unsigned long long range;
  char *data;
  int ndim;
  int contiguous;
  int words;
  int pad;
  long long shape[LC_MAXDIM];
  long long strides[LC_MAXDIM];
} lc_random_args;
/* ---- matrix products (kernels/matmul.cu) ------------------------------------
** lc_matmul<T>(lc_matmul_args p), T float or double: for each of the batch
** products, C = A B with A m x k, B k x n and C m x n, element (i, j) of
** each at its base + i * row stride + j * column stride (bytes, any sign);
** product z's bases are a, b, c plus the batch strides of z's index in the
** batch shape bshape[0 .. nbatch) (C order; a stride 0 broadcasts). Blocks
** of LC_MM_THREADS threads (x LC_MM_BN / LC_MM_TN, y LC_MM_BM / LC_MM_TM)
** each compute an LC_MM_BM x LC_MM_BN tile of C, LC_MM_TM x LC_MM_TN
** elements a thread, through shared-memory tiles LC_MM_BK deep; the grid
** walks the column tiles in x, the row tiles in y and the products in z,
** striding by its size where it is smaller. */
#define LC_MM_BM 128
#define LC_MM_BN 128
#define LC_MM_BK 16
#define LC_MM_TM 8
#define LC_MM_TN 8
#define LC_MM_THREADS_X (LC_MM_BN / LC_MM_TN)
#define LC_MM_THREADS_Y (LC_MM_BM / LC_MM_TM)
#define LC_MM_THREADS (LC_MM_THREADS_X * LC_MM_THREADS_Y)
typedef struct lc_matmul_args {
  const char *a;
  const char *b;
  char *c;
  long long m, n, k;
  long long a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
  long long batch;                /* the products: bshape's product */
  int nbatch;
  int pad;
  long long bshape[LC_MAXDIM];
  long long a_bs[LC_MAXDIM];
  long long b_bs[LC_MAXDIM];
  long long c_bs[LC_MAXDIM];
} lc_matmul_args;

/* ---- checks --------------------------------------------------------------
** That every compiler here lays these out as written: C11's
** _Static_assert, C++'s static_assert. A size equal to the sum of the
** fields' sizes leaves no room for padding, so with the fields in the
** order written the offsets follow; where the compiler knows
** __builtin_offsetof (gcc and clang, not NVRTC, which has no <stddef.h>
** either) they are checked too. The prelude checks its Array template
** against the same sizes. */
#ifdef __cplusplus
#define LC_ABI_CHECK(cond, what) static_assert(cond, "kernels/abi.h: " what)
#define LC_ABI_ALIGNOF alignof
#else
#define LC_ABI_CHECK(cond, what) _Static_assert(cond, "kernels/abi.h: " what)
#define LC_ABI_ALIGNOF _Alignof
#endif

struct lc_abi_array1 { LC_ARRAY_FIELDS(char, 1); };
struct lc_abi_array_max { LC_ARRAY_FIELDS(double, LC_MAXDIM); };
LC_ABI_CHECK(sizeof(void *) == 8, "a pointer takes 8 bytes");
LC_ABI_CHECK(sizeof(long long) == 8, "long long takes 8 bytes");
LC_ABI_CHECK(sizeof(struct lc_abi_array1) == LC_ARRAY_SIZE(1), "Array<T, 1>'s size");
LC_ABI_CHECK(sizeof(struct lc_abi_array_max) == LC_ARRAY_SIZE(LC_MAXDIM), "Array<T, N>'s size");
LC_ABI_CHECK(LC_ABI_ALIGNOF(struct lc_abi_array_max) == LC_ARRAY_ALIGN, "Array<T, N>'s alignment");
LC_ABI_CHECK(sizeof(lc_strided_args) == 16 + 3 * 8 * LC_MAXDIM, "lc_strided_args's size");
LC_ABI_CHECK(sizeof(lc_fill_args) == 24 + 2 * 8 * LC_MAXDIM + LC_FILL_VALUE_MAX,
             "lc_fill_args's size");
LC_ABI_CHECK(LC_ABI_ALIGNOF(lc_fill_args) == 8, "lc_fill_args's alignment");
LC_ABI_CHECK(sizeof(lc_random_args) == 10 * 8 + 16 + 2 * 8 * LC_MAXDIM,
             "lc_random_args's size");
LC_ABI_CHECK(sizeof(lc_reduce_args) == 56 + 6 * 8 * LC_MAXDIM, "lc_reduce_args's size");
LC_ABI_CHECK(sizeof(lc_matmul_args) == 14 * 8 + 4 * 8 * LC_MAXDIM, "lc_matmul_args's size");
#ifndef __CUDACC_RTC__
LC_ABI_CHECK(__builtin_offsetof(struct lc_abi_array_max, shape) == LC_ARRAY_SHAPE_OFFSET,
             "Array<T, N>'s shape");
LC_ABI_CHECK(__builtin_offsetof(struct lc_abi_array_max, strides) ==
                 LC_ARRAY_STRIDES_OFFSET(LC_MAXDIM),
             "Array<T, N>'s strides");
LC_ABI_CHECK(__builtin_offsetof(lc_strided_args, shape) == 16, "lc_strided_args's shape");
LC_ABI_CHECK(__builtin_offsetof(lc_fill_args, shape) == 24, "lc_fill_args's shape");
LC_ABI_CHECK(__builtin_offsetof(lc_fill_args, value) == 24 + 2 * 8 * LC_MAXDIM,
             "lc_fill_args's value");
LC_ABI_CHECK(__builtin_offsetof(lc_reduce_args, kshape) == 56, "lc_reduce_args's kshape");
LC_ABI_CHECK(__builtin_offsetof(lc_matmul_args, bshape) == 14 * 8, "lc_matmul_args's bshape");
#endif

#endif
