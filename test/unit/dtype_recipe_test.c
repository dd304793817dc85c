/* Unit tests of the device cast recipes: coverage (every type of at most
 * 8 bits has a recipe to f16, bf16 and f32), every recipe verified bit for
 * bit by running it in the register-op emulator against the host codec,
 * hand-checked recipes (the Marlin u4 constants), the checker catching a
 * broken recipe, and the quantising recipes against tl_kv_quant_ref. */
#include "tl/dtype.h"
#include "unit.h"

#include <math.h>

static TlDType ty(const char *s) {
  TlDType t = {0, 0, 0, 0};
  CHECK(tl_dtype_parse(s, strlen(s), &t));
  return t;
}

static void coverage_cb(TlDType t, void *user) {
  unsigned *n = user;
  TlDType dsts[3] = {tl_dtype_f16(), tl_dtype_bf16(), tl_dtype_f32()};
  for (unsigned d = 0; d < 3; d++) {
    const TlCastRecipe *r = tl_cast_recipe_find(t, dsts[d]);
    CHECK(r != NULL);
    if (!r)
      continue;
    (*n)++;
    CHECK(tl_dtype_eq(r->src, t) && tl_dtype_eq(r->dst, dsts[d]));
    CHECK(r->n_ops <= TL_RECIPE_MAX_OPS && r->n_regs <= 255);
    CHECK(r->summary && *r->summary);
  }
}

static void test_coverage(void) {
  unsigned n = 0;
  tl_dtype_foreach_small(coverage_cb, &n);
  CHECK_EQ_INT(n, 44 * 3);
  CHECK(tl_cast_recipe_find(tl_dtype_f16(), tl_dtype_f32()) == NULL);
  CHECK(tl_cast_recipe_find(ty("u4"), ty("u8")) == NULL);
  size_t count;
  const TlCastRecipe *all = tl_cast_recipe_all(&count);
  CHECK_EQ_INT(count, 44 * 3 + 18);
  CHECK(all != NULL);
}

/* The data form is clean for the lowering: operands beyond an op's arity
 * and imm of ops without one are 0, every operand register is defined
 * before it is read (inputs and parameters count as defined), and every
 * output register is defined. */
static void test_data_form(void) {
  size_t n;
  const TlCastRecipe *all = tl_cast_recipe_all(&n);
  unsigned bad = 0;
  for (size_t i = 0; i < n; i++) {
    const TlCastRecipe *r = &all[i];
    bool defined[256] = {0};
    for (unsigned k = 0; k < r->n_in_words + r->n_params; k++)
      defined[k] = true;
    for (unsigned k = 0; k < r->n_ops; k++) {
      const TlRegOp *o = &r->ops[k];
      TlRegOpcode op = (TlRegOpcode)o->op;
      unsigned nreg = tl_regop_num_operands(op);
      const uint8_t src[3] = {o->a, o->b, o->c};
      for (unsigned j = 0; j < 3; j++)
        bad += j < nreg ? !defined[src[j]] : src[j] != 0;
      bad += !tl_regop_has_imm(op) && o->imm != 0;
      bad += strcmp(tl_regop_name(op), "?") == 0;
      bad += defined[o->dst]; /* single assignment */
      defined[o->dst] = true;
    }
    for (unsigned j = 0; j < r->n_out_words; j++)
      bad += !defined[r->out_regs[j]];
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(tl_regop_num_operands(TL_ROP_HFMA2), 3);
  CHECK_EQ_INT(tl_regop_num_operands(TL_ROP_COUNT_), 0);
  CHECK_EQ_STR(tl_regop_name(TL_ROP_COUNT_), "?");
}

/* arrange + run = the codes, decoded, in logical order, for every cast
 * recipe; and for u4 -> f16 the arranged word is Marlin's interleave. */
static void test_arrange(void) {
  size_t n;
  const TlCastRecipe *all = tl_cast_recipe_all(&n);
  unsigned bad = 0;
  uint64_t seed = 99;
  for (size_t i = 0; i < n; i++) {
    const TlCastRecipe *r = &all[i];
    if (r->kind == TL_RECIPE_QUANT)
      continue;
    for (unsigned t = 0; t < 8; t++) {
      uint64_t codes[TL_RECIPE_MAX_VALUES];
      uint32_t in[TL_RECIPE_MAX_WORDS], out[TL_RECIPE_MAX_WORDS];
      for (unsigned e = 0; e < r->n_values; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        codes[e] = (seed >> 33) & ((1u << r->src.bits) - 1);
      }
      tl_cast_recipe_arrange(r, codes, in);
      if (!tl_cast_recipe_run(r, in, NULL, out, NULL)) {
        bad++;
        continue;
      }
      for (unsigned e = 0; e < r->n_values; e++) {
        uint64_t want =
            tl_dtype_encode(r->dst, tl_dtype_decode(r->src, codes[e]));
        uint32_t got = r->dst.bits == 32
                           ? out[e]
                           : (out[e / 2] >> (16 * (e % 2))) & 0xffff;
        if (tl_dtype_code_is_nan(r->dst, want))
          bad += !tl_dtype_code_is_nan(r->dst, got);
        else
          bad += got != want;
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  const TlCastRecipe *u4 = tl_cast_recipe_find(ty("u4"), tl_dtype_f16());
  uint64_t logical[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  uint32_t w;
  tl_cast_recipe_arrange(u4, logical, &w);
  CHECK_EQ_INT(w, 0x75316420u); /* nibbles v0 v2 v4 v6 v1 v3 v5 v7 */
}

static void test_verify_all(void) {
  size_t n;
  const TlCastRecipe *all = tl_cast_recipe_all(&n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    TlErr err = {{0}};
    uint64_t c = 0;
    bool ok = tl_cast_recipe_verify(&all[i], &c, &err);
    CHECK(ok);
    if (!ok)
      fprintf(stderr, "%s\n", err.msg);
    CHECK(c > 0);
    total += c;
  }
  printf("%llu recipe outputs compared\n", (unsigned long long)total);
}

/* Marlin's u4 -> f16: lop3 with 0x000f000f / 0x00f000f0 and 0x64006400,
 * one shift by 8, hsub2 of 1024 (as hadd2 of -1024) and hfma2 by 1/16
 * (0x2c00) and -64 (0xd400): nine ops for eight values, output pairs
 * (0,4) (1,5) (2,6) (3,7). */
static void test_marlin_u4(void) {
  const TlCastRecipe *r = tl_cast_recipe_find(ty("u4"), tl_dtype_f16());
  CHECK(r && r->kind == TL_RECIPE_MAGIC);
  if (!r)
    return;
  CHECK_EQ_INT(r->n_ops - r->n_const_ops, 9);
  static const uint8_t order[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  CHECK(memcmp(r->value_of, order, 8) == 0);
  bool seen[5] = {0};
  static const uint32_t consts[5] = {0x000f000fu, 0x00f000f0u, 0x64006400u,
                                     0x2c002c00u, 0xd400d400u};
  for (unsigned i = 0; i < r->n_ops; i++)
    for (unsigned k = 0; k < 5; k++)
      if (r->ops[i].op == TL_ROP_MOV && r->ops[i].imm == consts[k])
        seen[k] = true;
  for (unsigned k = 0; k < 5; k++)
    CHECK(seen[k]);
  /* one word by hand: nibbles 0..7 = 0x76543210 */
  uint32_t in = 0x76543210u, out[4];
  CHECK(tl_cast_recipe_run(r, &in, NULL, out, NULL));
  CHECK_EQ_INT(out[0], 0x44000000u); /* (0, 4) = 0.0, 4.0 */
  CHECK_EQ_INT(out[1], 0x45003c00u); /* (1, 5) */
  CHECK_EQ_INT(out[3], 0x47004200u); /* (3, 7) */
  /* i4: signed, and -8 (nibble 8) decodes to -8.0 */
  const TlCastRecipe *s = tl_cast_recipe_find(ty("i4"), tl_dtype_f16());
  in = 0x00000008u;
  CHECK(s && tl_cast_recipe_run(s, &in, NULL, out, NULL));
  CHECK_EQ_INT(out[0] & 0xffff, 0xc800u);
  /* f8e5m2 -> f16 is pure byte placement, natural order */
  const TlCastRecipe *e5 = tl_cast_recipe_find(ty("f8e5m2"), tl_dtype_f16());
  in = 0xfc7c3c01u; /* -inf, inf, 1.0, 2^-16 */
  CHECK(e5 && tl_cast_recipe_run(e5, &in, NULL, out, NULL));
  CHECK_EQ_INT(out[0], 0x3c000100u);
  CHECK_EQ_INT(out[1], 0xfc007c00u);
  /* f6e3m2 -1*0 keeps its sign through a rebias recipe */
  const TlCastRecipe *e3 = tl_cast_recipe_find(ty("f6e3m2"), tl_dtype_bf16());
  CHECK(e3 != NULL);
}

/* The checker must notice a wrong constant, a wrong layout and a missing
 * NaN fix. */
static void test_checker_catches(void) {
  static TlCastRecipe bad;
  TlErr err = {{0}};
  bad = *tl_cast_recipe_find(ty("u4"), tl_dtype_f16());
  for (unsigned i = 0; i < bad.n_ops; i++)
    if (bad.ops[i].op == TL_ROP_MOV && bad.ops[i].imm == 0xd400d400u)
      bad.ops[i].imm = 0xd402d400u; /* -64.125 in the high half */
  CHECK(!tl_cast_recipe_verify(&bad, NULL, &err));
  CHECK(strstr(err.msg, "u4 -> f16") != NULL);
  bad = *tl_cast_recipe_find(ty("u4"), tl_dtype_f16());
  bad.value_of[1] = 1, bad.value_of[2] = 4; /* swapped claim */
  CHECK(!tl_cast_recipe_verify(&bad, NULL, &err));
  /* f8e4m3's NaN read as a finite value: the cvt recipe's outputs through
   * min(x, 448), which keeps every e4m3 value and turns NaN into 448. */
  bad = *tl_cast_recipe_find(ty("f8e4m3"), tl_dtype_f16());
  CHECK_EQ_INT(bad.kind, TL_RECIPE_CVT);
  uint8_t c448 = (uint8_t)bad.n_regs;
  bad.ops[bad.n_ops++] = (TlRegOp){TL_ROP_MOV, c448, 0, 0, 0, 0x5f005f00u};
  for (unsigned j = 0; j < bad.n_out_words; j++) {
    uint8_t d = (uint8_t)(c448 + 1 + j);
    bad.ops[bad.n_ops++] = (TlRegOp){TL_ROP_HMIN2, d, bad.out_regs[j], c448, 0, 0};
    bad.out_regs[j] = d;
  }
  bad.n_regs += 1 + bad.n_out_words;
  bad.n_const_ops++;
  CHECK(!tl_cast_recipe_verify(&bad, NULL, &err));
  CHECK(strstr(err.msg, "0x7f") != NULL || strstr(err.msg, "0xff") != NULL);
  bad = *tl_cast_recipe_find(tl_dtype_f16(), ty("i4"));
  for (unsigned i = 0; i < bad.n_ops; i++)
    if (bad.ops[i].op == TL_ROP_HMAX2)
      bad.ops[i].op = TL_ROP_HADD2 + 0; /* clamp gone */
  CHECK(!tl_cast_recipe_verify(&bad, NULL, &err));
}

static void test_kv_reference(void) {
  TlDType i4 = ty("i4"), u4 = ty("u4"), u2 = ty("u2");
  CHECK_EQ_INT(tl_kv_quant_ref(i4, 2.5, 1.0, 0), 2);  /* tie to even */
  CHECK_EQ_INT(tl_kv_quant_ref(i4, 2.5, 1.0, 1), 4);  /* rne(3.5) = 4 */
  CHECK_EQ_INT(tl_kv_quant_ref(i4, -9.0, 1.0, 0), 8); /* clamp to -8 */
  CHECK_EQ_INT(tl_kv_quant_ref(i4, 100, 1.0, 0), 7);
  CHECK_EQ_INT(tl_kv_quant_ref(i4, NAN, 1.0, 0), 8); /* NaN -> lowest */
  CHECK_EQ_INT(tl_kv_quant_ref(u4, -0.4, 1.0, 0), 0);
  CHECK_EQ_INT(tl_kv_quant_ref(u4, 3.0, 0.5, 8), 10); /* 1.5 + 8 -> 10 */
  CHECK_EQ_INT(tl_kv_quant_ref(u2, INFINITY, 1.0, 0), 3);
  const TlCastRecipe *r = tl_cast_recipe_find(tl_dtype_f16(), i4);
  uint32_t params[2];
  TlErr err = {{0}};
  CHECK(r && r->kind == TL_RECIPE_QUANT);
  CHECK(!tl_kv_quant_params(r, 0x3c00, 8, params, &err)); /* 8 + 8 > 15 */
  CHECK(strstr(err.msg, "out of range") != NULL);
  CHECK(tl_kv_quant_params(r, 0x3c00, -8, params, NULL));
  CHECK_EQ_INT(params[0], 0x3c003c00u);
  /* by hand: x = {0,1,...,7} as f16, scale 1, zero 0 */
  uint32_t in[4], out;
  for (unsigned k = 0; k < 4; k++)
    in[k] = (uint32_t)tl_dtype_encode(tl_dtype_f16(), 2.0 * k) |
            (uint32_t)tl_dtype_encode(tl_dtype_f16(), 2.0 * k + 1) << 16;
  CHECK(tl_kv_quant_params(r, 0x3c00, 0, params, NULL));
  CHECK(tl_cast_recipe_run(r, in, params, &out, NULL));
  for (unsigned i = 0; i < 8; i++)
    CHECK_EQ_INT((out >> (4 * i)) & 0xf, r->value_of[i]);
}

/* The interleave of a recipe (the weight packers' order): Marlin's 4 for
 * u4, 16 for u1, values in order for u8, none for u3's irregular order,
 * and for every recipe either 0 or a d whose pairing value_of shows. */
static void test_interleave(void) {
  static const struct {
    const char *src;
    unsigned d;
  } cases[] = {{"u4", 4}, {"i4", 4}, {"u1", 16}, {"u2", 8}, {"u5", 4},
               {"u7", 2}, {"u8", 1}, {"i8", 2}, {"u3", 4}, {"u6", 2},
               {"f6e3m2", 0}, {"f6e2m3", 8}, {"f8e4m3", 1}};
  TlDType f16 = tl_dtype_f16();
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    TlDType s;
    CHECK(tl_dtype_parse(cases[i].src, strlen(cases[i].src), &s));
    const TlCastRecipe *r = tl_cast_recipe_find(s, f16);
    CHECK(r != NULL);
    if (r)
      CHECK_EQ_INT(tl_cast_recipe_interleave(r), cases[i].d);
  }
  size_t n;
  const TlCastRecipe *all = tl_cast_recipe_all(&n);
  for (size_t i = 0; i < n; i++) {
    unsigned d = tl_cast_recipe_interleave(&all[i]);
    for (unsigned j = 0; d && 2 * j < all[i].n_values; j++) {
      unsigned p = j / d * 2 * d + j % d;
      CHECK(all[i].value_of[2 * j] == p && all[i].value_of[2 * j + 1] == p + d);
    }
    if (all[i].kind == TL_RECIPE_QUANT || all[i].dst.bits != 16)
      CHECK_EQ_INT(d, 0);
  }
}

int main(void) {
  test_coverage();
  test_marlin_u4();
  test_checker_catches();
  test_kv_reference();
  test_data_form();
  test_arrange();
  test_interleave();
  test_verify_all();
  return unit_report();
}
