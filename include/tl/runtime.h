/* The CUDA runtime of TL: the CUDA Driver API, loaded at run time with
 * dlopen("libcuda.so.1"), so that TL builds and runs its CPU tests on
 * machines without CUDA and says plainly when there is no driver or GPU.
 *
 * Errors are reported through the diagnostic engine given at creation
 * ("no CUDA driver (libcuda.so.1 not found)", the driver's error name and
 * string, or the PTX JIT's error log) and the functions fail. */
#ifndef TL_RUNTIME_H
#define TL_RUNTIME_H

#include "tl/diag.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TlRuntime TlRuntime;
typedef uint64_t TlDevPtr; /* a device address; 0 is never valid */

/* Opens the driver and device `ordinal` (its primary context). NULL with a
 * diagnostic when there is no driver or device. Caller owns the runtime. */
TlRuntime *tl_runtime_create(TlDiagEngine *diag, int ordinal);
/* The same with the driver library named: a path or a name dlopen
 * searches for; NULL is "libcuda.so.1". */
TlRuntime *tl_runtime_create_with_driver(TlDiagEngine *diag, int ordinal,
                                         const char *driver);
void tl_runtime_destroy(TlRuntime *rt);
/* The device's name ("NVIDIA H100 80GB HBM3"), SM number (90) and number of
 * multiprocessors. */
const char *tl_runtime_device_name(const TlRuntime *rt);
unsigned tl_runtime_sm(const TlRuntime *rt);
unsigned tl_runtime_num_sms(const TlRuntime *rt);

/* Loads PTX (JIT-compiled by the driver) and returns a kernel handle; the
 * module is cached by the PTX text, so loading the same PTX again is
 * free. NULL with the JIT log on failure. The handle lives as long as the
 * runtime. */
void *tl_runtime_kernel(TlRuntime *rt, const char *ptx, size_t len,
                        const char *name);

/* The driver's machine code for PTX: the JIT linker (cuLinkCreate_v2,
 * cuLinkAddData_v2 with CU_JIT_INPUT_PTX, cuLinkComplete) compiles it for
 * the runtime's device, and *cubin gets a copy of the cubin, *size its
 * bytes: the caller owns it (tl_free). The linker compiles PTX as
 * relocatable code, so the cubin can differ a little from what
 * tl_runtime_kernel loads (its registers, a few instructions). On failure
 * *cubin is NULL, *size 0, and a diagnostic says why: the driver lacks
 * the entry points (tl_runtime_has_linker), or the driver's error with
 * the JIT's log as a note. */
TlResult tl_runtime_cubin(TlRuntime *rt, const char *ptx, size_t len,
                          void **cubin, size_t *size);
/* Whether the driver has the linker's entry points, which are optional
 * (looked up when the runtime is created): without them tl_runtime_cubin
 * fails. Reports nothing. */
bool tl_runtime_has_linker(const TlRuntime *rt);

/* Whose memory p is: *ordinal gets the device's ordinal, or -1 when the
 * driver does not know p as device memory (plain host memory). false,
 * *ordinal untouched, when the driver cannot say (it lacks
 * cuPointerGetAttribute). Reports nothing. */
bool tl_runtime_pointer_device(TlRuntime *rt, TlDevPtr p, int *ordinal);
/* How many CUDA devices the driver sees now (one cheap driver call); 0
 * when it cannot say. With one, no memory can be another device's. */
unsigned tl_runtime_device_count(TlRuntime *rt);

TlDevPtr tl_runtime_alloc(TlRuntime *rt, size_t bytes);
void tl_runtime_free(TlRuntime *rt, TlDevPtr p);
TlResult tl_runtime_upload(TlRuntime *rt, TlDevPtr dst, const void *src,
                           size_t bytes);
TlResult tl_runtime_download(TlRuntime *rt, void *dst, TlDevPtr src,
                             size_t bytes);
TlResult tl_runtime_memset(TlRuntime *rt, TlDevPtr dst, uint8_t value,
                           size_t bytes);

/* Fills out[0..128) with the driver's tensor map for d
 * (cuTensorMapEncodeTiled; d->base is a device address): the value of a
 * !simt.tensormap kernel parameter, passed by value at the launch. Check d
 * with tl_tensor_map_check first for TL's message; the driver's error
 * (CUDA_ERROR_INVALID_VALUE) otherwise. Fails with a diagnostic when the
 * driver lacks the entry point (drivers before CUDA 12). */
struct TlTensorMapDesc;
TlResult tl_runtime_tensor_map(TlRuntime *rt,
                               const struct TlTensorMapDesc *d, void *out);

typedef struct TlLaunch {
  unsigned grid[3], block[3];
  unsigned smem_bytes; /* dynamic shared memory; above 48 KB the kernel's
                          limit is raised first */
} TlLaunch;

/* What the driver's compilation of a kernel uses, and so how many of its
 * blocks an SM holds at once for the launch shape l (threads and dynamic
 * shared memory): the register count that decides occupancy is the JIT's,
 * which PTX-level changes far from a kernel's hot path can move. */
typedef struct TlKernelResources {
  int registers;     /* a thread */
  int local_bytes;   /* local memory a thread: spills and stack */
  int static_smem;   /* static shared memory a block, bytes */
  int max_threads;   /* the most threads a block may have */
  int blocks_per_sm; /* resident at once for l; 0: l cannot run */
} TlKernelResources;
TlResult tl_runtime_kernel_resources(TlRuntime *rt, void *kernel,
                                     const TlLaunch *l,
                                     TlKernelResources *out);

/* Launches a kernel with args[i] pointing at the i-th parameter's value and
 * waits for it. */
TlResult tl_runtime_launch(TlRuntime *rt, void *kernel, const TlLaunch *l,
                           void **args);
/* Launches a kernel on `stream` (a CUstream, NULL for the legacy default
 * stream) and returns without waiting: the launch is ordered after the
 * work already on the stream, and errors of the kernel's execution show
 * up in later calls on it. Makes the runtime's context current on the
 * calling thread first. The values args points at are copied by the
 * launch, so they may be freed on return. */
TlResult tl_runtime_launch_async(TlRuntime *rt, void *kernel, const TlLaunch *l,
                                 void **args, void *stream);
/* Waits for all the work on the device (cuCtxSynchronize): the errors of
 * earlier asynchronous launches surface here. */
TlResult tl_runtime_synchronize(TlRuntime *rt);
/* Sets `bytes` bytes at dst to value, ordered on `stream` as above. */
TlResult tl_runtime_memset_async(TlRuntime *rt, TlDevPtr dst, uint8_t value,
                                 size_t bytes, void *stream);
/* Times a kernel: `warmup` launches, then `iters` launches each preceded by
 * a write of a buffer larger than the L2 cache (so every run starts cold)
 * and measured with events; *median_ms gets the median. */
TlResult tl_runtime_time(TlRuntime *rt, void *kernel, const TlLaunch *l,
                         void **args, unsigned warmup, unsigned iters,
                         double *median_ms);

#ifdef __cplusplus
}
#endif
#endif
