/* A stand-in for the CUDA driver (built as libcuda.so.1 in
 * BUILD/test/fake-cuda), so that the CPU test suite can run tl-run's GPU
 * flow: with LD_LIBRARY_PATH pointing at it, exec/runtime loads these
 * entry points instead of the driver's. Device memory is host memory,
 * every PTX image loads, and launches do nothing (kernels do not run:
 * their outputs are not computed, so tests pass --no-vm-check). Each
 * launch takes, by the events' clock,
 *
 *     threads per block / 1000 + 1 / blocks   milliseconds,
 *
 * a made-up cost that ranks launch shapes deterministically, which is what
 * tests of --tune's choice need. Every kernel uses 32 registers a thread,
 * no local or static shared memory and allows 1024 threads a block; an SM
 * holds min(2048 / threads, 32, 232448 / dynamic shared bytes) of its
 * blocks. The device reports itself as
 * "TL fake GPU" (or $TL_FAKE_CUDA_NAME), sm_90 with 132 SMs, 1 MiB of L2
 * and the H100's 232448 bytes of shared memory per block.
 *
 * Four more variables shape it for tests of the launch path: with
 * TL_FAKE_CUDA_LOG=FILE every launch, stream-ordered memset and context
 * synchronisation appends a line to FILE
 *
 *     launch grid=X,Y,Z block=X,Y,Z smem=BYTES stream=0x...|null
 *     memset bytes=N stream=...
 *     synchronize
 *
 * (a line each), TL_FAKE_CUDA_MAX_THREADS=N fails every launch of more than N
 * threads a block with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (as a kernel
 * whose registers a block exceed the SM's does; nothing is logged),
 * TL_FAKE_CUDA_DEVICES=N makes the driver see N devices (default
 * 1), and TL_FAKE_CUDA_POINTER_DEVICE=N makes it say that every address is
 * memory of device N (default 0; -1: of none) and, for N >= 1, that it
 * sees N + 1 devices at least.
 *
 * Built with TL_FAKE_CUDA_TENSOR_MAP (as BUILD/test/fake-cuda-tma/
 * libcuda.so.1) it also has cuTensorMapEncodeTiled, which the plain one
 * lacks (a driver too old for tensor maps): it writes its arguments into
 * the 128 bytes after "FAKEtm" and logs them,
 *
 *     tensormap type=1 rank=2 base=0x... dims=104,70 strides=208
 *     box=64,16 swizzle=0
 *
 * (one line; dims, strides and box innermost first, as the driver takes
 * them), and a launch's line ends in " maps=1@0x...": the parameters
 * that point at such bytes, with their base.
 *
 * Both have the JIT linker (cuLinkCreate_v2, cuLinkAddData_v2,
 * cuLinkComplete, cuLinkDestroy): linking any NUL-terminated PTX gives the
 * 9-byte cubin "FAKECUBIN", and with TL_FAKE_CUDA_LINK_ERROR=TEXT adding
 * the PTX fails with CUDA_ERROR_INVALID_PTX and TEXT in the error log.
 * Built with TL_FAKE_CUDA_NO_LINK (as BUILD/test/fake-cuda-nolink/
 * libcuda.so.1) it lacks them, as a driver that cannot give a cubin. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver's types as exec/runtime/runtime.c declares them. */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent, *CUstream;
typedef void *CUlinkState;
typedef unsigned long long CUdeviceptr;

/* The entry points are looked up by name; nothing declares them. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

static float last_ms; /* the time of the last launch */

/* One line to $TL_FAKE_CUDA_LOG, when set. */
static void log_line(const char *fmt, ...) {
  const char *path = getenv("TL_FAKE_CUDA_LOG");
  FILE *f = path && *path ? fopen(path, "a") : NULL;
  if (!f)
    return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

static const char *stream_text(CUstream s, char *buf, size_t cap) {
  if (!s)
    return "null";
  snprintf(buf, cap, "%p", s);
  return buf;
}
static char module_token, context_token;

#ifdef TL_FAKE_CUDA_TENSOR_MAP
/* The fields of the made-up encoding: "FAKEtm", then at byte 8 the
 * arguments in the driver's order. */
typedef struct FakeMap {
  char magic[8];
  int type;
  unsigned rank;
  unsigned long long base;
  unsigned long long dims[3], strides[3];
  unsigned box[3], elem_strides[3];
  int interleave, swizzle, promotion, fill;
} FakeMap;
_Static_assert(sizeof(FakeMap) <= 128, "a CUtensorMap is 128 bytes");

/* " maps=I@BASE,..." for the launch's parameters that hold one of the
 * maps below (args read up to a NULL entry, as libtl's launches end
 * them; every parameter value is 8 bytes at least, or the map's 128). */
static void fake_maps(void **args, char *out, size_t cap) {
  size_t at = 0;
  for (unsigned i = 0; args && args[i] && at + 40 < cap; i++) {
    unsigned long long base;
    if (memcmp(args[i], "FAKEtm", 6))
      continue;
    memcpy(&base, (const char *)args[i] + offsetof(FakeMap, base), sizeof base);
    at += (size_t)snprintf(out + at, cap - at, "%s%u@%#llx",
                           at ? "," : " maps=", i, base);
  }
}
#endif

CUresult cuInit(unsigned flags) { return 0; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return 0;
}
CUresult cuDeviceGetCount(int *count) {
  const char *n = getenv("TL_FAKE_CUDA_DEVICES");
  const char *p = getenv("TL_FAKE_CUDA_POINTER_DEVICE");
  *count = n && *n ? atoi(n) : 1;
  /* A pointer said to be device d's needs a driver that sees d. */
  if (p && *p && atoi(p) >= *count)
    *count = atoi(p) + 1;
  return 0;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  const char *n = getenv("TL_FAKE_CUDA_NAME");
  snprintf(name, (size_t)len, "%s", n && *n ? n : "TL fake GPU");
  return 0;
}
/* Attribute numbers as exec/runtime/runtime.c names them. */
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  switch (attr) {
  case 75: /* compute capability major */
    *v = 9;
    break;
  case 16: /* multiprocessors */
    *v = 132;
    break;
  case 38: /* L2 bytes */
    *v = 1 << 20;
    break;
  case 97: /* opt-in shared memory per block */
    *v = 232448;
    break;
  default:
    *v = 0;
  }
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  *c = &context_token;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return 0; }
CUresult cuCtxSetCurrent(CUcontext c) { return 0; }
CUresult cuCtxSynchronize(void) {
  log_line("synchronize");
  return 0;
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n,
                            int *options, void **values) {
  *m = &module_token;
  return 0;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  *f = m;
  return 0;
}
CUresult cuModuleUnload(CUmodule m) { return 0; }
CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) { return 0; }
CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) {
  /* registers (4), local bytes (3), static shared bytes (1), max threads (0) */
  *v = attr == 4 ? 32 : attr == 0 ? 1024 : 0;
  return 0;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f,
                                                     int threads, size_t smem) {
  int b = threads > 0 ? 2048 / threads : 0;
  if (b > 32)
    b = 32;
  if (smem && (size_t)b > 232448 / smem)
    b = (int)(232448 / smem);
  *blocks = b;
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  /* 256-byte aligned, as the driver's allocations are (kernels' `assume`
   * promises about buffer addresses are checked against them). */
  *p = (CUdeviceptr)aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *p ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void *)p);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  memcpy((void *)dst, src, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  memcpy(dst, (const void *)src, n);
  return 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n) {
  memset((void *)dst, v, n);
  return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n,
                         CUstream s) {
  char b[32];
  log_line("memset bytes=%zu stream=%s", n, stream_text(s, b, sizeof b));
  memset((void *)dst, v, n);
  return 0;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        CUstream s, void **args, void **extra) {
  const char *cap = getenv("TL_FAKE_CUDA_MAX_THREADS");
  if (cap && *cap && bx * by * bz > (unsigned)atoi(cap))
    return 701; /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */
  last_ms = (float)(bx * by * bz) / 1000.0f + 1.0f / (float)(gx * gy * gz);
  char b[32], maps[256] = "";
#ifdef TL_FAKE_CUDA_TENSOR_MAP
  fake_maps(args, maps, sizeof maps);
#endif
  log_line("launch grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%s%s", gx, gy,
           gz, bx, by, bz, smem, stream_text(s, b, sizeof b), maps);
  return 0;
}
CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
  const char *n = getenv("TL_FAKE_CUDA_POINTER_DEVICE");
  int dev = n && *n ? atoi(n) : 0;
  if (attr != 9 || dev < 0) /* the device ordinal, or not device memory */
    return 1;               /* CUDA_ERROR_INVALID_VALUE */
  *(int *)data = dev;
  return 0;
}
CUresult cuEventCreate(CUevent *e, unsigned flags) {
  *e = malloc(1);
  return 0;
}
CUresult cuEventRecord(CUevent e, CUstream s) { return 0; }
CUresult cuEventSynchronize(CUevent e) { return 0; }
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent stop) {
  *ms = last_ms;
  return 0;
}
CUresult cuEventDestroy_v2(CUevent e) {
  free(e);
  return 0;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == 2     ? "CUDA_ERROR_OUT_OF_MEMORY"
       : r == 218 ? "CUDA_ERROR_INVALID_PTX"
       : r == 701 ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
                  : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == 2     ? "out of memory"
       : r == 218 ? "a PTX JIT compilation failed"
       : r == 701 ? "too many resources requested for launch"
                  : "unknown error";
  return 0;
}

#ifndef TL_FAKE_CUDA_NO_LINK
/* One link at a time: its state is the error log's buffer and size (the
 * options CU_JIT_ERROR_LOG_BUFFER = 5 and its size = 6). */
static struct {
  char *errlog;
  size_t errlog_size;
} fake_link;

CUresult cuLinkCreate_v2(unsigned n, int *options, void **values,
                         CUlinkState *state) {
  fake_link.errlog = NULL;
  fake_link.errlog_size = 0;
  for (unsigned i = 0; i < n; i++) {
    if (options[i] == 5)
      fake_link.errlog = values[i];
    if (options[i] == 6)
      fake_link.errlog_size = (size_t)(uintptr_t)values[i];
  }
  *state = &fake_link;
  return 0;
}
CUresult cuLinkAddData_v2(CUlinkState state, int type, void *data, size_t size,
                          const char *name, unsigned n, int *options,
                          void **values) {
  const char *fail = getenv("TL_FAKE_CUDA_LINK_ERROR");
  /* PTX (CU_JIT_INPUT_PTX = 1), its NUL counted in the size. */
  if (state != &fake_link || type != 1 || !size ||
      ((const char *)data)[size - 1])
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  if (fail && *fail) {
    if (fake_link.errlog && fake_link.errlog_size)
      snprintf(fake_link.errlog, fake_link.errlog_size, "%s", fail);
    return 218; /* CUDA_ERROR_INVALID_PTX */
  }
  return 0;
}
CUresult cuLinkComplete(CUlinkState state, void **cubin, size_t *size) {
  static char image[] = "FAKECUBIN";
  *cubin = image;
  *size = sizeof image - 1;
  return state == &fake_link ? 0 : 400; /* CUDA_ERROR_INVALID_HANDLE */
}
CUresult cuLinkDestroy(CUlinkState state) { return 0; }
#endif

#ifdef TL_FAKE_CUDA_TENSOR_MAP
/* The argument types exactly as exec/runtime/runtime.c declares the entry
 * point (UBSan checks the type of a call through a function pointer). */
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *base,
                                const uint64_t *dims, const uint64_t *strides,
                                const unsigned *box,
                                const unsigned *elem_strides, int interleave,
                                int swizzle, int promotion, int fill) {
  if (rank < 1 || rank > 3 || (unsigned long long)base % 16)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  FakeMap m;
  memset(&m, 0, sizeof m);
  memcpy(m.magic, "FAKEtm", 6);
  m.type = type;
  m.rank = rank;
  m.base = (unsigned long long)base;
  for (unsigned i = 0; i < rank; i++) {
    m.dims[i] = dims[i];
    m.strides[i] = i + 1 < rank ? strides[i] : 0;
    m.box[i] = box[i];
    m.elem_strides[i] = elem_strides[i];
  }
  m.interleave = interleave;
  m.swizzle = swizzle;
  m.promotion = promotion;
  m.fill = fill;
  memset(map, 0, 128);
  memcpy(map, &m, sizeof m);
  char text[256];
  int at =
      snprintf(text, sizeof text,
               "tensormap type=%d rank=%u base=%p dims=", type, rank, base);
  for (unsigned i = 0; i < rank; i++)
    at += snprintf(text + at, sizeof text - (size_t)at, "%s%llu", i ? "," : "",
                   (unsigned long long)dims[i]);
  at += snprintf(text + at, sizeof text - (size_t)at, " strides=");
  for (unsigned i = 0; i + 1 < rank; i++)
    at += snprintf(text + at, sizeof text - (size_t)at, "%s%llu", i ? "," : "",
                   (unsigned long long)strides[i]);
  at += snprintf(text + at, sizeof text - (size_t)at, " box=");
  for (unsigned i = 0; i < rank; i++)
    at += snprintf(text + at, sizeof text - (size_t)at, "%s%u", i ? "," : "",
                   box[i]);
  log_line("%s swizzle=%d", text, swizzle);
  return 0;
}
#endif
