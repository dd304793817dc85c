/* Unit tests of the cast-recipe emitter (passes/cast_recipe.c): every cast
 * recipe of lib/dtype is emitted into a simt kernel that loads packed
 * source words from a global buffer and stores the result words to
 * another; the kernel is verified and run on the thread-level VM, and each
 * result is compared bit for bit with the host codec,
 * encode(dst, decode(src, code)), NaN matching NaN as
 * tl_cast_recipe_verify compares. Thread t < 2^w casts codes
 * (t + 3i) mod 2^w at positions i, so every code point of the source type
 * meets every input position; one more warp casts random codes. Each
 * recipe runs with a full group (r->n_values values), with 1 and
 * n_values - 1 values (a partial group), and with 2 n_values + 3 (two full
 * groups and a partial one, on two warps only: one of structured codes,
 * one of random codes); the bits past the last value of the last
 * input word are random, and the emitter must ignore them. A 16-bit
 * result with an odd count must leave the high half of its last word
 * zero. For full groups the emitted instruction count (ops other than
 * constants, bitcasts and extracts) must equal what cast_recipe.h
 * documents: the recipe's non-constant ops, shf.r as three, plus one prmt
 * per output word not already in order. simt.fma, the op the emitter
 * added for ffma, is checked on the VM against tl_f32_fma, including a
 * case that a multiply-then-add would round differently.
 *
 * With --print-kinds the test instead prints a module with one kernel per
 * recipe kind (test/target/cast-recipe*.test compile it to PTX). With -v it
 * prints each recipe's cost. Everything here is exact: no tolerance. */
#include "cast_recipe.h"
#include "tl/dialects.h"
#include "tl/dtype.h"
#include "tl/simt.h"
#include "tl/simt_vm.h"
#include "tl/tl.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

static bool verbose;

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 11);
}

typedef struct Diags {
  TlStr text;
} Diags;

static void capture(const TlDiag *d, void *user) {
  Diags *c = user;
  tl_str_printf(&c->text, "%u:%u: %s: %s\n", d->loc.line, d->loc.col,
                tl_diag_severity_name(d->severity), d->message);
}

/*===--- Building the kernel ----------------------------------------------===*/

typedef struct Kernel {
  TlContext *ctx;
  TlModule *m;
  TlBuilder b;
  TlLoc loc;
} Kernel;

static TlValue *op(Kernel *k, const char *name, unsigned n, TlValue *const *ops,
                   TlType *rt, const char *attr, TlAttr *val) {
  TlOpState st;
  tl_op_state_init(&st, k->ctx, tl_context_op_def(k->ctx, name), k->loc);
  tl_op_state_add_operands(&st, n, ops);
  if (rt)
    tl_op_state_add_result(&st, rt);
  if (attr)
    tl_op_state_set_attr(&st, attr, val);
  TlOp *o = tl_builder_insert(&k->b, &st);
  return rt ? tl_op_result(o, 0) : NULL;
}

static TlValue *i64c(Kernel *k, int64_t v) {
  return tl_arith_constant(
      &k->b, tl_attr_int(k->ctx, tl_type_int(k->ctx, 64, true), v), k->loc);
}

/* The address of word `word` of thread gt's slice of `words` words. */
static TlValue *word_ptr(Kernel *k, TlValue *base, TlValue *gt, unsigned words,
                         unsigned word) {
  TlType *i64 = tl_type_int(k->ctx, 64, true);
  TlValue *mul[2] = {gt, i64c(k, 4 * (int64_t)words)};
  TlValue *off = op(k, "arith.muli", 2, mul, i64, NULL, NULL);
  TlValue *add[2] = {off, i64c(k, 4 * (int64_t)word)};
  off = op(k, "arith.addi", 2, add, i64, NULL, NULL);
  TlValue *pa[2] = {base, off};
  return op(k, "simt.ptr_add", 2, pa, tl_value_type(base), NULL, NULL);
}

/* Whether an emitted op costs an instruction (see cast_recipe.h). */
static bool costs(TlOp *o) {
  const char *n = tl_op_name(o);
  return strcmp(n, "arith.constant") && strcmp(n, "arith.bitcast") &&
         strcmp(n, "simt.bitcast") && strcmp(n, "simt.extract");
}

/* Adds kernel `name`: thread gt = block_id * 32 + thread_id loads its
 * input words, casts n values with r and stores the result words. Stores
 * the instruction count of the emitted cast in *cost. */
static bool add_kernel(Kernel *k, const char *name, const TlCastRecipe *r,
                       unsigned n, unsigned *cost) {
  TlContext *ctx = k->ctx;
  TlType *gp = tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL);
  TlType *i32 = tl_type_int(ctx, 32, true), *u32 = tl_type_int(ctx, 32, false);
  TlType *ins[2] = {gp, gp};
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def(ctx, "builtin.func"), k->loc);
  tl_op_state_set_attr(&st, "sym_name",
                       tl_attr_string(ctx, name, strlen(name)));
  tl_op_state_set_attr(
      &st, "function_type",
      tl_attr_type(ctx, tl_type_function(ctx, 2, ins, 0, NULL)));
  tl_op_state_set_attr(&st, "kernel", tl_attr_unit(ctx));
  st.nregions = 1;
  tl_builder_set_end(&k->b, tl_module_body(k->m));
  TlOp *fn = tl_builder_insert(&k->b, &st);
  TlBlock *body = tl_block_create(k->m);
  tl_region_append_block(tl_op_region(fn, 0), body);
  TlValue *pin = tl_block_add_arg(body, gp, k->loc);
  TlValue *pout = tl_block_add_arg(body, gp, k->loc);
  tl_builder_set_end(&k->b, body);
  TlAttr *x = tl_attr_string(ctx, "x", 1);
  TlValue *tid = op(k, "simt.thread_id", 0, NULL, i32, "dim", x);
  TlValue *bid = op(k, "simt.block_id", 0, NULL, i32, "dim", x);
  TlValue *c32 = tl_arith_constant(&k->b, tl_attr_int(ctx, i32, 32), k->loc);
  TlValue *m2[2] = {bid, c32};
  TlValue *gt = op(k, "arith.muli", 2, m2, i32, NULL, NULL);
  TlValue *a2[2] = {gt, tid};
  gt = op(k, "arith.addi", 2, a2, i32, NULL, NULL);
  gt = op(k, "arith.exti", 1, &gt, tl_type_int(ctx, 64, true), NULL, NULL);
  unsigned nin = tl_cast_recipe_words(r->src.bits, n);
  unsigned nout = tl_cast_recipe_words(r->dst.bits, n);
  TlValue *in[3 * TL_RECIPE_MAX_WORDS], *out[3 * TL_RECIPE_MAX_VALUES];
  for (unsigned w = 0; w < nin; w++) {
    TlValue *p = word_ptr(k, pin, gt, nin, w);
    in[w] = op(k, "simt.load", 1, &p, u32, NULL, NULL);
  }
  TlOp *before = tl_block_last_op(body);
  TlErr err = {{0}};
  bool ok = tl_emit_cast_recipe(&k->b, k->loc, r, in, n, out, &err);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "%s\n", err.msg);
    return false;
  }
  *cost = 0;
  for (TlOp *o = tl_op_next(before); o; o = tl_op_next(o))
    *cost += costs(o);
  for (unsigned w = 0; w < nout; w++) {
    TlValue *p = word_ptr(k, pout, gt, nout, w);
    TlValue *sv[2] = {out[w], p};
    CHECK(tl_value_type(out[w]) == u32);
    op(k, "simt.store", 2, sv, NULL, NULL, NULL);
  }
  op(k, "builtin.return", 0, NULL, NULL, NULL, NULL);
  return true;
}

static void kernel_init(Kernel *k, Diags *d) {
  memset(k, 0, sizeof *k);
  k->ctx = tl_context_create();
  tl_register_all_dialects(k->ctx);
  tl_diag_set_handler(tl_context_diag(k->ctx), capture, d);
  k->loc = tl_loc_unknown();
  k->m = tl_module_create(k->ctx, k->loc);
  tl_builder_init(&k->b, k->m);
}

static void kernel_fini(Kernel *k) {
  tl_module_destroy(k->m);
  tl_context_destroy(k->ctx);
}

/*===--- The expected cost
 * -------------------------------------------------===*/

/* cast_recipe.h's count for one full group, from the recipe alone. */
static unsigned documented_cost(const TlCastRecipe *r) {
  unsigned c = r->n_ops - r->n_const_ops;
  for (unsigned i = 0; i < r->n_ops; i++)
    if (r->ops[i].op == TL_ROP_SHF_R)
      c += r->ops[i].imm && r->ops[i].imm < 32 ? 2 : 0;
  if (r->dst.bits == 32)
    return c;
  /* target word k is in order when some recipe word j holds values 2k and
   * 2k + 1 in its low and high half */
  for (unsigned k = 0; 2 * k < r->n_values; k++) {
    bool in_order = false;
    for (unsigned j = 0; j < r->n_out_words; j++)
      in_order |=
          r->value_of[2 * j] == 2 * k && r->value_of[2 * j + 1] == 2 * k + 1;
    c += !in_order;
  }
  return c;
}

/*===--- Running and checking ---------------------------------------------===*/

static bool same(TlDType t, uint64_t expect, uint64_t got) {
  if (tl_dtype_code_is_nan(t, expect))
    return tl_dtype_code_is_nan(t, got);
  return expect == got;
}

/* Casts n values with r for every thread and checks every result. With
 * `every_code`, the threads cover every code point in every position;
 * otherwise one warp of structured codes and one of random codes. */
static void check_recipe(const TlCastRecipe *r, unsigned n, bool every_code) {
  Diags diags = {{0}};
  Kernel k;
  kernel_init(&k, &diags);
  unsigned cost = 0;
  if (!add_kernel(&k, "cast", r, n, &cost)) {
    kernel_fini(&k);
    tl_str_free(&diags.text);
    return;
  }
  const char *what = tl_dtype_name(r->src), *to = tl_dtype_name(r->dst);
  unsigned w = r->src.bits, db = r->dst.bits;
  bool verified = !TL_FAILED(tl_verify(tl_module_op(k.m)));
  CHECK(verified);
  if (n == r->n_values) {
    CHECK_EQ_INT(cost, documented_cost(r));
    if (verbose)
      printf("%-8s -> %-4s kind %d: %u instructions per %u values\n", what, to,
             (int)r->kind, cost, n);
  } else {
    /* a partial group costs no more than a full one, but for the prmt
     * that clears the high half of a last word holding one value */
    unsigned groups = (n + r->n_values - 1) / r->n_values;
    CHECK(cost <= groups * documented_cost(r) + (db == 16 && n % 2));
  }
  unsigned ncodes = 1u << w;
  unsigned threads = every_code ? (ncodes + 31) / 32 * 32 + 32 : 64;
  unsigned nin = tl_cast_recipe_words(w, n), nout = tl_cast_recipe_words(db, n);
  uint8_t *inb = calloc((size_t)threads * nin, 4);
  uint32_t *outw = calloc((size_t)threads * nout, 4);
  uint64_t *codes = calloc((size_t)threads * n, sizeof *codes);
  for (unsigned t = 0; t < threads; t++) {
    uint64_t *c = codes + (size_t)t * n;
    for (unsigned i = 0; i < n; i++)
      c[i] = t < ncodes && t < threads - 32 ? (t + 3ull * i) % ncodes
                                            : rnd() % ncodes;
    uint8_t *p = inb + (size_t)t * nin * 4;
    tl_dtype_pack(r->src, c, n, p, 0);
    /* random bits past the last value: the emitter must ignore them */
    for (unsigned bit = n * w; bit < nin * 32; bit++)
      p[bit / 8] |= (uint8_t)((rnd() & 1) << (bit % 8));
  }
  if (verified) {
    TlSimtVm *vm = tl_simt_vm_create(k.ctx);
    TlSimtLaunch l = {{threads / 32, 1, 1}, {32, 1, 1}, 0};
    TlVmArg args[2] = {
        tl_vm_arg_buffer(inb, (size_t)threads * nin * 4, tl_dtype_uint(8)),
        tl_vm_arg_buffer(outw, (size_t)threads * nout * 4, tl_dtype_uint(8))};
    TlOp *fn = tl_simt_vm_find_kernel(k.m, "cast");
    bool ran = fn && !TL_FAILED(tl_simt_vm_run(vm, fn, &l, 2, args));
    CHECK(ran);
    tl_simt_vm_destroy(vm);
    unsigned bad = 0;
    for (unsigned t = 0; ran && t < threads && bad < 4; t++) {
      const uint32_t *o = outw + (size_t)t * nout;
      for (unsigned i = 0; i < n && bad < 4; i++) {
        uint64_t c = codes[(size_t)t * n + i];
        uint64_t expect = tl_dtype_encode(r->dst, tl_dtype_decode(r->src, c));
        uint64_t got = db == 32 ? o[i] : (o[i / 2] >> (16 * (i % 2))) & 0xffff;
        if (!same(r->dst, expect, got)) {
          bad++;
          fprintf(stderr,
                  "%s -> %s, %u values: thread %u element %u (code 0x%llx): "
                  "got 0x%llx, expected 0x%llx\n",
                  what, to, n, t, i, (unsigned long long)c,
                  (unsigned long long)got, (unsigned long long)expect);
        }
      }
      if (db == 16 && n % 2 && (o[nout - 1] >> 16) != 0) {
        bad++;
        fprintf(stderr, "%s -> %s, %u values: thread %u: padding 0x%x\n", what,
                to, n, t, o[nout - 1] >> 16);
      }
    }
    CHECK_EQ_INT(bad, 0);
  }
  fputs(tl_str_cstr(&diags.text), stderr);
  free(inb);
  free(outw);
  free(codes);
  kernel_fini(&k);
  tl_str_free(&diags.text);
}

/* Quantising recipes and an empty cast are refused, and nothing is
 * emitted. */
static void test_refusals(void) {
  Diags diags = {{0}};
  Kernel k;
  kernel_init(&k, &diags);
  tl_builder_set_end(&k.b, tl_module_body(k.m));
  const TlCastRecipe *q = tl_cast_recipe_find(tl_dtype_f16(), tl_dtype_int(4));
  CHECK(q && q->kind == TL_RECIPE_QUANT);
  TlValue *words[4] = {NULL}, *out[4];
  TlErr err = {{0}};
  CHECK(!tl_emit_cast_recipe(&k.b, k.loc, q, words, 8, out, &err));
  CHECK_EQ_STR(err.msg, "f16 -> i4: quantising recipes are not emitted (their "
                        "max/min have no simt form)");
  const TlCastRecipe *c = tl_cast_recipe_find(tl_dtype_uint(4), tl_dtype_f16());
  CHECK(!tl_emit_cast_recipe(&k.b, k.loc, c, words, 0, out, &err));
  CHECK_EQ_STR(err.msg, "no values to cast");
  CHECK(tl_block_first_op(tl_module_body(k.m)) == NULL);
  kernel_fini(&k);
  tl_str_free(&diags.text);
}

/* simt.fma on the VM rounds once, as lib/dtype's tl_f32_fma: random
 * operands, and a * b + c = 2^-24 exactly where a rounded product would
 * give 0 (a = b = 1 + 2^-12, c = -(1 + 2^-11)). */
static void test_fma(void) {
  static const char *text =
      "func @fma(%p: !simt.ptr<global>) attributes {kernel} {\n"
      "  %t = simt.thread_id {dim = \"x\"} : -> i32\n"
      "  %c16 = arith.constant 16 : i32\n"
      "  %c4 = arith.constant 4 : i32\n"
      "  %o = arith.muli %t, %c16 : i32\n"
      "  %pa = simt.ptr_add %p, %o : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  %pb = simt.ptr_add %pa, %c4 : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  %pc = simt.ptr_add %pb, %c4 : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  %pd = simt.ptr_add %pc, %c4 : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  %a = simt.load %pa : !simt.ptr<global> -> f32\n"
      "  %b = simt.load %pb : !simt.ptr<global> -> f32\n"
      "  %c = simt.load %pc : !simt.ptr<global> -> f32\n"
      "  %d = simt.fma %a, %b, %c : f32, f32, f32 -> f32\n"
      "  simt.store %d, %pd : f32, !simt.ptr<global>\n"
      "  return\n"
      "}\n";
  Diags diags = {{0}};
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  tl_diag_set_handler(tl_context_diag(ctx), capture, &diags);
  TlModule *m = tl_parse_module(ctx, "fma.tl", text, strlen(text), 1);
  CHECK(m && !TL_FAILED(tl_verify(tl_module_op(m))));
  uint32_t buf[32][4];
  for (unsigned t = 0; t < 32; t++)
    for (unsigned k = 0; k < 4; k++)
      buf[t][k] = rnd() ^ (rnd() << 16);
  buf[0][0] = buf[0][1] = 0x3f800800u; /* 1 + 2^-12 */
  buf[0][2] = 0xbf801000u;             /* -(1 + 2^-11) */
  TlSimtVm *vm = tl_simt_vm_create(ctx);
  TlSimtLaunch l = {{1, 1, 1}, {32, 1, 1}, 0};
  TlVmArg arg = tl_vm_arg_buffer(buf, sizeof buf, tl_dtype_uint(8));
  bool ran = m && !TL_FAILED(tl_simt_vm_run_named(vm, m, NULL, &l, 1, &arg));
  CHECK(ran);
  CHECK_EQ_INT(buf[0][3], 0x33800000u); /* 2^-24 */
  for (unsigned t = 0; ran && t < 32; t++)
    CHECK_EQ_INT(buf[t][3], tl_f32_fma(buf[t][0], buf[t][1], buf[t][2]));
  fputs(tl_str_cstr(&diags.text), stderr);
  tl_simt_vm_destroy(vm);
  if (m)
    tl_module_destroy(m);
  tl_context_destroy(ctx);
  tl_str_free(&diags.text);
}

/* One kernel per recipe kind, exercising every register op the cast
 * recipes use: lop3 and hfma2 (u4 -> f16, with its prmt fix-up), shf.r,
 * bfma2 (i3 -> bf16), ffma (u4 -> f32), sar and fmul (f6e3m2 -> f32),
 * iadd and hmul2 (f8e4m3 -> f16), bytes (f8e5m2 -> f16), prmt.r
 * (f4e2m1 -> f16), cvt and cvt_pack (f8e4m3 -> bf16), fsub (u8 -> f32). */
static int print_kinds(void) {
  static const struct {
    const char *name, *src, *dst;
  } kinds[] = {
      {"magic_u4_f16", "u4", "f16"},
      {"magic_i3_bf16", "i3", "bf16"},
      {"magic_u4_f32", "u4", "f32"},
      {"magic_u8_f32", "u8", "f32"},
      {"rebias_f6e3m2_f32", "f6e3m2", "f32"},
      {"rebias_f8e4m3_f16", "f8e4m3", "f16"},
      {"bytes_f8e5m2_f16", "f8e5m2", "f16"},
      {"lut_f4e2m1_f16", "f4e2m1", "f16"},
      {"chain_f8e4m3_bf16", "f8e4m3", "bf16"},
  };
  Diags diags = {{0}};
  Kernel k;
  kernel_init(&k, &diags);
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    TlDType s, d;
    unsigned cost;
    if (!tl_dtype_parse(kinds[i].src, strlen(kinds[i].src), &s) ||
        !tl_dtype_parse(kinds[i].dst, strlen(kinds[i].dst), &d))
      return 1;
    const TlCastRecipe *r = tl_cast_recipe_find(s, d);
    /* a full group and a partial one, so the fix-up's zero half shows */
    if (!r || !add_kernel(&k, kinds[i].name, r, r->n_values + 1, &cost))
      return 1;
  }
  int rc = 1;
  if (!TL_FAILED(tl_verify(tl_module_op(k.m)))) {
    TlStr s = {0};
    tl_module_print(k.m, NULL, &s);
    fputs(tl_str_cstr(&s), stdout);
    tl_str_free(&s);
    rc = 0;
  }
  fputs(tl_str_cstr(&diags.text), stderr);
  kernel_fini(&k);
  tl_str_free(&diags.text);
  return rc;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--print-kinds"))
      return print_kinds();
    if (!strcmp(argv[i], "-v"))
      verbose = true;
  }
  test_refusals();
  test_fma();
  size_t n;
  const TlCastRecipe *all = tl_cast_recipe_all(&n);
  unsigned casts = 0;
  for (size_t i = 0; i < n; i++) {
    const TlCastRecipe *r = &all[i];
    if (r->kind == TL_RECIPE_QUANT)
      continue;
    casts++;
    unsigned nv = r->n_values;
    check_recipe(r, nv, true);
    check_recipe(r, 1, true);
    check_recipe(r, nv - 1, true);
    check_recipe(r, 2 * nv + 3, false);
  }
  CHECK_EQ_INT(casts, 132); /* 44 source types x 3 destinations */
  return unit_report();
}
