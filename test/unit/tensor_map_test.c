/* Tensor maps: every rule of tl_tensor_map_check with its message, TL's
 * encoding written and read back, and TMA loads of 1 and 3 dimensions on
 * the thread-level VM (element strides, a swizzle, boxes partly outside
 * the tensor) against a reference computed here with plain loops: the
 * box's elements in order, dimension 0 fastest, zero outside the tensor,
 * at byte offsets swizzled by address bits. Exact. */
#include "tl/dialects.h"
#include "tl/simt_vm.h"
#include "tl/tensor_map.h"
#include "tl/tl.h"
#include "unit.h"

#include <stdlib.h>

static void capture(const TlDiag *d, void *user) {
  tl_str_printf(user, "%u:%u: %s: %s\n", d->loc.line, d->loc.col,
                tl_diag_severity_name(d->severity), d->message);
}

static TlTensorMapDesc base_desc(void) {
  TlTensorMapDesc d;
  memset(&d, 0, sizeof d);
  d.base = 1 << 20;
  d.rank = 2;
  d.elem_bytes = 2;
  d.dims[0] = 100;
  d.dims[1] = 70;
  d.strides[0] = 208;
  d.box[0] = 64;
  d.box[1] = 32;
  d.elem_strides[0] = d.elem_strides[1] = 1;
  return d;
}

static void expect_rule(TlTensorMapDesc d, const char *want) {
  TlErr err;
  memset(&err, 0, sizeof err);
  CHECK(!tl_tensor_map_check(&d, &err));
  CHECK_EQ_STR(err.msg, want);
  uint8_t out[TL_TENSOR_MAP_BYTES];
  memset(out, 0xab, sizeof out);
  CHECK(!tl_tensor_map_encode(&d, out, NULL));
  CHECK_EQ_INT(out[0], 0xab);
}

static void test_rules(void) {
  TlTensorMapDesc d = base_desc();
  CHECK(tl_tensor_map_check(&d, NULL));
  d.rank = 4;
  expect_rule(d, "a tensor map has 1 to 3 dimensions, not 4");
  d = base_desc();
  d.elem_bytes = 3;
  expect_rule(d, "elements are 1, 2, 4 or 8 bytes, not 3");
  d = base_desc();
  d.base += 8;
  expect_rule(d, "the base address is not a multiple of 16 bytes");
  d = base_desc();
  d.dims[1] = 0;
  expect_rule(d, "dimension 1 has 0 elements; a tensor map dimension has 1 "
                 "to 2^32");
  d = base_desc();
  d.strides[0] = 200;
  expect_rule(d, "the stride of dimension 1 is 200 bytes; strides are "
                 "multiples of 16 below 2^40");
  d = base_desc();
  d.box[0] = 300;
  expect_rule(d, "box dimension 0 is 300 elements; a box has 1 to 256");
  d = base_desc();
  d.box[0] = 12;
  expect_rule(d, "the box's inner dimension is 24 bytes, not a multiple of "
                 "16");
  d = base_desc();
  d.elem_strides[1] = 9;
  expect_rule(d, "element stride 9 of dimension 1 is not 1 to 8");
  d = base_desc();
  d.elem_strides[0] = 2;
  expect_rule(d, "the element stride of dimension 0 must be 1 (TMA does not "
                 "stride the innermost dimension)");
  d = base_desc();
  d.swizzle = 96;
  expect_rule(d, "the swizzle is none, 32, 64 or 128 bytes, not 96");
  d = base_desc();
  d.swizzle = 64;
  expect_rule(d, "the box's inner dimension is 128 bytes; under the 64-byte "
                 "swizzle it must be exactly 64");
  /* Narrower than the span: refused too (docs/simt.md). */
  d = base_desc();
  d.swizzle = 128;
  d.box[0] /= 2;
  expect_rule(d, "the box's inner dimension is 64 bytes; under the 128-byte "
                 "swizzle it must be exactly 128");
}

static void test_encoding(void) {
  TlTensorMapDesc d = base_desc(), e;
  d.swizzle = 128;
  d.elem_strides[1] = 3;
  uint8_t b[TL_TENSOR_MAP_BYTES];
  TlErr err;
  CHECK(tl_tensor_map_encode(&d, b, &err));
  CHECK(!memcmp(b, "TLtm", 4));
  CHECK_EQ_INT(b[4], 2);
  CHECK_EQ_INT(b[5], 2);
  CHECK_EQ_INT(b[6], 8);
  CHECK_EQ_INT(b[8 + 2], 0x10); /* base 1 << 20, little-endian */
  CHECK_EQ_INT(b[16], 100);
  CHECK_EQ_INT(b[24], 70);
  CHECK_EQ_INT(b[40], 208);
  CHECK_EQ_INT(b[64], 64);
  CHECK_EQ_INT(b[68], 32);
  CHECK_EQ_INT(b[80], 3);
  for (unsigned i = 88; i < TL_TENSOR_MAP_BYTES; i++)
    CHECK_EQ_INT(b[i], 0);
  CHECK(tl_tensor_map_decode(b, &e, &err));
  CHECK(!memcmp(&d, &e, sizeof d));
  b[0] = 'X';
  CHECK(!tl_tensor_map_decode(b, &e, &err));
  CHECK_EQ_STR(err.msg, "not a tensor map made for the VM (its first 4 bytes "
                        "are not 'TLtm')");
}

/* One thread loads a box through an mbarrier and copies the shared bytes
 * from 1024 on to `out`, 16 at a time. */
static const char *kernels =
    "func @tma1(%tm: !simt.tensormap, %a: !simt.ptr<global>, %out: "
    "!simt.ptr<global>, %x: i32, %y: i32, %z: i32, %bytes: i32) attributes "
    "{kernel} {\n"
    "  %s = simt.smem_base : -> !simt.ptr<shared>\n"
    "  %c1024 = arith.constant 1024 : i32\n"
    "  %tile = simt.ptr_add %s, %c1024 : !simt.ptr<shared>, i32 -> "
    "!simt.ptr<shared>\n"
    "  %c0 = arith.constant 0 : i32\n"
    "  %c1 = arith.constant 1 : i32\n"
    "  %c16 = arith.constant 16 : i32\n"
    "  simt.mbarrier_init %s, %c1 : !simt.ptr<shared>, i32\n"
    "  simt.mbarrier_arrive_expect_tx %s, %bytes : !simt.ptr<shared>, i32\n"
    "  LOAD\n"
    "  %w = scf.while (%k = %c0) : (i32) -> i32 {\n"
    "    %done = simt.mbarrier_try_wait %s, %c0 : !simt.ptr<shared>, i32 -> "
    "i1\n"
    "    %f = arith.xori %done, %done : i1\n"
    "    %again = arith.cmpi eq, %done, %f : i1\n"
    "    scf.condition(%again) %k : i32\n"
    "  } do {\n"
    "  ^bb0(%k2: i32):\n"
    "    scf.yield %k2 : i32\n"
    "  }\n"
    "  scf.for %i = %c0 to %bytes step %c16 : i32 {\n"
    "    %p = simt.ptr_add %tile, %i : !simt.ptr<shared>, i32 -> "
    "!simt.ptr<shared>\n"
    "    %v = simt.load %p : !simt.ptr<shared> -> !simt.vec<4xi32>\n"
    "    %q = simt.ptr_add %out, %i : !simt.ptr<global>, i32 -> "
    "!simt.ptr<global>\n"
    "    simt.store %v, %q : !simt.vec<4xi32>, !simt.ptr<global>\n"
    "    scf.yield\n"
    "  }\n"
    "  return\n"
    "}\n";

/* The reference: the box at `at` of the tensor `t` (d's dims and
 * strides), dimension 0 fastest, swizzled as loaded at shared byte 1024. */
static void reference(const TlTensorMapDesc *d, const uint8_t *t,
                      const int64_t *at, uint8_t *out, size_t bytes) {
  unsigned eb = d->elem_bytes;
  uint64_t n[3] = {1, 1, 1};
  for (unsigned i = 0; i < d->rank; i++)
    n[i] = (d->box[i] + d->elem_strides[i] - 1) / d->elem_strides[i];
  size_t off = 0;
  for (uint64_t k2 = 0; k2 < n[2]; k2++)
    for (uint64_t k1 = 0; k1 < n[1]; k1++)
      for (uint64_t k0 = 0; k0 < n[0]; k0++, off += eb) {
        int64_t g[3] = {at[0] + (int64_t)k0,
                        at[1] + (int64_t)(k1 * d->elem_strides[1]),
                        at[2] + (int64_t)(k2 * d->elem_strides[2])};
        size_t addr = 1024 + off;
        if (d->swizzle)
          addr ^= ((addr >> 7) & (d->swizzle / 16 - 1)) << 4;
        addr -= 1024;
        CHECK(addr + eb <= bytes);
        bool in = true;
        size_t src = 0;
        for (unsigned i = 0; i < d->rank; i++) {
          if (g[i] < 0 || (uint64_t)g[i] >= d->dims[i])
            in = false;
          else
            src += (size_t)g[i] * (i ? d->strides[i - 1] : eb);
        }
        for (unsigned b = 0; b < eb; b++)
          out[addr + b] = in ? t[src + b] : 0;
      }
}

static void run_load(const char *what, TlTensorMapDesc d, size_t tbytes,
                     const int64_t *at) {
  const char *load =
      d.rank == 1 ? "simt.tma_load %tile, %tm, %s, %x : !simt.ptr<shared>, "
                    "!simt.tensormap, !simt.ptr<shared>, i32"
                  : "simt.tma_load %tile, %tm, %s, %x, %y, %z : "
                    "!simt.ptr<shared>, !simt.tensormap, !simt.ptr<shared>, "
                    "i32, i32, i32";
  size_t len = strlen(kernels) + strlen(load) + 1;
  char *text = malloc(len);
  const char *mark = strstr(kernels, "LOAD");
  snprintf(text, len, "%.*s%s%s", (int)(mark - kernels), kernels, load,
           mark + 4);
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  TlModule *m = tl_parse_module(ctx, "k.tl", text, strlen(text), 1);
  CHECK(m && !TL_FAILED(tl_verify(tl_module_op(m))));
  uint64_t n = 1;
  for (unsigned i = 0; i < d.rank; i++)
    n *= (d.box[i] + d.elem_strides[i] - 1) / d.elem_strides[i];
  size_t bytes = (size_t)n * d.elem_bytes;
  uint8_t *t = malloc(tbytes), *out = calloc(bytes + 16, 1),
          *want = calloc(bytes + 16, 1), map[TL_TENSOR_MAP_BYTES];
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < tbytes; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    t[i] = (uint8_t)(s >> 24);
  }
  d.base = tl_simt_vm_buffer_address(1);
  TlErr err;
  CHECK(tl_tensor_map_encode(&d, map, &err));
  TlVmArg args[7] = {tl_vm_arg_buffer(map, sizeof map, tl_dtype_uint(8)),
                     tl_vm_arg_buffer(t, tbytes, tl_dtype_uint(8)),
                     tl_vm_arg_buffer(out, bytes, tl_dtype_uint(8)),
                     tl_vm_arg_int(at[0]),
                     tl_vm_arg_int(at[1]),
                     tl_vm_arg_int(at[2]),
                     tl_vm_arg_int((int64_t)bytes)};
  TlSimtLaunch l = {{1, 1, 1}, {1, 1, 1}, 1024 + (int64_t)bytes + 1024};
  TlSimtVm *vm = tl_simt_vm_create(ctx);
  bool ok = m && !TL_FAILED(tl_simt_vm_run_named(vm, m, NULL, &l, 7, args));
  CHECK(ok);
  reference(&d, t, at, want, bytes);
  if (memcmp(out, want, bytes)) {
    fprintf(stderr, "%s: the loaded box differs from the reference\n", what);
    CHECK(false);
  }
  tl_simt_vm_destroy(vm);
  if (m)
    tl_module_destroy(m);
  tl_context_destroy(ctx);
  free(t);
  free(out);
  free(want);
  free(text);
}

/* A kernel handed bytes that are not TL's encoding (the driver's, or
 * zeros) fails at its first load with the decoder's message. */
static void test_bad_map(void) {
  const char *text =
      "func @k(%tm: !simt.tensormap) attributes {kernel} {\n"
      "  %s = simt.smem_base : -> !simt.ptr<shared>\n"
      "  %c1 = arith.constant 1 : i32\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c128 = arith.constant 128 : i32\n"
      "  %d = simt.ptr_add %s, %c128 : !simt.ptr<shared>, i32 -> "
      "!simt.ptr<shared>\n"
      "  simt.mbarrier_init %s, %c1 : !simt.ptr<shared>, i32\n"
      "  simt.tma_load %d, %tm, %s, %c0 : !simt.ptr<shared>, "
      "!simt.tensormap, !simt.ptr<shared>, i32\n"
      "  return\n"
      "}\n";
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  TlStr diags = {0};
  tl_diag_set_handler(tl_context_diag(ctx), capture, &diags);
  TlModule *m = tl_parse_module(ctx, "k.tl", text, strlen(text), 1);
  CHECK(m && !TL_FAILED(tl_verify(tl_module_op(m))));
  uint8_t map[TL_TENSOR_MAP_BYTES] = {0};
  TlVmArg args[2] = {tl_vm_arg_buffer(map, sizeof map, tl_dtype_uint(8)),
                     tl_vm_arg_buffer(map, 64, tl_dtype_uint(8))};
  TlSimtLaunch l = {{1, 1, 1}, {1, 1, 1}, 4096};
  TlSimtVm *vm = tl_simt_vm_create(ctx);
  CHECK(m && TL_FAILED(tl_simt_vm_run_named(vm, m, NULL, &l, 1, args)));
  CHECK(strstr(tl_str_cstr(&diags),
               "8:3: error: 'simt.tma_load' op thread 0 (warp 0, lane 0) "
               "loads through a bad tensor map: not a tensor map made for "
               "the VM (its first 4 bytes are not 'TLtm')\n") != NULL);
  /* A parameter given fewer than 128 bytes is refused at the launch. */
  tl_str_clear(&diags);
  CHECK(m && TL_FAILED(tl_simt_vm_run_named(vm, m, NULL, &l, 1, args + 1)));
  CHECK(strstr(tl_str_cstr(&diags),
               "parameter 'tm' (!simt.tensormap) needs a buffer of the 128 "
               "bytes of a tensor map") != NULL);
  tl_simt_vm_destroy(vm);
  if (m)
    tl_module_destroy(m);
  tl_context_destroy(ctx);
  tl_str_free(&diags);
}

static void test_loads(void) {
  TlTensorMapDesc d;
  memset(&d, 0, sizeof d);
  /* 1-D: 300 i32, a box of 64 from 268 (the last 32 zero), then from -8.
   * The innermost coordinates here are multiples of 16 bytes, as TMA
   * needs. */
  d.rank = 1;
  d.elem_bytes = 4;
  d.dims[0] = 300;
  d.box[0] = 64;
  d.elem_strides[0] = 1;
  int64_t at1[3] = {268, 0, 0}, at2[3] = {-8, 0, 0};
  run_load("1-D past the end", d, 1200, at1);
  run_load("1-D before the start", d, 1200, at2);
  /* 3-D: 5 x 20 x 24 u16 with padded rows (64 bytes) and planes (1344),
   * a 16 x 9 x 4 box stepping 3 in dimension 1 and 2 in dimension 2,
   * partly outside, with the 32-byte swizzle. */
  memset(&d, 0, sizeof d);
  d.rank = 3;
  d.elem_bytes = 2;
  d.dims[0] = 24;
  d.dims[1] = 20;
  d.dims[2] = 5;
  d.strides[0] = 64;
  d.strides[1] = 1344;
  d.box[0] = 16;
  d.box[1] = 9;
  d.box[2] = 4;
  d.elem_strides[0] = 1;
  d.elem_strides[1] = 3;
  d.elem_strides[2] = 2;
  d.swizzle = 32;
  int64_t at3[3] = {16, 14, 2};
  run_load("3-D strided, swizzled", d, 5 * 1344, at3);
  d.swizzle = 0;
  int64_t at4[3] = {-8, -2, -1};
  run_load("3-D strided", d, 5 * 1344, at4);
}

int main(void) {
  test_rules();
  test_encoding();
  test_loads();
  test_bad_map();
  return unit_report();
}
