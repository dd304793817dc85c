/* The runtime API (include/tl/program.h): sessions, programs, the PTX
 * cache and the two ways to run a kernel, the block VM over host buffers
 * and an asynchronous launch on a CUDA stream.
 *
 * A program owns a context of its own (the defines are the context's) in
 * which its kernel is parsed once for the VM and the argument checks;
 * compiling PTX parses the text again and lowers that copy, as tl-llc
 * does. Every diagnostic of a call is formatted into the session's error
 * text through a handler on the program's and the runtime's engines. */
#define _POSIX_C_SOURCE 200809L
#include "tl/program.h"

#include "tl/analysis.h"
#include "tl/dialects.h"
#include "tl/pass.h"
#include "tl/runtime.h"
#include "tl/target.h"
#include "tl/tl.h"
#include "tl/tune.h"
#include "tl/vm.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The VM's op budget for a run: a kernel whose loop never ends fails. */
#define VM_MAX_OPS 1000000000
/* Far above the PTX of any kernel: a larger file is not an entry. */
#define MAX_PTX_ENTRY_BYTES ((size_t)256 << 20)
/* The PTX entries' format: 2 added the checksum line (exec/tune/tune.c),
 * which covers smem:, workspace: and the PTX as well as the key. */
#define PTX_VERSION 2

struct TlSession {
  TlStr error;     /* the diagnostics of the last failed call */
  char *cache_dir; /* NULL: the default; "": none */
  char *driver;    /* NULL: libcuda.so.1 */
  TlDiagEngine *rt_diag;
  TlRuntime *rt;
  int ordinal;
  int several; /* whether the driver sees more than one device; -1: not
                  asked yet */
  bool no_extent_checks; /* tl_session_set_check_extents(s, false) */
};

/* PTX for one target, kept by the program. */
typedef struct Ptx {
  const TlArch *arch;
  TlStr text;
  unsigned smem_bytes;
  size_t workspace_bytes;
  TlPtxOrigin origin;
  TlErr why;
  void *function; /* the loaded kernel (the device's target only) */
} Ptx;

/* A tensor-map parameter's map. want: the description the arguments of
 * the current call give; have: the one `bytes` holds the driver's
 * encoding of (valid when encoded), so that a launch with the same
 * description encodes nothing. Descriptions are zeroed before they are
 * filled: they are compared with memcmp. */
typedef struct Map {
  TlTensorMapDesc want, have;
  bool encoded;
  unsigned char *bytes;
} Map;

struct TlProgram {
  TlSession *s;
  TlContext *ctx;
  char *name; /* the source's name */
  char *text;
  size_t len;
  TL_VEC(char *) defines; /* "NAME=VALUE", sorted by name, one per name */
  TlModule *m;
  TlOp *kernel;
  TL_VEC(Ptx) ptx;
  TlDevPtr ws; /* the global workspace on the device, or 0 */
  size_t ws_bytes;
  char *tune_path; /* the entry of the last tune call */
  /* Made at creation: the parameters as tl_program_param describes them
   * and their types. */
  unsigned n;
  TlParamInfo *params;
  TlType **types;
  /* A launch's scratch, n + 1 entries each, made at creation: the
   * parameter values cuLaunchKernel reads (kargs[i] points at vals[i];
   * kargs[n] at ws), the integer arguments and the values `assume`
   * checks. */
  TlScalarArg *vals;
  void **kargs;
  int64_t *ints, *words;
  double *reals;
  /* The tensor-map parameters' maps, made at creation: per parameter
   * (NULL for the others) the description of this call's argument (its
   * base the address the call uses) and the 128 bytes a launch passes,
   * 64-byte aligned in map_mem. */
  Map *maps;
  unsigned char *map_mem;
  /* Known after the first launch: the PTX it uses (an index into ptx),
   * the masks of `assume` (values[i] & mask[i] must be 0; all 0 when it
   * promises nothing) or a malformed `assume` (assume_bad), and the
   * launch dims of the last integer arguments (dims_ints). */
  int launch_ptx;
  bool assume_known, assume_bad;
  uint64_t *assume_mask;
  bool dims_known;
  int64_t *dims_ints;
  TlLaunchDims dims;
  /* The global views' extents (made at creation), and for the integer
   * arguments of the last launch dims, per parameter, the bytes its
   * buffer needs (-1: the extent overflowed) and the view that needs them
   * (-1: none); a launch's buffer sizes (bytes, from TlArg or the
   * caller's array). */
  TlViewExtents *extents;
  int64_t *need;
  int *need_view;
  int64_t *sizes;
};

/*===--- Errors -----------------------------------------------------------===*/

static void append(TlSession *s, const TlDiagEngine *e, const TlDiag *d) {
  tl_diag_format(e, d, &s->error);
  if (s->error.len && s->error.data[s->error.len - 1] != '\n')
    tl_str_putc(&s->error, '\n');
}

/* The handler of a program's context: user is the program. */
static void program_diag(const TlDiag *d, void *user) {
  TlProgram *p = user;
  append(p->s, tl_context_diag(p->ctx), d);
}

/* The handler of the runtime's engine: user is the session. */
static void session_diag(const TlDiag *d, void *user) {
  TlSession *s = user;
  append(s, s->rt_diag, d);
}

/* The session's error text is emptied at the start of each fallible
 * call. */
static void begin(TlSession *s) { tl_str_clear(&s->error); }

static TlResult failf(TlSession *s, const char *fmt, ...) TL_PRINTF(2, 3);
static TlResult failf(TlSession *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_str_puts(&s->error, "error: ");
  tl_str_vprintf(&s->error, fmt, ap);
  tl_str_putc(&s->error, '\n');
  va_end(ap);
  return TL_FAILURE;
}

/*===--- Sessions ---------------------------------------------------------===*/

TlSession *tl_session_create(void) {
  TlSession *s = tl_xcalloc(1, sizeof *s);
  s->rt_diag = tl_diag_engine_create();
  tl_diag_set_handler(s->rt_diag, session_diag, s);
  s->ordinal = -1;
  s->several = -1;
  return s;
}

void tl_session_destroy(TlSession *s) {
  if (!s)
    return;
  tl_runtime_destroy(s->rt);
  tl_diag_engine_destroy(s->rt_diag);
  tl_str_free(&s->error);
  tl_free(s->cache_dir);
  tl_free(s->driver);
  tl_free(s);
}

const char *tl_session_error(const TlSession *s) {
  return s->error.data ? s->error.data : "";
}

static void set_text(char **field, const char *text) {
  tl_free(*field);
  *field = text ? tl_xstrdup(text) : NULL;
}

void tl_session_set_cache_dir(TlSession *s, const char *dir) {
  set_text(&s->cache_dir, dir);
}

void tl_session_set_driver(TlSession *s, const char *driver) {
  set_text(&s->driver, driver);
}

void tl_session_set_check_extents(TlSession *s, bool on) {
  s->no_extent_checks = !on;
}

TlResult tl_session_open_device(TlSession *s, int ordinal) {
  begin(s);
  if (s->rt)
    return failf(s,
                 "CUDA device %d is already open (a session drives one "
                 "device)",
                 s->ordinal);
  if (!(s->rt = tl_runtime_create_with_driver(s->rt_diag, ordinal, s->driver)))
    return TL_FAILURE;
  s->ordinal = ordinal;
  return TL_SUCCESS;
}

TlResult tl_session_synchronize(TlSession *s) {
  begin(s);
  if (!s->rt)
    return failf(s, "no CUDA device is open");
  return tl_runtime_synchronize(s->rt);
}

int tl_session_device_ordinal(const TlSession *s) { return s->ordinal; }
const char *tl_session_device_name(const TlSession *s) {
  return s->rt ? tl_runtime_device_name(s->rt) : NULL;
}
unsigned tl_session_device_sm(const TlSession *s) {
  return s->rt ? tl_runtime_sm(s->rt) : 0;
}
unsigned tl_session_device_sms(const TlSession *s) {
  return s->rt ? tl_runtime_num_sms(s->rt) : 0;
}

/*===--- Programs ---------------------------------------------------------===*/

static int cmp_define(const void *a, const void *b) {
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
  int c = strncmp(x, y, nx < ny ? nx : ny);
  return c ? c : (nx > ny) - (nx < ny);
}

static bool read_file(TlSession *s, const char *path, char **text,
                      size_t *len) {
  TlErr err;
  *text = tl_read_file(path, len, &err);
  return *text || !failf(s, "%s", err.msg);
}

TlProgram *tl_program_create(TlSession *s, const TlProgramDesc *d) {
  begin(s);
  TlProgram *p = tl_xcalloc(1, sizeof *p);
  p->s = s;
  p->name = tl_xstrdup(d->path ? d->path : "<text>");
  if (d->text) {
    p->text = tl_xmalloc(d->len + 1);
    memcpy(p->text, d->text, d->len);
    p->text[d->len] = 0;
    p->len = d->len;
  } else if (!d->path) {
    failf(s, "no kernel source: give a path or a text");
    goto fail;
  } else if (!read_file(s, d->path, &p->text, &p->len)) {
    goto fail;
  }
  p->ctx = tl_context_create();
  tl_register_all_dialects(p->ctx);
  tl_diag_set_handler(tl_context_diag(p->ctx), program_diag, p);
  tl_diag_add_source(tl_context_diag(p->ctx), p->name, p->text, p->len);
  /* The defines as the context keeps them: the last of a name wins. */
  for (unsigned i = 0; i < d->num_defines; i++) {
    TlErr err;
    if (TL_FAILED(tl_context_parse_define(p->ctx, d->defines[i], &err))) {
      failf(s, "define '%s': %s", d->defines[i], err.msg);
      goto fail;
    }
    size_t j = 0;
    while (j < p->defines.len &&
           cmp_define(&p->defines.data[j], &d->defines[i]))
      j++;
    if (j < p->defines.len)
      tl_free(p->defines.data[j]);
    else
      tl_vec_push(&p->defines, NULL);
    p->defines.data[j] = tl_xstrdup(d->defines[i]);
  }
  if (p->defines.len > 1)
    qsort(p->defines.data, p->defines.len, sizeof *p->defines.data, cmp_define);
  p->m = tl_parse_module(p->ctx, p->name, p->text, p->len, 1);
  if (!p->m || TL_FAILED(tl_verify(tl_module_op(p->m))) ||
      !(p->kernel = tl_vm_find_kernel(p->m, d->kernel)))
    goto fail;
  bool used;
  for (unsigned i = 0; tl_context_define_at(p->ctx, i, &used); i++)
    if (!used) {
      failf(s,
            "define '%s' matches no template parameter of the kernels in "
            "'%s'",
            tl_context_define_at(p->ctx, i, NULL), p->name);
      goto fail;
    }
  unsigned n = p->n = tl_vm_num_params(p->kernel);
  p->params = tl_xcalloc(n + 1, sizeof *p->params);
  p->types = tl_xcalloc(n + 1, sizeof *p->types);
  for (unsigned i = 0; i < n; i++) {
    tl_program_param(p, i, &p->params[i]);
    p->types[i] = tl_vm_param_type(p->kernel, i);
  }
  p->vals = tl_xcalloc(n + 1, sizeof *p->vals);
  p->kargs = tl_xcalloc(n + 2, sizeof *p->kargs);
  for (unsigned i = 0; i < n; i++)
    p->kargs[i] = &p->vals[i];
  p->ints = tl_xcalloc(n + 1, sizeof *p->ints);
  p->words = tl_xcalloc(n + 1, sizeof *p->words);
  p->reals = tl_xcalloc(n + 1, sizeof *p->reals);
  p->assume_mask = tl_xcalloc(n + 1, sizeof *p->assume_mask);
  p->dims_ints = tl_xcalloc(n + 1, sizeof *p->dims_ints);
  p->extents = tl_view_extents_create(p->kernel);
  p->need = tl_xcalloc(n + 1, sizeof *p->need);
  p->need_view = tl_xcalloc(n + 1, sizeof *p->need_view);
  p->sizes = tl_xcalloc(n + 1, sizeof *p->sizes);
  unsigned nmaps = 0;
  for (unsigned i = 0; i < n; i++)
    nmaps += p->params[i].kind == TL_ARG_TENSOR_MAP;
  if (nmaps) {
    /* The driver writes its CUtensorMap 64-byte aligned; the launch reads
     * the parameter's bytes from here. */
    p->maps = tl_xcalloc(n + 1, sizeof *p->maps);
    p->map_mem = tl_xcalloc(nmaps + 1, TL_TENSOR_MAP_BYTES);
    uintptr_t at = ((uintptr_t)p->map_mem + 63) & ~(uintptr_t)63;
    for (unsigned i = 0; i < n; i++)
      if (p->params[i].kind == TL_ARG_TENSOR_MAP) {
        p->maps[i].bytes = (unsigned char *)at;
        p->kargs[i] = p->maps[i].bytes;
        at += TL_TENSOR_MAP_BYTES;
      }
  }
  p->launch_ptx = -1;
  return p;
fail:
  tl_program_destroy(p);
  return NULL;
}

void tl_program_destroy(TlProgram *p) {
  if (!p)
    return;
  if (p->ws)
    tl_runtime_free(p->s->rt, p->ws);
  for (size_t i = 0; i < p->ptx.len; i++)
    tl_str_free(&p->ptx.data[i].text);
  tl_vec_free(&p->ptx);
  for (size_t i = 0; i < p->defines.len; i++)
    tl_free(p->defines.data[i]);
  tl_vec_free(&p->defines);
  if (p->m)
    tl_module_destroy(p->m);
  if (p->ctx)
    tl_context_destroy(p->ctx);
  tl_free(p->tune_path);
  tl_free(p->params);
  tl_free(p->types);
  tl_free(p->vals);
  tl_free(p->kargs);
  tl_free(p->ints);
  tl_free(p->words);
  tl_free(p->reals);
  tl_free(p->assume_mask);
  tl_free(p->dims_ints);
  tl_view_extents_destroy(p->extents);
  tl_free(p->need);
  tl_free(p->need_view);
  tl_free(p->sizes);
  tl_free(p->maps);
  tl_free(p->map_mem);
  tl_free(p->text);
  tl_free(p->name);
  tl_free(p);
}

const char *tl_program_name(const TlProgram *p) {
  return tl_symbol_name(p->kernel);
}

bool tl_program_template_value(const TlProgram *p, const char *name,
                               int64_t *value) {
  TlAttr *templ = tl_op_attr(p->kernel, "template");
  for (unsigned i = 0; templ && i < tl_attr_dict_size(templ); i++) {
    TlNamedAttr e = tl_attr_dict_entry(templ, i);
    if (!strcmp(e.name, name) && tl_attr_kind(e.attr) == TL_ATTR_INT) {
      *value = tl_attr_int_value(e.attr);
      return true;
    }
  }
  return false;
}

unsigned tl_program_num_params(const TlProgram *p) {
  return tl_vm_num_params(p->kernel);
}

void tl_program_param(const TlProgram *p, unsigned i, TlParamInfo *out) {
  TlType *t = tl_vm_param_type(p->kernel, i);
  bool ptr = tl_type_is_ptr(t), map = tl_type_is_tensormap(t);
  TlType *e = ptr ? tl_tensor_elem(t) : map ? tl_tensormap_elem(t) : t;
  TlDType dt = {0, 0, 0, 0};
  tl_vm_dtype_of(e, &dt);
  out->name = tl_vm_param_name(p->kernel, i);
  out->kind = ptr                   ? TL_ARG_BUFFER
              : map                 ? TL_ARG_TENSOR_MAP
              : tl_type_is_float(t) ? TL_ARG_FLOAT
                                    : TL_ARG_INT;
  out->dtype = tl_dtype_is_valid(dt) ? tl_dtype_name(dt) : "?";
  out->bits = tl_type_bitwidth(e);
  out->packed = ptr && (!tl_npy_descr(dt) || tl_dtype_bits(dt) < 8);
}

/*===--- Arguments --------------------------------------------------------===*/

/* Which address of a buffer a call uses (and checks). */
typedef enum Address { ADDR_NONE, ADDR_HOST, ADDR_DEVICE } Address;

/* The description of the tensor map of argument i, a TENSOR_MAP for the
 * !tl.tensormap parameter of type t, over the tensor at `base`: the
 * argument's shape and strides (outermost first, elements) reversed into
 * the map's dimensions (innermost first, strides in bytes), the type's
 * box and swizzle. False after a message for a tensor the map cannot be
 * made over. The shape and strides are checked here, numbered as the
 * caller numbers them; tl_tensor_map_check then finds what is left (the
 * base's alignment). */
static bool map_desc(TlProgram *p, unsigned i, const TlType *t, const TlArg *a,
                     uint64_t base, TlTensorMapDesc *d) {
  TlSession *s = p->s;
  const char *name = p->params[i].name, *k = tl_program_name(p);
  unsigned rank = tl_tensormap_rank(t);
  uint64_t eb = p->params[i].bits / 8;
  if (a->rank != rank) {
    TlStr ts = {0};
    tl_type_print(t, &ts);
    failf(s,
          "argument %u (%s) of @%s: the tensor has %u dimension%s, but the "
          "tensor map (%s) has %u",
          i, name, k, a->rank, a->rank == 1 ? "" : "s", tl_str_cstr(&ts), rank);
    tl_str_free(&ts);
    return false;
  }
  for (unsigned r = 0; r < rank; r++)
    if (a->shape[r] < 1 || a->shape[r] > ((int64_t)1 << 32))
      return !failf(s,
                    "argument %u (%s) of @%s: dimension %u of the tensor has "
                    "%lld elements; a tensor map's dimensions have 1 to 2^32",
                    i, name, k, r, (long long)a->shape[r]);
  /* Strides in elements, outermost first; all 0: row major. A product
   * that overflows is past any limit below. */
  int64_t st[TL_TENSOR_MAP_MAX_RANK];
  bool given = false;
  for (unsigned r = 0; r < rank; r++)
    given |= a->strides[r] != 0;
  for (unsigned r = rank; r-- > 0;) {
    if (given)
      st[r] = a->strides[r];
    else if (r + 1 == rank)
      st[r] = 1;
    else if (__builtin_mul_overflow(st[r + 1], a->shape[r + 1], &st[r]))
      st[r] = INT64_MAX;
  }
  if (st[rank - 1] != 1)
    return !failf(s,
                  "argument %u (%s) of @%s: the tensor's innermost stride is "
                  "%lld elements; a tensor map's is 1",
                  i, name, k, (long long)st[rank - 1]);
  for (unsigned r = 0; r + 1 < rank; r++) {
    int64_t bytes;
    if (st[r] < 1 || __builtin_mul_overflow(st[r], (int64_t)eb, &bytes) ||
        bytes % 16 || bytes >= ((int64_t)1 << 40))
      return !failf(s,
                    "argument %u (%s) of @%s: the stride of dimension %u of "
                    "the tensor is %lld elements; a tensor map's strides "
                    "are positive multiples of 16 bytes below 2^40",
                    i, name, k, r, (long long)st[r]);
  }
  /* The tensor's bytes: up to the end of its last element (past 2^64
   * only for shapes and strides near their limits). */
  uint64_t end = eb;
  bool over = false;
  for (unsigned r = 0; r < rank; r++) {
    uint64_t x;
    over |= __builtin_mul_overflow((uint64_t)(a->shape[r] - 1),
                                   (uint64_t)st[r] * eb, &x) ||
            __builtin_add_overflow(end, x, &end);
  }
  if (over)
    return !failf(s,
                  "argument %u (%s) of @%s: the tensor spans more than 2^64 "
                  "bytes",
                  i, name, k);
  if (end > a->bytes)
    return !failf(s,
                  "argument %u (%s) of @%s: the tensor's last element ends "
                  "at byte %llu, past the %zu bytes of its memory",
                  i, name, k, (unsigned long long)end, a->bytes);
  memset(d, 0, sizeof *d);
  d->base = base;
  d->rank = rank;
  d->elem_bytes = (unsigned)eb;
  d->swizzle = tl_tensormap_swizzle(t);
  /* Map dimension j is the tensor's dimension rank - 1 - j; the type's
   * box is outermost first as well. */
  for (unsigned j = 0; j < rank; j++) {
    unsigned r = rank - 1 - j;
    d->dims[j] = (uint64_t)a->shape[r];
    d->box[j] = (uint32_t)tl_tensormap_box(t, r);
    d->elem_strides[j] = 1;
    if (j + 1 < rank)
      d->strides[j] = (uint64_t)st[r - 1] * eb;
  }
  TlErr err;
  if (!tl_tensor_map_check(d, &err))
    return !failf(s, "argument %u (%s) of @%s: %s", i, name, k, err.msg);
  return true;
}

/* Checks the arguments against the parameters; a tensor map's
 * description goes to p->maps[i].want, over the address `addr` names (0
 * for ADDR_NONE and the VM's base). */
static bool check_args(TlProgram *p, const TlArg *args, unsigned nargs,
                       Address addr) {
  TlSession *s = p->s;
  unsigned n = p->n;
  const char *k = tl_program_name(p);
  if (nargs != n)
    return !failf(s, "@%s takes %u argument%s, not %u", k, n, n == 1 ? "" : "s",
                  nargs);
  for (unsigned i = 0; i < n; i++) {
    TlParamInfo pi = p->params[i];
    const TlArg *a = &args[i];
    static const char *const kinds[] = {"an integer", "a float", "a buffer",
                                        "a tensor map"};
    if (a->kind > TL_ARG_TENSOR_MAP)
      return !failf(s, "argument %u (%s) of @%s: unknown argument kind %d", i,
                    pi.name, k, (int)a->kind);
    if (pi.kind == TL_ARG_TENSOR_MAP) {
      if (a->kind != TL_ARG_TENSOR_MAP)
        return !failf(s,
                      "argument %u (%s) of @%s: expected a tensor map (the "
                      "tensor of %s it is made over), got %s",
                      i, pi.name, k, pi.dtype, kinds[a->kind]);
      if (a->dtype && strcmp(a->dtype, pi.dtype))
        return !failf(s,
                      "argument %u (%s) of @%s: the tensor map's elements "
                      "are %s, but the tensor holds %s",
                      i, pi.name, k, pi.dtype, a->dtype);
      if (addr == ADDR_DEVICE ? !a->device : addr == ADDR_HOST && !a->host)
        return !failf(s,
                      "argument %u (%s) of @%s: the tensor has no %s address",
                      i, pi.name, k, addr == ADDR_DEVICE ? "device" : "host");
      if (!map_desc(p, i, p->types[i], a, addr == ADDR_DEVICE ? a->device : 0,
                    &p->maps[i].want))
        return false;
    } else if (pi.kind == TL_ARG_BUFFER) {
      if (a->kind != TL_ARG_BUFFER)
        return !failf(s,
                      "argument %u (%s) of @%s: expected a buffer of %s, "
                      "got %s",
                      i, pi.name, k, pi.dtype, kinds[a->kind]);
      if (a->dtype && strcmp(a->dtype, pi.dtype) &&
          !(pi.packed && !strcmp(a->dtype, "u8")))
        return !failf(s,
                      "argument %u (%s) of @%s: expected a buffer of %s%s, "
                      "got one of %s",
                      i, pi.name, k, pi.dtype,
                      pi.packed ? " (or its packed bytes as u8)" : "",
                      a->dtype);
      if (addr == ADDR_DEVICE ? !a->device
                              : addr == ADDR_HOST && !a->host && a->bytes)
        return !failf(s,
                      "argument %u (%s) of @%s: the buffer has no %s address",
                      i, pi.name, k, addr == ADDR_DEVICE ? "device" : "host");
    } else if (a->kind >= TL_ARG_BUFFER ||
               (pi.kind == TL_ARG_INT && a->kind != TL_ARG_INT)) {
      return !failf(s,
                    "argument %u (%s) of @%s: expected %s scalar (%s), got "
                    "%s",
                    i, pi.name, k,
                    pi.kind == TL_ARG_INT ? "an integer" : "a float", pi.dtype,
                    kinds[a->kind]);
    }
  }
  return true;
}

TlResult tl_program_run_vm(TlProgram *p, const TlArg *args, unsigned nargs) {
  begin(p->s);
  if (!check_args(p, args, nargs, ADDR_HOST))
    return TL_FAILURE;
  TlVmArg *v = tl_xcalloc(nargs + 1, sizeof *v);
  /* The VM's maps: TL's encoding, base 0 (the tensor starts at `host`,
   * the memory the VM is given with the map). */
  unsigned char *maps =
      p->maps ? tl_xcalloc(nargs + 1, TL_TENSOR_MAP_BYTES) : NULL;
  for (unsigned i = 0; i < nargs; i++) {
    const TlArg *a = &args[i];
    if (a->kind == TL_ARG_TENSOR_MAP) {
      unsigned char *m = maps + (size_t)i * TL_TENSOR_MAP_BYTES;
      TlErr err;
      bool ok = tl_tensor_map_encode(&p->maps[i].want, m, &err);
      tl_assert(ok && "check_args checked the description");
      (void)ok;
      TlDType dt;
      tl_vm_dtype_of(tl_tensormap_elem(p->types[i]), &dt);
      v[i] = tl_vm_arg_tensor_map(m, a->host, a->bytes, dt);
    } else if (a->kind == TL_ARG_BUFFER) {
      TlType *t = tl_tensor_elem(tl_vm_param_type(p->kernel, i));
      TlDType dt;
      tl_vm_dtype_of(t, &dt);
      v[i] = tl_vm_arg_buffer(a->host, a->bytes, dt);
    } else {
      v[i] =
          a->kind == TL_ARG_INT ? tl_vm_arg_int(a->i) : tl_vm_arg_float(a->f);
    }
  }
  TlVm *vm = tl_vm_create(p->ctx);
  tl_vm_set_op_limit(vm, VM_MAX_OPS);
  TlResult r = tl_vm_run(vm, p->kernel, nargs, v);
  tl_vm_destroy(vm);
  tl_free(maps);
  tl_free(v);
  return r;
}

/*===--- PTX --------------------------------------------------------------===*/

TlResult tl_compile_ptx(TlContext *ctx, const char *name, const char *text,
                        size_t len, const char *kernel_name, const TlArch *arch,
                        TlStr *ptx, unsigned *smem_bytes,
                        int64_t *workspace_bytes) {
  TlModule *m = tl_parse_module(ctx, name, text, len, 1);
  TlPipeline *pl = tl_pipeline_create();
  TlTarget *t = NULL;
  TlResult r = TL_FAILURE;
  TlPipelineConfig cfg = {.verify_each = true, .arch = arch};
  *smem_bytes = 0;
  *workspace_bytes = 0;
  if (!m ||
      TL_FAILED(tl_pipeline_parse(pl, TL_PIPELINE_GPU,
                                  tl_context_diag(ctx))) ||
      TL_FAILED(tl_pipeline_run(pl, m, &cfg)))
    goto out;
  /* The lowered kernel's planned shared memory and global workspace. */
  for (TlOp *f = tl_block_first_op(tl_module_body(m)); f; f = tl_op_next(f)) {
    const char *fname = tl_symbol_name(f);
    if (!fname || strcmp(fname, kernel_name))
      continue;
    TlAttr *sb = tl_op_attr(f, "smem_bytes"),
           *wb = tl_op_attr(f, "workspace_bytes");
    if (sb && tl_attr_kind(sb) == TL_ATTR_INT)
      *smem_bytes = (unsigned)tl_attr_int_value(sb);
    if (wb && tl_attr_kind(wb) == TL_ATTR_INT)
      *workspace_bytes = tl_attr_int_value(wb);
  }
  TlTargetOptions o = {arch->name, 0, 3};
  t = tl_target_create(ctx, &o);
  if (t)
    r = tl_target_compile(t, m, ptx, NULL, NULL);
out:
  tl_target_destroy(t);
  tl_pipeline_destroy(pl);
  if (m)
    tl_module_destroy(m);
  return r;
}

/* The cache key of the program's PTX for arch. */
static void ptx_key(const TlProgram *p, const TlArch *arch, TlTuneKey *key) {
  tl_tune_key_init(key, p->text, p->len);
  tl_tune_key_add(key, "kernel", "%s", tl_program_name(p));
  for (size_t i = 0; i < p->defines.len; i++)
    tl_tune_key_add(key, "define", "%s", p->defines.data[i]);
  tl_tune_key_add(key, "target", "%s", arch->name);
  tl_tune_key_add(key, "compiler", "%s", tl_target_version());
}

/* A decimal count after `field: ` on the next line of [*at, end). */
static bool read_count(const char **at, const char *end, const char *field,
                       uint64_t *v) {
  size_t fl = strlen(field);
  const char *nl = memchr(*at, '\n', (size_t)(end - *at));
  if (!nl || (size_t)(nl - *at) <= fl + 2 || memcmp(*at, field, fl) ||
      memcmp(*at + fl, ": ", 2))
    return false;
  const char *d = *at + fl + 2;
  uint64_t x = 0;
  for (; d < nl; d++) {
    if (*d < '0' || *d > '9' || x > (UINT64_MAX - 9) / 10)
      break;
    x = x * 10 + (uint64_t)(*d - '0');
  }
  /* "ptx: N bytes" ends in a unit; the others end after the digits. */
  if (d == *at + fl + 2)
    return false;
  if (!strcmp(field, "ptx") ? (size_t)(nl - d) != 6 || memcmp(d, " bytes", 6)
                            : d != nl)
    return false;
  *v = x;
  *at = nl + 1;
  return true;
}

/* Parses the body of a PTX entry:
 *   smem: 1024
 *   workspace: 0
 *   ptx: 5321 bytes
 *   <the PTX, exactly that many bytes, and nothing after it> */
static bool parse_ptx_entry(const TlStr *body, Ptx *x, TlErr *err) {
  const char *at = body->data ? body->data : "", *end = at + body->len;
  uint64_t smem, ws, n;
  if (!read_count(&at, end, "smem", &smem) || smem > UINT32_MAX ||
      !read_count(&at, end, "workspace", &ws) ||
      !read_count(&at, end, "ptx", &n))
    return tl_err(err, "it is truncated or malformed: no 'smem:', "
                       "'workspace:' and 'ptx:' lines after the ingredients");
  if ((uint64_t)(end - at) != n)
    return tl_err(err,
                  "it is truncated or malformed: its PTX has %zu bytes, "
                  "not %" PRIu64,
                  (size_t)(end - at), n);
  x->smem_bytes = (unsigned)smem;
  x->workspace_bytes = (size_t)ws;
  tl_str_putn(&x->text, at, (size_t)n);
  return true;
}

static void ptx_info(const Ptx *x, TlPtxInfo *out) {
  out->ptx = tl_str_cstr((TlStr *)&x->text);
  out->len = x->text.len;
  out->target = x->arch->name;
  out->smem_bytes = x->smem_bytes;
  out->workspace_bytes = x->workspace_bytes;
  out->origin = x->origin;
  out->why = x->why;
}

/* The program's PTX for the target of SM sm (0: the open device's), from
 * the program, the cache or the compiler. */
static Ptx *get_ptx(TlProgram *p, unsigned sm) {
  TlSession *s = p->s;
  if (!sm && !s->rt) {
    failf(s, "no CUDA device is open: name a target SM");
    return NULL;
  }
  if (!sm)
    sm = tl_runtime_sm(s->rt);
  const TlArch *arch = tl_arch_for_device(sm);
  if (!arch) {
    TlStr names = {0};
    tl_arch_names_text(&names, 0, true);
    failf(s, "no target runs on sm_%u; the targets are %s", sm,
          tl_str_cstr(&names));
    tl_str_free(&names);
    return NULL;
  }
  for (size_t i = 0; i < p->ptx.len; i++)
    if (p->ptx.data[i].arch == arch)
      return &p->ptx.data[i];
  Ptx x;
  memset(&x, 0, sizeof x);
  x.arch = arch;
  x.origin = TL_PTX_COMPILED;
  TlTuneKey key = {0, {0}};
  ptx_key(p, arch, &key);
  char *dir = s->cache_dir ? tl_xstrdup(s->cache_dir) : tl_tune_cache_dir();
  TlStr path = {0};
  if (dir && *dir) {
    tl_str_printf(&path, "%s/ptx/%016llx.txt", dir,
                  (unsigned long long)tl_tune_key_hash(&key));
    TlStr body = {0};
    TlTuneCacheStatus st =
        tl_cache_entry_read(path.data, "ptx", PTX_VERSION, &key,
                            MAX_PTX_ENTRY_BYTES, &body, &x.why);
    if (st == TL_TUNE_CACHE_HIT && parse_ptx_entry(&body, &x, &x.why))
      x.origin = TL_PTX_CACHED;
    else if (st != TL_TUNE_CACHE_MISS)
      x.origin = TL_PTX_REBUILT;
    tl_str_free(&body);
  }
  bool ok = true;
  if (x.origin != TL_PTX_CACHED) {
    tl_str_clear(&x.text);
    int64_t ws = 0;
    ok = !TL_FAILED(tl_compile_ptx(p->ctx, p->name, p->text, p->len,
                                   tl_program_name(p), arch, &x.text,
                                   &x.smem_bytes, &ws));
    x.workspace_bytes = (size_t)ws;
    if (ok && path.len) {
      /* A cache that cannot be written costs a compile next time, no
       * more. */
      TlStr body = {0};
      tl_str_printf(&body, "smem: %u\nworkspace: %zu\nptx: %zu bytes\n",
                    x.smem_bytes, x.workspace_bytes, x.text.len);
      tl_str_putn(&body, x.text.data ? x.text.data : "", x.text.len);
      tl_cache_entry_write(path.data, "ptx", PTX_VERSION, &key, body.data,
                           body.len, NULL);
      tl_str_free(&body);
    }
  }
  tl_str_free(&path);
  tl_free(dir);
  tl_tune_key_free(&key);
  if (!ok) {
    tl_str_free(&x.text);
    return NULL;
  }
  tl_vec_push(&p->ptx, x);
  return &tl_vec_last(&p->ptx);
}

TlResult tl_program_ptx(TlProgram *p, unsigned sm, TlPtxInfo *out) {
  begin(p->s);
  Ptx *x = get_ptx(p, sm);
  if (!x)
    return TL_FAILURE;
  ptx_info(x, out);
  return TL_SUCCESS;
}

/*===--- Launches ---------------------------------------------------------===*/

/* What each buffer parameter's views need for the integer arguments
 * p->ints: the largest of its views' bytes (p->need, -1 when one
 * overflows) and that view (p->need_view). */
static void know_needs(TlProgram *p) {
  tl_view_extents_needs(p->extents, p->n, p->ints, p->need, p->need_view);
}

/* Whether every buffer p->sizes gives holds its views (know_needs); false
 * after a message naming the parameter, the view and both sizes. */
static bool check_extents(TlProgram *p) {
  for (unsigned i = 0; i < p->n; i++) {
    if (p->need_view[i] < 0 || p->params[i].kind != TL_ARG_BUFFER)
      continue;
    int64_t need = p->need[i];
    if (need >= 0 && (uint64_t)need <= (uint64_t)p->sizes[i])
      continue;
    TlViewExtent e;
    tl_view_extents_get(p->extents, (unsigned)p->need_view[i], &e);
    if (need < 0)
      return !failf(p->s,
                    "argument %u (%s) of @%s: the view %s needs more bytes "
                    "than 64-bit integers count (%s)",
                    i, p->params[i].name, tl_program_name(p), e.text, e.bytes);
    return !failf(p->s,
                  "argument %u (%s) of @%s: the view %s needs %lld bytes, the "
                  "buffer has %llu",
                  i, p->params[i].name, tl_program_name(p), e.text,
                  (long long)need, (unsigned long long)p->sizes[i]);
  }
  return true;
}

/* The launch dims of the integer arguments p->ints (0 for the other
 * parameters), remembered for the next launch with the same ones; the
 * shared memory is x's. */
static bool launch_dims(TlProgram *p, const Ptx *x, TlLaunchDims *out) {
  size_t bytes = p->n * sizeof *p->ints;
  if (!p->dims_known || memcmp(p->dims_ints, p->ints, bytes)) {
    int64_t grid[3], threads;
    TlErr err;
    p->dims_known = false;
    /* The module was verified when it was compiled. */
    if (!tl_kernel_verified_launch_dims(p->kernel, p->ints, grid, &threads,
                                        &err))
      return !failf(p->s, "cannot launch @%s: %s", tl_program_name(p), err.msg);
    for (int d = 0; d < 3; d++)
      p->dims.grid[d] = (unsigned)grid[d];
    p->dims.threads = (unsigned)threads;
    know_needs(p);
    memcpy(p->dims_ints, p->ints, bytes);
    p->dims_known = true;
  }
  *out = p->dims;
  out->smem_bytes = x->smem_bytes;
  return true;
}

/* p->ints, p->words and p->reals from checked arguments: an integer's
 * value, a buffer's device address, a float's value (0 for a tensor
 * map). */
static void take_args(TlProgram *p, const TlArg *args) {
  for (unsigned i = 0; i < p->n; i++) {
    const TlArg *a = &args[i];
    /* A tensor map has no word: its description is p->maps[i].want. */
    bool map = a->kind == TL_ARG_TENSOR_MAP;
    p->ints[i] = a->kind == TL_ARG_INT ? a->i : 0;
    p->words[i] = a->kind == TL_ARG_BUFFER ? (int64_t)a->device
                  : map                    ? 0
                                           : a->i;
    p->reals[i] = a->kind == TL_ARG_FLOAT ? a->f : map ? 0 : (double)a->i;
    p->sizes[i] = a->kind == TL_ARG_BUFFER ? (int64_t)a->bytes : 0;
  }
}

TlResult tl_program_launch_dims(TlProgram *p, const TlArg *args, unsigned nargs,
                                unsigned sm, TlLaunchDims *out) {
  begin(p->s);
  Ptx *x;
  if (!check_args(p, args, nargs, ADDR_NONE) || !(x = get_ptx(p, sm)))
    return TL_FAILURE;
  take_args(p, args);
  return launch_dims(p, x, out) ? TL_SUCCESS : TL_FAILURE;
}

bool tl_scalar_arg(const TlType *t, bool is_float, int64_t i, double f,
                   TlScalarArg *out) {
  unsigned w = tl_type_bitwidth(t);
  if (tl_type_is_int(t)) {
    int64_t v = is_float ? (int64_t)f : i;
    if (w <= 8)
      out->i8 = (int8_t)v;
    else if (w <= 16)
      out->i16 = (int16_t)v;
    else if (w <= 32)
      out->i32 = (int32_t)v;
    else
      out->i64 = v;
    return true;
  }
  double v = is_float ? f : (double)i;
  if (w == 32)
    out->f32 = (float)v;
  else if (w == 64)
    out->f64 = v;
  else
    return false;
  return true;
}

/* The masks of the kernel's `assume` (p->assume_mask), worked out on
 * the first launch; false, every launch, for a malformed `assume`. */
static bool know_assume(TlProgram *p) {
  if (p->assume_known && !p->assume_bad)
    return true;
  /* Zero breaks no promise: only a malformed `assume` fails here (again,
   * for its message, on each launch after the first). */
  uint64_t *zeros = tl_xcalloc(p->n + 1, sizeof *zeros);
  p->assume_bad =
      TL_FAILED(tl_kernel_check_launch_assumptions(p->kernel, p->n, zeros));
  tl_free(zeros);
  TlAttr *as = tl_op_attr(p->kernel, "assume");
  for (unsigned i = 0;
       !p->assume_known && !p->assume_bad && as && i < tl_attr_dict_size(as);
       i++) {
    TlNamedAttr e = tl_attr_dict_entry(as, i);
    int k = tl_vm_param_index(p->kernel, e.name);
    if (k >= 0 && (unsigned)k < p->n)
      p->assume_mask[k] |= (uint64_t)tl_attr_int_value(e.attr) - 1;
  }
  p->assume_known = true;
  return !p->assume_bad;
}

/* Whether memory at device address w, argument i's `what`, may be the
 * session's device's; false after a message when the driver says it is
 * another device's. */
static bool own_memory(TlProgram *p, unsigned i, uint64_t w, const char *what) {
  TlSession *s = p->s;
  /* Memory of another device fails at the launch, or later, as an
   * illegal address; say which argument it is now. Memory the driver does
   * not know may still be reachable (mapped or HMM host memory), so it
   * passes. */
  int dev;
  if (s->several && tl_runtime_pointer_device(s->rt, (TlDevPtr)w, &dev) &&
      dev >= 0 && dev != s->ordinal)
    return !failf(s,
                  "argument %u (%s) of @%s: the %s is memory of CUDA device "
                  "%d, not of device %d (the session's)",
                  i, p->params[i].name, tl_program_name(p), what, dev,
                  s->ordinal);
  return true;
}

/* Makes a launch of p->words and p->reals (take_args, or the caller's
 * copy of them) and of the tensor maps' descriptions (check_args) ready:
 * opens device 0 when none is open, gets the PTX and loads it, packs the
 * parameter values, encodes the tensor maps that changed, checks the
 * buffers' addresses and the kernel's `assume`, and zeroes the workspace
 * on `stream`. *x gets the PTX, *l the launch. */
static bool make_ready(TlProgram *p, void *stream, Ptx **xp, TlLaunch *l) {
  TlSession *s = p->s;
  unsigned n = p->n;
  if (!s->rt) {
    if (!(s->rt = tl_runtime_create_with_driver(s->rt_diag, 0, s->driver)))
      return false;
    s->ordinal = 0;
  }
  /* With one device no buffer can be another's: the per-buffer pointer
   * queries (two driver calls each) are skipped. */
  if (s->several < 0)
    s->several = tl_runtime_device_count(s->rt) > 1;
  Ptx *x;
  if (p->launch_ptx >= 0) {
    x = &p->ptx.data[p->launch_ptx];
  } else {
    if (!(x = get_ptx(p, 0)))
      return false;
    p->launch_ptx = (int)(x - p->ptx.data);
  }
  for (unsigned i = 0; i < n; i++)
    p->ints[i] = p->params[i].kind == TL_ARG_INT ? p->words[i] : 0;
  TlLaunchDims dims;
  if (!launch_dims(p, x, &dims))
    return false;
  /* Before anything reaches the device: a buffer smaller than a view of
   * it would fault there, and a fault ends the process's CUDA context. */
  if (!s->no_extent_checks && !check_extents(p))
    return false;
  for (unsigned i = 0; i < n; i++) {
    const TlParamInfo *pi = &p->params[i];
    int64_t w = p->words[i];
    if (pi->kind == TL_ARG_TENSOR_MAP) {
      /* check_args made the description; the driver's encoding of the
       * last launch's is kept while it stays the same. */
      Map *m = &p->maps[i];
      if (!own_memory(p, i, m->want.base, "tensor"))
        return false;
      if (!m->encoded || memcmp(&m->have, &m->want, sizeof m->want)) {
        m->encoded = false;
        if (TL_FAILED(tl_runtime_tensor_map(s->rt, &m->want, m->bytes)))
          return !failf(s,
                        "argument %u (%s) of @%s: the driver refused the "
                        "tensor map",
                        i, pi->name, tl_program_name(p));
        memcpy(&m->have, &m->want, sizeof m->have); /* padding too */
        m->encoded = true;
      }
    } else if (pi->kind == TL_ARG_BUFFER) {
      if (!w)
        return !failf(s,
                      "argument %u (%s) of @%s: the buffer has no device "
                      "address",
                      i, pi->name, tl_program_name(p));
      if (!own_memory(p, i, (uint64_t)w, "buffer"))
        return false;
      p->vals[i].i64 = w;
    } else {
      bool is_float = pi->kind == TL_ARG_FLOAT;
      if (!tl_scalar_arg(p->types[i], is_float, w, p->reals[i], &p->vals[i]))
        return !failf(s,
                      "argument %u (%s) of @%s: scalars of this type cannot "
                      "be passed to the GPU",
                      i, pi->name, tl_program_name(p));
    }
  }
  /* The launch must keep the kernel's `assume` promises: integer values
   * and the device addresses of the buffers (words of the float and
   * tensor-map parameters, which `assume` cannot name, are masked by
   * 0). */
  if (!know_assume(p))
    return false;
  uint64_t broken = 0;
  for (unsigned i = 0; i < n; i++)
    broken |= (uint64_t)p->words[i] & p->assume_mask[i];
  if (broken) {
    tl_kernel_check_launch_assumptions(p->kernel, n,
                                       (const uint64_t *)p->words);
    return false;
  }
  if (!x->function &&
      !(x->function = tl_runtime_kernel(s->rt, x->text.data, x->text.len,
                                        tl_program_name(p))))
    return false;
  p->kargs[n] = NULL;
  if (x->workspace_bytes) {
    if (p->ws_bytes < x->workspace_bytes) {
      tl_runtime_free(s->rt, p->ws);
      p->ws_bytes = 0;
      if (!(p->ws = tl_runtime_alloc(s->rt, x->workspace_bytes)))
        return false;
      p->ws_bytes = x->workspace_bytes;
    }
    if (TL_FAILED(tl_runtime_memset_async(s->rt, p->ws, 0, x->workspace_bytes,
                                          stream)))
      return false;
    p->kargs[n] = &p->ws;
  }
  TlLaunch launch = {{dims.grid[0], dims.grid[1], dims.grid[2]},
                     {dims.threads, 1, 1},
                     dims.smem_bytes};
  *l = launch;
  *xp = x;
  return true;
}

/* The start of a call over device arguments: checked, taken, and the
 * kernel compiled and loaded for a launch on `stream`. */
static bool ready_args(TlProgram *p, const TlArg *args, unsigned nargs,
                       void *stream, Ptx **x, TlLaunch *l) {
  begin(p->s);
  if (!check_args(p, args, nargs, ADDR_DEVICE))
    return false;
  take_args(p, args);
  return make_ready(p, stream, x, l);
}

TlResult tl_program_launch(TlProgram *p, const TlArg *args, unsigned nargs,
                           void *stream) {
  Ptx *x;
  TlLaunch l;
  if (!ready_args(p, args, nargs, stream, &x, &l))
    return TL_FAILURE;
  return tl_runtime_launch_async(p->s->rt, x->function, &l, p->kargs, stream);
}

TlResult tl_program_launch_values(TlProgram *p, const int64_t *words,
                                  const double *reals, const int64_t *sizes,
                                  unsigned nargs, void *stream) {
  begin(p->s);
  Ptx *x;
  TlLaunch l;
  if (nargs != p->n)
    return failf(p->s, "@%s takes %u argument%s, not %u", tl_program_name(p),
                 p->n, p->n == 1 ? "" : "s", nargs);
  /* A word cannot describe a tensor. */
  for (unsigned i = 0; i < p->n; i++)
    if (p->params[i].kind == TL_ARG_TENSOR_MAP)
      return failf(p->s,
                   "argument %u (%s) of @%s: a tensor map cannot be passed "
                   "as a word; launch a kernel with tensor-map parameters "
                   "with tl_program_launch",
                   i, p->params[i].name, tl_program_name(p));
  if (!sizes && !p->s->no_extent_checks)
    return failf(p->s,
                 "@%s: the launch gives no buffer sizes to check its views "
                 "against (tl_session_set_check_extents turns the checks off)",
                 tl_program_name(p));
  for (unsigned i = 0; i < p->n; i++) {
    p->words[i] = words[i];
    p->reals[i] = reals[i];
    p->sizes[i] = sizes ? sizes[i] : 0;
  }
  if (!make_ready(p, stream, &x, &l))
    return TL_FAILURE;
  return tl_runtime_launch_async(p->s->rt, x->function, &l, p->kargs, stream);
}

TlResult tl_program_time(TlProgram *p, const TlArg *args, unsigned nargs,
                         unsigned warmup, unsigned iters, double *median_ms) {
  Ptx *x;
  TlLaunch l;
  if (!ready_args(p, args, nargs, NULL, &x, &l))
    return TL_FAILURE;
  return tl_runtime_time(p->s->rt, x->function, &l, p->kargs, warmup, iters,
                         median_ms);
}

TlResult tl_program_resources(TlProgram *p, const TlArg *args, unsigned nargs,
                              TlKernelResources *out) {
  Ptx *x;
  TlLaunch l;
  if (!ready_args(p, args, nargs, NULL, &x, &l))
    return TL_FAILURE;
  return tl_runtime_kernel_resources(p->s->rt, x->function, &l, out);
}

/*===--- Tuning -----------------------------------------------------------===*/

typedef struct Define {
  const char *text; /* "NAME=VALUE" */
  size_t name_len;
} Define;

static int define_cmp(const void *a, const void *b) {
  const Define *x = a, *y = b;
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = strncmp(x->text, y->text, n);
  return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

void tl_tune_launch_key(TlTuneKey *k, const char *text, size_t len,
                        const char *kernel, const char *const *defines,
                        unsigned num_defines, const TlTuneSpace *space,
                        const TlTuneKeyArg *args, unsigned nargs,
                        const char *device) {
  tl_tune_key_init(k, text, len);
  tl_tune_key_add(k, "kernel", "%s", kernel);
  /* One define per name, the last given winning, sorted by name. */
  Define *defs = tl_xcalloc(num_defines + 1, sizeof *defs);
  size_t nd = 0;
  for (unsigned i = 0; i < num_defines; i++) {
    Define x = {defines[i], strcspn(defines[i], "=")};
    size_t j = 0;
    while (j < nd && define_cmp(&defs[j], &x))
      j++;
    defs[j] = x;
    nd += j == nd;
  }
  qsort(defs, nd, sizeof *defs, define_cmp);
  for (size_t i = 0; i < nd; i++)
    tl_tune_key_add(k, "define", "%s", defs[i].text);
  tl_free(defs);
  tl_tune_key_add_space(k, space);
  for (unsigned i = 0; i < nargs; i++) {
    const TlTuneKeyArg *a = &args[i];
    if (a->kind == TL_ARG_BUFFER || a->kind == TL_ARG_TENSOR_MAP) {
      TlStr shape = {0};
      for (unsigned d = 0; d < a->rank; d++)
        tl_str_printf(&shape, "%s%lld", d ? "x" : "", (long long)a->shape[d]);
      tl_tune_key_add(k, "arg", "%s = %s[%s]", a->name, a->dtype,
                      tl_str_cstr(&shape));
      tl_str_free(&shape);
    } else if (a->kind == TL_ARG_INT) {
      tl_tune_key_add(k, "arg", "%s = %lld", a->name, (long long)a->i);
    } else {
      tl_tune_key_add(k, "arg", "%s = %.17g", a->name, a->f);
    }
  }
  tl_tune_key_add(k, "device", "%s", device);
  tl_tune_key_add(k, "compiler", "%s", tl_target_version());
}

/* The space, the key and the entry's path (NULL with no cache directory)
 * of a tuning run; false after an error message. */
static bool tune_key(TlProgram *p, const TlTuneDesc *d, TlTuneSpace **space,
                     TlTuneKey *key, char **path) {
  TlSession *s = p->s;
  *space = tl_tune_space_create();
  *path = NULL;
  for (unsigned i = 0; i < d->num_space; i++) {
    TlErr err;
    if (!tl_tune_space_add(*space, d->space[i], &err))
      return !failf(s, "tune: %s", err.msg);
    int64_t v;
    const char *name = tl_tune_space_name(*space, i);
    if (!tl_program_template_value(p, name, &v))
      return !failf(s, "tune %s: @%s has no integer template parameter '%s'",
                    name, tl_program_name(p), name);
  }
  if (!check_args(p, d->args, d->nargs, ADDR_NONE))
    return false;
  if (!s->rt)
    return !failf(s, "no CUDA device is open: a tune cache key names the "
                     "device");
  /* The defines but those of the tuned names (the program may be any
   * instance of the space). */
  const char **defs = tl_xcalloc(p->defines.len + 1, sizeof *defs);
  unsigned nd = 0;
  for (size_t i = 0; i < p->defines.len; i++) {
    const char *t = p->defines.data[i];
    size_t nl = strcspn(t, "=");
    bool tuned = false;
    for (unsigned j = 0; j < d->num_space; j++) {
      const char *name = tl_tune_space_name(*space, j);
      tuned |= strlen(name) == nl && !memcmp(name, t, nl);
    }
    if (!tuned)
      defs[nd++] = t;
  }
  TlTuneKeyArg *ka = tl_xcalloc(d->nargs + 1, sizeof *ka);
  int64_t *dims = tl_xcalloc(d->nargs + 1, sizeof *dims);
  for (unsigned i = 0; i < d->nargs; i++) {
    const TlArg *a = &d->args[i];
    TlParamInfo pi;
    tl_program_param(p, i, &pi);
    TlTuneKeyArg x = {pi.name, pi.kind, a->i, a->f, pi.dtype, NULL, 0};
    if (pi.kind == TL_ARG_FLOAT && a->kind == TL_ARG_INT)
      x.f = (double)a->i;
    if (pi.kind == TL_ARG_TENSOR_MAP) {
      /* The tensor's shape (check_args checked it). */
      x.shape = a->shape;
      x.rank = a->rank;
    } else if (pi.kind == TL_ARG_BUFFER) {
      const TlShape *sh = d->shapes ? &d->shapes[i] : NULL;
      if (sh && sh->rank > TL_MAX_RANK) {
        tl_free(dims);
        tl_free(ka);
        tl_free(defs);
        return !failf(
            s, "argument %u (%s) of @%s: a shape of rank %u (at most %d)", i,
            pi.name, tl_program_name(p), sh->rank, TL_MAX_RANK);
      }
      if (sh && sh->rank) {
        x.shape = sh->dims;
        x.rank = sh->rank;
      } else {
        dims[i] = (int64_t)(a->bytes * 8 / (pi.bits ? pi.bits : 8));
        x.shape = &dims[i];
        x.rank = 1;
      }
    }
    ka[i] = x;
  }
  tl_tune_launch_key(key, p->text, p->len, tl_program_name(p), defs, nd, *space,
                     ka, d->nargs, tl_runtime_device_name(s->rt));
  tl_free(dims);
  tl_free(ka);
  tl_free(defs);
  char *dir = s->cache_dir ? tl_xstrdup(s->cache_dir) : tl_tune_cache_dir();
  if (dir && *dir)
    *path = tl_tune_cache_path(dir, key);
  tl_free(dir);
  return true;
}

/* Starts a lookup or store: out cleared (a miss), the key, space and
 * entry path of d made (the path kept in the program for out). */
static bool tune_begin(TlProgram *p, const TlTuneDesc *d, TlTuneSpace **space,
                       TlTuneKey *key, TlTuneEntry *out) {
  begin(p->s);
  memset(out, 0, sizeof *out);
  out->status = TL_TUNE_CACHE_MISS;
  char *path;
  bool ok = tune_key(p, d, space, key, &path);
  tl_free(p->tune_path);
  p->tune_path = path;
  out->path = path;
  return ok;
}

TlResult tl_program_tune_lookup(TlProgram *p, const TlTuneDesc *d,
                                int64_t *values, TlTuneEntry *out) {
  TlTuneSpace *space;
  TlTuneKey key = {0, {0}};
  bool ok = tune_begin(p, d, &space, &key, out);
  const char *path = out->path;
  if (ok && path)
    out->status =
        tl_tune_cache_read(path, &key, space, values, &out->ms, &out->why);
  tl_tune_key_free(&key);
  tl_tune_space_destroy(space);
  return ok ? TL_SUCCESS : TL_FAILURE;
}

TlResult tl_program_tune_store(TlProgram *p, const TlTuneDesc *d,
                               const int64_t *values, double ms,
                               TlTuneEntry *out) {
  TlTuneSpace *space;
  TlTuneKey key = {0, {0}};
  bool ok = tune_begin(p, d, &space, &key, out);
  const char *path = out->path;
  if (ok && !tl_tune_space_find(space, values, NULL)) {
    TlStr c = {0};
    tl_tune_space_format(space, values, &c);
    ok = !failf(p->s, "tune: the choice %s lies outside the space",
                tl_str_cstr(&c));
    tl_str_free(&c);
  } else if (ok && !(ms > 0 && ms < INFINITY)) {
    ok = !failf(p->s, "tune: the time %g ms is not a positive number", ms);
  }
  TlErr err;
  if (ok && path && !tl_tune_cache_write(path, &key, space, values, ms, &err))
    ok = !failf(p->s, "the choice is not cached: %s", err.msg);
  tl_tune_key_free(&key);
  tl_tune_space_destroy(space);
  return ok ? TL_SUCCESS : TL_FAILURE;
}
