/* Unit tests for lib/layout's GF(2) linear view and shared-memory layouts:
 * the bit matrix agrees with the mapping table on random power-of-two
 * layouts, converts back, inverts and composes; shared layouts give the
 * offsets their formulas say; the bank-conflict counter matches hand-worked
 * access patterns; the ldmatrix-friendly swizzles are conflict-free for
 * every ldmatrix phase while the plain row-major layouts conflict. */
#include "tl/layout.h"
#include "unit.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}
static int rnd_below(int n) { return (int)(rnd() % (uint64_t)n); }

static TlLayout parse(const char *s) {
  TlLayout l;
  TlErr err = {{0}};
  memset(&l, 0, sizeof l);
  if (!tl_layout_parse(&l, s, strlen(s), &err, NULL))
    fprintf(stderr, "parse of '%s' failed: %s\n", s, err.msg);
  return l;
}

/* A random power-of-two layout of rank 1..3 with at most 2^12 cells, built
 * from primitives (and replication) through the text syntax. */
static TlLayout random_pow2(char *text, size_t n) {
  static const char *names[] = {"local", "spatial", "column_local",
                                "column_spatial", "replicated"};
  for (;;) {
    int rank = 1 + rnd_below(3), terms = 1 + rnd_below(4), cells = 0;
    size_t len = 0;
    for (int k = 0; k < terms; k++) {
      int kind = rnd_below(k ? 5 : 4);
      len += (size_t)snprintf(text + len, n - len, "%s%s(", k ? "." : "",
                              names[kind]);
      for (int d = 0; d < (kind == 4 ? 1 : rank); d++) {
        int b = rnd_below(kind == 4 ? 3 : 4);
        cells += b;
        len += (size_t)snprintf(text + len, n - len, "%s%d", d ? ", " : "",
                                1 << b);
      }
      len += (size_t)snprintf(text + len, n - len, ")");
    }
    if (cells <= 12)
      return parse(text);
  }
}

static void test_linear(void) {
  char text[512];
  for (int iter = 0; iter < 2000; iter++) {
    TlLayout l = random_pow2(text, sizeof text);
    TlLinearLayout m;
    TlErr err = {{0}};
    bool ok = tl_layout_to_linear(&l, &m, &err);
    CHECK(ok);
    if (!ok)
      continue;
    int64_t nt = tl_layout_num_threads(&l), nl = tl_layout_local_size(&l);
    CHECK_EQ_INT((int64_t)1 << m.local_bits, nl);
    CHECK_EQ_INT((int64_t)1 << m.thread_bits, nt);
    /* The bit matrix agrees with the table everywhere. */
    int bad = 0;
    for (int64_t t = 0; t < nt; t++)
      for (int64_t i = 0; i < nl; i++) {
        int64_t idx[TL_LAYOUT_MAX_RANK], flat = 0;
        tl_layout_map(&l, t, i, idx, NULL);
        for (int d = 0; d < l.rank; d++)
          flat = flat * l.shape[d] + idx[d];
        uint64_t x = (uint64_t)i | ((uint64_t)t << m.local_bits);
        if (tl_linear_apply(&m, x) != (uint64_t)flat)
          bad++;
      }
    if (bad)
      fprintf(stderr, "linear view of %s differs in %d cells\n", text, bad);
    CHECK_EQ_INT(bad, 0);
    /* Back to a layout: the same layout. */
    TlLayout back;
    CHECK(tl_linear_to_layout(&m, &back, &err));
    CHECK(tl_layout_equal(&back, &l));
    /* Rank = number of index bits; without replication it is invertible and
     * the inverse is locate. */
    CHECK_EQ_INT(tl_linear_rank(&m), m.num_out);
    if (tl_layout_replication(&l) == 1) {
      TlLinearLayout inv, id;
      CHECK(tl_linear_invert(&inv, &m, NULL));
      CHECK(tl_linear_compose(&id, &inv, &m, NULL));
      for (int j = 0; j < id.num_in; j++)
        CHECK_EQ_INT(id.cols[j], (uint64_t)1 << j);
      int64_t flat = rnd() % (uint64_t)tl_layout_num_elements(&l);
      int64_t idx[TL_LAYOUT_MAX_RANK], f = flat, loc, cnt, thr;
      for (int d = l.rank - 1; d >= 0; d--)
        idx[d] = f % l.shape[d], f /= l.shape[d];
      tl_layout_locate(&l, idx, &loc, &thr, 1, &cnt, NULL);
      uint64_t x = tl_linear_apply(&inv, (uint64_t)flat);
      CHECK_EQ_INT((int64_t)(x & (((uint64_t)1 << m.local_bits) - 1)), loc);
      CHECK_EQ_INT((int64_t)(x >> m.local_bits), thr);
    } else {
      TlLinearLayout inv;
      CHECK(!tl_linear_invert(&inv, &m, &err));
    }
  }
  /* Failures. */
  TlLinearLayout m;
  TlLayout l;
  TlErr err = {{0}};
  TlLayout three = parse("local(3)");
  CHECK(!tl_layout_to_linear(&three, &m, &err));
  CHECK_EQ_STR(err.msg, "dimension 0 has size 3, not a power of two");
  uint64_t cols[2] = {3, 2};
  CHECK(tl_linear_make(&m, 2, 2, cols, NULL));
  CHECK(!tl_linear_to_layout(&m, &l, &err));
  CHECK_EQ_STR(err.msg, "input bit 0 maps to a sum of index bits: a layout "
                        "maps each bit to one index bit");
  TlLinearLayout inv;
  CHECK(tl_linear_invert(&inv, &m, NULL));
  /* M e0 = e0 + e1 and M e1 = e1, so M^-1 e0 = e0 + e1, M^-1 e1 = e1. */
  CHECK_EQ_INT(tl_linear_apply(&inv, 1), 3);
  CHECK_EQ_INT(tl_linear_apply(&inv, 2), 2);
  uint64_t sing[2] = {1, 1};
  CHECK(tl_linear_make(&m, 2, 2, sing, NULL));
  CHECK(!tl_linear_invert(&inv, &m, &err));
  CHECK_EQ_STR(err.msg, "bit matrix is singular (rank 1 of 2)");
  uint64_t wide[1] = {4};
  CHECK(!tl_linear_make(&m, 1, 2, wide, &err));
  TlLinearLayout a, b;
  CHECK(tl_linear_make(&a, 2, 3, (uint64_t[]){1, 2}, NULL));
  CHECK(!tl_linear_compose(&b, &a, &a, &err));
  CHECK_EQ_STR(err.msg, "cannot compose: 3 output bits feed 2 input bits");
  /* Replication becomes zero thread columns. */
  TlLayout r = parse("spatial(4, 1).replicated(2)");
  CHECK(tl_layout_to_linear(&r, &m, NULL));
  CHECK_EQ_INT(m.thread_bits, 3);
  CHECK_EQ_INT(m.cols[0], 0);
  CHECK_EQ_INT(m.cols[1], 1);
  CHECK_EQ_INT(m.cols[2], 2);
}

static void test_bank_counter(void) {
  int64_t a[32];
  int w = -1;
  TlErr err = {{0}};
  for (int i = 0; i < 32; i++)
    a[i] = 4 * i;
  CHECK(tl_smem_wavefronts(a, 32, 4, &w, NULL));
  CHECK_EQ_INT(w, 1);
  for (int i = 0; i < 32; i++)
    a[i] = 8 * i; /* 4-byte accesses two words apart: 2-way conflict */
  CHECK(tl_smem_wavefronts(a, 32, 4, &w, NULL));
  CHECK_EQ_INT(w, 2);
  CHECK(tl_smem_wavefronts(a, 32, 8, &w, NULL)); /* 256 bytes: 2 halves */
  CHECK_EQ_INT(w, 2);
  for (int i = 0; i < 32; i++)
    a[i] = 128 * i; /* every lane in bank 0, distinct words */
  CHECK(tl_smem_wavefronts(a, 32, 4, &w, NULL));
  CHECK_EQ_INT(w, 32);
  for (int i = 0; i < 32; i++)
    a[i] = 64; /* broadcast */
  CHECK(tl_smem_wavefronts(a, 32, 4, &w, NULL));
  CHECK_EQ_INT(w, 1);
  for (int i = 0; i < 32; i++)
    a[i] = 16 * i; /* 512 contiguous bytes by quarter warps */
  CHECK(tl_smem_wavefronts(a, 32, 16, &w, NULL));
  CHECK_EQ_INT(w, 4);
  for (int i = 0; i < 32; i++)
    a[i] = 2 * i; /* 2-byte accesses: lanes share words */
  CHECK(tl_smem_wavefronts(a, 32, 2, &w, NULL));
  CHECK_EQ_INT(w, 1);
  for (int i = 0; i < 8; i++)
    a[i] = 256 * i; /* 8 lanes x 16 bytes in the same 4 banks: 8 wavefronts */
  CHECK(tl_smem_wavefronts(a, 8, 16, &w, NULL));
  CHECK_EQ_INT(w, 8);
  CHECK(tl_smem_wavefronts(a, 0, 16, &w, NULL));
  CHECK_EQ_INT(w, 0);
  a[0] = 2;
  CHECK(!tl_smem_wavefronts(a, 1, 4, &w, &err));
  CHECK_EQ_STR(err.msg, "lane 0: address 2 is not aligned to 4 bytes");
  CHECK(!tl_smem_wavefronts(a, 1, 3, &w, &err));
  CHECK_EQ_STR(err.msg, "access width 3 is not 1, 2, 4, 8 or 16 bytes");
}

static int64_t swz(int64_t x, int b, int m, int s) {
  int64_t yyy = (x >> (m + s)) & ((1 << b) - 1);
  return x ^ (yyy << m);
}

/* Wavefronts of one ldmatrix.x4 reading an (8 x 4)-row block: lane l gives
 * row l % 8 + 8 * (l / 8 / ...) of the 16-byte chunk `chunk`; each phase
 * of 8 lanes reads 8 consecutive rows. */
static int ldmatrix_wavefronts(const TlSharedLayout *l, int elem_bits,
                               int64_t row0, int64_t chunk) {
  int64_t addrs[32];
  int64_t per_chunk = 128 / elem_bits;
  for (int lane = 0; lane < 32; lane++) {
    int64_t idx[2] = {row0 + lane % 8 + 8 * (lane / 16),
                      (chunk + (lane / 8) % 2) * per_chunk};
    if (idx[1] >= l->shape[1])
      idx[1] = chunk * per_chunk;
    int64_t off;
    tl_shared_layout_offset(l, idx, &off, NULL);
    addrs[lane] = off * elem_bits / 8;
  }
  int w = -1;
  tl_smem_wavefronts(addrs, 32, 16, &w, NULL);
  return w;
}

static void test_shared(void) {
  TlErr err = {{0}};
  TlSharedLayout rm, cm;
  int64_t shape[2] = {4, 6};
  CHECK(tl_shared_layout_row_major(&rm, 2, shape, NULL));
  CHECK(tl_shared_layout_column_major(&cm, 2, shape, NULL));
  for (int64_t i = 0; i < 4; i++)
    for (int64_t j = 0; j < 6; j++) {
      int64_t idx[2] = {i, j}, o1, o2;
      CHECK(tl_shared_layout_offset(&rm, idx, &o1, NULL));
      CHECK(tl_shared_layout_offset(&cm, idx, &o2, NULL));
      CHECK_EQ_INT(o1, i * 6 + j);
      CHECK_EQ_INT(o2, j * 4 + i);
    }
  CHECK_EQ_INT(tl_shared_layout_cosize(&rm), 24);
  TlStr s = {0};
  tl_shared_layout_print(&rm, &s);
  CHECK_EQ_STR(tl_str_cstr(&s), "shared<shape=[4, 6], modes=[4, 6], "
                                "strides=[6, 1]>");
  tl_str_free(&s);
  /* A layout made of chained modes is the same canonical value. */
  TlSharedLayout split;
  CHECK(tl_shared_layout_make(&split, 2, shape, 3, (int64_t[]){2, 2, 6},
                              (int64_t[]){12, 6, 1}, NULL));
  CHECK(tl_shared_layout_equal(&split, &rm));
  CHECK_EQ_INT(tl_shared_layout_hash(&split), tl_shared_layout_hash(&rm));

  /* Swizzle: the formula, element by element, for Swizzle<3, 3, 3> on a
   * 64 x 64 f16 tile (128-byte rows). */
  TlSharedLayout sw, ld;
  int64_t tile[2] = {64, 64};
  CHECK(tl_shared_layout_row_major(&rm, 2, tile, NULL));
  CHECK(tl_shared_layout_swizzle(&sw, &rm, 3, 3, 3, NULL));
  CHECK(tl_shared_layout_ldmatrix(&ld, 64, 128, 16, NULL));
  CHECK(tl_shared_layout_equal(&sw, &ld));
  bool seen[4096] = {false};
  bool bij = true;
  for (int64_t i = 0; i < 64; i++)
    for (int64_t j = 0; j < 64; j++) {
      int64_t idx[2] = {i, j}, o;
      tl_shared_layout_offset(&sw, idx, &o, NULL);
      CHECK_EQ_INT(o, swz(i * 64 + j, 3, 3, 3));
      bij = bij && !seen[o];
      seen[o] = true;
    }
  CHECK(bij);
  CHECK(!tl_shared_layout_swizzle(&sw, &rm, 3, 3, 2, &err));
  CHECK_EQ_STR(err.msg, "Swizzle<3, 3, 2>: the shift must be at least the "
                        "bit count, or the XORed ranges overlap");
  CHECK(!tl_shared_layout_swizzle(&sw, &ld, 1, 1, 1, &err));
  CHECK_EQ_STR(err.msg, "layout is already swizzled");

  /* ldmatrix layouts: every x4 read of 8-row blocks is one wavefront per
   * phase (4 in all) for rows of 16..256 bytes and 4..16-bit elements; the
   * unswizzled row-major layout conflicts 8 / (128 / row) ways. */
  for (int rb = 16; rb <= 256; rb *= 2)
    for (int eb = 4; eb <= 16; eb *= 2) {
      TlSharedLayout l, plain;
      int64_t rows = 32, sh[2] = {32, rb * 8 / eb};
      CHECK(tl_shared_layout_ldmatrix(&l, rows, rb, eb, NULL));
      CHECK(tl_shared_layout_row_major(&plain, 2, sh, NULL));
      int worst = 0, worst_plain = 0;
      for (int64_t row0 = 0; row0 < 16; row0 += 8)
        for (int64_t chunk = 0; chunk < rb / 16; chunk++) {
          int w = ldmatrix_wavefronts(&l, eb, row0, chunk);
          int wp = ldmatrix_wavefronts(&plain, eb, row0, chunk);
          worst = w > worst ? w : worst;
          worst_plain = wp > worst_plain ? wp : worst_plain;
        }
      if (worst != 4)
        fprintf(stderr, "ldmatrix layout rows %d bytes elem %d: %d\n", rb, eb,
                worst);
      CHECK_EQ_INT(worst, 4);
      CHECK_EQ_INT(worst_plain, rb <= 128 ? 4 * rb / 16 : 32);
    }
  CHECK(!tl_shared_layout_ldmatrix(&ld, 8, 48, 16, &err));
  CHECK_EQ_STR(err.msg, "row of 48 bytes: ldmatrix rows are a power of two "
                        "of at least 16 bytes");

  /* Compose: 2 x 2 tiles of the swizzled 8 x 64 atom. */
  TlSharedLayout atom, outer, tiled;
  CHECK(tl_shared_layout_ldmatrix(&atom, 8, 128, 16, NULL));
  int64_t o22[2] = {2, 2};
  CHECK(tl_shared_layout_row_major(&outer, 2, o22, NULL));
  CHECK(tl_shared_layout_compose(&tiled, &outer, &atom, NULL));
  CHECK_EQ_INT(tiled.shape[0], 16);
  CHECK_EQ_INT(tiled.shape[1], 128);
  for (int64_t i = 0; i < 16; i++)
    for (int64_t j = 0; j < 128; j++) {
      int64_t idx[2] = {i, j}, in[2] = {i % 8, j % 64}, o, oi;
      tl_shared_layout_offset(&tiled, idx, &o, NULL);
      tl_shared_layout_offset(&atom, in, &oi, NULL);
      CHECK_EQ_INT(o, ((i / 8) * 2 + j / 64) * 512 + oi);
    }
  CHECK(!tl_shared_layout_compose(&tiled, &atom, &outer, &err));

  /* Slice, permute and reshape agree with the original offsets. */
  for (int iter = 0; iter < 200; iter++) {
    TlSharedLayout base = rnd_below(2) ? tiled : rm;
    int64_t sizes[2], offs[2];
    for (int d = 0; d < 2; d++) {
      int64_t n = base.shape[d];
      sizes[d] = n >> rnd_below(4);
      if (sizes[d] < 1)
        sizes[d] = 1;
      offs[d] = sizes[d] * rnd_below((int)(n / sizes[d]));
    }
    TlSharedLayout sl;
    CHECK(tl_shared_layout_slice(&sl, &base, offs, sizes, &err));
    for (int64_t i = 0; i < sizes[0]; i += 1 + sizes[0] / 5)
      for (int64_t j = 0; j < sizes[1]; j++) {
        int64_t a[2] = {i, j}, b[2] = {offs[0] + i, offs[1] + j}, oa, ob;
        tl_shared_layout_offset(&sl, a, &oa, NULL);
        tl_shared_layout_offset(&base, b, &ob, NULL);
        CHECK_EQ_INT(oa, ob);
      }
    /* Text round trip. */
    TlStr txt = {0};
    TlSharedLayout parsed;
    tl_shared_layout_print(&sl, &txt);
    CHECK(tl_shared_layout_parse(&parsed, txt.data, txt.len, &err, NULL));
    CHECK(tl_shared_layout_equal(&parsed, &sl));
    tl_str_free(&txt);
    TlSharedLayout pm, rs;
    CHECK(tl_shared_layout_permute(&pm, &base, (int[]){1, 0}, NULL));
    int64_t flat[1] = {base.shape[0] * base.shape[1]};
    CHECK(tl_shared_layout_reshape(&rs, &base, 1, flat, NULL));
    for (int64_t i = 0; i < base.shape[0]; i += 3)
      for (int64_t j = 0; j < base.shape[1]; j += 5) {
        int64_t a[2] = {i, j}, b[2] = {j, i}, f[1] = {i * base.shape[1] + j};
        int64_t oa, ob, of;
        tl_shared_layout_offset(&base, a, &oa, NULL);
        tl_shared_layout_offset(&pm, b, &ob, NULL);
        tl_shared_layout_offset(&rs, f, &of, NULL);
        CHECK_EQ_INT(oa, ob);
        CHECK_EQ_INT(oa, of);
      }
  }
  /* Text form: printing and parsing, and located errors. */
  TlStr txt = {0};
  tl_shared_layout_print(&tiled, &txt);
  CHECK_EQ_STR(tl_str_cstr(&txt),
               "shared<shape=[16, 128], modes=[2, 8, 2, 64], "
               "strides=[1024, 64, 512, 1], swizzle=<3, 3, "
               "3>>");
  tl_str_free(&txt);
  TlSharedLayout parsed;
  const char *text = "shared<shape=[8, 8], modes=[8, 8], strides=[8, 1], "
                     "base=64, swizzle=<1, 2, 3>>";
  CHECK(tl_shared_layout_parse(&parsed, text, strlen(text), NULL, NULL));
  CHECK_EQ_INT(parsed.base, 64);
  CHECK_EQ_INT(parsed.swizzle_shift, 3);
  size_t at = 0;
  text = "shared<shape=[8], modes=[8], strides=[1, 2]>";
  CHECK(!tl_shared_layout_parse(&parsed, text, strlen(text), &err, &at));
  CHECK_EQ_INT(at, 37);
  CHECK_EQ_STR(err.msg,
               "the number of strides differs from the number of modes");
  text = "shared<shape=[8], modes=[8], strides=[1], color=2>";
  CHECK(!tl_shared_layout_parse(&parsed, text, strlen(text), &err, &at));
  CHECK_EQ_INT(at, 42);
  CHECK_EQ_STR(err.msg, "expected 'base' or 'swizzle'");
  text = "shared<shape=[8], modes=[8], strides=[1], swizzle=<2, 0, 1>>";
  CHECK(!tl_shared_layout_parse(&parsed, text, strlen(text), &err, &at));
  CHECK_EQ_INT(at, 0);
  CHECK_EQ_STR(err.msg, "Swizzle<2, 0, 1>: the shift must be at least the "
                        "bit count, or the XORed ranges overlap");

  int64_t offs[2] = {1, 0}, sizes[2] = {2, 64};
  CHECK(!tl_shared_layout_slice(&ld, &rm, offs, sizes, &err));
  CHECK_EQ_STR(err.msg, "slice offset 1 of dimension 0 is not a multiple of "
                        "its size 2");
  int64_t odd[2] = {0, 0}, odd_size[2] = {16, 3};
  CHECK(!tl_shared_layout_slice(&ld, &tiled, odd, odd_size, &err));
  CHECK_EQ_STR(err.msg, "slice of size 3 does not align with the modes of "
                        "dimension 1");

  /* A register tile read from shared memory: the mma accumulator (f32, two
   * elements per lane) from a row-major 16 x 8 tile takes one wavefront per
   * half warp; in a column-major tile a lane's two elements are not
   * contiguous, so they cannot be one vector access. */
  TlLayout c = parse("local(2, 1).spatial(8, 4).local(1, 2)");
  TlSharedLayout c_rm, c_cm;
  int64_t cs[2] = {16, 8};
  CHECK(tl_shared_layout_row_major(&c_rm, 2, cs, NULL));
  CHECK(tl_shared_layout_column_major(&c_cm, 2, cs, NULL));
  int w = -1;
  CHECK(tl_shared_layout_wavefronts(&c_rm, &c, 32, 0, 0, 2, &w, NULL));
  CHECK_EQ_INT(w, 2);
  /* Column-major: lane (g, t) reads word 32 t + g, so the four lanes of a
   * row group share bank g with distinct words: 4-way conflict. */
  CHECK(tl_shared_layout_wavefronts(&c_cm, &c, 32, 0, 0, 1, &w, NULL));
  CHECK_EQ_INT(w, 4);
  CHECK(!tl_shared_layout_wavefronts(&c_cm, &c, 32, 0, 0, 2, &w, &err));
  CHECK_EQ_STR(err.msg, "lane 0: local elements 0.. are not contiguous in "
                        "shared memory");
  CHECK(!tl_shared_layout_wavefronts(&c_rm, &c, 32, 1, 0, 2, &w, &err));
  CHECK_EQ_STR(err.msg, "warp 1 is outside the 32 threads");
}

/* The GF(2) wavefront count agrees with the enumerating counter on random
 * power-of-two register layouts of 2..4 warps over row- or column-major
 * tiles with random swizzles. */
static void test_linear_wavefronts(void) {
  static const char *regs[] = {
      "local(2, 1).spatial(8, 4).local(1, 2)",
      "column_local(2, 2).spatial(8, 4).local(1, 2)",
      "local(2, 1).column_spatial(4, 8).local(2, 1)",
      "spatial(32, 1).local(1, 8)",
      "spatial(4, 8).local(2, 4)",
      "local(1, 2).spatial(16, 2).local(1, 4)",
      "spatial(2, 16).replicated(2).local(4, 2)",
      "column_spatial(8, 4).local(4, 4)",
  };
  int compared = 0, conflicted = 0;
  for (int iter = 0; iter < 3000; iter++) {
    TlLayout base = parse(regs[rnd_below(8)]), outer, reg;
    /* Put 1, 2 or 4 warps in front. */
    char wtext[64];
    int wr = 1 << rnd_below(3), wc = 1 << rnd_below(2);
    snprintf(wtext, sizeof wtext, "spatial(%d, %d)", wr, wc);
    outer = parse(wtext);
    CHECK(tl_layout_product(&reg, &outer, &base, NULL));
    int64_t shape[2] = {reg.shape[0], reg.shape[1]};
    TlSharedLayout plain, sm;
    if (rnd_below(2))
      CHECK(tl_shared_layout_row_major(&plain, 2, shape, NULL));
    else
      CHECK(tl_shared_layout_column_major(&plain, 2, shape, NULL));
    int total_bits = 0;
    while (((int64_t)1 << total_bits) < shape[0] * shape[1])
      total_bits++;
    int b = rnd_below(4), m = rnd_below(4), sh = b + rnd_below(3);
    if (m + sh + b > total_bits || b == 0)
      sm = plain;
    else
      CHECK(tl_shared_layout_swizzle(&sm, &plain, b, m, sh, NULL));
    int eb = 8 << rnd_below(3), vec = 1 << rnd_below(3);
    if (eb * vec > 128)
      vec = 128 / eb;
    int w1 = -1, w2 = -1;
    TlErr e1 = {{0}}, e2 = {{0}};
    bool ok1 = tl_shared_layout_wavefronts(&sm, &reg, eb, 0, 0, vec, &w1, &e1);
    bool ok2 = tl_shared_layout_wavefronts_linear(&sm, &reg, eb, vec, &w2, &e2);
    if (ok1 != ok2)
      fprintf(stderr, "wavefronts: enumeration %s (%s), GF(2) %s (%s)\n",
              ok1 ? "ok" : "fails", e1.msg, ok2 ? "ok" : "fails", e2.msg);
    CHECK(ok1 == ok2);
    if (ok1 && ok2) {
      CHECK_EQ_INT(w1, w2);
      compared++;
      conflicted += w1 > (eb * vec <= 32 ? 1 : eb * vec / 32);
    }
  }
  /* Enough cases were comparable, and some of them had conflicts. */
  CHECK(compared > 500);
  CHECK(conflicted > 50);
  /* Direct use: lanes 128 bytes apart, 4-byte words: all in one bank. */
  TlLinearLayout m;
  uint64_t cols[5] = {128, 256, 512, 1024, 2048};
  int w = -1;
  TlErr err = {{0}};
  CHECK(tl_linear_make(&m, 5, 12, cols, NULL));
  CHECK(tl_linear_wavefronts(&m, 4, &w, NULL));
  CHECK_EQ_INT(w, 32);
  uint64_t mis[5] = {2, 4, 8, 16, 32};
  CHECK(tl_linear_make(&m, 5, 12, mis, NULL));
  CHECK(!tl_linear_wavefronts(&m, 4, &w, &err));
  CHECK_EQ_STR(err.msg, "lane bit 0 moves the address by a multiple of less "
                        "than the 4-byte access width");
  TlSharedLayout odd;
  int64_t sh3[2] = {3, 4};
  CHECK(tl_shared_layout_row_major(&odd, 2, sh3, NULL));
  CHECK(!tl_shared_layout_to_linear(&odd, &m, &err));
  CHECK_EQ_STR(err.msg, "dimension 0 has size 3, not a power of two");
}

static TlSharedLayout sparse(const char *text) {
  TlSharedLayout l;
  TlErr err = {{0}};
  if (!tl_shared_layout_parse(&l, text, strlen(text), &err, NULL))
    fprintf(stderr, "parse of '%s' failed: %s\n", text, err.msg);
  return l;
}

/* wgmma operands: the slices of TL shared layouts that are canonical
 * descriptor layouts give the descriptor's fields, and every element of
 * the slice lies where tl_wgmma_offset (the hardware's formula) says. */
static void test_wgmma(void) {
  TlErr err = {{0}};
  TlWgmmaDesc d;
  /* A [64, 64] f16 under the 128-byte swizzle: K-major, SBO 1024, and the
   * k16 slices start 16 elements apart. */
  TlSharedLayout a = sparse("shared<shape=[64, 64], modes=[64, 64], "
                            "strides=[64, 1], swizzle=<3, 3, 3>>");
  for (int64_t k0 = 0; k0 < 64; k0 += 16) {
    CHECK(tl_shared_layout_wgmma(&a, 16, 0, 0, 64, k0, 16, true, &d, &err));
    CHECK_EQ_INT(d.swizzle, 128);
    CHECK(!d.mn_major);
    CHECK_EQ_INT(d.sbo, 1024);
    CHECK_EQ_INT(d.start, k0);
  }
  /* The second warpgroup's rows start 64 rows in. */
  TlSharedLayout a2 = sparse("shared<shape=[128, 64], modes=[128, 64], "
                             "strides=[64, 1], swizzle=<3, 3, 3>>");
  CHECK(tl_shared_layout_wgmma(&a2, 16, 0, 64, 64, 32, 16, false, &d, &err));
  CHECK_EQ_INT(d.start, 64 * 64 + 32);
  /* W [256, 64] seen transposed as B [64, 256] (column-major view): K
   * stays contiguous, so B is K-major too, with MN = dimension 1. */
  TlSharedLayout b = sparse("shared<shape=[64, 256], modes=[64, 256], "
                            "strides=[1, 64], swizzle=<3, 3, 3>>");
  CHECK(tl_shared_layout_wgmma(&b, 16, 1, 0, 256, 48, 16, false, &d, &err));
  CHECK(!d.mn_major);
  CHECK_EQ_INT(d.sbo, 1024);
  CHECK_EQ_INT(d.start, 48);
  /* 8-bit elements: the 128-byte swizzle is swizzle<3, 4, 3>; k32 slices. */
  TlSharedLayout s8 = sparse("shared<shape=[64, 128], modes=[64, 128], "
                             "strides=[128, 1], swizzle=<3, 4, 3>>");
  CHECK(tl_shared_layout_wgmma(&s8, 8, 0, 0, 64, 96, 32, false, &d, &err));
  CHECK_EQ_INT(d.swizzle, 128);
  CHECK_EQ_INT(d.start, 96);
  CHECK(!tl_shared_layout_wgmma(&a, 8, 0, 0, 64, 0, 32, false, &d, &err));
  CHECK_EQ_STR(err.msg, "swizzle<3, 3, 3> of 8-bit elements is not a wgmma "
                        "swizzle (swizzle<B, 4, 3> with B = 1, 2 or 3: 32-, "
                        "64- or 128-byte rows)");
  /* No swizzle: 8 x 16-byte core matrices, K-major: LBO the step to the
   * next 8 columns, SBO to the next 8 rows. */
  TlSharedLayout core = sparse("shared<shape=[64, 16], modes=[8, 8, 2, 8], "
                               "strides=[128, 8, 64, 1]>");
  CHECK(tl_shared_layout_wgmma(&core, 16, 0, 0, 64, 0, 16, false, &d, &err));
  CHECK_EQ_INT(d.swizzle, 0);
  CHECK_EQ_INT(d.lbo, 128);
  CHECK_EQ_INT(d.sbo, 256);
  /* MN-major under the 128-byte swizzle: B [16, 64] row-major (N
   * contiguous); SBO steps 8 k rows. Refused where only K-major is. */
  TlSharedLayout mn = sparse("shared<shape=[16, 64], modes=[16, 64], "
                             "strides=[64, 1], swizzle=<3, 3, 3>>");
  CHECK(tl_shared_layout_wgmma(&mn, 16, 1, 0, 64, 0, 16, true, &d, &err));
  CHECK(d.mn_major);
  CHECK_EQ_INT(d.sbo, 1024);
  CHECK(!tl_shared_layout_wgmma(&mn, 16, 1, 0, 64, 0, 16, false, &d, &err));
  /* A plain row-major B [64, 128]: 256-byte rows are no wgmma layout. */
  TlSharedLayout rm = sparse("shared<shape=[64, 128], modes=[64, 128], "
                             "strides=[128, 1]>");
  CHECK(!tl_shared_layout_wgmma(&rm, 16, 1, 0, 128, 0, 16, true, &d, &err));
  /* Every element of every accepted slice where the formula puts it, with
   * the swizzle: swizzle(start + offset) in bytes equals the layout's
   * swizzled offset (the tile aligned to its swizzle block). */
  TlSharedLayout *all[] = {&a, &a2, &b, &mn};
  int mnd[] = {0, 0, 1, 1};
  for (int c = 0; c < 4; c++) {
    TlSharedLayout *l = all[c];
    int64_t mns = l->shape[mnd[c]], kn = l->shape[1 - mnd[c]];
    for (int64_t m0 = 0; m0 < mns; m0 += 64)
      for (int64_t k0 = 0; k0 < kn; k0 += 16) {
        int64_t ms = mns - m0 < 64 || mnd[c] ? mns - m0 : 64;
        CHECK(tl_shared_layout_wgmma(l, 16, mnd[c], m0, ms, k0, 16, true, &d,
                                     &err));
        for (int64_t i = 0; i < ms; i++)
          for (int64_t j = 0; j < 16; j++) {
            int64_t idx[2], off;
            idx[mnd[c]] = m0 + i;
            idx[1 - mnd[c]] = k0 + j;
            CHECK(tl_shared_layout_offset(l, idx, &off, NULL));
            int64_t x = 2 * d.start + tl_wgmma_offset(&d, 2, i, j);
            x ^= (x >> 3) & 0x70;
            CHECK_EQ_INT(x, 2 * off);
          }
        if (mnd[c])
          break;
      }
  }
}

int main(void) {
  test_linear();
  test_bank_counter();
  test_shared();
  test_linear_wavefronts();
  test_wgmma();
  return unit_report();
}
