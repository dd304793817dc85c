/* The CUDA Driver API through dlopen: the entry points TL needs are looked
 * up once by name from libcuda.so.1, with the driver types declared here
 * (TL does not need the CUDA headers to build). Modules are cached by the
 * hash and text of their PTX. */
#define _POSIX_C_SOURCE 200809L
#include "tl/runtime.h"
#include "tl/tensor_map.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Driver types and constants (values from the CUDA Driver API). */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent, *CUstream;
typedef void *CUlinkState;
typedef unsigned long long CUdeviceptr;
enum {
  CUDA_SUCCESS = 0,
  ATTR_CC_MAJOR = 75,
  ATTR_CC_MINOR = 76,
  ATTR_SM_COUNT = 16,
  ATTR_L2_SIZE = 38,
  ATTR_SMEM_OPTIN = 97,
  FUNC_ATTR_MAX_THREADS = 0,
  FUNC_ATTR_STATIC_SMEM = 1,
  FUNC_ATTR_LOCAL_BYTES = 3,
  FUNC_ATTR_NUM_REGS = 4,
  FUNC_ATTR_MAX_DYNAMIC_SMEM = 8,
  POINTER_ATTR_DEVICE_ORDINAL = 9,
  JIT_INFO_LOG = 3,
  JIT_INFO_LOG_SIZE = 4,
  JIT_ERROR_LOG = 5,
  JIT_ERROR_LOG_SIZE = 6,
  JIT_INPUT_PTX = 1, /* CUjitInputType's CU_JIT_INPUT_PTX */
};

/* The driver's entry points: X(name in libcuda, return, parameters). */
#define CU_FUNCS(X)                                                            \
  X(cuInit, (unsigned))                                                        \
  X(cuDeviceGet, (CUdevice *, int))                                            \
  X(cuDeviceGetCount, (int *))                                                 \
  X(cuDeviceGetName, (char *, int, CUdevice))                                  \
  X(cuDeviceGetAttribute, (int *, int, CUdevice))                              \
  X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                         \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice))                                  \
  X(cuCtxSetCurrent, (CUcontext))                                              \
  X(cuCtxSynchronize, (void))                                                  \
  X(cuModuleLoadDataEx, (CUmodule *, const void *, unsigned, int *, void **))  \
  X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))               \
  X(cuModuleUnload, (CUmodule))                                                \
  X(cuFuncSetAttribute, (CUfunction, int, int))                                \
  X(cuFuncGetAttribute, (int *, int, CUfunction))                              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *, CUfunction, int,      \
                                                  size_t))                     \
  X(cuMemAlloc_v2, (CUdeviceptr *, size_t))                                    \
  X(cuMemFree_v2, (CUdeviceptr))                                               \
  X(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                      \
  X(cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                            \
  X(cuMemsetD8_v2, (CUdeviceptr, unsigned char, size_t))                       \
  X(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))           \
  X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned,       \
                     unsigned, unsigned, unsigned, CUstream, void **, void **)) \
  X(cuEventCreate, (CUevent *, unsigned))                                      \
  X(cuEventRecord, (CUevent, CUstream))                                        \
  X(cuEventSynchronize, (CUevent))                                             \
  X(cuEventElapsedTime, (float *, CUevent, CUevent))                           \
  X(cuEventDestroy_v2, (CUevent))                                              \
  X(cuGetErrorName, (CUresult, const char **))                                 \
  X(cuGetErrorString, (CUresult, const char **))

typedef struct CachedModule {
  uint64_t hash;
  char *ptx;
  CUmodule mod;
} CachedModule;

struct TlRuntime {
  TlDiagEngine *diag;
  void *lib;
#define DECL(name, params) CUresult (*name) params;
  CU_FUNCS(DECL)
#undef DECL
  CUdevice dev;
  CUcontext ctx;
  char name[256];
  unsigned sm, num_sms;
  int l2_bytes, smem_optin;
  TlDevPtr flush; /* a buffer larger than L2, written between timed runs */
  size_t flush_bytes;
  TL_VEC(CachedModule) modules;
  /* Optional: a driver without it cannot say whose memory a pointer is. */
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
  /* Optional (CUDA 12): tensor maps, tl_runtime_tensor_map. The enums
   * are passed as their int values. */
  CUresult (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *,
                                     const uint64_t *, const uint64_t *,
                                     const unsigned *, const unsigned *, int,
                                     int, int, int);
  /* Optional: the JIT linker, for tl_runtime_cubin (the CUjit_option and
   * CUjitInputType enums are passed as ints). */
  CUresult (*cuLinkCreate_v2)(unsigned, int *, void **, CUlinkState *);
  CUresult (*cuLinkAddData_v2)(CUlinkState, int, void *, size_t, const char *,
                               unsigned, int *, void **);
  CUresult (*cuLinkComplete)(CUlinkState, void **, size_t *);
  CUresult (*cuLinkDestroy)(CUlinkState);
};

static TlResult check(TlRuntime *rt, CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return TL_SUCCESS;
  const char *name = "?", *text = "?";
  if (rt->cuGetErrorName)
    rt->cuGetErrorName(r, &name);
  if (rt->cuGetErrorString)
    rt->cuGetErrorString(r, &text);
  tl_diag_emit(rt->diag, TL_DIAG_ERROR, tl_loc_unknown(), "CUDA %s failed: %s (%s)",
               what, name ? name : "?", text ? text : "?");
  return TL_FAILURE;
}

TlRuntime *tl_runtime_create(TlDiagEngine *diag, int ordinal) {
  return tl_runtime_create_with_driver(diag, ordinal, NULL);
}

TlRuntime *tl_runtime_create_with_driver(TlDiagEngine *diag, int ordinal,
                                         const char *driver) {
  if (!driver)
    driver = "libcuda.so.1";
  void *lib = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    tl_diag_emit(diag, TL_DIAG_ERROR, tl_loc_unknown(),
                 "no CUDA driver (%s could not be loaded)", driver);
    return NULL;
  }
  TlRuntime *rt = tl_xcalloc(1, sizeof *rt);
  rt->diag = diag;
  rt->lib = lib;
#define LOAD(name, params)                                                     \
  *(void **)&rt->name = dlsym(lib, #name);                                     \
  if (!rt->name) {                                                             \
    tl_diag_emit(diag, TL_DIAG_ERROR, tl_loc_unknown(),                        \
                 "the CUDA driver has no entry point %s (driver too old)",     \
                 #name);                                                       \
    goto fail;                                                                 \
  }
  CU_FUNCS(LOAD)
#undef LOAD
  *(void **)&rt->cuPointerGetAttribute = dlsym(lib, "cuPointerGetAttribute");
  *(void **)&rt->cuTensorMapEncodeTiled =
      dlsym(lib, "cuTensorMapEncodeTiled");
  *(void **)&rt->cuLinkCreate_v2 = dlsym(lib, "cuLinkCreate_v2");
  *(void **)&rt->cuLinkAddData_v2 = dlsym(lib, "cuLinkAddData_v2");
  *(void **)&rt->cuLinkComplete = dlsym(lib, "cuLinkComplete");
  *(void **)&rt->cuLinkDestroy = dlsym(lib, "cuLinkDestroy");
  if (TL_FAILED(check(rt, rt->cuInit(0), "initialization")))
    goto fail;
  int count = 0;
  if (TL_FAILED(check(rt, rt->cuDeviceGetCount(&count), "device count")))
    goto fail;
  if (ordinal < 0 || ordinal >= count) {
    tl_diag_emit(diag, TL_DIAG_ERROR, tl_loc_unknown(),
                 "no CUDA device %d (the driver sees %d)", ordinal, count);
    goto fail;
  }
  int major = 0, minor = 0, sms = 0;
  if (TL_FAILED(check(rt, rt->cuDeviceGet(&rt->dev, ordinal), "device lookup")) ||
      TL_FAILED(check(rt, rt->cuDeviceGetName(rt->name, sizeof rt->name, rt->dev),
                      "device name")) ||
      TL_FAILED(check(rt, rt->cuDeviceGetAttribute(&major, ATTR_CC_MAJOR, rt->dev),
                      "device attribute")) ||
      TL_FAILED(check(rt, rt->cuDeviceGetAttribute(&minor, ATTR_CC_MINOR, rt->dev),
                      "device attribute")) ||
      TL_FAILED(check(rt, rt->cuDeviceGetAttribute(&sms, ATTR_SM_COUNT, rt->dev),
                      "device attribute")) ||
      TL_FAILED(check(rt, rt->cuDeviceGetAttribute(&rt->l2_bytes, ATTR_L2_SIZE, rt->dev),
                      "device attribute")) ||
      TL_FAILED(check(rt, rt->cuDeviceGetAttribute(&rt->smem_optin, ATTR_SMEM_OPTIN, rt->dev),
                      "device attribute")) ||
      TL_FAILED(check(rt, rt->cuDevicePrimaryCtxRetain(&rt->ctx, rt->dev), "context")) ||
      TL_FAILED(check(rt, rt->cuCtxSetCurrent(rt->ctx), "context")))
    goto fail;
  rt->sm = (unsigned)(major * 10 + minor);
  rt->num_sms = (unsigned)sms;
  return rt;
fail:
  if (rt->ctx)
    rt->cuDevicePrimaryCtxRelease_v2(rt->dev);
  dlclose(lib);
  tl_free(rt);
  return NULL;
}

void tl_runtime_destroy(TlRuntime *rt) {
  if (!rt)
    return;
  for (size_t i = 0; i < rt->modules.len; i++) {
    rt->cuModuleUnload(rt->modules.data[i].mod);
    tl_free(rt->modules.data[i].ptx);
  }
  tl_vec_free(&rt->modules);
  if (rt->flush)
    rt->cuMemFree_v2(rt->flush);
  rt->cuDevicePrimaryCtxRelease_v2(rt->dev);
  dlclose(rt->lib);
  tl_free(rt);
}

const char *tl_runtime_device_name(const TlRuntime *rt) { return rt->name; }
unsigned tl_runtime_sm(const TlRuntime *rt) { return rt->sm; }
unsigned tl_runtime_num_sms(const TlRuntime *rt) { return rt->num_sms; }

void *tl_runtime_kernel(TlRuntime *rt, const char *ptx, size_t len,
                        const char *name) {
  uint64_t h = tl_hash_bytes(ptx, len, 0);
  CUmodule mod = NULL;
  for (size_t i = 0; i < rt->modules.len; i++)
    if (rt->modules.data[i].hash == h && strlen(rt->modules.data[i].ptx) == len &&
        !memcmp(rt->modules.data[i].ptx, ptx, len))
      mod = rt->modules.data[i].mod;
  if (!mod) {
    /* The driver wants a NUL-terminated image. */
    char *img = tl_xmalloc(len + 1);
    memcpy(img, ptx, len);
    img[len] = 0;
    /* The JIT's logs, per load (loads may run on several threads). */
    enum { ERR_LOG = 16384, INFO_LOG = 4096 };
    char *errlog = tl_xmalloc(ERR_LOG + INFO_LOG), *infolog = errlog + ERR_LOG;
    errlog[0] = infolog[0] = 0;
    int opts[4] = {JIT_ERROR_LOG, JIT_ERROR_LOG_SIZE, JIT_INFO_LOG, JIT_INFO_LOG_SIZE};
    void *vals[4] = {errlog, (void *)(uintptr_t)ERR_LOG, infolog,
                     (void *)(uintptr_t)INFO_LOG};
    CUresult r = rt->cuModuleLoadDataEx(&mod, img, 4, opts, vals);
    if (r != CUDA_SUCCESS) {
      check(rt, r, "PTX load");
      if (errlog[0])
        tl_diag_emit(rt->diag, TL_DIAG_NOTE, tl_loc_unknown(), "PTX JIT log:\n%s", errlog);
      tl_free(errlog);
      tl_free(img);
      return NULL;
    }
    tl_free(errlog);
    CachedModule cm = {h, img, mod};
    tl_vec_push(&rt->modules, cm);
  }
  CUfunction f = NULL;
  CUresult r = rt->cuModuleGetFunction(&f, mod, name);
  if (r != CUDA_SUCCESS) {
    tl_diag_emit(rt->diag, TL_DIAG_ERROR, tl_loc_unknown(),
                 "the PTX has no kernel named '%s'", name);
    return NULL;
  }
  return f;
}

bool tl_runtime_has_linker(const TlRuntime *rt) {
  return rt->cuLinkCreate_v2 && rt->cuLinkAddData_v2 && rt->cuLinkComplete &&
         rt->cuLinkDestroy;
}

/* The JIT linker over one PTX input, for the current context's device
 * (CU_JIT_TARGET_FROM_CUCONTEXT is the default), its logs in buffers that
 * must outlive the link state. The linker compiles PTX as relocatable
 * code (-rdc, as the Driver API documents): close to a module load's code
 * but not always the same (docs/tools.md, "The SASS line"). */
TlResult tl_runtime_cubin(TlRuntime *rt, const char *ptx, size_t len,
                          void **cubin, size_t *size) {
  *cubin = NULL;
  *size = 0;
  if (!tl_runtime_has_linker(rt)) {
    const char *missing = !rt->cuLinkCreate_v2    ? "cuLinkCreate_v2"
                          : !rt->cuLinkAddData_v2 ? "cuLinkAddData_v2"
                          : !rt->cuLinkComplete   ? "cuLinkComplete"
                                                  : "cuLinkDestroy";
    tl_diag_emit(rt->diag, TL_DIAG_ERROR, tl_loc_unknown(),
                 "the CUDA driver has no entry point %s (it cannot give a "
                 "cubin)",
                 missing);
    return TL_FAILURE;
  }
  if (TL_FAILED(check(rt, rt->cuCtxSetCurrent(rt->ctx), "context")))
    return TL_FAILURE;
  /* PTX goes in NUL-terminated, the NUL counted in its size. */
  char *img = tl_xmalloc(len + 1);
  if (len)
    memcpy(img, ptx, len);
  img[len] = 0;
  enum { ERR_LOG = 16384, INFO_LOG = 4096 };
  char *errlog = tl_xmalloc(ERR_LOG + INFO_LOG), *infolog = errlog + ERR_LOG;
  errlog[0] = infolog[0] = 0;
  int opts[4] = {JIT_ERROR_LOG, JIT_ERROR_LOG_SIZE, JIT_INFO_LOG,
                 JIT_INFO_LOG_SIZE};
  void *vals[4] = {errlog, (void *)(uintptr_t)ERR_LOG, infolog,
                   (void *)(uintptr_t)INFO_LOG};
  CUlinkState link = NULL;
  void *image = NULL;
  size_t bytes = 0;
  TlResult r = check(rt, rt->cuLinkCreate_v2(4, opts, vals, &link),
                     "linker creation (cuLinkCreate)");
  if (!TL_FAILED(r)) {
    r = check(rt,
              rt->cuLinkAddData_v2(link, JIT_INPUT_PTX, img, len + 1,
                                   "kernel.ptx", 0, NULL, NULL),
              "PTX link (cuLinkAddData)");
    if (!TL_FAILED(r))
      r = check(rt, rt->cuLinkComplete(link, &image, &bytes),
                "link (cuLinkComplete)");
    if (TL_FAILED(r) && errlog[0])
      tl_diag_emit(rt->diag, TL_DIAG_NOTE, tl_loc_unknown(), "PTX JIT log:\n%s",
                   errlog);
    if (!TL_FAILED(r) && (!image || !bytes)) {
      tl_diag_emit(rt->diag, TL_DIAG_ERROR, tl_loc_unknown(),
                   "the CUDA linker gave an empty cubin");
      r = TL_FAILURE;
    }
    /* The image is the link state's: copied before it goes. */
    if (!TL_FAILED(r)) {
      *cubin = memcpy(tl_xmalloc(bytes), image, bytes);
      *size = bytes;
    }
  }
  if (link)
    rt->cuLinkDestroy(link);
  tl_free(errlog);
  tl_free(img);
  return r;
}

bool tl_runtime_pointer_device(TlRuntime *rt, TlDevPtr p, int *ordinal) {
  int dev = -1;
  if (!rt->cuPointerGetAttribute ||
      rt->cuCtxSetCurrent(rt->ctx) != CUDA_SUCCESS)
    return false;
  /* An address the driver does not know (plain host memory) fails with
   * CUDA_ERROR_INVALID_VALUE: not device memory. */
  if (rt->cuPointerGetAttribute(&dev, POINTER_ATTR_DEVICE_ORDINAL, p) !=
      CUDA_SUCCESS)
    dev = -1;
  *ordinal = dev;
  return true;
}

unsigned tl_runtime_device_count(TlRuntime *rt) {
  int count = 0;
  if (rt->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 0)
    return 0;
  return (unsigned)count;
}

TlDevPtr tl_runtime_alloc(TlRuntime *rt, size_t bytes) {
  CUdeviceptr p = 0;
  if (TL_FAILED(check(rt, rt->cuMemAlloc_v2(&p, bytes ? bytes : 1), "allocation")))
    return 0;
  return p;
}

void tl_runtime_free(TlRuntime *rt, TlDevPtr p) {
  if (p)
    rt->cuMemFree_v2(p);
}

TlResult tl_runtime_upload(TlRuntime *rt, TlDevPtr dst, const void *src,
                           size_t bytes) {
  return bytes ? check(rt, rt->cuMemcpyHtoD_v2(dst, src, bytes), "copy to device")
               : TL_SUCCESS;
}

TlResult tl_runtime_download(TlRuntime *rt, void *dst, TlDevPtr src,
                             size_t bytes) {
  return bytes ? check(rt, rt->cuMemcpyDtoH_v2(dst, src, bytes), "copy to host")
               : TL_SUCCESS;
}

TlResult tl_runtime_memset(TlRuntime *rt, TlDevPtr dst, uint8_t value,
                           size_t bytes) {
  return check(rt, rt->cuMemsetD8_v2(dst, value, bytes), "memset");
}

static TlResult prepare(TlRuntime *rt, void *kernel, const TlLaunch *l) {
  if (l->smem_bytes > 48 * 1024) {
    if ((int)l->smem_bytes > rt->smem_optin) {
      tl_diag_emit(rt->diag, TL_DIAG_ERROR, tl_loc_unknown(),
                   "the kernel needs %u bytes of shared memory; the device "
                   "allows %d per block",
                   l->smem_bytes, rt->smem_optin);
      return TL_FAILURE;
    }
    return check(rt, rt->cuFuncSetAttribute(kernel, FUNC_ATTR_MAX_DYNAMIC_SMEM,
                                            (int)l->smem_bytes),
                 "shared-memory limit");
  }
  return TL_SUCCESS;
}

TlResult tl_runtime_kernel_resources(TlRuntime *rt, void *kernel,
                                     const TlLaunch *l,
                                     TlKernelResources *out) {
  int v[4];
  static const int attrs[4] = {FUNC_ATTR_NUM_REGS, FUNC_ATTR_LOCAL_BYTES,
                               FUNC_ATTR_STATIC_SMEM, FUNC_ATTR_MAX_THREADS};
  for (int i = 0; i < 4; i++)
    if (TL_FAILED(check(rt, rt->cuFuncGetAttribute(&v[i], attrs[i], kernel),
                        "kernel attribute query")))
      return TL_FAILURE;
  /* The occupancy counts the dynamic shared memory, whose limit must be
   * raised first (as for a launch). */
  int blocks = 0;
  unsigned threads = l->block[0] * l->block[1] * l->block[2];
  if (TL_FAILED(prepare(rt, kernel, l)) ||
      TL_FAILED(check(rt,
                      rt->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                          &blocks, kernel, (int)threads, l->smem_bytes),
                      "occupancy query")))
    return TL_FAILURE;
  *out = (TlKernelResources){v[0], v[1], v[2], v[3], blocks};
  return TL_SUCCESS;
}

static CUresult launch_on(TlRuntime *rt, void *kernel, const TlLaunch *l,
                          void **args, CUstream stream) {
  return rt->cuLaunchKernel(kernel, l->grid[0], l->grid[1], l->grid[2],
                            l->block[0], l->block[1], l->block[2], l->smem_bytes,
                            stream, args, NULL);
}

static CUresult launch(TlRuntime *rt, void *kernel, const TlLaunch *l,
                       void **args) {
  return launch_on(rt, kernel, l, args, NULL);
}

TlResult tl_runtime_launch(TlRuntime *rt, void *kernel, const TlLaunch *l,
                           void **args) {
  if (TL_FAILED(prepare(rt, kernel, l)) ||
      TL_FAILED(check(rt, launch(rt, kernel, l, args), "launch")))
    return TL_FAILURE;
  return check(rt, rt->cuCtxSynchronize(), "kernel execution");
}

TlResult tl_runtime_launch_async(TlRuntime *rt, void *kernel,
                                 const TlLaunch *l, void **args, void *stream) {
  /* The caller's thread may not have made any context current (a Python
   * thread, say): launches need the runtime's. */
  if (TL_FAILED(check(rt, rt->cuCtxSetCurrent(rt->ctx), "context")) ||
      TL_FAILED(prepare(rt, kernel, l)))
    return TL_FAILURE;
  return check(rt, launch_on(rt, kernel, l, args, stream), "launch");
}

TlResult tl_runtime_synchronize(TlRuntime *rt) {
  if (TL_FAILED(check(rt, rt->cuCtxSetCurrent(rt->ctx), "context")))
    return TL_FAILURE;
  return check(rt, rt->cuCtxSynchronize(), "kernel execution");
}

TlResult tl_runtime_memset_async(TlRuntime *rt, TlDevPtr dst, uint8_t value,
                                 size_t bytes, void *stream) {
  if (!bytes)
    return TL_SUCCESS;
  if (TL_FAILED(check(rt, rt->cuCtxSetCurrent(rt->ctx), "context")))
    return TL_FAILURE;
  return check(rt, rt->cuMemsetD8Async(dst, value, bytes, stream), "memset");
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

TlResult tl_runtime_time(TlRuntime *rt, void *kernel, const TlLaunch *l,
                         void **args, unsigned warmup, unsigned iters,
                         double *median_ms) {
  if (!iters)
    iters = 1;
  if (TL_FAILED(prepare(rt, kernel, l)))
    return TL_FAILURE;
  if (!rt->flush) {
    rt->flush_bytes = (size_t)(rt->l2_bytes > 0 ? rt->l2_bytes : 64 << 20) * 2;
    if (!(rt->flush = tl_runtime_alloc(rt, rt->flush_bytes)))
      return TL_FAILURE;
  }
  for (unsigned i = 0; i < warmup; i++)
    if (TL_FAILED(check(rt, launch(rt, kernel, l, args), "launch")))
      return TL_FAILURE;
  CUevent start, stop;
  if (TL_FAILED(check(rt, rt->cuEventCreate(&start, 0), "event")) ||
      TL_FAILED(check(rt, rt->cuEventCreate(&stop, 0), "event")))
    return TL_FAILURE;
  float *ms = tl_xmalloc(sizeof *ms * iters);
  TlResult res = TL_SUCCESS;
  for (unsigned i = 0; i < iters && !TL_FAILED(res); i++) {
    /* A cold L2 for every run: overwrite a buffer twice its size. */
    if (TL_FAILED(res = check(rt, rt->cuMemsetD8Async(rt->flush, (unsigned char)i,
                                                      rt->flush_bytes, NULL),
                              "L2 flush")))
      break;
    if (TL_FAILED(res = check(rt, rt->cuEventRecord(start, NULL), "event")) ||
        TL_FAILED(res = check(rt, launch(rt, kernel, l, args), "launch")) ||
        TL_FAILED(res = check(rt, rt->cuEventRecord(stop, NULL), "event")) ||
        TL_FAILED(res = check(rt, rt->cuEventSynchronize(stop), "kernel execution")) ||
        TL_FAILED(res = check(rt, rt->cuEventElapsedTime(&ms[i], start, stop), "timing")))
      break;
  }
  if (!TL_FAILED(res)) {
    qsort(ms, iters, sizeof *ms, cmp_float);
    *median_ms = iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]);
  }
  tl_free(ms);
  rt->cuEventDestroy_v2(start);
  rt->cuEventDestroy_v2(stop);
  return res;
}

/*===--- Tensor maps -------------------------------------------------------===*/

/* cuTensorMapEncodeTiled's arguments: the data type by element size
 * (UINT8, UINT16, UINT32, UINT64: a TMA copy moves bytes, so the unsigned
 * type of the size is exact for every element type), no interleave, the
 * swizzle (NONE, 32B, 64B, 128B = 0..3), no L2 promotion, zero fill. */
TlResult tl_runtime_tensor_map(TlRuntime *rt, const TlTensorMapDesc *d,
                               void *out) {
  if (!rt->cuTensorMapEncodeTiled) {
    tl_diag_emit(rt->diag, TL_DIAG_ERROR, tl_loc_unknown(),
                 "the CUDA driver has no entry point cuTensorMapEncodeTiled "
                 "(driver too old for tensor maps)");
    return TL_FAILURE;
  }
  int type = d->elem_bytes == 1   ? 0
             : d->elem_bytes == 2 ? 1
             : d->elem_bytes == 4 ? 2
                                  : 4;
  int swizzle = d->swizzle == 32   ? 1
                : d->swizzle == 64  ? 2
                : d->swizzle == 128 ? 3
                                    : 0;
  unsigned es[TL_TENSOR_MAP_MAX_RANK], box[TL_TENSOR_MAP_MAX_RANK];
  for (unsigned i = 0; i < TL_TENSOR_MAP_MAX_RANK; i++) {
    es[i] = d->elem_strides[i] ? d->elem_strides[i] : 1;
    box[i] = d->box[i];
  }
  /* The driver writes the 64-byte aligned CUtensorMap; out need not be. */
  _Alignas(64) uint8_t map[TL_TENSOR_MAP_BYTES];
  if (TL_FAILED(check(rt,
                      rt->cuTensorMapEncodeTiled(
                          map, type, d->rank, (void *)(uintptr_t)d->base,
                          d->dims, d->strides, box, es, 0, swizzle, 0, 0),
                      "tensor map encoding (cuTensorMapEncodeTiled)")))
    return TL_FAILURE;
  memcpy(out, map, sizeof map);
  return TL_SUCCESS;
}
