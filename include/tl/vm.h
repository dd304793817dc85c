/* The CPU virtual machine: the reference executor of the tl dialect.
 *
 * A TlVm runs one tl.kernel over its whole grid, one thread block after
 * another, each tl op acting for the whole block (docs/vm.md gives the
 * semantics of every op; that page is the reference semantics of the
 * dialect). Arithmetic is exact or correctly rounded; shared-memory use is
 * checked (bounds, uninitialised reads, pending copy_async reads, data races
 * between threads without tl.synchronize, use after free, leaks) and global
 * accesses are bounds checked against the view and the bound host buffer.
 * Every problem is reported as a located error through the context's
 * diagnostic engine, followed by a note at the kernel naming the block, and
 * the run fails.
 *
 * This header also holds the NumPy .npy reader and writer the tools and
 * tests use to exchange arrays with the VM. */
#ifndef TL_VM_H
#define TL_VM_H

#include "tl/dtype.h"
#include "tl/ir.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===------------------------------------------------------------------===*
 * Kernel arguments
 *===------------------------------------------------------------------===*/

typedef enum TlVmArgKind {
  TL_VM_ARG_INT,    /* an integer (or i1) parameter, or a float one */
  TL_VM_ARG_FLOAT,  /* a float parameter */
  TL_VM_ARG_BUFFER, /* a !tl.ptr<T> parameter */
  TL_VM_ARG_TENSOR_MAP, /* a !tl.tensormap parameter */
} TlVmArgKind;

/* One argument, in parameter order. Integer values are truncated to the
 * parameter's width (two's complement); a float parameter takes the value
 * rounded to its type (lib/dtype encode); a buffer is host memory the VM
 * reads and writes in place: `size` bytes at `data` holding elements of
 * `dtype` stored compactly (element i at bit i * bits, lib/dtype packing).
 * The buffer stays owned by the caller and must outlive the run. */
typedef struct TlVmArg {
  TlVmArgKind kind;
  int64_t i;
  double f;
  void *data;
  size_t size;
  TlDType dtype;
  /* A tensor map: data, size and dtype are the buffer it maps (the same
   * memory as that buffer's own argument, if the kernel has one), and map
   * is the 128 bytes of TL's encoding (tl/tensor_map.h), whose base is
   * the byte offset of the tensor's first element in data (normally 0).
   * Owned by the caller; NULL for other kinds. */
  const void *map;
} TlVmArg;

static inline TlVmArg tl_vm_arg_int(int64_t v) {
  TlVmArg a = {TL_VM_ARG_INT, v, 0, NULL, 0, {0, 0, 0, 0}, NULL};
  return a;
}
static inline TlVmArg tl_vm_arg_float(double v) {
  TlVmArg a = {TL_VM_ARG_FLOAT, 0, v, NULL, 0, {0, 0, 0, 0}, NULL};
  return a;
}
static inline TlVmArg tl_vm_arg_buffer(void *data, size_t size, TlDType dt) {
  TlVmArg a = {TL_VM_ARG_BUFFER, 0, 0, data, size, dt, NULL};
  return a;
}
/* A tensor map over the buffer data (size bytes of dt): map holds TL's
 * encoding, base 0 for a tensor starting at data. */
static inline TlVmArg tl_vm_arg_tensor_map(const void *map, void *data,
                                           size_t size, TlDType dt) {
  TlVmArg a = {TL_VM_ARG_TENSOR_MAP, 0, 0, data, size, dt, map};
  return a;
}

/* The storage type of a scalar IR type: bool, uN/iN of widths 1..8, 16,
 * 32, 64, and every float. Returns false for other integer widths (i12),
 * which have no memory format. */
bool tl_vm_dtype_of(const TlType *t, TlDType *out);

/* The kernel named `name` in module m, or the only tl.kernel when name is
 * NULL. NULL after an error diagnostic (located at the module) when there
 * is no such kernel, or when name is NULL and there are several. */
TlOp *tl_vm_find_kernel(TlModule *m, const char *name);

/* A kernel's parameters: count, name (interned, owned by the context),
 * type, and the index of a name (-1 when none). kernel must be a verified
 * tl.kernel. */
unsigned tl_vm_num_params(TlOp *kernel);
const char *tl_vm_param_name(TlOp *kernel, unsigned i);
TlType *tl_vm_param_type(TlOp *kernel, unsigned i);
int tl_vm_param_index(TlOp *kernel, const char *name);

/*===------------------------------------------------------------------===*
 * The machine
 *===------------------------------------------------------------------===*/

typedef struct TlVm TlVm;

/* Creates a VM reporting through ctx's diagnostic engine. Caller owns it;
 * the context must outlive it. The VM keeps a compiled form of each kernel
 * it runs, keyed by the op: destroy the VM before the modules it ran (or
 * use one VM per module). Never fails. */
TlVm *tl_vm_create(TlContext *ctx);
void tl_vm_destroy(TlVm *vm); /* NULL is a no-op */

/* Where tl.print writes (default stdout; NULL silences it). The stream
 * stays owned by the caller. */
void tl_vm_set_print_stream(TlVm *vm, FILE *out);

/* A budget of executed ops for each run, summed over all blocks, plus one
 * for each block run (0, the default: none). A run that exceeds it stops
 * with an error at the innermost loop then running, or at the kernel after
 * the block that spent it, so that neither a loop that never ends nor a
 * grid of billions of blocks hangs. */
void tl_vm_set_op_limit(TlVm *vm, int64_t max_ops);

/* The most bytes the VM gives one tile (a register or shared tile, 8
 * bytes an element) or one workspace (tl.alloc_global) of a run, unless
 * set otherwise (4 GiB); tl-run holds its buffers to the same limit
 * (--max-bytes). A kernel over the limit is an error at the op, before
 * anything is allocated, instead of an allocation that aborts the
 * process. 0 restores the default. */
#define TL_VM_DEFAULT_MAX_BYTES ((int64_t)1 << 32)
void tl_vm_set_memory_limit(TlVm *vm, int64_t max_bytes);

/* Counters of the last run (for tests and tools). */
typedef struct TlVmStats {
  int64_t blocks;  /* thread blocks run */
  int64_t ops;     /* ops executed, summed over blocks */
  int64_t grid[3]; /* the grid evaluated from the arguments */
  int64_t threads; /* threads per block */
} TlVmStats;
TlVmStats tl_vm_stats(const TlVm *vm);

/* Runs a verified tl.kernel over its whole grid with args[0..nargs), one
 * per parameter. The grid and block size come from tl_kernel_launch_dims
 * over the integer arguments. Returns TL_SUCCESS, or TL_FAILURE after an
 * error diagnostic (wrong arguments, a launch-size error, or the first
 * runtime error, located at the op that found it, plus a note naming the
 * block). Global memory written before an error stays written. */
TlResult tl_vm_run(TlVm *vm, TlOp *kernel, unsigned nargs, const TlVmArg *args);
/* tl_vm_find_kernel then tl_vm_run. */
TlResult tl_vm_run_named(TlVm *vm, TlModule *m, const char *name,
                         unsigned nargs, const TlVmArg *args);

/*===------------------------------------------------------------------===*
 * NumPy .npy files (format versions 1.0, 2.0 and 3.0 read; 1.0 written)
 *
 * Little-endian (or byte-order free) numeric arrays in C order with
 * descr '<f2' '<f4' '<f8' '|i1' '<i2' '<i4' '<i8' '|u1' '<u2' '<u4' '<u8'
 * '|b1' ('<' or '|' accepted where the width is one byte). The element
 * type maps to f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool. Types with
 * no NumPy equivalent (bf16, sub-byte ints, small floats) are exchanged as
 * their packed bytes in a u1 array (tl-run does this; see docs/tools.md).
 *===------------------------------------------------------------------===*/

#define TL_NPY_MAX_RANK 8

typedef struct TlNpy {
  TlDType dtype; /* element type (see above) */
  int rank;      /* 0..TL_NPY_MAX_RANK */
  int64_t shape[TL_NPY_MAX_RANK];
  void *data;  /* heap (tl_free), C order; bool
                  arrays bit-packed as VM buffers */
  size_t size; /* bytes of data */
} TlNpy;

/* Reads an .npy file; false with a message in err (the file cannot be
 * read, malformed header, unsupported dtype or order, truncated data).
 * On success the caller frees out->data with tl_npy_free. */
bool tl_npy_read(const char *path, TlNpy *out, TlErr *err);
/* Parses an .npy image already in memory (same rules). */
bool tl_npy_parse(const void *bytes, size_t len, TlNpy *out, TlErr *err);
/* Writes an array (version 1.0 header). dtype must be one of the twelve
 * NumPy types above; size must be the product of the shape times the
 * element size. False with a message on an I/O error or a bad array. */
bool tl_npy_write(const char *path, const TlNpy *a, TlErr *err);
void tl_npy_free(TlNpy *a);
/* The NumPy descr of a dtype ("<f2"), or NULL when it has none. */
const char *tl_npy_descr(TlDType t);

#ifdef __cplusplus
}
#endif
#endif
