/* Element arithmetic of the VM: scalar types as codes, exact decoding,
 * correctly rounded encoding, the conversions of tl.cast, rounding to odd
 * (so that a sum computed in double and rounded once more to a narrower
 * format is correctly rounded), and the pointer-keyed map the VM caches
 * with. */
#include "vm_internal.h"

/*===--- Element types ---------------------------------------------------===*/

bool tl_vm_dtype_of(const TlType *t, TlDType *out) { return tl_type_to_dtype(t, out); }

static const double *half_table(TlVm *vm, TlDType dt, double **slot) {
  if (!*slot) {
    *slot = tl_xmalloc(sizeof(double) * 65536);
    for (uint32_t c = 0; c < 65536; c++)
      (*slot)[c] = tl_dtype_decode(dt, c);
  }
  return *slot;
}

const EType *vm_etype(TlVm *vm, TlType *t) {
  EType *e = pmap_get(&vm->etypes, t);
  if (e)
    return e;
  e = TL_ARENA_NEW(&vm->arena, EType);
  e->type = t;
  e->bits = tl_type_bitwidth(t);
  e->mask = e->bits >= 64 ? ~0ull : (1ull << e->bits) - 1;
  e->kind = tl_type_is_bool(t)      ? EK_BOOL
            : tl_type_is_float(t)   ? EK_FLOAT
            : tl_type_int_signed(t) ? EK_SINT
                                    : EK_UINT;
  e->has_dt = tl_vm_dtype_of(t, &e->dt);
  if (e->kind == EK_FLOAT) {
    e->has_nan = tl_dtype_nan_code(e->dt, &e->nan_code);
    if (e->bits <= 8) {
      double *tab = TL_ARENA_NEWN(&vm->arena, double, 1u << e->bits);
      for (uint32_t c = 0; c < (1u << e->bits); c++)
        tab[c] = tl_dtype_decode(e->dt, c);
      e->table = tab;
    } else if (e->bits == 16) {
      e->table = tl_type_float_exp(t) == 5
                     ? half_table(vm, e->dt, &vm->f16_table)
                     : half_table(vm, e->dt, &vm->bf16_table);
    }
  }
  pmap_put(&vm->etypes, t, e);
  return e;
}

double e_fdecode_slow(const EType *e, uint64_t c) {
  return tl_dtype_decode(e->dt, c);
}

uint64_t e_fencode(const EType *e, double x) {
  if (e->bits == 32) {
    if (isnan(x))
      return e->nan_code;
    float f = (float)x; /* round to nearest even, overflow to inf */
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  if (e->bits == 64) {
    if (isnan(x))
      return e->nan_code;
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
  }
  return tl_dtype_encode(e->dt, x);
}

/*===--- Rounding to odd --------------------------------------------------===*/

/* The exact sum is s + err (TwoSum). When err is nonzero the exact value
 * lies strictly between s and its neighbour towards err; of those two
 * adjacent doubles exactly one has an odd significand, and rounding to odd
 * picks it. A later rounding to p <= 51 bits then rounds as the exact sum
 * would (Boldo and Melquiond's rounding to odd). */
double e_add_odd(double x, double y) {
  double s = x + y;
  if (!isfinite(s))
    return s;
  double bb = s - x;
  double err = (x - (s - bb)) + (y - bb);
  if (err == 0)
    return s;
  uint64_t u;
  memcpy(&u, &s, 8);
  if (u & 1)
    return s;
  return nextafter(s, err > 0 ? INFINITY : -INFINITY);
}

static double odd_from_u64(uint64_t v) {
  double d = (double)v; /* nearest even */
  if (v < (1ull << 53))
    return d;
  /* d is exact or its neighbour; compare as integers (d < 2^64 + 2^11). */
  if (d >= 18446744073709551616.0)
    return nextafter(d, 0); /* v < d: the odd neighbour below */
  uint64_t back = (uint64_t)d;
  if (back == v)
    return d;
  uint64_t u;
  memcpy(&u, &d, 8);
  if (u & 1)
    return d;
  return nextafter(d, back < v ? INFINITY : 0);
}

double e_u64_odd(uint64_t v) { return odd_from_u64(v); }

double e_i64_odd(int64_t v) {
  if (v >= 0)
    return odd_from_u64((uint64_t)v);
  uint64_t mag = (uint64_t)0 - (uint64_t)v;
  return -odd_from_u64(mag);
}

/*===--- Conversions ------------------------------------------------------===*/

/* Saturating conversion of an exact integer value (as a sign and
 * magnitude) to an integer type. */
static uint64_t int_to_int(const EType *d, bool neg, uint64_t mag) {
  if (d->kind == EK_BOOL)
    return mag != 0;
  if (d->kind == EK_UINT)
    return neg ? 0 : (mag > d->mask ? d->mask : mag);
  uint64_t maxpos = d->mask >> 1; /* 2^(w-1) - 1 */
  if (!neg)
    return mag > maxpos ? maxpos : mag;
  if (mag > maxpos + 1)
    mag = maxpos + 1;
  return ((uint64_t)0 - mag) & d->mask;
}

/* x rounded to an integer by mode (a TlRounding); each C function is
 * exact (nearbyint rounds to nearest even in the default rounding mode,
 * which the VM never changes). */
static double round_int(double x, int mode) {
  switch (mode) {
  case TL_ROUND_RN:
    return nearbyint(x);
  case TL_ROUND_RM:
    return floor(x);
  case TL_ROUND_RP:
    return ceil(x);
  default:
    return trunc(x);
  }
}

/* Float to integer: rounded by mode (toward zero for arith.fptoi),
 * saturating, NaN to 0; bool: nonzero (NaN is true, as lib/dtype encodes
 * bool). */
static uint64_t float_to_int(const EType *d, double x, int mode) {
  if (d->kind == EK_BOOL)
    return x != 0 || isnan(x);
  if (isnan(x))
    return 0;
  double t = round_int(x, mode);
  bool neg = t < 0;
  double m = fabs(t);
  if (m >= 18446744073709551616.0)
    return int_to_int(d, neg, ~0ull);
  return int_to_int(d, neg, (uint64_t)m);
}

uint64_t e_convert_rounded(const EType *s, const EType *d, uint64_t c,
                           int mode) {
  if (s->kind == EK_FLOAT && d->kind != EK_FLOAT)
    return float_to_int(d, e_f(s, c), mode);
  return e_convert(s, d, c);
}

uint64_t e_convert(const EType *s, const EType *d, uint64_t c) {
  if (s->type == d->type) /* the identity: NaN payloads kept */
    return c;
  if (s->kind == EK_FLOAT) {
    double x = e_f(s, c);
    if (d->kind == EK_FLOAT)
      return e_fencode(d, x); /* x is exact: one rounding */
    return float_to_int(d, x, TL_ROUND_RZ);
  }
  bool neg = false;
  uint64_t mag = c;
  if (s->kind == EK_SINT) {
    int64_t v = e_sval(s, c);
    neg = v < 0;
    mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  }
  if (d->kind != EK_FLOAT)
    return int_to_int(d, neg, mag);
  double x = odd_from_u64(mag);
  if (d->bits == 64) /* f64 needs the nearest double, not the odd one */
    x = (double)mag;
  return e_fencode(d, neg ? -x : x);
}

/*===--- Pointer map -----------------------------------------------------===*/

static size_t slot_of(const void *k, size_t cap) {
  uintptr_t h = (uintptr_t)k;
  h ^= h >> 17;
  h *= 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 7) & (cap - 1);
}

void *pmap_get(const PMap *m, const void *k) {
  if (!m->cap)
    return NULL;
  for (size_t i = slot_of(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == k)
      return m->vals[i];
    if (!m->keys[i])
      return NULL;
  }
}

void pmap_put(PMap *m, const void *k, void *v) {
  if ((m->len + 1) * 2 > m->cap) {
    PMap n = {0};
    n.cap = m->cap ? m->cap * 2 : 64;
    n.keys = tl_xcalloc(n.cap, sizeof *n.keys);
    n.vals = tl_xcalloc(n.cap, sizeof *n.vals);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i])
        pmap_put(&n, m->keys[i], m->vals[i]);
    pmap_free(m);
    *m = n;
  }
  size_t i = slot_of(k, m->cap);
  while (m->keys[i] && m->keys[i] != k)
    i = (i + 1) & (m->cap - 1);
  if (!m->keys[i])
    m->len++;
  m->keys[i] = k;
  m->vals[i] = v;
}

void pmap_free(PMap *m) {
  tl_free((void *)m->keys);
  tl_free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->len = 0;
}
