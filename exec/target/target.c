/* The NVPTX target machine: an allow-list of SM targets with their PTX
 * versions (LLVM only warns about unknown -mcpu or +ptx values and falls
 * back, so they are validated here), LLVM's pass pipeline run with the
 * target machine (so NVPTX's own hooks run), and PTX emission. */
#define _POSIX_C_SOURCE 200809L
#include "target_internal.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Columns: -mcpu name, SM number, lowest PTX ISA that has it (x10), the
 * default PTX we ask for (every TL feature on that SM: b1 mma needs 7.1,
 * sm_89 needs 7.8, TMA/mbarrier tx on sm_90 need 8.0). */
static const struct {
  const char *cpu;
  unsigned sm, min_ptx, default_ptx;
} cpus[] = {
    {"sm_80", 80, 70, 80}, {"sm_86", 86, 71, 80}, {"sm_89", 89, 78, 80},
    {"sm_90", 90, 78, 80}, {"sm_90a", 90, 80, 80},
};
enum { MAX_PTX = 90 }; /* the newest ptxas 13.0 and LLVM 22 both accept */

static const char *const cpu_names[] = {"sm_80", "sm_86", "sm_89", "sm_90",
                                        "sm_90a", NULL};

const char *const *tl_target_cpus(void) { return cpu_names; }

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
  LLVMTargetMachineRef tm;
  unsigned sm, ptx, opt;
  char cpu[16];
};

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
  const char *cpu = opts && opts->cpu ? opts->cpu : "sm_80";
  int k = -1;
  for (int i = 0; i < (int)(sizeof cpus / sizeof cpus[0]); i++)
    if (!strcmp(cpus[i].cpu, cpu))
      k = i;
  if (k < 0) {
    tl_emit_error(ctx, tl_loc_unknown(),
                  "unknown target '%s' (supported: sm_80, sm_86, sm_89, "
                  "sm_90, sm_90a)",
                  cpu);
    return NULL;
  }
  unsigned ptx = opts && opts->ptx ? opts->ptx : cpus[k].default_ptx;
  if (ptx < cpus[k].min_ptx || ptx > MAX_PTX) {
    tl_emit_error(ctx, tl_loc_unknown(),
                  "PTX ISA %u.%u cannot target %s (use %u.%u to %u.%u)",
                  ptx / 10, ptx % 10, cpu, cpus[k].min_ptx / 10,
                  cpus[k].min_ptx % 10, MAX_PTX / 10, MAX_PTX % 10);
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
  char features[16];
  snprintf(features, sizeof features, "+ptx%u", ptx);
  static const LLVMCodeGenOptLevel levels[] = {
      LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
      LLVMCodeGenLevelAggressive};
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
      target, "nvptx64-nvidia-cuda", cpu, features, levels[opt],
      LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm) {
    tl_emit_error(ctx, tl_loc_unknown(), "cannot create a target machine for %s",
                  cpu);
    return NULL;
  }
  TlTarget *t = tl_xcalloc(1, sizeof *t);
  t->ctx = ctx;
  t->tm = tm;
  t->sm = cpus[k].sm;
  t->ptx = ptx;
  t->opt = opt;
  snprintf(t->cpu, sizeof t->cpu, "%s", cpu);
  return t;
}

void tl_target_destroy(TlTarget *t) {
  if (!t)
    return;
  LLVMDisposeTargetMachine(t->tm);
  tl_free(t);
}

unsigned tl_target_sm(const TlTarget *t) { return t->sm; }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

TlResult tl_target_compile(TlTarget *t, TlModule *m, TlStr *ptx,
                           TlStr *llvm_ir, TlCompileTimes *times) {
  double t0 = now_ms();
  LLVMContextRef lctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  TlResult r = tl_target_translate(t->ctx, t->sm, t->ptx, m, lctx, &mod);
  if (TL_FAILED(r))
    goto out;
  LLVMSetTarget(mod, "nvptx64-nvidia-cuda");
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(t->tm);
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
  LLVMErrorRef e = LLVMRunPasses(mod, pipeline, t->tm, po);
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
    if (LLVMTargetMachineEmitToMemoryBuffer(t->tm, mod, LLVMAssemblyFile, &err,
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
  return r;
}
