/* libFuzzer target for the layout algebra. The first byte picks what the
 * rest of the input is (its value mod 3, so the seeds can start with the
 * digits '0', '1', '2'):
 *   0  text: the parser never crashes, and whatever parses prints to text
 *      that parses back to an equal layout and prints the same again;
 *   1  three chains of primitives decoded from the bytes: the laws
 *      (associativity, (f.g)/g = f, f\(f.g) = g, canonical form <=>
 *      mapping table, each element held by exactly replication() threads,
 *      locate inverts map, print/parse identity, the GF(2) view agrees with
 *      the table, shape operations round-trip);
 *   2  a raw TlLayout struct: canonicalize rejects it or returns a layout
 *      that behaves (print/parse identity, map within the shape);
 *   3  a hardware atom tiled by a decoded outer layout, read from a
 *      decoded (swizzled) shared layout: the GF(2) bank-conflict count
 *      equals the enumerating counter, and the ldmatrix-friendly layouts
 *      are conflict-free.
 * A broken law aborts with a message naming it. */
#include "tl/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *law, const TlLayout *a, const TlLayout *b) {
  TlStr s = {0};
  tl_layout_print_explicit(a, &s);
  if (b) {
    tl_str_puts(&s, " vs ");
    tl_layout_print_explicit(b, &s);
  }
  fprintf(stderr, "layout law broken: %s: %s\n", law, tl_str_cstr(&s));
  tl_str_free(&s);
  abort();
}

/* Parse(print(l)) == l and print is stable. */
static void check_text(const TlLayout *l) {
  TlStr s = {0}, t = {0};
  TlLayout back;
  TlErr err;
  tl_layout_print(l, &s);
  if (!tl_layout_parse(&back, s.data, s.len, &err, NULL)) {
    fprintf(stderr, "printed text does not parse: %s: %s\n", tl_str_cstr(&s),
            err.msg);
    abort();
  }
  if (!tl_layout_equal(&back, l))
    fail("parse(print(l)) == l", l, &back);
  tl_layout_print(&back, &t);
  if (strcmp(tl_str_cstr(&s), tl_str_cstr(&t)) != 0)
    fail("print is stable", l, &back);
  tl_str_clear(&s);
  tl_layout_print_explicit(l, &s);
  if (!tl_layout_parse(&back, s.data, s.len, NULL, NULL) ||
      !tl_layout_equal(&back, l))
    fail("explicit form round trip", l, NULL);
  tl_str_free(&s);
  tl_str_free(&t);
}

static int64_t cells(const TlLayout *l) {
  return tl_layout_num_threads(l) * tl_layout_local_size(l);
}

static int64_t flat_of(const TlLayout *l, const int64_t *idx) {
  int64_t f = 0;
  for (int d = 0; d < l->rank; d++)
    f = f * l->shape[d] + idx[d];
  return f;
}

/* Checks the table-level laws of one small layout. */
static void check_table(const TlLayout *l) {
  int64_t nt = tl_layout_num_threads(l), nl = tl_layout_local_size(l);
  int64_t n = tl_layout_num_elements(l);
  int64_t rep = tl_layout_replication(l);
  if (nt * nl != n * rep)
    fail("threads * local == elements * replication", l, NULL);
  int *hits = tl_xcalloc((size_t)n, sizeof(int));
  TlLinearLayout lin;
  bool linear = tl_layout_to_linear(l, &lin, NULL);
  for (int64_t t = 0; t < nt; t++)
    for (int64_t i = 0; i < nl; i++) {
      int64_t idx[TL_LAYOUT_MAX_RANK], loc, count, thr[4];
      if (!tl_layout_map(l, t, i, idx, NULL))
        fail("map accepts every (thread, local)", l, NULL);
      int64_t f = flat_of(l, idx);
      hits[f]++;
      if (!tl_layout_locate(l, idx, &loc, thr, 4, &count, NULL) || loc != i ||
          count != rep)
        fail("locate inverts map", l, NULL);
      if (linear && tl_linear_apply(
                        &lin, (uint64_t)i | ((uint64_t)t << lin.local_bits)) !=
                        (uint64_t)f)
        fail("GF(2) view agrees with the table", l, NULL);
    }
  for (int64_t f = 0; f < n; f++)
    if (hits[f] != rep)
      fail("each element is held by replication() threads", l, NULL);
  tl_free(hits);
  if (linear) {
    TlLayout back;
    if (!tl_linear_to_layout(&lin, &back, NULL) || !tl_layout_equal(&back, l))
      fail("layout -> GF(2) -> layout", l, &back);
  }
}

static bool same_table(const TlLayout *a, const TlLayout *b) {
  if (a->rank != b->rank ||
      tl_layout_num_threads(a) != tl_layout_num_threads(b) ||
      tl_layout_local_size(a) != tl_layout_local_size(b) ||
      memcmp(a->shape, b->shape, sizeof a->shape) != 0)
    return false;
  for (int64_t t = 0; t < tl_layout_num_threads(a); t++)
    for (int64_t i = 0; i < tl_layout_local_size(a); i++) {
      int64_t x[TL_LAYOUT_MAX_RANK], y[TL_LAYOUT_MAX_RANK];
      tl_layout_map(a, t, i, x, NULL);
      tl_layout_map(b, t, i, y, NULL);
      if (flat_of(a, x) != flat_of(b, y))
        return false;
    }
  return true;
}

typedef struct Reader {
  const uint8_t *p;
  size_t n;
} Reader;

static int next(Reader *r) {
  if (r->n == 0)
    return 0;
  r->n--;
  return *r->p++;
}

/* A chain of 1-3 primitives of the given rank with sizes from {1..4, 6, 8}. */
static bool chain(Reader *r, int rank, TlLayout *out) {
  static const int64_t sizes[8] = {1, 2, 3, 4, 1, 2, 6, 8};
  int terms = 1 + next(r) % 3;
  for (int k = 0; k < terms; k++) {
    int kind = next(r) % 5;
    int64_t dims[TL_LAYOUT_MAX_RANK];
    for (int d = 0; d < rank; d++)
      dims[d] = sizes[next(r) % 8];
    TlLayout t;
    bool ok;
    switch (kind) {
    case 0:
      ok = tl_layout_local(&t, rank, dims, NULL);
      break;
    case 1:
      ok = tl_layout_spatial(&t, rank, dims, NULL);
      break;
    case 2:
      ok = tl_layout_column_local(&t, rank, dims, NULL);
      break;
    case 3:
      ok = tl_layout_column_spatial(&t, rank, dims, NULL);
      break;
    default:
      ok = tl_layout_replicated(&t, rank, dims[0], NULL);
      break;
    }
    if (!ok)
      abort(); /* small valid sizes never fail */
    if (k == 0)
      *out = t;
    else if (!tl_layout_product(out, out, &t, NULL))
      return false;
  }
  return true;
}

static void laws(Reader *r) {
  int rank = 1 + next(r) % 3;
  TlLayout f, g, h;
  if (!chain(r, rank, &f) || !chain(r, rank, &g) || !chain(r, rank, &h))
    return;
  TlLayout fg, gh, a, b, q;
  bool ok1 = tl_layout_product(&fg, &f, &g, NULL) &&
             tl_layout_product(&a, &fg, &h, NULL);
  bool ok2 = tl_layout_product(&gh, &g, &h, NULL) &&
             tl_layout_product(&b, &f, &gh, NULL);
  if (ok1 != ok2 || (ok1 && !tl_layout_equal(&a, &b)))
    fail("associativity", &a, &b);
  if (!tl_layout_product(&fg, &f, &g, NULL))
    return;
  if (!tl_layout_divide(&q, &fg, &g, NULL) || !tl_layout_equal(&q, &f))
    fail("(f.g)/g == f", &fg, &g);
  if (!tl_layout_divide_left(&q, &f, &fg, NULL) || !tl_layout_equal(&q, &g))
    fail("f\\(f.g) == g", &f, &fg);
  check_text(&fg);
  if (cells(&fg) <= 4096)
    check_table(&fg);
  if (cells(&f) <= 1024 && cells(&g) <= 1024 &&
      tl_layout_equal(&f, &g) != same_table(&f, &g))
    fail("equal canonical forms <=> equal tables", &f, &g);
  /* Shape operations that must round-trip. */
  TlLayout flat, back, p, u;
  if (!tl_layout_flatten(&flat, &fg, 0, fg.rank - 1, NULL))
    fail("flatten always succeeds", &fg, NULL);
  int64_t shape[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < fg.rank; d++)
    shape[d] = fg.shape[d];
  if (!tl_layout_reshape(&back, &flat, fg.rank, shape, NULL) ||
      !tl_layout_equal(&back, &fg))
    fail("reshape(flatten(l)) == l", &fg, &back);
  int perm[TL_LAYOUT_MAX_RANK], inv[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < fg.rank; d++)
    perm[d] = (d + 1) % fg.rank;
  for (int d = 0; d < fg.rank; d++)
    inv[perm[d]] = d;
  if (!tl_layout_permute(&p, &fg, perm, NULL) ||
      !tl_layout_permute(&back, &p, inv, NULL) || !tl_layout_equal(&back, &fg))
    fail("permute round trip", &fg, &back);
  int at = next(r) % (fg.rank + 1);
  if (!tl_layout_unsqueeze(&u, &fg, at, NULL) ||
      !tl_layout_squeeze(&back, &u, at, NULL) || !tl_layout_equal(&back, &fg))
    fail("squeeze(unsqueeze(l)) == l", &fg, &back);
  int dim = next(r) % fg.rank;
  TlLayout red;
  if (!tl_layout_reduce(&red, &fg, dim, NULL) ||
      tl_layout_num_threads(&red) != tl_layout_num_threads(&fg))
    fail("reduce keeps the threads", &fg, &red);
  check_text(&red);
}

static void raw(const uint8_t *data, size_t size) {
  TlLayout l;
  memset(&l, 0, sizeof l);
  memcpy(&l, data, size < sizeof l ? size : sizeof l);
  if (!tl_layout_canonicalize(&l, NULL))
    return;
  check_text(&l);
  TlLayout again = l;
  if (!tl_layout_canonicalize(&again, NULL) || !tl_layout_equal(&again, &l))
    fail("canonicalize is idempotent", &l, &again);
  if (cells(&l) <= 4096)
    check_table(&l);
}

static void banks(Reader *r) {
  TlLayout atom, outer, reg;
  int n = tl_layout_atom_count();
  if (!tl_layout_atom(&atom, tl_layout_atom_name(next(r) % n), NULL))
    abort();
  int64_t dims[2] = {1 << next(r) % 3, 1 << next(r) % 3};
  bool spatial = next(r) & 1;
  if (!(spatial ? tl_layout_spatial(&outer, 2, dims, NULL)
                : tl_layout_local(&outer, 2, dims, NULL)) ||
      !tl_layout_product(&reg, &outer, &atom, NULL))
    abort();
  int64_t shape[2] = {reg.shape[0], reg.shape[1]};
  TlSharedLayout plain, sm;
  if (!(next(r) & 1 ? tl_shared_layout_row_major(&plain, 2, shape, NULL)
                    : tl_shared_layout_column_major(&plain, 2, shape, NULL)))
    abort();
  int b = next(r) % 4, m = next(r) % 5, s = b + next(r) % 3;
  if (b == 0 || !tl_shared_layout_swizzle(&sm, &plain, b, m, s, NULL))
    sm = plain;
  TlStr txt = {0};
  TlSharedLayout back;
  tl_shared_layout_print(&sm, &txt);
  if (!tl_shared_layout_parse(&back, txt.data, txt.len, NULL, NULL) ||
      !tl_shared_layout_equal(&back, &sm)) {
    fprintf(stderr, "shared layout text round trip: %s\n", tl_str_cstr(&txt));
    abort();
  }
  tl_str_free(&txt);
  int eb = 8 << next(r) % 3, vec = 1 << next(r) % 3;
  int w1 = -1, w2 = -1;
  bool ok1 = tl_shared_layout_wavefronts(&sm, &reg, eb, 0, 0, vec, &w1, NULL);
  bool ok2 = tl_shared_layout_wavefronts_linear(&sm, &reg, eb, vec, &w2, NULL);
  if (ok1 && ok2 && w1 != w2)
    fail("GF(2) wavefronts == enumerated wavefronts", &reg, NULL);
  /* Both succeed on the same inputs except where the element width is
   * below a byte or above the GF(2) version's power-of-two requirements. */
  if (ok1 != ok2)
    fail("GF(2) and enumerated wavefronts accept the same accesses", &reg,
         NULL);
  /* ldmatrix.x4 phases over the ldmatrix-friendly layout: 4 wavefronts. */
  int64_t rb = 16 << next(r) % 5;
  int ebits = 4 << next(r) % 3;
  TlSharedLayout ld;
  if (!tl_shared_layout_ldmatrix(&ld, 32, rb, ebits, NULL))
    abort();
  int64_t chunk = next(r) % (rb / 16), addrs[32];
  for (int lane = 0; lane < 32; lane++) {
    int64_t idx[2] = {lane % 8 + 8 * (lane / 8), chunk * (128 / ebits)}, off;
    if (!tl_shared_layout_offset(&ld, idx, &off, NULL))
      abort();
    addrs[lane] = off * ebits / 8;
  }
  int w = -1;
  if (!tl_smem_wavefronts(addrs, 32, 16, &w, NULL) || w != 4) {
    fprintf(stderr,
            "ldmatrix layout with %lld-byte rows of %d-bit elements: "
            "%d wavefronts\n",
            (long long)rb, ebits, w);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  int mode = data[0] % 4;
  data++, size--;
  if (mode == 0) {
    TlLayout l;
    TlErr err;
    size_t at = 0;
    if (tl_layout_parse(&l, (const char *)data, size, &err, &at)) {
      check_text(&l);
      if (cells(&l) <= 4096)
        check_table(&l);
      if (tl_layout_num_elements(&l) <= 4096) {
        TlStr s = {0};
        tl_layout_render(&l, &s);
        tl_str_free(&s);
      }
    } else if (at > size) {
      fprintf(stderr, "error offset %zu past the input (%zu bytes)\n", at,
              size);
      abort();
    }
  } else if (mode == 1) {
    Reader r = {data, size};
    laws(&r);
  } else if (mode == 2) {
    raw(data, size);
  } else {
    Reader r = {data, size};
    banks(&r);
  }
  return 0;
}
