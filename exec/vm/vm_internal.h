/* Shared between the files of the VM: the compiled form of a kernel, the
 * runtime values, element codecs, layout tables and the error helpers. */
#ifndef TL_VM_INTERNAL_H
#define TL_VM_INTERNAL_H

#include "tl/dialects.h"
#include "tl/predicates.h"
#include "tl/tl.h"
#include "tl/vm.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

/*===--- Element types ---------------------------------------------------===*/

typedef enum EKind { EK_BOOL, EK_UINT, EK_SINT, EK_FLOAT } EKind;

/* A scalar type as the VM computes with it. Every value is a code: the
 * type's bit pattern in the low `bits` bits of a uint64_t, higher bits 0. */
typedef struct EType {
  TlType *type;
  EKind kind;
  unsigned bits;
  uint64_t mask;
  bool has_dt; /* dt is valid (ints of widths 1..8/16/32/64, floats) */
  TlDType dt;
  const double *table; /* decode table for floats of <= 16 bits, or NULL */
  uint64_t nan_code;   /* canonical NaN code (floats with NaN) */
  bool has_nan;
} EType;

static inline int64_t e_sval(const EType *e, uint64_t c) {
  if (e->kind == EK_SINT && e->bits < 64 && ((c >> (e->bits - 1)) & 1))
    return (int64_t)(c | ~e->mask);
  return (int64_t)c;
}

double e_fdecode_slow(const EType *e, uint64_t c);
uint64_t e_fencode(const EType *e, double x);

/* The value of a float code as a double (exact). */
static inline double e_f(const EType *e, uint64_t c) {
  if (e->table)
    return e->table[c];
  if (e->bits == 32) {
    uint32_t u = (uint32_t)c;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  if (e->bits == 64) {
    double d;
    memcpy(&d, &c, 8);
    return d;
  }
  return e_fdecode_slow(e, c);
}

/* The value of any code as a double (integers above 2^53 round). */
static inline double e_num(const EType *e, uint64_t c) {
  if (e->kind == EK_FLOAT)
    return e_f(e, c);
  if (e->kind == EK_SINT)
    return (double)e_sval(e, c);
  return (double)c;
}

/* Converts code c of type s to type d by the rules of tl.cast (docs/vm.md):
 * value-preserving, rounded to nearest even and saturated; float to int
 * toward zero, NaN to 0; to bool: nonzero. */
uint64_t e_convert(const EType *s, const EType *d, uint64_t c);
/* e_convert, except that a float becomes an integer rounded by mode (a
 * TlRounding: toward zero, to nearest even, down, up), then saturated, NaN
 * giving 0 (tl.cast's "rounding"); other pairs as e_convert. */
uint64_t e_convert_rounded(const EType *s, const EType *d, uint64_t c,
                           int mode);
/* Sum x + y of two doubles rounded to odd (the exact sum when it is a
 * double): rounding this once more to a format of at most 51 significant
 * bits gives the correctly rounded sum. */
double e_add_odd(double x, double y);
/* Integer conversions to double rounded to odd (exact below 2^53). */
double e_i64_odd(int64_t v);
double e_u64_odd(uint64_t v);

/*===--- Runtime values --------------------------------------------------===*/

/* A register tile: logical elements in row-major order, and which of them
 * are undefined (NULL when none). Reference counted: SSA values share. */
typedef struct Tile {
  int refs;
  int64_t n;
  TlType *type;
  uint64_t *v;
  uint8_t *undef;
  uint32_t dot;  /* a tl.dot_async result: its number (in flight until a */
  TlOp *dot_op;  /* tl.dot_wait retires it), else 0; and the op */
} Tile;

/* A view of global memory. */
typedef struct GView {
  int param; /* the pointer parameter's index */
  int rank;
  int64_t sizes[TL_LAYOUT_MAX_RANK];
  int64_t strides[TL_LAYOUT_MAX_RANK];
  TlOp *def;
} GView;

/* State of one shared element; the access fields are valid only when
 * epoch equals the block's current epoch (the count of tl.synchronize). */
enum { T_NONE = -1, T_BLOCK = -2, T_MANY = -3 };
typedef struct SElem {
  uint32_t epoch;
  int16_t writer;   /* T_NONE, T_BLOCK (completed copy) or a thread */
  int16_t reader;   /* T_NONE, T_MANY or a thread */
  uint32_t pending; /* copy group id of a pending copy_async, 0 if none */
  uint32_t dot;     /* the newest tl.dot_async that read it (its number), 0 */
  uint32_t ring;    /* the ring whose copy last filled it (Ring.id), 0 */
  uint32_t step;    /* and the step of that copy */
  uint8_t init;
  TlOp *wop; /* the op that last wrote it */
} SElem;

/* Accesses to one global element in the run: who last wrote it and who
 * read it, by block (linear index) and epoch within the block, when (the
 * run's access stamp) and whether atomically; and the releases published
 * to it by atomics (an index + 1 into TlVm.syncs, 0: none). */
typedef struct GElem {
  int32_t wblock, rblock; /* -1: never */
  uint32_t wepoch, repoch;
  int16_t writer, reader; /* a thread or T_MANY */
  uint8_t watomic, ratomic;
  uint32_t sync;
  uint64_t wstamp, rstamp;
  TlOp *wop;
} GElem;

/* A vector clock over the blocks of a run: entry (b, s) says that the
 * global accesses of block b up to stamp s are ordered (released, or made
 * visible by an acquire). Blocks missing have stamp 0. */
typedef struct ClockEntry {
  int32_t block;
  uint64_t stamp;
} ClockEntry;
typedef TL_VEC(ClockEntry) Clock;

/* A register tile that a tl.dot_async reads as its a (the value, or a
 * value it renames: tl.reshape, tl.permute and tl.view of registers add no
 * instruction): the hardware reads those registers until the product
 * retires, so the op that defines them must not run again before. */
typedef struct DotReg {
  uint32_t slot, dot;
  TlOp *op; /* the tl.dot_async */
} DotReg;

/* The steps [step, step_hi] of ring `ring` (0: none) whose slots a
 * tl.dot_async reads. */
typedef struct DotSlots {
  uint32_t ring;
  uint32_t step, step_hi;
} DotSlots;

/* A tl.dot_async in flight: the warps that still have it in flight (bit
 * w: warp w; a dot at the block level is every warp's), and the ring
 * steps whose slots its shared operands read (up to DOT_RINGS rings), for
 * tl.ring_release and the copies into those slots. */
enum { DOT_RINGS = 4 };
typedef struct DotRec {
  uint32_t id;
  uint32_t warps;
  TlOp *op;
  DotSlots reads[DOT_RINGS];
} DotRec;

/* A ring of the block (tl.alloc_ring): the producer's steps acquired and
 * committed (in order from 0), each warp's steps waited for and released
 * (in order from 0), and per slot the step whose releases rel_count
 * counts. */
typedef struct Ring {
  uint32_t id; /* 1, 2, ... in the block */
  unsigned stages, consumers;
  TlOp *op;
  int64_t acquired, committed;
  int64_t *waited, *released; /* per warp */
  int64_t *rel_step;          /* per slot */
  unsigned *rel_count;        /* per slot */
  struct Ring *next;
} Ring;

/* A shared-memory allocation of the block (tl.alloc_shared). Its storage
 * is indexed by element offset, as many elements as the cosize of the
 * tile's layout, so that every view of it (tl.slice, tl.permute,
 * tl.reshape) reaches the same elements, and their states, through its
 * own layout. */
typedef struct Shared {
  int64_t n;
  uint64_t *v;
  SElem *st;
  TlOp *alloc_op, *free_op;
  struct SView *root; /* the value tl.alloc_shared made: what may be freed */
  int64_t npending;
  struct Shared *next;
} Shared;

/* A !tl.shared value: a view of an allocation. The view's element at
 * row-major flat index f is storage element base + offs[f], offs being the
 * element offsets of the view type's layout (swizzle included). An
 * allocation's own value has base 0; a slice adds the element offset of
 * its position. Views live in the block's arena. */
typedef struct SView {
  Shared *mem;
  TlType *type;
  int rank;
  int64_t shape[TL_LAYOUT_MAX_RANK];
  int64_t n;
  int64_t base;
  const int64_t *offs;
  TlOp *def; /* the op that made the view */
} SView;

typedef enum VKind {
  V_NONE,
  V_SCALAR,
  V_PTR,
  V_TILE,
  V_GLOBAL,
  V_SHARED,
  V_RING
} VKind;

typedef struct Val {
  VKind kind;
  uint64_t bits; /* scalar code; pointer: parameter index */
  void *obj;     /* Tile, GView, SView or Ring */
} Val;

/*===--- Compiled kernels ------------------------------------------------===*/

/* Where run_body sends an instruction: the VM's own control flow (scf,
 * tl.exit), the scalar ops (arith, tl.template, tl.block_indices), the
 * tile ops (tile.c) or the memory ops (memory.c). RUN_NONE marks the ops
 * the VM does not execute. */
typedef enum VmRun {
  RUN_NONE,
  RUN_FLOW,
  RUN_SCALAR,
  RUN_TILE,
  RUN_MEMORY,
} VmRun;

typedef struct Body Body;
typedef struct Coop Coop;

/* How an instruction at the block level (outside warp branches) meets
 * warp-uniform values: not at all, as a scalar op computing one per warp,
 * or as a warp branch, whose regions run once per warp. */
typedef enum VmWarp { W_BLOCK, W_SCALAR, W_BRANCH } VmWarp;

typedef struct Inst {
  TlOp *op;
  TlOpId code; /* the op's id */
  VmRun run;
  VmWarp warp;
  unsigned nin, nout, nregions;
  uint32_t *in, *out;
  Body *regions;
  int pred;       /* TlCmpiPredicate, TlCmpfPredicate or TlReduceKind */
  int64_t imm;    /* reduce dim, wait count */
  uint64_t konst; /* constant code / alloc_register init */
  bool has_konst;
  const EType *et;  /* result (or operand) element type */
  const EType *et2; /* source element type (casts) */
  uint64_t *ctab;   /* cast table by source code, built on first use */
  uint32_t *aregs;  /* tl.dot_async with a in registers: the slots of a */
  unsigned naregs;  /* and of the values it renames (vm_dot_regs_add) */
  bool coop;        /* a warp branch that waits on rings (run_coop) */
  int64_t tile_threads; /* in a warp branch: the fewest threads a register */
                        /* tile it makes or uses spans (0: no tile) */
} Inst;

struct Body {
  Inst *insts;
  unsigned n;
  uint32_t *args;
  unsigned nargs;
  uint32_t *yield; /* terminator operands (scf.yield / scf.condition) */
  unsigned nyield;
  uint32_t nslots; /* kernel bodies: value slots the kernel uses */
  uint32_t *wslots; /* kernel bodies: the slots of warp-uniform values at */
  unsigned nwslots; /* the block level (one value per warp in TlVm.wvals) */
};

/*===--- Layout tables ---------------------------------------------------===*/

/* A register layout tabulated: idx[t * local + i] is the row-major flat
 * index of local element i of thread t; owner[e] the lowest thread holding
 * element e. */
typedef struct LTab {
  const TlLayout *layout;
  int64_t threads, local, n, rep;
  int32_t *idx;
  int32_t *owner;
} LTab;

/*===--- Pointer-keyed hash map ------------------------------------------===*/

typedef struct PMap {
  const void **keys;
  void **vals;
  size_t cap, len;
} PMap;
void *pmap_get(const PMap *m, const void *k);
void pmap_put(PMap *m, const void *k, void *v);
void pmap_free(PMap *m);

/*===--- Budgets (both VMs) ---------------------------------------------===*/

/* Whether a run of budget max_ops (0: none) has spent it: a block counts
 * as one op besides the ops it executes. */
static inline bool vm_over_budget(int64_t max_ops, int64_t ops,
                                  int64_t blocks) {
  return max_ops && ops + blocks > max_ops;
}
/* The error, at the kernel, of a run that spent its budget by the end of
 * its block number `blocks` (loops are not the only way to run long). */
void vm_block_budget_error(TlOp *kernel, int64_t max_ops, int64_t blocks);

/*===--- The machine -----------------------------------------------------===*/

struct TlVm {
  TlContext *ctx;
  FILE *print_out;
  int64_t max_ops;        /* 0: no budget */
  int64_t max_bytes;      /* a tile's or workspace's at most (> 0) */
  TlVmStats stats;
  TlArena arena; /* compiled kernels, element types, layout tables */
  PMap etypes;   /* TlType* -> EType* */
  PMap ltabs;    /* TlLayout* -> LTab* */
  PMap soffs;    /* TlType* (!tl.shared) -> element offsets (int64_t[]) */
  PMap kernels;  /* TlOp* (tl.kernel) -> Body* */
  PMap slots_of; /* while compiling: TlValue* -> slot + 1 */
  uint32_t nslots;
  TlUniformity *uni;       /* while compiling: the kernel's warp uniformity */
  bool in_branch;          /* while compiling: inside a warp branch */
  TL_VEC(uint32_t) wslots; /* while compiling: Body.wslots */
  double *f16_table, *bf16_table;

  /* The run in progress. */
  TlOp *kernel;
  const TlVmArg *args; /* the kernel's arguments, then its workspaces */
  unsigned nargs;
  unsigned user_nargs; /* the kernel's own arguments */
  TlOp **ws_ops;       /* the tl.alloc_global ops, workspace k at args[user_nargs + k] */
  Val *slots;
  uint32_t slot_cap;
  int64_t grid[3], block[3], threads;
  uint32_t epoch;
  /* Warps: the one running a warp branch (-1: the whole block runs), and
   * the values of warp-uniform scalars at the block level, slot s of warp
   * w at wvals[w * wstride + s]. */
  int warp;
  int64_t nwarps;
  uint64_t *wvals;
  uint32_t wstride;
  GElem **gtrack;      /* per pointer parameter, per element; NULL: none */
  uint64_t stamp;      /* global-memory ops executed in the run: orders them */
  TL_VEC(Clock) syncs; /* releases published to atomically accessed elements */
  uint64_t released;   /* this block's accesses up to this stamp are released */
  Clock seen;          /* releases this block's atomics observed */
  Clock visible;       /* releases this block acquired */
  uint32_t dots;       /* tl.dot_async ops issued in this block */
  TL_VEC(DotRec) dot_recs; /* those in flight, oldest first */
  int64_t wg_regs[8]; /* per warpgroup, the count its last
                         tl.set_max_registers set (0: none yet) */
  TL_VEC(DotReg) dot_regs; /* the register a operands of those in flight */
  Ring *rings;         /* the block's rings, newest first */
  uint32_t nrings;
  Coop *coop;          /* the warp branch running its warps as threads */
  uint64_t coop_progress; /* ring commits and releases so far */
  uint32_t open_group; /* id of the group copy_async adds to */
  uint32_t done_group; /* every group with id <= this one completed */
  /* Copies through tensor maps: the kernel's ring size
   * (tl_kernel_tma_ring, for tma_kernel), and the epoch in which each of
   * the last 256 groups completed (group g at g % 256). */
  TlOp *tma_kernel;
  unsigned tma_ring;
  uint32_t group_epoch[256];
  Shared *shared;      /* live and freed allocations of this block */
  TlArena block_arena; /* global views of this block */
  bool failed;
};

/* Race tracking of global memory for one run (memory.c). */
void vm_gtrack_begin(TlVm *vm);
void vm_gtrack_end(TlVm *vm);

/* Element type of a scalar type (cached). */
const EType *vm_etype(TlVm *vm, TlType *t);
/* Layout table (cached); NULL after an error at op when the layout does
 * not fit the block. */
const LTab *vm_ltab(TlVm *vm, const TlLayout *l);

/* An error at op; sets vm->failed and returns false. The run adds a note
 * naming the block after the error's own notes. */
bool vm_error(TlVm *vm, TlOp *op, const char *fmt, ...) TL_PRINTF(3, 4);
/* A note at a related op (after vm_error). */
void vm_note(TlVm *vm, TlOp *op, const char *fmt, ...) TL_PRINTF(3, 4);
/* "[1, 2]" */
void vm_fmt_index(char *buf, size_t cap, int rank, const int64_t *idx);

/* Tiles. */
Tile *tile_new(TlVm *vm, TlType *type, bool undef);
void tile_release(Tile *t);
void val_set(Val *slot, Val v); /* takes a reference */
void val_clear(Val *slot);

static inline Val *vm_in(TlVm *vm, const Inst *in, unsigned i) {
  return &vm->slots[in->in[i]];
}
/* Stores a new tile (whose reference the call takes over). */
void vm_put_tile(TlVm *vm, const Inst *in, unsigned i, Tile *t);
void vm_put_scalar(TlVm *vm, const Inst *in, unsigned i, uint64_t code);
/* Integer value of scalar operand i (sign- or zero-extended). */
int64_t vm_int_operand(TlVm *vm, const Inst *in, unsigned i);

/* Inside a warp branch (vm->warp >= 0), where only the running warp's
 * threads run: for each row-major element of a register tile of layout
 * lt, the lowest thread of the warp that holds it (the one that stores
 * it), or -1 when none does. NULL at the block level, where every thread
 * runs. The caller frees it (tl_free). */
int32_t *vm_warp_holders(TlVm *vm, const LTab *lt);

/* Executors by area (tile.c, memory.c). Each returns false after an
 * error. */
bool vm_exec_tile(TlVm *vm, Inst *in);
bool vm_exec_memory(TlVm *vm, Inst *in);
/* The values of shared-tile operand i of in (a !tl.shared read in place,
 * as tl.dot's), row-major, read by the whole block: every write to them
 * must be ordered before by a tl.synchronize. A nonzero dot (the number of
 * a tl.dot_async) marks them read by it: writes are errors until a
 * tl.dot_wait retires it. NULL after an error. The caller frees them. */
uint64_t *vm_read_shared_operand(TlVm *vm, Inst *in, unsigned i,
                                 uint32_t dot);
/* Whether the operands of in (other than the accumulator of a
 * tl.dot_async) are free of tl.dot_async results in flight; reports the
 * error otherwise. */
bool vm_dot_operands_ok(TlVm *vm, Inst *in);
/* Records the register a of tl.dot_async `in` (number dot) and the values
 * it renames, for vm_dot_operands_ok. */
void vm_dot_regs_add(TlVm *vm, Inst *in, uint32_t dot);
/* Issues a tl.dot_async in the running warp (or the block): its number,
 * in flight until the warps' tl.dot_wait retire it. */
uint32_t vm_dot_issue(TlVm *vm, Inst *in);
/* Whether a product numbered at most dot is in flight in one of the warps
 * (a bit set per warp); products retire in order in each warp. */
bool vm_dot_in_flight(const TlVm *vm, uint32_t dot, uint32_t warps);
/* The warps running the current op: the running warp's bit in a warp
 * branch, else every warp's. */
uint32_t vm_running_warps(const TlVm *vm);
/* Cooperative threads that take turns (baton.c): n tasks, each running
 * body(ctx, i) in a thread of its own, one at a time. The scheduler (the
 * caller's thread) gives task i the turn with vm_baton_run, which returns
 * when the task yields (vm_baton_yield, from inside body) or ends;
 * state[i] then says which (VB_BLOCKED or VB_DONE, ok[i] its result).
 * Setting abort makes yields return false and tasks not yet started skip
 * their body; vm_baton_finish runs the unfinished ones to their end,
 * joins the threads and frees the baton. */
enum { VB_READY, VB_BLOCKED, VB_DONE };
typedef struct VmBaton {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t n, turn;
  int *state;
  bool *ok;
  bool abort;
  pthread_t *th;
  void *tasks;
  bool (*body)(void *ctx, int64_t i);
  void *ctx;
} VmBaton;
void vm_baton_start(VmBaton *b, int64_t n, bool (*body)(void *, int64_t),
                    void *ctx);
void vm_baton_run(VmBaton *b, int64_t i);
bool vm_baton_yield(VmBaton *b, int64_t i);
void vm_baton_finish(VmBaton *b);

/* In a warp branch that runs its warps as threads (vm.c, run_coop): the
 * running warp cannot go on until another warp commits or releases a
 * step; returns when it may look again, false when the run is aborted
 * (a deadlock or another warp's error). */
bool vm_coop_block(TlVm *vm);

/* Block start and end in memory.c: the end checks leaks and pending
 * copies (unless the block exited) and frees the block's shared tiles. */
void vm_block_begin(TlVm *vm);
bool vm_block_end(TlVm *vm, bool check);

/* The integer and float binary ops of arith on codes of type e, shared
 * by both VMs and the elementwise tile ops; k is the arith op's id.
 * vm_int_binary fails (after an error at op) where arith leaves the
 * result undefined. */
bool vm_int_binary(TlVm *vm, TlOp *op, const EType *e, TlOpId k, uint64_t a,
                   uint64_t b, uint64_t *out);
uint64_t vm_float_binary(const EType *e, TlOpId k, uint64_t a, uint64_t b);

/* The value an atomic of kind k leaves in an element of type e holding
 * old, given v (docs/vm.md): add wraps integers and rounds floats once,
 * f32 flushing subnormal inputs and results to zero as PTX's atom.add.f32
 * does; max and min by e's signedness; exch gives v. */
uint64_t vm_atomic_apply(const EType *e, TlAtomicKind k, uint64_t old,
                         uint64_t v);

#endif
