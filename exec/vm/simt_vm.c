/* The thread-level VM: runs a simt kernel (a builtin func with `kernel`)
 * over a grid, one block after another, the threads of a block in
 * lock-step. A kernel is compiled once into instruction lists over value
 * slots; each slot holds one register value per thread (a scalar code, a
 * vector's element codes, or a pointer's address) in a register file laid
 * out slot by slot. An instruction runs for an active set of threads (a
 * list of thread indices); scf ops run their regions for subsets of it.
 * Arith ops reuse the tl VM's scalar arithmetic (vm.c, numeric.c); the
 * PTX conversions and prmt modes are in simt_numeric.c. docs/vm.md ("The
 * thread-level VM") states the semantics. */
#include "tl/simt_vm.h"
#include "simt_vm_internal.h"
#include "tl/arch.h"
#include "tl/layout.h"
#include "tl/simt.h"
#include "tl/tensor_map.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

/*===--- Compiled form ---------------------------------------------------===*/

/* How run_body runs each op the VM executes, by id: exec_arith (arith),
 * exec_reg (ops on one thread's registers), or a case of its own (control
 * flow, memory, barriers, warp-wide ops, printf). An op without an entry
 * is one the VM does not execute: compiling a kernel with one fails with
 * a diagnostic at it. */
typedef enum SRun { SR_NONE, SR_ARITH, SR_REG, SR_OWN } SRun;

static const SRun runner_of[TL_OP_COUNT] = {
    [TL_OP_ARITH_CONSTANT] = SR_ARITH,
    [TL_OP_ARITH_ADDI] = SR_ARITH,
    [TL_OP_ARITH_SUBI] = SR_ARITH,
    [TL_OP_ARITH_MULI] = SR_ARITH,
    [TL_OP_ARITH_DIVI] = SR_ARITH,
    [TL_OP_ARITH_REMI] = SR_ARITH,
    [TL_OP_ARITH_CEILDIVI] = SR_ARITH,
    [TL_OP_ARITH_ANDI] = SR_ARITH,
    [TL_OP_ARITH_ORI] = SR_ARITH,
    [TL_OP_ARITH_XORI] = SR_ARITH,
    [TL_OP_ARITH_SHLI] = SR_ARITH,
    [TL_OP_ARITH_SHRI] = SR_ARITH,
    [TL_OP_ARITH_MINI] = SR_ARITH,
    [TL_OP_ARITH_MAXI] = SR_ARITH,
    [TL_OP_ARITH_ADDF] = SR_ARITH,
    [TL_OP_ARITH_SUBF] = SR_ARITH,
    [TL_OP_ARITH_MULF] = SR_ARITH,
    [TL_OP_ARITH_DIVF] = SR_ARITH,
    [TL_OP_ARITH_MINF] = SR_ARITH,
    [TL_OP_ARITH_MAXF] = SR_ARITH,
    [TL_OP_ARITH_NEGF] = SR_ARITH,
    [TL_OP_ARITH_ABSF] = SR_ARITH,
    [TL_OP_ARITH_CMPI] = SR_ARITH,
    [TL_OP_ARITH_CMPF] = SR_ARITH,
    [TL_OP_ARITH_SELECT] = SR_ARITH,
    [TL_OP_ARITH_EXTI] = SR_ARITH,
    [TL_OP_ARITH_TRUNCI] = SR_ARITH,
    [TL_OP_ARITH_ITOFP] = SR_ARITH,
    [TL_OP_ARITH_FPTOI] = SR_ARITH,
    [TL_OP_ARITH_EXTF] = SR_ARITH,
    [TL_OP_ARITH_TRUNCF] = SR_ARITH,
    [TL_OP_ARITH_BITCAST] = SR_ARITH,
    [TL_OP_SCF_FOR] = SR_OWN,
    [TL_OP_SCF_IF] = SR_OWN,
    [TL_OP_SCF_WHILE] = SR_OWN,
    [TL_OP_SIMT_THREAD_ID] = SR_REG,
    [TL_OP_SIMT_BLOCK_ID] = SR_REG,
    [TL_OP_SIMT_BLOCK_DIM] = SR_REG,
    [TL_OP_SIMT_GRID_DIM] = SR_REG,
    [TL_OP_SIMT_LANE_ID] = SR_REG,
    [TL_OP_SIMT_WARP_ID] = SR_REG,
    [TL_OP_SIMT_PTR_ADD] = SR_REG,
    [TL_OP_SIMT_SMEM_BASE] = SR_REG,
    [TL_OP_SIMT_LOAD] = SR_OWN,
    [TL_OP_SIMT_STORE] = SR_OWN,
    [TL_OP_SIMT_CP_ASYNC] = SR_OWN,
    [TL_OP_SIMT_CP_ASYNC_COMMIT] = SR_OWN,
    [TL_OP_SIMT_CP_ASYNC_WAIT] = SR_OWN,
    [TL_OP_SIMT_BARRIER] = SR_OWN,
    [TL_OP_SIMT_EXIT] = SR_OWN,
    [TL_OP_SIMT_ATOM] = SR_OWN,
    [TL_OP_SIMT_ATOM_CAS] = SR_OWN,
    [TL_OP_SIMT_FENCE] = SR_OWN,
    [TL_OP_SIMT_LDMATRIX] = SR_OWN,
    [TL_OP_SIMT_MMA] = SR_OWN,
    [TL_OP_SIMT_WGMMA] = SR_OWN,
    [TL_OP_SIMT_WGMMA_FENCE] = SR_OWN,
    [TL_OP_SIMT_WGMMA_COMMIT] = SR_OWN,
    [TL_OP_SIMT_WGMMA_WAIT] = SR_OWN,
    [TL_OP_SIMT_WGMMA_DESC] = SR_OWN,
    [TL_OP_SIMT_SETMAXNREG] = SR_OWN,
    [TL_OP_SIMT_SHFL] = SR_OWN,
    [TL_OP_SIMT_PRMT] = SR_REG,
    [TL_OP_SIMT_LOP3] = SR_REG,
    [TL_OP_SIMT_ADD2] = SR_REG,
    [TL_OP_SIMT_SUB2] = SR_REG,
    [TL_OP_SIMT_MUL2] = SR_REG,
    [TL_OP_SIMT_FMA2] = SR_REG,
    [TL_OP_SIMT_FMA] = SR_REG,
    [TL_OP_SIMT_MAX] = SR_REG,
    [TL_OP_SIMT_MIN] = SR_REG,
    [TL_OP_SIMT_MATH] = SR_REG,
    [TL_OP_SIMT_PRINTF] = SR_OWN,
    [TL_OP_SIMT_CVT] = SR_REG,
    [TL_OP_SIMT_CVT_PACK] = SR_REG,
    [TL_OP_SIMT_CVT_E4M3X2] = SR_REG,
    [TL_OP_SIMT_BITCAST] = SR_REG,
    [TL_OP_SIMT_EXTRACT] = SR_REG,
    [TL_OP_SIMT_BUILD] = SR_REG,
    [TL_OP_SIMT_MBARRIER_INIT] = SR_OWN,
    [TL_OP_SIMT_MBARRIER_ARRIVE] = SR_OWN,
    [TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX] = SR_OWN,
    [TL_OP_SIMT_MBARRIER_EXPECT_TX] = SR_OWN,
    [TL_OP_SIMT_MBARRIER_TRY_WAIT] = SR_OWN,
    [TL_OP_SIMT_FENCE_PROXY_ASYNC] = SR_OWN,
    [TL_OP_SIMT_FENCE_MBARRIER_INIT] = SR_OWN,
    [TL_OP_SIMT_TMA_LOAD] = SR_OWN,
};

/* How an mma form's fragments map to matrices and how its sums round. */
typedef enum MmaIn { MI_FLOAT, MI_INT8, MI_B1 } MmaIn;
typedef enum MmaAcc { MA_F32, MA_F16, MA_S32 } MmaAcc;
typedef struct Mma {
  unsigned m, n, k, bits; /* shape; bits of an A/B element */
  MmaIn in;
  MmaAcc acc;
  TlType *a_float, *b_float; /* MI_FLOAT: the element types of A and B */
  bool a_signed, b_signed, satfinite;
  unsigned alocal, blocal, clocal; /* elements per lane of A, B, C */
  int32_t *amap, *bmap, *cmap;     /* [lane * local + i] -> row * cols + col */
} Mma;

/* A compiled simt.wgmma: the form as an Mma of shape 64 x N x K (its
 * arithmetic is simt.mma's), the fragment maps of a warp's register A
 * (16 x K) and of one accumulator tile (16 x 8), and the attributes. */
typedef struct Wg {
  Mma mm;
  unsigned tiles;  /* N / 8: accumulator operands and results */
  bool a_regs;     /* A is a register fragment, not a descriptor */
  bool a_mn, b_mn; /* a_major / b_major = "mn" */
  int scale_d;     /* 0 or 1, or -1: the last operand is the predicate */
  unsigned alocal, clocal;
  int32_t *amap, *cmap;
  /* A in registers: the slots of the values whose registers hold it (the
   * operand with the renames before it undone: simt.build, simt.extract,
   * arith.bitcast, simt.bitcast), which must not be written until the op
   * retires. */
  uint32_t *aroots;
  unsigned naroots;
} Wg;

typedef struct SBody SBody;

typedef struct SInst {
  TlOp *op;
  TlOpId code; /* the op's id */
  SRun run;
  unsigned nin, nout, nregions;
  uint32_t *in, *out;
  SBody *regions;
  const EType *et;  /* scalar (or vector element) type of the result */
  const EType *et2; /* of operand 0 (operand 1 for ptr_add) */
  int pred;         /* TlCmpiPredicate, TlCmpfPredicate, prmt or shfl mode */
  int64_t imm;      /* dim, index, pending, lut, barrier id, num */
  int64_t imm2;     /* barrier thread count (0: all), required alignment */
  unsigned bytes;   /* access or copy size */
  bool flag;        /* ldmatrix trans, cvt sat */
  SvRound rnd;
  uint64_t konst;
  unsigned vn_in, vb_in, vn_out, vb_out; /* elements and element bits */
  int32_t *map;                          /* ldmatrix: [lane * local + i] */
  unsigned local;
  Mma *mma;
  Wg *wg;
  bool coop; /* scf.if with an mbarrier wait inside (exec_if) */
} SInst;

struct SBody {
  SInst *insts;
  unsigned n;
  uint32_t *args;
  unsigned nargs;
  uint32_t *yield;
  unsigned nyield;
};

typedef struct SKernel {
  SBody body;
  bool has_wgmma; /* has wgmma ops: the VM tracks their state and hazards */
  uint32_t nslots;
  uint32_t *words; /* per slot: 64-bit words a thread's value takes */
  uint32_t *off;   /* per slot: sum of the words of the slots before it */
  uint32_t total;  /* words per thread */
} SKernel;

/* A cp.async in flight: its thread, commit group (OPEN until committed),
 * destination and the bytes it will write (read from global at issue). */
#define GROUP_OPEN UINT32_MAX
typedef struct Copy {
  int32_t thread;
  uint32_t group;
  uint32_t dst;
  uint32_t size;
  uint8_t data[16];
  TlOp *op;
} Copy;

/* State of one shared byte. The race fields are valid while epoch is the
 * block's current epoch (barriers passed + 1). */
enum { W_NONE = -1, R_MANY = -2 };
typedef struct SByte {
  uint32_t epoch;
  int32_t writer, reader;
  uint32_t pending; /* 1 + index of the Copy in flight into it, or 0 */
  uint32_t wg_reads; /* reads of it by wgmma ops not yet retired */
  uint8_t init;
  TlOp *wop; /* the op of the last write */
  /* TMA: 1 + index of the Tma in flight into the byte, or 0; once it
   * landed, 1 + the mbarrier it completed on, the phase count that
   * completion reached and the race epoch it landed in. */
  uint32_t tma;
  uint32_t tma_bar, tma_phase, tma_epoch;
  /* The warps that read it since the last barrier, and when last (the
   * block's clock, TlSimtVm.now): a TMA load over it must be ordered
   * after those reads by mbarrier arrivals it waited for. */
  uint32_t rwarps;
  uint64_t rtime;
} SByte;

/* An mbarrier (docs/vm.md "mbarrier and TMA"): its shared address, the
 * arrivals a phase expects, the arrivals still missing in the current
 * phase, the transaction bytes expected and not yet arrived (negative when
 * a copy's bytes came first), the phases completed, and how many
 * try_waits failed since it last changed (a deadlock shows as many). */
#define MAX_MBARS 32
typedef struct MBar {
  uint32_t addr;
  uint32_t count, missing;
  int64_t tx;
  uint32_t phases;
  uint64_t stale;
  TlOp *init_op;
} MBar;

/* A TMA load in flight until its mbarrier's phase completes: its thread,
 * mbarrier, destination, the 128-byte lines it covers (span bytes from
 * dst), the bytes and which of them it writes. */
typedef struct Tma {
  int32_t thread;
  uint32_t bar;
  uint32_t dst, span;
  uint8_t *data, *mask;
  bool landed;
  TlOp *op;
} Tma;
/* A simt.wgmma issued by a warpgroup and not yet known complete: its
 * commit group (GROUP_OPEN until committed) and the shared bytes it read
 * (reads[first, first + n) of the VM's list, one entry per byte read). */
typedef struct WgOp {
  TlOp *op;
  const struct Wg *wg_inst; /* the op's form (its A registers) */
  int32_t wg;
  uint32_t group;
  bool retired;
  uint32_t first, n;
} WgOp;

typedef struct Mask {
  int32_t *t;
  int n;
} Mask;

struct TlSimtVm {
  TlContext *ctx;
  TlVm *tl; /* the tl VM: element types and the arith helpers */
  TlArena arena;
  PMap kernels;  /* func -> SKernel */
  PMap slots_of; /* while compiling: TlValue -> slot + 1 */
  TL_VEC(uint32_t) words;
  TlSimtVmStats stats;
  TlSimtMmaModel mma_model;
  int64_t max_ops; /* 0: no budget */
  FILE *print_out; /* simt.printf's output; NULL: none */
  bool compiling_wgmma; /* the kernel being compiled has a simt.wgmma */

  /* The run in progress. */
  TlOp *func;
  SKernel *k;
  const TlVmArg *args;
  unsigned nargs;
  int64_t grid[3], bdim[3], bidx[3];
  int T;
  uint64_t *rf;
  size_t rf_cap;
  uint8_t *smem;
  SByte *sbytes;
  int64_t smem_size;
  uint32_t epoch;
  TL_VEC(Copy) copies;
  TL_VEC(uint32_t) live; /* indices of the copies in flight */
  uint32_t *committed;   /* per thread: groups committed */
  uint8_t *active;       /* per thread scratch: in the op's active set */
  uint8_t *exited;       /* per thread: has run simt.exit in this block */
  TL_VEC(MBar) mbars;    /* the block's mbarriers */
  TL_VEC(Tma) tmas;      /* the block's TMA loads */
  uint32_t *seen;        /* [thread * MAX_MBARS + bar]: phases it saw end */
  /* Ordering by mbarriers: the block's clock (a tick per shared read and
   * per arrival); per thread t and thread r, the time of r's latest
   * arrival ordered before t (know[t * T + r]); per mbarrier the join of
   * its arrivals in the current phase (mpend[bar * T + r]) and in the
   * last completed phase of each parity (mdone[(bar * 2 + p) * T + r]). A
   * try_wait that returns true joins that phase's into the thread's. */
  uint64_t now;
  uint64_t *know, *mpend, *mdone;
  struct SCoop *coop; /* the divergent scf.if whose sides take turns */
  uint64_t nexits;       /* simt.exit ops run (active sets shrink after) */
  /* wgmma (kernels with a simt.wgmma only): the ops in flight, the bytes
   * they read, per warpgroup the groups committed, per thread the
   * wgmma.fence ops run, and per slot and thread the wgmma whose result
   * the register holds (1 + index, 0: none) and the stamp of its last
   * write by other code (1 + the thread's fences then, 0: none). */
  TL_VEC(WgOp) wgops;
  TL_VEC(uint32_t) wgreads;
  /* The wgmma ops in flight that read A from registers (indices into
   * wgops; retired ones are dropped when next looked at). */
  TL_VEC(uint32_t) wg_aregs;
  uint32_t wg_live;
  uint32_t *wg_committed;
  uint32_t *fences;
  uint32_t *regmark, *wstamp;
  size_t mark_cap;
  /* Per warpgroup, the count its last simt.setmaxnreg set (0: none yet;
   * the count at entry is ptxas's, which the VM does not know). */
  int64_t wg_regs[8];
  TL_VEC(uint64_t) scratch;
  bool failed;
};

static const EType *etype(TlSimtVm *vm, TlType *t) {
  return vm_etype(vm->tl, t);
}

/*===--- Kernels and parameters ------------------------------------------===*/

static bool is_simt_kernel(TlOp *op) {
  return tl_op_id(op) == TL_OP_BUILTIN_FUNC && tl_op_attr(op, "kernel");
}

TlOp *tl_simt_vm_find_kernel(TlModule *m, const char *name) {
  TlOp *found = NULL;
  unsigned count = 0;
  for (TlOp *op = tl_block_first_op(tl_module_body(m)); op;
       op = tl_op_next(op)) {
    if (!is_simt_kernel(op))
      continue;
    count++;
    if (!found && (!name || !strcmp(tl_symbol_name(op), name)))
      found = op;
  }
  TlContext *ctx = tl_module_context(m);
  TlLoc loc = tl_op_loc(tl_module_op(m));
  if (name && !found) {
    tl_emit_error(ctx, loc, "no kernel func named '%s'", name);
    return NULL;
  }
  if (!name && count != 1) {
    if (!count)
      tl_emit_error(ctx, loc,
                    "the module has no kernel (a func with the 'kernel' "
                    "attribute)");
    else
      tl_emit_error(ctx, loc, "the module has %u kernels; name one", count);
    return NULL;
  }
  return found;
}

static TlBlock *entry(TlOp *func) {
  return tl_region_first_block(tl_op_region(func, 0));
}

unsigned tl_simt_vm_num_params(TlOp *func) {
  return tl_block_num_args(entry(func));
}

const char *tl_simt_vm_param_name(TlOp *func, unsigned i) {
  const char *h = tl_value_name_hint(tl_block_arg(entry(func), i));
  char buf[32];
  if (h && *h == '%')
    h++;
  if (!h || !*h) {
    snprintf(buf, sizeof buf, "arg%u", i);
    h = buf;
  }
  return tl_context_intern(tl_op_context(func), h, strlen(h));
}

TlType *tl_simt_vm_param_type(TlOp *func, unsigned i) {
  return tl_value_type(tl_block_arg(entry(func), i));
}

/* Global addresses: buffer parameter i starts at (i + 1) << 40, so an
 * address names its buffer and offset, and the buffers' alignments are
 * those of the offsets (the GPU's allocations are 256-byte aligned). */
#define GLOBAL_SHIFT 40
#define GLOBAL_OFF_MASK ((1ull << GLOBAL_SHIFT) - 1)

uint64_t tl_simt_vm_buffer_address(unsigned param) {
  return (uint64_t)(param + 1) << GLOBAL_SHIFT;
}

int tl_simt_vm_param_index(TlOp *func, const char *name) {
  for (unsigned i = 0; i < tl_simt_vm_num_params(func); i++)
    if (!strcmp(tl_simt_vm_param_name(func, i), name))
      return (int)i;
  return -1;
}

/*===--- Creation --------------------------------------------------------===*/

TlSimtVm *tl_simt_vm_create(TlContext *ctx) {
  TlSimtVm *vm = tl_xcalloc(1, sizeof *vm);
  vm->ctx = ctx;
  vm->tl = tl_vm_create(ctx);
  vm->print_out = stdout;
  tl_arena_init(&vm->arena);
  return vm;
}

void tl_simt_vm_set_print_stream(TlSimtVm *vm, FILE *out) { vm->print_out = out; }

void tl_simt_vm_destroy(TlSimtVm *vm) {
  if (!vm)
    return;
  tl_vm_destroy(vm->tl);
  pmap_free(&vm->kernels); /* the kernels themselves live in the arena */
  pmap_free(&vm->slots_of);
  tl_vec_free(&vm->words);
  tl_vec_free(&vm->copies);
  tl_vec_free(&vm->live);
  tl_vec_free(&vm->scratch);
  for (size_t i = 0; i < vm->tmas.len; i++) {
    tl_free(vm->tmas.data[i].data);
    tl_free(vm->tmas.data[i].mask);
  }
  tl_vec_free(&vm->tmas);
  tl_vec_free(&vm->mbars);
  tl_free(vm->seen);
  tl_free(vm->know);
  tl_free(vm->mpend);
  tl_free(vm->mdone);
  tl_free(vm->rf);
  tl_free(vm->smem);
  tl_free(vm->sbytes);
  tl_free(vm->committed);
  tl_free(vm->active);
  tl_free(vm->exited);
  tl_vec_free(&vm->wgops);
  tl_vec_free(&vm->wg_aregs);
  tl_vec_free(&vm->wgreads);
  tl_free(vm->wg_committed);
  tl_free(vm->fences);
  tl_free(vm->regmark);
  tl_free(vm->wstamp);
  tl_arena_reset(&vm->arena);
  tl_free(vm);
}

TlSimtVmStats tl_simt_vm_stats(const TlSimtVm *vm) { return vm->stats; }

void tl_simt_vm_set_mma_model(TlSimtVm *vm, TlSimtMmaModel model) {
  vm->mma_model = model;
}

void tl_simt_vm_set_op_limit(TlSimtVm *vm, int64_t max_ops) {
  vm->max_ops = max_ops > 0 ? max_ops : 0;
}

/*===--- Errors ----------------------------------------------------------===*/

static bool sv_error(TlSimtVm *vm, TlOp *op, const char *fmt, ...)
    TL_PRINTF(3, 4);
static bool sv_error(TlSimtVm *vm, TlOp *op, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tl_op_emit_error(op, "%s", buf);
  vm->failed = true;
  return false;
}

static void sv_note(TlSimtVm *vm, TlOp *op, const char *fmt, ...)
    TL_PRINTF(3, 4);
static void sv_note(TlSimtVm *vm, TlOp *op, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tl_emit_note(vm->ctx, tl_op_loc(op), "%s", buf);
}

/* "thread 37 (warp 1, lane 5)", with the (x, y, z) index in blocks of
 * more than one dimension. */
typedef struct Who {
  char s[96];
} Who;
static Who who(const TlSimtVm *vm, int t) {
  Who w;
  if (vm->bdim[1] == 1 && vm->bdim[2] == 1)
    snprintf(w.s, sizeof w.s, "thread %d (warp %d, lane %d)", t, t / 32,
             t % 32);
  else
    snprintf(w.s, sizeof w.s,
             "thread %d = (%lld, %lld, %lld) (warp %d, lane %d)", t,
             (long long)(t % vm->bdim[0]),
             (long long)(t / vm->bdim[0] % vm->bdim[1]),
             (long long)(t / (vm->bdim[0] * vm->bdim[1])), t / 32, t % 32);
  return w;
}

/*===--- Compilation -----------------------------------------------------===*/

static unsigned words_of(const TlType *t) {
  return tl_simt_is_vec(t) ? tl_simt_vec_size(t) : 1;
}

static TlType *elem_of(TlType *t) {
  return tl_simt_is_vec(t) ? tl_simt_vec_elem(t) : t;
}

static uint32_t slot_for(TlSimtVm *vm, TlValue *v) {
  uintptr_t s = (uintptr_t)pmap_get(&vm->slots_of, v);
  if (s)
    return (uint32_t)(s - 1);
  uint32_t n = (uint32_t)vm->words.len;
  tl_vec_push(&vm->words, words_of(tl_value_type(v)));
  pmap_put(&vm->slots_of, v, (void *)(uintptr_t)(n + 1));
  return n;
}

/* Values the VM can hold: scalars with a memory format, vectors of them,
 * simt pointers. */
static bool holdable(TlType *t) {
  TlDType d;
  if (tl_simt_is_ptr(t) || tl_simt_is_tensormap(t))
    return true;
  TlType *e = elem_of(t);
  return tl_type_is_scalar(e) && (tl_vm_dtype_of(e, &d) || tl_type_is_bool(e));
}

static const char *str_attr(TlOp *op, const char *name) {
  TlAttr *a = tl_op_attr(op, name);
  return a ? tl_attr_string_value(a, NULL) : NULL;
}
static int64_t int_attr(TlOp *op, const char *name, int64_t dflt) {
  TlAttr *a = tl_op_attr(op, name);
  return a ? tl_attr_int_value(a) : dflt;
}

/* simt.math: the exact function rounded once to f32 (the hardware's
 * approximations are within their stated error of it), the canonical NaN
 * for a NaN result. */
static const char *const math_fns[] = {"ex2.approx", "lg2.approx", "rsqrt.approx",
                                       "sqrt.rn", NULL};

static uint32_t sv_math(int fn, uint32_t bits) {
  float x;
  memcpy(&x, &bits, 4);
  double d = x, r = fn == 0 ? exp2(d) : fn == 1 ? log2(d) : fn == 2 ? 1.0 / sqrt(d) : sqrt(d);
  float f = (float)r;
  uint32_t out;
  memcpy(&out, &f, 4);
  return isnan(f) ? 0x7fffffffu : out;
}

static int find_name(const char *const *list, const char *s) {
  for (int i = 0; s && list[i]; i++)
    if (!strcmp(list[i], s))
      return i;
  return -1;
}

/* The fragment map of an atom: [lane * local + i] -> row * cols + col. */
static int32_t *atom_map(TlSimtVm *vm, const char *name, unsigned *local) {
  TlLayout l;
  TlErr err;
  bool ok = tl_layout_atom(&l, name, &err);
  tl_assert(ok);
  int64_t loc = tl_layout_local_size(&l);
  int32_t *map = TL_ARENA_NEWN(&vm->arena, int32_t, 32 * loc);
  int64_t idx[TL_LAYOUT_MAX_RANK];
  for (int64_t t = 0; t < 32; t++)
    for (int64_t i = 0; i < loc; i++) {
      ok = tl_layout_map(&l, t, i, idx, NULL);
      tl_assert(ok);
      map[t * loc + i] = (int32_t)(idx[0] * l.shape[1] + idx[1]);
    }
  *local = (unsigned)loc;
  return map;
}

/* The float type of an mma input type name (e4m3 and e5m2 are f8e4m3 and
 * f8e5m2), NULL for the others. */
static TlType *mma_float(TlContext *ctx, const char *name) {
  if (!strcmp(name, "f16"))
    return tl_type_f16(ctx);
  if (!strcmp(name, "bf16"))
    return tl_type_bf16(ctx);
  if (!strcmp(name, "e4m3"))
    return tl_type_float(ctx, 4, 3);
  if (!strcmp(name, "e5m2"))
    return tl_type_float(ctx, 5, 2);
  return NULL;
}

/* The form's row of the form table gives the shape, the element widths
 * and the atoms that place each lane's registers in the matrices. */
static Mma *compile_mma(TlSimtVm *vm, TlOp *op) {
  Mma *m = TL_ARENA_NEW(&vm->arena, Mma);
  const TlMmaForm *f = tl_simt_mma_form(op);
  tl_assert(f); /* the verifier accepts no other forms */
  m->m = f->m;
  m->n = f->n;
  m->k = f->k;
  m->bits = tl_mma_type_bits(f->a_type);
  m->a_float = mma_float(vm->ctx, f->a_type);
  m->b_float = mma_float(vm->ctx, f->b_type);
  m->in = m->a_float ? MI_FLOAT : f->b1_op[0] ? MI_B1 : MI_INT8;
  m->acc = !strcmp(f->acc_type, "f32")   ? MA_F32
           : !strcmp(f->acc_type, "f16") ? MA_F16
                                         : MA_S32;
  m->a_signed = !strcmp(f->a_type, "s8");
  m->b_signed = !strcmp(f->b_type, "s8");
  m->satfinite = tl_op_attr(op, "satfinite") != NULL;
  m->amap = atom_map(vm, f->a_atom, &m->alocal);
  m->bmap = atom_map(vm, f->b_atom, &m->blocal);
  m->cmap = atom_map(vm, f->c_atom, &m->clocal);
  return m;
}

static Wg *compile_wgmma(TlSimtVm *vm, TlOp *op) {
  Wg *w = TL_ARENA_NEW(&vm->arena, Wg);
  const TlWgmmaForm *f = tl_simt_wgmma_form(op);
  tl_assert(f); /* the verifier accepts no other forms */
  w->tiles = tl_op_num_results(op);
  w->mm.m = 64;
  w->mm.n = 8 * w->tiles;
  w->mm.k = f->k;
  w->mm.bits = tl_mma_type_bits(f->a_type);
  w->mm.a_float = mma_float(vm->ctx, f->a_type);
  w->mm.b_float = mma_float(vm->ctx, f->b_type);
  w->mm.in = w->mm.a_float ? MI_FLOAT : MI_INT8;
  w->mm.acc = !strcmp(f->acc_type, "f32") ? MA_F32 : MA_S32;
  w->mm.a_signed = !strcmp(f->a_type, "s8");
  w->mm.b_signed = !strcmp(f->b_type, "s8");
  w->a_regs = tl_simt_is_vec(tl_value_type(tl_op_operand(op, 0)));
  const char *am = str_attr(op, "a_major"), *bm = str_attr(op, "b_major");
  w->a_mn = am && !strcmp(am, "mn");
  w->b_mn = bm && !strcmp(bm, "mn");
  w->scale_d = tl_op_num_operands(op) == w->tiles + 3
                   ? -1
                   : (int)int_attr(op, "scale_d", 1);
  w->amap = atom_map(vm, f->a_atom, &w->alocal);
  w->cmap = atom_map(vm, f->c_atom, &w->clocal);
  if (w->a_regs) {
    TL_VEC(TlValue *) work = {0};
    TL_VEC(uint32_t) roots = {0};
    tl_vec_push(&work, tl_op_operand(op, 0));
    while (work.len) {
      TlValue *v = work.data[--work.len];
      TlOp *def = tl_value_def(v);
      TlOpId id = def ? tl_op_id(def) : TL_OP_SIMT_WGMMA;
      if (id == TL_OP_SIMT_BUILD || id == TL_OP_SIMT_EXTRACT ||
          id == TL_OP_ARITH_BITCAST || id == TL_OP_SIMT_BITCAST) {
        for (unsigned i = 0; i < tl_op_num_operands(def); i++)
          tl_vec_push(&work, tl_op_operand(def, i));
        continue;
      }
      tl_vec_push(&roots, slot_for(vm, v));
    }
    w->naroots = (unsigned)roots.len;
    w->aroots = TL_ARENA_NEWN(&vm->arena, uint32_t, roots.len + 1);
    for (size_t i = 0; i < roots.len; i++)
      w->aroots[i] = roots.data[i];
    tl_vec_free(&work);
    tl_vec_free(&roots);
  }
  return w;
}

static bool compile_block(TlSimtVm *vm, TlBlock *b, SBody *out);

static void find_try_wait(TlOp *op, void *user) {
  if (tl_op_id(op) == TL_OP_SIMT_MBARRIER_TRY_WAIT)
    *(bool *)user = true;
}

static bool compile_op(TlSimtVm *vm, TlOp *op, SInst *in) {
  static const char *const xyz[] = {"x", "y", "z", NULL};
  static const char *const prmt_modes[] = {"",    "f4e", "b4e",  "rc8",
                                           "ecl", "ecr", "rc16", NULL};
  static const char *const shfl_modes[] = {"idx", "bfly", "up", "down", NULL};
  in->op = op;
  in->code = tl_op_id(op);
  if (in->code == TL_OP_SCF_IF)
    tl_op_walk(op, find_try_wait, &in->coop, false);
  if (in->code == TL_OP_SIMT_WGMMA || in->code == TL_OP_SIMT_WGMMA_FENCE ||
      in->code == TL_OP_SIMT_WGMMA_COMMIT || in->code == TL_OP_SIMT_WGMMA_WAIT)
    vm->compiling_wgmma = true;
  in->run = runner_of[in->code];
  if (in->run == SR_NONE) {
    tl_op_emit_error(op, "the thread-level VM does not execute this op");
    return false;
  }
  in->nin = tl_op_num_operands(op);
  in->nout = tl_op_num_results(op);
  in->in = TL_ARENA_NEWN(&vm->arena, uint32_t, in->nin + 1);
  in->out = TL_ARENA_NEWN(&vm->arena, uint32_t, in->nout + 1);
  for (unsigned i = 0; i < in->nin; i++) {
    TlValue *v = tl_op_operand(op, i);
    if (!holdable(tl_value_type(v))) {
      tl_op_emit_error(op,
                       "operand #%u has a type the thread-level VM cannot "
                       "hold in a register",
                       i);
      return false;
    }
    in->in[i] = slot_for(vm, v);
  }
  for (unsigned i = 0; i < in->nout; i++) {
    TlValue *v = tl_op_result(op, i);
    if (!holdable(tl_value_type(v))) {
      tl_op_emit_error(op,
                       "result #%u has a type the thread-level VM cannot "
                       "hold in a register",
                       i);
      return false;
    }
    in->out[i] = slot_for(vm, v);
  }
  TlType *rt = in->nout ? tl_value_type(tl_op_result(op, 0)) : NULL;
  TlType *ot = in->nin ? tl_value_type(tl_op_operand(op, 0)) : NULL;
  if (in->code == TL_OP_SIMT_PTR_ADD)
    ot = tl_value_type(tl_op_operand(op, 1));
  if (rt && !tl_simt_is_ptr(rt))
    in->et = etype(vm, elem_of(rt));
  if (ot && !tl_simt_is_ptr(ot) && !tl_simt_is_tensormap(ot))
    in->et2 = etype(vm, elem_of(ot));
  if (!in->et)
    in->et = in->et2;
  if (rt && !tl_simt_is_ptr(rt)) {
    in->vn_out = words_of(rt);
    in->vb_out = tl_type_bitwidth(elem_of(rt));
  }
  if (ot && !tl_simt_is_ptr(ot) && !tl_simt_is_tensormap(ot)) {
    in->vn_in = words_of(ot);
    in->vb_in = tl_type_bitwidth(elem_of(ot));
  }
  switch (in->code) {
  case TL_OP_ARITH_CONSTANT: {
    TlAttr *a = tl_op_attr(op, "value");
    in->konst = tl_attr_kind(a) == TL_ATTR_INT
                    ? tl_attr_uint_value(a) & in->et->mask
                    : e_fencode(in->et, tl_attr_float_value(a));
    break;
  }
  case TL_OP_ARITH_CMPI:
    in->pred = tl_cmpi_predicate_of(op);
    break;
  case TL_OP_ARITH_CMPF:
    in->pred = tl_cmpf_predicate_of(op);
    break;
  case TL_OP_SIMT_THREAD_ID:
  case TL_OP_SIMT_BLOCK_ID:
  case TL_OP_SIMT_BLOCK_DIM:
  case TL_OP_SIMT_GRID_DIM:
    in->imm = find_name(xyz, str_attr(op, "dim"));
    break;
  case TL_OP_SIMT_LOAD:
  case TL_OP_SIMT_STORE: {
    TlType *vt = in->code == TL_OP_SIMT_LOAD ? rt : ot;
    in->bytes = tl_simt_value_bits(vt) / 8;
    in->vn_in = words_of(vt);
    in->vb_in = tl_type_bitwidth(elem_of(vt));
    in->imm2 = int_attr(op, "align", in->bytes);
    break;
  }
  case TL_OP_SIMT_CP_ASYNC:
    in->bytes = (unsigned)int_attr(op, "size", 16);
    break;
  case TL_OP_SIMT_ATOM:
    in->pred = (int)tl_atomic_kind_of(op);
    break;
  case TL_OP_SIMT_CP_ASYNC_WAIT:
    in->imm = int_attr(op, "pending", 0);
    break;
  case TL_OP_SIMT_BARRIER:
    in->imm = int_attr(op, "id", 0);
    in->imm2 = int_attr(op, "threads", 0);
    break;
  case TL_OP_SIMT_LDMATRIX: {
    char name[32];
    in->imm = int_attr(op, "num", 1);
    in->flag = tl_op_attr(op, "trans") != NULL;
    snprintf(name, sizeof name, "ldmatrix_x%lld%s", (long long)in->imm,
             in->flag ? "_trans" : "");
    in->map = atom_map(vm, name, &in->local);
    break;
  }
  case TL_OP_SIMT_MMA:
    in->mma = compile_mma(vm, op);
    break;
  case TL_OP_SIMT_WGMMA:
    in->wg = compile_wgmma(vm, op);
    break;
  case TL_OP_SIMT_WGMMA_WAIT:
    in->imm = int_attr(op, "n", 0);
    break;
  case TL_OP_SIMT_WGMMA_DESC:
    in->imm = int_attr(op, "lbo", 16);
    in->imm2 = int_attr(op, "sbo", 0);
    in->pred = tl_simt_wgmma_swizzle_code(str_attr(op, "swizzle"));
    break;
  case TL_OP_SIMT_SHFL:
    in->pred = find_name(shfl_modes, str_attr(op, "mode"));
    break;
  case TL_OP_SIMT_PRMT:
    in->pred =
        str_attr(op, "mode") ? find_name(prmt_modes, str_attr(op, "mode")) : 0;
    break;
  case TL_OP_SIMT_LOP3:
    in->imm = int_attr(op, "lut", 0);
    break;
  case TL_OP_SIMT_MATH:
    in->imm = find_name(math_fns, str_attr(op, "fn"));
    break;
  case TL_OP_SIMT_CVT:
    in->rnd = sv_round_parse(str_attr(op, "rounding"));
    in->flag = tl_op_attr(op, "sat") != NULL;
    break;
  case TL_OP_SIMT_CVT_E4M3X2:
    in->imm = int_attr(op, "half", 0);
    break;
  case TL_OP_SIMT_CVT_PACK:
    in->rnd =
        str_attr(op, "rounding") && !strcmp(str_attr(op, "rounding"), "rz")
            ? SV_RZ
            : SV_RN;
    break;
  case TL_OP_SIMT_EXTRACT:
    in->imm = int_attr(op, "index", 0);
    break;
  default:
    break;
  }
  in->nregions = tl_op_num_regions(op);
  if (in->nregions) {
    in->regions = TL_ARENA_NEWN(&vm->arena, SBody, in->nregions);
    for (unsigned r = 0; r < in->nregions; r++) {
      TlBlock *b = tl_region_first_block(tl_op_region(op, r));
      if (b && !compile_block(vm, b, &in->regions[r]))
        return false;
    }
  }
  return true;
}

static bool compile_block(TlSimtVm *vm, TlBlock *b, SBody *out) {
  unsigned n = 0;
  for (TlOp *op = tl_block_first_op(b); op; op = tl_op_next(op))
    n++;
  out->nargs = tl_block_num_args(b);
  out->args = TL_ARENA_NEWN(&vm->arena, uint32_t, out->nargs + 1);
  for (unsigned i = 0; i < out->nargs; i++) {
    TlValue *v = tl_block_arg(b, i);
    if (!holdable(tl_value_type(v))) {
      tl_emit_error(vm->ctx, tl_value_loc(v),
                    "block argument #%u has a type the thread-level VM "
                    "cannot hold in a register",
                    i);
      return false;
    }
    out->args[i] = slot_for(vm, v);
  }
  out->insts = TL_ARENA_NEWN(&vm->arena, SInst, n + 1);
  out->n = 0;
  for (TlOp *op = tl_block_first_op(b); op; op = tl_op_next(op)) {
    TlOpId id = tl_op_id(op);
    if (id == TL_OP_SCF_YIELD || id == TL_OP_SCF_CONDITION ||
        id == TL_OP_BUILTIN_RETURN) {
      out->nyield = tl_op_num_operands(op);
      out->yield = TL_ARENA_NEWN(&vm->arena, uint32_t, out->nyield + 1);
      for (unsigned i = 0; i < out->nyield; i++)
        out->yield[i] = slot_for(vm, tl_op_operand(op, i));
      continue;
    }
    if (!compile_op(vm, op, &out->insts[out->n++]))
      return false;
  }
  return true;
}

static SKernel *compile_kernel(TlSimtVm *vm, TlOp *func) {
  SKernel *k = pmap_get(&vm->kernels, func);
  if (k)
    return k;
  k = TL_ARENA_NEW(&vm->arena, SKernel);
  pmap_free(&vm->slots_of);
  vm->words.len = 0;
  vm->compiling_wgmma = false;
  bool ok = compile_block(vm, entry(func), &k->body);
  k->has_wgmma = vm->compiling_wgmma;
  pmap_free(&vm->slots_of);
  if (!ok)
    return NULL;
  k->nslots = (uint32_t)vm->words.len;
  k->words = TL_ARENA_NEWN(&vm->arena, uint32_t, k->nslots + 1);
  k->off = TL_ARENA_NEWN(&vm->arena, uint32_t, k->nslots + 1);
  uint32_t total = 0;
  for (uint32_t s = 0; s < k->nslots; s++) {
    k->words[s] = vm->words.data[s];
    k->off[s] = total;
    total += k->words[s];
  }
  k->total = total;
  pmap_put(&vm->kernels, func, k);
  return k;
}

/*===--- Registers -------------------------------------------------------===*/

/* Thread t's words of slot s. */
static inline uint64_t *reg(TlSimtVm *vm, uint32_t s, int t) {
  return vm->rf + (size_t)vm->k->off[s] * (size_t)vm->T +
         (size_t)t * vm->k->words[s];
}

/* Copies slots src[0..n) to dst[0..n) for the threads of m, through a
 * scratch copy (a loop may yield its arguments in another order). */
static void copy_vals(TlSimtVm *vm, const uint32_t *dst, const uint32_t *src,
                      unsigned n, const Mask *m) {
  size_t total = 0;
  for (unsigned i = 0; i < n; i++)
    total += vm->k->words[src[i]];
  vm->scratch.len = 0;
  for (size_t i = 0; i < total; i++)
    tl_vec_push(&vm->scratch, 0);
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    size_t w = 0;
    for (unsigned i = 0; i < n; i++) {
      uint32_t nw = vm->k->words[src[i]];
      memcpy(vm->scratch.data + w, reg(vm, src[i], t), nw * 8);
      w += nw;
    }
    w = 0;
    for (unsigned i = 0; i < n; i++) {
      uint32_t nw = vm->k->words[dst[i]];
      memcpy(reg(vm, dst[i], t), vm->scratch.data + w, nw * 8);
      w += nw;
    }
  }
  if (!vm->k->has_wgmma)
    return;
  /* Passing a value on (yield, loop arguments) renames its registers: a
   * pending wgmma result stays pending, a write stays unfenced. */
  vm->scratch.len = 0;
  for (int j = 0; j < m->n; j++) {
    size_t T = (size_t)vm->T, t = (size_t)m->t[j];
    for (unsigned i = 0; i < n; i++)
      tl_vec_push(&vm->scratch, (uint64_t)vm->regmark[src[i] * T + t] << 32 |
                                    vm->wstamp[src[i] * T + t]);
    for (unsigned i = 0; i < n; i++) {
      uint64_t x = vm->scratch.data[(size_t)j * n + i];
      vm->regmark[dst[i] * T + t] = (uint32_t)(x >> 32);
      vm->wstamp[dst[i] * T + t] = (uint32_t)x;
    }
  }
}

/* Bit fields of a register value: element i of width eb at bit i * eb. */
static uint64_t get_bits(const uint64_t *bits, unsigned pos, unsigned eb) {
  unsigned w = pos / 64, o = pos % 64;
  uint64_t v = bits[w] >> o;
  if (o && o + eb > 64)
    v |= bits[w + 1] << (64 - o);
  return eb == 64 ? v : v & ((1ull << eb) - 1);
}
static void set_bits(uint64_t *bits, unsigned pos, unsigned eb, uint64_t v) {
  unsigned w = pos / 64, o = pos % 64;
  uint64_t mask = eb == 64 ? ~0ull : (1ull << eb) - 1;
  v &= mask;
  bits[w] = (bits[w] & ~(mask << o)) | (v << o);
  if (o && o + eb > 64) {
    unsigned hi = o + eb - 64;
    uint64_t hm = (1ull << hi) - 1;
    bits[w + 1] = (bits[w + 1] & ~hm) | (v >> (64 - o));
  }
}
static void pack(const uint64_t *w, unsigned n, unsigned eb, uint64_t *bits) {
  memset(bits, 0, 17 * 8);
  for (unsigned i = 0; i < n; i++)
    set_bits(bits, i * eb, eb, w[i]);
}
static void unpack(const uint64_t *bits, unsigned n, unsigned eb, uint64_t *w) {
  for (unsigned i = 0; i < n; i++)
    w[i] = get_bits(bits, i * eb, eb);
}

/*===--- Memory ----------------------------------------------------------===*/

static uint64_t global_base(unsigned param) {
  return tl_simt_vm_buffer_address(param);
}

static const char *verb_of(bool write) { return write ? "writes" : "reads"; }

static bool aligned(TlSimtVm *vm, SInst *in, int t, uint64_t addr,
                    uint64_t align, unsigned n, bool write, bool shared,
                    const char *why) {
  if (!(addr & (align - 1)))
    return true;
  if (shared)
    return sv_error(vm, in->op,
                    "misaligned shared access: %s %s %u bytes at shared "
                    "address %llu, which is not a multiple of %llu (%s)",
                    who(vm, t).s, verb_of(write), n, (unsigned long long)addr,
                    (unsigned long long)align, why);
  unsigned p = (unsigned)(addr >> GLOBAL_SHIFT) - 1;
  return sv_error(vm, in->op,
                  "misaligned global access: %s %s %u bytes at offset %llu "
                  "of '%s', which is not a multiple of %llu (%s)",
                  who(vm, t).s, verb_of(write), n,
                  (unsigned long long)(addr & GLOBAL_OFF_MASK),
                  p < vm->nargs ? tl_simt_vm_param_name(vm->func, p) : "?",
                  (unsigned long long)align, why);
}

/* Host bytes of a global access of n bytes, or NULL after an error. */
static uint8_t *global_at(TlSimtVm *vm, SInst *in, int t, uint64_t addr,
                          unsigned n, bool write) {
  uint64_t p = (addr >> GLOBAL_SHIFT) - 1, off = addr & GLOBAL_OFF_MASK;
  if ((addr >> GLOBAL_SHIFT) == 0 || p >= vm->nargs ||
      vm->args[p].kind != TL_VM_ARG_BUFFER) {
    sv_error(vm, in->op,
             "global access outside every buffer: %s %s %u bytes at address "
             "0x%llx",
             who(vm, t).s, verb_of(write), n, (unsigned long long)addr);
    return NULL;
  }
  const TlVmArg *a = &vm->args[p];
  if (off + n > a->size) {
    sv_error(vm, in->op,
             "out-of-bounds global access: %s %s %u bytes at offset %llu of "
             "'%s', which has %zu bytes",
             who(vm, t).s, verb_of(write), n, (unsigned long long)off,
             tl_simt_vm_param_name(vm->func, (unsigned)p), a->size);
    return NULL;
  }
  return (uint8_t *)a->data + off;
}

static bool shared_in_bounds(TlSimtVm *vm, SInst *in, int t, uint64_t addr,
                             unsigned n, bool write) {
  if (addr <= (uint64_t)vm->smem_size && n <= vm->smem_size - (int64_t)addr)
    return true;
  return sv_error(vm, in->op,
                  "out-of-bounds shared access: %s %s %u bytes at shared "
                  "address %llu, but the block has %lld bytes of shared "
                  "memory",
                  who(vm, t).s, verb_of(write), n, (unsigned long long)addr,
                  (long long)vm->smem_size);
}

static SByte *sbyte_now(TlSimtVm *vm, uint64_t b) {
  SByte *s = &vm->sbytes[b];
  if (s->epoch != vm->epoch) {
    s->epoch = vm->epoch;
    s->writer = W_NONE;
    s->reader = W_NONE;
    s->rwarps = 0;
    s->rtime = 0;
  }
  return s;
}

/* dst = max(dst, src) over the block's threads. */
static void clock_join(const TlSimtVm *vm, uint64_t *dst, const uint64_t *src) {
  for (int r = 0; r < vm->T; r++)
    if (src[r] > dst[r])
      dst[r] = src[r];
}

static bool pending_error(TlSimtVm *vm, SInst *in, int t, uint64_t b,
                          bool write) {
  const Copy *c = &vm->copies.data[vm->sbytes[b].pending - 1];
  sv_error(vm, in->op,
           "%s %s shared address %llu while a cp.async into it is pending "
           "(no cp.async.wait_group has completed it)",
           who(vm, t).s, verb_of(write), (unsigned long long)b);
  sv_note(vm, c->op, "the cp.async, by %s", who(vm, c->thread).s);
  return false;
}

/* Whether thread t may access shared byte b as far as TMA goes: no load
 * into it is in flight, and a load that landed there since the last
 * bar.sync completed a phase of its mbarrier that t saw end (a
 * try_wait that returned true). Reports the error otherwise. */
static bool tma_ready(TlSimtVm *vm, SInst *in, int t, uint64_t b,
                      bool write) {
  const SByte *s = &vm->sbytes[b];
  if (s->tma) {
    const Tma *c = &vm->tmas.data[s->tma - 1];
    const MBar *m = &vm->mbars.data[c->bar];
    sv_error(vm, in->op,
             "%s %s shared address %llu while a TMA load into it is "
             "pending (phase %u of the mbarrier at shared address %u has "
             "not completed)",
             who(vm, t).s, verb_of(write), (unsigned long long)b, m->phases,
             m->addr);
    sv_note(vm, c->op, "the TMA load, by %s", who(vm, c->thread).s);
    return false;
  }
  if (s->tma_bar && s->tma_epoch == vm->epoch &&
      vm->seen[(size_t)t * MAX_MBARS + s->tma_bar - 1] < s->tma_phase) {
    const MBar *m = &vm->mbars.data[s->tma_bar - 1];
    return sv_error(vm, in->op,
                    "%s %s shared address %llu, written by a TMA load that "
                    "completed phase %u of the mbarrier at shared address "
                    "%u, without having waited for that phase (no "
                    "simt.mbarrier_try_wait of it returned true in this "
                    "thread, and no bar.sync came after one)",
                    who(vm, t).s, verb_of(write), (unsigned long long)b,
                    s->tma_phase - 1, m->addr);
  }
  return true;
}

/* A write to a byte that a wgmma in flight reads: the note points at
 * the (first such) wgmma. */
static bool wg_read_error(TlSimtVm *vm, SInst *in, int t, uint64_t b) {
  sv_error(vm, in->op,
           "%s writes shared address %llu while a wgmma that reads it is in "
           "flight (no simt.wgmma_wait has retired it)",
           who(vm, t).s, (unsigned long long)b);
  for (size_t i = 0; i < vm->wgops.len; i++) {
    const WgOp *w = &vm->wgops.data[i];
    if (w->retired)
      continue;
    for (uint32_t j = 0; j < w->n; j++)
      if (vm->wgreads.data[w->first + j] == b) {
        sv_note(vm, w->op, "the wgmma, by warpgroup %d", w->wg);
        return false;
      }
  }
  return false;
}

/* Reads n shared bytes for thread t: bounds, pending copies,
 * uninitialised bytes and races are errors. */
static bool shared_read(TlSimtVm *vm, SInst *in, int t, uint64_t addr,
                        unsigned n, uint8_t *out) {
  if (!shared_in_bounds(vm, in, t, addr, n, false))
    return false;
  for (unsigned i = 0; i < n; i++) {
    uint64_t b = addr + i;
    SByte *s = &vm->sbytes[b];
    if (s->pending)
      return pending_error(vm, in, t, b, false);
    if (!tma_ready(vm, in, t, b, false))
      return false;
    if (!s->init)
      return sv_error(vm, in->op,
                      "%s reads uninitialised shared memory: byte %llu was "
                      "never written",
                      who(vm, t).s, (unsigned long long)b);
    s = sbyte_now(vm, b);
    if (s->writer >= 0 && s->writer != t) {
      sv_error(vm, in->op,
               "data race: %s reads shared address %llu, written by %s since "
               "the last barrier",
               who(vm, t).s, (unsigned long long)b, who(vm, s->writer).s);
      sv_note(vm, s->wop, "the write");
      return false;
    }
    s->reader = s->reader == W_NONE || s->reader == t ? t : R_MANY;
    s->rwarps |= 1u << (t / 32);
    s->rtime = ++vm->now;
    out[i] = vm->smem[b];
  }
  return true;
}

static bool shared_write(TlSimtVm *vm, SInst *in, int t, uint64_t addr,
                         unsigned n, const uint8_t *src) {
  if (!shared_in_bounds(vm, in, t, addr, n, true))
    return false;
  for (unsigned i = 0; i < n; i++) {
    uint64_t b = addr + i;
    if (vm->sbytes[b].pending)
      return pending_error(vm, in, t, b, true);
    if (!tma_ready(vm, in, t, b, true))
      return false;
    if (vm->sbytes[b].wg_reads)
      return wg_read_error(vm, in, t, b);
    SByte *s = sbyte_now(vm, b);
    if (s->writer >= 0 && s->writer != t) {
      sv_error(vm, in->op,
               "data race: %s writes shared address %llu, also written by %s "
               "since the last barrier",
               who(vm, t).s, (unsigned long long)b, who(vm, s->writer).s);
      sv_note(vm, s->wop, "the other write");
      return false;
    }
    if (s->reader == R_MANY || (s->reader >= 0 && s->reader != t)) {
      if (s->reader == R_MANY)
        return sv_error(vm, in->op,
                        "data race: %s writes shared address %llu, read by "
                        "other threads since the last barrier",
                        who(vm, t).s, (unsigned long long)b);
      return sv_error(vm, in->op,
                      "data race: %s writes shared address %llu, read by %s "
                      "since the last barrier",
                      who(vm, t).s, (unsigned long long)b,
                      who(vm, s->reader).s);
    }
    s->writer = t;
    s->wop = in->op;
    s->init = 1;
    vm->smem[b] = src[i];
  }
  return true;
}

/* The bytes of an access of n bytes for thread t, read (or written from
 * buf), with the address's alignment checked against `align`. */
static bool access(TlSimtVm *vm, SInst *in, int t, bool shared, uint64_t addr,
                   unsigned n, uint64_t align, bool write, uint8_t *buf) {
  const char *why =
      align > n ? "the op's alignment attribute" : "the access size";
  if (shared) {
    if (!shared_in_bounds(vm, in, t, addr, n, write) ||
        !aligned(vm, in, t, addr, align, n, write, true, why))
      return false;
    return write ? shared_write(vm, in, t, addr, n, buf)
                 : shared_read(vm, in, t, addr, n, buf);
  }
  uint8_t *p = global_at(vm, in, t, addr, n, write);
  if (!p || !aligned(vm, in, t, addr, align, n, write, false, why))
    return false;
  if (write)
    memcpy(p, buf, n);
  else
    memcpy(buf, p, n);
  return true;
}

/*===--- Atomics ---------------------------------------------------------===*/

/* atom and atom.cas: each active thread in turn (the order the GPU picks
 * is unspecified; the VM's is the threads' order) reads the element (or
 * the f16 pair), applies the operation and writes it back, receiving the
 * old value. The address must be aligned to the access size, as PTX
 * requires. Fences order nothing here: the VM runs a block's threads in
 * lock-step and the blocks one after another, so every write is visible
 * to every later access. */
static bool exec_atom(TlSimtVm *vm, SInst *in, const Mask *m) {
  bool cas = in->code == TL_OP_SIMT_ATOM_CAS;
  unsigned n = in->vn_out, eb = in->vb_out / 8, bytes = n * eb;
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t addr = reg(vm, in->in[0], t)[0];
    uint8_t *p = global_at(vm, in, t, addr, bytes, true);
    if (!p || !aligned(vm, in, t, addr, bytes, bytes, true, false,
                       "an atomic access is aligned to its size"))
      return false;
    const uint64_t *v = reg(vm, in->in[cas ? 2 : 1], t);
    uint64_t *out = reg(vm, in->out[0], t);
    for (unsigned i = 0; i < n; i++) {
      uint64_t old = 0, x;
      for (unsigned k = 0; k < eb; k++)
        old |= (uint64_t)p[i * eb + k] << (8 * k);
      if (cas)
        x = old == reg(vm, in->in[1], t)[0] ? v[0] : old;
      else
        x = vm_atomic_apply(in->et, (TlAtomicKind)in->pred, old, v[i]);
      for (unsigned k = 0; k < eb; k++)
        p[i * eb + k] = (uint8_t)(x >> (8 * k));
      out[i] = old;
    }
  }
  return true;
}

/*===--- Shared memory and copies ----------------------------------------===*/

static void complete_copy(TlSimtVm *vm, uint32_t id) {
  Copy *c = &vm->copies.data[id];
  for (uint32_t i = 0; i < c->size; i++) {
    uint64_t b = c->dst + i;
    SByte *s = sbyte_now(vm, b);
    s->pending = 0;
    s->init = 1;
    s->writer = c->thread;
    s->wop = c->op;
    vm->smem[b] = c->data[i];
  }
}

static bool exec_cp_async(TlSimtVm *vm, SInst *in, const Mask *m) {
  unsigned size = in->bytes;
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t dst = reg(vm, in->in[0], t)[0], src = reg(vm, in->in[1], t)[0];
    uint64_t n = size;
    if (in->nin == 3) {
      uint64_t c = reg(vm, in->in[2], t)[0];
      n = c;
      if (n > size)
        return sv_error(
            vm, in->op,
            "%s copies with source size %lld, more than the %u "
            "bytes of the copy",
            who(vm, t).s,
            (long long)e_sval(
                etype(vm, tl_value_type(tl_op_operand(in->op, 2))), c),
            size);
    }
    if (!shared_in_bounds(vm, in, t, dst, size, true) ||
        !aligned(vm, in, t, dst, size, size, true, true, "the copy size"))
      return false;
    Copy c;
    memset(&c, 0, sizeof c);
    if (n) {
      uint8_t *p = global_at(vm, in, t, src, (unsigned)n, false);
      if (!p || !aligned(vm, in, t, src, size, (unsigned)n, false, false,
                         "the copy size"))
        return false;
      memcpy(c.data, p, n);
    } else if (!aligned(vm, in, t, src, size, 0, false, false,
                        "the copy size")) {
      return false;
    }
    for (unsigned i = 0; i < size; i++) {
      if (vm->sbytes[dst + i].pending)
        return pending_error(vm, in, t, dst + i, true);
      if (vm->sbytes[dst + i].wg_reads)
        return wg_read_error(vm, in, t, dst + i);
    }
    c.thread = t;
    c.group = GROUP_OPEN;
    c.dst = (uint32_t)dst;
    c.size = size;
    c.op = in->op;
    uint32_t id = (uint32_t)vm->copies.len;
    tl_vec_push(&vm->copies, c);
    tl_vec_push(&vm->live, id);
    for (unsigned i = 0; i < size; i++)
      vm->sbytes[dst + i].pending = id + 1;
  }
  return true;
}

static void mark_active(TlSimtVm *vm, const Mask *m, uint8_t v) {
  for (int j = 0; j < m->n; j++)
    vm->active[m->t[j]] = v;
}

static void exec_commit(TlSimtVm *vm, const Mask *m) {
  mark_active(vm, m, 1);
  for (size_t i = 0; i < vm->live.len; i++) {
    Copy *c = &vm->copies.data[vm->live.data[i]];
    if (c->group == GROUP_OPEN && vm->active[c->thread])
      c->group = vm->committed[c->thread];
  }
  /* A commit with no copies makes an empty group (PTX). */
  for (int j = 0; j < m->n; j++)
    vm->committed[m->t[j]]++;
  mark_active(vm, m, 0);
}

/* cp.async.wait_group N: completes this thread's committed groups but the
 * newest N. */
static void exec_wait(TlSimtVm *vm, SInst *in, const Mask *m) {
  mark_active(vm, m, 1);
  size_t keep = 0;
  for (size_t i = 0; i < vm->live.len; i++) {
    uint32_t id = vm->live.data[i];
    Copy *c = &vm->copies.data[id];
    if (vm->active[c->thread] && c->group != GROUP_OPEN &&
        (uint64_t)c->group + (uint64_t)in->imm < vm->committed[c->thread])
      complete_copy(vm, id);
    else
      vm->live.data[keep++] = id;
  }
  vm->live.len = keep;
  mark_active(vm, m, 0);
}

/*===--- mbarrier and TMA ------------------------------------------------===*/

/* Phases and transactions as the PTX ISA defines them: a phase completes
 * when its arrivals are all in and its transaction count is back to zero;
 * the next phase then expects the init count again. A TMA load is one
 * thread's copy of a tensor map's box into shared memory whose bytes count
 * against its mbarrier's transaction count at issue; the VM lands the data
 * when that phase completes (one of the executions the GPU may have), and
 * until then the bytes are pending: touching them is an error, as is
 * touching them afterwards in a thread that has not seen the phase end.
 * Waiting on a phase that nothing can complete any more is a deadlock,
 * reported once the waits have failed many times over with no change to
 * the barrier. */

/* try_waits that fail in a row, per thread of the block, with the barrier
 * unchanged, before the VM calls it a deadlock: the VM runs a block in
 * lock-step, so a loop polling a barrier that its body never touches has
 * no way out long before this. */
#define DEADLOCK_POLLS 1000

/* The mbarrier at thread t's address operand 0, or NULL after an error.
 * `init` creates (or resets) it. */
static MBar *mbar_at(TlSimtVm *vm, SInst *in, int t, bool init) {
  uint64_t a = reg(vm, in->in[in->code == TL_OP_SIMT_TMA_LOAD ? 2 : 0], t)[0];
  if (!shared_in_bounds(vm, in, t, a, 8, init) ||
      !aligned(vm, in, t, a, 8, 8, init, true, "an mbarrier is 8 bytes"))
    return NULL;
  for (size_t i = 0; i < vm->mbars.len; i++)
    if (vm->mbars.data[i].addr == a)
      return &vm->mbars.data[i];
  if (!init) {
    sv_error(vm, in->op,
             "%s uses the mbarrier at shared address %llu before any "
             "simt.mbarrier_init of it",
             who(vm, t).s, (unsigned long long)a);
    return NULL;
  }
  if (vm->mbars.len == MAX_MBARS) {
    sv_error(vm, in->op,
             "%s initialises a %dth mbarrier; the VM keeps %d a block",
             who(vm, t).s, MAX_MBARS + 1, MAX_MBARS);
    return NULL;
  }
  MBar m;
  memset(&m, 0, sizeof m);
  m.addr = (uint32_t)a;
  tl_vec_push(&vm->mbars, m);
  return &vm->mbars.data[vm->mbars.len - 1];
}

/* Lands every TMA load of barrier `bar` still in flight: its bytes become
 * the shared memory's, ready for the threads that see this phase end. */
static void land(TlSimtVm *vm, uint32_t bar) {
  for (size_t i = 0; i < vm->tmas.len; i++) {
    Tma *c = &vm->tmas.data[i];
    if (c->landed || c->bar != bar)
      continue;
    for (uint32_t k = 0; k < c->span; k++) {
      if (!c->mask[k])
        continue;
      uint64_t b = c->dst + k;
      SByte *s = sbyte_now(vm, b);
      s->tma = 0;
      s->tma_bar = bar + 1;
      s->tma_phase = vm->mbars.data[bar].phases;
      s->tma_epoch = vm->epoch;
      s->init = 1;
      s->writer = W_NONE;
      s->reader = W_NONE;
      s->wop = c->op;
      vm->smem[b] = c->data[k];
    }
    c->landed = true;
  }
}

/* Completes the current phase when its arrivals and bytes are all in. */
static void mbar_update(TlSimtVm *vm, MBar *m) {
  m->stale = 0;
  if (m->missing || m->tx)
    return;
  size_t bi = (size_t)(m - vm->mbars.data), T = (size_t)vm->T;
  memcpy(vm->mdone + (bi * 2 + (m->phases & 1)) * T, vm->mpend + bi * T,
         sizeof(uint64_t) * T);
  memset(vm->mpend + bi * T, 0, sizeof(uint64_t) * T);
  m->phases++;
  m->missing = m->count;
  land(vm, (uint32_t)(m - vm->mbars.data));
}

/* A 32-bit count operand i of thread t, checked against lo..hi. */
static bool count_operand(TlSimtVm *vm, SInst *in, int t, unsigned i,
                          const char *what, int64_t lo, int64_t hi,
                          int64_t *out) {
  const EType *e = etype(vm, tl_value_type(tl_op_operand(in->op, i)));
  int64_t v = e_sval(e, reg(vm, in->in[i], t)[0]);
  if (v < lo || v > hi)
    return sv_error(vm, in->op, "%s gives %s %lld, outside %lld..%lld",
                    who(vm, t).s, what, (long long)v, (long long)lo,
                    (long long)hi);
  *out = v;
  return true;
}

/* Thread t arrives at mbarrier bi: its knowledge and the arrival itself
 * join the current phase's. */
static void arrive_clock(TlSimtVm *vm, uint32_t bi, int t) {
  uint64_t *p = vm->mpend + (size_t)bi * vm->T;
  clock_join(vm, p, vm->know + (size_t)t * vm->T);
  p[t] = ++vm->now;
}

static bool exec_mbarrier(TlSimtVm *vm, SInst *in, const Mask *m) {
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    MBar *b = mbar_at(vm, in, t, in->code == TL_OP_SIMT_MBARRIER_INIT);
    if (!b)
      return false;
    uint32_t bi = (uint32_t)(b - vm->mbars.data);
    int64_t v = 0;
    bool arrives = in->code == TL_OP_SIMT_MBARRIER_ARRIVE ||
                   in->code == TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX;
    if (arrives && !b->missing)
      return sv_error(vm, in->op,
                      "%s arrives at the mbarrier at shared address %u, "
                      "whose phase %u has all its %u arrivals (it waits for "
                      "%lld transaction bytes)",
                      who(vm, t).s, b->addr, b->phases, b->count,
                      (long long)b->tx);
    switch (in->code) {
    case TL_OP_SIMT_MBARRIER_INIT:
      if (!count_operand(vm, in, t, 1, "an arrival count", 1, (1 << 20) - 1,
                         &v))
        return false;
      for (size_t i = 0; i < vm->tmas.len; i++)
        if (!vm->tmas.data[i].landed && vm->tmas.data[i].bar == bi) {
          sv_error(vm, in->op,
                   "%s initialises the mbarrier at shared address %u while "
                   "a TMA load completing on it is pending",
                   who(vm, t).s, b->addr);
          sv_note(vm, vm->tmas.data[i].op, "the TMA load");
          return false;
        }
      b->count = b->missing = (uint32_t)v;
      b->tx = 0;
      b->phases = 0;
      memset(vm->mpend + (size_t)bi * vm->T, 0, sizeof(uint64_t) * (size_t)vm->T);
      memset(vm->mdone + (size_t)bi * 2 * vm->T, 0,
             sizeof(uint64_t) * 2 * (size_t)vm->T);
      b->stale = 0;
      b->init_op = in->op;
      for (int k = 0; k < vm->T; k++)
        vm->seen[(size_t)k * MAX_MBARS + bi] = 0;
      break;
    case TL_OP_SIMT_MBARRIER_EXPECT_TX:
    case TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX:
      if (!count_operand(vm, in, t, 1, "a transaction count", 0,
                         (1 << 20) - 1, &v))
        return false;
      /* arrive.expect_tx: the bytes first, then the arrival. */
      b->tx += v;
      if (in->code == TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX) {
        arrive_clock(vm, bi, t);
        b->missing--;
      }
      mbar_update(vm, b);
      break;
    case TL_OP_SIMT_MBARRIER_ARRIVE:
      arrive_clock(vm, bi, t);
      b->missing--;
      mbar_update(vm, b);
      break;
    case TL_OP_SIMT_MBARRIER_TRY_WAIT: {
      uint64_t parity = reg(vm, in->in[1], t)[0] & 1;
      bool done = (b->phases & 1) != parity;
      reg(vm, in->out[0], t)[0] = done;
      if (done) {
        vm->seen[(size_t)t * MAX_MBARS + bi] = b->phases;
        clock_join(vm, vm->know + (size_t)t * vm->T,
                   vm->mdone + ((size_t)bi * 2 + parity) * vm->T);
        break;
      }
      if (++b->stale > (uint64_t)DEADLOCK_POLLS * (uint64_t)vm->T) {
        sv_error(vm, in->op,
                 "deadlock: %s waits for phase %u of the mbarrier at shared "
                 "address %u, which nothing can complete any more: %u of its "
                 "%u arrivals are missing and its transaction count is %lld "
                 "bytes",
                 who(vm, t).s, b->phases, b->addr, b->missing, b->count,
                 (long long)b->tx);
        sv_note(vm, b->init_op, "the mbarrier's initialisation");
        return false;
      }
      break;
    }
    default:
      TL_UNREACHABLE("not an mbarrier op");
    }
  }
  return true;
}

/* Applies the swizzle of a tensor map to a shared address: the 16-byte
 * chunk index (bits 4..6) XOR the 128-byte row index (bits 7..9), masked
 * to the span's chunks (32 B: 1 bit, 64 B: 2, 128 B: 3). The pattern
 * repeats every 8 rows of 128 bytes. */
static uint64_t swizzle(uint64_t a, unsigned span) {
  if (!span)
    return a;
  uint64_t mask = span / 16 - 1;
  return a ^ (((a >> 7) & mask) << 4);
}

/* For thread t, per warp w, the earliest of the latest arrivals of w's
 * threads (other than t) ordered before t: reads of w up to that time are
 * ordered before what t does next (UINT64_MAX for a warp of no thread
 * but t). */
static void warp_releases(const TlSimtVm *vm, int t, uint64_t *wmin) {
  const uint64_t *k = vm->know + (size_t)t * vm->T;
  for (int w = 0; w < 32; w++)
    wmin[w] = UINT64_MAX;
  for (int r = 0; r < vm->T; r++)
    if (r != t && k[r] < wmin[r / 32])
      wmin[r / 32] = k[r];
}

/* A TMA load into byte b, issued by thread t, races with the accesses of
 * other threads since the last bar.sync (they may still be reading what
 * the copy overwrites), unless every thread of the reading warps arrived
 * at an mbarrier after the last read of the byte and t then saw that
 * phase complete (wmin: warp_releases of t). */
static bool tma_overwrite_ok(TlSimtVm *vm, SInst *in, int t, uint64_t b,
                             const uint64_t *wmin) {
  SByte *s = sbyte_now(vm, b);
  bool released = s->writer < 0 && s->rwarps;
  for (int w = 0; released && w < 32; w++)
    released = !(s->rwarps >> w & 1) || wmin[w] > s->rtime;
  int other = released                           ? -1
              : s->writer >= 0 && s->writer != t ? s->writer
              : s->reader >= 0 && s->reader != t ? s->reader
              : s->reader == R_MANY              ? -2
                                                 : -1;
  if (other == -1)
    return true;
  if (other == -2)
    return sv_error(vm, in->op,
                    "data race: the TMA load of %s overwrites shared address "
                    "%llu, read by other threads since the last barrier",
                    who(vm, t).s, (unsigned long long)b);
  return sv_error(vm, in->op,
                  "data race: the TMA load of %s overwrites shared address "
                  "%llu, %s by %s since the last barrier",
                  who(vm, t).s, (unsigned long long)b,
                  s->writer == other ? "written" : "read", who(vm, other).s);
}

static bool exec_tma_load(TlSimtVm *vm, SInst *in, const Mask *m) {
  unsigned rank = in->nin - 3;
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t dst = reg(vm, in->in[0], t)[0];
    uint64_t map = reg(vm, in->in[1], t)[0];
    uint8_t *mp = global_at(vm, in, t, map, TL_TENSOR_MAP_BYTES, false);
    if (!mp)
      return false;
    TlTensorMapDesc d;
    TlErr err;
    if (!tl_tensor_map_decode(mp, &d, &err))
      return sv_error(vm, in->op, "%s loads through a bad tensor map: %s",
                      who(vm, t).s, err.msg);
    if (d.rank != rank)
      return sv_error(vm, in->op,
                      "%s gives %u coordinates for a tensor map of %u "
                      "dimensions",
                      who(vm, t).s, rank, d.rank);
    MBar *b = mbar_at(vm, in, t, false);
    if (!b)
      return false;
    /* Elements loaded a dimension: the box over its element stride. */
    uint64_t n[3] = {1, 1, 1}, elems = 1;
    for (unsigned i = 0; i < rank; i++) {
      uint32_t es = d.elem_strides[i] ? d.elem_strides[i] : 1;
      n[i] = (d.box[i] + es - 1) / es;
      elems *= n[i];
    }
    uint64_t size = elems * d.elem_bytes;
    /* The PTX ISA wants a 128-byte aligned destination; TL also wants a
     * swizzled one aligned to the pattern's repeat (8 rows of 128 bytes),
     * where the pattern over the box is the same whether the hardware
     * swizzles by address or by offset in the box. */
    uint64_t need = d.swizzle ? 1024 : 128;
    if (!shared_in_bounds(vm, in, t, dst, (unsigned)size, true) ||
        !aligned(vm, in, t, dst, need, (unsigned)size, true, true,
                 d.swizzle ? "a swizzled TMA destination is aligned to the "
                             "pattern's 1024 bytes"
                           : "a TMA destination is 128-byte aligned"))
      return false;
    Tma c;
    memset(&c, 0, sizeof c);
    c.thread = t;
    c.bar = (uint32_t)(b - vm->mbars.data);
    c.dst = (uint32_t)dst;
    c.span = (uint32_t)((size + 127) / 128 * 128);
    if (dst + c.span > (uint64_t)vm->smem_size)
      c.span = (uint32_t)(vm->smem_size - (int64_t)dst);
    c.data = tl_xcalloc(c.span ? c.span : 1, 1);
    c.mask = tl_xcalloc(c.span ? c.span : 1, 1);
    c.op = in->op;
    int64_t at[3];
    for (unsigned i = 0; i < rank; i++)
      at[i] = e_sval(etype(vm, tl_value_type(tl_op_operand(in->op, 3 + i))),
                     reg(vm, in->in[3 + i], t)[0]);
    /* The innermost coordinate (dimension 0) in whole 16-byte chunks. */
    if ((at[0] * (int64_t)d.elem_bytes) % 16)
      return sv_error(vm, in->op,
                      "%s loads a box whose innermost coordinate %lld is "
                      "%lld bytes into the row, not a multiple of 16 (TMA "
                      "copies whole 16-byte chunks)",
                      who(vm, t).s, (long long)at[0],
                      (long long)(at[0] * (int64_t)d.elem_bytes));
    bool ok = true;
    for (uint64_t e = 0; e < elems && ok; e++) {
      /* The element's place in the box (dimension 0 fastest) and in the
       * tensor; elements outside the tensor are zero. */
      uint64_t r = e, gaddr = d.base;
      bool inside = true;
      for (unsigned i = 0; i < rank; i++) {
        uint64_t k = r % n[i];
        r /= n[i];
        uint32_t es = d.elem_strides[i] ? d.elem_strides[i] : 1;
        int64_t g = at[i] + (int64_t)(k * es);
        if (g < 0 || (uint64_t)g >= d.dims[i])
          inside = false;
        else
          gaddr += (uint64_t)g * (i ? d.strides[i - 1] : d.elem_bytes);
      }
      uint64_t sa = swizzle(dst + e * d.elem_bytes, d.swizzle) - dst;
      if (sa + d.elem_bytes > c.span) {
        ok = sv_error(vm, in->op,
                      "%s: the swizzled box runs past the block's shared "
                      "memory",
                      who(vm, t).s);
        break;
      }
      if (inside) {
        uint8_t *p = global_at(vm, in, t, gaddr, d.elem_bytes, false);
        if (!p) {
          ok = false;
          break;
        }
        memcpy(c.data + sa, p, d.elem_bytes);
      }
      memset(c.mask + sa, 1, d.elem_bytes);
    }
    uint64_t wmin[32];
    warp_releases(vm, t, wmin);
    for (uint32_t k = 0; ok && k < c.span; k++) {
      if (!c.mask[k])
        continue;
      if (vm->sbytes[dst + k].pending) {
        ok = pending_error(vm, in, t, dst + k, true);
      } else if (!tma_overwrite_ok(vm, in, t, dst + k, wmin)) {
        ok = false;
      } else if (vm->sbytes[dst + k].tma) {
        const Tma *o = &vm->tmas.data[vm->sbytes[dst + k].tma - 1];
        ok = sv_error(vm, in->op,
                      "%s loads into shared address %llu while another TMA "
                      "load into it is pending",
                      who(vm, t).s, (unsigned long long)(dst + k));
        sv_note(vm, o->op, "the other TMA load, by %s", who(vm, o->thread).s);
      }
    }
    if (!ok) {
      tl_free(c.data);
      tl_free(c.mask);
      return false;
    }
    uint32_t id = (uint32_t)vm->tmas.len;
    tl_vec_push(&vm->tmas, c);
    for (uint32_t k = 0; k < c.span; k++)
      if (c.mask[k])
        vm->sbytes[dst + k].tma = id + 1;
    /* complete_tx: the bytes count against the barrier's transactions. */
    b->tx -= (int64_t)size;
    mbar_update(vm, b);
  }
  return true;
}

/*===--- Warp-collective ops ---------------------------------------------===*/

/* Every group of `size` threads (a warp, 32, or a warpgroup, 128) with
 * an active thread must have all of them active. */
static bool full_groups(TlSimtVm *vm, SInst *in, const Mask *m, int size) {
  int counts[32] = {0};
  for (int j = 0; j < m->n; j++)
    counts[m->t[j] / size]++;
  for (int g = 0; g < 1024 / size; g++) {
    if (!counts[g] || counts[g] == size)
      continue;
    if (size == 32)
      return sv_error(vm, in->op,
                      "warp %d executes this warp-collective op with %d of "
                      "its 32 lanes; every lane must execute it",
                      g, counts[g]);
    return sv_error(vm, in->op,
                    "warpgroup %d (warps %d to %d) executes this warpgroup "
                    "op with %d of its 128 threads; all four warps must "
                    "execute it",
                    g, 4 * g, 4 * g + 3, counts[g]);
  }
  return true;
}

/* Every warp with an active lane must have all 32 lanes active. */
static bool full_warps(TlSimtVm *vm, SInst *in, const Mask *m) {
  return full_groups(vm, in, m, 32);
}

/* The warps of an active set made of whole warps. */
static int warps_of(const Mask *m, int *ws) {
  int n = 0;
  for (int j = 0; j < m->n; j += 32)
    ws[n++] = m->t[j] / 32;
  return n;
}

/* Format text s[from, to) with no conversions: `%%` is one `%`. */
static void put_text(FILE *f, const char *s, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) {
    if (s[i] == '%' && i + 1 < to && s[i + 1] == '%')
      i++;
    fputc(s[i], f);
  }
}

/* simt.printf: each active thread, in thread order, formats its operands
 * as the device printf does (an f32 is printed as a double). */
static void exec_printf(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!vm->print_out)
    return;
  size_t len;
  const char *fmt = tl_attr_string_value(tl_op_attr(in->op, "format"), &len);
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    size_t pos = 0, done = 0;
    unsigned k = 0;
    TlPrintfSpec sp;
    while (tl_simt_printf_next(fmt, len, &pos, &sp) > 0) {
      put_text(vm->print_out, fmt, done, sp.start);
      char spec[64];
      snprintf(spec, sizeof spec, "%.*s", (int)(sp.end - sp.start), fmt + sp.start);
      uint64_t bits = reg(vm, in->in[k], t)[0];
      TlType *ty = tl_value_type(tl_op_operand(in->op, k));
      if (strchr("fFeEgGaA", sp.conv)) {
        double d;
        if (tl_type_bitwidth(ty) == 32) {
          float f;
          uint32_t w = (uint32_t)bits;
          memcpy(&f, &w, 4);
          d = f;
        } else {
          memcpy(&d, &bits, 8);
        }
        fprintf(vm->print_out, spec, d);
      } else if (sp.wide) {
        fprintf(vm->print_out, spec, (long long)bits);
      } else {
        fprintf(vm->print_out, spec, (int)(uint32_t)bits);
      }
      done = sp.end;
      k++;
    }
    put_text(vm->print_out, fmt, done, len);
  }
}

static bool exec_shfl(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!full_warps(vm, in, m))
    return false;
  int ws[32], nw = warps_of(m, ws);
  for (int k = 0; k < nw; k++) {
    uint64_t val[32], res[32][17];
    int base = ws[k] * 32;
    for (int l = 0; l < 32; l++) {
      uint64_t bits[17];
      pack(reg(vm, in->in[0], base + l), in->vn_in, in->vb_in, bits);
      val[l] = bits[0] & 0xffffffffu;
    }
    for (int l = 0; l < 32; l++) {
      /* PTX shfl.sync: b[4:0] is the lane or offset; c = 0x1f (idx,
       * bfly, down) or 0 (up) makes the whole warp one segment, so
       * maxLane is 31 for c = 0x1f and 0 for up. */
      unsigned bval = (unsigned)reg(vm, in->in[1], base + l)[0] & 31, j;
      bool ok;
      switch (in->pred) {
      case 0:
        j = bval;
        ok = true;
        break;
      case 1:
        j = (unsigned)l ^ bval;
        ok = true;
        break;
      case 2:
        ok = (int)l - (int)bval >= 0;
        j = (unsigned)(l - (int)bval);
        break;
      default:
        j = (unsigned)l + bval;
        ok = j <= 31;
        break;
      }
      uint64_t bits[17] = {0};
      bits[0] = val[ok ? j : (unsigned)l];
      unpack(bits, in->vn_out, in->vb_out, res[l]);
    }
    for (int l = 0; l < 32; l++)
      memcpy(reg(vm, in->out[0], base + l), res[l], in->vn_out * 8);
  }
  return true;
}

static bool exec_ldmatrix(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!full_warps(vm, in, m))
    return false;
  int ws[32], nw = warps_of(m, ws);
  unsigned num = (unsigned)in->imm;
  for (int k = 0; k < nw; k++) {
    int base = ws[k] * 32;
    uint8_t rows[32][16];
    /* Lanes 8i .. 8i + 7 give the rows of matrix i. */
    for (unsigned r = 0; r < 8 * num; r++) {
      int t = base + (int)r;
      uint64_t addr = reg(vm, in->in[0], t)[0];
      if (!shared_in_bounds(vm, in, t, addr, 16, false) ||
          !aligned(vm, in, t, addr, 16, 16, false, true,
                   "an ldmatrix row is 16 bytes, 16-byte aligned") ||
          !shared_read(vm, in, t, addr, 16, rows[r]))
        return false;
    }
    for (int l = 0; l < 32; l++) {
      uint64_t *out = reg(vm, in->out[0], base + l);
      memset(out, 0, num * 8);
      for (unsigned i = 0; i < in->local; i++) {
        int32_t flat = in->map[l * in->local + i];
        int row = flat / 8, col = flat % 8;
        uint64_t v = rows[row][2 * col] | (uint64_t)rows[row][2 * col + 1] << 8;
        out[i / 2] |= v << (16 * (i % 2));
      }
    }
  }
  return true;
}

/* An element (bits wide, a code) of a fragment: local i of one lane's
 * 32-bit registers, element j of a register at bits j * bits. */
static uint32_t frag_get(const uint64_t *regs, unsigned i, unsigned bits) {
  unsigned per = 32 / bits;
  return (uint32_t)(regs[i / per] >> (i % per * bits)) &
         (bits == 32 ? 0xffffffffu : (1u << bits) - 1);
}

/* The exponent the tensor cores align by: a subnormal's is its format's
 * smallest normal exponent. */
static int fexp(double x, const EType *e) {
  int emin = 2 - (1 << (e->dt.exp_bits - 1));
  int x_exp = ilogb(x);
  return x_exp < emin ? emin : x_exp;
}

/* One element of a float mma as the H200's tensor cores compute it
 * (matched bit for bit on random outputs of every f16 and bf16 form,
 * subnormal and zero operands included; docs/vm.md): E is the largest of
 * exp(a_k) + exp(b_k) over the nonzero products and exp(c), exp being the
 * unbiased exponent (a subnormal's the format's smallest); each product
 * and c is truncated toward zero to a multiple of 2^(E-25); the exact sum
 * of those is rounded toward zero to f32, or to nearest even to f16.
 * A NaN operand, an infinity times zero, or infinities of both signs give
 * NaN, other infinities an infinity. Returns false (the caller then sums
 * in order, which gives IEEE's signed zero) when every term is zero. row
 * is a row of A (K codes), col a column of B (stride n). */
static bool mma_sm90(const Mma *f, const EType *in_et, const EType *acc_et,
                     const uint32_t *row, const uint32_t *col, unsigned n,
                     uint64_t *d) {
  double c = e_f(acc_et, *d);
  int E = INT_MIN;
  double a[16], b[16];
  /* Infinities: the exact sum's (no overflow before the final rounding). */
  bool nan = isnan(c), pinf = c == INFINITY, ninf = c == -INFINITY;
  if (c != 0 && isfinite(c))
    E = fexp(c, acc_et);
  for (unsigned k = 0; k < f->k; k++) {
    a[k] = e_f(in_et, row[k]);
    b[k] = e_f(in_et, col[k * n]);
    double p = a[k] * b[k];
    nan |= isnan(p);
    pinf |= p == INFINITY;
    ninf |= p == -INFINITY;
    if (a[k] != 0 && b[k] != 0 && isfinite(p) &&
        fexp(a[k], in_et) + fexp(b[k], in_et) > E)
      E = fexp(a[k], in_et) + fexp(b[k], in_et);
  }
  if (nan || (pinf && ninf)) {
    *d = sv_nan(acc_et);
    return true;
  }
  if (pinf || ninf) {
    *d = e_fencode(acc_et, pinf ? INFINITY : -INFINITY);
    return true;
  }
  if (E == INT_MIN) /* every term is zero: IEEE's signed-zero sum */
    return false;
  /* Each term is below 2^(E+2), so a multiple of 2^(E-25) below 2^27:
   * seventeen of them sum exactly in 64 bits. */
  int q = E - 25;
  int64_t sum = (int64_t)trunc(ldexp(c, -q));
  for (unsigned k = 0; k < f->k; k++)
    sum += (int64_t)trunc(ldexp(a[k] * b[k], -q));
  bool neg = sum < 0;
  uint64_t mag = neg ? (uint64_t)0 - (uint64_t)sum : (uint64_t)sum;
  *d = f->acc == MA_F32 ? sv_round_ieee(neg, mag, q, 8, 23, SV_RZ)
                        : sv_round_ieee(neg, mag, q, 5, 10, SV_RN);
  return true;
}

/* d[i][j] = c[i][j] + sum over k of a[i][k] * b[k][j] over f's M x N
 * x K: A row major (M x K), B (K x N) and C (M x N) row major, element
 * codes. Floats: k in increasing order, each product exact and each sum
 * rounded once to the accumulator type (the order and rounding of
 * tl.dot; the SM90 model, measured for the f16 and bf16 forms only,
 * replaces it for those); integers: exact, then wrapped (or clamped with
 * satfinite) to 32 bits. simt.mma and simt.wgmma both compute with it. */
static void mma_compute(TlSimtVm *vm, const Mma *f, const uint32_t *A,
                        const uint32_t *B, uint64_t *C, const EType *a_et,
                        const EType *b_et, const EType *acc_et) {
  unsigned M = f->m, N = f->n, K = f->k;
  for (unsigned i = 0; i < M; i++)
    for (unsigned j = 0; j < N; j++) {
      uint64_t *d = &C[i * N + j];
      if (f->acc == MA_S32) {
        int64_t s = (int32_t)(uint32_t)*d;
        for (unsigned kk = 0; kk < K; kk++) {
          uint32_t a = A[i * K + kk], b = B[kk * N + j];
          if (f->in == MI_B1)
            s += a & b;
          else
            s += (int64_t)(f->a_signed ? (int8_t)a : (int64_t)a) *
                 (f->b_signed ? (int8_t)b : (int64_t)b);
        }
        if (f->satfinite)
          s = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s;
        *d = (uint32_t)s;
      } else if (vm->mma_model == TL_SIMT_MMA_SM90 && f->bits == 16 &&
                 mma_sm90(f, a_et, acc_et, A + i * K, B + j, N, d)) {
        /* the H200's datapath computed *d */
      } else {
        uint64_t acc = *d;
        for (unsigned kk = 0; kk < K; kk++) {
          double p = e_f(a_et, A[i * K + kk]) * e_f(b_et, B[kk * N + j]);
          double sum = e_add_odd(e_f(acc_et, acc), p);
          acc = isnan(sum) ? sv_nan(acc_et) : e_fencode(acc_et, sum);
        }
        *d = acc;
      }
    }
}

static bool exec_mma(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!full_warps(vm, in, m))
    return false;
  const Mma *f = in->mma;
  unsigned M = f->m, N = f->n, K = f->k;
  uint32_t *A = tl_xmalloc(sizeof(uint32_t) * M * K);
  uint32_t *B = tl_xmalloc(sizeof(uint32_t) * K * N);
  uint64_t *C = tl_xmalloc(sizeof(uint64_t) * M * N);
  const EType *a_et = f->a_float ? etype(vm, f->a_float) : NULL,
              *b_et = f->b_float ? etype(vm, f->b_float) : NULL;
  const EType *acc_et =
      f->acc == MA_S32 ? NULL
                       : etype(vm, f->acc == MA_F32 ? tl_type_f32(vm->ctx)
                                                    : tl_type_f16(vm->ctx));
  int ws[32], nw = warps_of(m, ws);
  for (int k = 0; k < nw; k++) {
    int base = ws[k] * 32;
    for (int l = 0; l < 32; l++) {
      const uint64_t *ra = reg(vm, in->in[0], base + l);
      const uint64_t *rb = reg(vm, in->in[1], base + l);
      const uint64_t *rc = reg(vm, in->in[2], base + l);
      for (unsigned i = 0; i < f->alocal; i++)
        A[f->amap[l * f->alocal + i]] = frag_get(ra, i, f->bits);
      for (unsigned i = 0; i < f->blocal; i++)
        B[f->bmap[l * f->blocal + i]] = frag_get(rb, i, f->bits);
      for (unsigned i = 0; i < f->clocal; i++)
        C[f->cmap[l * f->clocal + i]] =
            f->acc == MA_F16 ? frag_get(rc, i, 16) : rc[i] & 0xffffffffu;
    }
    mma_compute(vm, f, A, B, C, a_et, b_et, acc_et);
    for (int l = 0; l < 32; l++) {
      uint64_t *rd = reg(vm, in->out[0], base + l);
      if (f->acc == MA_F16)
        memset(rd, 0, 8 * (f->clocal / 2));
      for (unsigned i = 0; i < f->clocal; i++) {
        uint64_t v = C[f->cmap[l * f->clocal + i]];
        if (f->acc == MA_F16)
          rd[i / 2] |= v << (16 * (i % 2));
        else
          rd[i] = v;
      }
    }
  }
  tl_free(A);
  tl_free(B);
  tl_free(C);
  return true;
}

/*===--- Warpgroup mma ---------------------------------------------------===*/

/* simt.wgmma_desc: the descriptor of each thread's shared address, as the
 * translation computes it (docs/simt.md). The address field drops the
 * low 4 bits, so an address that is not a multiple of 16 is an error
 * here rather than a silently different matrix. */
static bool exec_wgmma_desc(TlSimtVm *vm, SInst *in, const Mask *m) {
  uint64_t fields = (uint64_t)in->imm >> 4 << 16 |
                    (uint64_t)in->imm2 >> 4 << 32 | (uint64_t)in->pred << 62;
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t addr = reg(vm, in->in[0], t)[0];
    if (addr & 15)
      return sv_error(vm, in->op,
                      "%s makes a wgmma descriptor of shared address %llu, "
                      "which is not a multiple of 16",
                      who(vm, t).s, (unsigned long long)addr);
    if (addr > 0x3ffff)
      return sv_error(vm, in->op,
                      "%s makes a wgmma descriptor of shared address %llu, "
                      "past the descriptor's 18-bit address",
                      who(vm, t).s, (unsigned long long)addr);
    reg(vm, in->out[0], t)[0] = addr >> 4 | fields;
  }
  return true;
}

/* Every warpgroup (warps 4g .. 4g + 3) with an active thread must have
 * all 128 active. */
static bool full_warpgroups(TlSimtVm *vm, SInst *in, const Mask *m) {
  return full_groups(vm, in, m, 128);
}

/* simt.setmaxnreg in the warpgroups of the active set: "dec" may not raise
 * a warpgroup's count above the one its last setmaxnreg set, "inc" may
 * not lower it (PTX's rule; the first is not checked: the count at entry
 * is ptxas's). */
static bool exec_setmaxnreg(TlSimtVm *vm, SInst *in, const Mask *m) {
  int64_t count = int_attr(in->op, "count", 0);
  const char *action = str_attr(in->op, "action");
  bool dec = action && !strcmp(action, "dec");
  for (int j = 0; j < m->n; j += 128) {
    int g = m->t[j] / 128;
    int64_t cur = vm->wg_regs[g];
    if (cur && (dec ? count > cur : count < cur))
      return sv_error(vm, in->op,
                      "warpgroup %d %s its registers to %lld, but its count "
                      "is %lld (set by its last setmaxnreg): setmaxnreg.%s "
                      "must not %s it",
                      g, dec ? "lowers" : "raises", (long long)count,
                      (long long)cur, dec ? "dec" : "inc",
                      dec ? "raise" : "lower");
    vm->wg_regs[g] = count;
  }
  return true;
}

/* A matrix descriptor, decoded. */
typedef struct WgDesc {
  uint64_t start, lbo, sbo;
  unsigned chunks; /* 16-byte chunks of a swizzle row: 1 (none), 2, 4, 8 */
} WgDesc;

static const char *const swz_name[] = {"none", "128B", "64B", "32B"};

/* The descriptor of operand i, which must be the same in every thread of
 * the warpgroup starting at thread t0 (the hardware reads one). */
static bool wg_desc(TlSimtVm *vm, SInst *in, int t0, unsigned i,
                    const char *what, WgDesc *d) {
  uint64_t x = reg(vm, in->in[i], t0)[0];
  for (int t = t0 + 1; t < t0 + 128; t++)
    if (reg(vm, in->in[i], t)[0] != x)
      return sv_error(vm, in->op,
                      "the descriptor of %s differs between %s and %s; a "
                      "warpgroup gives one descriptor",
                      what, who(vm, t0).s, who(vm, t).s);
  /* Bits 14-15, 30-31, 46-48 and 52-61 are unused, 49-51 the base offset. */
  uint64_t unused = 0x3ffull << 52 | 7ull << 46 | 3ull << 30 | 3ull << 14;
  if (x & unused)
    return sv_error(vm, in->op,
                    "the descriptor of %s (0x%016llx) has bits set outside "
                    "its address, offset and swizzle fields",
                    what, (unsigned long long)x);
  if ((x >> 49) & 7)
    return sv_error(vm, in->op,
                    "the descriptor of %s has base offset %u; simt.wgmma_desc "
                    "makes base offset 0",
                    what, (unsigned)((x >> 49) & 7));
  unsigned mode = (unsigned)(x >> 62);
  d->start = (x & 0x3fff) << 4;
  d->lbo = ((x >> 16) & 0x3fff) << 4;
  d->sbo = ((x >> 32) & 0x3fff) << 4;
  d->chunks = mode == 0 ? 1 : mode == 1 ? 8 : mode == 2 ? 4 : 2;
  /* With base offset 0 the swizzle's row phase is the address's bits 7
   * and up: the matrix must start in the first 128 bytes of its pattern
   * (of 8 rows of 16 * chunks bytes). */
  if (d->chunks > 1 && ((d->start >> 7) & (d->chunks - 1)))
    return sv_error(vm, in->op,
                    "the descriptor of %s starts at shared address %llu, "
                    "%llu bytes into its %s swizzle pattern of %u bytes; "
                    "with base offset 0 a swizzled matrix starts in the "
                    "pattern's first 128 bytes",
                    what, (unsigned long long)d->start,
                    (unsigned long long)(d->start % (128u * d->chunks)),
                    swz_name[mode], 128u * d->chunks);
  return true;
}

/* The shared address of element (mn, k) of a matrix in the canonical
 * layout of the descriptor (docs/simt.md, "Shared memory layouts"): es
 * bytes an element, T = 16 / es elements a 16-byte chunk, W = 16 *
 * chunks bytes a swizzle row. */
static uint64_t wg_addr(const WgDesc *d, bool mn_major, unsigned es,
                        unsigned mn, unsigned k) {
  unsigned T = 16 / es, W = 16 * d->chunks;
  uint64_t off;
  if (!mn_major && d->chunks == 1)
    off = (mn % 8) * 16 + (mn / 8) * d->sbo + (k % T) * es + (k / T) * d->lbo;
  else if (!mn_major)
    off = (mn % 8) * W + (mn / 8) * d->sbo + k * es;
  else if (d->chunks == 1)
    off = (mn % T) * es + (mn / T) * d->sbo + (k % 8) * 16 + (k / 8) * d->lbo;
  else
    off = (mn % (T * d->chunks)) * es + (mn / (T * d->chunks)) * d->lbo +
          (k % 8) * W + (k / 8) * d->sbo;
  uint64_t a = d->start + off;
  /* The swizzle XORs the 16-byte chunk (bits 4 and up) with the row in
   * the pattern (bits 7 and up), log2(chunks) bits of each. */
  return a ^ (((a >> 7) & (d->chunks - 1)) << 4);
}

/* Reads the rows x cols matrix of a descriptor (element (r, c) at
 * out[r * rs + c * cs]) for warpgroup op w, as thread t0 (race checks),
 * recording each byte read. K-major: r is the M/N index and c the K
 * index. */
static bool wg_read(TlSimtVm *vm, SInst *in, int t0, const WgDesc *d,
                    bool mn_major, unsigned es, unsigned mn_n, unsigned k_n,
                    uint32_t *out, unsigned s_mn, unsigned s_k,
                    const char *what) {
  unsigned W = 16 * d->chunks;
  if (!mn_major && d->chunks > 1 && d->start % W + k_n * es > W)
    return sv_error(vm, in->op,
                    "the descriptor of %s starts %llu bytes into a %u-byte "
                    "swizzle row, so its %u bytes of K cross the row",
                    what, (unsigned long long)(d->start % W), W, k_n * es);
  for (unsigned mn = 0; mn < mn_n; mn++)
    for (unsigned k = 0; k < k_n; k++) {
      uint64_t a = wg_addr(d, mn_major, es, mn, k);
      uint8_t buf[2] = {0, 0};
      /* The checks of a read (bounds, pending copies, initialisation, a
       * write by another thread since the barrier), but not its reader
       * mark: the bytes stay in use until the wgmma retires, after which
       * the warpgroup may write them without a barrier. */
      int32_t readers[2] = {0, 0};
      for (unsigned i = 0; i < es && a + i < (uint64_t)vm->smem_size; i++)
        readers[i] = sbyte_now(vm, a + i)->reader;
      if (!shared_read(vm, in, t0, a, es, buf))
        return false;
      for (unsigned i = 0; i < es; i++)
        vm->sbytes[a + i].reader = readers[i];
      out[mn * s_mn + k * s_k] = buf[0] | (uint32_t)buf[1] << 8;
      for (unsigned i = 0; i < es; i++) {
        vm->sbytes[a + i].wg_reads++;
        tl_vec_push(&vm->wgreads, (uint32_t)(a + i));
      }
    }
  return true;
}

/* Registers of other code than wgmma given to a wgmma as accumulators
 * or as A need a wgmma.fence between the write and the wgmma. */
static bool wg_fenced(TlSimtVm *vm, SInst *in, int t0, unsigned i) {
  size_t T = (size_t)vm->T;
  for (int t = t0; t < t0 + 128; t++) {
    uint32_t st = vm->wstamp[in->in[i] * T + (size_t)t];
    if (st && st == vm->fences[t] + 1)
      return sv_error(vm, in->op,
                      "%s gives wgmma operand #%u, written by other code "
                      "since its last simt.wgmma_fence; a wgmma.fence must "
                      "come between the write and the wgmma",
                      who(vm, t).s, i);
  }
  return true;
}

/* simt.wgmma: each warpgroup computes D = A B (+ C) at issue; the results
 * are pending (other code may not read them) until a simt.wgmma_wait
 * retires the op's group, and the shared bytes it read may not be
 * written until then. */
static bool exec_wgmma(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!full_warpgroups(vm, in, m))
    return false;
  const Wg *w = in->wg;
  const Mma *f = &w->mm;
  unsigned N = f->n, K = f->k, es = f->bits / 8;
  uint32_t *A = tl_xmalloc(sizeof(uint32_t) * 64 * K);
  uint32_t *B = tl_xmalloc(sizeof(uint32_t) * K * N);
  uint64_t *C = tl_xmalloc(sizeof(uint64_t) * 64 * N);
  const EType *a_et = f->a_float ? etype(vm, f->a_float) : NULL,
              *b_et = f->b_float ? etype(vm, f->b_float) : NULL;
  const EType *acc_et =
      f->acc == MA_S32 ? NULL : etype(vm, tl_type_f32(vm->ctx));
  bool ok = true;
  for (int j = 0; j < m->n && ok; j += 128) {
    int t0 = m->t[j], g = t0 / 128;
    uint32_t first = (uint32_t)vm->wgreads.len;
    WgDesc da, db;
    ok = false;
    if (w->a_regs && !wg_fenced(vm, in, t0, 0))
      break;
    for (unsigned i = 0; i < w->tiles; i++)
      if (!wg_fenced(vm, in, t0, 2 + i))
        goto done;
    /* scale-d: the attribute, or a predicate uniform over the warpgroup. */
    int sd = w->scale_d;
    if (sd < 0) {
      uint32_t ps = in->in[in->nin - 1];
      sd = reg(vm, ps, t0)[0] != 0;
      for (int t = t0 + 1; t < t0 + 128; t++)
        if ((reg(vm, ps, t)[0] != 0) != sd) {
          sv_error(vm, in->op,
                   "the scale-d predicate differs between %s and %s; a "
                   "warpgroup gives one",
                   who(vm, t0).s, who(vm, t).s);
          goto done;
        }
    }
    if (w->a_regs) {
      for (int wp = 0; wp < 4; wp++)
        for (int l = 0; l < 32; l++) {
          const uint64_t *ra = reg(vm, in->in[0], t0 + 32 * wp + l);
          for (unsigned i = 0; i < w->alocal; i++)
            A[16 * wp * K + (unsigned)w->amap[l * w->alocal + i]] =
                frag_get(ra, i, f->bits);
        }
    } else if (!wg_desc(vm, in, t0, 0, "operand A", &da) ||
               !wg_read(vm, in, t0, &da, w->a_mn, es, 64, K, A, K, 1,
                        "operand A")) {
      goto done;
    }
    if (!wg_desc(vm, in, t0, 1, "operand B", &db) ||
        !wg_read(vm, in, t0, &db, w->b_mn, es, N, K, B, 1, N, "operand B"))
      goto done;
    for (int wp = 0; wp < 4; wp++)
      for (int l = 0; l < 32; l++)
        for (unsigned i = 0; i < w->tiles; i++) {
          const uint64_t *rc = reg(vm, in->in[2 + i], t0 + 32 * wp + l);
          for (unsigned e = 0; e < w->clocal; e++) {
            int32_t flat = w->cmap[l * w->clocal + e];
            C[(16 * wp + (unsigned)flat / 8) * N + 8 * i + (unsigned)flat % 8] =
                sd ? rc[e] & 0xffffffffu : 0;
          }
        }
    mma_compute(vm, f, A, B, C, a_et, b_et, acc_et);
    WgOp op = {in->op, w,     g,    GROUP_OPEN,
               false,  first, (uint32_t)vm->wgreads.len - first};
    uint32_t id = (uint32_t)vm->wgops.len;
    tl_vec_push(&vm->wgops, op);
    if (w->naroots)
      tl_vec_push(&vm->wg_aregs, id);
    vm->wg_live++;
    size_t T = (size_t)vm->T;
    for (int wp = 0; wp < 4; wp++)
      for (int l = 0; l < 32; l++) {
        int t = t0 + 32 * wp + l;
        for (unsigned i = 0; i < w->tiles; i++) {
          uint64_t *rd = reg(vm, in->out[i], t);
          for (unsigned e = 0; e < w->clocal; e++) {
            int32_t flat = w->cmap[l * w->clocal + e];
            rd[e] = C[(16 * wp + (unsigned)flat / 8) * N + 8 * i +
                      (unsigned)flat % 8];
          }
          vm->regmark[in->out[i] * T + (size_t)t] = id + 1;
          vm->wstamp[in->out[i] * T + (size_t)t] = 0;
        }
      }
    ok = true;
  done:;
  }
  tl_free(A);
  tl_free(B);
  tl_free(C);
  return ok;
}

/* wgmma.fence: orders the threads' register writes before the wgmma ops
 * after it. */
static bool exec_wgmma_fence(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!full_warps(vm, in, m))
    return false;
  for (int j = 0; j < m->n; j++)
    vm->fences[m->t[j]]++;
  return true;
}

/* wgmma.commit_group: the warpgroups' uncommitted wgmma ops become their
 * newest group (an empty group when there are none, as in PTX). */
static bool exec_wgmma_commit(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!full_warpgroups(vm, in, m))
    return false;
  for (int j = 0; j < m->n; j += 128) {
    int g = m->t[j] / 128;
    for (size_t i = 0; i < vm->wgops.len; i++) {
      WgOp *w = &vm->wgops.data[i];
      if (w->wg == g && w->group == GROUP_OPEN)
        w->group = vm->wg_committed[g];
    }
    vm->wg_committed[g]++;
  }
  return true;
}

static void wg_retire(TlSimtVm *vm, WgOp *w) {
  w->retired = true;
  vm->wg_live--;
  for (uint32_t j = 0; j < w->n; j++)
    vm->sbytes[vm->wgreads.data[w->first + j]].wg_reads--;
}

/* wgmma.wait_group N: retires the warpgroups' committed groups but the
 * newest N. */
static bool exec_wgmma_wait(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (!full_warpgroups(vm, in, m))
    return false;
  for (int j = 0; j < m->n; j += 128) {
    int g = m->t[j] / 128;
    for (size_t i = 0; i < vm->wgops.len; i++) {
      WgOp *w = &vm->wgops.data[i];
      if (w->wg == g && !w->retired && w->group != GROUP_OPEN &&
          (uint64_t)w->group + (uint64_t)in->imm < vm->wg_committed[g])
        wg_retire(vm, w);
    }
  }
  return true;
}

/* Before an op runs in a kernel with wgmma in flight: none of its
 * operands may hold a pending wgmma result, except the accumulators of
 * another simt.wgmma (the chain of ops accumulating in place). */
/* Ops that only rename registers (no instruction: an element of a
 * vector, a vector of scalars, the same bits as another type): a wgmma's
 * pending results and unfenced writes pass through them. */
static bool wg_renames(const SInst *in) {
  return in->code == TL_OP_SIMT_EXTRACT || in->code == TL_OP_SIMT_BUILD ||
         in->code == TL_OP_ARITH_BITCAST;
}

static bool wg_reads_ok(TlSimtVm *vm, SInst *in, const Mask *m) {
  size_t T = (size_t)vm->T;
  /* Loops pass values on (renaming registers): their marks travel. */
  if (in->code == TL_OP_SCF_FOR || in->code == TL_OP_SCF_WHILE ||
      in->code == TL_OP_SCF_IF || wg_renames(in))
    return true;
  for (unsigned i = 0; i < in->nin; i++) {
    if (in->code == TL_OP_SIMT_WGMMA && i >= 2 && i < 2 + in->wg->tiles)
      continue;
    for (int j = 0; j < m->n; j++) {
      int t = m->t[j];
      uint32_t id = vm->regmark[in->in[i] * T + (size_t)t];
      if (!id || vm->wgops.data[id - 1].retired)
        continue;
      sv_error(vm, in->op,
               "%s reads operand #%u, a result of a wgmma that no "
               "simt.wgmma_wait has retired",
               who(vm, t).s, i);
      sv_note(vm, vm->wgops.data[id - 1].op, "the wgmma, by warpgroup %d",
              vm->wgops.data[id - 1].wg);
      return false;
    }
  }
  return true;
}

/* After an op other than wgmma and the control flow ops (whose results
 * are renamed values): its results are fresh register writes. */
static void wg_stamp(TlSimtVm *vm, SInst *in, const Mask *m) {
  size_t T = (size_t)vm->T;
  if (wg_renames(in)) {
    /* The result carries its operands' marks: a pending result (any of
     * a vector's), and the latest unfenced write. */
    for (int j = 0; j < m->n; j++) {
      size_t t = (size_t)m->t[j];
      uint32_t mark = 0, stamp = 0;
      for (unsigned i = 0; i < in->nin; i++) {
        uint32_t x = vm->regmark[in->in[i] * T + t],
                 w = vm->wstamp[in->in[i] * T + t];
        mark = x > mark ? x : mark;
        stamp = w > stamp ? w : stamp;
      }
      vm->regmark[in->out[0] * T + t] = mark;
      vm->wstamp[in->out[0] * T + t] = stamp;
    }
    return;
  }
  for (unsigned i = 0; i < in->nout; i++)
    for (int j = 0; j < m->n; j++) {
      size_t t = (size_t)m->t[j];
      vm->regmark[in->out[i] * T + t] = 0;
      vm->wstamp[in->out[i] * T + t] = vm->fences[t] + 1;
    }
}

/* Before an op that writes registers (not a rename, not control flow)
 * runs with wgmma in flight: none of its results may be registers that
 * an unretired wgmma of the thread's warpgroup reads as A. */
static bool wg_a_free(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (in->code == TL_OP_SCF_FOR || in->code == TL_OP_SCF_WHILE ||
      in->code == TL_OP_SCF_IF || wg_renames(in) || !in->nout)
    return true;
  size_t live = 0;
  for (size_t k = 0; k < vm->wg_aregs.len; k++)
    if (!vm->wgops.data[vm->wg_aregs.data[k]].retired)
      vm->wg_aregs.data[live++] = vm->wg_aregs.data[k];
  vm->wg_aregs.len = live;
  for (size_t k = 0; k < live; k++) {
    const WgOp *w = &vm->wgops.data[vm->wg_aregs.data[k]];
    const Wg *g = w->wg_inst;
    for (unsigned r = 0; r < g->naroots; r++)
      for (unsigned i = 0; i < in->nout; i++) {
        if (in->out[i] != g->aroots[r])
          continue;
        for (int j = 0; j < m->n; j++)
          if (m->t[j] / 128 == w->wg) {
            sv_error(vm, in->op,
                     "%s writes result #%u, a register that a wgmma in "
                     "flight reads as A (no simt.wgmma_wait has retired "
                     "it)",
                     who(vm, m->t[j]).s, i);
            sv_note(vm, w->op, "the wgmma, by warpgroup %d", w->wg);
            return false;
          }
      }
  }
  return true;
}

/* bar.sync id{, threads}: with the kernel's lock-step execution, the
 * threads that arrive are the active set; all the block's threads (or
 * exactly `threads` of them) must be there. A barrier starts a new race
 * epoch; it completes no cp.async. */
static bool exec_barrier(TlSimtVm *vm, SInst *in, const Mask *m) {
  if (in->imm2 > vm->T)
    return sv_error(vm, in->op,
                    "bar.sync %lld, %lld waits for %lld threads, but the "
                    "block has %d",
                    (long long)in->imm, (long long)in->imm2,
                    (long long)in->imm2, vm->T);
  if (in->imm2 && m->n != in->imm2)
    return sv_error(vm, in->op,
                    "divergent barrier: %d threads arrive at bar.sync %lld, "
                    "%lld, which waits for %lld",
                    m->n, (long long)in->imm, (long long)in->imm2,
                    (long long)in->imm2);
  if (!in->imm2 && m->n != vm->T) {
    mark_active(vm, m, 1);
    int miss = 0;
    while (vm->active[miss])
      miss++;
    mark_active(vm, m, 0);
    return sv_error(vm, in->op,
                    "divergent barrier: %d of the block's %d threads arrive "
                    "at bar.sync %lld, which waits for all of them; %s does "
                    "not",
                    m->n, vm->T, (long long)in->imm, who(vm, miss).s);
  }
  vm->epoch++;
  vm->stats.barriers++;
  return true;
}

/*===--- Scalar and register ops -----------------------------------------===*/

static bool thread_note(TlSimtVm *vm, int t) {
  tl_emit_note(vm->ctx, tl_op_loc(vm->func), "in %s", who(vm, t).s);
  return false;
}

static bool exec_arith(TlSimtVm *vm, SInst *in, const Mask *m) {
  const EType *e = in->et;
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t a = in->nin > 0 ? reg(vm, in->in[0], t)[0] : 0;
    uint64_t b = in->nin > 1 ? reg(vm, in->in[1], t)[0] : 0;
    uint64_t r = 0;
    switch (in->code) {
    case TL_OP_ARITH_CONSTANT:
      r = in->konst;
      break;
    case TL_OP_ARITH_ADDI:
    case TL_OP_ARITH_SUBI:
    case TL_OP_ARITH_MULI:
    case TL_OP_ARITH_DIVI:
    case TL_OP_ARITH_REMI:
    case TL_OP_ARITH_CEILDIVI:
    case TL_OP_ARITH_ANDI:
    case TL_OP_ARITH_ORI:
    case TL_OP_ARITH_XORI:
    case TL_OP_ARITH_SHLI:
    case TL_OP_ARITH_SHRI:
    case TL_OP_ARITH_MINI:
    case TL_OP_ARITH_MAXI:
      if (!vm_int_binary(vm->tl, in->op, e, in->code, a, b, &r)) {
        vm->failed = true;
        return thread_note(vm, t);
      }
      break;
    case TL_OP_ARITH_ADDF:
    case TL_OP_ARITH_SUBF:
    case TL_OP_ARITH_MULF:
    case TL_OP_ARITH_DIVF:
    case TL_OP_ARITH_MINF:
    case TL_OP_ARITH_MAXF:
      r = vm_float_binary(e, in->code, a, b);
      break;
    case TL_OP_ARITH_NEGF:
      r = a ^ (1ull << (e->bits - 1));
      break;
    case TL_OP_ARITH_ABSF:
      r = a & ~(1ull << (e->bits - 1));
      break;
    case TL_OP_ARITH_CMPI: {
      const EType *o = in->et2;
      r = o->kind == EK_SINT
              ? tl_cmpi_holds_signed(in->pred, e_sval(o, a), e_sval(o, b))
              : tl_cmpi_holds_unsigned(in->pred, a, b);
      break;
    }
    case TL_OP_ARITH_CMPF:
      r = tl_cmpf_holds(in->pred, e_f(in->et2, a), e_f(in->et2, b));
      break;
    case TL_OP_ARITH_SELECT:
      r = a ? b : reg(vm, in->in[2], t)[0];
      break;
    case TL_OP_ARITH_EXTI:
      r = (uint64_t)e_sval(in->et2, a) & e->mask;
      break;
    case TL_OP_ARITH_TRUNCI:
    case TL_OP_ARITH_BITCAST:
      r = a & e->mask;
      break;
    default: /* itofp, fptoi, extf, truncf */
      r = e_convert(in->et2, e, a);
      break;
    }
    reg(vm, in->out[0], t)[0] = r;
  }
  return true;
}

static uint16_t half_op(TlOpId code, bool bf, uint16_t a, uint16_t b,
                        uint16_t c) {
  switch (code) {
  case TL_OP_SIMT_ADD2:
    return bf ? tl_bf16_add(a, b) : tl_f16_add(a, b);
  case TL_OP_SIMT_SUB2: /* a + (-b): the negation is exact */
    return bf ? tl_bf16_add(a, b ^ 0x8000) : tl_f16_add(a, b ^ 0x8000);
  case TL_OP_SIMT_MUL2:
    return bf ? tl_bf16_mul(a, b) : tl_f16_mul(a, b);
  default:
    return bf ? tl_bf16_fma(a, b, c) : tl_f16_fma(a, b, c);
  }
}

/* simt.max/min of one f32, f16 or bf16 element: lib/dtype's PTX max/min. */
static uint64_t maxmin(bool is_max, unsigned bits, bool bf, uint64_t a,
                       uint64_t b) {
  if (bits == 32)
    return is_max ? tl_f32_max((uint32_t)a, (uint32_t)b)
                  : tl_f32_min((uint32_t)a, (uint32_t)b);
  uint16_t x = (uint16_t)a, y = (uint16_t)b;
  if (bf)
    return is_max ? tl_bf16_max(x, y) : tl_bf16_min(x, y);
  return is_max ? tl_f16_max(x, y) : tl_f16_min(x, y);
}

static bool exec_reg(TlSimtVm *vm, SInst *in, const Mask *m) {
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t *out = reg(vm, in->out[0], t);
    const uint64_t *a = in->nin > 0 ? reg(vm, in->in[0], t) : NULL;
    const uint64_t *b = in->nin > 1 ? reg(vm, in->in[1], t) : NULL;
    const uint64_t *c = in->nin > 2 ? reg(vm, in->in[2], t) : NULL;
    switch (in->code) {
    case TL_OP_SIMT_THREAD_ID: {
      int64_t v = in->imm == 0   ? t % vm->bdim[0]
                  : in->imm == 1 ? t / vm->bdim[0] % vm->bdim[1]
                                 : t / (vm->bdim[0] * vm->bdim[1]);
      out[0] = (uint64_t)v;
      break;
    }
    case TL_OP_SIMT_BLOCK_ID:
      out[0] = (uint64_t)vm->bidx[in->imm];
      break;
    case TL_OP_SIMT_BLOCK_DIM:
      out[0] = (uint64_t)vm->bdim[in->imm];
      break;
    case TL_OP_SIMT_GRID_DIM:
      out[0] = (uint64_t)vm->grid[in->imm];
      break;
    case TL_OP_SIMT_LANE_ID:
      out[0] = (uint64_t)(t % 32);
      break;
    case TL_OP_SIMT_WARP_ID:
      out[0] = (uint64_t)(t / 32);
      break;
    case TL_OP_SIMT_PTR_ADD: /* the offset extends by its signedness */
      out[0] = a[0] + (uint64_t)e_sval(in->et2, b[0]);
      break;
    case TL_OP_SIMT_SMEM_BASE:
      out[0] = 0;
      break;
    case TL_OP_SIMT_PRMT:
      out[0] =
          sv_prmt((uint32_t)a[0], (uint32_t)b[0], (uint32_t)c[0], in->pred);
      break;
    case TL_OP_SIMT_LOP3:
      out[0] = sv_lop3((uint32_t)a[0], (uint32_t)b[0], (uint32_t)c[0],
                       (unsigned)in->imm);
      break;
    case TL_OP_SIMT_ADD2:
    case TL_OP_SIMT_SUB2:
    case TL_OP_SIMT_MUL2:
    case TL_OP_SIMT_FMA2: {
      bool bf = in->et->dt.exp_bits == 8;
      for (int h = 0; h < 2; h++)
        out[h] = half_op(in->code, bf, (uint16_t)a[h], (uint16_t)b[h],
                         c ? (uint16_t)c[h] : 0);
      break;
    }
    case TL_OP_SIMT_FMA: /* f32 only: one rounding, the canonical NaN */
      out[0] = tl_f32_fma((uint32_t)a[0], (uint32_t)b[0], (uint32_t)c[0]);
      break;
    case TL_OP_SIMT_MAX:
    case TL_OP_SIMT_MIN: /* PTX's rule: a NaN operand yields the other */
      for (unsigned h = 0; h < in->vn_out; h++)
        out[h] = maxmin(in->code == TL_OP_SIMT_MAX, in->et->bits,
                        in->et->dt.exp_bits == 8, a[h], b[h]);
      break;
    case TL_OP_SIMT_MATH:
      out[0] = sv_math((int)in->imm, (uint32_t)a[0]);
      break;
    case TL_OP_SIMT_CVT:
      out[0] = sv_cvt(in->et2, in->et, a[0], in->rnd, in->flag);
      break;
    case TL_OP_SIMT_CVT_E4M3X2: {
      uint32_t w = sv_cvt_e4m3x2((uint32_t)a[0], (unsigned)in->imm);
      out[0] = w & 0xffff;
      out[1] = w >> 16;
      break;
    }
    case TL_OP_SIMT_CVT_PACK:
      out[0] = sv_cvt(in->et2, in->et, a[0], in->rnd, false);
      out[1] = sv_cvt(in->et2, in->et, b[0], in->rnd, false);
      break;
    case TL_OP_SIMT_BITCAST: {
      uint64_t bits[17];
      pack(a, in->vn_in, in->vb_in, bits);
      unpack(bits, in->vn_out, in->vb_out, out);
      break;
    }
    case TL_OP_SIMT_EXTRACT:
      out[0] = a[in->imm];
      break;
    case TL_OP_SIMT_BUILD:
      for (unsigned i = 0; i < in->nin; i++)
        out[i] = reg(vm, in->in[i], t)[0];
      break;
    default:
      TL_UNREACHABLE("not a register op");
    }
  }
  return true;
}

static bool exec_load_store(TlSimtVm *vm, SInst *in, const Mask *m) {
  bool store = in->code == TL_OP_SIMT_STORE;
  unsigned pi = store ? 1 : 0;
  bool shared = tl_simt_ptr_space(tl_value_type(tl_op_operand(in->op, pi))) ==
                TL_SIMT_SHARED;
  unsigned n = in->bytes, eb = in->vb_in / 8;
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t addr = reg(vm, in->in[pi], t)[0];
    uint8_t buf[16];
    if (store) {
      const uint64_t *v = reg(vm, in->in[0], t);
      for (unsigned i = 0; i < in->vn_in; i++)
        for (unsigned k = 0; k < eb; k++)
          buf[i * eb + k] = (uint8_t)(v[i] >> (8 * k));
    }
    if (!access(vm, in, t, shared, addr, n, (uint64_t)in->imm2, store, buf))
      return false;
    if (!store) {
      uint64_t *v = reg(vm, in->out[0], t);
      for (unsigned i = 0; i < in->vn_in; i++) {
        uint64_t x = 0;
        for (unsigned k = 0; k < eb; k++)
          x |= (uint64_t)buf[i * eb + k] << (8 * k);
        v[i] = x;
      }
    }
  }
  return true;
}

/*===--- Control flow ----------------------------------------------------===*/

static bool run_body(TlSimtVm *vm, SBody *b, const Mask *m);
static bool run_inst(TlSimtVm *vm, SInst *in, const Mask *m);

static Mask mask_new(int cap) {
  Mask m = {tl_xmalloc(sizeof(int32_t) * (size_t)(cap ? cap : 1)), 0};
  return m;
}

/* Drops the threads that have run simt.exit from m (in place). */
static void drop_exited(TlSimtVm *vm, Mask *m) {
  int keep = 0;
  for (int j = 0; j < m->n; j++)
    if (!vm->exited[m->t[j]])
      m->t[keep++] = m->t[j];
  m->n = keep;
}

/* simt.exit: the active threads end; every enclosing body and loop goes
 * on without them. */
static void exec_exit(TlSimtVm *vm, const Mask *m) {
  for (int j = 0; j < m->n; j++)
    vm->exited[m->t[j]] = 1;
  vm->nexits++;
}

/*===--- Divergent sides that wait on each other --------------------------===*/

/* An scf.if whose sides wait on mbarriers (a producer and its consumers)
 * cannot run one side after the other: each may wait for the other. Its
 * two sides then take turns as cooperative threads, one running at a
 * time: a side runs until a simt.mbarrier_try_wait fails for one of its
 * threads (scoop_yield) or it ends, then the other side runs. A deadlock
 * is still one: the failed polls count towards the barrier's limit
 * (exec_mbarrier) and the side that reaches it reports it; the other side
 * is then stopped. Divergent ifs nested in a side run their sides in turn
 * as any other. */
typedef struct SCoop {
  TlSimtVm *vm;
  SInst *in;
  const Mask *mask[2];
  VmBaton baton;
  int side; /* the side that runs */
} SCoop;

static bool scoop_side(void *ctx, int64_t side) {
  SCoop *c = ctx;
  return run_body(c->vm, &c->in->regions[side], c->mask[side]);
}

/* The running side lets the other run; false when the run is aborted. */
static bool scoop_yield(TlSimtVm *vm) {
  SCoop *c = vm->coop;
  return vm_baton_yield(&c->baton, c->side);
}

static bool exec_if_coop(TlSimtVm *vm, SInst *in, const Mask *mt,
                         const Mask *me) {
  SCoop c;
  memset(&c, 0, sizeof c);
  c.vm = vm;
  c.in = in;
  c.mask[0] = mt;
  c.mask[1] = me;
  VmBaton *b = &c.baton;
  vm_baton_start(b, 2, scoop_side, &c);
  vm->coop = &c;
  for (int side = 0; b->state[0] != VB_DONE || b->state[1] != VB_DONE;
       side ^= 1) {
    if (b->state[side] == VB_DONE)
      continue;
    c.side = side;
    vm_baton_run(b, side);
    if (b->state[side] == VB_DONE && !b->ok[side])
      b->abort = true;
  }
  bool ok = b->ok[0] && b->ok[1];
  vm_baton_finish(b);
  vm->coop = NULL;
  return ok;
}

static bool exec_if(TlSimtVm *vm, SInst *in, const Mask *m) {
  Mask mt = mask_new(m->n), me = mask_new(m->n);
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    Mask *dst = reg(vm, in->in[0], t)[0] ? &mt : &me;
    dst->t[dst->n++] = t;
  }
  bool ok = true;
  if (in->coop && !vm->coop && mt.n && me.n && in->nregions == 2 &&
      in->regions[0].insts && in->regions[1].insts) {
    ok = exec_if_coop(vm, in, &mt, &me);
    for (unsigned r = 0; r < 2 && ok && in->nout; r++)
      copy_vals(vm, in->out, in->regions[r].yield, in->nout, r ? &me : &mt);
    tl_free(mt.t);
    tl_free(me.t);
    return ok;
  }
  /* The then side runs first, then the else side; both see the memory
   * effects of the ones before (the GPU serialises divergent paths in an
   * unspecified order: a kernel whose result depends on it races). */
  for (unsigned r = 0; r < 2 && ok; r++) {
    Mask *sub = r ? &me : &mt;
    if (!sub->n || r >= in->nregions || !in->regions[r].insts)
      continue;
    ok = run_body(vm, &in->regions[r], sub);
    if (ok && in->nout)
      copy_vals(vm, in->out, in->regions[r].yield, in->nout, sub);
  }
  tl_free(mt.t);
  tl_free(me.t);
  return ok;
}

/* scf.for with per-thread bounds: each thread runs iv = lb, lb + step, ...
 * while iv < ub, leaving the loop on its own; the loop ends when no thread
 * is left in it. */
/* What the run has spent of its budget: the ops it executed, and one for
 * each block it finished, so that a grid of blocks that run few ops (or
 * none) is bounded too. */
static bool over_budget(const TlSimtVm *vm) {
  return vm_over_budget(vm->max_ops, vm->stats.ops, vm->stats.blocks);
}

/* After each loop iteration: false, after an error at the loop, once the
 * run has spent more than its budget. */
static bool within_budget(TlSimtVm *vm, SInst *loop) {
  if (!over_budget(vm))
    return true;
  return sv_error(vm, loop->op,
                  "the run exceeds its budget of %lld executed ops in this "
                  "loop (does it ever end?)",
                  (long long)vm->max_ops);
}

static bool exec_for(TlSimtVm *vm, SInst *in, const Mask *m) {
  const EType *e = in->et2;
  SBody *body = &in->regions[0];
  bool sgn = e->kind == EK_SINT;
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t step = reg(vm, in->in[2], t)[0];
    if (sgn ? e_sval(e, step) <= 0 : step == 0) {
      sv_error(vm, in->op, "step must be positive, but is %lld",
               (long long)(sgn ? e_sval(e, step) : (int64_t)step));
      return thread_note(vm, t);
    }
  }
  copy_vals(vm, body->args + 1, in->in + 3, in->nin - 3, m);
  Mask act = mask_new(m->n);
  for (int j = 0; j < m->n; j++) {
    int t = m->t[j];
    uint64_t lb = reg(vm, in->in[0], t)[0], ub = reg(vm, in->in[1], t)[0];
    if (sgn ? e_sval(e, lb) < e_sval(e, ub) : lb < ub) {
      reg(vm, body->args[0], t)[0] = lb;
      act.t[act.n++] = t;
    }
  }
  bool ok = true;
  while (act.n && ok) {
    ok = run_body(vm, body, &act) && within_budget(vm, in);
    if (!ok)
      break;
    copy_vals(vm, body->args + 1, body->yield, body->nyield, &act);
    drop_exited(vm, &act);
    int keep = 0;
    for (int j = 0; j < act.n; j++) {
      int t = act.t[j];
      uint64_t iv = reg(vm, body->args[0], t)[0];
      uint64_t ub = reg(vm, in->in[1], t)[0], step = reg(vm, in->in[2], t)[0];
      /* Next iv = iv + step; the thread leaves when that reaches ub,
       * without wrapping around the type. */
      uint64_t gap =
          sgn ? (uint64_t)e_sval(e, ub) - (uint64_t)e_sval(e, iv) : ub - iv;
      if (gap <= step)
        continue;
      reg(vm, body->args[0], t)[0] = (iv + step) & e->mask;
      act.t[keep++] = t;
    }
    act.n = keep;
  }
  tl_free(act.t);
  if (ok && in->nout)
    copy_vals(vm, in->out, body->args + 1, in->nout, m);
  return ok;
}

static bool exec_while(TlSimtVm *vm, SInst *in, const Mask *m) {
  SBody *before = &in->regions[0], *after = &in->regions[1];
  copy_vals(vm, before->args, in->in, in->nin, m);
  Mask act = mask_new(m->n), go = mask_new(m->n), stop = mask_new(m->n);
  memcpy(act.t, m->t, sizeof(int32_t) * (size_t)m->n);
  act.n = m->n;
  bool ok = true;
  while (act.n && ok) {
    ok = run_body(vm, before, &act);
    if (!ok)
      break;
    drop_exited(vm, &act);
    go.n = stop.n = 0;
    for (int j = 0; j < act.n; j++) {
      int t = act.t[j];
      Mask *dst = reg(vm, before->yield[0], t)[0] ? &go : &stop;
      dst->t[dst->n++] = t;
    }
    if (stop.n && in->nout)
      copy_vals(vm, in->out, before->yield + 1, in->nout, &stop);
    if (!go.n)
      break;
    copy_vals(vm, after->args, before->yield + 1, before->nyield - 1, &go);
    ok = run_body(vm, after, &go) && within_budget(vm, in);
    drop_exited(vm, &go);
    if (ok)
      copy_vals(vm, before->args, after->yield, after->nyield, &go);
    memcpy(act.t, go.t, sizeof(int32_t) * (size_t)go.n);
    act.n = go.n;
  }
  tl_free(act.t);
  tl_free(go.t);
  tl_free(stop.t);
  return ok;
}

static bool run_body(TlSimtVm *vm, SBody *b, const Mask *m) {
  /* After a simt.exit (here or nested), the rest of the body runs for the
   * threads left, in a set of its own. */
  Mask left = {NULL, 0};
  bool ok = true;
  for (unsigned i = 0; i < b->n && ok && m->n; i++) {
    SInst *in = &b->insts[i];
    uint64_t exits = vm->nexits;
    ok = run_inst(vm, in, m);
    if (vm->nexits != exits) {
      if (!left.t) {
        left = mask_new(m->n);
        memcpy(left.t, m->t, sizeof(int32_t) * (size_t)m->n);
        left.n = m->n;
      }
      drop_exited(vm, &left);
      m = &left;
    }
  }
  tl_free(left.t);
  return ok;
}

static bool run_inst(TlSimtVm *vm, SInst *in, const Mask *m) {
  vm->stats.ops++;
  vm->stats.thread_ops += m->n;
  if (vm->wg_live && (!wg_reads_ok(vm, in, m) || !wg_a_free(vm, in, m)))
    return false;
  bool ok;
  switch (in->code) {
  case TL_OP_SCF_FOR:
    ok = exec_for(vm, in, m);
    break;
  case TL_OP_SCF_IF:
    ok = exec_if(vm, in, m);
    break;
  case TL_OP_SCF_WHILE:
    ok = exec_while(vm, in, m);
    break;
  case TL_OP_SIMT_LOAD:
  case TL_OP_SIMT_STORE:
    ok = exec_load_store(vm, in, m);
    break;
  case TL_OP_SIMT_CP_ASYNC:
    ok = exec_cp_async(vm, in, m);
    break;
  case TL_OP_SIMT_CP_ASYNC_COMMIT:
    exec_commit(vm, m);
    ok = true;
    break;
  case TL_OP_SIMT_CP_ASYNC_WAIT:
    exec_wait(vm, in, m);
    ok = true;
    break;
  case TL_OP_SIMT_BARRIER:
    ok = exec_barrier(vm, in, m);
    break;
  case TL_OP_SIMT_EXIT:
    exec_exit(vm, m);
    ok = true;
    break;
  case TL_OP_SIMT_ATOM:
  case TL_OP_SIMT_ATOM_CAS:
    ok = exec_atom(vm, in, m);
    break;
  case TL_OP_SIMT_FENCE:
  case TL_OP_SIMT_FENCE_PROXY_ASYNC:
  case TL_OP_SIMT_FENCE_MBARRIER_INIT:
    ok = true;
    break;
  case TL_OP_SIMT_MBARRIER_INIT:
  case TL_OP_SIMT_MBARRIER_ARRIVE:
  case TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX:
  case TL_OP_SIMT_MBARRIER_EXPECT_TX:
  case TL_OP_SIMT_MBARRIER_TRY_WAIT:
    ok = exec_mbarrier(vm, in, m);
    /* A failed poll in a side of a divergent if lets the other side run. */
    if (ok && vm->coop && in->code == TL_OP_SIMT_MBARRIER_TRY_WAIT) {
      bool failed = false;
      for (int j = 0; j < m->n && !failed; j++)
        failed = !reg(vm, in->out[0], m->t[j])[0];
      if (failed && !scoop_yield(vm))
        ok = false;
    }
    break;
  case TL_OP_SIMT_TMA_LOAD:
    ok = exec_tma_load(vm, in, m);
    break;
  case TL_OP_SIMT_LDMATRIX:
    ok = exec_ldmatrix(vm, in, m);
    break;
  case TL_OP_SIMT_MMA:
    ok = exec_mma(vm, in, m);
    break;
  case TL_OP_SIMT_SHFL:
    ok = exec_shfl(vm, in, m);
    break;
  case TL_OP_SIMT_WGMMA:
    return exec_wgmma(vm, in, m);
  case TL_OP_SIMT_WGMMA_DESC:
    ok = exec_wgmma_desc(vm, in, m);
    break;
  case TL_OP_SIMT_WGMMA_FENCE:
    return exec_wgmma_fence(vm, in, m);
  case TL_OP_SIMT_WGMMA_COMMIT:
    return exec_wgmma_commit(vm, in, m);
  case TL_OP_SIMT_WGMMA_WAIT:
    return exec_wgmma_wait(vm, in, m);
  case TL_OP_SIMT_SETMAXNREG:
    /* The VM has no register file to resize: only whole warpgroups may
     * run it (.sync.aligned, one instruction for the warpgroup), and each
     * count in the direction of its action from the last. */
    return full_warpgroups(vm, in, m) && exec_setmaxnreg(vm, in, m);
  case TL_OP_SIMT_PRINTF:
    exec_printf(vm, in, m);
    ok = true;
    break;
  default:
    ok = in->run == SR_ARITH ? exec_arith(vm, in, m) : exec_reg(vm, in, m);
    break;
  }
  if (ok && vm->k->has_wgmma && in->nout && in->code != TL_OP_SCF_FOR &&
      in->code != TL_OP_SCF_IF && in->code != TL_OP_SCF_WHILE)
    wg_stamp(vm, in, m);
  return ok;
}

/*===--- Running ---------------------------------------------------------===*/

static bool check_launch(TlOp *func, const TlSimtLaunch *l) {
  for (int d = 0; d < 3; d++) {
    if (l->grid[d] < 1 || l->grid[d] > INT32_MAX) {
      tl_op_emit_error(func,
                       "grid dimension %c is %lld; it must be 1 to "
                       "2147483647",
                       "xyz"[d], (long long)l -> grid[d]);
      return false;
    }
    if (l->block[d] < 1 || l->block[d] > 1024) {
      tl_op_emit_error(func,
                       "block dimension %c is %lld; it must be 1 to "
                       "1024",
                       "xyz"[d], (long long)l -> block[d]);
      return false;
    }
  }
  int64_t T = l->block[0] * l->block[1] * l->block[2];
  if (T > 1024) {
    tl_op_emit_error(func, "a block of %lld threads is more than 1024",
                     (long long)T);
    return false;
  }
  if (l->smem_bytes < 0 || l->smem_bytes > tl_arch_max_smem_any()) {
    tl_op_emit_error(func,
                     "%lld bytes of dynamic shared memory; a block has 0 to "
                     "%lld",
                     (long long)l->smem_bytes,
                     (long long)tl_arch_max_smem_any());
    return false;
  }
  int64_t req = int_attr(func, "threads", 0),
          mx = int_attr(func, "max_threads", 0);
  if (req > 0 && req != T) {
    tl_op_emit_error(func,
                     "the kernel requires %lld threads per block (threads = "
                     "%lld), but the launch has %lld",
                     (long long)req, (long long)req, (long long)T);
    return false;
  }
  if (req <= 0 && mx > 0 && T > mx) {
    tl_op_emit_error(func,
                     "the kernel allows at most %lld threads per block "
                     "(max_threads = %lld), but the launch has %lld",
                     (long long)mx, (long long)mx, (long long)T);
    return false;
  }
  return true;
}

static bool bind(TlSimtVm *vm, TlOp *func, unsigned nargs,
                 const TlVmArg *args) {
  unsigned n = tl_simt_vm_num_params(func);
  if (nargs != n) {
    tl_op_emit_error(func, "takes %u arguments, but %u are given", n, nargs);
    return false;
  }
  for (unsigned i = 0; i < n; i++) {
    TlType *t = tl_simt_vm_param_type(func, i);
    const char *name = tl_simt_vm_param_name(func, i);
    const TlVmArg *a = &args[i];
    uint64_t v;
    if (tl_simt_is_tensormap(t)) {
      /* The 128 bytes of TL's encoding, in a buffer (docs/runtime.md). */
      if (a->kind != TL_VM_ARG_BUFFER || !a->data ||
          a->size < TL_TENSOR_MAP_BYTES) {
        tl_op_emit_error(func,
                         "parameter '%s' (!simt.tensormap) needs a buffer of "
                         "the %d bytes of a tensor map",
                         name, TL_TENSOR_MAP_BYTES);
        return false;
      }
      v = global_base(i);
    } else if (tl_simt_is_ptr(t)) {
      if (tl_simt_ptr_space(t) != TL_SIMT_GLOBAL) {
        tl_op_emit_error(func,
                         "parameter '%s' is a shared pointer; kernel "
                         "pointers are global",
                         name);
        return false;
      }
      if (a->kind != TL_VM_ARG_BUFFER) {
        tl_op_emit_error(func,
                         "parameter '%s' (!simt.ptr<global>) needs a "
                         "buffer",
                         name);
        return false;
      }
      if (!a->data && a->size) {
        tl_op_emit_error(func, "parameter '%s' has a NULL buffer", name);
        return false;
      }
      if (a->size > GLOBAL_OFF_MASK) {
        tl_op_emit_error(func,
                         "parameter '%s' has a buffer of 2^40 bytes or "
                         "more",
                         name);
        return false;
      }
      v = global_base(i);
    } else {
      const EType *e = etype(vm, t);
      if (a->kind == TL_VM_ARG_BUFFER) {
        tl_op_emit_error(func,
                         "parameter '%s' is a scalar, but a buffer is "
                         "given",
                         name);
        return false;
      }
      if (e->kind == EK_FLOAT)
        v = e_fencode(e, a->kind == TL_VM_ARG_FLOAT ? a->f : (double)a->i);
      else if (a->kind == TL_VM_ARG_FLOAT) {
        tl_op_emit_error(func,
                         "parameter '%s' is an integer, but a float is "
                         "given",
                         name);
        return false;
      } else
        v = (uint64_t)a->i & e->mask;
    }
    uint32_t s = vm->k->body.args[i];
    for (int th = 0; th < vm->T; th++)
      reg(vm, s, th)[0] = v;
  }
  return true;
}

static void block_begin(TlSimtVm *vm) {
  memset(vm->sbytes, 0, sizeof(SByte) * (size_t)(vm->smem_size + 1));
  memset(vm->smem, 0, (size_t)vm->smem_size + 1);
  memset(vm->committed, 0, sizeof(uint32_t) * (size_t)vm->T);
  memset(vm->exited, 0, (size_t)vm->T);
  vm->copies.len = 0;
  vm->live.len = 0;
  vm->epoch = 1;
  for (size_t i = 0; i < vm->tmas.len; i++) {
    tl_free(vm->tmas.data[i].data);
    tl_free(vm->tmas.data[i].mask);
  }
  vm->tmas.len = 0;
  vm->mbars.len = 0;
  memset(vm->seen, 0, sizeof(uint32_t) * (size_t)vm->T * MAX_MBARS);
  memset(vm->know, 0, sizeof(uint64_t) * (size_t)vm->T * (size_t)vm->T);
  vm->now = 0;
  memset(vm->wg_regs, 0, sizeof vm->wg_regs);
  vm->wgops.len = 0;
  vm->wg_aregs.len = 0;
  vm->wgreads.len = 0;
  vm->wg_live = 0;
  if (vm->k->has_wgmma) {
    size_t n = (size_t)vm->k->nslots * (size_t)vm->T;
    memset(vm->wg_committed, 0, sizeof(uint32_t) * (size_t)(vm->T / 128 + 1));
    memset(vm->fences, 0, sizeof(uint32_t) * (size_t)vm->T);
    memset(vm->regmark, 0, sizeof(uint32_t) * n);
    memset(vm->wstamp, 0, sizeof(uint32_t) * n);
  }
}

/* Copies nobody waited for are an error: their data may never land. A
 * thread that left through simt.exit no longer waits for its copies (no
 * op of it reads them), as tl.exit skips the block VM's check. */
static bool block_end(TlSimtVm *vm) {
  for (size_t i = 0; i < vm->wgops.len; i++) {
    const WgOp *w = &vm->wgops.data[i];
    if (!w->retired)
      return sv_error(vm, w->op,
                      "the wgmma of warpgroup %d is still in flight when the "
                      "kernel ends (no simt.wgmma_wait retired it)",
                      w->wg);
  }
  for (size_t i = 0; i < vm->live.len; i++) {
    const Copy *c = &vm->copies.data[vm->live.data[i]];
    if (vm->exited[c->thread])
      continue;
    return sv_error(vm, c->op,
                    "the cp.async of %s into shared address %u is still "
                    "pending when the kernel ends (no cp.async.wait_group "
                    "completed it)",
                    who(vm, c->thread).s, c->dst);
  }
  for (size_t i = 0; i < vm->tmas.len; i++) {
    const Tma *c = &vm->tmas.data[i];
    if (c->landed || vm->exited[c->thread])
      continue;
    const MBar *b = &vm->mbars.data[c->bar];
    return sv_error(vm, c->op,
                    "the TMA load of %s into shared address %u is still "
                    "pending when the kernel ends: phase %u of its mbarrier "
                    "at shared address %u never completed (%u of %u "
                    "arrivals missing, transaction count %lld bytes)",
                    who(vm, c->thread).s, c->dst, b->phases, b->addr,
                    b->missing, b->count, (long long)b->tx);
  }
  return true;
}

TlResult tl_simt_vm_run(TlSimtVm *vm, TlOp *func, const TlSimtLaunch *launch,
                        unsigned nargs, const TlVmArg *args) {
  memset(&vm->stats, 0, sizeof vm->stats);
  vm->failed = false;
  if (!is_simt_kernel(func)) {
    tl_op_emit_error(func, "is not a kernel (a func with the 'kernel' "
                           "attribute)");
    return TL_FAILURE;
  }
  if (!check_launch(func, launch))
    return TL_FAILURE;
  SKernel *k = compile_kernel(vm, func);
  if (!k)
    return TL_FAILURE;
  vm->k = k;
  vm->func = func;
  vm->args = args;
  vm->nargs = nargs;
  memcpy(vm->grid, launch->grid, sizeof vm->grid);
  memcpy(vm->bdim, launch->block, sizeof vm->bdim);
  vm->T = (int)(launch->block[0] * launch->block[1] * launch->block[2]);
  vm->smem_size = launch->smem_bytes;
  size_t words = (size_t)k->total * (size_t)vm->T + 1;
  if (words > vm->rf_cap) {
    tl_free(vm->rf);
    vm->rf = tl_xmalloc(sizeof(uint64_t) * words);
    vm->rf_cap = words;
  }
  memset(vm->rf, 0, sizeof(uint64_t) * words);
  tl_free(vm->smem);
  tl_free(vm->sbytes);
  tl_free(vm->committed);
  tl_free(vm->active);
  tl_free(vm->exited);
  vm->smem = tl_xmalloc((size_t)vm->smem_size + 1);
  vm->sbytes = tl_xmalloc(sizeof(SByte) * ((size_t)vm->smem_size + 1));
  vm->committed = tl_xmalloc(sizeof(uint32_t) * (size_t)vm->T);
  vm->active = tl_xcalloc((size_t)vm->T, 1);
  vm->exited = tl_xcalloc((size_t)vm->T, 1);
  tl_free(vm->seen);
  vm->seen = tl_xcalloc((size_t)vm->T * MAX_MBARS, sizeof(uint32_t));
  tl_free(vm->know);
  tl_free(vm->mpend);
  tl_free(vm->mdone);
  vm->know = tl_xcalloc((size_t)vm->T * (size_t)vm->T, sizeof(uint64_t));
  vm->mpend = tl_xcalloc((size_t)vm->T * MAX_MBARS, sizeof(uint64_t));
  vm->mdone = tl_xcalloc((size_t)vm->T * MAX_MBARS * 2, sizeof(uint64_t));
  if (k->has_wgmma) {
    size_t n = (size_t)k->nslots * (size_t)vm->T + 1;
    tl_free(vm->wg_committed);
    tl_free(vm->fences);
    vm->wg_committed = tl_xcalloc((size_t)(vm->T / 128 + 1), sizeof(uint32_t));
    vm->fences = tl_xcalloc((size_t)vm->T, sizeof(uint32_t));
    if (n > vm->mark_cap) {
      tl_free(vm->regmark);
      tl_free(vm->wstamp);
      vm->regmark = tl_xmalloc(sizeof(uint32_t) * n);
      vm->wstamp = tl_xmalloc(sizeof(uint32_t) * n);
      vm->mark_cap = n;
    }
  }
  TlResult result = TL_SUCCESS;
  if (!bind(vm, func, nargs, args)) {
    result = TL_FAILURE;
    goto out;
  }
  Mask all = mask_new(vm->T);
  for (int t = 0; t < vm->T; t++)
    all.t[all.n++] = t;
  for (int64_t z = 0; z < vm->grid[2] && !result; z++)
    for (int64_t y = 0; y < vm->grid[1] && !result; y++)
      for (int64_t x = 0; x < vm->grid[0] && !result; x++) {
        vm->bidx[0] = x;
        vm->bidx[1] = y;
        vm->bidx[2] = z;
        block_begin(vm);
        bool ok = run_body(vm, &k->body, &all) && block_end(vm);
        vm->stats.blocks++;
        /* After each block too: loops are not the only way to run long. */
        if (ok && over_budget(vm)) {
          vm_block_budget_error(func, vm->max_ops, vm->stats.blocks);
          ok = false;
        }
        if (!ok) {
          tl_emit_note(vm->ctx, tl_op_loc(func),
                       "in block (%lld, %lld, %lld) of the grid (%lld, %lld, "
                       "%lld)",
                       (long long)x, (long long)y, (long long)z,
                       (long long)vm->grid[0], (long long)vm->grid[1],
                       (long long)vm->grid[2]);
          result = TL_FAILURE;
        }
      }
  tl_free(all.t);
out:
  vm->func = NULL;
  vm->args = NULL;
  return result;
}

TlResult tl_simt_vm_run_named(TlSimtVm *vm, TlModule *m, const char *name,
                              const TlSimtLaunch *launch, unsigned nargs,
                              const TlVmArg *args) {
  TlOp *f = tl_simt_vm_find_kernel(m, name);
  return f ? tl_simt_vm_run(vm, f, launch, nargs, args) : TL_FAILURE;
}
