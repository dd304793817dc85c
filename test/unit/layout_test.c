/* Unit tests for lib/layout's register layouts: the paper's examples, the
 * laws of the algebra on seeded random layouts, the text syntax and its
 * diagnostics, the shape operations and the hardware atoms.
 *
 * The reference for every mapping is computed independently of the
 * library's representation: a chain of primitives is evaluated with the
 * paper's formula h(t, i) = f(t / T_g, i / N_g) * S_g + g(t % T_g, i % N_g)
 * applied recursively, and atoms are checked against the PTX ISA fragment
 * formulas lane by lane. */
#include "tl/layout.h"
#include "unit.h"

/* ---- deterministic random numbers (xorshift64*) ---- */
static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}
static int rnd_below(int n) { return (int)(rnd() % (uint64_t)n); }

/* ---- reference chains of primitives ---- */
enum { P_LOCAL, P_SPATIAL, P_COL_LOCAL, P_COL_SPATIAL, P_REPLICATED };
static const char *prim_names[] = {"local", "spatial", "column_local",
                                   "column_spatial", "replicated"};

typedef struct Prim {
  int kind;
  int64_t dims[TL_LAYOUT_MAX_RANK]; /* replicated: dims[0] = count */
} Prim;

typedef struct Chain {
  int rank, n;
  Prim p[6];
} Chain;

static int64_t prim_threads(const Chain *c, const Prim *p) {
  int64_t n = 1;
  if (p->kind == P_REPLICATED)
    return p->dims[0];
  if (p->kind == P_SPATIAL || p->kind == P_COL_SPATIAL)
    for (int d = 0; d < c->rank; d++)
      n *= p->dims[d];
  return n;
}
static int64_t prim_locals(const Chain *c, const Prim *p) {
  int64_t n = 1;
  if (p->kind == P_LOCAL || p->kind == P_COL_LOCAL)
    for (int d = 0; d < c->rank; d++)
      n *= p->dims[d];
  return n;
}
static int64_t prim_dim(const Prim *p, int d) {
  return p->kind == P_REPLICATED ? 1 : p->dims[d];
}

/* The primitive's own function: row-major or column-major unravel of the
 * thread or local index over its dims. */
static void prim_eval(const Chain *c, const Prim *p, int64_t t, int64_t i,
                      int64_t *idx) {
  int64_t x = (p->kind == P_SPATIAL || p->kind == P_COL_SPATIAL) ? t : i;
  for (int d = 0; d < c->rank; d++)
    idx[d] = 0;
  if (p->kind == P_REPLICATED)
    return;
  bool column = p->kind == P_COL_LOCAL || p->kind == P_COL_SPATIAL;
  for (int k = 0; k < c->rank; k++) {
    int d = column ? k : c->rank - 1 - k;
    idx[d] = x % p->dims[d];
    x /= p->dims[d];
  }
}

static void chain_eval(const Chain *c, int n, int64_t t, int64_t i,
                       int64_t *idx) {
  const Prim *g = &c->p[n - 1];
  int64_t tg = prim_threads(c, g), ng = prim_locals(c, g);
  int64_t gi[TL_LAYOUT_MAX_RANK];
  prim_eval(c, g, t % tg, i % ng, gi);
  if (n == 1) {
    for (int d = 0; d < c->rank; d++)
      idx[d] = gi[d];
    return;
  }
  chain_eval(c, n - 1, t / tg, i / ng, idx);
  for (int d = 0; d < c->rank; d++)
    idx[d] = idx[d] * prim_dim(g, d) + gi[d];
}

static void chain_text(const Chain *c, TlStr *s) {
  for (int k = 0; k < c->n; k++) {
    const Prim *p = &c->p[k];
    tl_str_printf(s, "%s%s(", k ? "." : "", prim_names[p->kind]);
    int n = p->kind == P_REPLICATED ? 1 : c->rank;
    for (int d = 0; d < n; d++)
      tl_str_printf(s, "%s%lld", d ? ", " : "", (long long)p->dims[d]);
    tl_str_putc(s, ')');
  }
}

static bool chain_build(const Chain *c, TlLayout *out) {
  TlLayout acc, t;
  for (int k = 0; k < c->n; k++) {
    const Prim *p = &c->p[k];
    bool ok;
    switch (p->kind) {
    case P_LOCAL:
      ok = tl_layout_local(&t, c->rank, p->dims, NULL);
      break;
    case P_SPATIAL:
      ok = tl_layout_spatial(&t, c->rank, p->dims, NULL);
      break;
    case P_COL_LOCAL:
      ok = tl_layout_column_local(&t, c->rank, p->dims, NULL);
      break;
    case P_COL_SPATIAL:
      ok = tl_layout_column_spatial(&t, c->rank, p->dims, NULL);
      break;
    default:
      ok = tl_layout_replicated(&t, c->rank, p->dims[0], NULL);
      break;
    }
    if (!ok)
      return false;
    if (k == 0)
      acc = t;
    else if (!tl_layout_product(&acc, &acc, &t, NULL))
      return false;
  }
  *out = acc;
  return true;
}

/* Random chains with small sizes: at most 512 (thread, local) cells, so
 * that products of two stay cheap to enumerate. */
static void random_chain_once(Chain *c, int rank, bool pow2, bool allow_rep);
static void random_chain(Chain *c, int rank, bool pow2, bool allow_rep) {
  for (;;) {
    random_chain_once(c, rank, pow2, allow_rep);
    int64_t cells = 1;
    for (int k = 0; k < c->n; k++)
      cells *= prim_threads(c, &c->p[k]) * prim_locals(c, &c->p[k]);
    if (cells <= 512)
      return;
  }
}
static void random_chain_once(Chain *c, int rank, bool pow2, bool allow_rep) {
  static const int64_t sizes[] = {1, 2, 3, 4, 2, 1, 8, 6};
  static const int64_t sizes2[] = {1, 2, 4, 2, 1, 8};
  c->rank = rank;
  c->n = 1 + rnd_below(4);
  for (int k = 0; k < c->n; k++) {
    Prim *p = &c->p[k];
    p->kind = rnd_below(allow_rep ? 5 : 4);
    if (p->kind == P_REPLICATED && k == 0)
      p->kind = P_LOCAL;
    for (int d = 0; d < rank; d++)
      p->dims[d] = pow2 ? sizes2[rnd_below(6)] : sizes[rnd_below(8)];
    if (p->kind == P_REPLICATED)
      p->dims[0] = pow2 ? 2 << rnd_below(2) : 2 + rnd_below(3);
  }
}

/* Every (thread, local) -> index of l as a flat table. */
static int64_t *table(const TlLayout *l) {
  int64_t nt = tl_layout_num_threads(l), nl = tl_layout_local_size(l);
  int64_t *tab = tl_xmalloc(sizeof(int64_t) * (size_t)(nt * nl) + 1);
  for (int64_t t = 0; t < nt; t++)
    for (int64_t i = 0; i < nl; i++) {
      int64_t idx[TL_LAYOUT_MAX_RANK], flat = 0;
      tl_layout_map(l, t, i, idx, NULL);
      for (int d = 0; d < l->rank; d++)
        flat = flat * l->shape[d] + idx[d];
      tab[t * nl + i] = flat;
    }
  return tab;
}

static bool same_table(const TlLayout *a, const TlLayout *b) {
  if (a->rank != b->rank ||
      tl_layout_num_threads(a) != tl_layout_num_threads(b) ||
      tl_layout_local_size(a) != tl_layout_local_size(b))
    return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d])
      return false;
  int64_t n = tl_layout_num_threads(a) * tl_layout_local_size(a);
  int64_t *ta = table(a), *tb = table(b);
  bool same = memcmp(ta, tb, sizeof(int64_t) * (size_t)n) == 0;
  tl_free(ta);
  tl_free(tb);
  return same;
}

static TlLayout parse(const char *s) {
  TlLayout l;
  TlErr err = {{0}};
  memset(&l, 0, sizeof l);
  bool ok = tl_layout_parse(&l, s, strlen(s), &err, NULL);
  if (!ok)
    fprintf(stderr, "parse of '%s' failed: %s\n", s, err.msg);
  CHECK(ok);
  return l;
}

static const char *print(const TlLayout *l) {
  static char buf[4][512];
  static int k;
  TlStr s = {0};
  tl_layout_print(l, &s);
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s", tl_str_cstr(&s));
  tl_str_free(&s);
  return buf[k];
}

static const char *render(const char *text) {
  static char buf[8192];
  TlLayout l = parse(text);
  TlStr s = {0};
  tl_layout_render(&l, &s);
  snprintf(buf, sizeof buf, "%s", tl_str_cstr(&s));
  tl_str_free(&s);
  return buf;
}

/* ---- the paper's examples ---- */
static void test_paper_examples(void) {
  /* Figure 4: local(2, 3) maps i to (i / 3, i % 3); spatial(2, 3) maps t. */
  CHECK_EQ_STR(render("local(2, 3)"), "     0   1   2\n"
                                      "0  0:0 0:1 0:2\n"
                                      "1  0:3 0:4 0:5\n");
  CHECK_EQ_STR(render("spatial(2, 3)"), "     0   1   2\n"
                                        "0  0:0 1:0 2:0\n"
                                        "1  3:0 4:0 5:0\n");
  /* Figure 5 (c) = (a).(b): shape (4, 6), 6 threads of 4 elements; the last
   * two rows repeat the first two with a2, a3 in place of a0, a1. */
  TlLayout a = parse("local(2, 1)"), b = parse("spatial(2, 3).local(1, 2)");
  TlLayout c;
  CHECK(tl_layout_product(&c, &a, &b, NULL));
  CHECK_EQ_INT(c.shape[0], 4);
  CHECK_EQ_INT(c.shape[1], 6);
  CHECK_EQ_INT(tl_layout_num_threads(&c), 6);
  CHECK_EQ_INT(tl_layout_local_size(&c), 4);
  CHECK_EQ_STR(print(&c), "local(2, 1).spatial(2, 3).local(1, 2)");
  for (int64_t t = 0; t < 6; t++)
    for (int64_t i = 0; i < 4; i++) {
      int64_t got[2], fa[2], fb[2];
      tl_layout_map(&c, t, i, got, NULL);
      tl_layout_map(&a, t / 6, i / 2, fa, NULL);
      tl_layout_map(&b, t % 6, i % 2, fb, NULL);
      CHECK_EQ_INT(got[0], fa[0] * 2 + fb[0]);
      CHECK_EQ_INT(got[1], fa[1] * 6 + fb[1]);
    }
  /* Figure 5 (e): a column-major spatial layout is a product too. */
  TlLayout e = parse("column_spatial(2, 3).local(2, 1)");
  for (int64_t t = 0; t < 6; t++) {
    int64_t got[2];
    tl_layout_map(&e, t, 1, got, NULL);
    CHECK_EQ_INT(got[0], (t % 2) * 2 + 1);
    CHECK_EQ_INT(got[1], t / 2);
  }
  /* Figure 3: mma.m16n8k8 A, f(t, i) = (t / 4 + i / 2 * 8, t % 4 * 2 + i % 2).
   */
  TlLayout f3 = parse("local(2, 1).spatial(8, 4).local(1, 2)");
  for (int64_t t = 0; t < 32; t++)
    for (int64_t i = 0; i < 4; i++) {
      int64_t got[2];
      tl_layout_map(&f3, t, i, got, NULL);
      CHECK_EQ_INT(got[0], t / 4 + i / 2 * 8);
      CHECK_EQ_INT(got[1], t % 4 * 2 + i % 2);
    }
  /* §4.2: local(2, 4) / local(1, 2) = local(2, 2). */
  TlLayout q, h = parse("local(2, 4)"), g = parse("local(1, 2)");
  CHECK(tl_layout_divide(&q, &h, &g, NULL));
  CHECK_EQ_STR(print(&q), "local(2, 2)");
  TlLayout want = parse("local(2, 2)");
  CHECK(tl_layout_equal(&q, &want));
  /* Figure 9: 4 x i6 per thread = 24 bits = 3 x u8 per thread, 32 threads. */
  TlLayout i6 = parse("local(2, 1).column_spatial(4, 8).local(2, 1)");
  TlLayout u8 = parse("local(3).spatial(32)");
  CHECK_EQ_INT(tl_layout_num_threads(&i6), tl_layout_num_threads(&u8));
  CHECK_EQ_INT(tl_layout_local_size(&i6) * 6, tl_layout_local_size(&u8) * 8);
}

/* ---- canonical form, equality, printing of specific layouts ---- */
static void test_canonical(void) {
  /* local(2, 1).local(2, 1) merges to local(4, 1). */
  TlLayout a = parse("local(2, 1).local(2, 1)"), b = parse("local(4, 1)");
  CHECK(tl_layout_equal(&a, &b));
  CHECK_EQ_INT(a.num_modes, 1);
  CHECK_EQ_INT(tl_layout_hash(&a), tl_layout_hash(&b));
  /* Size-1 modes vanish, replication merges, -1 disappears. */
  TlLayout r = parse("spatial(1, 4).replicated(2).replicated(3).replicated(1)");
  CHECK_EQ_INT(r.num_spatial, 2);
  CHECK_EQ_INT(r.spatial_modes[1], -6);
  CHECK_EQ_STR(print(&r), "spatial(1, 4).replicated(6)");
  /* Not a product of primitives: the two digits of one dimension in the
   * wrong significance order. Printed in explicit form, parsed back. */
  TlLayout x =
      parse("layout<shape=[4], modes=[2, 2], spatial=[1, 0], local=[]>");
  CHECK_EQ_STR(print(&x),
               "layout<shape=[4], modes=[2, 2], spatial=[1, 0], local=[]>");
  int64_t idx[1];
  tl_layout_map(&x, 1, 0, idx, NULL);
  CHECK_EQ_INT(idx[0], 2);
  /* The explicit form of a product layout prints as the product. */
  TlLayout y =
      parse("layout<shape=[16, 8], modes=[2, 8, 4, 2], spatial=[1, 2], "
            "local=[0, 3]>");
  CHECK_EQ_STR(print(&y), "local(2, 1).spatial(8, 4).local(1, 2)");
  /* Pure replication and the trivial layout. */
  TlLayout z = parse("local(1, 1).replicated(32)");
  CHECK_EQ_STR(print(&z), "local(1, 1).replicated(32)");
  TlLayout one = parse("local(1, 1, 1)");
  CHECK_EQ_STR(print(&one), "local(1, 1, 1)");
  /* A hand-assembled non-canonical struct canonicalises. */
  TlLayout h;
  memset(&h, 0, sizeof h);
  h.rank = 1;
  h.shape[0] = 8;
  h.num_modes = 3;
  h.mode_shape[0] = 2, h.mode_shape[1] = 1, h.mode_shape[2] = 4;
  h.num_local = 3;
  h.local_modes[0] = 0, h.local_modes[1] = 1, h.local_modes[2] = 2;
  CHECK(tl_layout_canonicalize(&h, NULL));
  TlLayout l8 = parse("local(8)");
  CHECK(tl_layout_equal(&h, &l8));
}

/* ---- laws on random layouts ---- */
static void test_random_laws(void) {
  for (int iter = 0; iter < 3000; iter++) {
    int rank = 1 + rnd_below(3);
    Chain cf, cg, ch;
    random_chain(&cf, rank, false, true);
    random_chain(&cg, rank, false, true);
    random_chain(&ch, rank, false, true);
    TlLayout f, g, h;
    if (!chain_build(&cf, &f) || !chain_build(&cg, &g) || !chain_build(&ch, &h))
      continue;
    /* The representation agrees with the paper's formula. */
    int64_t nt = tl_layout_num_threads(&f), nl = tl_layout_local_size(&f);
    bool agree = true;
    for (int64_t t = 0; t < nt && agree; t++)
      for (int64_t i = 0; i < nl && agree; i++) {
        int64_t got[TL_LAYOUT_MAX_RANK], want[TL_LAYOUT_MAX_RANK];
        tl_layout_map(&f, t, i, got, NULL);
        chain_eval(&cf, cf.n, t, i, want);
        for (int d = 0; d < rank; d++)
          agree = agree && got[d] == want[d];
      }
    if (!agree) {
      TlStr s = {0};
      chain_text(&cf, &s);
      fprintf(stderr, "mapping differs from the formula for %s\n",
              tl_str_cstr(&s));
      tl_str_free(&s);
    }
    CHECK(agree);
    /* Associativity. */
    TlLayout fg, gh, l1, l2;
    bool ok1 = tl_layout_product(&fg, &f, &g, NULL) &&
               tl_layout_product(&l1, &fg, &h, NULL);
    bool ok2 = tl_layout_product(&gh, &g, &h, NULL) &&
               tl_layout_product(&l2, &f, &gh, NULL);
    CHECK(ok1 == ok2);
    if (ok1 && ok2)
      CHECK(tl_layout_equal(&l1, &l2));
    if (!tl_layout_product(&fg, &f, &g, NULL))
      continue;
    /* (f.g)/g = f and g\(g.f)... written as left division of f.g by f. */
    TlLayout q;
    TlErr err = {{0}};
    bool ok = tl_layout_divide(&q, &fg, &g, &err);
    if (!ok)
      fprintf(stderr, "(f.g)/g failed for %s / %s: %s\n", print(&fg), print(&g),
              err.msg);
    CHECK(ok && tl_layout_equal(&q, &f));
    ok = tl_layout_divide_left(&q, &f, &fg, &err);
    if (!ok)
      fprintf(stderr, "f\\(f.g) failed for %s \\ %s: %s\n", print(&f),
              print(&fg), err.msg);
    CHECK(ok && tl_layout_equal(&q, &g));
    /* Soundness on arbitrary pairs: whenever a division succeeds, the
     * quotient multiplies back. Dividing by a factor of a random chain
     * (h's last primitive) also succeeds. */
    TlLayout back_h;
    if (tl_layout_divide(&q, &h, &g, NULL))
      CHECK(tl_layout_product(&back_h, &q, &g, NULL) &&
            tl_layout_equal(&back_h, &h));
    if (tl_layout_divide_left(&q, &g, &h, NULL))
      CHECK(tl_layout_product(&back_h, &g, &q, NULL) &&
            tl_layout_equal(&back_h, &h));
    Chain last = ch;
    last.p[0] = ch.p[ch.n - 1];
    last.n = 1;
    TlLayout hl;
    if (chain_build(&last, &hl) && ch.p[ch.n - 1].kind != P_REPLICATED) {
      ok = tl_layout_divide(&q, &h, &hl, &err);
      if (!ok)
        fprintf(stderr, "h / last factor failed for %s / %s: %s\n", print(&h),
                print(&hl), err.msg);
      CHECK(ok);
    }
    /* Print/parse identity and stable printing. */
    TlStr s = {0};
    tl_layout_print(&fg, &s);
    TlLayout back = parse(tl_str_cstr(&s));
    CHECK(tl_layout_equal(&back, &fg));
    CHECK_EQ_STR(print(&back), tl_str_cstr(&s));
    tl_str_clear(&s);
    tl_layout_print_explicit(&fg, &s);
    back = parse(tl_str_cstr(&s));
    CHECK(tl_layout_equal(&back, &fg));
    tl_str_free(&s);
    /* Without replication the map is a bijection; with it, each element is
     * held by exactly replication() threads. */
    int64_t n = tl_layout_num_threads(&fg) * tl_layout_local_size(&fg);
    int64_t *tab = table(&fg);
    int64_t elems = tl_layout_num_elements(&fg);
    int *hits = tl_xcalloc((size_t)elems, sizeof(int));
    for (int64_t k = 0; k < n; k++)
      hits[tab[k]]++;
    bool uniform = true;
    for (int64_t k = 0; k < elems; k++)
      uniform = uniform && hits[k] == tl_layout_replication(&fg);
    CHECK(uniform);
    CHECK_EQ_INT(n, elems * tl_layout_replication(&fg));
    tl_free(hits);
    tl_free(tab);
    /* locate inverts map. */
    int64_t t = rnd() % (uint64_t)tl_layout_num_threads(&fg);
    int64_t i = rnd() % (uint64_t)tl_layout_local_size(&fg);
    int64_t idx[TL_LAYOUT_MAX_RANK], loc, count, threads[64];
    tl_layout_map(&fg, t, i, idx, NULL);
    CHECK(tl_layout_locate(&fg, idx, &loc, threads, 64, &count, NULL));
    CHECK_EQ_INT(loc, i);
    CHECK_EQ_INT(count, tl_layout_replication(&fg));
    bool found = false;
    for (int64_t k = 0; k < count && k < 64; k++) {
      int64_t back_idx[TL_LAYOUT_MAX_RANK];
      tl_layout_map(&fg, threads[k], loc, back_idx, NULL);
      CHECK(memcmp(back_idx, idx, sizeof(int64_t) * (size_t)rank) == 0);
      if (k)
        CHECK(threads[k] > threads[k - 1]);
      found = found || threads[k] == t;
    }
    if (count <= 64)
      CHECK(found);
  }
}

/* Equal tables iff equal canonical forms: refining a mode into factors (a
 * different raw representation of the same function) canonicalises back;
 * layouts from different chains are equal exactly when their tables are. */
static void test_canonical_iff_table(void) {
  int equal_pairs = 0;
  for (int iter = 0; iter < 3000; iter++) {
    Chain ca, cb;
    int rank = 1 + rnd_below(2);
    random_chain(&ca, rank, true, true);
    random_chain(&cb, rank, true, true);
    TlLayout a, b;
    if (!chain_build(&ca, &a) || !chain_build(&cb, &b))
      continue;
    bool eq = tl_layout_equal(&a, &b), same = same_table(&a, &b);
    CHECK(eq == same);
    equal_pairs += eq;
    /* Refine: split every even mode of a into (s / p, p) for its smallest
     * prime p, in place in its list. */
    int64_t shape[TL_LAYOUT_MAX_RANK], modes[96], sp[96], lo[96];
    int nm = 0, ns = 0, nl = 0, first[TL_LAYOUT_MAX_MODES];
    for (int d = 0; d < a.rank; d++)
      shape[d] = a.shape[d];
    for (int m = 0; m < a.num_modes; m++) {
      first[m] = nm;
      int64_t s = a.mode_shape[m];
      int64_t p = s % 2 == 0 ? 2 : s % 3 == 0 ? 3 : s;
      if (p < s && rnd_below(2)) {
        modes[nm++] = s / p;
        modes[nm++] = p;
      } else {
        modes[nm++] = s;
      }
    }
    for (int k = 0; k < a.num_spatial; k++) {
      int32_t e = a.spatial_modes[k];
      if (e < 0) {
        sp[ns++] = e;
        continue;
      }
      sp[ns++] = first[e];
      if (e + 1 < a.num_modes ? first[e + 1] - first[e] == 2
                              : nm - first[e] == 2)
        sp[ns++] = first[e] + 1;
    }
    for (int k = 0; k < a.num_local; k++) {
      int32_t e = a.local_modes[k];
      lo[nl++] = first[e];
      if (e + 1 < a.num_modes ? first[e + 1] - first[e] == 2
                              : nm - first[e] == 2)
        lo[nl++] = first[e] + 1;
    }
    TlLayout refined;
    CHECK(tl_layout_make(&refined, a.rank, shape, nm, modes, ns, sp, nl, lo,
                         NULL));
    CHECK(tl_layout_equal(&refined, &a));
  }
  /* Random pairs rarely coincide; make sure some did. */
  CHECK(equal_pairs > 0);
}

/* ---- text syntax and diagnostics ---- */
static void check_parse_error(const char *text, size_t offset,
                              const char *msg) {
  TlLayout l;
  TlErr err = {{0}};
  size_t at = 999;
  CHECK(!tl_layout_parse(&l, text, strlen(text), &err, &at));
  CHECK_EQ_INT(at, offset);
  CHECK_EQ_STR(err.msg, msg);
}

static void test_syntax(void) {
  TlLayout a = parse("  local( 2 ,1 ) .spatial(8,4)\n.local(1,2)  ");
  CHECK_EQ_STR(print(&a), "local(2, 1).spatial(8, 4).local(1, 2)");
  check_parse_error("", 0, "expected a layout, found end of input");
  check_parse_error("local(2, 1).", 12,
                    "expected a layout, found end of input");
  check_parse_error("local(2,", 8, "expected an integer, found end of input");
  check_parse_error("local(2) x", 9, "expected '.' or end of input, found 'x'");
  check_parse_error("locl(2)", 0,
                    "unknown layout 'locl' (expected local, spatial, "
                    "column_local, column_spatial, replicated or layout)");
  check_parse_error("local(2, 0)", 9, "size must be in [1, 2147483647]");
  check_parse_error("local(2).spatial(2, 2)", 9,
                    "rank mismatch: this layout has rank 2, the chain rank 1");
  check_parse_error("replicated(4)", 0,
                    "cannot infer the rank of replicated(...): chain it with "
                    "a layout that has a shape, e.g. local(1).replicated(4)");
  check_parse_error("local(2).replicated(2, 2)", 9,
                    "replicated takes one argument (the number of threads), "
                    "not 2");
  check_parse_error("local(65536).local(65536)", 13,
                    "dimension 0 of the product has size 4294967296, above "
                    "2147483647");
  check_parse_error("local(99999999999999)", 6, "integer is too large");
  check_parse_error("local(1,1,1,1,1,1,1,1,1)", 22,
                    "a layout has at most 8 dimensions");
  check_parse_error("layout<shape=[4], modes=[2, 2], spatial=[0], local=[]>", 0,
                    "mode 1 is in neither the spatial nor the local list");
  check_parse_error(
      "layout<shape=[4], modes=[2, 2], spatial=[0, 0], local=[1]>", 0,
      "mode 0 is listed twice");
  check_parse_error("layout<shape=[4], modes=[3], spatial=[0], local=[]>", 0,
                    "modes of dimension 0 multiply to 3, not its size 4");
  check_parse_error("layout<shape=[4], modes=[3, 3], spatial=[0, 1], local=[]>",
                    0,
                    "modes do not split the shape: mode 1 (size 3) "
                    "overflows dimension 0 of size 4");
  check_parse_error("layout<shape=[4], modes=[4], spatial=[0], local=[-2]>", 49,
                    "expected an integer, found '-'");
  check_parse_error("layout<shape=[4], modes=[4], spatial=[1], local=[]>", 0,
                    "spatial entry 1 names no mode");
  check_parse_error("layout<shape=[4] modes=[4]>", 17,
                    "expected ',', found 'm'");
  check_parse_error("spatial(65536, 65536)", 0,
                    "shape has more than 2147483647 elements");
  check_parse_error("spatial(65536).replicated(65536)", 15,
                    "more than 2147483647 threads");
  check_parse_error("replicated(65536).replicated(65536).local(1)", 18,
                    "more than 2147483647 threads");
  /* Prefix parsing stops after the expression for an enclosing parser. */
  const char *text = "local(2).spatial(4)> : !tl.reg";
  size_t end = 0;
  TlLayout l;
  CHECK(tl_layout_parse_prefix(&l, text, strlen(text), &end, NULL, NULL));
  CHECK_EQ_INT(end, 19);
  /* Too many modes is an error, not a crash. */
  TlStr s = {0};
  for (int k = 0; k < 40; k++)
    tl_str_printf(&s, "%sspatial(2).local(2)", k ? "." : "");
  TlErr err = {{0}};
  CHECK(!tl_layout_parse(&l, tl_str_cstr(&s), s.len, &err, NULL));
  CHECK_EQ_STR(err.msg, "dimension 0 of the product has size 2147483648, "
                        "above 2147483647");
  /* Long chains are fine: 200 terms that merge into one mode each. */
  tl_str_clear(&s);
  for (int k = 0; k < 200; k++)
    tl_str_printf(&s, "%slocal(1, 1).replicated(1)", k ? "." : "");
  CHECK(tl_layout_parse(&l, tl_str_cstr(&s), s.len, NULL, NULL));
  CHECK_EQ_STR(print(&l), "local(1, 1)");
  tl_str_free(&s);
}

/* ---- division failures ---- */
static void test_division(void) {
  TlLayout q;
  TlErr err = {{0}};
  TlLayout c = parse("local(2, 1).spatial(8, 4).local(1, 2)");
  TlLayout sp = parse("spatial(8, 4).local(1, 2)");
  CHECK(tl_layout_divide(&q, &c, &sp, NULL));
  CHECK_EQ_STR(print(&q), "local(2, 1)");
  TlLayout l2 = parse("local(2, 1)");
  CHECK(tl_layout_divide_left(&q, &l2, &c, NULL));
  CHECK_EQ_STR(print(&q), "spatial(8, 4).local(1, 2)");
  /* Not divisible: the inner factor differs. */
  TlLayout bad = parse("local(1, 2).spatial(8, 4)");
  CHECK(!tl_layout_divide(&q, &c, &bad, &err));
  CHECK_EQ_STR(err.msg, "the inner factor is spatial(8, 4).local(1, 2), not "
                        "the divisor");
  TlLayout l3 = parse("local(3)");
  TlLayout l4 = parse("local(4)");
  CHECK(!tl_layout_divide(&q, &l4, &l3, &err));
  CHECK_EQ_STR(err.msg, "4 local elements are not a multiple of the "
                        "divisor's 3");
  TlLayout s4 = parse("spatial(4)"), l2s2 = parse("local(2).spatial(2)");
  CHECK(!tl_layout_divide(&q, &s4, &l2s2, &err));
  CHECK_EQ_STR(err.msg,
               "1 local elements are not a multiple of the divisor's 2");
  TlLayout s2l2 = parse("spatial(2).local(2)"), l2_ = parse("spatial(2)");
  CHECK(!tl_layout_divide(&q, &s2l2, &l2_, &err));
  CHECK(!tl_layout_divide(&q, &c, &l3, &err));
  CHECK_EQ_STR(err.msg, "cannot divide a layout of rank 2 by one of rank 1");
  /* The inner factor's thread digits must be the trailing ones. */
  TlLayout s22 = parse("spatial(2, 2)"), s21 = parse("spatial(2, 1)");
  CHECK(!tl_layout_divide(&q, &s22, &s21, &err));
  CHECK_EQ_STR(err.msg, "an outer mode of dimension 1 sits among the inner "
                        "threads");
  CHECK(tl_layout_divide_left(&q, &s21, &s22, NULL));
  CHECK_EQ_STR(print(&q), "spatial(1, 2)");
  /* Replication splits at the boundary: replicated(4) / replicated(2). */
  TlLayout r4 = parse("local(1).replicated(4)"),
           r2 = parse("local(1).replicated(2)");
  CHECK(tl_layout_divide(&q, &r4, &r2, NULL));
  CHECK(tl_layout_equal(&q, &r2));
}

/* ---- shape operations against reference tables ---- */
static void test_shape_ops(void) {
  TlErr err = {{0}};
  for (int iter = 0; iter < 1500; iter++) {
    Chain cl;
    int rank = 1 + rnd_below(3);
    random_chain(&cl, rank, false, true);
    TlLayout l;
    if (!chain_build(&cl, &l))
      continue;
    int64_t nt = tl_layout_num_threads(&l), nl = tl_layout_local_size(&l);
    int64_t *tab = table(&l);
    /* Flatten keeps the flat index of every (thread, local). */
    TlLayout f;
    CHECK(tl_layout_flatten(&f, &l, 0, rank - 1, NULL));
    int64_t *tf = table(&f);
    CHECK(memcmp(tab, tf, sizeof(int64_t) * (size_t)(nt * nl)) == 0);
    tl_free(tf);
    /* Reshape back to the original shape is the identity. */
    int64_t shape[TL_LAYOUT_MAX_RANK];
    for (int d = 0; d < rank; d++)
      shape[d] = l.shape[d];
    TlLayout back;
    CHECK(tl_layout_reshape(&back, &f, rank, shape, NULL));
    CHECK(tl_layout_equal(&back, &l));
    /* A random reshape either succeeds with the same flat table or fails. */
    int64_t total = tl_layout_num_elements(&l), ns[3] = {total, 1, 1};
    for (int64_t p = 2; p <= total; p++)
      if (total % p == 0 && rnd_below(2)) {
        ns[0] = total / p, ns[1] = p;
        break;
      }
    TlLayout rs;
    if (tl_layout_reshape(&rs, &l, 2, ns, &err)) {
      int64_t *tr = table(&rs);
      CHECK(memcmp(tab, tr, sizeof(int64_t) * (size_t)(nt * nl)) == 0);
      tl_free(tr);
    } else {
      CHECK(strstr(err.msg, "straddles") != NULL);
    }
    /* Permute: reversed dimensions, element-wise check; then back. */
    int perm[TL_LAYOUT_MAX_RANK], inv[TL_LAYOUT_MAX_RANK];
    for (int d = 0; d < rank; d++)
      perm[d] = rank - 1 - d;
    TlLayout p;
    CHECK(tl_layout_permute(&p, &l, perm, NULL));
    for (int64_t t = 0; t < nt; t += 1 + nt / 7)
      for (int64_t i = 0; i < nl; i += 1 + nl / 5) {
        int64_t a[TL_LAYOUT_MAX_RANK], b[TL_LAYOUT_MAX_RANK];
        tl_layout_map(&l, t, i, a, NULL);
        tl_layout_map(&p, t, i, b, NULL);
        for (int d = 0; d < rank; d++)
          CHECK_EQ_INT(b[d], a[perm[d]]);
      }
    for (int d = 0; d < rank; d++)
      inv[perm[d]] = d;
    CHECK(tl_layout_permute(&back, &p, inv, NULL));
    CHECK(tl_layout_equal(&back, &l));
    /* Unsqueeze then squeeze. */
    TlLayout u;
    int at = rnd_below(rank + 1);
    CHECK(tl_layout_unsqueeze(&u, &l, at, NULL));
    CHECK_EQ_INT(u.shape[at], 1);
    CHECK(tl_layout_squeeze(&back, &u, at, NULL));
    CHECK(tl_layout_equal(&back, &l));
    /* Reduce: same threads, the reduced index is 0, other indices kept. */
    int dim = rnd_below(rank);
    TlLayout red;
    CHECK(tl_layout_reduce(&red, &l, dim, NULL));
    CHECK_EQ_INT(tl_layout_num_threads(&red), nt);
    CHECK_EQ_INT(red.shape[dim], 1);
    for (int64_t t = 0; t < nt; t++) {
      int64_t a[TL_LAYOUT_MAX_RANK], b[TL_LAYOUT_MAX_RANK];
      tl_layout_map(&l, t, 0, a, NULL);
      tl_layout_map(&red, t, 0, b, NULL);
      for (int d = 0; d < rank; d++)
        CHECK_EQ_INT(b[d], d == dim ? 0 : a[d]);
    }
    /* Concat with a small layout: the outer product of the two maps. */
    TlLayout s2 = parse("spatial(2).local(3)"), cc;
    if (tl_layout_concat(&cc, &l, &s2, NULL)) {
      CHECK_EQ_INT(cc.rank, rank + 1);
      for (int64_t t = 0; t < nt * 2; t += 3)
        for (int64_t i = 0; i < nl * 3; i += 2) {
          int64_t a[TL_LAYOUT_MAX_RANK], b[1], c[TL_LAYOUT_MAX_RANK];
          tl_layout_map(&cc, t, i, c, NULL);
          tl_layout_map(&l, t / 2, i / 3, a, NULL);
          tl_layout_map(&s2, t % 2, i % 3, b, NULL);
          for (int d = 0; d < rank; d++)
            CHECK_EQ_INT(c[d], a[d]);
          CHECK_EQ_INT(c[rank], b[0]);
        }
    }
    tl_free(tab);
  }
  /* Specific results and failures. */
  TlLayout c = parse("local(2, 1).spatial(8, 4).local(1, 2)"), r;
  CHECK(tl_layout_reduce(&r, &c, 1, NULL));
  CHECK_EQ_STR(print(&r), "local(2, 1).spatial(8, 1).replicated(4)");
  CHECK(tl_layout_reduce(&r, &c, 0, NULL));
  CHECK_EQ_STR(print(&r), "replicated(8).spatial(1, 4).local(1, 2)");
  int64_t s16[1] = {128};
  CHECK(tl_layout_reshape(&r, &c, 1, s16, NULL));
  CHECK_EQ_STR(print(&r), "local(2).spatial(32).local(2)");
  TlLayout sp23 = parse("spatial(2, 3)");
  int64_t s32[2] = {3, 2};
  CHECK(!tl_layout_reshape(&r, &sp23, 2, s32, &err));
  CHECK_EQ_STR(err.msg, "cannot reshape: a mode of size 3 straddles the "
                        "boundary of new dimension 1 (size 2)");
  int64_t s7[1] = {7};
  CHECK(!tl_layout_reshape(&r, &sp23, 1, s7, &err));
  CHECK_EQ_STR(err.msg, "cannot reshape 6 elements into 7");
  CHECK(!tl_layout_squeeze(&r, &sp23, 0, &err));
  CHECK_EQ_STR(err.msg, "cannot squeeze dimension 0 of size 2");
  int bad[2] = {0, 0};
  CHECK(!tl_layout_permute(&r, &sp23, bad, &err));
  CHECK_EQ_STR(err.msg, "not a permutation of the 2 dimensions");
  TlLayout l8 = parse("local(1, 1, 1, 1, 1, 1, 1, 1)");
  CHECK(!tl_layout_unsqueeze(&r, &l8, 0, &err));
  CHECK(!tl_layout_concat(&r, &l8, &sp23, &err));
  CHECK_EQ_STR(err.msg, "concatenation has rank 10, above 8");
  /* map/locate range errors. */
  int64_t idx[2] = {2, 0}, loc, cnt;
  CHECK(!tl_layout_locate(&sp23, idx, &loc, NULL, 0, &cnt, &err));
  CHECK_EQ_STR(err.msg, "index 2 of dimension 0 is outside [0, 2)");
  CHECK(!tl_layout_map(&sp23, 6, 0, idx, &err));
  CHECK_EQ_STR(err.msg, "thread 6 is outside [0, 6)");
}

/* ---- hardware atoms against the PTX ISA fragment formulas ---- */
typedef void (*FragFn)(int lane, int i, int *row, int *col);

static void mma16816_a(int l, int i, int *r, int *c) {
  int g = l >> 2, t = l % 4;
  *r = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  *c = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
}
static void mma16816_b(int l, int i, int *r, int *c) {
  *r = (l % 4) * 2 + (i & 1) + (i >= 2 ? 8 : 0);
  *c = l >> 2;
}
static void mma_c(int l, int i, int *r, int *c) {
  *r = (l >> 2) + (i >= 2 ? 8 : 0);
  *c = (l % 4) * 2 + (i & 1);
}
static void mma1688_a(int l, int i, int *r, int *c) {
  *r = (l >> 2) + (i >= 2 ? 8 : 0);
  *c = (l % 4) * 2 + (i & 1);
}
static void mma1688_b(int l, int i, int *r, int *c) {
  *r = (l % 4) * 2 + i;
  *c = l >> 2;
}
static void mma16832_a(int l, int i, int *r, int *c) {
  int g = l >> 2, t = l % 4;
  *r = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
  *c = t * 4 + (i & 3) + (i >= 8 ? 16 : 0);
}
static void mma16832_b(int l, int i, int *r, int *c) {
  *r = (l % 4) * 4 + (i & 3) + (i >= 4 ? 16 : 0);
  *c = l >> 2;
}
static void mma168256_a(int l, int i, int *r, int *c) {
  int g = l >> 2, t = l % 4;
  *r = (i < 32 || (i >= 64 && i < 96)) ? g : g + 8;
  *c = t * 32 + (i & 31) + (i >= 64 ? 128 : 0);
}
static void mma168256_b(int l, int i, int *r, int *c) {
  *r = (l % 4) * 32 + (i & 31) + (i >= 32 ? 128 : 0);
  *c = l >> 2;
}
static void mma88128_a(int l, int i, int *r, int *c) {
  *r = l >> 2;
  *c = (l % 4) * 32 + i;
}
static void mma88128_b(int l, int i, int *r, int *c) {
  *r = (l % 4) * 32 + i;
  *c = l >> 2;
}
static void mma88128_c(int l, int i, int *r, int *c) {
  *r = l >> 2;
  *c = (l % 4) * 2 + i;
}
/* ldmatrix: register j holds matrix j (stacked at rows 8j); within a
 * matrix lane l holds row l / 4, columns 2 (l % 4) + {0, 1}; with .trans
 * it holds column l / 4, rows 2 (l % 4) + {0, 1}. */
static void ldm(int l, int i, int *r, int *c) {
  *r = (i / 2) * 8 + (l >> 2);
  *c = (l % 4) * 2 + (i & 1);
}
static void ldm_trans(int l, int i, int *r, int *c) {
  *r = (i / 2) * 8 + (l % 4) * 2 + (i & 1);
  *c = l >> 2;
}

static void check_atom(const char *name, int rows, int cols, int regs,
                       FragFn fn) {
  TlLayout a;
  TlErr err = {{0}};
  bool ok = tl_layout_atom(&a, name, &err);
  CHECK(ok);
  if (!ok)
    return;
  CHECK_EQ_INT(a.rank, 2);
  CHECK_EQ_INT(a.shape[0], rows);
  CHECK_EQ_INT(a.shape[1], cols);
  CHECK_EQ_INT(tl_layout_num_threads(&a), 32);
  CHECK_EQ_INT(tl_layout_local_size(&a), regs);
  int bad = 0;
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < regs; i++) {
      int r, c;
      int64_t idx[2];
      fn(lane, i, &r, &c);
      tl_layout_map(&a, lane, i, idx, NULL);
      if (idx[0] != r || idx[1] != c)
        bad++;
    }
  if (bad)
    fprintf(stderr, "atom %s: %d elements differ from the PTX table\n", name,
            bad);
  CHECK_EQ_INT(bad, 0);
}

static void test_atoms(void) {
  check_atom("mma_m16n8k16_f16_a", 16, 16, 8, mma16816_a);
  check_atom("mma_m16n8k16_f16_b", 16, 8, 4, mma16816_b);
  check_atom("mma_m16n8k16_f16_c", 16, 8, 4, mma_c);
  check_atom("mma_m16n8k16_bf16_a", 16, 16, 8, mma16816_a);
  check_atom("mma_m16n8k16_bf16_b", 16, 8, 4, mma16816_b);
  check_atom("mma_m16n8k16_bf16_c", 16, 8, 4, mma_c);
  check_atom("mma_m16n8k8_f16_a", 16, 8, 4, mma1688_a);
  check_atom("mma_m16n8k8_f16_b", 8, 8, 2, mma1688_b);
  check_atom("mma_m16n8k8_f16_c", 16, 8, 4, mma_c);
  check_atom("mma_m16n8k32_s8_a", 16, 32, 16, mma16832_a);
  check_atom("mma_m16n8k32_s8_b", 32, 8, 8, mma16832_b);
  check_atom("mma_m16n8k32_s8_c", 16, 8, 4, mma_c);
  check_atom("mma_m16n8k256_b1_a", 16, 256, 128, mma168256_a);
  check_atom("mma_m16n8k256_b1_b", 256, 8, 64, mma168256_b);
  check_atom("mma_m16n8k256_b1_c", 16, 8, 4, mma_c);
  check_atom("mma_m8n8k128_b1_a", 8, 128, 32, mma88128_a);
  check_atom("mma_m8n8k128_b1_b", 128, 8, 32, mma88128_b);
  check_atom("mma_m8n8k128_b1_c", 8, 8, 2, mma88128_c);
  check_atom("ldmatrix_x1", 8, 8, 2, ldm);
  check_atom("ldmatrix_x2", 16, 8, 4, ldm);
  check_atom("ldmatrix_x4", 32, 8, 8, ldm);
  check_atom("ldmatrix_x1_trans", 8, 8, 2, ldm_trans);
  check_atom("ldmatrix_x2_trans", 16, 8, 4, ldm_trans);
  check_atom("ldmatrix_x4_trans", 32, 8, 8, ldm_trans);
  int named = 0;
  for (int k = 0; k < tl_layout_atom_count(); k++) {
    TlLayout a;
    CHECK(tl_layout_atom(&a, tl_layout_atom_name(k), NULL));
    CHECK(tl_layout_atom_summary(k) != NULL);
    named++;
  }
  CHECK_EQ_INT(named, 24);
  CHECK(tl_layout_atom_name(named) == NULL);
  TlErr err = {{0}};
  TlLayout a;
  CHECK(!tl_layout_atom(&a, "mma_m1", &err));
  CHECK_EQ_STR(err.msg,
               "unknown atom 'mma_m1' (tl-layout --list-atoms lists them)");

  /* Tile layouts built from atoms are recognised by division: a 64x32 A tile
   * over 4 warps (2 x 2) with 2 x 2 mma per warp. */
  TlLayout atom_a, q, tile;
  tl_layout_atom(&atom_a, "mma_m16n8k16_f16_a", NULL);
  TlLayout outer = parse("spatial(2, 2).local(2, 1)");
  CHECK(tl_layout_product(&tile, &outer, &atom_a, NULL));
  CHECK(tl_layout_match_atom(&tile, &atom_a, &q, NULL));
  CHECK(tl_layout_equal(&q, &outer));
  /* The C accumulator layout is not an A fragment. */
  TlLayout atom_c;
  tl_layout_atom(&atom_c, "mma_m16n8k16_f16_c", NULL);
  CHECK(!tl_layout_match_atom(&atom_c, &atom_a, &q, &err));
  CHECK(strncmp(err.msg, "layout is not a tiling of the atom: ", 36) == 0);
  /* A fragment: ldmatrix.x4 fills it (4 matrices per thread); the B
   * fragment is ldmatrix.x2.trans; C's per-thread rows fit x2. */
  CHECK(tl_layout_ldmatrix_compatible(&atom_a, 16, false, 4, &q, NULL));
  CHECK_EQ_STR(print(&q), "column_local(2, 2)");
  TlLayout atom_b;
  tl_layout_atom(&atom_b, "mma_m16n8k16_f16_b", NULL);
  CHECK(tl_layout_ldmatrix_compatible(&atom_b, 16, true, 2, &q, NULL));
  CHECK(!tl_layout_ldmatrix_compatible(&atom_b, 16, true, 4, &q, &err));
  CHECK_EQ_STR(err.msg, "each thread holds 2 matrices, not a multiple of the "
                        "4 one ldmatrix.x4 loads");
  CHECK(!tl_layout_ldmatrix_compatible(&atom_b, 16, false, 1, &q, &err));
  CHECK(!tl_layout_ldmatrix_compatible(&atom_b, 8, true, 1, &q, &err));
  CHECK_EQ_STR(err.msg, "ldmatrix .trans moves 16-bit elements, not 8-bit");
  /* s8 A (16x32 bytes) is ldmatrix.x4 of 8-bit elements. */
  TlLayout s8a;
  tl_layout_atom(&s8a, "mma_m16n8k32_s8_a", NULL);
  CHECK(tl_layout_ldmatrix_compatible(&s8a, 8, false, 4, NULL, NULL));
  /* Batched tiles: a rank-3 layout with the atom in the last two dims. */
  TlLayout batched = parse("spatial(2, 1, 1).local(1, 2, 1)");
  TlLayout ab1, c3;
  CHECK(tl_layout_unsqueeze(&ab1, &atom_c, 0, NULL));
  CHECK(tl_layout_product(&c3, &batched, &ab1, NULL));
  CHECK(tl_layout_match_atom(&c3, &atom_c, &q, NULL));
  CHECK(tl_layout_equal(&q, &batched));
}

/* ---- slices ---- */

/* A random size for dimension d of l: the product of a random number of
 * the dimension's trailing modes (valid sizes), or now and then any
 * divisor of the dimension (which may fail). */
static int64_t random_slice_size(const TlLayout *l, int d) {
  int64_t n = l->shape[d];
  if (rnd_below(4) == 0) {
    int64_t sz = 1 + rnd_below((int)n);
    while (n % sz != 0)
      sz--;
    return sz;
  }
  int64_t size = 1;
  for (int m = l->num_modes - 1; m >= 0; m--)
    if (l->mode_dim[m] == d) {
      if (rnd_below(3) == 0)
        break;
      size *= l->mode_shape[m];
    }
  return size;
}

/* Whether every thread of l holds at least one element of the box. */
static bool every_thread_in_box(const TlLayout *l, const int64_t *off,
                                const int64_t *size) {
  int64_t nt = tl_layout_num_threads(l), nl = tl_layout_local_size(l);
  for (int64_t t = 0; t < nt; t++) {
    bool any = false;
    for (int64_t i = 0; i < nl && !any; i++) {
      int64_t idx[TL_LAYOUT_MAX_RANK];
      tl_layout_map(l, t, i, idx, NULL);
      any = true;
      for (int d = 0; d < l->rank; d++)
        any = any && idx[d] >= off[d] && idx[d] < off[d] + size[d];
    }
    if (!any)
      return false;
  }
  return true;
}

static void test_slice(void) {
  /* The mma C fragment's lower half: thread t keeps its registers 2, 3. */
  TlLayout c = parse("local(2, 1).spatial(8, 4).local(1, 2)"), s;
  int64_t off[TL_LAYOUT_MAX_RANK] = {8, 0}, size[TL_LAYOUT_MAX_RANK] = {8, 8};
  int64_t map[64];
  TlErr err = {{0}};
  CHECK(tl_layout_slice(&s, &c, off, size, map, NULL));
  CHECK_EQ_STR(print(&s), "spatial(8, 4).local(1, 2)");
  CHECK_EQ_INT(map[0], 2);
  CHECK_EQ_INT(map[1], 3);
  /* A column slice of the A fragment keeps registers 4..7 (column_local). */
  TlLayout a = parse("column_local(2, 2).spatial(8, 4).local(1, 2)");
  off[0] = 0, off[1] = 8, size[0] = 16, size[1] = 8;
  CHECK(tl_layout_slice(&s, &a, off, size, map, NULL));
  CHECK_EQ_STR(print(&s), "local(2, 1).spatial(8, 4).local(1, 2)");
  CHECK_EQ_INT(map[0], 4);
  CHECK_EQ_INT(map[1], 5);
  CHECK_EQ_INT(map[2], 6);
  CHECK_EQ_INT(map[3], 7);
  /* A local mode splits: rows 2..3 of local(4, 1).spatial(1, 32). */
  TlLayout r = parse("local(4, 1).spatial(1, 32)");
  off[0] = 2, off[1] = 0, size[0] = 2, size[1] = 32;
  CHECK(tl_layout_slice(&s, &r, off, size, map, NULL));
  CHECK_EQ_STR(print(&s), "local(2, 1).spatial(1, 32)");
  CHECK_EQ_INT(map[0], 2);
  CHECK_EQ_INT(map[1], 3);
  /* Failures name the dimension and the reason. */
  TlLayout sp = parse("spatial(4, 8)");
  off[0] = 0, off[1] = 0, size[0] = 2, size[1] = 8;
  CHECK(!tl_layout_slice(&s, &sp, off, size, NULL, &err));
  CHECK_EQ_STR(err.msg, "dimension 0: the sliced-off mode of size 2 is "
                        "spatial (its other elements are held by other "
                        "threads)");
  TlLayout l3 = parse("local(3).spatial(32)");
  int64_t o1[1] = {0}, s1[1] = {64};
  CHECK(!tl_layout_slice(&s, &l3, o1, s1, NULL, &err));
  CHECK_EQ_STR(err.msg, "dimension 0: size 64 is not a product of trailing "
                        "modes of the dimension");
  o1[0] = 16, s1[0] = 32;
  CHECK(!tl_layout_slice(&s, &l3, o1, s1, NULL, &err));
  CHECK_EQ_STR(err.msg, "dimension 0: offset 16 is not a multiple of the size "
                        "32");
  o1[0] = 64, s1[0] = 64;
  CHECK(!tl_layout_slice(&s, &l3, o1, s1, NULL, &err));
  CHECK_EQ_STR(err.msg, "dimension 0: [64, 128) is outside [0, 96)");

  /* Random layouts: on success, thread t's local j of the slice is the
   * operand's element at local_map[j] moved by the offsets (map), every
   * element of the box held by t is among them (counts), and locate agrees;
   * a spatial failure means some thread holds nothing of the box. */
  int ok_count = 0;
  for (int iter = 0; iter < 3000; iter++) {
    Chain cl;
    int rank = 1 + rnd_below(3);
    random_chain(&cl, rank, false, true);
    TlLayout l;
    if (!chain_build(&cl, &l))
      continue;
    for (int d = 0; d < rank; d++) {
      size[d] = random_slice_size(&l, d);
      off[d] = size[d] * rnd_below((int)(l.shape[d] / size[d]));
    }
    int64_t lmap[512];
    if (!tl_layout_slice(&s, &l, off, size, lmap, &err)) {
      if (strstr(err.msg, "spatial"))
        CHECK(!every_thread_in_box(&l, off, size));
      else
        CHECK(strstr(err.msg, "not a product of trailing modes") != NULL);
      continue;
    }
    ok_count++;
    int64_t nt = tl_layout_num_threads(&s), nl = tl_layout_local_size(&s);
    CHECK_EQ_INT(nt, tl_layout_num_threads(&l));
    CHECK_EQ_INT(tl_layout_replication(&s), tl_layout_replication(&l));
    for (int d = 0; d < rank; d++)
      CHECK_EQ_INT(s.shape[d], size[d]);
    for (int64_t t = 0; t < nt; t++) {
      for (int64_t j = 0; j < nl; j++) {
        int64_t a_idx[TL_LAYOUT_MAX_RANK], b_idx[TL_LAYOUT_MAX_RANK];
        tl_layout_map(&s, t, j, a_idx, NULL);
        tl_layout_map(&l, t, lmap[j], b_idx, NULL);
        for (int d = 0; d < rank; d++)
          CHECK_EQ_INT(a_idx[d] + off[d], b_idx[d]);
        /* locate: the slice's local j and the operand's local_map[j]. */
        int64_t lj, lo, cnt, cnt2, th[4], th2[4];
        CHECK(tl_layout_locate(&s, a_idx, &lj, th, 4, &cnt, NULL));
        CHECK(tl_layout_locate(&l, b_idx, &lo, th2, 4, &cnt2, NULL));
        CHECK_EQ_INT(lj, j);
        CHECK_EQ_INT(lo, lmap[j]);
        CHECK_EQ_INT(cnt, cnt2);
        CHECK(memcmp(th, th2, sizeof(int64_t) * (size_t)(cnt < 4 ? cnt : 4)) ==
              0);
      }
      /* The thread holds exactly nl elements of the box in the operand. */
      int64_t held = 0;
      for (int64_t i = 0; i < tl_layout_local_size(&l); i++) {
        int64_t idx[TL_LAYOUT_MAX_RANK];
        bool in = true;
        tl_layout_map(&l, t, i, idx, NULL);
        for (int d = 0; d < rank; d++)
          in = in && idx[d] >= off[d] && idx[d] < off[d] + size[d];
        held += in;
      }
      CHECK_EQ_INT(held, nl);
    }
  }
  CHECK(ok_count > 1000);
}

/* Shared slices as views: the same layout at every offset, moved by the
 * shift; swizzled layouts need sliced-off strides in whole swizzle
 * blocks. */
static void test_shared_slice_view(void) {
  TlSharedLayout l, v, w;
  TlErr err = {{0}};
  int64_t shape[3] = {3, 64, 32}, size[3] = {1, 64, 32}, off[3] = {2, 0, 0};
  CHECK(tl_shared_layout_row_major(&l, 3, shape, NULL));
  CHECK(tl_shared_layout_swizzle(&l, &l, 3, 3, 3, NULL));
  int64_t shift = -1;
  CHECK(tl_shared_layout_slice_view(&v, &shift, &l, off, size, NULL));
  CHECK_EQ_INT(shift, 2 * 64 * 32);
  CHECK(tl_shared_layout_row_major(&w, 3, size, NULL));
  CHECK(tl_shared_layout_swizzle(&w, &w, 3, 3, 3, NULL));
  CHECK(tl_shared_layout_equal(&v, &w));
  /* 16 rows: the row mode splits at stride 16 * 32 = 512, one block. */
  int64_t size16[3] = {1, 16, 32}, off16[3] = {1, 48, 0};
  CHECK(tl_shared_layout_slice_view(&v, &shift, &l, off16, size16, NULL));
  CHECK_EQ_INT(shift, 64 * 32 + 48 * 32);
  /* 8 rows: stride 256 is half a block of 512: not a view. */
  int64_t size8[3] = {1, 8, 32};
  CHECK(!tl_shared_layout_slice_view(&v, &shift, &l, NULL, size8, &err));
  CHECK_EQ_STR(err.msg, "dimension 1: the sliced-off mode of size 8 has stride "
                        "256, not a multiple of the swizzle block of 512 "
                        "elements");
  /* Random offsets of random swizzled tiles: offset(l, i + off) ==
   * offset(view, i) + shift for every index. */
  int checked = 0;
  for (int iter = 0; iter < 400; iter++) {
    int64_t sh[2] = {(int64_t)1 << (1 + rnd_below(5)),
                     (int64_t)1 << (1 + rnd_below(6))};
    TlSharedLayout b;
    CHECK(rnd_below(2) ? tl_shared_layout_row_major(&b, 2, sh, NULL)
                       : tl_shared_layout_column_major(&b, 2, sh, NULL));
    int bits = rnd_below(3), mb = rnd_below(3), sft = bits + rnd_below(3);
    if (bits)
      CHECK(tl_shared_layout_swizzle(&b, &b, bits, mb, sft, NULL));
    int64_t sz[2], o[2];
    for (int d = 0; d < 2; d++) {
      sz[d] = sh[d] >> rnd_below(3);
      sz[d] = sz[d] ? sz[d] : 1;
      o[d] = sz[d] * rnd_below((int)(sh[d] / sz[d]));
    }
    if (!tl_shared_layout_slice_view(&v, &shift, &b, o, sz, &err)) {
      CHECK(strstr(err.msg, "swizzle block") != NULL);
      continue;
    }
    checked++;
    for (int64_t i = 0; i < sz[0]; i++)
      for (int64_t j = 0; j < sz[1]; j++) {
        int64_t in[2] = {i, j}, at[2] = {i + o[0], j + o[1]}, x, y;
        CHECK(tl_shared_layout_offset(&v, in, &x, NULL));
        CHECK(tl_shared_layout_offset(&b, at, &y, NULL));
        CHECK_EQ_INT(x + shift, y);
      }
  }
  CHECK(checked > 100);
}

/* tl_layout_reorder: the i4 -> f16 recipe order of a thread's eight values
 * (local(2,1,1).local(1,1,2).local(1,2,1)) against the fragment order, a
 * layout against itself, one that hands elements to other threads, and
 * replicated layouts. */
static void test_reorder(void) {
  TlLayout arr = parse("local(2, 1, 1).local(1, 1, 2).local(1, 2, 1).spatial(1, 1, 32)");
  TlLayout ord = parse("local(1, 1, 2).local(1, 2, 1).local(2, 1, 1).spatial(1, 1, 32)");
  int64_t perm[8];
  CHECK_EQ_INT(tl_layout_reorder(&arr, &ord, perm), 1);
  /* ord's local i = (d2, d1, d0) bits; arr's local = d0*4 + d2*2 + d1. */
  for (int64_t i = 0; i < 8; i++)
    CHECK_EQ_INT(perm[i], (i & 1) * 4 + (i >> 2) * 2 + ((i >> 1) & 1));
  CHECK_EQ_INT(tl_layout_reorder(&ord, &ord, perm), 1);
  for (int64_t i = 0; i < 8; i++)
    CHECK_EQ_INT(perm[i], i);
  TlLayout sp = parse("spatial(4, 8)"), cs = parse("column_spatial(4, 8)");
  CHECK_EQ_INT(tl_layout_reorder(&sp, &cs, perm), -1);
  TlLayout rep = parse("spatial(1, 8).replicated(4)");
  TlLayout rep2 = parse("spatial(1, 8).replicated(4)");
  CHECK_EQ_INT(tl_layout_reorder(&rep, &rep2, perm), -1);
}

int main(void) {
  test_paper_examples();
  test_canonical();
  test_random_laws();
  test_canonical_iff_table();
  test_syntax();
  test_division();
  test_shape_ops();
  test_slice();
  test_shared_slice_view();
  test_atoms();
  test_reorder();
  return unit_report();
}
