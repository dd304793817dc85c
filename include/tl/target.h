/* The NVPTX back end: simt + arith + scf (in kernels written as builtin
 * funcs) to LLVM IR through the LLVM C API, LLVM's O-level pipeline, and
 * PTX from the NVPTX backend. This header is free of LLVM types; only
 * exec/target includes llvm-c.
 *
 * A func is compiled as a GPU kernel when it has the unit attribute
 * `kernel`; an integer attribute `threads` sets its exact block size
 * (nvvm.reqntid), `max_threads` an upper bound (nvvm.maxntid). */
#ifndef TL_TARGET_H
#define TL_TARGET_H

#include "tl/arch.h"
#include "tl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TlTargetOptions {
  const char *cpu;    /* a name of the target table (tl_arch_names());
                         NULL: tl_arch_default() */
  unsigned ptx;       /* PTX ISA version x 10 (80 = 8.0); 0: the default */
  unsigned opt_level; /* 0..3 */
} TlTargetOptions;

typedef struct TlTarget TlTarget;

/* The compiler's version: TL's and the LLVM it runs ("TL 0.1, LLVM
 * 22.1.0"). A static string; never fails. */
const char *tl_target_version(void);

/* Creates a target machine; NULL with a diagnostic (through ctx) for an
 * unknown cpu or a PTX version it cannot use. Caller owns it. */
TlTarget *tl_target_create(TlContext *ctx, const TlTargetOptions *opts);
void tl_target_destroy(TlTarget *t);
/* The SM number (80, 86, 89, 90) of the target. */
unsigned tl_target_sm(const TlTarget *t);
/* The target's row of the target table. */
const TlArch *tl_target_arch(const TlTarget *t);

typedef struct TlCompileTimes {
  double translate_ms, optimize_ms, codegen_ms;
} TlCompileTimes;

/* Translates the module's kernels and emits PTX into *ptx. When llvm_ir is
 * non-NULL it receives the optimized LLVM IR text instead and no PTX is
 * emitted. Fails with located diagnostics on ops the target cannot run
 * (checked before LLVM is asked: LLVM aborts on what it cannot select).
 * times may be NULL. */
TlResult tl_target_compile(TlTarget *t, TlModule *m, TlStr *ptx,
                           TlStr *llvm_ir, TlCompileTimes *times);

#ifdef __cplusplus
}
#endif
#endif
