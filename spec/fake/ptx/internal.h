/*
** The PTX interpreter's program form, shared by its parser (parse.c) and
** its executor (exec.c). Instructions are decoded once, at parse time, into
** fixed records whose operands name register slots, so running one is a
** switch and a few loads.
*/
#ifndef FAKE_PTX_INTERNAL_H
#define FAKE_PTX_INTERNAL_H

#include "ptx.h"

#include <stdbool.h>

/* Types: a kind and a width in bits. */
enum { K_B, K_U, K_S, K_F, K_PRED, K_F16X2, K_BF16, K_BF16X2, K_U16X2, K_S16X2 };
typedef struct ptype { uint8_t k, bits; } ptype;

/* State spaces. */
enum { SP_GENERIC, SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_PARAM, SP_CONST };

/* Operand kinds. */
enum {
  O_NONE,
  O_REG,      /* reg: a slot */
  O_IMM,      /* imm: the bits, already in the instruction's type */
  O_SREG,     /* reg: a special register (SR_*) */
  O_SYM,      /* sym: a variable's address in its space, plus imm */
  O_ADDR,     /* [reg + imm] or [sym + imm]: reg (or -1), sym (or -1), imm */
  O_VEC,      /* {v[0..n-1]}: slots, -1 for '_' */
  O_LABEL,    /* reg: the instruction index */
  O_FUNC,     /* reg: a function index */
  O_LIST,     /* (a, b, ...) of a call: v[] hold symbols; more in the call record */
};

enum {
  SR_TID_X, SR_TID_Y, SR_TID_Z, SR_NTID_X, SR_NTID_Y, SR_NTID_Z,
  SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z, SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z,
  SR_LANEID, SR_WARPID, SR_NWARPID, SR_SMID, SR_NSMID, SR_GRIDID,
  SR_LANEMASK_EQ, SR_LANEMASK_LT, SR_LANEMASK_LE, SR_LANEMASK_GT, SR_LANEMASK_GE,
  SR_CLOCK, SR_CLOCK_HI, SR_CLOCK64, SR_GLOBALTIMER, SR_GLOBALTIMER_LO, SR_GLOBALTIMER_HI,
  SR_DYNAMIC_SMEM, SR_TOTAL_SMEM, SR_WARPSZ, SR_CLUSTER_CTARANK, SR_CLUSTER_NCTARANK,
  SR_ENVREG0,      /* %envreg0 .. %envreg31 follow */
};

typedef struct operand {
  uint8_t kind;
  uint8_t neg;        /* !p */
  uint8_t n;          /* O_VEC members */
  int32_t reg;
  int32_t sym;
  int64_t imm;
  int32_t v[4];
} operand;

/* Opcodes. */
enum {
  I_NOP, I_MOV, I_ADD, I_SUB, I_MUL, I_MAD, I_FMA, I_DIV, I_REM, I_ABS, I_NEG, I_MIN, I_MAX,
  I_AND, I_OR, I_XOR, I_NOT, I_CNOT, I_SHL, I_SHR, I_SHF, I_LOP3, I_POPC, I_CLZ, I_BREV,
  I_BFIND, I_BFE, I_BFI, I_PRMT, I_SETP, I_SET, I_SELP, I_SLCT, I_CVT, I_CVTA, I_ISSPACEP,
  I_LD, I_ST, I_BRA, I_BRX, I_CALL, I_RET, I_EXIT, I_BAR, I_BAR_RED, I_BAR_WARP, I_MEMBAR,
  I_ATOM, I_RED, I_SHFL, I_VOTE, I_MATCH, I_REDUX, I_ACTIVEMASK, I_RCP, I_SQRT, I_RSQRT,
  I_SIN, I_COS, I_EX2, I_LG2, I_TANH, I_TESTP, I_COPYSIGN, I_TRAP, I_NANOSLEEP, I_MUL24,
  I_MAD24, I_SAD, I_PREFETCH, I_DP4A, I_DP2A, I_BMSK, I_SZEXT, I_VABSDIFF, I_FNS, I_ELECT,
  I_COUNT
};

/* Modifiers, in inst.mod: comparison, rounding, and the like. */
enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_LO, CMP_LS, CMP_HI, CMP_HS,
       CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU, CMP_NUM, CMP_NAN };
enum { RND_NONE, RND_RN, RND_RZ, RND_RM, RND_RP, RND_RNI, RND_RZI, RND_RMI, RND_RPI, RND_RNA };
enum { BOP_NONE, BOP_AND, BOP_OR, BOP_XOR };
enum { ATOM_ADD, ATOM_MIN, ATOM_MAX, ATOM_INC, ATOM_DEC, ATOM_AND, ATOM_OR, ATOM_XOR,
       ATOM_CAS, ATOM_EXCH };
enum { SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX };
enum { VOTE_ALL, VOTE_ANY, VOTE_UNI, VOTE_BALLOT };
enum { BAR_SYNC, BAR_ARRIVE, BAR_RED_POPC, BAR_RED_AND, BAR_RED_OR };
enum { TESTP_FINITE, TESTP_INFINITE, TESTP_NUMBER, TESTP_NAN, TESTP_NORMAL, TESTP_SUBNORMAL };

/* Flags. */
#define F_FTZ    0x0001
#define F_SAT    0x0002
#define F_HI     0x0004
#define F_LO     0x0008
#define F_WIDE   0x0010
#define F_APPROX 0x0020
#define F_CC     0x0040   /* .cc / addc: carry (kept in the thread) */
#define F_CARRYIN 0x0080
#define F_DUALP  0x0100   /* setp p|q; shfl d|p; match d|p */
#define F_SHIFT_R 0x0200  /* shf.r (else .l) */
#define F_WRAP   0x0400   /* shf.wrap */
#define F_UNI    0x0800
#define F_TOSPACE 0x1000  /* cvta.to.<space> */
#define F_ALL    0x2000   /* match.all */
#define F_SHIFTAMT 0x4000 /* bfind.shiftamt */
#define F_RELU   0x8000

typedef struct inst {
  uint16_t op;
  uint16_t flags;
  ptype t, t2;        /* the type; a second one (cvt, set, slct, dp4a: the sources) */
  uint8_t mod;        /* CMP_*, RND_*, ATOM_*, SHFL_*, VOTE_*, BAR_*, TESTP_* */
  uint8_t mod2;       /* setp/set/bar.red: BOP_*; cvt: RND_* of float results;
                      ** min/max: 1 for .NaN (a NaN operand gives NaN) */
  uint8_t space;
  uint8_t vec;        /* ld/st: 1, 2, 4 */
  uint8_t nops;
  int32_t guard;      /* predicate slot, -1: always */
  bool guard_neg;
  operand o[6];
  int line;           /* in the PTX text */
  int call;           /* I_CALL: index in the function's calls */
} inst;

/* A call site: the caller's .param variables (symbols) for the results
** and the arguments. */
typedef struct callsite {
  int callee;
  int nret, narg;
  int32_t ret[4], *args;
} callsite;

/* Variables: module scope (.global, .const, .shared) or a function's
** (.shared, .local, .param). */
typedef struct var {
  char *name;
  uint8_t space;
  bool external;      /* extern .shared: the dynamic shared memory */
  int fn;             /* -1: module scope */
  size_t size, align;
  size_t offset;      /* local/param: in the frame; shared: in the block (per module) */
  unsigned char *init;
  int *refs;          /* initialiser words holding addresses: offset, symbol, pairs */
  int nrefs;
  int64_t *ref_add;
  void *addr;         /* .global/.const: bound by the driver */
} var;

typedef struct func {
  char *name;
  bool entry, defined;
  int nregs;
  ptype *regtype;     /* of each slot */
  inst *code;
  int ncode, capcode;
  callsite *calls;
  int ncalls;
  /* params: entry: the kernel's; .func: results then arguments */
  int nparams, nret;
  int32_t *params;    /* symbols */
  size_t param_bytes; /* formals and the .param variables of its call sites */
  size_t formal_bytes;
  size_t shared_bytes; /* a kernel's static shared memory */
  size_t shared_bytes_aligned;   /* where its dynamic shared memory starts */
  uint64_t *regmask;  /* each slot's width, as a mask */
  size_t local_bytes, local_align;
  size_t *cubin_frames;      /* an entry's: each function's frame from the cubin, or NULL */
  size_t cubin_min_stack;
  int maxntid;
  int32_t *brx;       /* .branchtargets lists: first count, then instruction indices */
  int nbrx;
} func;

struct ptx_module {
  func *fns;
  int nfns;
  var *vars;
  int nvars;
  int *globals;       /* the .global/.const vars, as ptx_var numbers them */
  int nglobals;
  size_t static_shared, shared_align;
};

/* parse.c */
size_t ptx_type_size(ptype t);
const char *ptx_op_name(int op);

#endif
