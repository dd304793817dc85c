/* The TL runtime API: compile a tl.kernel from its text and template
 * values, then run it on the CPU VM over host buffers or launch it on a
 * CUDA stream over device buffers. It is the interface of the shared
 * library libtl, which the Python package python/tl drives through
 * ctypes; tl-run compiles through it too (docs/runtime.md).
 *
 * Objects. A TlSession holds the messages of the last failed call, the
 * CUDA device (opened on first use through the driver, loaded with
 * dlopen: the library loads and its CPU paths run where there is no
 * CUDA) and the directory of the PTX cache. A TlProgram is one instance
 * of one kernel: its source text and defines, parsed and verified at
 * creation; PTX for a target is compiled on demand and kept. The caller
 * owns both (`_create` / `_destroy`, which accept NULL) and destroys a
 * session's programs before the session. Strings a function returns are
 * owned by the object they came from. Nothing here is thread-safe: use a
 * session (and its programs) from one thread at a time.
 *
 * Errors. A fallible function returns TL_FAILURE or NULL, and
 * tl_session_error then holds every diagnostic of the call, located
 * errors with their source line and caret, one after another; nothing is
 * printed. The text is kept until the next fallible call on the session
 * or its programs. User mistakes (a bad define, a kernel that does not
 * parse, the wrong number, kind or element type of arguments, no CUDA
 * driver or device) are such failures, never crashes.
 *
 * The PTX cache. PTX is kept on disk under DIR/ptx/<hash>.txt, DIR the
 * tune cache's directory (tl_tune_cache_dir: $TL_CACHE_DIR, else
 * $XDG_CACHE_HOME/tl, else ~/.cache/tl) unless the session sets another.
 * An entry follows the tune cache's rules (tune.h): its first line is
 * "tl ptx cache 2", then its checksum (over every other byte), the key's
 * hash and ingredients (the source's length and hash, the kernel, the
 * defines sorted by name, the target and the compiler's version), which
 * must equal the program's line for line, then the lowered kernel's shared
 * memory and workspace and the PTX with its length. An entry that is not a
 * regular file, unreadable, truncated, corrupt, does not match its
 * checksum or was made for other ingredients is not used: the PTX is
 * compiled again (TL_PTX_REBUILT, with the reason) and the entry rewritten
 * (through a temporary file renamed over it).
 *
 * The tune cache. tl_program_tune_lookup and tl_program_tune_store read
 * and write the entries of tl-run --tune (tune.h, docs/tools.md), keyed
 * by tl_tune_launch_key, which tl-run uses too: one cache for both. */
#ifndef TL_PROGRAM_H
#define TL_PROGRAM_H

#include "tl/arch.h"
#include "tl/ir.h"
#include "tl/runtime.h"
#include "tl/tensor_map.h"
#include "tl/tune.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TlSession TlSession;
typedef struct TlProgram TlProgram;

/*===------------------------------------------------------------------===*
 * Sessions
 *===------------------------------------------------------------------===*/

/* A session with no device open and the default cache directory. Never
 * fails. */
TlSession *tl_session_create(void);
void tl_session_destroy(TlSession *s);

/* The diagnostics of the last failed call, "" when it succeeded. */
const char *tl_session_error(const TlSession *s);

/* The PTX cache's directory: NULL for the default (see above), "" for no
 * cache. The text is copied. */
void tl_session_set_cache_dir(TlSession *s, const char *dir);
/* The CUDA driver library to load (a path, or a name dlopen searches
 * for); NULL, the default, is "libcuda.so.1". Applies to the next
 * tl_session_open_device. The text is copied. */
void tl_session_set_driver(TlSession *s, const char *driver);

/* Whether launches check each buffer against the global views of it
 * (docs/runtime.md, "Extent checks"); on, the default, until turned off
 * here, for code that has measured the cost. */
void tl_session_set_check_extents(TlSession *s, bool on);

/* Opens CUDA device `ordinal` (its primary context, which CUDA's runtime
 * and PyTorch share). Fails with no driver, no such device, or a device
 * already open (a session drives one). tl_program_launch opens device 0
 * when none is open. */
TlResult tl_session_open_device(TlSession *s, int ordinal);
/* Waits until the open device has run all the work given to it (all
 * streams): the errors of earlier asynchronous launches, which the
 * launches could not report, are reported here. Fails when no device is
 * open. */
TlResult tl_session_synchronize(TlSession *s);
/* The open device's ordinal, name ("NVIDIA H100 80GB HBM3"), SM number
 * (90) and number of SMs (132); -1, NULL, 0 and 0 when none is open. */
int tl_session_device_ordinal(const TlSession *s);
const char *tl_session_device_name(const TlSession *s);
unsigned tl_session_device_sm(const TlSession *s);
unsigned tl_session_device_sms(const TlSession *s);

/*===------------------------------------------------------------------===*
 * Programs
 *===------------------------------------------------------------------===*/

typedef struct TlProgramDesc {
  const char *path; /* the source file, read when text is NULL; with text,
                       the name diagnostics give it (NULL: "<text>") */
  const char *text; /* the source, len bytes; NULL: read path */
  size_t len;
  const char *const *defines; /* "NAME=VALUE", as tl-run's -D: an integer
                                 or a scalar type name ("WT=u4") */
  unsigned num_defines;
  const char *kernel; /* the tl.kernel to run; NULL: the only one */
} TlProgramDesc;

/* Reads, parses and verifies the instance the defines give. NULL on an
 * unreadable file, a malformed define, a define that matches no template
 * parameter, a parse or verifier error, or no such kernel. */
TlProgram *tl_program_create(TlSession *s, const TlProgramDesc *d);
void tl_program_destroy(TlProgram *p);

/* The kernel's name (without '@'). */
const char *tl_program_name(const TlProgram *p);

typedef enum TlArgKind {
  TL_ARG_INT,        /* an integer (or bool) scalar */
  TL_ARG_FLOAT,      /* a float scalar */
  TL_ARG_BUFFER,     /* a pointer to elements of dtype */
  TL_ARG_TENSOR_MAP, /* a !tl.tensormap parameter: the tensor the map is
                        made over (its dtype: the map's elements); the
                        program makes the map (TlArg below) */
} TlArgKind;

typedef struct TlParamInfo {
  const char *name;  /* the parameter's name */
  TlArgKind kind;    /* its kind */
  const char *dtype; /* the element type of a buffer, the type of a scalar
                        ("f16", "u4", "i32"; tl_dtype_name) */
  unsigned bits;     /* the width of one element */
  bool packed;       /* a buffer whose elements are not bytes a NumPy
                        array holds one by one (bool, sub-byte types,
                        bf16, small floats): it may be passed as "u8"
                        bytes */
} TlParamInfo;

/* The instance's value of integer template parameter `name`; false when
 * the kernel has no integer template parameter of that name. */
bool tl_program_template_value(const TlProgram *p, const char *name,
                               int64_t *value);

unsigned tl_program_num_params(const TlProgram *p);
/* Describes parameter i < num_params. */
void tl_program_param(const TlProgram *p, unsigned i, TlParamInfo *out);

/* One argument, in parameter order. An integer parameter takes an INT;
 * a float parameter an INT or a FLOAT; a pointer parameter a BUFFER of
 * `bytes` bytes whose elements are of `dtype` (a name as above; NULL:
 * not checked), which must be the parameter's element type, or "u8" for
 * a packed one (its bytes, elements stored compactly). A buffer is host
 * memory at `host` for tl_program_run_vm and device memory at `device`
 * for tl_program_launch; the caller owns it and keeps it alive for the
 * run (for a launch, until the stream has run it).
 *
 * A !tl.tensormap parameter takes a TENSOR_MAP: the tensor the map is
 * made over, its memory given as a buffer's (`host` or `device`, `bytes`,
 * `dtype` checked against the map's element type), with `rank` (the
 * type's), `shape` (elements, outermost first, each 1 to 2^32) and
 * `strides` (elements between consecutive indices of each dimension,
 * outermost first; all 0: contiguous, row major; else the innermost is 1
 * and the others multiples of 16 bytes below 2^40). The tensor's last
 * element must lie within `bytes`. The box and swizzle are the
 * parameter's type's. The program makes the map: TL's encoding over
 * `host` for the VM (which sees the same memory as a buffer argument at
 * the same `host`), the driver's over `device` (16-byte aligned) for a
 * launch, encoded again only when the description changes. The tensor is
 * usually the memory of the kernel's own pointer parameter, passed to
 * both. The fields after `dtype` are read for a TENSOR_MAP only, so a
 * zero-initialised argument of another kind needs none of them. */
typedef struct TlArg {
  TlArgKind kind;
  int64_t i;
  double f;
  void *host;
  uint64_t device;
  size_t bytes;
  const char *dtype;
  unsigned rank;
  int64_t shape[TL_TENSOR_MAP_MAX_RANK];
  int64_t strides[TL_TENSOR_MAP_MAX_RANK];
} TlArg;

/* Runs the kernel over its whole grid on the block-level VM (docs/vm.md),
 * reading and writing the host buffers in place (a tensor map's tensor
 * too, through the buffer at the same `host`). Fails for arguments that
 * do not fit the parameters (a tensor no map can be made over included),
 * or with the VM's located error (an access out of a buffer's bounds, a
 * broken `assume`, more than 10^9 ops). */
TlResult tl_program_run_vm(TlProgram *p, const TlArg *args, unsigned nargs);

typedef enum TlPtxOrigin {
  TL_PTX_COMPILED, /* compiled, with no cache entry to read */
  TL_PTX_CACHED,   /* read from a cache entry */
  TL_PTX_REBUILT,  /* compiled over an entry that could not be trusted */
} TlPtxOrigin;

typedef struct TlPtxInfo {
  const char *ptx; /* the PTX text, owned by the program */
  size_t len;
  const char *target;     /* the target's name ("sm_90a") */
  unsigned smem_bytes;    /* dynamic shared memory of each block */
  size_t workspace_bytes; /* the global workspace a launch zeroes */
  TlPtxOrigin origin;
  TlErr why; /* TL_PTX_REBUILT: why the entry was not used */
} TlPtxInfo;

/* The kernel's PTX for the target that runs on SM `sm` (90), or for the
 * open device's when sm is 0 (which fails when none is open). Read from
 * the cache or compiled (and cached); kept in the program, so a second
 * call is free. Fails for an SM no target runs on, or with the lowering's
 * diagnostics. A cache that cannot be written is not an error. */
TlResult tl_program_ptx(TlProgram *p, unsigned sm, TlPtxInfo *out);

typedef struct TlLaunchDims {
  unsigned grid[3];
  unsigned threads;    /* per block (block x; y and z are 1) */
  unsigned smem_bytes; /* dynamic shared memory */
} TlLaunchDims;

/* The launch of the arguments: the grid and threads from the kernel's
 * grid and threads expressions over the integer arguments, and the
 * shared memory of the target of SM `sm` (0: the open device's). Fails
 * as tl_program_run_vm's argument checks do, or for a grid outside
 * CUDA's limits. */
TlResult tl_program_launch_dims(TlProgram *p, const TlArg *args, unsigned nargs,
                                unsigned sm, TlLaunchDims *out);

/* Launches the kernel on the open device (device 0 is opened when none
 * is) on `stream`, a CUstream (NULL: the legacy default stream), and
 * returns without waiting. Before the launch the kernel's global
 * workspace, if it has one, is zeroed on the same stream; the program
 * owns it, so launches of one program must not overlap on different
 * streams. The tensor maps are the driver's encoding, kept in the program
 * and made again only for a description that differs from the last
 * launch's (the launch copies them: the next may change them). Fails for
 * arguments that do not fit (a NULL device address included, a buffer or
 * tensor the driver says is another device's memory, a tensor no map can
 * be made over) or break the kernel's `assume`, for no driver or device
 * (or one with no cuTensorMapEncodeTiled, for a kernel with tensor maps),
 * and with the driver's error.
 *
 * Extent checks: unless the session turned them off, each buffer's
 * `bytes` must hold every tl.view_global of its parameter that the launch
 * reaches, as the kernel's scalar arguments size it
 * (tl_view_extents_create, tl/analysis.h): "argument 1 (kc) of
 * @decode_attn: the view kc[nbh, len, 64] needs 1048576 bytes, the buffer
 * has 524288". The same check covers tl_program_launch_values,
 * tl_program_time and tl_program_resources. */
TlResult tl_program_launch(TlProgram *p, const TlArg *args, unsigned nargs,
                           void *stream);

/* tl_program_launch for callers that have checked the arguments' kinds
 * and element types against the parameters themselves (python/tl does,
 * once per kind of argument): words[i] is buffer parameter i's device
 * address or integer parameter i's value, reals[i] float parameter i's
 * value, sizes[i] buffer parameter i's bytes (other entries are ignored;
 * sizes may be NULL only when the session's extent checks are off).
 * Everything else is checked as tl_program_launch checks it: the count, a
 * NULL address, another device's memory, the extents, `assume`, the
 * grid. A launch costs no allocation, and
 * the grid of the integer arguments of the launch before is reused. A
 * kernel with a tensor-map parameter is refused (a word does not describe
 * a tensor): launch it with tl_program_launch. */
TlResult tl_program_launch_values(TlProgram *p, const int64_t *words,
                                  const double *reals, const int64_t *sizes,
                                  unsigned nargs, void *stream);

/* Times the kernel as tl-run --bench does, on the default stream, and
 * waits: `warmup` launches, then `iters` (0 counts as 1) launches each
 * after a write of a buffer twice the size of the L2 cache (every run
 * starts cold), timed with events; *median_ms gets their median. The
 * workspace is zeroed once, before the first launch. Fails as
 * tl_program_launch does. */
TlResult tl_program_time(TlProgram *p, const TlArg *args, unsigned nargs,
                         unsigned warmup, unsigned iters, double *median_ms);

/* What the driver's compilation of the kernel uses for a launch over these
 * arguments (TlKernelResources, tl/runtime.h: registers and local memory
 * a thread, static shared memory, the most threads a block may have, and
 * how many blocks of the launch's shape an SM holds at once), as tl-run
 * --bench prints it. Compiles and loads the kernel as a launch does,
 * launches nothing; fails as tl_program_launch does. */
TlResult tl_program_resources(TlProgram *p, const TlArg *args, unsigned nargs,
                              TlKernelResources *out);

/*===------------------------------------------------------------------===*
 * Tuning: the tune cache of tune.h, shared with tl-run --tune
 *===------------------------------------------------------------------===*/

/* The most dimensions of a shape. */
#define TL_MAX_RANK 8

/* The shape of a buffer argument: dims[0..rank) elements. Rank 0 stands
 * for the buffer's elements in one dimension (bytes * 8 / bits). */
typedef struct TlShape {
  unsigned rank;
  int64_t dims[TL_MAX_RANK];
} TlShape;

/* One argument as a tune key records it, in parameter order: the
 * parameter's name and kind; an INT parameter's value i, a FLOAT one's f;
 * a buffer's or a tensor map's element type (its parameter's) and shape
 * (a map's: its tensor's). */
typedef struct TlTuneKeyArg {
  const char *name;
  TlArgKind kind;
  int64_t i;
  double f;
  const char *dtype;
  const int64_t *shape;
  unsigned rank;
} TlTuneKeyArg;

/* Starts k (zero-initialised, or freed) as the key of a tuning run, the
 * one key of tl-run --tune and tl_program_tune_lookup: the source text,
 * then the lines "kernel: NAME", "define: NAME=VALUE" for each define
 * (sorted by name, the last of a name winning), the space's "tune:" lines
 * (tune.h), "arg: NAME = f16[16x1024]" for a buffer or a tensor map (its
 * tensor), "arg: NAME = 16" for
 * an integer and "arg: NAME = 0.5" (%.17g) for a float, "device: NAME"
 * and "compiler: VERSION" (tl_target_version). */
void tl_tune_launch_key(TlTuneKey *k, const char *text, size_t len,
                        const char *kernel, const char *const *defines,
                        unsigned num_defines, const TlTuneSpace *space,
                        const TlTuneKeyArg *args, unsigned nargs,
                        const char *device);

/* A tuning run of a program's kernel: the tuned parameters, each
 * "NAME=V1,V2,..." as tl-run's --tune takes them, in order, and the
 * launch's arguments as tl_program_launch takes them (checked the same
 * way; their addresses are not used) with the buffers' shapes (NULL:
 * every buffer in one dimension; a tensor map's shape is its argument's,
 * its entry here unused). */
typedef struct TlTuneDesc {
  const char *const *space;
  unsigned num_space;
  const TlArg *args;
  const TlShape *shapes;
  unsigned nargs;
} TlTuneDesc;

/* What the cache holds for a tuning run. */
typedef struct TlTuneEntry {
  TlTuneCacheStatus status; /* MISS, HIT or INVALID (tune.h) */
  double ms;                /* HIT: the choice's time */
  TlErr why;                /* INVALID: why the entry is not trusted */
  const char *path;         /* the entry's file, owned by the program until
                               its next tune call; NULL with no cache
                               directory (the status is then MISS) */
} TlTuneEntry;

/* Looks up the choice cached for tuning the program's kernel as d says
 * on the open device, under the session's cache directory
 * (tl_session_set_cache_dir; the entries in its tune/ folder). The key is
 * tl_tune_launch_key's, with the program's text, kernel and defines (but
 * those of the tuned names: the program may be any instance of the
 * space), d's space and arguments, and the open device's name; a choice
 * tl-run --tune cached for the same launch is found. On a HIT values (one
 * per tuned parameter) gets the choice. Fails for a malformed space,
 * arguments that do not fit, or no open device; an entry that cannot be
 * trusted is INVALID, not a failure. */
TlResult tl_program_tune_lookup(TlProgram *p, const TlTuneDesc *d,
                                int64_t *values, TlTuneEntry *out);
/* Writes values (one per tuned parameter, a candidate of the space) and
 * their time as the choice for tuning as d says (the key as above), over
 * any entry there was. With no cache directory nothing is written and
 * out->path is NULL. Fails as tl_program_tune_lookup does, for values
 * outside the space or a time that is not positive, and when the entry
 * cannot be written. */
TlResult tl_program_tune_store(TlProgram *p, const TlTuneDesc *d,
                               const int64_t *values, double ms,
                               TlTuneEntry *out);

/*===------------------------------------------------------------------===*
 * The compile step (for tools that manage their own context)
 *===------------------------------------------------------------------===*/

/* Parses text (name for diagnostics) in ctx with its current defines,
 * lowers it to simt for arch and compiles it to PTX, appended to *ptx.
 * *smem_bytes and *workspace_bytes get what the lowered kernel
 * `kernel_name` plans (0 when it plans none). Fails after diagnostics to
 * ctx. */
TlResult tl_compile_ptx(TlContext *ctx, const char *name, const char *text,
                        size_t len, const char *kernel_name, const TlArch *arch,
                        TlStr *ptx, unsigned *smem_bytes,
                        int64_t *workspace_bytes);

/* The value of a scalar kernel parameter of type t as a launch passes it
 * (cuLaunchKernel reads the parameter's width from the pointer it gets):
 * an integer parameter takes i (or f truncated, when is_float), wrapped
 * to its width; a float one f (or i converted). false for a type with no
 * such C form (f16 and the small floats). */
typedef union TlScalarArg {
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
} TlScalarArg;
bool tl_scalar_arg(const TlType *t, bool is_float, int64_t i, double f,
                   TlScalarArg *out);

#ifdef __cplusplus
}
#endif
#endif
