/* Shared by the files of exec/target: the only place llvm-c types meet the
 * IR. */
#ifndef TL_TARGET_INTERNAL_H
#define TL_TARGET_INTERNAL_H

#include "tl/target.h"

#include <llvm-c/Core.h>

/* Builds the LLVM module for the kernels of m (see translate.c) for the
 * target arch at PTX ISA ptx (x 10). On failure the diagnostics are
 * reported and *out may hold a partial module (the caller disposes it
 * either way). */
TlResult tl_target_translate(TlContext *ctx, const TlArch *arch, unsigned ptx,
                             TlModule *m, LLVMContextRef lc,
                             LLVMModuleRef *out);

#endif
