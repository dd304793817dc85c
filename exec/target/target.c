/* The NVPTX target machine: the -mcpu targets and their PTX versions come
 * from the target table (include/tl/targets.def; LLVM only warns about
 * unknown -mcpu or +ptx values and falls back, so they are validated
 * here), LLVM's pass pipeline run with the target machine (so NVPTX's own
 * hooks run), and PTX emission. */
#define _POSIX_C_SOURCE 200809L
#include "target_internal.h"
#include "tl/simt.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

enum { MAX_PTX = 90 }; /* the newest ptxas 13.0 and LLVM 22 both accept */

const char *tl_target_version(void) {
  static char text[64];
  if (!text[0]) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    snprintf(text, sizeof text, "TL %s, LLVM %u.%u.%u", TL_VERSION, major,
             minor, patch);
  }
  return text;
}

struct TlTarget {
  TlContext *ctx;
  LLVMTargetRef target;
  LLVMTargetMachineRef tm; /* at PTX ISA ptx */
  const TlArch *arch;
  unsigned ptx, opt;
  bool ptx_given; /* -mptx: a module needing a later PTX is refused */
};

/* A target machine for arch at PTX ISA ptx (x 10); NULL if LLVM makes
 * none. */
static LLVMTargetMachineRef make_tm(LLVMTargetRef target, const TlArch *arch,
                                    unsigned ptx, unsigned opt) {
  char features[16];
  snprintf(features, sizeof features, "+ptx%u", ptx);
  static const LLVMCodeGenOptLevel levels[] = {
      LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
      LLVMCodeGenLevelAggressive};
  return LLVMCreateTargetMachine(target, "nvptx64-nvidia-cuda", arch->name,
                                 features, levels[opt], LLVMRelocDefault,
                                 LLVMCodeModelDefault);
}

static void init_llvm(void) {
  static bool done;
  if (done)
    return;
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  /* 32-bit shared-memory pointers (the window is 228 KB): address
   * arithmetic on them is one 32-bit add, and ld/st.shared, ldmatrix and
   * cp.async take 32-bit registers. A process-wide LLVM option, set once
   * before the first target machine is made. */
  const char *argv[] = {"tl", "-nvptx-short-ptr"};
  LLVMParseCommandLineOptions(2, argv, NULL);
  done = true;
}

TlTarget *tl_target_create(TlContext *ctx, const TlTargetOptions *opts) {
  const TlArch *arch =
      opts && opts->cpu ? tl_arch_lookup(opts->cpu) : tl_arch_default();
  if (!arch) {
    TlStr names = {0};
    tl_arch_names_text(&names, 0, false);
    tl_emit_error(ctx, tl_loc_unknown(), "unknown target '%s' (supported: %s)",
                  opts->cpu, tl_str_cstr(&names));
    tl_str_free(&names);
    return NULL;
  }
  const char *cpu = arch->name;
  unsigned ptx = opts && opts->ptx ? opts->ptx : arch->default_ptx;
  if (ptx < arch->min_ptx || ptx > MAX_PTX) {
    tl_emit_error(ctx, tl_loc_unknown(),
                  "PTX ISA %u.%u cannot target %s (use %u.%u to %u.%u)",
                  ptx / 10, ptx % 10, cpu, arch->min_ptx / 10,
                  arch->min_ptx % 10, MAX_PTX / 10, MAX_PTX % 10);
    return NULL;
  }
  unsigned opt = opts ? opts->opt_level : 3;
  if (opt > 3) {
    tl_emit_error(ctx, tl_loc_unknown(), "optimization level must be 0..3");
    return NULL;
  }
  init_llvm();
  char *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &err)) {
    tl_emit_error(ctx, tl_loc_unknown(), "LLVM has no NVPTX target: %s",
                  err ? err : "");
    LLVMDisposeMessage(err);
    return NULL;
  }
  LLVMTargetMachineRef tm = make_tm(target, arch, ptx, opt);
  if (!tm) {
    tl_emit_error(ctx, tl_loc_unknown(), "cannot create a target machine for %s",
                  cpu);
    return NULL;
  }
  TlTarget *t = tl_xcalloc(1, sizeof *t);
  t->ctx = ctx;
  t->target = target;
  t->tm = tm;
  t->arch = arch;
  t->ptx = ptx;
  t->opt = opt;
  t->ptx_given = opts && opts->ptx;
  return t;
}

void tl_target_destroy(TlTarget *t) {
  if (!t)
    return;
  LLVMDisposeTargetMachine(t->tm);
  tl_free(t);
}

unsigned tl_target_sm(const TlTarget *t) { return t->arch->sm; }

const TlArch *tl_target_arch(const TlTarget *t) { return t->arch; }

/* The latest first PTX ISA (min_ptx) of the warp-level forms of a module
 * that the target has (a tl_op_walk callback; the translation refuses the
 * others). */
typedef struct NeedPtx {
  const TlArch *arch;
  unsigned ptx;
} NeedPtx;

static void need_ptx(TlOp *op, void *user) {
  NeedPtx *n = user;
  TlFeature feature;
  unsigned min_ptx;
  if (tl_simt_op_needs(op, &feature, &min_ptx) &&
      tl_arch_has(n->arch, feature) && min_ptx > n->ptx)
    n->ptx = min_ptx;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

TlResult tl_target_compile(TlTarget *t, TlModule *m, TlStr *ptx,
                           TlStr *llvm_ir, TlCompileTimes *times) {
  double t0 = now_ms();
  /* Without -mptx, a module whose forms need a later PTX ISA than the
   * target's default (fp8 mma: 8.4) gets the first one that has them all. */
  NeedPtx need = {t->arch, t->ptx};
  if (!t->ptx_given)
    tl_op_walk(tl_module_op(m), need_ptx, &need, false);
  LLVMTargetMachineRef tm = need.ptx == t->ptx
                                ? t->tm
                                : make_tm(t->target, t->arch, need.ptx, t->opt);
  LLVMContextRef lctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  TlResult r = TL_FAILURE;
  if (!tm) {
    tl_emit_error(t->ctx, tl_loc_unknown(),
                  "cannot create a target machine for %s", t->arch->name);
    goto out;
  }
  r = tl_target_translate(t->ctx, t->arch, need.ptx, m, lctx, &mod);
  if (TL_FAILED(r))
    goto out;
  LLVMSetTarget(mod, "nvptx64-nvidia-cuda");
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  char *msg = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    /* A verifier failure here is a bug in the translation, not the user's. */
    tl_emit_error(t->ctx, tl_loc_unknown(),
                  "internal error: the LLVM IR TL produced is invalid: %s", msg);
    LLVMDisposeMessage(msg);
    r = TL_FAILURE;
    goto out;
  }
  LLVMDisposeMessage(msg);
  double t1 = now_ms();
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%u>", t->opt);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(mod, pipeline, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    char *em = LLVMGetErrorMessage(e);
    tl_emit_error(t->ctx, tl_loc_unknown(), "LLVM pass pipeline failed: %s", em);
    LLVMDisposeErrorMessage(em);
    r = TL_FAILURE;
    goto out;
  }
  double t2 = now_ms();
  if (llvm_ir) {
    char *s = LLVMPrintModuleToString(mod);
    tl_str_puts(llvm_ir, s);
    LLVMDisposeMessage(s);
  } else {
    LLVMMemoryBufferRef buf = NULL;
    char *err = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err,
                                            &buf)) {
      tl_emit_error(t->ctx, tl_loc_unknown(), "PTX emission failed: %s",
                    err ? err : "");
      LLVMDisposeMessage(err);
      r = TL_FAILURE;
      goto out;
    }
    tl_str_putn(ptx, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
    LLVMDisposeMemoryBuffer(buf);
  }
  if (times) {
    times->translate_ms = t1 - t0;
    times->optimize_ms = t2 - t1;
    times->codegen_ms = now_ms() - t2;
  }
out:
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(lctx);
  if (tm && tm != t->tm)
    LLVMDisposeTargetMachine(tm);
  return r;
}
