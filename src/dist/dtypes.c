/*
** dtypes: luacuda's dtypes and reduction ops as MPI's and NCCL's, and the
** user ops that reduce float16 and bfloat16 (MPI has no such types: they
** move as 16-bit integers and reduce in float, converted by base's half.h).
*/
#include <math.h>
#include <string.h>

#include "dist.h"
#include "half.h"         /* base/: the conversions, inline */

/* ---- dtypes -------------------------------------------------------------- */

int dist_dtype_code(const char *name) {
  if (strcmp(name, "record") == 0) return LC_RECORD;
  const lc_dtype *dt = lc_dtype_lookup(name);
  return dt ? (int)dt->code : -1;
}

const char *dist_dtype_name(int code) {
  return code >= 0 && code < LC_NTYPES ? lc_dtypes[code].name : "record";
}

MPI_Datatype dist_mpi_type(int code) {
  switch (code) {
  case LC_BOOL: return MPI_C_BOOL;
  case LC_INT8: return MPI_INT8_T;
  case LC_INT16: return MPI_INT16_T;
  case LC_INT32: return MPI_INT32_T;
  case LC_INT64: return MPI_INT64_T;
  case LC_UINT8: return MPI_UINT8_T;
  case LC_UINT16: case LC_FLOAT16: case LC_BFLOAT16: return MPI_UINT16_T;
  case LC_UINT32: return MPI_UINT32_T;
  case LC_UINT64: return MPI_UINT64_T;
  case LC_FLOAT32: return MPI_FLOAT;
  case LC_FLOAT64: return MPI_DOUBLE;
  default: return MPI_BYTE;
  }
}

/* ---- half-precision reductions: user-defined MPI ops ------------------- */

/* min and max as NumPy's minimum and maximum: a NaN wins */
#define OP_SUM(a, b) ((a) + (b))
#define OP_PROD(a, b) ((a) * (b))
#define OP_MIN(a, b) (isnan(a) || (a) < (b) ? (a) : (b))
#define OP_MAX(a, b) (isnan(a) || (a) > (b) ? (a) : (b))
#define HALF_OP(name, type, OP)                                                       \
  static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {             \
    (void)dt;                                                                       \
    const uint16_t *a = in;                                                         \
    uint16_t *b = inout;                                                            \
    for (int i = 0; i < *len; i++) {                                                \
      float x = lc_##type##_to_float(a[i]), y = lc_##type##_to_float(b[i]);         \
      b[i] = lc_float_to_##type(OP(x, y));                                          \
    }                                                                               \
  }
HALF_OP(f16_sum, float16, OP_SUM)
HALF_OP(f16_prod, float16, OP_PROD)
HALF_OP(f16_min, float16, OP_MIN)
HALF_OP(f16_max, float16, OP_MAX)
HALF_OP(bf16_sum, bfloat16, OP_SUM)
HALF_OP(bf16_prod, bfloat16, OP_PROD)
HALF_OP(bf16_min, bfloat16, OP_MIN)
HALF_OP(bf16_max, bfloat16, OP_MAX)

/* ---- ops --------------------------------------------------------------- */

const char *const dist_op_names[] = {"none", "sum", "prod", "min", "max", NULL};

/* The user ops of the half types, made once per process (MPI_Op_create
** needs MPI initialised; they live until MPI_Finalize). */
static MPI_Op half_ops[2][4];

bool dist_make_half_ops(void) {
  MPI_User_function *fns[2][4] = {{f16_sum, f16_prod, f16_min, f16_max},
                                  {bf16_sum, bf16_prod, bf16_min, bf16_max}};
  for (int t = 0; t < 2; t++)
    for (int o = 0; o < 4; o++)
      if (MPI_Op_create(fns[t][o], 1, &half_ops[t][o]) != MPI_SUCCESS) return false;
  return true;
}

/* The MPI op of (op, dtype): booleans reduce as NumPy's add and multiply
** do (or, and). */
MPI_Op dist_mpi_op(int op, int code) {
  if (code == LC_FLOAT16 || code == LC_BFLOAT16) return half_ops[code == LC_BFLOAT16][op - 1];
  if (code == LC_BOOL) return op == OP_SUM_ || op == OP_MAX_ ? MPI_LOR : MPI_LAND;
  switch (op) {
  case OP_SUM_: return MPI_SUM;
  case OP_PROD_: return MPI_PROD;
  case OP_MIN_: return MPI_MIN;
  default: return MPI_MAX;
  }
}

lc_nccl_op dist_nccl_op(int op) {
  return op == OP_PROD_ ? LC_NCCL_PROD : op == OP_MIN_ ? LC_NCCL_MIN : op == OP_MAX_ ? LC_NCCL_MAX
                                                                                     : LC_NCCL_SUM;
}

