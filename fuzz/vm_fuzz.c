/* Fuzzes the block VM (exec/vm) on small mutated kernels: whatever parses
 * and verifies runs, over buffers made here, within a budget of executed
 * ops and a memory limit, so that no input can hang the run or make it
 * allocate without bound (a loop that never ends, a grid of billions of
 * blocks, a tile of 2^40 elements each stop with an error).
 *
 * An input is a module's text, optionally followed by a NUL byte and
 * argument bytes. Parameter i of the kernel (the module's first) takes
 * its argument from bytes 2i and 2i + 1 after the NUL: an integer is them
 * as a signed 16-bit number (0x7fff is 2^31 - 1), a float that over 256;
 * without them an integer is 64 and a float 1.5. Every pointer gets a
 * buffer of BUFFER_BYTES bytes of a fixed pseudo-random pattern, of the
 * pointer's element type; a tensor map gets one box over a buffer of
 * exactly its size (TL's encoding, or zero bytes, which the VM must
 * refuse, where the type's box breaks the rules). fuzz/seed.py makes such
 * inputs from the tests' tl-run --vm lines. TL_FUZZ_VERBOSE=1 prints the
 * diagnostics and the run's counters.
 *
 * Properties checked on every input that verifies:
 *   - the run never crashes, leaks or touches memory outside its buffers
 *     (the sanitizers watch), and it fails exactly when it reports an
 *     error;
 *   - it stays within its budget: the ops it counts exceed the budget by
 *     at most one pass over the module's ops (the check runs after each
 *     block and loop iteration), and a run that succeeds ran every block
 *     of its grid;
 *   - it is deterministic: a second run of the same VM on fresh copies of
 *     the buffers gives the same result, counters and bytes. */
#include "tl/dialects.h"
#include "tl/tensor_map.h"
#include "tl/tl.h"
#include "tl/vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  MAX_OPS = 2000,           /* executed ops a run, blocks included */
  MAX_BYTES = 512 << 10,    /* a tile's or workspace's bytes at most */
  BUFFER_BYTES = 16 << 10,  /* each pointer argument's buffer */
  MAX_MAP_BYTES = 64 << 10, /* a tensor map's buffer at most */
  MAX_PARAMS = 32,
};

typedef struct Run {
  int errors;               /* error diagnostics so far */
  const TlDiagEngine *diag; /* set when they are printed (verbose) */
} Run;

static void count(const TlDiag *d, void *user) {
  Run *r = user;
  if (d->severity == TL_DIAG_ERROR)
    r->errors++;
  if (r->diag) {
    TlStr s = {0};
    tl_diag_format(r->diag, d, &s);
    fprintf(stderr, "%s", tl_str_cstr(&s));
    tl_str_free(&s);
  }
}

static void count_op(TlOp *op, void *user) {
  (void)op;
  ++*(int64_t *)user;
}

/* The arguments of one run: args[i] for parameter i, and the buffers they
 * point to (owned here). */
typedef struct Args {
  unsigned n;
  TlVmArg args[MAX_PARAMS];
  unsigned char *bufs[MAX_PARAMS];
  unsigned char maps[MAX_PARAMS][TL_TENSOR_MAP_BYTES];
} Args;

static void fill(unsigned char *p, size_t n, unsigned seed) {
  uint32_t x = 0x9e3779b9u * (seed + 1);
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (unsigned char)(x >> 24);
  }
}

/* Parameter i's two bytes after the NUL, little-endian, as a signed
 * number (0x7fff: 2^31 - 1, a size past any buffer); 64 without them. */
static bool tail_arg(const unsigned char *tail, size_t tail_len, unsigned i,
                     int64_t *v) {
  if (2 * (size_t)i + 1 >= tail_len)
    return false;
  int16_t x = (int16_t)(tail[2 * i] | tail[2 * i + 1] << 8);
  *v = x == 0x7fff ? INT32_MAX : x;
  return true;
}

static int64_t int_arg(const unsigned char *tail, size_t tail_len, unsigned i) {
  int64_t v;
  return tail_arg(tail, tail_len, i, &v) ? v : 64;
}

static double float_arg(const unsigned char *tail, size_t tail_len,
                        unsigned i) {
  int64_t v;
  return tail_arg(tail, tail_len, i, &v) ? (double)v / 256 : 1.5;
}

static void free_args(Args *a) {
  for (unsigned i = 0; i < a->n && i < MAX_PARAMS; i++)
    tl_free(a->bufs[i]);
}

/* One box of the map type t over a buffer of exactly its size: false when
 * that buffer would be too large to make. */
static bool map_arg(Args *a, unsigned i, TlType *t) {
  TlDType dt;
  unsigned rank = tl_tensormap_rank(t);
  if (!tl_vm_dtype_of(tl_tensormap_elem(t), &dt) || rank == 0 ||
      rank > TL_TENSOR_MAP_MAX_RANK || tl_dtype_bits(dt) % 8)
    return false;
  TlTensorMapDesc d = {.rank = rank,
                       .elem_bytes = tl_dtype_bits(dt) / 8,
                       .swizzle = tl_tensormap_swizzle(t)};
  uint64_t bytes = d.elem_bytes;
  for (unsigned k = 0; k < rank; k++) {
    int64_t box = tl_tensormap_box(t, rank - 1 - k); /* outermost first */
    if (box <= 0 || box > 256)
      return false;
    d.box[k] = (uint32_t)box;
    d.dims[k] = (uint64_t)box;
    d.elem_strides[k] = 1;
    bytes *= (uint64_t)box;
    if (k + 1 < rank)
      d.strides[k] = bytes;
  }
  if (bytes > MAX_MAP_BYTES)
    return false;
  a->bufs[i] = tl_xmalloc(bytes);
  fill(a->bufs[i], bytes, i);
  memset(a->maps[i], 0, TL_TENSOR_MAP_BYTES);
  (void)tl_tensor_map_encode(&d, a->maps[i], NULL);
  a->args[i] = tl_vm_arg_tensor_map(a->maps[i], a->bufs[i], bytes, dt);
  return true;
}

/* The arguments for kernel; false (nothing allocated) when it has too
 * many parameters or a map too large to back. */
static bool make_args(Args *a, TlOp *kernel, const unsigned char *tail,
                      size_t tail_len) {
  memset(a, 0, sizeof *a);
  a->n = tl_vm_num_params(kernel);
  if (a->n > MAX_PARAMS)
    return false;
  for (unsigned i = 0; i < a->n; i++) {
    TlType *t = tl_vm_param_type(kernel, i);
    if (tl_type_is_tensormap(t)) {
      if (!map_arg(a, i, t)) {
        free_args(a);
        return false;
      }
    } else if (tl_type_is_ptr(t)) {
      TlDType dt;
      if (!tl_vm_dtype_of(tl_tensor_elem(t), &dt))
        dt = tl_dtype_uint(8); /* which the VM refuses: no memory format */
      a->bufs[i] = tl_xmalloc(BUFFER_BYTES);
      fill(a->bufs[i], BUFFER_BYTES, i);
      a->args[i] = tl_vm_arg_buffer(a->bufs[i], BUFFER_BYTES, dt);
    } else if (tl_type_is_float(t)) {
      a->args[i] = tl_vm_arg_float(float_arg(tail, tail_len, i));
    } else {
      a->args[i] = tl_vm_arg_int(int_arg(tail, tail_len, i));
    }
  }
  return true;
}

static TlOp *first_kernel(TlModule *m) {
  TlBlock *b = tl_region_first_block(tl_op_region(tl_module_op(m), 0));
  for (TlOp *op = b ? tl_block_first_op(b) : NULL; op; op = tl_op_next(op))
    if (tl_op_id(op) == TL_OP_TL_KERNEL)
      return op;
  return NULL;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  const unsigned char *nul = memchr(data, 0, size);
  size_t text_len = nul ? (size_t)(nul - data) : size;
  const unsigned char *tail = nul ? nul + 1 : NULL;
  size_t tail_len = nul ? size - text_len - 1 : 0;

  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  /* TL_FUZZ_VERBOSE=1 prints the diagnostics and the runs' counters, for
   * writing seeds that run (libFuzzer's output stays quiet without it). */
  bool verbose = getenv("TL_FUZZ_VERBOSE") != NULL;
  Run run = {0, verbose ? tl_context_diag(ctx) : NULL};
  tl_diag_set_handler(tl_context_diag(ctx), count, &run);
  if (verbose)
    tl_diag_add_source(tl_context_diag(ctx), "fuzz", (const char *)data,
                       text_len);
  TlModule *m = tl_parse_module(ctx, "fuzz", (const char *)data, text_len, 1);
  TlOp *kernel = NULL;
  if (m && !TL_FAILED(tl_verify(tl_module_op(m))))
    kernel = first_kernel(m);
  Args a, b;
  if (kernel && make_args(&a, kernel, tail, tail_len)) {
    int64_t module_ops = 0;
    tl_op_walk(tl_module_op(m), count_op, &module_ops, false);
    b = a; /* the second run's buffers: copies of the first's inputs */
    for (unsigned i = 0; i < a.n; i++) {
      if (!a.bufs[i])
        continue;
      b.bufs[i] = tl_xmalloc(a.args[i].size);
      memcpy(b.bufs[i], a.bufs[i], a.args[i].size);
      b.args[i].data = b.bufs[i];
      if (a.args[i].kind == TL_VM_ARG_TENSOR_MAP)
        b.args[i].map = b.maps[i];
    }

    TlVm *vm = tl_vm_create(ctx);
    tl_vm_set_print_stream(vm, NULL);
    tl_vm_set_op_limit(vm, MAX_OPS);
    tl_vm_set_memory_limit(vm, MAX_BYTES);
    run.errors = 0;
    bool ok = !TL_FAILED(tl_vm_run(vm, kernel, a.n, a.args));
    int errors = run.errors;
    TlVmStats s = tl_vm_stats(vm);
    if (verbose)
      fprintf(stderr, "vm: %s, %lld ops, %lld of %lld x %lld x %lld blocks\n",
              ok ? "ran" : "failed", (long long)s.ops, (long long)s.blocks,
              (long long)s.grid[0], (long long)s.grid[1], (long long)s.grid[2]);
    if (ok != (errors == 0)) {
      fprintf(stderr, "the run %s with %d errors reported\n",
              ok ? "succeeded" : "failed", errors);
      abort();
    }
    if (s.ops + s.blocks > MAX_OPS + module_ops + 1) {
      fprintf(stderr,
              "the run counted %lld ops and %lld blocks, past its "
              "budget of %d by more than the module's %lld ops\n",
              (long long)s.ops, (long long)s.blocks, MAX_OPS,
              (long long)module_ops);
      abort();
    }
    if (ok && s.blocks != s.grid[0] * s.grid[1] * s.grid[2]) {
      fprintf(stderr, "the run succeeded after %lld of its blocks\n",
              (long long)s.blocks);
      abort();
    }

    run.errors = 0;
    bool again = !TL_FAILED(tl_vm_run(vm, kernel, b.n, b.args));
    TlVmStats t = tl_vm_stats(vm);
    if (again != ok || run.errors != errors || t.ops != s.ops ||
        t.blocks != s.blocks) {
      fprintf(stderr,
              "a second run differs: %s, %d errors, %lld ops, "
              "%lld blocks against %s, %d, %lld, %lld\n",
              again ? "ok" : "failed", run.errors, (long long)t.ops,
              (long long)t.blocks, ok ? "ok" : "failed", errors,
              (long long)s.ops, (long long)s.blocks);
      abort();
    }
    for (unsigned i = 0; i < a.n; i++)
      if (a.bufs[i] && memcmp(a.bufs[i], b.bufs[i], a.args[i].size) != 0) {
        fprintf(stderr, "a second run leaves other bytes in argument %u\n", i);
        abort();
      }
    tl_vm_destroy(vm);
    free_args(&b);
    free_args(&a);
  }
  if (m)
    tl_module_destroy(m);
  tl_context_destroy(ctx);
  return 0;
}
