/* tl-run: run a kernel on the VM with seeded random, zero or .npy inputs,
 * save outputs as .npy, compare them with references.
 *
 *   tl-run kernel.tl [--bench [--json] [--flops N] [--loop-bytes N]
 *          [--sass-opcodes]] ... (on the GPU)
 *   tl-run [--vm] kernel.tl --tune NAME=V1,V2,... [--retune] ...
 *   tl-run --vm kernel.tl [--kernel NAME] [-D NAME=VALUE] --arg NAME=SPEC...
 *          [--save NAME=out.npy] [--check NAME=ref.npy --atol X --rtol Y]
 *          [--seed N] [--print NAME]
 *   tl-run --simt kernel.tl --grid X[,Y,Z] --block N[,Y,Z] [--smem BYTES] ...
 *
 * --simt runs a simt kernel (a func with the `kernel` attribute) on the
 * thread-level VM, every thread of a block in lock-step; its pointer
 * parameters take buffers of any dtype (simt memory is bytes).
 *
 * Exit status: 0 on success; 1 on a bad command line, unreadable or
 * malformed input, a kernel error, or a failed --check. docs/tools.md
 * describes the flags; docs/vm.md ("The thread-level VM") those of
 * --simt. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, popen: the SASS line */
#include "tl/analysis.h"
#include "tl/dialects.h"
#include "tl/simt.h"
#include "tl/simt_vm.h"
#include "tl/tensor_map.h"
#include "tl/pass.h"
#include "tl/program.h"
#include "tl/runtime.h"
#include "tl/sass.h"
#include "tl/target.h"
#include "tl/tl.h"
#include "tl/tune.h"
#include "tl/vm.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct Pair {
  const char *name, *value;
} Pair;

typedef struct Options {
  bool vm, simt;
  bool gpu; /* --simt --gpu */
  bool block_given, grid_given, smem_given;
  int64_t grid[3], block[3], smem; /* --simt launch */
  bool mma_sm90;                   /* --mma sm90 */
  bool bench, json, no_vm_check;   /* GPU: --bench, --json, --no-vm-check */
  double flops;                    /* GPU: --flops N for --bench */
  int64_t loop_bytes;              /* GPU: --loop-bytes N (0: not given) */
  bool sass_opcodes;               /* GPU: --sass-opcodes */
  TlTuneSpace *space;              /* --tune lists, or NULL */
  bool retune;                     /* --retune */
  const char *input;
  const char *kernel;
  TL_VEC(Pair) args, saves, checks;
  TL_VEC(const char *) defines, prints, scratches;
  double atol, rtol;
  uint64_t seed;
  int64_t max_ops; /* the VMs' op budget (0: none) */
  int64_t max_bytes; /* the most bytes of one buffer or VM tile */
} Options;

/* A bound argument. */
typedef struct Arg {
  bool given;
  bool scratch; /* --scratch: not compared with the VM's */
  TlVmArg vm;
  int rank;
  int64_t shape[TL_NPY_MAX_RANK];
  size_t count; /* elements of a buffer */
  /* A tensor map (--arg NAME=tmap:...): its spec until bound, the buffer
   * parameter it maps (-1: none) and its description, whose base is the
   * VM's address of that buffer. */
  const char *tmap_spec;
  int tmap_of;
  TlTensorMapDesc tmap;
} Arg;

static int fail(const char *fmt, ...) TL_PRINTF(1, 2);
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tl-run: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static void usage(FILE *out) {
  fputs("usage: tl-run kernel.tl [options]          (on the GPU)\n"
        "       tl-run --vm kernel.tl [options]\n"
        "       tl-run --simt kernel.tl --block N [--grid X] [options]\n"
        "\n"
        "Runs a tl.kernel over its grid on the GPU or on the CPU virtual\n"
        "machine, or a simt kernel on the thread-level VM.\n"
        "\n"
        "options:\n"
        "  (GPU)                 without --vm or --simt: lower the tl.kernel,\n"
        "                        compile it for the device, run it, and compare\n"
        "                        every buffer with the VM's run (exact for ints,\n"
        "                        for floats 2^-9 (|value| + the buffer's rms)\n"
        "                        + 2^-10 unless --atol/--rtol)\n"
        "  --bench               GPU: also time it (median of 50 runs, cold L2)\n"
        "  --json                GPU: print the timing as JSON\n"
        "  --flops N             GPU: the kernel's operation count, for FLOP/s\n"
        "  --loop-bytes N        GPU: the bytes a block's hot loop moves an\n"
        "                        iteration, for --bench's SASS line's\n"
        "                        instructions a byte (implies --bench)\n"
        "  --sass-opcodes        GPU: --bench also counts the hot loop's SASS\n"
        "                        by opcode (implies --bench)\n"
        "  --no-vm-check         GPU: skip the comparison with the VM\n"
        "  --tune NAME=V1,V2,... tune a template parameter over these values\n"
        "                        (repeatable: the candidates are the product of\n"
        "                        the lists, -D fixing the rest). GPU: compile\n"
        "                        and time each (as --bench), run the fastest,\n"
        "                        and cache the choice under $TL_CACHE_DIR\n"
        "                        (default $XDG_CACHE_HOME/tl or ~/.cache/tl).\n"
        "                        --vm or no GPU: run the kernel's defaults when\n"
        "                        the lists hold them, else the first candidate\n"
        "                        its requires clause accepts\n"
        "  --retune              time the candidates even when the cache has a\n"
        "                        choice (and replace it)\n"
        "  --vm                  run on the block-level VM instead of the GPU\n"
        "  --simt                the kernel is a simt func; run it on the "
        "thread-level VM\n"
        "  --grid X[,Y,Z]        --simt: blocks in the grid (default 1)\n"
        "  --block X[,Y,Z]       --simt: threads per block (default: the "
        "kernel's\n"
        "                        'threads' attribute)\n"
        "  --smem BYTES          --simt: dynamic shared memory per block "
        "(default:\n"
        "                        the kernel's 'smem_bytes' attribute, or 0)\n"
        "  --gpu                 --simt: run the kernel on the GPU too and\n"
        "                        require its buffers to equal the VM's\n"
        "  --mma MODEL           --simt: how mma sums floats: sequential "
        "(tl.dot's\n"
        "                        order, the default) or sm90 (the H200's "
        "datapath)\n"
        "  --kernel NAME         the kernel to run (default: the only one)\n",
        out);
  /* Two strings: C11 promises string literals of 4095 bytes only. */
  fputs("  -D NAME=VALUE         set a template parameter\n"
        "  --arg NAME=SPEC       bind a parameter; SPEC is a number for "
        "scalars,\n"
        "                        and for pointers rand:DTYPE:SHAPE,\n"
        "                        zeros:DTYPE:SHAPE (SHAPE as 64x1024) or "
        "FILE.npy;\n"
        "                        for a --simt !simt.tensormap,\n"
        "                        tmap:BUFFER:box=DIMS[:swizzle=S], a tiled\n"
        "                        map over another argument's buffer (DIMS\n"
        "                        as 64x64, outermost first; S none, 32B,\n"
        "                        64B or 128B)\n"
        "  --save NAME=FILE.npy  write a buffer after the run\n"
        "  --check NAME=REF.npy  compare a buffer with a reference after the "
        "run\n"
        "  --atol X, --rtol Y    tolerance of --check: |got - ref| <= X + "
        "Y*|ref|\n"
        "                        (default 0 and 0: exact)\n"
        "  --seed N              seed of rand: inputs (default 0)\n"
        "  --max-ops N           stop a VM run after N executed ops (a block\n"
        "                        counts one), at the loop then running or\n"
        "                        after a block (default 10^9; 0: never)\n"
        "  --max-bytes N         the most bytes of one buffer, VM tile or\n"
        "                        workspace (default 2^32)\n"
        "  --print NAME          print a buffer after the run\n"
        "  --scratch NAME        GPU: a workspace whose contents depend on\n"
        "                        the blocks' timing: not compared with the VM\n"
        "  --help                show this help\n",
        out);
}

/* The kernel's parameters, through the VM that runs it. */
static bool simt_mode;
/* A lowered kernel's global workspace: the bytes its last parameter
 * needs (0 without one). */
static int64_t workspace_bytes(TlOp *k) {
  TlAttr *a = simt_mode ? tl_op_attr(k, "workspace_bytes") : NULL;
  return a && tl_attr_kind(a) == TL_ATTR_INT ? tl_attr_int_value(a) : 0;
}

/* The parameters the command line binds (not the workspace). */
static unsigned num_params(TlOp *k) {
  return simt_mode ? tl_simt_vm_num_params(k) - (workspace_bytes(k) > 0)
                   : tl_vm_num_params(k);
}
static const char *param_name(TlOp *k, unsigned i) {
  return simt_mode ? tl_simt_vm_param_name(k, i) : tl_vm_param_name(k, i);
}
static TlType *param_type(TlOp *k, unsigned i) {
  return simt_mode ? tl_simt_vm_param_type(k, i) : tl_vm_param_type(k, i);
}
static int param_index(TlOp *k, const char *name) {
  return simt_mode ? tl_simt_vm_param_index(k, name)
                   : tl_vm_param_index(k, name);
}
static bool is_pointer(const TlType *t) {
  return tl_type_is_ptr(t) || tl_simt_is_ptr(t);
}

/* The integer at *s up to the first byte of seps (or the end), read as
 * every integer is (tl_int64_literal: decimal, or 0x hex); *s is left at
 * the separator. */
static bool next_int(const char **s, const char *seps, int64_t *v) {
  size_t n = strcspn(*s, seps);
  bool ok = tl_int64_literal(*s, n, v) == TL_INT_OK;
  *s += n;
  return ok;
}

/* "X[,Y,Z]": 1 to 3 positive sizes; the missing ones are 1. */
static bool parse_dims(const char *s, int64_t *d) {
  d[0] = d[1] = d[2] = 1;
  for (int i = 0; i < 3; i++) {
    if (!next_int(&s, ",", &d[i]) || d[i] < 1)
      return false;
    if (!*s)
      return true;
    s++; /* ',' */
  }
  return false;
}

static bool split_pair(const char *s, Pair *p) {
  const char *eq = strchr(s, '=');
  if (!eq || eq == s || !eq[1])
    return false;
  char *name = tl_xmalloc((size_t)(eq - s) + 1);
  memcpy(name, s, (size_t)(eq - s));
  name[eq - s] = 0;
  p->name = name;
  p->value = eq + 1;
  return true;
}

static bool parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return *s && !*end && errno == 0;
}

/* An integer flag value (tl_int64_literal: decimal, or 0x hex). */
static bool parse_i64(const char *s, int64_t *out) {
  return tl_int64_literal(s, strlen(s), out) == TL_INT_OK;
}

/* The integer argument text for a parameter of integer type t, by the
 * rule of IR literals (docs/langref.md): a value in t's range, or for a
 * hexadecimal literal also a bit pattern of t's width (0xFF is -1 in i8).
 * *v gets the value, sign-extended for a signed t. */
static bool scalar_int(const char *name, const char *text, const TlType *t,
                       int64_t *v) {
  TlIntLit lit;
  TlIntStatus st = tl_int_literal(text, strlen(text), &lit);
  TlStr ty = {0};
  tl_type_print(t, &ty);
  unsigned w = tl_type_int_width(t);
  bool is_signed = tl_type_int_signed(t);
  /* The bounds, as magnitudes: [-lo, hi], and bits for hex patterns. */
  uint64_t all = w == 64 ? UINT64_MAX : (1ull << w) - 1;
  uint64_t hi = is_signed ? all >> 1 : all;
  uint64_t lo = is_signed ? hi + 1 : 0;
  bool fits = st == TL_INT_OK && (lit.neg ? lit.mag <= lo : lit.mag <= hi);
  bool bits = st == TL_INT_OK && !fits && is_signed && lit.hex && !lit.neg &&
              lit.mag <= all;
  if (st == TL_INT_MALFORMED)
    fail("--arg %s: expected an integer, not '%s'", name, text);
  else if (!fits && !bits && is_signed)
    fail("--arg %s: %s is out of range for %s (%s%llu..%llu, or a bit "
         "pattern 0x0..0x%llX)",
         name, text, tl_str_cstr(&ty), lo ? "-" : "", (unsigned long long)lo,
         (unsigned long long)hi, (unsigned long long)all);
  else if (!fits && !bits)
    fail("--arg %s: %s is out of range for %s (0..%llu)", name, text,
         tl_str_cstr(&ty), (unsigned long long)hi);
  tl_str_free(&ty);
  if (!fits && !bits)
    return false;
  uint64_t u = lit.neg ? 0 - lit.mag : lit.mag;
  /* A signed pattern's top bit is its sign: extend it to 64 bits. */
  if (bits && w < 64 && (u >> (w - 1)) & 1)
    u |= ~all;
  *v = (int64_t)u;
  return true;
}

/* Needs a value after flag; supports `--flag value` and `--flag=value`. */
static const char *flag_value(int argc, char **argv, int *i, const char *flag) {
  size_t n = strlen(flag);
  if (argv[*i][n] == '=')
    return argv[*i] + n + 1;
  if (*i + 1 >= argc)
    return NULL;
  return argv[++*i];
}

/* 0: continue; 1: error; 2: done. */
static int parse_args(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
#define FLAG(f)                                                                \
  (strncmp(a, f, strlen(f)) == 0 && (a[strlen(f)] == 0 || a[strlen(f)] == '='))
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 2;
    } else if (!strcmp(a, "--vm")) {
      o->vm = true;
    } else if (!strcmp(a, "--simt")) {
      o->simt = true;
    } else if (!strcmp(a, "--gpu")) {
      o->gpu = true;
    } else if (!strcmp(a, "--bench")) {
      o->bench = true;
    } else if (!strcmp(a, "--json")) {
      o->json = o->bench = true;
    } else if (!strcmp(a, "--sass-opcodes")) {
      o->sass_opcodes = o->bench = true;
    } else if (!strcmp(a, "--no-vm-check")) {
      o->no_vm_check = true;
    } else if (!strcmp(a, "--retune")) {
      o->retune = true;
    } else if (FLAG("--tune")) {
      v = flag_value(argc, argv, &i, "--tune");
      if (!v)
        return fail("--tune needs NAME=V1,V2,...");
      if (!o->space)
        o->space = tl_tune_space_create();
      TlErr err;
      if (!tl_tune_space_add(o->space, v, &err))
        return fail("--tune: %s", err.msg);
    } else if (FLAG("--flops")) {
      v = flag_value(argc, argv, &i, "--flops");
      if (!v || !parse_double(v, &o->flops) || o->flops < 0)
        return fail("--flops needs a non-negative number%s%s%s", v ? ", not '" : "",
                    v ? v : "", v ? "'" : "");
    } else if (FLAG("--loop-bytes")) {
      v = flag_value(argc, argv, &i, "--loop-bytes");
      if (!v || !parse_i64(v, &o->loop_bytes) || o->loop_bytes < 1)
        return fail("--loop-bytes needs a positive number of bytes%s%s%s",
                    v ? ", not '" : "", v ? v : "", v ? "'" : "");
      o->bench = true;
    } else if (FLAG("--mma")) {
      v = flag_value(argc, argv, &i, "--mma");
      if (!v || (strcmp(v, "sequential") && strcmp(v, "sm90")))
        return fail("--mma needs 'sequential' or 'sm90'%s%s%s",
                    v ? ", not '" : "", v ? v : "", v ? "'" : "");
      o->mma_sm90 = !strcmp(v, "sm90");
    } else if (FLAG("--grid") || FLAG("--block") || FLAG("--smem")) {
      const char *flag = FLAG("--grid")    ? "--grid"
                         : FLAG("--block") ? "--block"
                                           : "--smem";
      v = flag_value(argc, argv, &i, flag);
      if (!v)
        return fail("%s needs a value", flag);
      if (flag[2] == 's') {
        if (!parse_i64(v, &o->smem) || o->smem < 0)
          return fail("--smem needs a number of bytes, not '%s'", v);
        o->smem_given = true;
      } else if (!parse_dims(v, flag[2] == 'g' ? o->grid : o->block)) {
        return fail("%s needs X[,Y,Z] of positive sizes, not '%s'", flag, v);
      }
      o->block_given |= flag[2] == 'b';
      o->grid_given |= flag[2] == 'g';
    } else if (!strncmp(a, "-D", 2)) {
      v = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v)
        return fail("-D needs NAME=VALUE");
      tl_vec_push(&o->defines, v);
    } else if (FLAG("--kernel") || FLAG("--arg") || FLAG("--save") ||
               FLAG("--check") || FLAG("--atol") || FLAG("--rtol") ||
               FLAG("--seed") || FLAG("--print") || FLAG("--scratch") ||
               FLAG("--max-ops") || FLAG("--max-bytes")) {
      const char *flag = FLAG("--kernel")  ? "--kernel"
                         : FLAG("--arg")   ? "--arg"
                         : FLAG("--save")  ? "--save"
                         : FLAG("--check") ? "--check"
                         : FLAG("--atol")  ? "--atol"
                         : FLAG("--rtol")  ? "--rtol"
                         : FLAG("--seed")  ? "--seed"
                         : FLAG("--print") ? "--print"
                         : FLAG("--scratch") ? "--scratch"
                         : FLAG("--max-ops") ? "--max-ops"
                                             : "--max-bytes";
      v = flag_value(argc, argv, &i, flag);
      if (!v)
        return fail("%s needs a value", flag);
      Pair p;
      if (!strcmp(flag, "--kernel")) {
        o->kernel = v;
      } else if (!strcmp(flag, "--print")) {
        tl_vec_push(&o->prints, v);
      } else if (!strcmp(flag, "--scratch")) {
        tl_vec_push(&o->scratches, v);
      } else if (!strcmp(flag, "--atol") || !strcmp(flag, "--rtol")) {
        double *d = flag[2] == 'a' ? &o->atol : &o->rtol;
        if (!parse_double(v, d) || *d < 0)
          return fail("%s needs a non-negative number, not '%s'", flag, v);
      } else if (!strcmp(flag, "--seed")) {
        /* Any 64-bit pattern: negative seeds wrap. */
        TlIntLit s;
        if (tl_int_literal(v, strlen(v), &s) != TL_INT_OK)
          return fail("--seed needs an integer, not '%s'", v);
        o->seed = s.neg ? 0 - s.mag : s.mag;
      } else if (!strcmp(flag, "--max-ops")) {
        if (!parse_i64(v, &o->max_ops) || o->max_ops < 0)
          return fail("--max-ops needs a non-negative integer, not '%s'", v);
      } else if (!strcmp(flag, "--max-bytes")) {
        if (!parse_i64(v, &o->max_bytes) || o->max_bytes < 1)
          return fail("--max-bytes needs a positive integer, not '%s'", v);
      } else {
        if (!split_pair(v, &p))
          return fail("%s needs NAME=%s, not '%s'", flag,
                      !strcmp(flag, "--arg") ? "SPEC" : "FILE.npy", v);
        tl_vec_push(!strcmp(flag, "--arg")    ? &o->args
                    : !strcmp(flag, "--save") ? &o->saves
                                              : &o->checks,
                    p);
      }
    } else if (a[0] == '-' && a[1]) {
      return fail("unknown option '%s' (run 'tl-run --help' for usage)", a);
    } else {
      if (o->input)
        return fail("more than one input file ('%s' and '%s')", o->input, a);
      o->input = a;
    }
#undef FLAG
  }
  if (!o->input)
    return fail("no input file (run 'tl-run --help' for usage)");
  if (o->vm && o->simt)
    return fail("--vm runs a tl.kernel and --simt a simt func; give one");
  if (o->gpu && !o->simt)
    return fail("--gpu applies to --simt (a tl.kernel runs on the GPU "
                "without --vm)");
  if ((o->vm || o->simt) && (o->loop_bytes || o->sass_opcodes))
    return fail("--loop-bytes and --sass-opcodes apply to GPU runs (no --vm "
                "or --simt)");
  if ((o->vm || o->simt) && (o->bench || o->no_vm_check || o->flops))
    return fail("--bench, --json, --flops and --no-vm-check apply to GPU runs "
                "(no --vm or --simt)");
  if (o->retune && !o->space)
    return fail("--retune applies with --tune");
  if (o->space && o->simt)
    return fail("--tune applies to tl.kernel runs (on the GPU or with --vm), "
                "not to --simt");
  for (size_t i = 0; o->space && i < o->defines.len; i++) {
    const char *d = o->defines.data[i], *eq = strchr(d, '=');
    for (unsigned j = 0; eq && j < tl_tune_space_num_params(o->space); j++) {
      const char *name = tl_tune_space_name(o->space, j);
      if (strlen(name) == (size_t)(eq - d) && !strncmp(d, name, strlen(name)))
        return fail("--tune %s: %s is also set with -D (a parameter is fixed "
                    "or tuned, not both)",
                    name, name);
    }
  }
  return 0;
}

static bool add_define(TlContext *ctx, const char *def) {
  return !TL_FAILED(tl_context_parse_define(ctx, def, NULL));
}

static char *read_text(const char *path, size_t *len) {
  TlErr err;
  char *text = tl_read_file(path, len, &err);
  if (!text)
    fail("%s", err.msg);
  return text;
}

/*===--- Arguments --------------------------------------------------------===*/

/* splitmix64 */
static uint64_t next_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static bool parse_shape(const char *s, Arg *a) {
  a->rank = 0;
  a->count = 1;
  while (*s) {
    /* 'x' separates, so a shape has no hex sizes ("0x8" is 0 by 8). */
    int64_t v;
    if (!next_int(&s, "x,", &v) || v < 0 || a->rank >= TL_NPY_MAX_RANK)
      return false;
    a->shape[a->rank++] = v;
    if (v && a->count > ((size_t)1 << 40) / (size_t)v)
      return false;
    a->count *= (size_t)v;
    if (*s)
      s++;
  }
  return a->rank > 0;
}

/* A zeroed buffer of `bytes` for what (an argument's name), within
 * --max-bytes; NULL after an error. */
static void *buffer_alloc(const Options *o, const char *what, size_t bytes) {
  if (bytes > (uint64_t)o->max_bytes) {
    fail("--arg %s: the buffer needs %zu bytes, more than the limit of %lld "
         "bytes a buffer (--max-bytes)",
         what, bytes, (long long)o->max_bytes);
    return NULL;
  }
  void *data = tl_try_calloc(bytes ? bytes : 1, 1);
  if (!data)
    fail("--arg %s: cannot allocate the buffer's %zu bytes", what, bytes);
  return data;
}

static bool bind_buffer(const Options *o, const char *name, const char *spec,
                        TlType *param, Arg *a, uint64_t *rng) {
  /* A simt pointer is untyped: the buffer's dtype is the spec's. */
  bool any = tl_simt_is_ptr(param);
  TlDType want = {0, 0, 0, 0};
  if (!any && !tl_vm_dtype_of(tl_tensor_elem(param), &want))
    return !fail("--arg %s: the parameter's element type has no memory format",
                 name);
  size_t sl = strlen(spec);
  if (!strncmp(spec, "rand:", 5) || !strncmp(spec, "zeros:", 6)) {
    bool rnd = spec[0] == 'r';
    const char *dt = strchr(spec, ':') + 1, *colon = strchr(dt, ':');
    if (!colon)
      return !fail("--arg %s: expected %s:DTYPE:SHAPE, not '%s'", name,
                   rnd ? "rand" : "zeros", spec);
    TlDType t;
    if (!tl_dtype_parse(dt, (size_t)(colon - dt), &t))
      return !fail("--arg %s: unknown dtype '%.*s'", name, (int)(colon - dt),
                   dt);
    if (!any && !tl_dtype_eq(t, want))
      return !fail("--arg %s: dtype %s does not match the parameter's element "
                   "type %s",
                   name, tl_dtype_name(t), tl_dtype_name(want));
    if (!parse_shape(colon + 1, a))
      return !fail("--arg %s: bad shape '%s' (write it as 64x1024)", name,
                   colon + 1);
    size_t bytes = tl_dtype_storage_bytes(t, a->count);
    void *data = buffer_alloc(o, name, bytes);
    if (!data)
      return false;
    if (rnd)
      for (size_t i = 0; i < a->count; i++) {
        uint64_t r = next_rand(rng), code;
        if (tl_dtype_is_float(t)) {
          /* uniform in [-1, 1) on a 2^-52 grid, then rounded to the type */
          double x = (double)(r >> 11) * 0x1p-52 - 1.0;
          code = tl_dtype_encode(t, x);
        } else {
          code = r; /* the low bits: uniform over the type's codes */
        }
        tl_dtype_store(t, data, i, code);
      }
    a->vm = tl_vm_arg_buffer(data, bytes, t);
    return true;
  }
  if (sl < 4 || strcmp(spec + sl - 4, ".npy") != 0)
    return !fail("--arg %s: expected rand:DTYPE:SHAPE, zeros:DTYPE:SHAPE or a "
                 ".npy file, not '%s'",
                 name, spec);
  TlNpy npy;
  TlErr err;
  if (!tl_npy_read(spec, &npy, &err))
    return !fail("--arg %s: %s", name, err.msg);
  if (any)
    want = npy.dtype;
  bool packed = !tl_npy_descr(want);
  if (packed ? !tl_dtype_eq(npy.dtype, tl_dtype_uint(8))
             : !tl_dtype_eq(npy.dtype, want)) {
    if (packed)
      fail("--arg %s: '%s' holds %s, but the parameter needs u8 (the packed "
           "bytes of %s)",
           name, spec, tl_dtype_name(npy.dtype), tl_dtype_name(want));
    else
      fail("--arg %s: '%s' holds %s, but the parameter needs %s", name, spec,
           tl_dtype_name(npy.dtype), tl_dtype_name(want));
    tl_npy_free(&npy);
    return false;
  }
  a->rank = npy.rank;
  memcpy(a->shape, npy.shape, sizeof a->shape);
  a->count = 1;
  for (int d = 0; d < npy.rank; d++)
    a->count *= (size_t)npy.shape[d];
  if (packed) {
    /* Packed bytes: as many whole elements as they hold, in one dimension. */
    a->count = npy.size * 8 / want.bits;
    a->rank = 1;
    a->shape[0] = (int64_t)a->count;
  }
  a->vm = tl_vm_arg_buffer(npy.data, npy.size, want);
  return true;
}

/* A tensor map over buffer argument BUFFER, from
 * tmap:BUFFER:box=DIMS[:swizzle=S]: the buffer's shape (outermost first,
 * reversed into the map's dimensions, innermost first), its element size,
 * its contiguous strides, the box (outermost first as well) and the
 * swizzle. The map's bytes are TL's encoding, over the VM's address of the
 * buffer; a GPU run encodes the same description for the device. */
static bool bind_tmap(TlOp *kernel, const char *name, Arg *args, Arg *a) {
  const char *spec = a->tmap_spec;
  /* A tl kernel's !tl.tensormap parameter gives the box and swizzle; the
   * spec may repeat them, and must then agree. */
  TlType *pt = param_type(kernel, (unsigned)param_index(kernel, name));
  bool typed = tl_type_is_tensormap(pt);
  const char *form = typed ? "tmap:BUFFER[:box=DIMS][:swizzle=none|32B|64B|128B]"
                           : "tmap:BUFFER:box=DIMS[:swizzle=none|32B|64B|128B]";
  const char *buf = spec + 5, *colon = strchr(buf, ':');
  if (typed && !colon)
    colon = buf + strlen(buf);
  bool has_box = colon && *colon == ':' && !strncmp(colon + 1, "box=", 4);
  if (!colon || (!has_box && !typed) ||
      (!has_box && *colon && strncmp(colon + 1, "swizzle=", 8)))
    return !fail("--arg %s: expected %s, not '%s'", name, form, spec);
  char bname[128];
  snprintf(bname, sizeof bname, "%.*s", (int)(colon - buf), buf);
  int k = param_index(kernel, bname);
  if (k < 0 || !is_pointer(param_type(kernel, (unsigned)k)))
    return !fail("--arg %s: the kernel @%s has no pointer parameter '%s'",
                 name, tl_symbol_name(kernel), bname);
  const Arg *b = &args[k];
  if (!b->given || b->vm.kind != TL_VM_ARG_BUFFER)
    return !fail("--arg %s: no --arg gives the buffer '%s' it maps", name,
                 bname);
  unsigned bits = tl_dtype_bits(b->vm.dtype);
  if (bits % 8 || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
    return !fail("--arg %s: '%s' holds %s; a tensor map's elements are 1, 2, "
                 "4 or 8 bytes",
                 name, bname, tl_dtype_name(b->vm.dtype));
  if (b->rank < 1 || b->rank > TL_TENSOR_MAP_MAX_RANK)
    return !fail("--arg %s: '%s' has %d dimensions; a tensor map has 1 to %d",
                 name, bname, b->rank, TL_TENSOR_MAP_MAX_RANK);
  /* The box, outermost first, up to the next ':'. */
  const char *end = *colon ? colon : NULL;
  Arg box;
  memset(&box, 0, sizeof box);
  char boxtext[64] = "";
  if (has_box) {
    const char *dims = colon + 5;
    end = strchr(dims, ':');
    snprintf(boxtext, sizeof boxtext, "%.*s",
             (int)(end ? (size_t)(end - dims) : strlen(dims)), dims);
    if (!parse_shape(boxtext, &box))
      return !fail("--arg %s: bad box '%s' (write it as 64x64)", name,
                   boxtext);
  }
  if (typed) {
    int trank = (int)tl_tensormap_rank(pt);
    if (has_box) {
      bool same = box.rank == trank;
      for (int i = 0; same && i < trank; i++)
        same = box.shape[i] == tl_tensormap_box(pt, (unsigned)i);
      if (!same) {
        char want[64] = "";
        for (int i = 0; i < trank; i++)
          snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld",
                   i ? "x" : "", (long long)tl_tensormap_box(pt, (unsigned)i));
        return !fail("--arg %s: the box %s is not the parameter's box %s",
                     name, boxtext, want);
      }
    }
    box.rank = trank;
    for (int i = 0; i < trank; i++)
      box.shape[i] = tl_tensormap_box(pt, (unsigned)i);
  }
  if (box.rank != b->rank)
    return !fail("--arg %s: the box has %d dimension%s, but '%s' has %d", name,
                 box.rank, box.rank == 1 ? "" : "s", bname, b->rank);
  if (typed) {
    TlDType want;
    if (!tl_vm_dtype_of(tl_tensormap_elem(pt), &want) ||
        !tl_dtype_eq(want, b->vm.dtype))
      return !fail("--arg %s: '%s' holds %s, but the tensor map's elements "
                   "are %s",
                   name, bname, tl_dtype_name(b->vm.dtype),
                   tl_dtype_name(want));
  }
  unsigned swizzle = typed ? tl_tensormap_swizzle(pt) : 0;
  if (end) {
    const char *sw = end + 1;
    if (strncmp(sw, "swizzle=", 8))
      return !fail("--arg %s: expected %s, not '%s'", name, form, spec);
    sw += 8;
    if (!strcmp(sw, "none"))
      swizzle = 0;
    else if (!strcmp(sw, "32B"))
      swizzle = 32;
    else if (!strcmp(sw, "64B"))
      swizzle = 64;
    else if (!strcmp(sw, "128B"))
      swizzle = 128;
    else
      return !fail("--arg %s: unknown swizzle '%s' (none, 32B, 64B or 128B)",
                   name, sw);
    if (typed && swizzle != tl_tensormap_swizzle(pt))
      return !fail("--arg %s: swizzle '%s' is not the parameter's (%u bytes)",
                   name, sw, tl_tensormap_swizzle(pt));
  }
  TlTensorMapDesc *d = &a->tmap;
  memset(d, 0, sizeof *d);
  /* The thread-level VM's address of the buffer; the block VM's tensor
   * maps are over the buffer itself (base 0). */
  d->base = typed ? 0 : tl_simt_vm_buffer_address((unsigned)k);
  d->rank = (unsigned)b->rank;
  d->elem_bytes = bits / 8;
  d->swizzle = swizzle;
  uint64_t stride = d->elem_bytes;
  for (unsigned i = 0; i < d->rank; i++) {
    unsigned r = d->rank - 1 - i; /* the shape's index of map dimension i */
    d->dims[i] = (uint64_t)b->shape[r];
    d->box[i] = box.shape[r] > 0 && box.shape[r] < (1 << 30)
                    ? (uint32_t)box.shape[r]
                    : (1u << 30);
    d->elem_strides[i] = 1;
    stride *= (uint64_t)b->shape[r];
    if (i + 1 < d->rank)
      d->strides[i] = stride;
  }
  uint8_t *bytes = tl_xcalloc(TL_TENSOR_MAP_BYTES, 1);
  TlErr err;
  if (!tl_tensor_map_encode(d, bytes, &err)) {
    tl_free(bytes);
    return !fail("--arg %s: bad tensor map over '%s': %s", name, bname,
                 err.msg);
  }
  a->tmap_of = k;
  a->vm = typed ? tl_vm_arg_tensor_map(bytes, b->vm.data, b->vm.size,
                                       b->vm.dtype)
                : tl_vm_arg_buffer(bytes, TL_TENSOR_MAP_BYTES, tl_dtype_uint(8));
  a->rank = 1;
  a->shape[0] = TL_TENSOR_MAP_BYTES;
  a->count = TL_TENSOR_MAP_BYTES;
  return true;
}

static bool bind_args(const Options *o, TlOp *kernel, Arg *args) {
  uint64_t rng = o->seed * 0x2545f4914f6cdd1dull + 1;
  unsigned n = num_params(kernel);
  for (size_t i = 0; i < o->args.len; i++) {
    const Pair *p = &o->args.data[i];
    int k = param_index(kernel, p->name);
    if (k < 0)
      return !fail("--arg %s: the kernel @%s has no parameter '%s'", p->name,
                   tl_symbol_name(kernel), p->name);
    if (args[k].given)
      return !fail("--arg %s is given twice", p->name);
    TlType *t = param_type(kernel, (unsigned)k);
    args[k].given = true;
    args[k].tmap_of = -1;
    if (tl_simt_is_tensormap(t) || tl_type_is_tensormap(t)) {
      /* Bound after the buffers it may name. */
      if (strncmp(p->value, "tmap:", 5))
        return !fail("--arg %s: the parameter is a tensor map; expected "
                     "%s, not '%s'",
                     p->name,
                     tl_type_is_tensormap(t)
                         ? "tmap:BUFFER[:box=DIMS][:swizzle=none|32B|64B|128B]"
                         : "tmap:BUFFER:box=DIMS[:swizzle=none|32B|64B|128B]",
                     p->value);
      args[k].tmap_spec = p->value;
    } else if (is_pointer(t)) {
      if (!bind_buffer(o, p->name, p->value, t, &args[k], &rng))
        return false;
    } else if (tl_type_is_float(t)) {
      double d;
      if (!parse_double(p->value, &d))
        return !fail("--arg %s: expected a number, not '%s'", p->name,
                     p->value);
      args[k].vm = tl_vm_arg_float(d);
    } else if (tl_type_is_int(t)) {
      int64_t v;
      if (!scalar_int(p->name, p->value, t, &v))
        return false;
      args[k].vm = tl_vm_arg_int(v);
    } else {
      int64_t v;
      if (!parse_i64(p->value, &v))
        return !fail("--arg %s: expected an integer, not '%s'", p->name,
                     p->value);
      args[k].vm = tl_vm_arg_int(v);
    }
  }
  for (unsigned i = 0; i < n; i++)
    if (!args[i].given)
      return !fail("no --arg for parameter '%s' of @%s", param_name(kernel, i),
                   tl_symbol_name(kernel));
  for (unsigned i = 0; i < n; i++)
    if (args[i].tmap_spec &&
        !bind_tmap(kernel, param_name(kernel, i), args, &args[i]))
      return false;
  return true;
}

static Arg *buffer_named(TlOp *kernel, Arg *args, const char *flag,
                         const char *name) {
  int k = param_index(kernel, name);
  if (k < 0) {
    fail("%s %s: the kernel has no parameter '%s'", flag, name, name);
    return NULL;
  }
  if (args[k].vm.kind != TL_VM_ARG_BUFFER) {
    fail("%s %s: '%s' is not a pointer parameter", flag, name, name);
    return NULL;
  }
  return &args[k];
}

/* The buffer as an .npy array: itself, or its packed bytes as u1. */
static TlNpy as_npy(const Arg *a) {
  TlNpy n;
  memset(&n, 0, sizeof n);
  n.data = a->vm.data;
  n.size = a->vm.size;
  if (tl_npy_descr(a->vm.dtype)) {
    n.dtype = a->vm.dtype;
    n.rank = a->rank;
    memcpy(n.shape, a->shape, sizeof n.shape);
  } else {
    n.dtype = tl_dtype_uint(8);
    n.rank = 1;
    n.shape[0] = (int64_t)a->vm.size;
  }
  return n;
}

/* "[i, j]" of flat index i in the buffer's shape (or "[i]"). */
static void index_text(const Arg *a, size_t flat, char *buf, size_t cap) {
  int64_t idx[TL_NPY_MAX_RANK];
  int rank = a->rank;
  size_t prod = 1;
  for (int d = 0; d < rank; d++)
    prod *= (size_t)a->shape[d];
  if (rank == 0 || prod != a->count) {
    rank = 1;
    idx[0] = (int64_t)flat;
  } else {
    for (int d = rank - 1; d >= 0; d--) {
      idx[d] = (int64_t)(flat % (size_t)a->shape[d]);
      flat /= (size_t)a->shape[d];
    }
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "",
                          (long long)idx[d]);
  if (n < cap)
    snprintf(buf + n, cap - n, "]");
}

/* The reference is either the buffer's own .npy form (the same dtype and
 * bytes: compared in the buffer's type, so packed types compare by their
 * codes' values) or any NumPy array with as many elements (compared by
 * value). */
static bool check_buffer(const Options *o, const char *name, const Arg *a,
                         const char *path) {
  TlNpy ref;
  TlErr err;
  if (!tl_npy_read(path, &ref, &err))
    return !fail("--check %s: %s", name, err.msg);
  TlNpy got = as_npy(a);
  TlDType t = a->vm.dtype, rt = t;
  size_t count = a->count, rcount = 1;
  for (int d = 0; d < ref.rank; d++)
    rcount *= (size_t)ref.shape[d];
  if (!tl_dtype_eq(ref.dtype, got.dtype) || ref.size != got.size) {
    if (rcount != count) {
      fail("--check %s: the reference '%s' has %zu elements, but the buffer "
           "has %zu",
           name, path, rcount, count);
      tl_npy_free(&ref);
      return false;
    }
    rt = ref.dtype;
  }
  size_t bad = 0, first = 0;
  double max_err = 0, fg = 0, fr = 0;
  for (size_t i = 0; i < count; i++) {
    double g = tl_dtype_decode(t, tl_dtype_load(t, a->vm.data, i));
    double r = tl_dtype_decode(rt, tl_dtype_load(rt, ref.data, i));
    bool same = (isnan(g) && isnan(r)) || g == r;
    double e = fabs(g - r);
    if (!same && !(e <= o->atol + o->rtol * fabs(r)) && !bad++) {
      first = i;
      fg = g;
      fr = r;
    }
    if (!same && !(e <= max_err))
      max_err = e;
  }
  tl_npy_free(&ref);
  if (bad) {
    char ib[160];
    index_text(a, first, ib, sizeof ib);
    return !fail("--check %s: %zu of %zu elements differ beyond atol=%g "
                 "rtol=%g; the first is %s: got %.9g, expected %.9g",
                 name, bad, count, o->atol, o->rtol, ib, fg, fr);
  }
  printf("check %s: ok (%zu elements, max abs error %g)\n", name, count,
         max_err);
  return true;
}

static void print_buffer(const char *name, const Arg *a) {
  TlDType t = a->vm.dtype;
  size_t count = a->count;
  printf("%s: %s[", name, tl_dtype_name(t));
  for (int d = 0; d < a->rank; d++)
    printf("%s%lld", d ? "x" : "", (long long)a->shape[d]);
  printf("] =");
  for (size_t i = 0; i < count; i++) {
    uint64_t c = tl_dtype_load(t, a->vm.data, i);
    if (tl_dtype_is_float(t))
      printf(" %.9g", tl_dtype_decode(t, c));
    else if (tl_dtype_is_signed(t))
      printf(" %lld", (long long)tl_dtype_decode(t, c));
    else
      printf(" %llu", (unsigned long long)c);
  }
  printf("\n");
}

/*===--- GPU ------------------------------------------------------------===*/

/* Whether argument i (of the n bound) is a tensor map. */
static bool args_tmap(const Arg *args, unsigned n, unsigned i) {
  return i < n && args[i].tmap_spec != NULL;
}

/* Compiles the kernel of `text` for the device (the runtime API's
 * compile step: a second parse, lowered to simt and through tl-llc's
 * pipeline) and loads it; the PTX is kept in *keep when it is not NULL
 * (the caller frees it). */
static void *gpu_compile(TlContext *ctx, TlRuntime *rt, const char *name,
                         const char *text, size_t len, const char *kernel_name,
                         unsigned *smem_bytes, int64_t *workspace_bytes,
                         TlStr *keep) {
  unsigned sm = tl_runtime_sm(rt);
  const TlArch *arch = tl_arch_for_device(sm);
  if (!arch) {
    TlStr names = {0};
    tl_arch_names_text(&names, 0, true);
    tl_emit_error(ctx, tl_loc_unknown(),
                  "no target runs on this GPU (sm_%u); the targets are %s", sm,
                  tl_str_cstr(&names));
    tl_str_free(&names);
    return NULL;
  }
  TlStr ptx = {0};
  void *k = NULL;
  if (!TL_FAILED(tl_compile_ptx(ctx, name, text, len, kernel_name, arch, &ptx,
                                smem_bytes, workspace_bytes)))
    k = tl_runtime_kernel(rt, ptx.data, ptx.len, kernel_name);
  if (k && keep) {
    *keep = ptx;
    return k;
  }
  tl_str_free(&ptx);
  return k;
}

/* A kernel compiled, with its arguments on the device, ready to launch. */
typedef struct Launch {
  void *kernel;
  TlLaunch launch;
  TlDevPtr ws; /* the global workspace, or 0 */
  TlDevPtr *dev;
  TlScalarArg *vals;
  void **kargs;
  uint8_t (*maps)[TL_TENSOR_MAP_BYTES]; /* the driver's tensor maps */
  unsigned n;
  TlStr ptx; /* the kernel's, for --bench's SASS line */
} Launch;

/* A failure of prepare_launch: printed, or kept in why while tuning. */
static bool refuse(TlStr *why, const char *fmt, ...) TL_PRINTF(2, 3);
static bool refuse(TlStr *why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (why) {
    if (!why->len)
      tl_str_vprintf(why, fmt, ap);
  } else {
    fputs("tl-run: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
  }
  va_end(ap);
  return false;
}

static void release_launch(TlRuntime *rt, Launch *L) {
  if (L->ws)
    tl_runtime_free(rt, L->ws);
  for (unsigned i = 0; L->dev && i < L->n; i++)
    tl_runtime_free(rt, L->dev[i]);
  tl_free(L->dev);
  tl_free(L->vals);
  tl_free(L->kargs);
  tl_free(L->maps);
  tl_str_free(&L->ptx);
  memset(L, 0, sizeof *L);
}

/* Compiles the kernel (the instance the context's defines give) for the
 * device, uploads the bound arguments (buffers from their host copies, a
 * zeroed workspace) and checks the kernel's `assume` promises. Failures
 * go to why when it is non-NULL (diagnostics to the context's engine);
 * release_launch frees what was made either way. */
/* Whether every buffer argument holds the kernel's views of it
 * (docs/runtime.md, "Extent checks"): a short buffer is refused here,
 * naming the argument, the view and both sizes, instead of faulting on
 * the GPU. */
static bool check_extents(TlOp *kernel, const Arg *args, unsigned n,
                          const int64_t *ints, TlStr *why) {
  TlViewExtents *x = tl_view_extents_create(kernel);
  int64_t *need = tl_xcalloc(n + 1, sizeof *need);
  int *view = tl_xcalloc(n + 1, sizeof *view);
  tl_view_extents_needs(x, n, ints, need, view);
  bool ok = true;
  for (unsigned i = 0; ok && i < n; i++) {
    if (view[i] < 0 || args[i].vm.kind != TL_VM_ARG_BUFFER ||
        (need[i] >= 0 && (uint64_t)need[i] <= (uint64_t)args[i].vm.size))
      continue;
    TlViewExtent e;
    tl_view_extents_get(x, (unsigned)view[i], &e);
    if (need[i] >= 0)
      refuse(why, "--arg %s: the view %s needs %lld bytes, the buffer has %zu",
             param_name(kernel, i), e.text, (long long)need[i],
             args[i].vm.size);
    else
      refuse(why,
             "--arg %s: the view %s needs more bytes than 64-bit integers "
             "count (%s)",
             param_name(kernel, i), e.text, e.bytes);
    ok = false;
  }
  tl_free(need);
  tl_free(view);
  tl_view_extents_destroy(x);
  return ok;
}

static bool prepare_launch(TlContext *ctx, TlRuntime *rt, TlOp *kernel,
                           Arg *args, unsigned n, const char *input,
                           const char *text, size_t len, Launch *L,
                           TlStr *why) {
  memset(L, 0, sizeof *L);
  L->n = n;
  L->dev = tl_xcalloc(n + 1, sizeof *L->dev);
  L->vals = tl_xcalloc(n + 1, sizeof *L->vals);
  L->kargs = tl_xcalloc(n + 1, sizeof *L->kargs);
  L->maps = tl_xcalloc(n + 1, TL_TENSOR_MAP_BYTES);
  int64_t *ints = tl_xcalloc(n + 1, sizeof *ints);
  int64_t grid[3], threads;
  TlErr err;
  bool ok = false;
  for (unsigned i = 0; i < n; i++)
    ints[i] = args[i].vm.kind == TL_VM_ARG_INT ? args[i].vm.i : 0;
  if (!tl_kernel_launch_dims(kernel, ints, grid, &threads, &err)) {
    refuse(why, "cannot launch @%s: %s", tl_symbol_name(kernel), err.msg);
    goto out;
  }
  if (!check_extents(kernel, args, n, ints, why))
    goto out;
  unsigned smem = 0;
  int64_t ws_bytes = 0;
  L->kernel = gpu_compile(ctx, rt, input, text, len, tl_symbol_name(kernel),
                          &smem, &ws_bytes, &L->ptx);
  if (!L->kernel)
    goto out;
  /* The kernel's global workspace, zero at the launch (timed runs reuse
   * it as the previous run left it). */
  if (ws_bytes) {
    if (!(L->ws = tl_runtime_alloc(rt, (size_t)ws_bytes)) ||
        TL_FAILED(tl_runtime_memset(rt, L->ws, 0, (size_t)ws_bytes)))
      goto out;
    L->kargs[n] = &L->ws;
  }
  for (unsigned i = 0; i < n; i++) {
    TlVmArg *a = &args[i].vm;
    if (a->kind == TL_VM_ARG_BUFFER) {
      if (!(L->dev[i] = tl_runtime_alloc(rt, a->size)) ||
          TL_FAILED(tl_runtime_upload(rt, L->dev[i], a->data, a->size)))
        goto out;
      L->kargs[i] = &L->dev[i];
    } else if (a->kind == TL_VM_ARG_TENSOR_MAP) {
      continue; /* below, once its buffer is on the device */
    } else {
      bool is_float = a->kind == TL_VM_ARG_FLOAT;
      if (!tl_scalar_arg(param_type(kernel, i), is_float, a->i, a->f,
                         &L->vals[i])) {
        refuse(why,
               "parameter %s: scalars of this type cannot be passed to "
               "the GPU",
               param_name(kernel, i));
        goto out;
      }
      L->kargs[i] = &L->vals[i];
    }
  }
  /* Tensor maps: the driver's encoding of the same description over the
   * device copy of the buffer. */
  for (unsigned i = 0; i < n; i++) {
    if (args[i].vm.kind != TL_VM_ARG_TENSOR_MAP)
      continue;
    TlTensorMapDesc d = args[i].tmap;
    d.base = L->dev[args[i].tmap_of];
    if (TL_FAILED(tl_runtime_tensor_map(rt, &d, L->maps[i]))) {
      refuse(why, "parameter %s: the driver refused the tensor map",
             param_name(kernel, i));
      goto out;
    }
    L->kargs[i] = L->maps[i];
  }
  /* The launch must keep the kernel's `assume` promises: integer values
   * and the device addresses of the buffers. */
  uint64_t *assumed = tl_xcalloc(n + 1, sizeof *assumed);
  for (unsigned i = 0; i < n; i++)
    assumed[i] = L->dev[i] ? L->dev[i] : (uint64_t)ints[i];
  ok = !TL_FAILED(tl_kernel_check_launch_assumptions(kernel, n, assumed));
  tl_free(assumed);
  TlLaunch l = {{(unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2]},
                {(unsigned)threads, 1, 1},
                smem};
  L->launch = l;
out:
  tl_free(ints);
  return ok;
}

/* What the driver's compilation uses, and the blocks an SM holds: a
 * register count past an occupancy threshold, or local memory (spills),
 * shows here before it shows in the time. */
static void print_resources(TlOp *kernel, const TlLaunch *l,
                            const TlKernelResources *r) {
  unsigned threads = l->block[0] * l->block[1] * l->block[2];
  printf("resources @%s: %d registers a thread, %d bytes of local memory "
         "(spills, stack), %d + %u bytes of shared memory a block; %d "
         "block%s of %u threads an SM (%u warps)\n",
         tl_symbol_name(kernel), r->registers, r->local_bytes, r->static_smem,
         l->smem_bytes, r->blocks_per_sm, r->blocks_per_sm == 1 ? "" : "s",
         threads, (unsigned)r->blocks_per_sm * ((threads + 31) / 32));
}

/*===--- The SASS line ----------------------------------------------------===*/

/* What --bench says of the hot loop of the driver's machine code: read is
 * false when there is nothing to say (no disassembler, no linker, a
 * failure: a note said why). */
typedef struct SassMix {
  bool read;
  TlSassStatus status; /* TL_SASS_FOUND or TL_SASS_NO_LOOP when read */
  TlSassLoop loop;
  TlErr why; /* of TL_SASS_NO_LOOP */
} SassMix;

static void sass_note(const char *fmt, ...) TL_PRINTF(1, 2);
static void sass_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tl-run: note: no SASS mix: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* A word for sh, in single quotes. */
static void shell_quote(TlStr *s, const char *word) {
  tl_str_putc(s, '\'');
  for (const char *p = word; *p; p++)
    if (*p == '\'')
      tl_str_puts(s, "'\\''"); /* end the quote, a quoted ', open again */
    else
      tl_str_putc(s, *p);
  tl_str_putc(s, '\'');
}

/* The disassembler, as a command for sh to which `-sass FILE` is
 * appended: $TL_CUOBJDUMP, else cuobjdump on PATH, else CUDA's default
 * place; false when there is none. */
static bool find_cuobjdump(TlStr *cmd) {
  const char *env = getenv("TL_CUOBJDUMP");
  if (env && *env) {
    tl_str_puts(cmd, env);
    return true;
  }
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    size_t n = strcspn(p, ":");
    TlStr file = {0};
    tl_str_printf(&file, "%.*s/cuobjdump", n ? (int)n : 1, n ? p : ".");
    bool found = access(tl_str_cstr(&file), X_OK) == 0;
    if (found)
      shell_quote(cmd, tl_str_cstr(&file));
    tl_str_free(&file);
    if (found)
      return true;
    p += n + (p[n] == ':');
  }
  if (access("/usr/local/cuda/bin/cuobjdump", X_OK) == 0) {
    tl_str_puts(cmd, "/usr/local/cuda/bin/cuobjdump");
    return true;
  }
  return false;
}

static void capture(const TlDiag *d, void *user);

/* Disassembles the driver's cubin of the kernel's PTX and finds its hot
 * loop (include/tl/sass.h): the cubin goes to a temporary file, which the
 * disassembler reads and which is removed after. Every failure is a note
 * and leaves m->read false: the SASS line is an extra, never an error. */
static void sass_mix(TlContext *ctx, TlRuntime *rt, const char *kernel,
                     const TlStr *ptx, SassMix *m) {
  memset(m, 0, sizeof *m);
  const char *off = getenv("TL_CUOBJDUMP");
  if (off && !*off) /* set and empty: no SASS line, no note */
    return;
  TlStr cmd = {0}, why = {0}, out = {0};
  char *file = NULL;
  void *cubin = NULL;
  size_t size = 0;
  if (!find_cuobjdump(&cmd)) {
    sass_note("no disassembler (set TL_CUOBJDUMP, or put cuobjdump on PATH)");
    goto out;
  }
  if (!tl_runtime_has_linker(rt)) {
    sass_note("the CUDA driver has no JIT linker (cuLinkCreate_v2) to give a "
              "cubin");
    goto out;
  }
  /* The driver's errors become the note's reason. */
  TlDiagEngine *e = tl_context_diag(ctx);
  tl_diag_set_handler(e, capture, &why);
  TlResult r = tl_runtime_cubin(rt, ptx->data, ptx->len, &cubin, &size);
  tl_diag_set_handler(e, NULL, NULL);
  tl_diag_reset_count(e);
  if (TL_FAILED(r)) {
    sass_note("%s", why.len ? tl_str_cstr(&why) : "the driver gave no cubin");
    goto out;
  }
  const char *dir = getenv("TMPDIR");
  dir = dir && *dir ? dir : "/tmp";
  TlStr tmpl = {0};
  tl_str_printf(&tmpl, "%s/tl-run-cubin-XXXXXX", dir);
  file = tmpl.data;
  int fd = mkstemp(file);
  if (fd < 0) {
    sass_note("cannot make a temporary file in '%s': %s", dir, strerror(errno));
    tl_free(file);
    file = NULL;
    goto out;
  }
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, (const char *)cubin + done, size - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    done += (size_t)w;
  }
  if (close(fd) != 0 || done < size) {
    sass_note("cannot write the cubin to '%s': %s", file, strerror(errno));
    goto out;
  }
  tl_str_puts(&cmd, " -sass ");
  shell_quote(&cmd, file);
  int shown = (int)cmd.len; /* the command as a note shows it */
  tl_str_puts(&cmd, " 2>&1");
  fflush(stdout);
  FILE *p = popen(tl_str_cstr(&cmd), "r");
  if (!p) {
    sass_note("cannot run the disassembler (%.*s): %s", shown, cmd.data,
              strerror(errno));
    goto out;
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    tl_str_putn(&out, buf, n);
  int status = pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    /* The first line of what it said, at most 200 bytes. */
    const char *said = tl_str_cstr(&out);
    size_t len = strcspn(said, "\n");
    int n_said = len > 200 ? 200 : (int)len;
    if (status != -1 && WIFEXITED(status))
      sass_note("the disassembler (%.*s) exited with status %d%s%.*s", shown,
                cmd.data, WEXITSTATUS(status), n_said ? ": " : "", n_said,
                said);
    else
      sass_note("the disassembler (%.*s) did not finish", shown, cmd.data);
    goto out;
  }
  TlErr err = {{0}};
  m->status = tl_sass_hot_loop(out.data, out.len, kernel, &m->loop, &err);
  if (m->status == TL_SASS_NO_CODE) {
    sass_note("%s", err.msg);
    goto out;
  }
  m->why = err;
  m->read = true;
out:
  if (file)
    remove(file);
  tl_free(file);
  tl_free(cubin);
  tl_str_free(&cmd);
  tl_str_free(&why);
  tl_str_free(&out);
}

/* --loop-bytes' figure: the instructions a block's warps issue an
 * iteration of the hot loop over the bytes it moves. */
static double loop_instructions_per_byte(const Options *o, const TlLaunch *l,
                                         const SassMix *m, unsigned *warps) {
  unsigned threads = l->block[0] * l->block[1] * l->block[2];
  *warps = (threads + 31) / 32;
  return (double)m->loop.instructions * *warps / (double)o->loop_bytes;
}

static void print_sass(const Options *o, TlOp *kernel, const TlLaunch *l,
                       const SassMix *m) {
  const char *name = tl_symbol_name(kernel);
  if (m->status == TL_SASS_NO_LOOP) {
    printf("sass @%s: %s\n", name, m->why.msg);
    return;
  }
  printf("sass @%s: hot loop at %#llx..%#llx, %u instructions a warp and "
         "iteration: ",
         name, (unsigned long long)m->loop.start,
         (unsigned long long)m->loop.end, m->loop.instructions);
  for (int c = 0; c < TL_SASS_NUM_CLASSES; c++)
    printf("%s%s %u", c ? ", " : "", tl_sass_class_name((TlSassClass)c),
           m->loop.classes[c]);
  if (o->loop_bytes) {
    unsigned warps;
    double ipb = loop_instructions_per_byte(o, l, m, &warps);
    printf("; %.3g instructions a loop byte (%u warp%s, %lld bytes an "
           "iteration)",
           ipb, warps, warps == 1 ? "" : "s", (long long)o->loop_bytes);
  }
  putchar('\n');
  if (o->sass_opcodes) {
    printf("sass @%s opcodes:", name);
    for (size_t i = 0; i < m->loop.num_opcodes; i++)
      printf("%s %s %u", i ? "," : "", m->loop.opcodes[i].name,
             m->loop.opcodes[i].count);
    putchar('\n');
  }
}

/* The same as fields of --json's object (each null without a loop). */
static void print_sass_json(const Options *o, const TlLaunch *l,
                            const SassMix *m) {
  if (m->status == TL_SASS_NO_LOOP) {
    printf(", \"sass_loop_instructions\": null, \"sass_loop_start\": null, "
           "\"sass_loop_end\": null, \"sass_mix\": null, "
           "\"instructions_per_byte\": null%s",
           o->sass_opcodes ? ", \"sass_opcodes\": null" : "");
    return;
  }
  printf(", \"sass_loop_instructions\": %u, \"sass_loop_start\": %llu, "
         "\"sass_loop_end\": %llu, \"sass_mix\": {",
         m->loop.instructions, (unsigned long long)m->loop.start,
         (unsigned long long)m->loop.end);
  for (int c = 0; c < TL_SASS_NUM_CLASSES; c++)
    printf("%s\"%s\": %u", c ? ", " : "", tl_sass_class_name((TlSassClass)c),
           m->loop.classes[c]);
  unsigned warps;
  if (o->loop_bytes)
    printf("}, \"instructions_per_byte\": %.6g",
           loop_instructions_per_byte(o, l, m, &warps));
  else
    printf("}, \"instructions_per_byte\": null");
  if (o->sass_opcodes) {
    printf(", \"sass_opcodes\": {");
    for (size_t i = 0; i < m->loop.num_opcodes; i++)
      printf("%s\"%s\": %u", i ? ", " : "", m->loop.opcodes[i].name,
             m->loop.opcodes[i].count);
    putchar('}');
  }
}

/* Runs the kernel on the GPU with the bound arguments, leaving the results
 * in args; compares them with the VM's (run on copies) unless told not
 * to; times it with --bench. */
static bool run_gpu(const Options *o, TlContext *ctx, TlRuntime *rt,
                    TlOp *kernel, Arg *args, unsigned n, const char *text,
                    size_t len) {
  bool ok = false;
  Launch L;
  TlVmArg *ref = tl_xcalloc(n + 1, sizeof *ref);
  if (!prepare_launch(ctx, rt, kernel, args, n, o->input, text, len, &L, NULL))
    goto out;
  /* The VM's results on copies of the inputs, before the GPU's overwrite
   * the buffers. */
  for (unsigned i = 0; i < n; i++) {
    ref[i] = args[i].vm;
    if (ref[i].kind == TL_VM_ARG_BUFFER && !o->no_vm_check)
      ref[i].data = memcpy(tl_xmalloc(ref[i].size ? ref[i].size : 1), args[i].vm.data,
                           ref[i].size);
  }
  /* A tensor map reads the VM's copy of its buffer. */
  for (unsigned i = 0; i < n; i++)
    if (ref[i].kind == TL_VM_ARG_TENSOR_MAP && !o->no_vm_check)
      ref[i].data = ref[args[i].tmap_of].data;
  if (TL_FAILED(tl_runtime_launch(rt, L.kernel, &L.launch, L.kargs)))
    goto out;
  for (unsigned i = 0; i < n; i++)
    if (L.dev[i] && TL_FAILED(tl_runtime_download(rt, args[i].vm.data, L.dev[i], args[i].vm.size)))
      goto out;
  ok = true;
  if (!o->no_vm_check) {
    TlVm *vm = tl_vm_create(ctx);
    tl_vm_set_op_limit(vm, o->max_ops);
    tl_vm_set_memory_limit(vm, o->max_bytes);
    ok = !TL_FAILED(tl_vm_run(vm, kernel, n, ref));
    tl_vm_destroy(vm);
    /* Exact for integers; floats within --atol/--rtol, by default
     * 2^-9 (|r| + rms) + 2^-10 with rms the root mean square of the VM's
     * buffer: two f16 ulps of the element, plus as much of the buffer's
     * typical magnitude. The GPU's mma sums in another order than the VM's
     * k-ordered dot, and a long sum that cancels to a small element keeps
     * the rounding error of its large terms, which scale with the buffer's
     * elements, not with this one; an element wrong by a product or a
     * block of k is off by far more. */
    bool dflt = !(o->atol || o->rtol);
    for (unsigned i = 0; ok && i < n; i++) {
      if (args[i].vm.kind != TL_VM_ARG_BUFFER)
        continue;
      if (args[i].scratch) {
        printf("gpu %s: scratch, not compared\n", param_name(kernel, i));
        continue;
      }
      TlDType t = args[i].vm.dtype;
      double rms = 0;
      size_t finite = 0;
      for (size_t e = 0; dflt && tl_dtype_is_float(t) && e < args[i].count; e++) {
        double r = tl_dtype_decode(t, tl_dtype_load(t, ref[i].data, e));
        if (isfinite(r))
          rms += r * r, finite++;
      }
      rms = finite ? sqrt(rms / (double)finite) : 0;
      double atol = dflt ? 0x1p-10 + 0x1p-9 * rms : o->atol;
      double rtol = dflt ? 0x1p-9 : o->rtol;
      size_t bad = 0;
      double worst = 0;
      for (size_t e = 0; e < args[i].count; e++) {
        double g = tl_dtype_decode(t, tl_dtype_load(t, args[i].vm.data, e));
        double r = tl_dtype_decode(t, tl_dtype_load(t, ref[i].data, e));
        if ((isnan(g) && isnan(r)) || g == r)
          continue;
        double d = fabs(g - r);
        if (!(d <= worst))
          worst = d;
        if (!tl_dtype_is_float(t) || !(d <= atol + rtol * fabs(r)))
          bad++;
      }
      if (bad) {
        fail("%s: %zu of %zu elements differ between the GPU and the VM (worst %g)",
             param_name(kernel, i), bad, args[i].count, worst);
        ok = false;
      } else {
        printf("gpu %s: matches the VM (%zu elements, max abs difference %g)\n",
               param_name(kernel, i), args[i].count, worst);
      }
    }
  }
  if (ok && o->bench) {
    double ms;
    TlKernelResources res;
    ok = !TL_FAILED(tl_runtime_time(rt, L.kernel, &L.launch, L.kargs, 5, 50, &ms)) &&
         !TL_FAILED(tl_runtime_kernel_resources(rt, L.kernel, &L.launch, &res));
    double bytes = 0;
    for (unsigned i = 0; i < n; i++)
      if (args[i].vm.kind == TL_VM_ARG_BUFFER)
        bytes += (double)args[i].vm.size;
    SassMix mix = {0};
    if (ok)
      sass_mix(ctx, rt, tl_symbol_name(kernel), &L.ptx, &mix);
    if (ok && o->json) {
      char tf[32];
      snprintf(tf, sizeof tf, o->flops ? "%.3f" : "null", o->flops / (ms * 1e9));
      printf("{\"kernel\": \"%s\", \"device\": \"%s\", \"median_ms\": %.6f, "
             "\"bytes\": %.0f, \"gbytes_per_s\": %.3f, \"tflops\": %s, "
             "\"registers\": %d, \"local_bytes\": %d, \"blocks_per_sm\": %d",
             tl_symbol_name(kernel), tl_runtime_device_name(rt), ms, bytes,
             bytes / (ms * 1e6), tf, res.registers, res.local_bytes, res.blocks_per_sm);
      if (mix.read)
        print_sass_json(o, &L.launch, &mix);
      printf("}\n");
    }
    else if (ok)
      printf("bench @%s on %s: %.4f ms median (50 runs, cold L2), %.1f GB/s over "
             "the %.0f bytes of its buffers%s",
             tl_symbol_name(kernel), tl_runtime_device_name(rt), ms, bytes / (ms * 1e6),
             bytes, o->flops ? "" : "\n");
    if (ok && !o->json && o->flops)
      printf(", %.2f TFLOP/s\n", o->flops / (ms * 1e9));
    if (ok && !o->json)
      print_resources(kernel, &L.launch, &res);
    if (ok && !o->json && mix.read)
      print_sass(o, kernel, &L.launch, &mix);
    tl_sass_loop_free(&mix.loop);
  }
out:
  release_launch(rt, &L);
  for (unsigned i = 0; i < n; i++)
    if (ref[i].kind == TL_VM_ARG_BUFFER && !o->no_vm_check && ref[i].data != args[i].vm.data)
      tl_free(ref[i].data);
  tl_free(ref);
  return ok;
}

/* --simt --gpu: the simt kernel on the GPU with the bound arguments
 * (tensor maps encoded by the driver over the device copies of their
 * buffers), then on the thread-level VM (vargs, TL's encodings); every
 * buffer must then hold the same bytes on both, and the GPU's are kept
 * for --save, --check and --print. */
static bool run_simt_gpu(const Options *o, TlContext *ctx, TlRuntime *rt,
                         TlSimtVm *svm, TlOp *kernel, Arg *args, TlVmArg *vargs,
                         unsigned nargs, const TlSimtLaunch *sl,
                         const char *text, size_t len) {
  bool ok = false;
  TlDevPtr *dev = tl_xcalloc(nargs + 1, sizeof *dev);
  TlScalarArg *vals = tl_xcalloc(nargs + 1, sizeof *vals);
  void **kargs = tl_xcalloc(nargs + 1, sizeof *kargs);
  uint8_t (*maps)[TL_TENSOR_MAP_BYTES] =
      tl_xcalloc(nargs + 1, TL_TENSOR_MAP_BYTES);
  uint8_t **got = tl_xcalloc(nargs + 1, sizeof *got);
  unsigned smem = 0;
  int64_t ws = 0;
  void *k = gpu_compile(ctx, rt, o->input, text, len, tl_symbol_name(kernel),
                        &smem, &ws, NULL);
  if (!k)
    goto out;
  for (unsigned i = 0; i < nargs; i++) {
    TlVmArg *a = &vargs[i];
    if (args_tmap(args, nargs, i))
      continue;
    if (a->kind == TL_VM_ARG_BUFFER) {
      if (!(dev[i] = tl_runtime_alloc(rt, a->size ? a->size : 1)) ||
          TL_FAILED(tl_runtime_upload(rt, dev[i], a->data, a->size)))
        goto out;
      kargs[i] = &dev[i];
    } else {
      if (!tl_scalar_arg(param_type(kernel, i), a->kind == TL_VM_ARG_FLOAT,
                         a->i, a->f, &vals[i])) {
        fail("parameter %s: scalars of this type cannot be passed to the GPU",
             param_name(kernel, i));
        goto out;
      }
      kargs[i] = &vals[i];
    }
  }
  /* Tensor maps over the device copies of their buffers. */
  for (unsigned i = 0; i < nargs; i++) {
    if (!args_tmap(args, nargs, i))
      continue;
    TlTensorMapDesc d = args[i].tmap;
    d.base = dev[args[i].tmap_of];
    if (TL_FAILED(tl_runtime_tensor_map(rt, &d, maps[i])))
      goto out;
    kargs[i] = maps[i];
  }
  TlLaunch l = {{(unsigned)sl->grid[0], (unsigned)sl->grid[1],
                 (unsigned)sl->grid[2]},
                {(unsigned)sl->block[0], (unsigned)sl->block[1],
                 (unsigned)sl->block[2]},
                (unsigned)sl->smem_bytes};
  if (TL_FAILED(tl_runtime_launch(rt, k, &l, kargs)))
    goto out;
  for (unsigned i = 0; i < nargs; i++) {
    if (!dev[i])
      continue;
    got[i] = tl_xmalloc(vargs[i].size ? vargs[i].size : 1);
    if (TL_FAILED(tl_runtime_download(rt, got[i], dev[i], vargs[i].size)))
      goto out;
  }
  if (TL_FAILED(tl_simt_vm_run(svm, kernel, sl, nargs, vargs)))
    goto out;
  ok = true;
  for (unsigned i = 0; i < nargs; i++) {
    if (!got[i])
      continue;
    if (args[i].scratch) {
      printf("gpu %s: scratch, not compared\n", param_name(kernel, i));
      continue;
    }
    size_t n = vargs[i].size, bad = 0, first = 0;
    for (size_t b = 0; b < n; b++)
      if (got[i][b] != ((uint8_t *)vargs[i].data)[b] && !bad++)
        first = b;
    if (bad) {
      fail("%s: %zu of %zu bytes differ between the GPU and the VM (the "
           "first at byte %zu: gpu %u, vm %u)",
           param_name(kernel, i), bad, n, first, got[i][first],
           ((uint8_t *)vargs[i].data)[first]);
      ok = false;
    } else {
      printf("gpu %s: matches the VM (%zu bytes)\n", param_name(kernel, i), n);
      memcpy(vargs[i].data, got[i], n);
    }
  }
out:
  for (unsigned i = 0; i < nargs; i++) {
    if (dev[i])
      tl_runtime_free(rt, dev[i]);
    tl_free(got[i]);
  }
  tl_free(dev);
  tl_free(vals);
  tl_free(kargs);
  tl_free(maps);
  tl_free(got);
  return ok;
}

/*===--- Tuning -----------------------------------------------------------===*/

/* Sets the context's definitions: the -D values (checked by main), then
 * the tuned parameters' values when values is non-NULL. */
static void set_defines(TlContext *ctx, const Options *o,
                        const int64_t *values) {
  tl_context_clear_defines(ctx);
  for (size_t i = 0; i < o->defines.len; i++)
    add_define(ctx, o->defines.data[i]);
  for (unsigned i = 0; values && i < tl_tune_space_num_params(o->space); i++)
    tl_context_set_define(ctx, tl_tune_space_name(o->space, i), values[i]);
}

/* The state of one --tune. While it runs, the context's diagnostics are
 * captured: the first error's first line says why a candidate is
 * skipped. */
typedef struct Tuner {
  const Options *o;
  TlContext *ctx;
  const char *text;
  size_t len;
  TlStr why;
} Tuner;

static void capture(const TlDiag *d, void *user) {
  TlStr *why = user;
  if (d->severity == TL_DIAG_ERROR && !why->len)
    tl_str_putn(why, d->message, strcspn(d->message, "\n"));
}

/* Parses and verifies the instance of the kernel with the tuned values
 * (NULL: the kernel's defaults). The module, *kernel its kernel; NULL
 * with the reason in t->why when the kernel refuses the values. */
static TlModule *instance(Tuner *t, const int64_t *values, TlOp **kernel) {
  tl_str_clear(&t->why);
  set_defines(t->ctx, t->o, values);
  TlModule *m = tl_parse_module(t->ctx, t->o->input, t->text, t->len, 1);
  *kernel = NULL;
  if (m && !TL_FAILED(tl_verify(tl_module_op(m))))
    *kernel = tl_vm_find_kernel(m, t->o->kernel);
  if (!*kernel) {
    if (m)
      tl_module_destroy(m);
    if (!t->why.len)
      tl_str_puts(&t->why, "the kernel refuses it");
    return NULL;
  }
  return m;
}

static bool template_value(TlOp *kernel, const char *name, int64_t *v) {
  TlAttr *templ = tl_op_attr(kernel, "template");
  for (unsigned i = 0; templ && i < tl_attr_dict_size(templ); i++) {
    TlNamedAttr e = tl_attr_dict_entry(templ, i);
    if (!strcmp(e.name, name)) {
      *v = tl_attr_int_value(e.attr);
      return true;
    }
  }
  return false;
}

/* Every tuned name is a template parameter of the kernel; values (may be
 * NULL) gets the instance's values of them. */
static bool check_names(const Tuner *t, TlOp *kernel, int64_t *values) {
  const TlTuneSpace *s = t->o->space;
  for (unsigned i = 0; i < tl_tune_space_num_params(s); i++) {
    int64_t v;
    const char *name = tl_tune_space_name(s, i);
    if (!template_value(kernel, name, &v))
      return !fail("--tune %s: @%s has no template parameter '%s'", name,
                   tl_symbol_name(kernel), name);
    if (values)
      values[i] = v;
  }
  return true;
}

/* "BN=64 W=8" of candidate values. */
static const char *label(const TlTuneSpace *s, const int64_t *values,
                         TlStr *buf) {
  tl_str_clear(buf);
  tl_tune_space_format(s, values, buf);
  return tl_str_cstr(buf);
}

static void print_skip(Tuner *t, size_t i, const int64_t *values) {
  TlStr b = {0};
  printf("tune [%zu/%zu] %s: skipped: %s\n", i + 1,
         tl_tune_space_size(t->o->space), label(t->o->space, values, &b),
         tl_str_cstr(&t->why));
  fflush(stdout);
  tl_str_free(&b);
}

/* Without a GPU: the kernel's defaults when the space holds them and the
 * kernel accepts them, else the first candidate it accepts. */
static bool heuristic(Tuner *t, int64_t *choice) {
  const TlTuneSpace *s = t->o->space;
  const char *why = NULL;
  TlOp *k;
  TlModule *m = instance(t, NULL, &k);
  if (m) {
    bool named = check_names(t, k, choice);
    tl_module_destroy(m);
    if (!named)
      return false;
    if (tl_tune_space_find(s, choice, NULL))
      why = "the kernel's defaults";
  }
  for (size_t i = 0; !why && i < tl_tune_space_size(s); i++) {
    tl_tune_space_candidate(s, i, choice);
    if (!(m = instance(t, choice, &k))) {
      print_skip(t, i, choice);
      continue;
    }
    bool named = check_names(t, k, NULL);
    tl_module_destroy(m);
    if (!named)
      return false;
    why = "the first candidate the kernel accepts";
  }
  if (!why)
    return !fail("--tune: the kernel refuses every candidate");
  TlStr b = {0};
  printf("tune: no GPU; heuristic choice %s (%s)\n", label(s, choice, &b), why);
  tl_str_free(&b);
  return true;
}

/* The cache key of a tuning run (tl_tune_launch_key): the kernel's text
 * and name, the -D values, the space, the bound arguments' shapes and
 * scalar values, the device and the compiler. */
static void make_key(const Tuner *t, TlOp *kernel, const Arg *args, unsigned n,
                     TlRuntime *rt, TlTuneKey *key) {
  TlTuneKeyArg *ka = tl_xcalloc(n + 1, sizeof *ka);
  for (unsigned i = 0; i < n; i++) {
    const Arg *a = &args[i];
    TlTuneKeyArg x = {
        param_name(kernel, i), TL_ARG_INT, a->vm.i, a->vm.f, NULL, a->shape,
        (unsigned)a->rank};
    if (a->vm.kind == TL_VM_ARG_BUFFER) {
      x.kind = TL_ARG_BUFFER;
      x.dtype = tl_dtype_name(a->vm.dtype);
    } else if (a->vm.kind == TL_VM_ARG_FLOAT) {
      x.kind = TL_ARG_FLOAT;
    }
    ka[i] = x;
  }
  tl_tune_launch_key(key, t->text, t->len, tl_symbol_name(kernel),
                     t->o->defines.data, (unsigned)t->o->defines.len,
                     t->o->space, ka, n, tl_runtime_device_name(rt));
  tl_free(ka);
}

/* Compiles and times one candidate (as --bench times) on the bound
 * arguments, uploaded afresh, and gets what its compilation uses into
 * res; false with the reason in t->why. sig: the parameter types the
 * arguments were bound for. */
static bool time_candidate(Tuner *t, TlRuntime *rt, const int64_t *values,
                           Arg *args, unsigned n, TlType *const *sig,
                           double *ms, TlKernelResources *res) {
  TlOp *k;
  TlModule *m = instance(t, values, &k);
  if (!m)
    return false;
  bool ok = false, same = num_params(k) == n;
  for (unsigned i = 0; same && i < n; i++)
    same = param_type(k, i) == sig[i];
  if (!same) {
    tl_str_puts(&t->why, "its parameters differ from those of the kernel "
                         "the arguments were bound for");
  } else {
    Launch L;
    ok = prepare_launch(t->ctx, rt, k, args, n, t->o->input, t->text, t->len,
                        &L, &t->why) &&
         !TL_FAILED(
             tl_runtime_time(rt, L.kernel, &L.launch, L.kargs, 5, 50, ms)) &&
         !TL_FAILED(tl_runtime_kernel_resources(rt, L.kernel, &L.launch, res));
    release_launch(rt, &L);
  }
  tl_module_destroy(m);
  return ok;
}

/* On the GPU: the cached choice for this run's key, or every candidate
 * timed and the fastest kept (and cached). */
static bool tune_gpu(Tuner *t, TlRuntime *rt, int64_t *choice) {
  const TlTuneSpace *s = t->o->space;
  size_t count = tl_tune_space_size(s);
  unsigned np = tl_tune_space_num_params(s), nargs = 0;
  int64_t *values = tl_xcalloc(np + 1, sizeof *values);
  Arg *args = NULL;
  TlType **sig = NULL;
  TlTuneKey key = {0, {0}};
  char *dir = NULL, *path = NULL;
  TlStr b = {0};
  bool ok = false;
  /* The arguments are bound for the kernel's defaults or, when it refuses
   * them, for the first candidate it accepts; with none, every candidate
   * is skipped below. */
  TlOp *k;
  TlModule *m = instance(t, NULL, &k);
  for (size_t i = 0; !m && i < count; i++) {
    tl_tune_space_candidate(s, i, values);
    m = instance(t, values, &k);
  }
  if (m) {
    nargs = num_params(k);
    args = tl_xcalloc(nargs + 1, sizeof *args);
    sig = tl_xcalloc(nargs + 1, sizeof *sig);
    for (unsigned i = 0; i < nargs; i++)
      sig[i] = param_type(k, i);
    if (!check_names(t, k, NULL) || !bind_args(t->o, k, args)) {
      tl_module_destroy(m);
      goto out;
    }
    make_key(t, k, args, nargs, rt, &key);
    tl_module_destroy(m);
    if ((dir = tl_tune_cache_dir()))
      path = tl_tune_cache_path(dir, &key);
    else
      fprintf(stderr, "tl-run: note: no cache directory (TL_CACHE_DIR, "
                      "XDG_CACHE_HOME and HOME are unset): the choice is not "
                      "kept\n");
    double ms;
    TlErr err;
    TlTuneCacheStatus st =
        path && !t->o->retune
            ? tl_tune_cache_read(path, &key, s, values, &ms, &err)
            : TL_TUNE_CACHE_MISS;
    if (st == TL_TUNE_CACHE_HIT) {
      /* Trusted only as far as the kernel accepts it. */
      if ((m = instance(t, values, &k))) {
        tl_module_destroy(m);
        memcpy(choice, values, np * sizeof *values);
        printf("tune: cached %s (%.4f ms, %s)\n", label(s, choice, &b), ms,
               path);
        ok = true;
        goto out;
      }
      snprintf(err.msg, sizeof err.msg, "the kernel refuses its choice %s (%s)",
               label(s, values, &b), tl_str_cstr(&t->why));
      st = TL_TUNE_CACHE_INVALID;
    }
    if (st == TL_TUNE_CACHE_INVALID)
      fprintf(stderr, "tl-run: note: ignoring the tune cache entry '%s': %s\n",
              path, err.msg);
  }
  double best = INFINITY;
  for (size_t i = 0; i < count; i++) {
    double ms;
    TlKernelResources r;
    tl_tune_space_candidate(s, i, values);
    if (!time_candidate(t, rt, values, args, nargs, sig, &ms, &r)) {
      print_skip(t, i, values);
      continue;
    }
    printf("tune [%zu/%zu] %s: %.4f ms (%d registers, %d bytes of local "
           "memory, %d block%s an SM)\n",
           i + 1, count, label(s, values, &b), ms, r.registers, r.local_bytes,
           r.blocks_per_sm, r.blocks_per_sm == 1 ? "" : "s");
    fflush(stdout);
    if (ms < best) {
      best = ms;
      memcpy(choice, values, np * sizeof *values);
    }
  }
  if (best == INFINITY) {
    fail("--tune: no candidate could be run");
    goto out;
  }
  printf("tune best: %s (%.4f ms)\n", label(s, choice, &b), best);
  fflush(stdout);
  TlErr err;
  if (path && !tl_tune_cache_write(path, &key, s, choice, best, &err))
    fprintf(stderr, "tl-run: warning: the choice is not cached: %s\n", err.msg);
  ok = true;
out:
  for (unsigned i = 0; args && i < nargs; i++) {
    if (args[i].vm.kind == TL_VM_ARG_BUFFER)
      tl_free(args[i].vm.data);
    /* A tl kernel's tensor map: its bytes (the buffer is its own arg's). */
    if (args[i].vm.kind == TL_VM_ARG_TENSOR_MAP)
      tl_free((void *)args[i].vm.map);
  }
  tl_free(args);
  tl_free(sig);
  tl_free(values);
  tl_tune_key_free(&key);
  tl_free(dir);
  tl_free(path);
  tl_str_free(&b);
  return ok;
}

/* --tune: leaves the values of the candidate to run in choice. On the GPU
 * (*rt made here) it times them or reads the cache; without one (--vm, or
 * no device) it picks by the heuristic and sets *on_vm. false after an
 * error message. */
static bool tune(const Options *o, TlContext *ctx, const char *text, size_t len,
                 TlRuntime **rt, bool *on_vm, int64_t *choice) {
  Tuner t = {o, ctx, text, len, {0}};
  TlDiagEngine *e = tl_context_diag(ctx);
  tl_diag_set_handler(e, capture, &t.why);
  if (!*on_vm && !(*rt = tl_runtime_create(e, 0))) {
    fprintf(stderr,
            "tl-run: warning: cannot run on the GPU (%s): --tune "
            "picks without timing and the kernel runs on the VM\n",
            tl_str_cstr(&t.why));
    *on_vm = true;
  }
  bool ok = *on_vm ? heuristic(&t, choice) : tune_gpu(&t, *rt, choice);
  tl_diag_set_handler(e, NULL, NULL);
  tl_diag_reset_count(e);
  tl_str_free(&t.why);
  fflush(stdout);
  return ok;
}

/*===--- Driver -----------------------------------------------------------===*/

/* Names for a lowered kernel's grid expressions: its integer arguments
 * (by the func's arg_names) and its template values. */
typedef struct GridNames {
  TlOp *func;
  Arg *args;
  unsigned n;
} GridNames;

static bool grid_lookup(void *user, const char *name, size_t len, int64_t *v) {
  GridNames *g = user;
  TlAttr *names = tl_op_attr(g->func, "arg_names"), *templ = tl_op_attr(g->func, "template");
  for (unsigned i = 0; names && i < g->n && i < tl_attr_array_size(names); i++) {
    size_t l;
    const char *s = tl_attr_string_value(tl_attr_array_elem(names, i), &l);
    if (l == len && !memcmp(s, name, len) && g->args[i].vm.kind == TL_VM_ARG_INT) {
      *v = g->args[i].vm.i;
      return true;
    }
  }
  for (unsigned i = 0; templ && i < tl_attr_dict_size(templ); i++) {
    TlNamedAttr e = tl_attr_dict_entry(templ, i);
    if (strlen(e.name) == len && !memcmp(e.name, name, len)) {
      *v = tl_attr_int_value(e.attr);
      return true;
    }
  }
  return false;
}

/* --simt without --grid: the grid the lowered func records (its `grid`
 * expressions over the arguments), or 1 when it records none. */
static bool simt_grid(TlOp *func, Arg *args, unsigned n, int64_t *grid) {
  TlAttr *exprs = tl_op_attr(func, "grid");
  GridNames g = {func, args, n};
  for (unsigned d = 0; exprs && d < tl_attr_array_size(exprs) && d < 3; d++) {
    size_t len;
    const char *text = tl_attr_string_value(tl_attr_array_elem(exprs, d), &len);
    int64_t v;
    TlErr err;
    if (!tl_expr_eval(text, len, grid_lookup, &g, &v, &err, NULL))
      return !fail("cannot compute the grid of @%s: %s (give --grid)",
                   tl_symbol_name(func), err.msg);
    if (v < 1 || v > INT32_MAX)
      return !fail("the grid of @%s has %lld blocks in dimension %u (give --grid)",
                   tl_symbol_name(func), (long long)v, d);
    grid[d] = v;
  }
  return true;
}

int main(int argc, char **argv) {
  Options o;
  memset(&o, 0, sizeof o);
  o.grid[0] = o.grid[1] = o.grid[2] = 1;
  o.block[0] = o.block[1] = o.block[2] = 1;
  o.max_ops = 1000000000;
  o.max_bytes = TL_VM_DEFAULT_MAX_BYTES;
  int status = parse_args(argc, argv, &o);
  TlContext *ctx = NULL;
  TlModule *m = NULL;
  TlVm *vm = NULL;
  Arg *args = NULL;
  unsigned nparams = 0;
  char *text = NULL;
  TlRuntime *rt = NULL;
  bool on_vm = o.vm;
  int64_t *choice = NULL;
  if (status)
    goto out;
  status = 1;
  ctx = tl_context_create();
  tl_diag_set_tool(tl_context_diag(ctx), "tl-run");
  tl_register_all_dialects(ctx);
  for (size_t i = 0; i < o.defines.len; i++)
    if (!add_define(ctx, o.defines.data[i])) {
      TlErr derr;
      tl_context_parse_define(ctx, o.defines.data[i], &derr);
      fail("-D: %s", derr.msg);
      goto out;
    }
  size_t len;
  text = read_text(o.input, &len);
  if (!text)
    goto out;
  tl_diag_add_source(tl_context_diag(ctx), o.input, text, len);
  if (o.space) {
    choice = tl_xcalloc(tl_tune_space_num_params(o.space) + 1, sizeof *choice);
    if (!tune(&o, ctx, text, len, &rt, &on_vm, choice))
      goto out;
    set_defines(ctx, &o, choice);
  }
  m = tl_parse_module(ctx, o.input, text, len, 1);
  if (!m || TL_FAILED(tl_verify(tl_module_op(m))))
    goto out;
  bool used;
  for (unsigned i = 0; tl_context_define_at(ctx, i, &used); i++)
    if (!used)
      fprintf(stderr, "tl-run: warning: -D %s matches no template parameter\n",
              tl_context_define_at(ctx, i, NULL));
  simt_mode = o.simt;
  TlOp *kernel = o.simt ? tl_simt_vm_find_kernel(m, o.kernel)
                        : tl_vm_find_kernel(m, o.kernel);
  if (!kernel)
    goto out;
  TlSimtLaunch launch = {{1, 1, 1}, {1, 1, 1}, o.smem};
  if (o.simt) {
    memcpy(launch.grid, o.grid, sizeof launch.grid);
    memcpy(launch.block, o.block, sizeof launch.block);
    TlAttr *threads = tl_op_attr(kernel, "threads");
    if (!o.block_given && !threads) {
      fail("--simt needs --block N: @%s has no 'threads' attribute",
           tl_symbol_name(kernel));
      goto out;
    }
    if (!o.block_given)
      launch.block[0] = tl_attr_int_value(threads);
    /* The lowering records the kernel's planned shared memory. */
    TlAttr *smem = tl_op_attr(kernel, "smem_bytes");
    if (!o.smem_given && smem && tl_attr_kind(smem) == TL_ATTR_INT)
      launch.smem_bytes = tl_attr_int_value(smem);
  } else if (o.block_given || o.grid[0] != 1 || o.grid[1] != 1 ||
             o.grid[2] != 1 || o.smem || o.mma_sm90) {
    fail("--grid, --block, --smem and --mma apply to --simt only (a "
         "tl.kernel computes its launch)");
    goto out;
  }
  nparams = num_params(kernel);
  args = tl_xcalloc(nparams + 1, sizeof *args);
  if (!bind_args(&o, kernel, args))
    goto out;
  /* Check the names of --save, --check and --print before running. */
  for (size_t i = 0; i < o.saves.len; i++)
    if (!buffer_named(kernel, args, "--save", o.saves.data[i].name))
      goto out;
  for (size_t i = 0; i < o.checks.len; i++)
    if (!buffer_named(kernel, args, "--check", o.checks.data[i].name))
      goto out;
  for (size_t i = 0; i < o.prints.len; i++)
    if (!buffer_named(kernel, args, "--print", o.prints.data[i]))
      goto out;
  for (size_t i = 0; i < o.scratches.len; i++) {
    Arg *a = buffer_named(kernel, args, "--scratch", o.scratches.data[i]);
    if (!a)
      goto out;
    a->scratch = true;
  }
  if (o.simt && !o.grid_given && !simt_grid(kernel, args, nparams, launch.grid))
    goto out;
  TlVmArg *vargs = tl_xcalloc(nparams + 1, sizeof *vargs);
  for (unsigned i = 0; i < nparams; i++)
    vargs[i] = args[i].vm;
  TlResult r;
  if (!on_vm && !o.simt) {
    if (!rt && !(rt = tl_runtime_create(tl_context_diag(ctx), 0))) {
      fail("cannot run on the GPU (use --vm to run on the CPU)");
      r = TL_FAILURE;
    } else {
      r = run_gpu(&o, ctx, rt, kernel, args, nparams, text, len) ? TL_SUCCESS
                                                                   : TL_FAILURE;
    }
  } else if (o.simt) {
    TlSimtVm *svm = tl_simt_vm_create(ctx);
    if (o.mma_sm90)
      tl_simt_vm_set_mma_model(svm, TL_SIMT_MMA_SM90);
    tl_simt_vm_set_op_limit(svm, o.max_ops);
    /* The workspace, zeroed, after the bound arguments. */
    int64_t wb = workspace_bytes(kernel);
    if (wb) {
      vargs[nparams].kind = TL_VM_ARG_BUFFER;
      vargs[nparams].size = (size_t)wb;
      vargs[nparams].data = buffer_alloc(&o, "workspace", (size_t)wb);
      vargs[nparams].dtype = tl_dtype_uint(8);
    }
    if (wb && !vargs[nparams].data) {
      r = TL_FAILURE;
    } else if (o.gpu) {
      if (!rt && !(rt = tl_runtime_create(tl_context_diag(ctx), 0))) {
        fail("cannot run on the GPU (leave out --gpu to run on the VM only)");
        r = TL_FAILURE;
      } else {
        r = run_simt_gpu(&o, ctx, rt, svm, kernel, args, vargs,
                         nparams + (wb > 0), &launch, text, len)
                ? TL_SUCCESS
                : TL_FAILURE;
      }
    } else {
      r = tl_simt_vm_run(svm, kernel, &launch, nparams + (wb > 0), vargs);
    }
    if (wb)
      tl_free(vargs[nparams].data);
    tl_simt_vm_destroy(svm);
  } else {
    vm = tl_vm_create(ctx);
    tl_vm_set_op_limit(vm, o.max_ops);
    tl_vm_set_memory_limit(vm, o.max_bytes);
    r = tl_vm_run(vm, kernel, nparams, vargs);
  }
  tl_free(vargs);
  if (TL_FAILED(r))
    goto out;
  status = 0;
  for (size_t i = 0; i < o.saves.len; i++) {
    Arg *a = buffer_named(kernel, args, "--save", o.saves.data[i].name);
    TlNpy n = as_npy(a);
    TlErr err;
    if (!tl_npy_write(o.saves.data[i].value, &n, &err)) {
      fail("--save %s: %s", o.saves.data[i].name, err.msg);
      status = 1;
    }
  }
  for (size_t i = 0; i < o.prints.len; i++)
    print_buffer(o.prints.data[i],
                 buffer_named(kernel, args, "--print", o.prints.data[i]));
  for (size_t i = 0; i < o.checks.len; i++) {
    const Pair *p = &o.checks.data[i];
    if (!check_buffer(&o, p->name,
                      buffer_named(kernel, args, "--check", p->name), p->value))
      status = 1;
  }
out:
  for (unsigned i = 0; args && i < nparams; i++) {
    if (args[i].vm.kind == TL_VM_ARG_BUFFER)
      tl_free(args[i].vm.data);
    /* A tl kernel's tensor map: its bytes (the buffer is its own arg's). */
    if (args[i].vm.kind == TL_VM_ARG_TENSOR_MAP)
      tl_free((void *)args[i].vm.map);
  }
  tl_free(args);
  tl_vm_destroy(vm);
  if (m)
    tl_module_destroy(m);
  tl_runtime_destroy(rt);
  tl_free(choice);
  tl_tune_space_destroy(o.space);
  tl_free(text);
  if (ctx)
    tl_context_destroy(ctx);
  for (size_t i = 0; i < o.args.len; i++)
    tl_free((void *)o.args.data[i].name);
  for (size_t i = 0; i < o.saves.len; i++)
    tl_free((void *)o.saves.data[i].name);
  for (size_t i = 0; i < o.checks.len; i++)
    tl_free((void *)o.checks.data[i].name);
  tl_vec_free(&o.args);
  tl_vec_free(&o.saves);
  tl_vec_free(&o.checks);
  tl_vec_free(&o.defines);
  tl_vec_free(&o.prints);
  tl_vec_free(&o.scratches);
  /* Printed values and reports lost to a full disk are a failure. */
  TlErr err;
  if (!tl_stdout_flush(&err)) {
    fail("%s", err.msg);
    status = 1;
  }
  return status == 2 ? 0 : status;
}
