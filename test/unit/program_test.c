/* Unit tests for the runtime API (exec/program): kernels compiled from a
 * file and from text and run on the VM against plain C sums, the
 * parameters' descriptions, every argument and source error, the PTX
 * cache in a scratch directory (a miss, a hit, and entries that are
 * corrupt, truncated, edited in place, a FIFO or made for other
 * ingredients, rebuilt), and the
 * launch path through the stand-in driver of test/gpu/fake_cuda.c
 * (asynchronous, on the given stream, the workspace zeroed on it) and
 * through a driver that does not exist, and the tune cache's calls; a
 * kernel with a tensor-map parameter on the VM against a reference in C,
 * every argument a map cannot be made from, and its launches through the
 * stand-in driver built with cuTensorMapEncodeTiled.
 *
 *   unit_program SCRATCH-DIR SOURCE-ROOT FAKE-LIBCUDA FAKE-LIBCUDA-TMA */
#define _POSIX_C_SOURCE 200809L
#include "tl/program.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *scratch, *srcroot, *fake_driver, *fake_tma_driver;

/* Whether the session's error text contains `want`; prints it when not. */
static bool error_has(TlSession *s, const char *want) {
  const char *e = tl_session_error(s);
  if (strstr(e, want))
    return true;
  fprintf(stderr, "expected an error with '%s', got:\n%s\n", want, e);
  return false;
}

static char *path_of(const char *dir, const char *rel) {
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

static TlProgram *vector_add(TlSession *s, const char *block) {
  char *path = path_of(srcroot, "kernels/vector_add.tl");
  const char *defs[1] = {block};
  TlProgramDesc d = {path, NULL, 0, defs, block ? 1 : 0, NULL};
  TlProgram *p = tl_program_create(s, &d);
  free(path);
  return p;
}

/* splitmix64 */
static uint64_t next_rand(uint64_t *st) {
  uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static TlArg buffer(void *host, size_t bytes, const char *dtype) {
  TlArg a = {
      .kind = TL_ARG_BUFFER, .host = host, .bytes = bytes, .dtype = dtype};
  return a;
}
static TlArg int_arg(int64_t v) {
  TlArg a = {.kind = TL_ARG_INT, .i = v};
  return a;
}
static TlArg float_arg(double v) {
  TlArg a = {.kind = TL_ARG_FLOAT, .f = v};
  return a;
}
/* A tensor map over the rows x cols tensor at host (row major: no
 * strides given). */
static TlArg tensor_map(void *host, size_t bytes, const char *dtype,
                        int64_t rows, int64_t cols) {
  TlArg a = {.kind = TL_ARG_TENSOR_MAP,
             .host = host,
             .bytes = bytes,
             .dtype = dtype,
             .rank = 2,
             .shape = {rows, cols}};
  return a;
}

static void test_vm(void) {
  TlSession *s = tl_session_create();
  TlProgram *p = vector_add(s, "BLOCK=256");
  CHECK(p != NULL);
  if (!p) {
    fprintf(stderr, "%s", tl_session_error(s));
    tl_session_destroy(s);
    return;
  }
  CHECK_EQ_STR(tl_program_name(p), "vector_add");
  CHECK_EQ_INT(tl_program_num_params(p), 4);
  int64_t block = 0;
  CHECK(tl_program_template_value(p, "BLOCK", &block));
  CHECK_EQ_INT(block, 256);
  CHECK(!tl_program_template_value(p, "N", &block));
  TlParamInfo pi;
  tl_program_param(p, 0, &pi);
  CHECK_EQ_STR(pi.name, "x");
  CHECK_EQ_INT(pi.kind, TL_ARG_BUFFER);
  CHECK_EQ_STR(pi.dtype, "f32");
  CHECK_EQ_INT(pi.bits, 32);
  CHECK(!pi.packed);
  tl_program_param(p, 3, &pi);
  CHECK_EQ_STR(pi.name, "n");
  CHECK_EQ_INT(pi.kind, TL_ARG_INT);
  CHECK_EQ_STR(pi.dtype, "i32");

  /* n = 1000: three full blocks of 256 and a ragged one. z is x + y
   * (f32 addition in C is the same correctly rounded sum); the element
   * after n, outside the kernel's view, stays as it was. */
  enum { N = 1000 };
  float x[N], y[N], z[N + 1];
  uint64_t st = 42;
  for (int i = 0; i < N; i++) {
    x[i] = (float)((double)(next_rand(&st) >> 11) * 0x1p-52 * 2 - 1);
    y[i] = (float)((double)(next_rand(&st) >> 11) * 0x1p-52 * 2 - 1);
    z[i] = 7;
  }
  z[N] = 7;
  TlArg args[4] = {buffer(x, sizeof x, "f32"), buffer(y, sizeof y, "f32"),
                   buffer(z, sizeof z, "f32"), int_arg(N)};
  CHECK(!TL_FAILED(tl_program_run_vm(p, args, 4)));
  CHECK_EQ_STR(tl_session_error(s), "");
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += z[i] != x[i] + y[i];
  CHECK_EQ_INT(bad, 0);
  CHECK(z[N] == 7);

  /* A buffer too small for n: the VM's bounds check, located. */
  args[2].bytes = 100 * sizeof(float);
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 4)));
  CHECK(error_has(s, "vector_add.tl:"));
  args[2].bytes = sizeof z;

  /* Arguments that do not fit the parameters. */
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 3)));
  CHECK(error_has(s, "@vector_add takes 4 arguments, not 3"));
  TlArg wrong[4] = {args[0], args[1], args[2], float_arg(1000)};
  CHECK(TL_FAILED(tl_program_run_vm(p, wrong, 4)));
  CHECK(error_has(s, "argument 3 (n) of @vector_add: expected an integer "
                     "scalar (i32), got a float"));
  wrong[3] = buffer(z, sizeof z, "f32");
  CHECK(TL_FAILED(tl_program_run_vm(p, wrong, 4)));
  CHECK(error_has(s, "expected an integer scalar (i32), got a buffer"));
  wrong[3] = args[3];
  wrong[1] = int_arg(3);
  CHECK(TL_FAILED(tl_program_run_vm(p, wrong, 4)));
  CHECK(error_has(s, "argument 1 (y) of @vector_add: expected a buffer of "
                     "f32, got an integer"));
  wrong[1] = buffer(y, sizeof y, "f16");
  CHECK(TL_FAILED(tl_program_run_vm(p, wrong, 4)));
  CHECK(error_has(s, "argument 1 (y) of @vector_add: expected a buffer of "
                     "f32, got one of f16"));
  wrong[1] = buffer(NULL, sizeof y, "f32");
  CHECK(TL_FAILED(tl_program_run_vm(p, wrong, 4)));
  CHECK(error_has(s, "the buffer has no host address"));
  /* A success clears the error text. */
  CHECK(!TL_FAILED(tl_program_run_vm(p, args, 4)));
  CHECK_EQ_STR(tl_session_error(s), "");
  tl_program_destroy(p);

  /* From text, with a float scalar and a packed (u4) buffer. */
  const char *text =
      "#l = #tl.layout<spatial(32).local(4)>\n"
      "tl.kernel @scale(%x: !tl.ptr<f32>, %q: !tl.ptr<u4>, %a: f32)\n"
      "    grid(1) threads(32) {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %gx = tl.view_global %x[128] : !tl.global<128xf32>\n"
      "  %t = tl.load_global %gx[%c0] : !tl.global<128xf32> -> "
      "!tl.reg<128xf32, #l>\n"
      "  %s = tl.broadcast %a : f32 -> !tl.reg<128xf32, #l>\n"
      "  %u = tl.mul %t, %s : !tl.reg<128xf32, #l>\n"
      "  tl.store_global %u, %gx[%c0] : !tl.reg<128xf32, #l>, "
      "!tl.global<128xf32>\n"
      "}\n";
  TlProgramDesc d = {"scale.tl", text, strlen(text), NULL, 0, NULL};
  p = tl_program_create(s, &d);
  CHECK(p != NULL);
  if (p) {
    tl_program_param(p, 1, &pi);
    CHECK_EQ_STR(pi.dtype, "u4");
    CHECK(pi.packed);
    tl_program_param(p, 2, &pi);
    CHECK_EQ_INT(pi.kind, TL_ARG_FLOAT);
    float v[128];
    uint8_t q[64] = {0};
    for (int i = 0; i < 128; i++)
      v[i] = (float)i - 64;
    /* u8 bytes for the packed u4 buffer; an integer for the float. */
    TlArg a2[3] = {buffer(v, sizeof v, "f32"), buffer(q, sizeof q, "u8"),
                   int_arg(3)};
    CHECK(!TL_FAILED(tl_program_run_vm(p, a2, 3)));
    bad = 0;
    for (int i = 0; i < 128; i++)
      bad += v[i] != ((float)i - 64) * 3;
    CHECK_EQ_INT(bad, 0);
    a2[2] = float_arg(0.5);
    CHECK(!TL_FAILED(tl_program_run_vm(p, a2, 3)));
    CHECK(v[1] == -63 * 1.5f);
    a2[1].dtype = "i8";
    CHECK(TL_FAILED(tl_program_run_vm(p, a2, 3)));
    CHECK(error_has(s, "expected a buffer of u4 (or its packed bytes as u8), "
                       "got one of i8"));
  } else {
    fprintf(stderr, "%s", tl_session_error(s));
  }
  tl_program_destroy(p);
  tl_session_destroy(s);
}

static void test_source_errors(void) {
  TlSession *s = tl_session_create();
  CHECK(vector_add(s, "BLOCK=6") == NULL);
  CHECK(error_has(s, "vector_add.tl:"));
  CHECK(error_has(s, "BLOCK"));
  CHECK(vector_add(s, "BLOCK") == NULL);
  CHECK(error_has(s, "define 'BLOCK': "));
  CHECK(vector_add(s, "BLOK=256") == NULL);
  CHECK(error_has(s, "define 'BLOK' matches no template parameter"));
  TlProgramDesc d = {"/nonexistent/k.tl", NULL, 0, NULL, 0, NULL};
  CHECK(tl_program_create(s, &d) == NULL);
  CHECK(error_has(s, "cannot open '/nonexistent/k.tl'"));
  /* A parse error: located, with the line and a caret. */
  const char *bad = "tl.kernel @k() grid(1) threads(32) {\n  %x = nope\n}\n";
  TlProgramDesc t = {"bad.tl", bad, strlen(bad), NULL, 0, NULL};
  CHECK(tl_program_create(s, &t) == NULL);
  CHECK(error_has(s, "bad.tl:2:"));
  CHECK(error_has(s, "^"));
  char *path = path_of(srcroot, "kernels/vector_add.tl");
  TlProgramDesc k = {path, NULL, 0, NULL, 0, "vector_sub"};
  CHECK(tl_program_create(s, &k) == NULL);
  CHECK(error_has(s, "vector_sub"));
  free(path);
  TlProgramDesc none = {NULL, NULL, 0, NULL, 0, NULL};
  CHECK(tl_program_create(s, &none) == NULL);
  CHECK(error_has(s, "no kernel source"));
  tl_session_destroy(s);
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = malloc(1 << 24);
  *len = fread(buf, 1, 1 << 24, f);
  fclose(f);
  return buf;
}

static void write_all(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return;
  fwrite(text, 1, len, f);
  fclose(f);
}

/* The one entry file of a fresh cache directory. */
static char *entry_path(const char *dir, const TlPtxInfo *info,
                        const char *block) {
  (void)info;
  (void)block;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "ls %s/ptx/*.txt", dir);
  FILE *ls = popen(cmd, "r");
  char line[1024] = "";
  if (ls) {
    if (!fgets(line, sizeof line, ls))
      line[0] = 0;
    pclose(ls);
  }
  line[strcspn(line, "\n")] = 0;
  return line[0] ? strdup(line) : NULL;
}

static TlPtxOrigin compile_origin(const char *dir, const char *block,
                                  TlPtxInfo *info, char *why, size_t cap) {
  TlSession *s = tl_session_create();
  tl_session_set_cache_dir(s, dir);
  TlProgram *p = vector_add(s, block);
  TlPtxOrigin o = (TlPtxOrigin)-1;
  if (p && !TL_FAILED(tl_program_ptx(p, 90, info))) {
    o = info->origin;
    snprintf(why, cap, "%s", info->why.msg);
    /* The PTX outlives this program: keep a copy in the caller's. */
    info->ptx = strdup(info->ptx);
  } else {
    fprintf(stderr, "%s", tl_session_error(s));
  }
  tl_program_destroy(p);
  tl_session_destroy(s);
  return o;
}

static void test_cache(void) {
  char *dir = path_of(scratch, "cache");
  TlPtxInfo a, b;
  char why[256];
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &a, why, sizeof why),
               TL_PTX_COMPILED);
  CHECK(strstr(a.ptx, ".entry vector_add") != NULL);
  CHECK_EQ_STR(a.target, "sm_90a");
  CHECK_EQ_INT(a.smem_bytes, 0);
  char *entry = entry_path(dir, &a, "BLOCK=256");
  CHECK(entry != NULL);
  if (!entry)
    return;
  size_t len = 0;
  char *text = read_all(entry, &len);
  CHECK(text && len > 100 &&
        !memcmp(text, "tl ptx cache 2\nchecksum: fnv1a 0x", 33));
  CHECK(strstr(text, "\ndefine: BLOCK=256\ntarget: sm_90a\ncompiler: TL ") !=
        NULL);

  /* A second session reads it: the same PTX. */
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_CACHED);
  CHECK_EQ_STR(a.ptx, b.ptx);
  free((char *)b.ptx);

  /* Corrupt: not an entry. Rebuilt, and the entry rewritten. */
  write_all(entry, "garbage\n", 8);
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_REBUILT);
  CHECK(strstr(why, "not a ptx cache entry") != NULL);
  CHECK_EQ_STR(a.ptx, b.ptx);
  free((char *)b.ptx);
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_CACHED);
  free((char *)b.ptx);

  /* Truncated anywhere: in the ingredients, in the counts, in the PTX. */
  size_t cuts[4] = {10, 60, len / 2, len - 1};
  for (int i = 0; i < 4; i++) {
    write_all(entry, text, cuts[i]);
    CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
                 TL_PTX_REBUILT);
    CHECK(strstr(why, "do not match its checksum") != NULL ||
          strstr(why, "not a ptx") != NULL);
    CHECK_EQ_STR(a.ptx, b.ptx);
    free((char *)b.ptx);
  }
  /* Text after the PTX is no more trusted than text missing from it. */
  char *longer = malloc(len + 2);
  memcpy(longer, text, len);
  memcpy(longer + len, "x\n", 2);
  write_all(entry, longer, len + 2);
  free(longer);
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_REBUILT);
  free((char *)b.ptx);

  /* Edits that keep the length and every line's form: an instruction of
   * the PTX, the launch's shared memory and workspace sizes. The
   * checksum refuses each, and the sizes are the compiler's again. */
  const char *edits[][2] = {{"ld.global.b32", "ld.shared.b32"},
                            {"\nsmem: 0\n", "\nsmem: 1\n"},
                            {"\nworkspace: 0\n", "\nworkspace: 9\n"}};
  for (int i = 0; i < 3; i++) {
    char *copy = malloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = 0;
    char *at = strstr(copy, edits[i][0]);
    CHECK(at != NULL);
    if (at)
      memcpy(at, edits[i][1], strlen(edits[i][1]));
    write_all(entry, copy, len);
    free(copy);
    CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
                 TL_PTX_REBUILT);
    CHECK(strstr(why, "do not match its checksum") != NULL);
    CHECK_EQ_STR(a.ptx, b.ptx);
    CHECK(b.smem_bytes == 0 && b.workspace_bytes == 0);
    free((char *)b.ptx);
  }
  /* A FIFO in the entry's place is not opened for a read that waits for a
   * writer (this test would hang); the rebuilt entry replaces it. */
  CHECK(unlink(entry) == 0 && mkfifo(entry, 0666) == 0);
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_REBUILT);
  CHECK(strstr(why, "not a regular file (a FIFO)") != NULL);
  free((char *)b.ptx);
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_CACHED);
  free((char *)b.ptx);

  /* Foreign: the entry of another instance (BLOCK=512) in this one's
   * place. Its ingredients differ: rebuilt, never used. */
  char *dir2 = path_of(scratch, "cache2");
  TlPtxInfo c;
  CHECK_EQ_INT(compile_origin(dir2, "BLOCK=512", &c, why, sizeof why),
               TL_PTX_COMPILED);
  CHECK(strcmp(a.ptx, c.ptx) != 0);
  char *entry2 = entry_path(dir2, &c, "BLOCK=512");
  size_t len2 = 0;
  char *text2 = entry2 ? read_all(entry2, &len2) : NULL;
  CHECK(text2 != NULL);
  if (text2)
    write_all(entry, text2, len2);
  CHECK_EQ_INT(compile_origin(dir, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_REBUILT);
  CHECK(strstr(why, "made for other ingredients") != NULL);
  CHECK_EQ_STR(a.ptx, b.ptx);
  free((char *)b.ptx);
  free((char *)c.ptx);

  /* A cache that cannot be written (its directory is a file) is no
   * error: the PTX is compiled, and compiled again next time. */
  char *file = path_of(scratch, "not-a-dir");
  write_all(file, "x", 1);
  CHECK_EQ_INT(compile_origin(file, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_COMPILED);
  CHECK_EQ_STR(a.ptx, b.ptx);
  free((char *)b.ptx);
  CHECK_EQ_INT(compile_origin(file, "BLOCK=256", &b, why, sizeof why),
               TL_PTX_COMPILED);
  free((char *)b.ptx);
  free(file);

  /* No cache: compiled each time, nothing written. */
  TlSession *s = tl_session_create();
  tl_session_set_cache_dir(s, "");
  TlProgram *p = vector_add(s, "BLOCK=128");
  TlPtxInfo d;
  CHECK(p && !TL_FAILED(tl_program_ptx(p, 90, &d)) &&
        d.origin == TL_PTX_COMPILED);
  /* A target no device runs; no device open for sm 0. */
  CHECK(TL_FAILED(tl_program_ptx(p, 50, &d)));
  CHECK(error_has(s, "no target runs on sm_50"));
  CHECK(TL_FAILED(tl_program_ptx(p, 0, &d)));
  CHECK(error_has(s, "no CUDA device is open"));
  /* The launch of n = 1000 at BLOCK=128: 8 blocks of 32 threads. */
  TlArg args[4] = {buffer(NULL, 0, "f32"), buffer(NULL, 0, "f32"),
                   buffer(NULL, 0, "f32"), int_arg(1000)};
  TlLaunchDims dims;
  CHECK(!TL_FAILED(tl_program_launch_dims(p, args, 4, 90, &dims)));
  CHECK_EQ_INT(dims.grid[0], 8);
  CHECK_EQ_INT(dims.grid[1], 1);
  CHECK_EQ_INT(dims.threads, 32);
  CHECK_EQ_INT(dims.smem_bytes, 0);
  args[3] = int_arg(0);
  CHECK(TL_FAILED(tl_program_launch_dims(p, args, 4, 90, &dims)));
  CHECK(error_has(s, "cannot launch @vector_add"));
  tl_program_destroy(p);
  tl_session_destroy(s);

  free((char *)a.ptx);
  free(text);
  free(text2);
  free(entry);
  free(entry2);
  free(dir);
  free(dir2);
}

static void test_driver(void) {
  /* No driver: a path that does not exist. */
  TlSession *s = tl_session_create();
  tl_session_set_cache_dir(s, "");
  tl_session_set_driver(s, "/nonexistent/libcuda.so.1");
  CHECK(TL_FAILED(tl_session_open_device(s, 0)));
  CHECK(error_has(s, "no CUDA driver (/nonexistent/libcuda.so.1 could not be "
                     "loaded)"));
  CHECK_EQ_INT(tl_session_device_ordinal(s), -1);
  CHECK(tl_session_device_name(s) == NULL);
  TlProgram *p = vector_add(s, NULL);
  float host[4];
  TlArg args[4] = {buffer(NULL, 16, "f32"), buffer(NULL, 16, "f32"),
                   buffer(NULL, 16, "f32"), int_arg(4)};
  for (int i = 0; i < 3; i++)
    args[i].device = (uint64_t)(uintptr_t)host;
  CHECK(TL_FAILED(tl_program_launch(p, args, 4, NULL)));
  CHECK(error_has(s, "no CUDA driver"));
  CHECK(TL_FAILED(tl_session_synchronize(s)));
  CHECK(error_has(s, "no CUDA device is open"));
  tl_program_destroy(p);
  tl_session_destroy(s);

  /* The stand-in driver with no devices. */
  setenv("TL_FAKE_CUDA_DEVICES", "0", 1);
  s = tl_session_create();
  tl_session_set_driver(s, fake_driver);
  CHECK(TL_FAILED(tl_session_open_device(s, 0)));
  CHECK(error_has(s, "no CUDA device 0 (the driver sees 0)"));
  tl_session_destroy(s);
  unsetenv("TL_FAKE_CUDA_DEVICES");

  /* The stand-in driver: device memory is host memory and launches do
   * nothing but log themselves. */
  char *log = path_of(scratch, "launch.log");
  remove(log);
  setenv("TL_FAKE_CUDA_LOG", log, 1);
  s = tl_session_create();
  tl_session_set_cache_dir(s, "");
  tl_session_set_driver(s, fake_driver);
  /* Two devices, so that launches ask which device a buffer is on (the
   * session counts the devices once). */
  setenv("TL_FAKE_CUDA_DEVICES", "2", 1);
  p = vector_add(s, "BLOCK=256");
  float *dev = aligned_alloc(256, 16384);
  for (int i = 0; i < 3; i++) {
    args[i].device = (uint64_t)(uintptr_t)(dev + 1024 * i);
    args[i].host = NULL;
    args[i].bytes = 4096;
  }
  args[3] = int_arg(600);
  void *stream = (void *)(uintptr_t)0x5eed00;
  CHECK(!TL_FAILED(tl_program_launch(p, args, 4, stream)));
  CHECK_EQ_STR(tl_session_error(s), "");
  CHECK_EQ_INT(tl_session_device_ordinal(s), 0);
  CHECK_EQ_STR(tl_session_device_name(s), "TL fake GPU");
  CHECK_EQ_INT(tl_session_device_sm(s), 90);
  CHECK_EQ_INT(tl_session_device_sms(s), 132);
  CHECK(TL_FAILED(tl_session_open_device(s, 0)));
  CHECK(error_has(s, "CUDA device 0 is already open"));
  /* On the device, a buffer needs a device address. */
  args[1].device = 0;
  CHECK(TL_FAILED(tl_program_launch(p, args, 4, stream)));
  CHECK(error_has(s, "argument 1 (y) of @vector_add: the buffer has no "
                     "device address"));
  args[1].device = (uint64_t)(uintptr_t)(dev + 1024);
  /* A buffer smaller than its view is refused before anything reaches
   * the driver (the log below has no launch for it); then a good launch
   * still goes through, and one with the checks turned off. */
  args[1].bytes = 2396;
  CHECK(TL_FAILED(tl_program_launch(p, args, 4, stream)));
  CHECK(error_has(s, "argument 1 (y) of @vector_add: the view y[n] needs 2400 "
                     "bytes, the buffer has 2396"));
  args[1].bytes = 2400;
  CHECK(!TL_FAILED(tl_program_launch(p, args, 4, stream)));
  args[1].bytes = 4096;
  args[3] = int_arg(1025);
  CHECK(TL_FAILED(tl_program_launch(p, args, 4, stream)));
  CHECK(error_has(s, "argument 0 (x) of @vector_add: the view x[n] needs 4100 "
                     "bytes, the buffer has 4096"));
  args[3] = int_arg(600);
  /* Memory of another device. */
  setenv("TL_FAKE_CUDA_POINTER_DEVICE", "1", 1);
  CHECK(TL_FAILED(tl_program_launch(p, args, 4, stream)));
  CHECK(error_has(s, "argument 0 (x) of @vector_add: the buffer is memory of "
                     "CUDA device 1, not of device 0 (the session's)"));
  /* Memory the driver does not know passes (it may be mapped host
   * memory): the launch is logged below. */
  setenv("TL_FAKE_CUDA_POINTER_DEVICE", "-1", 1);
  CHECK(!TL_FAILED(tl_program_launch(p, args, 4, stream)));
  unsetenv("TL_FAKE_CUDA_POINTER_DEVICE");
  unsetenv("TL_FAKE_CUDA_DEVICES");
  CHECK(TL_FAILED(tl_program_launch(p, args, 3, stream)));
  CHECK(error_has(s, "takes 4 arguments, not 3"));
  /* The same launches from values (python/tl's path): buffers by
   * address, the grid of each launch's own n. */
  int64_t words[4], sizes[4] = {4096, 4096, 4096, 0};
  double reals[4] = {0, 0, 0, 0};
  for (int i = 0; i < 3; i++)
    words[i] = (int64_t)(uintptr_t)(dev + 1024 * i);
  words[3] = 600;
  CHECK(!TL_FAILED(
      tl_program_launch_values(p, words, reals, sizes, 4, stream)));
  words[3] = 1000;
  CHECK(!TL_FAILED(
      tl_program_launch_values(p, words, reals, sizes, 4, stream)));
  CHECK(TL_FAILED(tl_program_launch_values(p, words, reals, sizes, 3, stream)));
  CHECK(error_has(s, "@vector_add takes 4 arguments, not 3"));
  /* The extents, from the sizes array, after the grid of the same n was
   * kept: a launch that only grows n past the buffers is refused. */
  words[3] = 1025;
  CHECK(TL_FAILED(tl_program_launch_values(p, words, reals, sizes, 4, stream)));
  CHECK(error_has(s, "argument 0 (x) of @vector_add: the view x[n] needs 4100 "
                     "bytes, the buffer has 4096"));
  CHECK(TL_FAILED(tl_program_launch_values(p, words, reals, NULL, 4, stream)));
  CHECK(error_has(s, "@vector_add: the launch gives no buffer sizes"));
  /* Off by the session's explicit flag: no sizes needed, none checked. */
  tl_session_set_check_extents(s, false);
  CHECK(!TL_FAILED(
      tl_program_launch_values(p, words, reals, NULL, 4, stream)));
  tl_session_set_check_extents(s, true);
  words[3] = 1000;
  CHECK(!TL_FAILED(
      tl_program_launch_values(p, words, reals, sizes, 4, stream)));
  words[1] = 0;
  CHECK(TL_FAILED(tl_program_launch_values(p, words, reals, sizes, 4, stream)));
  CHECK(error_has(s, "argument 1 (y) of @vector_add: the buffer has no "
                     "device address"));
  words[1] = words[0];
  words[3] = (int64_t)1 << 40;
  CHECK(TL_FAILED(tl_program_launch_values(p, words, reals, sizes, 4, stream)));
  CHECK(error_has(s, "cannot launch @vector_add"));
  CHECK(!TL_FAILED(tl_session_synchronize(s)));
  tl_program_destroy(p);

  /* A kernel with a global workspace: zeroed on the stream, then
   * launched on it. */
  char *ws_path = path_of(srcroot, "test/passes/Inputs/workspace.tl");
  TlProgramDesc d = {ws_path, NULL, 0, NULL, 0, NULL};
  p = tl_program_create(s, &d);
  CHECK(p != NULL);
  TlArg wa[2] = {buffer(NULL, 1024, "f32"), buffer(NULL, 1024, "f32")};
  wa[0].device = (uint64_t)(uintptr_t)dev;
  wa[1].device = (uint64_t)(uintptr_t)(dev + 256);
  TlPtxInfo info;
  CHECK(p && !TL_FAILED(tl_program_ptx(p, 0, &info)));
  CHECK(info.workspace_bytes >= 2048);
  CHECK(p && !TL_FAILED(tl_program_launch(p, wa, 2, NULL)));
  tl_program_destroy(p);
  tl_session_destroy(s);
  free(ws_path);
  free(dev);
  unsetenv("TL_FAKE_CUDA_LOG");

  size_t len = 0;
  char *text = read_all(log, &len);
  CHECK(text != NULL);
  if (text) {
    text[len] = 0;
    char want[512];
    snprintf(want, sizeof want,
             "launch grid=3,1,1 block=64,1,1 smem=0 stream=%p\n"
             "launch grid=3,1,1 block=64,1,1 smem=0 stream=%p\n"
             "launch grid=3,1,1 block=64,1,1 smem=0 stream=%p\n"
             "launch grid=3,1,1 block=64,1,1 smem=0 stream=%p\n"
             "launch grid=4,1,1 block=64,1,1 smem=0 stream=%p\n"
             "launch grid=5,1,1 block=64,1,1 smem=0 stream=%p\n"
             "launch grid=4,1,1 block=64,1,1 smem=0 stream=%p\n"
             "synchronize\n"
             "memset bytes=%zu stream=null\n"
             "launch grid=2,1,1 block=32,1,1 smem=",
             stream, stream, stream, stream, stream, stream, stream,
             info.workspace_bytes);
    /* Nothing else: no synchronisation after the launches but the one
     * asked for. */
    CHECK(!strncmp(text, want, strlen(want)));
    CHECK(strstr(strstr(text, "synchronize") + 1, "synchronize") == NULL);
    if (strncmp(text, want, strlen(want)))
      fprintf(stderr, "the driver's log:\n%s\nexpected it to start:\n%s\n",
              text, want);
  }
  free(text);
  free(log);

  /* Timing, by the stand-in driver's clock: a launch of 64 threads per
   * block over 3 blocks takes 64 / 1000 + 1 / 3 ms. */
  s = tl_session_create();
  tl_session_set_cache_dir(s, "");
  tl_session_set_driver(s, fake_driver);
  p = vector_add(s, "BLOCK=256");
  dev = aligned_alloc(256, 4096);
  for (int i = 0; i < 3; i++)
    args[i].device = (uint64_t)(uintptr_t)(dev + 256 * i);
  args[3] = int_arg(600);
  double ms = 0;
  CHECK(!TL_FAILED(tl_program_time(p, args, 4, 2, 5, &ms)));
  CHECK(ms > 0.3973 && ms < 0.3974);
  args[3] = int_arg(-1);
  CHECK(TL_FAILED(tl_program_time(p, args, 4, 2, 5, &ms)));
  CHECK(error_has(s, "cannot launch @vector_add"));
  /* A launch the driver refuses for its resources (as a block whose
   * registers exceed the SM's) fails with the driver's words, and the
   * session goes on: the next launch, and a timing, go through. */
  setenv("TL_FAKE_CUDA_MAX_THREADS", "32", 1);
  args[3] = int_arg(600);
  CHECK(TL_FAILED(tl_program_launch(p, args, 4, NULL)));
  CHECK(error_has(s, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
  CHECK(error_has(s, "too many resources requested for launch"));
  unsetenv("TL_FAKE_CUDA_MAX_THREADS");
  CHECK(!TL_FAILED(tl_program_launch(p, args, 4, NULL)));
  CHECK(!TL_FAILED(tl_program_time(p, args, 4, 2, 5, &ms)));
  CHECK(!TL_FAILED(tl_session_synchronize(s)));
  tl_program_destroy(p);
  tl_session_destroy(s);
  free(dev);
}

/* The tune cache from a program: the key's lines as tl-run writes them, a
 * miss, a store and a hit, and the calls' errors. */
static void test_tune(void) {
  TlSession *s = tl_session_create();
  char *dir = path_of(scratch, "tune-cache");
  tl_session_set_cache_dir(s, dir);
  tl_session_set_driver(s, fake_driver);
  TlProgram *p = vector_add(s, "BLOCK=256");
  CHECK(p != NULL);
  if (!p) {
    tl_session_destroy(s);
    free(dir);
    return;
  }
  const char *space[] = {"BLOCK=128,256"};
  TlArg args[4] = {buffer(NULL, 4096, "f32"), buffer(NULL, 4096, "f32"),
                   buffer(NULL, 4096, "f32"), int_arg(1024)};
  TlShape shapes[4] = {{2, {32, 32}}, {0, {0}}, {0, {0}}, {0, {0}}};
  TlTuneDesc d = {space, 1, args, shapes, 4};
  int64_t values[1] = {0};
  TlTuneEntry e;
  /* The key names the device: none is open yet. */
  CHECK(TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK(error_has(s, "no CUDA device is open"));
  CHECK(!TL_FAILED(tl_session_open_device(s, 0)));
  CHECK(!TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK_EQ_INT(e.status, TL_TUNE_CACHE_MISS);
  CHECK(e.path && strstr(e.path, "tune-cache/tune/"));
  values[0] = 128;
  CHECK(!TL_FAILED(tl_program_tune_store(p, &d, values, 0.25, &e)));
  values[0] = 0;
  CHECK(!TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK_EQ_INT(e.status, TL_TUNE_CACHE_HIT);
  CHECK_EQ_INT(values[0], 128);
  CHECK(e.ms == 0.25);
  /* The entry: the program's define of a tuned name is left out, the
   * buffers' shapes (or their elements in one dimension). */
  size_t len = 0;
  char *text = e.path ? read_all(e.path, &len) : NULL;
  CHECK(text != NULL);
  if (text) {
    text[len] = 0;
    CHECK(strstr(text, "\nkernel: vector_add\ntune: BLOCK=128,256\narg: x = "
                       "f32[32x32]\narg: y = f32[1024]\narg: z = f32[1024]\n"
                       "arg: n = 1024\ndevice: TL fake GPU\ncompiler: ") != NULL);
    CHECK(strstr(text, "define:") == NULL);
    CHECK(strstr(text, "\nbest: BLOCK=128\nms: 0.25\n") != NULL);
  }
  free(text);
  /* Another shape is another key. */
  args[3] = int_arg(512);
  CHECK(!TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK_EQ_INT(e.status, TL_TUNE_CACHE_MISS);
  /* Errors. */
  values[0] = 64;
  CHECK(TL_FAILED(tl_program_tune_store(p, &d, values, 0.25, &e)));
  CHECK(error_has(s, "tune: the choice BLOCK=64 lies outside the space"));
  values[0] = 128;
  CHECK(TL_FAILED(tl_program_tune_store(p, &d, values, 0, &e)));
  CHECK(error_has(s, "is not a positive number"));
  shapes[0].rank = TL_MAX_RANK + 1;
  CHECK(TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK(error_has(s, "argument 0 (x) of @vector_add: a shape of rank 9 (at "
                     "most 8)"));
  shapes[0].rank = 2;
  const char *bad[] = {"BLOCK=128,128"};
  d.space = bad;
  CHECK(TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK(error_has(s, "tune: BLOCK: 128 is listed twice"));
  const char *other[] = {"W=1,2"};
  d.space = other;
  CHECK(TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK(error_has(s, "@vector_add has no integer template parameter 'W'"));
  d.space = space;
  d.nargs = 3;
  CHECK(TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK(error_has(s, "takes 4 arguments, not 3"));
  /* No cache directory: nothing read or written. */
  d.nargs = 4;
  tl_session_set_cache_dir(s, "");
  CHECK(!TL_FAILED(tl_program_tune_store(p, &d, values, 0.5, &e)));
  CHECK(e.path == NULL);
  CHECK(!TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK(e.path == NULL && e.status == TL_TUNE_CACHE_MISS);
  tl_program_destroy(p);
  tl_session_destroy(s);
  free(dir);
}

/* f16 bits of a finite value, at random (a copy moves bits: no
 * rounding to compare). */
static uint16_t rand_f16(uint64_t *st) {
  uint16_t v = (uint16_t)next_rand(st);
  return (v & 0x7c00) == 0x7c00 ? (uint16_t)(v & ~0x4000) : v;
}

/* What @ring of test/vm/Inputs/tma_ring.tl (BM = 16, BN = 64) writes:
 * tile t of out is the box of the rows x cols tensor at (y0 + 16 t, x0),
 * its elements outside the tensor 0; the tensor's element (y, x) is
 * a[y * ld + x]. The number of elements of out that differ. */
static int ring_mismatches(const uint16_t *a, int64_t rows, int64_t cols,
                           int64_t ld, const uint16_t *out, int y0, int x0,
                           int n) {
  int bad = 0;
  for (int t = 0; t < n; t++)
    for (int r = 0; r < 16; r++)
      for (int c = 0; c < 64; c++) {
        int64_t y = y0 + 16 * t + r, x = x0 + c;
        uint16_t want =
            y >= 0 && y < rows && x >= 0 && x < cols ? a[y * ld + x] : 0;
        bad += out[(16 * t + r) * 64 + c] != want;
      }
  return bad;
}

static TlProgram *ring(TlSession *s, const char *kernel) {
  char *path = path_of(srcroot, "test/vm/Inputs/tma_ring.tl");
  TlProgramDesc d = {path, NULL, 0, NULL, 0, kernel};
  TlProgram *p = tl_program_create(s, &d);
  free(path);
  if (!p)
    fprintf(stderr, "%s", tl_session_error(s));
  return p;
}

/* A kernel with a !tl.tensormap parameter on the VM: the map made over
 * the tensor the argument describes (the memory of the pointer parameter
 * `a` too), whole or a strided view, against a reference in C; and every
 * argument the map cannot be made from. */
static void test_tensor_map_vm(void) {
  TlSession *s = tl_session_create();
  TlProgram *p = ring(s, "ring");
  CHECK(p != NULL);
  if (!p) {
    tl_session_destroy(s);
    return;
  }
  TlParamInfo pi;
  tl_program_param(p, 1, &pi);
  CHECK_EQ_STR(pi.name, "tm");
  CHECK_EQ_INT(pi.kind, TL_ARG_TENSOR_MAP);
  CHECK_EQ_STR(pi.dtype, "f16");
  CHECK_EQ_INT(pi.bits, 16);
  CHECK(!pi.packed);

  /* a: 70 x 104 f16, row major. */
  enum { ROWS = 70, COLS = 104 };
  static uint16_t a[ROWS * COLS], out[6 * 16 * 64];
  uint64_t st = 11;
  for (int i = 0; i < ROWS * COLS; i++)
    a[i] = rand_f16(&st);
  TlArg args[6] = {buffer(a, sizeof a, "f16"),
                   tensor_map(a, sizeof a, "f16", ROWS, COLS),
                   buffer(out, sizeof out, "f16"),
                   int_arg(2),
                   int_arg(8),
                   int_arg(4)};
  /* In bounds; then partly outside (above the first row, past the last
   * column); then wholly below. */
  static const int cases[3][3] = {{2, 8, 4}, {-7, 48, 6}, {100, 0, 3}};
  for (int c = 0; c < 3; c++) {
    memset(out, 0x55, sizeof out);
    args[3] = int_arg(cases[c][0]);
    args[4] = int_arg(cases[c][1]);
    args[5] = int_arg(cases[c][2]);
    CHECK(!TL_FAILED(tl_program_run_vm(p, args, 6)));
    CHECK_EQ_STR(tl_session_error(s), "");
    CHECK_EQ_INT(ring_mismatches(a, ROWS, COLS, COLS, out, cases[c][0],
                                 cases[c][1], cases[c][2]),
                 0);
  }
  /* A view: the 60 x 96 tensor at row 3, column 8 of a (its rows 104
   * elements apart, 208 bytes, a multiple of 16). */
  TlArg view = tensor_map(a + 3 * COLS + 8, sizeof a - (3 * COLS + 8) * 2,
                          "f16", 60, 96);
  view.strides[0] = COLS;
  view.strides[1] = 1;
  args[1] = view;
  args[3] = int_arg(-5);
  args[4] = int_arg(40);
  args[5] = int_arg(5);
  memset(out, 0x55, sizeof out);
  CHECK(!TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK_EQ_STR(tl_session_error(s), "");
  CHECK_EQ_INT(ring_mismatches(a + 3 * COLS + 8, 60, 96, COLS, out, -5, 40, 5),
               0);
  args[1] = tensor_map(a, sizeof a, "f16", ROWS, COLS);
  args[3] = int_arg(2);
  args[4] = int_arg(8);
  args[5] = int_arg(4);

  /* Tensors no map is made over, each with its message. */
  TlArg bad = args[1];
  bad.rank = 3;
  bad.shape[2] = 1;
  args[1] = bad;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: the tensor has 3 "
                     "dimensions, but the tensor map (!tl.tensormap<?x?xf16, "
                     "box = [16, 64]>) has 2\n"));
  args[1].rank = 0; /* an argument that says nothing of the tensor */
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "argument 1 (tm) of @ring: the tensor has 0 dimensions, "
                     "but the tensor map"));
  args[1] = tensor_map(a, sizeof a, "f32", ROWS, COLS);
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: the tensor map's "
                     "elements are f16, but the tensor holds f32\n"));
  args[1] = tensor_map(a, sizeof a, "f16", 0, COLS);
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: dimension 0 of the "
                     "tensor has 0 elements; a tensor map's dimensions have 1 "
                     "to 2^32\n"));
  args[1] = tensor_map(a, sizeof a, "f16", ROWS, -4);
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "dimension 1 of the tensor has -4 elements"));
  args[1] = tensor_map(a, sizeof a, "f16", ROWS, COLS / 2);
  args[1].strides[0] = COLS;
  args[1].strides[1] = 2;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: the tensor's innermost "
                     "stride is 2 elements; a tensor map's is 1\n"));
  /* Rows of 100 f16 are 200 bytes apart, not a multiple of 16: as a
   * row-major tensor, and with the stride given. */
  args[1] = tensor_map(a, sizeof a, "f16", ROWS, 100);
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: the stride of "
                     "dimension 0 of the tensor is 100 elements; a tensor "
                     "map's strides are positive multiples of 16 bytes below "
                     "2^40\n"));
  args[1].strides[0] = 100;
  args[1].strides[1] = 1;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "the stride of dimension 0 of the tensor is 100 "
                     "elements"));
  args[1].strides[0] = 0;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "the stride of dimension 0 of the tensor is 0 elements"));
  /* The tensor's last element past the memory given. */
  args[1] = tensor_map(a, 1000, "f16", ROWS, COLS);
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: the tensor's last "
                     "element ends at byte 14560, past the 1000 bytes of its "
                     "memory\n"));
  args[1] = tensor_map(a, sizeof a, "f16", ROWS, COLS);
  args[1].strides[0] = 2 * COLS;
  args[1].strides[1] = 1;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "ends at byte 28912, past the 14560 bytes"));
  args[1] = tensor_map(NULL, sizeof a, "f16", ROWS, COLS);
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: the tensor has no host "
                     "address\n"));
  /* The kinds: a buffer for the map, a map for the buffer and for a
   * scalar. */
  TlArg map = tensor_map(a, sizeof a, "f16", ROWS, COLS);
  args[1] = args[0];
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring: expected a tensor map "
                     "(the tensor of f16 it is made over), got a buffer\n"));
  args[1] = map;
  args[0] = map;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 0 (a) of @ring: expected a buffer of "
                     "f16, got a tensor map\n"));
  args[0] = buffer(a, sizeof a, "f16");
  args[3] = map;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "error: argument 3 (y0) of @ring: expected an integer "
                     "scalar (i32), got a tensor map\n"));
  args[3] = int_arg(2);
  args[1].kind = (TlArgKind)7;
  CHECK(TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK(error_has(s, "argument 1 (tm) of @ring: unknown argument kind 7"));
  /* After the errors, the run again. */
  args[1] = map;
  memset(out, 0x55, sizeof out);
  CHECK(!TL_FAILED(tl_program_run_vm(p, args, 6)));
  CHECK_EQ_INT(ring_mismatches(a, ROWS, COLS, COLS, out, 2, 8, 4), 0);
  /* The launch dims take the map's argument as well (checked the same
   * way, with no address). */
  TlLaunchDims dims;
  CHECK(!TL_FAILED(tl_program_launch_dims(p, args, 6, 90, &dims)));
  CHECK_EQ_INT(dims.grid[0], 1);
  CHECK_EQ_INT(dims.threads, 64);
  args[1].rank = 1;
  CHECK(TL_FAILED(tl_program_launch_dims(p, args, 6, 90, &dims)));
  CHECK(error_has(s, "the tensor has 1 dimension, but the tensor map"));
  tl_program_destroy(p);
  tl_session_destroy(s);
}

/* The launches of a kernel with a tensor map, through the stand-in driver
 * that encodes maps (its log shows each encoding): the map made over the
 * tensor's device address, encoded again only when the description
 * changes; its errors; no launch from words; timing, launch dims and the
 * tune cache's key. */
static void test_tensor_map_launch(void) {
  char *log = path_of(scratch, "tmap.log");
  remove(log);
  setenv("TL_FAKE_CUDA_LOG", log, 1);
  TlSession *s = tl_session_create();
  char *dir = path_of(scratch, "tmap-cache");
  tl_session_set_cache_dir(s, dir);
  tl_session_set_driver(s, fake_tma_driver);
  TlProgram *p = ring(s, "ring_sw");
  CHECK(p != NULL);
  if (!p) {
    tl_session_destroy(s);
    free(dir);
    free(log);
    return;
  }
  enum { ROWS = 70, COLS = 104 };
  uint16_t *a = aligned_alloc(256, 16384), *out = aligned_alloc(256, 16384);
  TlArg args[6] = {buffer(NULL, ROWS * COLS * 2, "f16"),
                   tensor_map(NULL, ROWS * COLS * 2, "f16", ROWS, COLS),
                   buffer(NULL, 6 * 16 * 64 * 2, "f16"),
                   int_arg(2),
                   int_arg(8),
                   int_arg(4)};
  args[0].device = args[1].device = (uint64_t)(uintptr_t)a;
  args[2].device = (uint64_t)(uintptr_t)out;
  CHECK(!TL_FAILED(tl_program_launch(p, args, 6, NULL)));
  CHECK_EQ_STR(tl_session_error(s), "");
  CHECK(!TL_FAILED(tl_program_launch(p, args, 6, NULL))); /* the same map */
  args[1].shape[0] = 64;                                  /* another one */
  CHECK(!TL_FAILED(tl_program_launch(p, args, 6, NULL)));
  double ms = 0;
  CHECK(!TL_FAILED(tl_program_time(p, args, 6, 1, 2, &ms)));
  CHECK(ms > 0);
  /* The words of tl_program_launch_values cannot carry a map. */
  int64_t words[6] = {
      (int64_t)(uintptr_t)a, 0, (int64_t)(uintptr_t)out, 2, 8, 4};
  double reals[6] = {0};
  CHECK(TL_FAILED(tl_program_launch_values(p, words, reals, NULL, 6, NULL)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring_sw: a tensor map cannot "
                     "be passed as a word; launch a kernel with tensor-map "
                     "parameters with tl_program_launch\n"));
  /* A device address TMA cannot start at; none. */
  args[1].device += 2;
  CHECK(TL_FAILED(tl_program_launch(p, args, 6, NULL)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring_sw: the base address is "
                     "not a multiple of 16 bytes\n"));
  args[1].device = 0;
  CHECK(TL_FAILED(tl_program_launch(p, args, 6, NULL)));
  CHECK(error_has(s, "error: argument 1 (tm) of @ring_sw: the tensor has no "
                     "device address\n"));
  args[1].device = (uint64_t)(uintptr_t)a;
  /* The tune cache's key holds the tensor's shape. */
  const char *space[] = {"S=2,3"};
  TlTuneDesc d = {space, 1, args, NULL, 6};
  int64_t values[1] = {3};
  TlTuneEntry e;
  CHECK(!TL_FAILED(tl_program_tune_store(p, &d, values, 0.5, &e)));
  size_t len = 0;
  char *text = e.path ? read_all(e.path, &len) : NULL;
  CHECK(text != NULL);
  if (text) {
    text[len] = 0;
    CHECK(strstr(text, "\narg: a = f16[7280]\narg: tm = f16[64x104]\narg: out "
                       "= f16[6144]\narg: y0 = 2\n") != NULL);
  }
  free(text);
  CHECK(!TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK_EQ_INT(e.status, TL_TUNE_CACHE_HIT);
  args[1].rank = 1;
  CHECK(TL_FAILED(tl_program_tune_lookup(p, &d, values, &e)));
  CHECK(error_has(s, "argument 1 (tm) of @ring_sw: the tensor has 1 "
                     "dimension, but the tensor map"));
  args[1].rank = 2;
  tl_program_destroy(p);
  tl_session_destroy(s);
  unsetenv("TL_FAKE_CUDA_LOG");

  /* Two encodings, the first launch's and the new shape's (the second
   * launch and the timed ones keep the map they find), each over a's
   * device address: the f16 map's dims and box innermost first, its row
   * stride in bytes, the 128-byte swizzle (3). */
  text = read_all(log, &len);
  CHECK(text != NULL);
  if (text) {
    text[len] = 0;
    char want[512];
    snprintf(want, sizeof want,
             "tensormap type=1 rank=2 base=%p dims=104,70 strides=208 "
             "box=64,16 swizzle=3\n"
             "launch grid=1,1,1 block=64,1,1 smem=",
             (void *)a);
    /* Each launch passes parameter 1 the map's bytes. */
    char passed[64];
    snprintf(passed, sizeof passed, "stream=null maps=1@%#llx\n",
             (unsigned long long)(uintptr_t)a);
    int launches = 0;
    for (const char *t = text; (t = strstr(t, "launch ")); t++)
      launches += strncmp(strstr(t, "stream="), passed, strlen(passed)) == 0;
    CHECK_EQ_INT(launches, 6); /* three, then one warm-up and two timed */
    CHECK(!strncmp(text, want, strlen(want)));
    if (strncmp(text, want, strlen(want)))
      fprintf(stderr, "the driver's log:\n%s\nexpected it to start:\n%s\n",
              text, want);
    int maps = 0;
    for (const char *t = text; (t = strstr(t, "tensormap ")); t++)
      maps++;
    CHECK_EQ_INT(maps, 2);
    snprintf(want, sizeof want,
             "tensormap type=1 rank=2 base=%p dims=104,64 strides=208 "
             "box=64,16 swizzle=3\n",
             (void *)a);
    CHECK(strstr(text, want) != NULL);
  }
  free(text);

  /* A driver with no cuTensorMapEncodeTiled: the map cannot be made. */
  s = tl_session_create();
  tl_session_set_cache_dir(s, "");
  tl_session_set_driver(s, fake_driver);
  p = ring(s, "ring");
  CHECK(p && TL_FAILED(tl_program_launch(p, args, 6, NULL)));
  CHECK(error_has(s, "error: the CUDA driver has no entry point "
                     "cuTensorMapEncodeTiled (driver too old for tensor "
                     "maps)\nerror: argument 1 (tm) of @ring: the driver "
                     "refused the tensor map\n"));
  tl_program_destroy(p);
  tl_session_destroy(s);
  free(a);
  free(out);
  free(dir);
  free(log);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: unit_program SCRATCH-DIR SOURCE-ROOT "
                    "FAKE-LIBCUDA FAKE-LIBCUDA-TMA\n");
    return 2;
  }
  scratch = argv[1];
  srcroot = argv[2];
  fake_driver = argv[3];
  fake_tma_driver = argv[4];
  test_vm();
  test_tensor_map_vm();
  test_tensor_map_launch();
  test_source_errors();
  test_cache();
  test_driver();
  test_tune();
  return unit_report();
}
