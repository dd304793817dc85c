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

#include <math.h>
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

/* A quantising recipe through the cast emitter, a cast recipe through the
 * quantising one, empty casts and a permutation across groups are refused,
 * and nothing is emitted. */
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
  CHECK_EQ_STR(err.msg, "f16 -> i4: a quantising recipe takes a scale and a "
                        "zero point (tl_emit_quant_recipe emits it)");
  const TlCastRecipe *c = tl_cast_recipe_find(tl_dtype_uint(4), tl_dtype_f16());
  CHECK(!tl_emit_cast_recipe(&k.b, k.loc, c, words, 0, out, &err));
  CHECK_EQ_STR(err.msg, "no values to cast");
  CHECK(
      !tl_emit_quant_recipe(&k.b, k.loc, c, words, 8, NULL, words, out, &err));
  CHECK_EQ_STR(err.msg, "u4 -> f16: not a quantising recipe");
  CHECK(
      !tl_emit_quant_recipe(&k.b, k.loc, q, words, 0, NULL, words, out, &err));
  CHECK_EQ_STR(err.msg, "no values to cast");
  unsigned cross[9] = {0, 1, 2, 3, 4, 5, 6, 8, 7};
  CHECK(
      !tl_emit_quant_recipe(&k.b, k.loc, q, words, 9, cross, words, out, &err));
  CHECK_EQ_STR(err.msg, "the order of the results is not a permutation "
                        "within the recipe's groups of values");
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

/*===--- Quantising recipes -----------------------------------------------===*/

/* Adds kernel `name`: thread gt loads the source words of n values and the
 * recipe's two parameter words (per thread, so that one launch covers
 * several scales and zero points), quantises with r in the order perm
 * (NULL: identity) and stores the result words. */
static bool add_quant_kernel(Kernel *k, const char *name, const TlCastRecipe *r,
                             unsigned n, const unsigned *perm, unsigned *cost) {
  TlContext *ctx = k->ctx;
  TlType *gp = tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL);
  TlType *i32 = tl_type_int(ctx, 32, true), *u32 = tl_type_int(ctx, 32, false);
  TlType *ins[3] = {gp, gp, gp};
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def(ctx, "builtin.func"), k->loc);
  tl_op_state_set_attr(&st, "sym_name",
                       tl_attr_string(ctx, name, strlen(name)));
  tl_op_state_set_attr(
      &st, "function_type",
      tl_attr_type(ctx, tl_type_function(ctx, 3, ins, 0, NULL)));
  tl_op_state_set_attr(&st, "kernel", tl_attr_unit(ctx));
  st.nregions = 1;
  tl_builder_set_end(&k->b, tl_module_body(k->m));
  TlOp *fn = tl_builder_insert(&k->b, &st);
  TlBlock *body = tl_block_create(k->m);
  tl_region_append_block(tl_op_region(fn, 0), body);
  TlValue *pin = tl_block_add_arg(body, gp, k->loc);
  TlValue *ppar = tl_block_add_arg(body, gp, k->loc);
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
  TlValue *in[3 * TL_RECIPE_MAX_VALUES], *out[3 * TL_RECIPE_MAX_WORDS], *par[2];
  for (unsigned w = 0; w < nin; w++) {
    TlValue *p = word_ptr(k, pin, gt, nin, w);
    in[w] = op(k, "simt.load", 1, &p, u32, NULL, NULL);
  }
  for (unsigned w = 0; w < 2; w++) {
    TlValue *p = word_ptr(k, ppar, gt, 2, w);
    par[w] = op(k, "simt.load", 1, &p, u32, NULL, NULL);
  }
  TlOp *before = tl_block_last_op(body);
  TlErr err = {{0}};
  bool ok = tl_emit_quant_recipe(&k->b, k->loc, r, in, n, perm, par, out, &err);
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

/* lib/dtype's verifier's generator (recipe_check.c), to cover the same
 * inputs. */
static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* One group of a quantising test: the recipe elements (in the recipe's
 * input order, as the verifier makes them) and the parameters. */
typedef struct QCase {
  uint32_t elems[TL_RECIPE_MAX_VALUES];
  uint32_t scale;
  int zero;
} QCase;

/* The groups tl_cast_recipe_verify checks for r (every f16/bf16 input
 * under (1/7, mid zero), every 29th stretch under the eleven other pairs;
 * the same random and tie f32 inputs), then every 16-bit input, or 4096
 * random and tie f32 inputs, under scale 1 and zero point 0: the rounding
 * cast's parameters. Returns the count; *cases is the caller's to free. */
static unsigned quant_cases(const TlCastRecipe *r, QCase **cases) {
  static const double scales[4] = {1.0, 1.0 / 7.0, 3.7, 300.0};
  unsigned w = r->dst.bits, ne = r->n_values, n = 0, cap = 1024;
  int off = r->dst.kind == TL_DTYPE_INT ? 1 << (w - 1) : 0;
  int zeros[3] = {0, (1 << (w - 1)) - off, (1 << w) - 1 - off};
  QCase *c = malloc(cap * sizeof *c);
  uint64_t seed = 7;
  for (unsigned si = 0; si < 5; si++) {
    /* si == 4: the rounding cast's (1, 0), after the verifier's pairs */
    uint32_t sc = (uint32_t)tl_dtype_encode(r->src, si < 4 ? scales[si] : 1.0);
    for (unsigned zi = 0; zi < (si < 4 ? 3u : 1u); zi++) {
      int z = si < 4 ? zeros[zi] : 0;
      unsigned count = r->src.bits == 16
                           ? (si == 4 || (si == 1 && zi == 1)
                                  ? 65536 / ne
                                  : (65536 + 29 * ne - 1) / (29 * ne))
                           : (si == 4 ? 4096 / ne : 256);
      for (unsigned t = 0; t < count; t++) {
        if (n == cap)
          c = realloc(c, (cap *= 2) * sizeof *c);
        QCase *q = &c[n++];
        q->scale = sc;
        q->zero = z;
        unsigned stride = si == 4 || (si == 1 && zi == 1) ? 1 : 29;
        double s = tl_dtype_decode(r->src, sc);
        for (unsigned e = 0; e < ne; e++) {
          if (r->src.bits == 16) {
            q->elems[e] = (t * stride * ne + e * 4099u) & 0xffff;
            continue;
          }
          uint64_t zz = splitmix(&seed);
          if (zz & 1)
            q->elems[e] = (uint32_t)(zz >> 32);
          else {
            double kk =
                (double)((int)((zz >> 8) % 64) - 32) + 0.5 * ((zz >> 20) & 1);
            q->elems[e] = (uint32_t)tl_dtype_encode(r->src, kk / s);
          }
        }
      }
    }
  }
  *cases = c;
  return n;
}

/* The rounding cast's reference, from the decoded value alone: rne(x)
 * saturated to the type's range, NaN to 0 (uN) or the low end (iN, as the
 * recipe: tl.cast's lowering maps NaN to 0 before it). */
static uint64_t round_ref(TlDType q, double x) {
  int64_t lo = q.kind == TL_DTYPE_INT ? -(INT64_C(1) << (q.bits - 1)) : 0;
  int64_t hi = q.kind == TL_DTYPE_INT ? (INT64_C(1) << (q.bits - 1)) - 1
                                      : (INT64_C(1) << q.bits) - 1;
  int64_t v;
  if (isnan(x) || x <= (double)lo)
    v = lo;
  else if (x >= (double)hi)
    v = hi;
  else {
    double f = floor(x), d = x - f;
    v = (int64_t)f + (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0));
  }
  return (uint64_t)v & ((UINT64_C(1) << q.bits) - 1);
}

/* Quantises n values per thread with r on the VM over quant_cases' groups
 * (n values from consecutive groups' elements), in the order perm, and
 * compares every code bit for bit with tl_cast_recipe_run on the group's
 * words (the codes of full groups are its output word), with
 * tl_kv_quant_ref, and under (1, 0) with round_ref; bits past the last
 * code must be zero. Full groups also check the documented cost. */
static void check_quant(const TlCastRecipe *r, unsigned n,
                        const unsigned *perm) {
  Diags diags = {{0}};
  Kernel k;
  kernel_init(&k, &diags);
  unsigned cost = 0, ne = r->n_values, w = r->dst.bits;
  if (!add_quant_kernel(&k, "quant", r, n, perm, &cost)) {
    kernel_fini(&k);
    tl_str_free(&diags.text);
    return;
  }
  bool verified = !TL_FAILED(tl_verify(tl_module_op(k.m)));
  CHECK(verified);
  if (n == ne && !perm) {
    /* the recipe's ops plus one prmt per input word whose halves are not
     * one source word's in order */
    unsigned expect = r->n_ops - r->n_const_ops;
    for (unsigned j = 0; r->src.bits == 16 && j < ne / 2; j++) {
      unsigned a = 0, b = 0;
      for (unsigned i = 0; i < ne; i++) {
        if (r->value_of[i] == 2 * j)
          a = i;
        if (r->value_of[i] == 2 * j + 1)
          b = i;
      }
      expect += !(a % 2 == 0 && b == a + 1);
    }
    CHECK_EQ_INT(cost, expect);
    if (verbose)
      printf("%-4s -> %-2s quant: %u instructions per %u values\n",
             tl_dtype_name(r->src), tl_dtype_name(r->dst), cost, n);
  }
  QCase *cases;
  unsigned ncases = quant_cases(r, &cases);
  /* thread t quantises the values of groups t*span .. under group t*span's
   * parameters; every group's values are someone's */
  unsigned span = (n + ne - 1) / ne;
  unsigned threads = (ncases / span + 31) / 32 * 32;
  unsigned nin = tl_cast_recipe_words(r->src.bits, n);
  unsigned nout = tl_cast_recipe_words(w, n);
  uint32_t *inw = calloc((size_t)threads * nin, 4);
  uint32_t *par = calloc((size_t)threads * 2, 4);
  uint32_t *outw = calloc((size_t)threads * nout, 4);
  uint32_t *vals = calloc((size_t)threads * n, 4);
  TlErr err = {{0}};
  for (unsigned t = 0; t < threads; t++) {
    const QCase *q0 = &cases[(size_t)t * span % ncases];
    CHECK(tl_kv_quant_params(r, q0->scale, q0->zero, par + 2 * t, &err));
    for (unsigned i = 0; i < n; i++) {
      const QCase *q = &cases[((size_t)t * span + i / ne) % ncases];
      /* source value i is recipe element value_of[i % ne] of its group */
      uint32_t v = q->elems[r->value_of[i % ne]];
      vals[(size_t)t * n + i] = v;
      if (r->src.bits == 16)
        inw[(size_t)t * nin + i / 2] |= v << (16 * (i % 2));
      else
        inw[(size_t)t * nin + i] = v;
    }
  }
  bool ran = false;
  if (verified) {
    TlSimtVm *vm = tl_simt_vm_create(k.ctx);
    TlSimtLaunch l = {{threads / 32, 1, 1}, {32, 1, 1}, 0};
    TlVmArg args[3] = {
        tl_vm_arg_buffer(inw, (size_t)threads * nin * 4, tl_dtype_uint(8)),
        tl_vm_arg_buffer(par, (size_t)threads * 8, tl_dtype_uint(8)),
        tl_vm_arg_buffer(outw, (size_t)threads * nout * 4, tl_dtype_uint(8))};
    TlOp *fn = tl_simt_vm_find_kernel(k.m, "quant");
    ran = fn && !TL_FAILED(tl_simt_vm_run(vm, fn, &l, 3, args));
    CHECK(ran);
    tl_simt_vm_destroy(vm);
  }
  unsigned bad = 0;
  uint32_t mask = (1u << w) - 1;
  for (unsigned t = 0; ran && t < threads && bad < 4; t++) {
    const uint32_t *o = outw + (size_t)t * nout;
    const uint32_t *v = vals + (size_t)t * n;
    const QCase *q0 = &cases[(size_t)t * span % ncases];
    double scale = tl_dtype_decode(r->src, q0->scale);
    for (unsigned g = 0; g * ne < n && bad < 4; g++) {
      /* the emulator on this group's values, placed as the recipe wants */
      uint32_t rin[TL_RECIPE_MAX_WORDS] = {0}, rout[1];
      for (unsigned i = 0; i < ne; i++) {
        unsigned src = g * ne + i;
        unsigned at = perm && src < n ? perm[src] : src;
        uint32_t x = at < n ? v[at] : 0;
        unsigned el = r->value_of[i];
        if (r->src.bits == 16)
          rin[el / 2] |= x << (16 * (el % 2));
        else
          rin[el] = x;
      }
      CHECK(tl_cast_recipe_run(r, rin, par + 2 * t, rout, &err));
      for (unsigned i = 0; i < ne && g * ne + i < n && bad < 4; i++) {
        unsigned idx = g * ne + i;
        unsigned at = perm ? perm[idx] : idx;
        uint32_t got = (o[idx * w / 32] >> (idx * w % 32)) & mask;
        uint32_t emu = (rout[0] >> (i * w)) & mask;
        double x = tl_dtype_decode(r->src, v[at]);
        uint64_t ref = tl_kv_quant_ref(r->dst, x, scale, q0->zero);
        bool unit = scale == 1.0 && q0->zero == 0;
        if (got != emu || got != ref || (unit && got != round_ref(r->dst, x))) {
          bad++;
          fprintf(stderr,
                  "%s -> %s, %u values: thread %u code %u (input 0x%x, "
                  "scale %g, zero %d): got 0x%x, emulator 0x%x, reference "
                  "0x%llx\n",
                  tl_dtype_name(r->src), tl_dtype_name(r->dst), n, t, idx,
                  v[at], scale, q0->zero, got, emu, (unsigned long long)ref);
        }
      }
    }
    if (n * w % 32 && (o[nout - 1] >> (n * w % 32)) != 0) {
      bad++;
      fprintf(stderr, "%s -> %s, %u values: thread %u: padding 0x%x\n",
              tl_dtype_name(r->src), tl_dtype_name(r->dst), n, t, o[nout - 1]);
    }
  }
  CHECK_EQ_INT(bad, 0);
  fputs(tl_str_cstr(&diags.text), stderr);
  free(cases);
  free(inw);
  free(par);
  free(outw);
  free(vals);
  kernel_fini(&k);
  tl_str_free(&diags.text);
}

/* simt.max and simt.min on the VM, against PTX's rule written out on the
 * decoded values: every pair of 16-bit operands from a set of specials
 * (both zeros, infinities, quiet and signalling NaNs of either sign,
 * subnormals, the extremes) and random codes, for f16, bf16 and f32. */
static void test_maxmin(void) {
  static const char *text =
      "func @mm(%p: !simt.ptr<global>, %q: !simt.ptr<global>, %o: "
      "!simt.ptr<global>) attributes {kernel} {\n"
      "  %t = simt.thread_id {dim = \"x\"} : -> i32\n"
      "  %b = simt.block_id {dim = \"x\"} : -> i32\n"
      "  %c32 = arith.constant 32 : i32\n"
      "  %c4 = arith.constant 4 : i32\n"
      "  %g0 = arith.muli %b, %c32 : i32\n"
      "  %g = arith.addi %g0, %t : i32\n"
      "  %off = arith.muli %g, %c4 : i32\n"
      "  %c8 = arith.constant 8 : i32\n"
      "  %off6 = arith.muli %off, %c8 : i32\n"
      "  %pa = simt.ptr_add %p, %off : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  %pb = simt.ptr_add %q, %off : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  %x = simt.load %pa : !simt.ptr<global> -> u32\n"
      "  %y = simt.load %pb : !simt.ptr<global> -> u32\n"
      "  %hx = simt.bitcast %x : u32 -> !simt.vec<2xf16>\n"
      "  %hy = simt.bitcast %y : u32 -> !simt.vec<2xf16>\n"
      "  %bx = simt.bitcast %x : u32 -> !simt.vec<2xbf16>\n"
      "  %by = simt.bitcast %y : u32 -> !simt.vec<2xbf16>\n"
      "  %fx = arith.bitcast %x : u32 to f32\n"
      "  %fy = arith.bitcast %y : u32 to f32\n"
      "  %h1 = simt.max %hx, %hy : !simt.vec<2xf16>, !simt.vec<2xf16> -> "
      "!simt.vec<2xf16>\n"
      "  %h2 = simt.min %hx, %hy : !simt.vec<2xf16>, !simt.vec<2xf16> -> "
      "!simt.vec<2xf16>\n"
      "  %b1 = simt.max %bx, %by : !simt.vec<2xbf16>, !simt.vec<2xbf16> -> "
      "!simt.vec<2xbf16>\n"
      "  %b2 = simt.min %bx, %by : !simt.vec<2xbf16>, !simt.vec<2xbf16> -> "
      "!simt.vec<2xbf16>\n"
      "  %f1 = simt.max %fx, %fy : f32, f32 -> f32\n"
      "  %f2 = simt.min %fx, %fy : f32, f32 -> f32\n"
      "  %w1 = simt.bitcast %h1 : !simt.vec<2xf16> -> u32\n"
      "  %w2 = simt.bitcast %h2 : !simt.vec<2xf16> -> u32\n"
      "  %w3 = simt.bitcast %b1 : !simt.vec<2xbf16> -> u32\n"
      "  %w4 = simt.bitcast %b2 : !simt.vec<2xbf16> -> u32\n"
      "  %w5 = arith.bitcast %f1 : f32 to u32\n"
      "  %w6 = arith.bitcast %f2 : f32 to u32\n"
      "  %v = simt.build %w1, %w2, %w3, %w4 : u32, u32, u32, u32 -> "
      "!simt.vec<4xu32>\n"
      "  %po = simt.ptr_add %o, %off6 : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  simt.store %v, %po : !simt.vec<4xu32>, !simt.ptr<global>\n"
      "  %c16 = arith.constant 16 : i32\n"
      "  %pf = simt.ptr_add %po, %c16 : !simt.ptr<global>, i32 -> "
      "!simt.ptr<global>\n"
      "  %u = simt.build %w5, %w6 : u32, u32 -> !simt.vec<2xu32>\n"
      "  simt.store %u, %pf : !simt.vec<2xu32>, !simt.ptr<global>\n"
      "  return\n"
      "}\n";
  /* 16-bit specials; as the halves of a word, and as f32 high halves */
  static const uint16_t sp[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00,
                                0x7c01, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001,
                                0x8001, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7f7f};
  enum { NS = sizeof sp / sizeof sp[0], NT = 32 * 16 };
  static uint32_t a[NT], b[NT], out[NT][8];
  for (unsigned t = 0; t < NT; t++) {
    unsigned i = t % (NS * NS), j = i / NS;
    i %= NS;
    uint32_t lo_a = t < NS * NS ? sp[i] : rnd() & 0xffff;
    uint32_t lo_b = t < NS * NS ? sp[j] : rnd() & 0xffff;
    /* the high halves: the other order, or random; as f32 the words are
     * the specials' f32 patterns in the high bits */
    a[t] = lo_a | (t < NS * NS ? lo_b : rnd() & 0xffff) << 16;
    b[t] = lo_b | (t < NS * NS ? lo_a : rnd() & 0xffff) << 16;
    if (t >= 2 * NS * NS && t < 3 * NS * NS) { /* f32 specials */
      a[t] = (uint32_t)sp[i] << 16 | (t & 1);
      b[t] = (uint32_t)sp[j] << 16;
    }
  }
  Diags diags = {{0}};
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  tl_diag_set_handler(tl_context_diag(ctx), capture, &diags);
  TlModule *m = tl_parse_module(ctx, "mm.tl", text, strlen(text), 1);
  CHECK(m && !TL_FAILED(tl_verify(tl_module_op(m))));
  TlSimtVm *vm = tl_simt_vm_create(ctx);
  TlSimtLaunch l = {{NT / 32, 1, 1}, {32, 1, 1}, 0};
  TlVmArg args[3] = {tl_vm_arg_buffer(a, sizeof a, tl_dtype_uint(8)),
                     tl_vm_arg_buffer(b, sizeof b, tl_dtype_uint(8)),
                     tl_vm_arg_buffer(out, sizeof out, tl_dtype_uint(8))};
  bool ran = m && !TL_FAILED(tl_simt_vm_run_named(vm, m, NULL, &l, 3, args));
  CHECK(ran);
  TlDType types[3] = {tl_dtype_f16(), tl_dtype_bf16(), tl_dtype_f32()};
  unsigned bad = 0;
  for (unsigned t = 0; ran && t < NT; t++)
    for (unsigned ty = 0; ty < 3; ty++)
      for (unsigned h = 0; h < (ty < 2 ? 2u : 1u); h++)
        for (unsigned mx = 0; mx < 2; mx++) {
          unsigned bits = ty < 2 ? 16 : 32, sh = 16 * h;
          uint64_t m16 = bits == 16 ? 0xffff : 0xffffffff;
          uint64_t x = (a[t] >> sh) & m16, y = (b[t] >> sh) & m16;
          double dx = tl_dtype_decode(types[ty], x),
                 dy = tl_dtype_decode(types[ty], y);
          /* out[t]: f16 max, min, bf16 max, min, f32 max, min */
          uint64_t got = (out[t][2 * ty + (1 - mx)] >> sh) & m16;
          bool ok;
          if (isnan(dx) && isnan(dy))
            ok = tl_dtype_code_is_nan(types[ty], got);
          else if (isnan(dx))
            ok = got == y;
          else if (isnan(dy))
            ok = got == x;
          else if (dx == dy && signbit(dx) != signbit(dy)) /* +-0 */
            ok = got == ((signbit(dx) != 0) == (mx == 0) ? x : y);
          else
            ok = got == ((mx ? dx > dy : dx < dy) ? x : dx == dy ? x : y);
          if (!ok && bad++ < 4)
            fprintf(stderr, "%s %s(0x%llx, 0x%llx) = 0x%llx\n",
                    tl_dtype_name(types[ty]), mx ? "max" : "min",
                    (unsigned long long)x, (unsigned long long)y,
                    (unsigned long long)got);
        }
  CHECK_EQ_INT(bad, 0);
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
 * hmul2 (f6e3m2 -> f16), cvt.f16x2.e4m3x2 (f8e4m3 -> f16), bytes
 * (f8e5m2 -> f16), prmt.r (f4e2m1 -> f16), cvt and cvt_pack (f8e4m3 ->
 * bf16), fsub (u8 -> f32). */
static int print_kinds(void) {
  static const struct {
    const char *name, *src, *dst;
  } kinds[] = {
      {"magic_u4_f16", "u4", "f16"},
      {"magic_i3_bf16", "i3", "bf16"},
      {"magic_u4_f32", "u4", "f32"},
      {"magic_u8_f32", "u8", "f32"},
      {"rebias_f6e3m2_f32", "f6e3m2", "f32"},
      {"rebias_f6e3m2_f16", "f6e3m2", "f16"},
      {"cvt_f8e4m3_f16", "f8e4m3", "f16"},
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
  test_maxmin();
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
  /* The quantising recipes: a full group over the verifier's inputs and
   * the rounding cast's, partial groups, and a reversed order within each
   * group (every input word then needs its halves placed). */
  unsigned quants = 0;
  for (size_t i = 0; i < n; i++) {
    const TlCastRecipe *r = &all[i];
    if (r->kind != TL_RECIPE_QUANT)
      continue;
    quants++;
    unsigned nv = r->n_values, rev[3 * TL_RECIPE_MAX_VALUES];
    check_quant(r, nv, NULL);
    check_quant(r, 1, NULL);
    check_quant(r, nv - 1, NULL);
    unsigned m = 2 * nv + 3;
    for (unsigned j = 0; j < m; j++) {
      unsigned g = j / nv * nv, len = m - g < nv ? m - g : nv;
      rev[j] = g + (len - 1 - (j - g));
    }
    check_quant(r, m, rev);
  }
  CHECK_EQ_INT(quants, 18); /* f16, bf16, f32 x u2 u4 u8 i2 i4 i8 */
  return unit_report();
}
