/* The thread-level VM: runs a simt kernel (a builtin func with the `kernel`
 * attribute, written in simt + arith + scf) on the CPU over a grid of
 * thread blocks, every thread with its own registers.
 *
 * The threads of a block run in lock-step (SIMT): each op runs for every
 * active thread before the next op starts; scf.if, scf.for and scf.while
 * narrow the active set (threads leave loops independently) and widen it
 * again after the op. Warp-collective ops (shfl, ldmatrix, mma) act for
 * whole warps with the PTX ISA's fragment layouts (lib/layout's atoms).
 * Arithmetic is exact or rounded as PTX rounds (cvt with every rounding
 * mode, f16x2/bf16x2 through lib/dtype's exact helpers, lop3/prmt through
 * its register-op emulator). Memory accesses are checked: bounds, alignment,
 * uninitialised shared memory, cp.async data read before its wait, TMA
 * data read before its mbarrier phase completes or without a wait for it,
 * waits that nothing can complete (deadlock), data races between
 * barriers; barriers reached by only part of the block and
 * warp-collective ops run by part of a warp are errors. docs/vm.md
 * ("The thread-level VM") states the semantics.
 *
 * Every problem is an error diagnostic at the op that found it (naming the
 * thread, its warp and lane, and the address), followed by a note at the
 * kernel naming the block; the run then fails. */
#ifndef TL_SIMT_VM_H
#define TL_SIMT_VM_H

#include "tl/vm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The launch: blocks in the grid and threads in a block (x fastest), and
 * the bytes of dynamic shared memory each block gets. Every size is at
 * least 1 (smem_bytes at least 0); a block has at most 1024 threads and
 * at most as much dynamic shared memory as a block of any target may have
 * (tl_arch_max_smem_any(), tl/arch.h: sm_90's 232448 bytes). */
typedef struct TlSimtLaunch {
  int64_t grid[3];
  int64_t block[3];
  int64_t smem_bytes;
} TlSimtLaunch;

/* Counters of the last run. */
typedef struct TlSimtVmStats {
  int64_t blocks;     /* thread blocks run */
  int64_t ops;        /* ops executed (one per op per active set) */
  int64_t thread_ops; /* ops executed, summed over active threads */
  int64_t barriers;   /* bar.sync completed, summed over blocks */
} TlSimtVmStats;

typedef struct TlSimtVm TlSimtVm;

/* Creates a VM reporting through ctx's diagnostic engine. Caller owns it;
 * the context must outlive it. The VM keeps a compiled form of each kernel
 * it runs, keyed by the op: destroy the VM before the modules it ran.
 * Never fails. */
TlSimtVm *tl_simt_vm_create(TlContext *ctx);
void tl_simt_vm_destroy(TlSimtVm *vm); /* NULL is a no-op */

/* The builtin func with the `kernel` attribute named `name` in m, or the
 * only one when name is NULL. NULL after an error diagnostic at the module
 * when there is no such func, or when name is NULL and there are several. */
TlOp *tl_simt_vm_find_kernel(TlModule *m, const char *name);

/* A kernel's parameters: count, name (its source name without '%', or
 * "argN" when the source gave none; interned, owned by the context), type,
 * and the index of a name (-1 when none). */
unsigned tl_simt_vm_num_params(TlOp *func);
const char *tl_simt_vm_param_name(TlOp *func, unsigned i);
TlType *tl_simt_vm_param_type(TlOp *func, unsigned i);
int tl_simt_vm_param_index(TlOp *func, const char *name);
/* The VM's global address of the first byte of buffer parameter `param`
 * (the base a tensor map over that buffer names; tl/tensor_map.h). */
uint64_t tl_simt_vm_buffer_address(unsigned param);

/* Runs a verified simt kernel with args[0..nargs), one per parameter:
 * TL_VM_ARG_BUFFER for !simt.ptr<global> parameters (the bytes at data,
 * `size` of them, read and written in place; the dtype is not used:
 * simt memory is bytes) and for !simt.tensormap ones (the 128 bytes of
 * tl_tensor_map_encode), TL_VM_ARG_INT or TL_VM_ARG_FLOAT for scalars
 * (as tl_vm_run binds them). A buffer's first byte is 256-byte aligned as
 * the GPU's allocations are, whatever the host address. Returns TL_SUCCESS,
 * or TL_FAILURE after an error diagnostic (bad arguments or launch at the
 * kernel, or the first runtime error, with a note naming the block).
 * Global memory written before an error stays written. */
TlResult tl_simt_vm_run(TlSimtVm *vm, TlOp *func, const TlSimtLaunch *launch,
                        unsigned nargs, const TlVmArg *args);
/* tl_simt_vm_find_kernel then tl_simt_vm_run. */
TlResult tl_simt_vm_run_named(TlSimtVm *vm, TlModule *m, const char *name,
                              const TlSimtLaunch *launch, unsigned nargs,
                              const TlVmArg *args);

TlSimtVmStats tl_simt_vm_stats(const TlSimtVm *vm);

/* How simt.mma sums f16 and bf16 products (docs/vm.md):
 *  TL_SIMT_MMA_SEQUENTIAL  k in order, each sum rounded to nearest even
 *                          to the accumulator: tl.dot's order, so a
 *                          lowered tl.dot gives the tl VM's bits (the
 *                          default);
 *  TL_SIMT_MMA_SM90        the H200's tensor-core datapath (alignment to
 *                          the largest exponent, truncation, one final
 *                          rounding), bit-exact with the GPU for normal
 *                          operands; other operands sum in order.
 * The fp8 (e4m3, e5m2) forms always sum in order: their datapath is not
 * modelled. */
typedef enum TlSimtMmaModel {
  TL_SIMT_MMA_SEQUENTIAL,
  TL_SIMT_MMA_SM90,
} TlSimtMmaModel;
void tl_simt_vm_set_mma_model(TlSimtVm *vm, TlSimtMmaModel model);

/* A budget of executed ops for each run (TlSimtVmStats.ops, summed over
 * all blocks, plus one for each block run; 0, the default: none). A run
 * that exceeds it stops with an error at the innermost loop then running,
 * or at the kernel after the block that spent it, instead of hanging. */
void tl_simt_vm_set_op_limit(TlSimtVm *vm, int64_t max_ops);
/* Where simt.printf writes (stdout by default; NULL discards it). */
void tl_simt_vm_set_print_stream(TlSimtVm *vm, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
