/* Unit tests of lib/dtype's host side: the type family, the codec (every
 * code point of every type of at most 16 bits, and encode of random
 * doubles against a brute-force nearest-code search), compact packing
 * against a bit-by-bit model, the exact f16/bf16/f32 arithmetic of the
 * register-op emulator, and the quantisers. */
#include "tl/dtype.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>

static uint64_t rng_state = 0x1234567;
static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rnd_unit(void) {
  return (double)(rnd() >> 11) / 9007199254740992.0;
}

static TlDType ty(const char *s) {
  TlDType t = {0, 0, 0, 0};
  CHECK(tl_dtype_parse(s, strlen(s), &t));
  return t;
}

/*---- the family ----*/

static unsigned n_small;
static void count_and_roundtrip(TlDType t, void *user) {
  (void)user;
  TlDType back;
  const char *name = tl_dtype_name(t);
  n_small++;
  CHECK(tl_dtype_is_valid(t));
  CHECK(tl_dtype_parse(name, strlen(name), &back));
  CHECK(tl_dtype_eq(back, t));
  CHECK(tl_dtype_bits(t) <= 8);
}

static void test_family(void) {
  CHECK_EQ_INT(tl_dtype_foreach_small(count_and_roundtrip, NULL), 44);
  CHECK_EQ_INT(n_small, 44); /* bool + 8 uN + 7 iN + 28 fNeXmY */
  CHECK_EQ_STR(tl_dtype_name(tl_dtype_small_float(4, 3)), "f8e4m3");
  CHECK_EQ_STR(tl_dtype_name(tl_dtype_small_float(1, 0)), "f2e1m0");
  CHECK_EQ_STR(tl_dtype_name(tl_dtype_bf16()), "bf16");
  CHECK_EQ_STR(tl_dtype_name(tl_dtype_uint(64)), "u64");
  CHECK_EQ_STR(tl_dtype_name(tl_dtype_int(1)), "<invalid>");
  CHECK(tl_dtype_eq(ty("i1"), tl_dtype_bool()));
  CHECK(tl_dtype_eq(ty("f16"), tl_dtype_f16()));
  static const char *bad[] = {"",       "u0",     "u9",       "i1x", "f9e4m4",
                              "f8e0m7", "f8e4m4", "f16e5m10", "F16", "u08",
                              "bool ",  "i128",   "f8e4m3fn"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    TlDType t = tl_dtype_bool();
    CHECK(!tl_dtype_parse(bad[i], strlen(bad[i]), &t));
    CHECK(tl_dtype_eq(t, tl_dtype_bool())); /* untouched */
  }
  CHECK(!tl_dtype_parse(NULL, 0, &(TlDType){0}));
  /* the OCP and family maxima */
  CHECK(tl_dtype_max(ty("f8e4m3")) == 448.0);
  CHECK(tl_dtype_max(ty("f8e5m2")) == 57344.0);
  CHECK(tl_dtype_max(ty("f6e3m2")) == 28.0);
  CHECK(tl_dtype_max(ty("f6e2m3")) == 7.5);
  CHECK(tl_dtype_max(ty("f4e2m1")) == 6.0);
  CHECK(tl_dtype_max(ty("f3e1m1")) == 3.0);
  CHECK(tl_dtype_max(ty("f2e1m0")) == 2.0);
  CHECK(tl_dtype_max(ty("f16")) == 65504.0);
  CHECK(tl_dtype_max(ty("bf16")) == ldexp(255.0, 120));
  CHECK(tl_dtype_min(ty("i4")) == -8.0 && tl_dtype_max(ty("i4")) == 7.0);
  CHECK(tl_dtype_min(ty("u3")) == 0.0 && tl_dtype_max(ty("u3")) == 7.0);
  CHECK_EQ_INT(tl_dtype_bias(ty("f8e4m3")), 7);
  CHECK_EQ_INT(tl_dtype_bias(ty("f3e1m1")), 0);
  CHECK(tl_dtype_specials(ty("f8e5m2")) == TL_FLOAT_IEEE);
  CHECK(tl_dtype_specials(ty("f8e4m3")) == TL_FLOAT_FN);
  CHECK(tl_dtype_specials(ty("f7e4m2")) == TL_FLOAT_FINITE);
  CHECK(tl_dtype_is_signed(ty("f4e2m1")) && !tl_dtype_is_signed(ty("u8")));
}

/*---- codec: every code point ----*/

static void roundtrip_type(TlDType t) {
  uint64_t nan = 0;
  bool has_nan = tl_dtype_nan_code(t, &nan);
  unsigned bad = 0;
  for (uint64_t c = 0; c < ((uint64_t)1 << t.bits); c++) {
    double v = tl_dtype_decode(t, c);
    uint64_t back = tl_dtype_encode(t, v);
    if (isnan(v)) {
      /* NaN codes all encode to the one canonical NaN */
      bad += !(has_nan && back == nan && tl_dtype_code_is_nan(t, back));
      continue;
    }
    bad += back != c; /* includes -0 -> the negative-zero code */
  }
  if (bad)
    fprintf(stderr, "%s: %u code points do not round-trip\n", tl_dtype_name(t),
            bad);
  CHECK_EQ_INT(bad, 0);
}

static void roundtrip_cb(TlDType t, void *user) {
  (void)user;
  roundtrip_type(t);
}

static void test_codec_exhaustive(void) {
  tl_dtype_foreach_small(roundtrip_cb, NULL);
  roundtrip_type(tl_dtype_f16());
  roundtrip_type(tl_dtype_bf16());
  roundtrip_type(tl_dtype_uint(16));
  roundtrip_type(tl_dtype_int(16));
  /* a few decode facts from the specs */
  CHECK(tl_dtype_decode(ty("f8e4m3"), 0x7e) == 448.0);
  CHECK(isnan(tl_dtype_decode(ty("f8e4m3"), 0x7f)));
  CHECK(isnan(tl_dtype_decode(ty("f8e4m3"), 0xff)));
  CHECK(tl_dtype_decode(ty("f8e4m3"), 0x78) == 256.0); /* S.1111.000 */
  CHECK(tl_dtype_decode(ty("f8e4m3"), 0x01) == ldexp(1, -9));
  CHECK(tl_dtype_decode(ty("f8e5m2"), 0x7b) == 57344.0);
  CHECK(isinf(tl_dtype_decode(ty("f8e5m2"), 0x7c)));
  CHECK(isnan(tl_dtype_decode(ty("f8e5m2"), 0x7d)));
  CHECK(tl_dtype_decode(ty("f8e5m2"), 0x01) == ldexp(1, -16));
  CHECK(tl_dtype_decode(ty("f4e2m1"), 0x7) == 6.0);
  CHECK(tl_dtype_decode(ty("f4e2m1"), 0x1) == 0.5);
  CHECK(tl_dtype_decode(ty("f4e2m1"), 0xf) == -6.0);
  double nz = tl_dtype_decode(ty("f6e3m2"), 0x20);
  CHECK(nz == 0.0 && signbit(nz));
  CHECK(tl_dtype_decode(ty("f2e1m0"), 1) == 2.0);
  CHECK(tl_dtype_decode(ty("f2e1m0"), 3) == -2.0);
  CHECK(tl_dtype_decode(ty("i3"), 4) == -4.0);
  CHECK(tl_dtype_decode(ty("i64"), ~0ull) == -1.0);
  CHECK(tl_dtype_decode(ty("f32"), 0x3f800000) == 1.0);
  /* wide integers: saturation at the exact 2^63 / 2^64 edges */
  CHECK_EQ_INT(tl_dtype_encode(ty("i64"), 1e300), INT64_MAX);
  CHECK(tl_dtype_encode(ty("i64"), -1e300) == (uint64_t)INT64_MIN);
  CHECK(tl_dtype_encode(ty("u64"), 1e300) == ~0ull);
  CHECK(tl_dtype_encode(ty("u32"), 4294967295.0) == 0xffffffffu);
  CHECK(tl_dtype_encode(ty("i32"), -2147483648.0) == 0x80000000u);
  CHECK(tl_dtype_encode(ty("i32"), 2147483647.5) == 0x7fffffffu);
}

/*---- encode: rules and random doubles against brute force ----*/

static void test_encode_rules(void) {
  TlDType e4 = ty("f8e4m3"), e5 = ty("f8e5m2"), f4 = ty("f4e2m1");
  CHECK_EQ_INT(tl_dtype_encode(e4, 1e9), 0x7e); /* saturates, no inf */
  CHECK_EQ_INT(tl_dtype_encode(e4, -INFINITY), 0xfe);
  CHECK_EQ_INT(tl_dtype_encode(e4, NAN), 0x7f);
  CHECK_EQ_INT(tl_dtype_encode(e4, 464.0), 0x7e);   /* tie 448|480: even */
  CHECK_EQ_INT(tl_dtype_encode(e5, 61440.0), 0x7c); /* tie: to inf */
  CHECK_EQ_INT(tl_dtype_encode(e5, 61439.0), 0x7b);
  CHECK_EQ_INT(tl_dtype_encode(e5, NAN), 0x7e);
  CHECK_EQ_INT(tl_dtype_encode(e5, -INFINITY), 0xfc);
  CHECK_EQ_INT(tl_dtype_encode(f4, NAN), 0); /* no NaN: +0 */
  CHECK_EQ_INT(tl_dtype_encode(f4, INFINITY), 0x7);
  CHECK_EQ_INT(tl_dtype_encode(f4, -100.0), 0xf);
  CHECK_EQ_INT(tl_dtype_encode(f4, 0.25), 0x0); /* tie 0|0.5: even */
  CHECK_EQ_INT(tl_dtype_encode(f4, 0.75), 0x2); /* tie 0.5|1: even */
  CHECK_EQ_INT(tl_dtype_encode(f4, -0.1), 0x8); /* -0 */
  CHECK_EQ_INT(tl_dtype_encode(f4, -0.0), 0x8);
  CHECK_EQ_INT(tl_dtype_encode(ty("f16"), 65520.0), 0x7c00);
  CHECK_EQ_INT(tl_dtype_encode(ty("f16"), 65519.99), 0x7bff);
  CHECK_EQ_INT(tl_dtype_encode(ty("f16"), ldexp(1, -25)), 0x0000);
  CHECK_EQ_INT(tl_dtype_encode(ty("f16"), ldexp(1.5, -25)), 0x0001);
  CHECK_EQ_INT(tl_dtype_encode(ty("f16"), NAN), 0x7e00);
  CHECK_EQ_INT(tl_dtype_encode(ty("bf16"), NAN), 0x7fc0);
  CHECK_EQ_INT(tl_dtype_encode(ty("f32"), NAN), 0x7fc00000);
  CHECK_EQ_INT(tl_dtype_encode_f32(ty("bf16"), 1.00390625f), 0x3f80); /* tie */
  CHECK_EQ_INT(tl_dtype_encode_f32(ty("bf16"), 1.01171875f), 0x3f82);
  /* integers: ties to even, saturate, NaN -> 0 */
  CHECK_EQ_INT(tl_dtype_encode(ty("i4"), 2.5), 2);
  CHECK_EQ_INT(tl_dtype_encode(ty("i4"), -2.5), 0xe);
  CHECK_EQ_INT(tl_dtype_encode(ty("i4"), 3.5), 4);
  CHECK_EQ_INT(tl_dtype_encode(ty("i4"), 100.0), 7);
  CHECK_EQ_INT(tl_dtype_encode(ty("i4"), -100.0), 8);
  CHECK_EQ_INT(tl_dtype_encode(ty("u4"), -3.0), 0);
  CHECK_EQ_INT(tl_dtype_encode(ty("u4"), 15.5), 15);
  CHECK_EQ_INT(tl_dtype_encode(ty("u4"), NAN), 0);
  CHECK_EQ_INT(tl_dtype_encode(ty("bool"), NAN), 1);
  CHECK_EQ_INT(tl_dtype_encode(ty("bool"), -0.0), 0);
}

/* The independent reference: the nearest finite code by search, ties to
 * the code with even mantissa (for m = 0 formats, where every significand
 * is odd, to the larger magnitude, which is where the carry goes), then
 * the format's overflow rule. */
static uint64_t brute_encode(TlDType t, double x) {
  unsigned m = t.man_bits, nb = t.bits;
  uint64_t best = 0;
  double bestd = INFINITY, bestv = 0;
  for (uint64_t c = 0; c < ((uint64_t)1 << nb); c++) {
    double v = tl_dtype_decode(t, c);
    if (!isfinite(v) || (v == 0.0 && signbit(v)))
      continue;
    double d = fabs(v - x);
    bool take = d < bestd;
    if (d == bestd) {
      if (m > 0)
        take = (c & 1) == 0;
      else if (v == 0.0 || bestv == 0.0) /* 0 is the even significand */
        take = v == 0.0;
      else /* both significands are 1: the carry goes up */
        take = fabs(v) > fabs(bestv);
    }
    if (take) {
      best = c;
      bestd = d;
      bestv = v;
    }
  }
  if (tl_dtype_specials(t) == TL_FLOAT_IEEE) {
    double mx = tl_dtype_max(t),
           half_ulp = ldexp(1.0, (1 << t.exp_bits) - 2 - tl_dtype_bias(t) -
                                     (int)m - 1);
    if (fabs(x) >= mx + half_ulp) /* beyond the midpoint to 2^(emax+1) */
      return tl_dtype_encode(t, x > 0 ? INFINITY : -INFINITY);
  }
  if (bestv == 0.0 && signbit(x)) /* zero keeps the sign of x */
    best |= (uint64_t)1 << (nb - 1);
  return best;
}

static void brute_cb(TlDType t, void *user) {
  unsigned samples = *(unsigned *)user, bad = 0;
  if (!tl_dtype_is_float(t))
    return;
  double mx = tl_dtype_max(t);
  for (unsigned i = 0; i < samples; i++) {
    double x;
    switch (i % 3) {
    case 0: /* anywhere in (-1.2 max, 1.2 max) */
      x = (rnd_unit() * 2.4 - 1.2) * mx;
      break;
    case 1: { /* exactly a midpoint of two neighbouring codes, or +-eps */
      uint64_t c = rnd() % ((uint64_t)1 << (t.bits - 1));
      double a = tl_dtype_decode(t, c), b = tl_dtype_decode(t, c + 1);
      if (!isfinite(a))
        a = 0.0;
      if (!isfinite(b))
        b = a;
      x = (a + b) / 2;
      x += (double)((int)(rnd() % 3) - 1) * ldexp(fabs(x) + 1e-30, -40);
      if (rnd() & 1)
        x = -x;
      break;
    }
    default: /* log-uniform magnitudes, subnormals and tiny included */
      x = ldexp(1.0 + rnd_unit(), (int)(rnd() % 80) - 60);
      if (rnd() & 1)
        x = -x;
      break;
    }
    uint64_t got = tl_dtype_encode(t, x), want = brute_encode(t, x);
    if (got != want && bad++ < 5)
      fprintf(stderr, "%s: encode(%.17g) = 0x%llx, brute force 0x%llx\n",
              tl_dtype_name(t), x, (unsigned long long)got,
              (unsigned long long)want);
  }
  CHECK_EQ_INT(bad, 0);
}

static void test_encode_brute(void) {
  unsigned samples = 3000;
  tl_dtype_foreach_small(brute_cb, &samples);
  samples = 60; /* 65536 codes per search */
  brute_cb(tl_dtype_f16(), &samples);
  brute_cb(tl_dtype_bf16(), &samples);
  /* f32 against the C conversion (round to nearest even, IEEE) */
  unsigned bad = 0;
  for (unsigned i = 0; i < 100000; i++) {
    double x = ldexp(rnd_unit() * 2 - 1, (int)(rnd() % 300) - 160);
    float f = (float)x;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bad += tl_dtype_encode(tl_dtype_f32(), x) != bits;
  }
  CHECK_EQ_INT(bad, 0);
}

/*---- packing ----*/

static int model_bit(const uint8_t *buf, size_t k) {
  return (buf[k / 8] >> (k % 8)) & 1;
}

static void test_pack(void) {
  static const unsigned widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64};
  /* known answers: u4 [1,2,3]; u3 [7,1,5] straddling byte 0/1 (Fig. 8) */
  uint8_t buf[64] = {0};
  uint64_t c3[3] = {1, 2, 3};
  tl_dtype_pack(ty("u4"), c3, 3, buf, 0);
  CHECK_EQ_INT(buf[0], 0x21);
  CHECK_EQ_INT(buf[1], 0x03);
  uint64_t u3[3] = {7, 1, 5};
  memset(buf, 0, sizeof buf);
  tl_dtype_pack(ty("u3"), u3, 3, buf, 0);
  CHECK_EQ_INT(buf[0], 0x4f);
  CHECK_EQ_INT(buf[1], 0x01);
  CHECK_EQ_INT(tl_dtype_load(ty("u3"), buf, 2), 5);
  tl_dtype_store(ty("i6"), buf, 1, 0x3f);
  CHECK_EQ_INT(tl_dtype_load(ty("i6"), buf, 1), 0x3f);
  CHECK_EQ_INT(tl_dtype_storage_bytes(ty("u3"), 3), 2);
  CHECK_EQ_INT(tl_dtype_storage_bytes(ty("i6"), 4), 3);

  unsigned bad = 0;
  for (unsigned trial = 0; trial < 4000; trial++) {
    unsigned w = widths[trial % 11];
    TlDType t = w == 64 ? tl_dtype_uint(64) : tl_dtype_uint(w);
    size_t n = rnd() % 40, off = rnd() % 64;
    uint8_t before[400], after[400];
    uint64_t codes[40], back[40];
    for (size_t i = 0; i < sizeof before; i++)
      before[i] = (uint8_t)rnd();
    memcpy(after, before, sizeof before);
    for (size_t i = 0; i < n; i++)
      codes[i] = rnd(); /* high bits beyond w must be ignored */
    tl_dtype_pack(t, codes, n, after, off);
    tl_dtype_unpack(t, after, off, n, back);
    uint64_t mask = w == 64 ? ~0ull : ((1ull << w) - 1);
    for (size_t i = 0; i < n; i++)
      bad += back[i] != (codes[i] & mask);
    /* bit-by-bit model: bit j of value i at stream bit off + i*w + j */
    for (size_t k = 0; k < 8 * sizeof before; k++) {
      int want = model_bit(before, k);
      if (k >= off && k < off + n * w) {
        size_t i = (k - off) / w, j = (k - off) % w;
        want = (int)((codes[i] >> j) & 1);
      }
      bad += model_bit(after, k) != want;
    }
  }
  CHECK_EQ_INT(bad, 0);
}

/*---- emulator arithmetic ----*/

static uint16_t h(double x) {
  return (uint16_t)tl_dtype_encode(tl_dtype_f16(), x);
}

static void test_emulator(void) {
  TlDType f16 = tl_dtype_f16(), bf16 = tl_dtype_bf16();
  /* sums and products of halves are exact in double, so the reference
   * is one encode of the double result */
  unsigned bad = 0;
  for (unsigned i = 0; i < 100000; i++) {
    uint16_t a = (uint16_t)rnd(), b = (uint16_t)rnd();
    double x = tl_dtype_decode(f16, a), y = tl_dtype_decode(f16, b);
    uint64_t s = tl_dtype_encode(f16, x + y), p = tl_dtype_encode(f16, x * y);
    uint16_t gs = tl_f16_add(a, b), gp = tl_f16_mul(a, b);
    if (isnan(x + y))
      bad += !tl_dtype_code_is_nan(f16, gs);
    else
      bad += gs != s;
    if (isnan(x * y))
      bad += !tl_dtype_code_is_nan(f16, gp);
    else
      bad += gp != p;
    double bx = tl_dtype_decode(bf16, a), by = tl_dtype_decode(bf16, b);
    if (!isnan(bx * by))
      bad += tl_bf16_mul(a, b) != tl_dtype_encode(bf16, bx * by);
  }
  CHECK_EQ_INT(bad, 0);
  /* fma against glibc's correctly rounded fmaf, on f32 */
  bad = 0;
  for (unsigned i = 0; i < 100000; i++) {
    float fa = (float)ldexp(rnd_unit() - 0.5, (int)(rnd() % 60) - 30);
    float fb = (float)ldexp(rnd_unit() - 0.5, (int)(rnd() % 60) - 30);
    float fc = (float)ldexp(rnd_unit() - 0.5, (int)(rnd() % 120) - 60);
    if (i % 4 == 0) /* cancellation-heavy: c close to -a*b */
      fc = -(float)((double)fa * fb) * (1.0f + (float)ldexp(1, -23));
    uint32_t a, b, c, r;
    float want = fmaf(fa, fb, fc);
    memcpy(&a, &fa, 4), memcpy(&b, &fb, 4), memcpy(&c, &fc, 4);
    memcpy(&r, &want, 4);
    bad += tl_f32_fma(a, b, c) != r;
  }
  CHECK_EQ_INT(bad, 0);
  /* f16 fma where double rounding would bite: 1 + 2^-11 + 2^-30 must
   * round up to 1 + 2^-10 (a*b + c with one rounding) */
  /* (1 + 2^-10)^2 - 1.5 * 2^-10 = 1 + 2^-11 + 2^-20, just above the tie
   * 1 + 2^-11: one rounding gives 1 + 2^-10; rounding the product first
   * would land on the tie and go to 1.0 */
  CHECK_EQ_INT(tl_f16_fma(h(1.0 + ldexp(1, -10)), h(1.0 + ldexp(1, -10)),
                          h(-(ldexp(1, -10) + ldexp(1, -11)))),
               0x3c01);
  CHECK_EQ_INT(tl_f16_fma(h(1024), h(1), h(0.5)), h(1024)); /* tie: even */
  CHECK_EQ_INT(tl_f16_fma(h(1025), h(1), h(0.5)), h(1026));
  CHECK_EQ_INT(tl_f16_fma(h(1024), h(1), h(0.5 + ldexp(1, -11))), h(1025));
  CHECK_EQ_INT(tl_f16_add(h(-0.0), h(-0.0)), 0x8000);
  CHECK_EQ_INT(tl_f16_add(h(1), h(-1)), 0x0000);
  CHECK_EQ_INT(tl_f16_mul(h(-0.0), h(2)), 0x8000);
  CHECK_EQ_INT(tl_f16_mul(0x0001, h(0.5)), 0x0000); /* tie to even: 0 */
  CHECK_EQ_INT(tl_f16_mul(0x0003, h(0.5)), 0x0002);
  CHECK_EQ_INT(tl_f16_add(0x7c00, 0xfc00), 0x7fff); /* inf - inf: NaN */
  CHECK_EQ_INT(tl_bf16_fma(0x4300, 0x3f80, 0x3f00), 0x4300); /* 128 + .5 */
  CHECK_EQ_INT(tl_bf16_add(0x0001, 0x0001), 0x0002); /* subnormals kept */

  /* lop3 and prmt on known answers */
  TlRegOp ops[] = {
      {TL_ROP_LOP3, 3, 0, 1, 2, 0x6a},   /* (a & b) ^ c */
      {TL_ROP_PRMT, 4, 0, 1, 0, 0x4140}, /* [a0 b0 a1 b0] */
      {TL_ROP_PRMT, 5, 0, 0, 0, 0x9999}, /* sign of byte 1, everywhere */
      {TL_ROP_SHF_R, 6, 0, 1, 0, 8},     {TL_ROP_SAR, 7, 1, 0, 0, 4},
      {TL_ROP_HFMA2, 8, 9, 10, 11, 0},
  };
  uint32_t regs[12] = {0x12345678u, 0xff0000f0u, 0x64006400u};
  regs[9] = 0x64076407u;  /* 1031, 1031 */
  regs[10] = 0x3c003c00u; /* 1, 1 */
  regs[11] = 0xe408e408u; /* -1032, -1032 */
  CHECK(tl_regop_run(ops, 6, regs, 12, NULL));
  CHECK_EQ_INT(regs[3], ((0x12345678u & 0xff0000f0u) ^ 0x64006400u));
  CHECK_EQ_INT(regs[4], 0xf056f078u);
  CHECK_EQ_INT(regs[5], 0x00000000u); /* 0x56 has bit 7 clear */
  CHECK_EQ_INT(regs[6], 0xf0123456u);
  CHECK_EQ_INT(regs[7], 0xfff0000fu);
  CHECK_EQ_INT(regs[8], 0xbc00bc00u); /* 1031 - 1032 = -1 */
  TlErr err = {{0}};
  TlRegOp badop = {TL_ROP_IADD, 40, 0, 0, 0, 0};
  CHECK(!tl_regop_run(&badop, 1, regs, 12, &err));
  CHECK(strstr(err.msg, "out of range") != NULL);
}

/*---- quantisation ----*/

static void test_quant(void) {
  enum { K = 64, N = 6 };
  float w[K * N];
  uint16_t wh[K * N];
  for (size_t i = 0; i < K * N; i++) {
    w[i] = (float)((rnd_unit() - 0.3) * 4.0);
    wh[i] = (uint16_t)tl_dtype_encode(tl_dtype_f16(), w[i]);
  }
  static const char *qts[] = {"i4",     "u4",     "i8",     "u8",
                              "i2",     "u3",     "i6",     "u16",
                              "f4e2m1", "f8e4m3", "f6e3m2", "f8e5m2"};
  static const size_t groups[] = {0, 16, 32, 7};
  unsigned bad = 0;
  for (size_t qi = 0; qi < sizeof qts / sizeof qts[0]; qi++)
    for (unsigned mode = 0; mode < 2; mode++)
      for (size_t gi = 0; gi < 5; gi++) {
        TlQuantSpec spec = {ty(qts[qi]),
                            mode ? TL_QUANT_ASYMMETRIC : TL_QUANT_SYMMETRIC,
                            gi < 4 ? groups[gi] : 0, gi == 4};
        bool is_int = tl_dtype_is_integer(spec.qtype);
        if (!is_int && mode)
          continue;
        size_t ng = tl_quant_num_groups(&spec, K, N);
        size_t g = spec.group_size ? spec.group_size : K;
        CHECK_EQ_INT(ng, spec.per_tensor ? 1 : (K + g - 1) / g * N);
        uint8_t packed[K * N * 2];
        float scales[K * N], out[K * N];
        int32_t zeros[K * N];
        bool use_half = gi % 2;
        TlErr err = {{0}};
        bool ok = tl_quant_matrix(
            &spec, use_half ? tl_dtype_f16() : tl_dtype_f32(),
            use_half ? (const void *)wh : w, K, N, packed, scales, zeros, &err);
        CHECK(ok);
        if (!ok) {
          fprintf(stderr, "%s\n", err.msg);
          continue;
        }
        ok = tl_dequant_matrix(&spec, packed, scales, zeros, K, N,
                               tl_dtype_f32(), out, &err);
        CHECK(ok);
        /* independent check of each element: the code is the rounded
         * quotient clamped, and the error is at most half a step (or the
         * format's relative spacing for floats) */
        for (size_t i = 0; i < K; i++)
          for (size_t j = 0; j < N; j++) {
            size_t gidx = spec.per_tensor ? 0 : i / g * N + j;
            double x = use_half ? tl_dtype_decode(tl_dtype_f16(), wh[i * N + j])
                                : w[i * N + j];
            double s = scales[gidx], y = out[i * N + j];
            if (is_int)
              bad += fabs(y - x) > s * (mode ? 1.0 : 0.5) * 1.000001 + 1e-6;
            else
              bad += fabs(y - x) > fabs(x) * 0.26 + s * 0.6;
          }
        if (is_int && mode == 0) {
          double z = spec.qtype.kind == TL_DTYPE_UINT
                         ? ldexp(1.0, spec.qtype.bits - 1)
                         : 0.0;
          CHECK(zeros[0] == (int32_t)z);
        }
      }
  CHECK_EQ_INT(bad, 0);
  /* a hand-checked group: [-1, 0.5, 2, 3.5] to i4 symmetric: scale 0.5,
   * codes -2, 1, 4, 7; asymmetric u4: scale 4.5/15 = 0.3, z = rne(1/0.3)
   * = 3 */
  float col[4] = {-1.0f, 0.5f, 2.0f, 3.5f};
  TlQuantSpec s4 = {ty("i4"), TL_QUANT_SYMMETRIC, 0, false};
  uint8_t pk[2] = {0};
  float sc;
  int32_t zp;
  CHECK(tl_quant_matrix(&s4, tl_dtype_f32(), col, 4, 1, pk, &sc, NULL, NULL));
  CHECK(sc == 0.5f);
  CHECK_EQ_INT(pk[0], 0x1e);
  CHECK_EQ_INT(pk[1], 0x74);
  TlQuantSpec a4 = {ty("u4"), TL_QUANT_ASYMMETRIC, 0, false};
  CHECK(tl_quant_matrix(&a4, tl_dtype_f32(), col, 4, 1, pk, &sc, &zp, NULL));
  CHECK(sc == 0.3f);
  CHECK_EQ_INT(zp, 3);
  CHECK_EQ_INT(tl_dtype_load(ty("u4"), pk, 0), 0);  /* rne(-3.33)+3 = 0 */
  CHECK_EQ_INT(tl_dtype_load(ty("u4"), pk, 3), 15); /* rne(11.67)+3 = 15 */
  /* failures */
  TlErr err = {{0}};
  TlQuantSpec badspec = {ty("f4e2m1"), TL_QUANT_ASYMMETRIC, 0, false};
  CHECK(!tl_quant_matrix(&badspec, tl_dtype_f32(), col, 4, 1, pk, &sc, &zp,
                         &err));
  CHECK(strstr(err.msg, "symmetric only") != NULL);
  float inf4[4] = {1, INFINITY, 0, 0};
  CHECK(!tl_quant_matrix(&s4, tl_dtype_f32(), inf4, 4, 1, pk, &sc, NULL, &err));
  CHECK(strstr(err.msg, "non-finite") != NULL);
  CHECK(!tl_quant_matrix(&s4, tl_dtype_f64(), col, 4, 1, pk, &sc, NULL, &err));
  TlQuantSpec b1 = {tl_dtype_bool(), TL_QUANT_SYMMETRIC, 0, false};
  CHECK(!tl_quant_matrix(&b1, tl_dtype_f32(), col, 4, 1, pk, &sc, NULL, &err));
}

int main(void) {
  test_family();
  test_codec_exhaustive();
  test_encode_rules();
  test_encode_brute();
  test_pack();
  test_emulator();
  test_quant();
  return unit_report();
}
