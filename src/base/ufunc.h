/*
** ufunc: array math's elementwise operations (NumPy's ufuncs): the table of
** operations, NumPy 2's type promotion (NEP 50: Lua numbers are weak
** scalars), the loop each operation runs for its operands' dtypes, and the
** call a backend runs. Pure C: the host's loops are ufunc_host.c, the CUDA
** backend's kernels kernels/ufunc.cu; what each computes per element is
** kernels/ufunc_ops.h, shared by both.
*/
#ifndef LUACUDA_UFUNC_H
#define LUACUDA_UFUNC_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "layout.h"

/* The operations are abi.h's LC_UFUNC_LIST (the kernels name them too):
** code, name, inputs, family, which says how the loop's dtypes follow from
** the promoted dtype of the inputs:
**   ARITH  the promoted dtype, bool included (+ is or, * is and)
**   INT    the promoted dtype; bool computes in int8 (NumPy's // and %)
**   NUM    the promoted dtype, bool refused (-, ^, sign, negative)
**   FLOAT  the least float that holds the promoted dtype (sqrt, ...);
**          float64 for / of integers and bools (NumPy's true_divide)
**   CMP    compares in the promoted dtype, gives bool
**   TEST   tests a float property (isnan ...): computes in the least float
**          holding the promoted dtype (so integers and bools too), gives bool
**   LOGIC  every input as bool, gives bool
**   WHERE  the first input as bool, the others promoted
**   CAST   the output's dtype (astype) */
enum { LC_UFAM_ARITH, LC_UFAM_INT, LC_UFAM_NUM, LC_UFAM_FLOAT, LC_UFAM_CMP, LC_UFAM_LOGIC,
       LC_UFAM_WHERE, LC_UFAM_CAST, LC_UFAM_TEST };

typedef struct lc_ufunc_info {
  const char *name;
  int nin;
  int family;
} lc_ufunc_info;
extern const lc_ufunc_info lc_ufuncs[LC_UF_NOPS];

/* An operand as type promotion sees it: an array's dtype, or a Lua number
** (weak: it takes the arrays' dtype) or boolean. */
typedef enum { LC_OPD_ARRAY, LC_OPD_INT, LC_OPD_FLOAT, LC_OPD_BOOL } lc_opd_kind;
typedef struct lc_opd_type {
  lc_opd_kind kind;
  const lc_dtype *dtype;     /* LC_OPD_ARRAY: a builtin dtype */
} lc_opd_type;

/* NumPy 2's promotion of two builtin dtypes (np.promote_types); bfloat16
** with float16 gives float32, with 8-bit integers bfloat16. */
const lc_dtype *lc_promote_types(const lc_dtype *a, const lc_dtype *b);

/* The dtype of n operands together (np.result_type, NEP 50): the arrays'
** promoted dtype, which a Lua integer joins as it is (bool becomes int64)
** and a Lua float turns into float64 unless it is a float already; without
** arrays, bool, int64 or float64. */
const lc_dtype *lc_result_type(int n, const lc_opd_type *t);

/* NumPy's casting rules, for an output of another dtype than the result's
** (np.can_cast): "no" and "equiv" the same dtype, "safe" a dtype that
** holds every value (the two promote to it), "same_kind" that or a cast
** within a kind or to a later one (bool, unsigned, signed, float: so
** float64 to float32 and int64 to int8, but not signed to unsigned nor
** float to integer), "unsafe" any. Records cast only to themselves. */
typedef enum { LC_CAST_NO, LC_CAST_EQUIV, LC_CAST_SAFE, LC_CAST_SAME_KIND, LC_CAST_UNSAFE,
               LC_NCASTINGS } lc_casting;
extern const char *const lc_casting_names[LC_NCASTINGS + 1];    /* NULL-terminated */
bool lc_can_cast(const lc_dtype *from, const lc_dtype *to, lc_casting casting);

/* The least float dtype an operation of the FLOAT family computes dt in
** (NumPy's: 8-bit ints and bool float16, 16-bit float32, wider float64). */
const lc_dtype *lc_float_for(const lc_dtype *dt);

/* The dtypes one call runs: each input is converted to in[i], the loop
** computes res from them, and res is converted to out (they differ for
** float16 and bfloat16, which compute in float32). */
typedef struct lc_ufunc_types {
  const lc_dtype *in[3];
  const lc_dtype *res;
  const lc_dtype *out;
} lc_ufunc_types;

/* The loop of op for operands of types t[0..nin) (for LC_UF_CAST, out is
** the target dtype). 0, or an error naming the dtypes ("bool ^ bool ...")
** in err. */
int lc_ufunc_resolve(lc_ufunc_op op, const lc_opd_type *t, const lc_dtype *cast_to,
                     lc_ufunc_types *types, char *err);

/* The types of op on nin arrays of the one builtin dtype dt (every input
** an array of dt; not LC_UF_CAST nor LC_UF_WHERE), as lc_ufunc_resolve
** gives them, worked out once a process for every op and dtype: array math
** on small arrays asked resolve on every call. NULL where resolve fails or
** no loop has the types (the caller resolves, for the error), and for a
** record, a cast or where. */
const lc_ufunc_types *lc_ufunc_types_same(lc_ufunc_op op, const lc_dtype *dt);

/* One operand of a call: the host or device address of element 0 and the
** layout broadcast to the output's shape; a scalar is an element of its
** dtype held in value (data then points there on the host side). */
typedef struct lc_ufunc_operand {
  char *data;
  const lc_dtype *dtype;
  lc_layout lay;
  bool scalar;
  unsigned char value[16];
} lc_ufunc_operand;

typedef struct lc_ufunc_call {
  lc_ufunc_op op;
  lc_ufunc_types types;
  int nin;
  lc_ufunc_operand in[3];
  lc_ufunc_operand out;
} lc_ufunc_call;

/* Whether the host (and so every backend) has a loop of op for the loop
** dtype resolve chose (types.in[0], where's types.in[1]). */
bool lc_ufunc_has_loop(lc_ufunc_op op, const lc_dtype *loop);

/* The call's operands walked together: the output's shape with size-1 axes
** dropped and axes merged where every operand allows, into shape, and each
** operand's byte strides (inputs, then the output) into strides. Returns
** the number of axes (at least 1). */
int lc_ufunc_collapse(const lc_ufunc_call *c, int64_t *shape, int64_t (*strides)[LC_MAXDIM]);

/* Run the call on host-addressable memory. */
void lc_ufunc_host(const lc_ufunc_call *c);

/* Convert n elements between builtin dtypes, each side strided in bytes
** (NumPy's astype rules: floats to integers truncate toward zero, and here
** saturate, NaN giving 0, as a GPU does). */
void lc_cast_host(const lc_dtype *to, char *dst, int64_t dstride,
                  const lc_dtype *from, const char *src, int64_t sstride, int64_t n);

#endif
