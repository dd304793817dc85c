/* Shared-memory layouts: strided modes per dimension plus an optional CuTe
 * XOR swizzle, their operations (swizzle, tiling compose, slice, permute,
 * reshape), the ldmatrix-friendly swizzled layout, and the bank-conflict
 * counter that models how the hardware splits a warp's access into
 * wavefronts.
 *
 * Like TlLayout, a TlSharedLayout is a canonical, zero-padded value; every
 * operation works on a wider scratch form and packs the result at the end. */
#include "layout_internal.h"

#include <stdio.h>
#include <string.h>

#define RAW_MODES 64

typedef struct SRaw {
  int rank, n;
  int64_t shape[TL_LAYOUT_MAX_RANK];
  int64_t size[RAW_MODES], stride[RAW_MODES];
  int dim[RAW_MODES];
  int64_t base;
  int bits, mbase, shift;
} SRaw;

static void sraw_from(SRaw *r, const TlSharedLayout *l) {
  memset(r, 0, sizeof *r);
  r->rank = l->rank;
  r->n = l->num_modes;
  for (int d = 0; d < l->rank; d++)
    r->shape[d] = l->shape[d];
  for (int m = 0; m < l->num_modes; m++) {
    r->size[m] = l->mode_shape[m];
    r->stride[m] = l->mode_stride[m];
    r->dim[m] = l->mode_dim[m];
  }
  r->base = l->base;
  r->bits = l->swizzle_bits;
  r->mbase = l->swizzle_base;
  r->shift = l->swizzle_shift;
}

static void sraw_delete(SRaw *r, int m) {
  int tail = r->n - m - 1;
  memmove(r->size + m, r->size + m + 1, sizeof(int64_t) * (size_t)tail);
  memmove(r->stride + m, r->stride + m + 1, sizeof(int64_t) * (size_t)tail);
  memmove(r->dim + m, r->dim + m + 1, sizeof(int) * (size_t)tail);
  r->n--;
}

/* Splits mode m (size s, stride st) into (s / lo, st * lo) and (lo, st):
 * digit d = hi * lo + lo_digit contributes d * st = hi * (st * lo) +
 * lo_digit * st, the same offset. */
static bool sraw_split(SRaw *r, int m, int64_t lo, TlErr *err) {
  if (r->n >= RAW_MODES)
    return tl_err(err, "too many modes");
  int tail = r->n - m - 1;
  memmove(r->size + m + 2, r->size + m + 1, sizeof(int64_t) * (size_t)tail);
  memmove(r->stride + m + 2, r->stride + m + 1, sizeof(int64_t) * (size_t)tail);
  memmove(r->dim + m + 2, r->dim + m + 1, sizeof(int) * (size_t)tail);
  r->n++;
  r->size[m + 1] = lo;
  r->stride[m + 1] = r->stride[m];
  r->dim[m + 1] = r->dim[m];
  r->size[m] /= lo;
  r->stride[m] *= lo;
  return true;
}

static bool sraw_pack(SRaw *r, TlSharedLayout *out, TlErr *err) {
  if (r->rank < 1 || r->rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", r->rank,
                  TL_LAYOUT_MAX_RANK);
  int64_t elems;
  if (!tl_size_product(r->shape, r->rank, &elems))
    return tl_err(err, "shape has a size below 1 or more than %d elements",
                  TL_LAYOUT_MAX_SIZE);
  /* The largest offset must fit comfortably in 62 bits. */
  int64_t hi = r->base;
  if (r->base < 0 || r->base > ((int64_t)1 << 48))
    return tl_err(err, "base offset %lld is outside [0, 2^48]",
                  (long long)r->base);
  for (int m = 0; m < r->n; m++) {
    if (r->stride[m] < 0 || r->stride[m] > ((int64_t)1 << 48))
      return tl_err(err, "stride %lld is outside [0, 2^48]",
                    (long long)r->stride[m]);
    hi += (r->size[m] - 1) * r->stride[m];
    if (hi > ((int64_t)1 << 48))
      return tl_err(err, "offsets exceed 2^48 elements");
  }
  /* Canonical form: drop size-1 modes; merge modes m, m+1 of one dimension
   * whose strides chain (stride_m == stride_{m+1} * size_{m+1}): their
   * digits then form one digit of the product size with the lower stride. */
  for (int m = 0; m < r->n;) {
    if (r->size[m] == 1)
      sraw_delete(r, m);
    else
      m++;
  }
  for (int m = 0; m + 1 < r->n;) {
    if (r->dim[m] == r->dim[m + 1] &&
        r->stride[m] == r->stride[m + 1] * r->size[m + 1]) {
      r->size[m] *= r->size[m + 1];
      r->stride[m] = r->stride[m + 1];
      sraw_delete(r, m + 1);
    } else {
      m++;
    }
  }
  if (r->n > TL_LAYOUT_MAX_MODES)
    return tl_err(err, "layout needs %d modes, more than %d", r->n,
                  TL_LAYOUT_MAX_MODES);
  TlSharedLayout l;
  memset(&l, 0, sizeof l);
  l.rank = r->rank;
  l.num_modes = r->n;
  if (r->bits > 0) {
    l.swizzle_bits = r->bits;
    l.swizzle_base = r->mbase;
    l.swizzle_shift = r->shift;
  }
  l.base = r->base;
  for (int d = 0; d < r->rank; d++)
    l.shape[d] = r->shape[d];
  for (int m = 0; m < r->n; m++) {
    l.mode_shape[m] = r->size[m];
    l.mode_stride[m] = r->stride[m];
    l.mode_dim[m] = r->dim[m];
  }
  *out = l;
  return true;
}

static bool compact(TlSharedLayout *out, int rank, const int64_t *shape,
                    bool column, TlErr *err) {
  if (rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", rank, TL_LAYOUT_MAX_RANK);
  int64_t elems;
  if (!tl_size_product(shape, rank, &elems))
    return tl_err(err, "shape has a size below 1 or more than %d elements",
                  TL_LAYOUT_MAX_SIZE);
  SRaw r;
  memset(&r, 0, sizeof r);
  r.rank = r.n = rank;
  int64_t st = 1;
  for (int k = 0; k < rank; k++) {
    int d = column ? k : rank - 1 - k;
    r.shape[d] = r.size[d] = shape[d];
    r.dim[d] = d;
    r.stride[d] = st;
    st *= shape[d];
  }
  return sraw_pack(&r, out, err);
}

bool tl_shared_layout_row_major(TlSharedLayout *out, int rank,
                                const int64_t *shape, TlErr *err) {
  return compact(out, rank, shape, false, err);
}

bool tl_shared_layout_column_major(TlSharedLayout *out, int rank,
                                   const int64_t *shape, TlErr *err) {
  return compact(out, rank, shape, true, err);
}

bool tl_shared_layout_make(TlSharedLayout *out, int rank, const int64_t *shape,
                           int num_modes, const int64_t *mode_shape,
                           const int64_t *mode_stride, TlErr *err) {
  if (rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", rank, TL_LAYOUT_MAX_RANK);
  if (num_modes < 0 || num_modes > RAW_MODES)
    return tl_err(err, "too many modes (more than %d)", RAW_MODES);
  SRaw r;
  memset(&r, 0, sizeof r);
  r.rank = rank;
  for (int d = 0; d < rank; d++) {
    if (shape[d] < 1 || shape[d] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "dimension %d has size %lld outside [1, %d]", d,
                    (long long)shape[d], TL_LAYOUT_MAX_SIZE);
    r.shape[d] = shape[d];
  }
  int d = 0;
  int64_t prod = 1;
  for (int m = 0; m < num_modes; m++) {
    if (mode_shape[m] < 1 || mode_shape[m] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "mode %d has size %lld outside [1, %d]", m,
                    (long long)mode_shape[m], TL_LAYOUT_MAX_SIZE);
    while (d < rank - 1 && prod == shape[d] && mode_shape[m] != 1)
      d++, prod = 1;
    prod *= mode_shape[m];
    if (prod > shape[d])
      return tl_err(err,
                    "modes do not split the shape: mode %d (size %lld) "
                    "overflows dimension %d of size %lld",
                    m, (long long)mode_shape[m], d, (long long)shape[d]);
    r.size[m] = mode_shape[m];
    r.stride[m] = mode_stride[m];
    r.dim[m] = d;
  }
  r.n = num_modes;
  for (int k = 0; k < rank; k++) {
    int64_t p = 1;
    for (int m = 0; m < num_modes; m++)
      if (r.dim[m] == k)
        p *= r.size[m];
    if (p != shape[k])
      return tl_err(err,
                    "modes of dimension %d multiply to %lld, not its size "
                    "%lld",
                    k, (long long)p, (long long)shape[k]);
  }
  return sraw_pack(&r, out, err);
}

bool tl_shared_layout_swizzle(TlSharedLayout *out, const TlSharedLayout *in,
                              int bits, int base, int shift, TlErr *err) {
  if (in->swizzle_bits != 0)
    return tl_err(err, "layout is already swizzled");
  if (bits < 0 || base < 0 || shift < 0)
    return tl_err(err, "swizzle parameters must be non-negative");
  if (bits > 0 && shift < bits)
    return tl_err(err,
                  "Swizzle<%d, %d, %d>: the shift must be at least the bit "
                  "count, or the XORed ranges overlap",
                  bits, base, shift);
  if (base + shift + bits > 40)
    return tl_err(err, "Swizzle<%d, %d, %d> reaches past bit 40", bits, base,
                  shift);
  SRaw r;
  sraw_from(&r, in);
  r.bits = bits;
  r.mbase = base;
  r.shift = shift;
  return sraw_pack(&r, out, err);
}

static int ilog2(int64_t x) {
  int k = 0;
  while (((int64_t)1 << (k + 1)) <= x)
    k++;
  return k;
}

bool tl_shared_layout_ldmatrix(TlSharedLayout *out, int64_t rows,
                               int64_t row_bytes, int elem_bits, TlErr *err) {
  if (elem_bits < 1 || elem_bits > 128 || 128 % elem_bits != 0)
    return tl_err(err, "element width %d bits does not divide 128", elem_bits);
  if (row_bytes < 16 || (row_bytes & (row_bytes - 1)) != 0 ||
      row_bytes > ((int64_t)1 << 20))
    return tl_err(err,
                  "row of %lld bytes: ldmatrix rows are a power of two "
                  "of at least 16 bytes",
                  (long long)row_bytes);
  int64_t shape[2] = {rows, row_bytes * 8 / elem_bits};
  TlSharedLayout l;
  if (!tl_shared_layout_row_major(&l, 2, shape, err))
    return false;
  /* In element units, bits [0, M) address within a 16-byte chunk; the chunk
   * index of a 128-byte line sits at [M, M + 3). Rows of 16 * 2^c bytes put
   * c chunk bits below the row bits; the row index starts at bit M + c.
   * XOR B = min(3, c) row-position bits, taken at M + S with S = max(3, c)
   * (the first bits above the 128-byte line, or the row bits when rows are
   * at least a line long), into the chunk bits: the eight rows one phase
   * reads then sit in eight distinct chunks of the 32 banks. */
  int c = ilog2(row_bytes / 16);
  int m = ilog2(128 / elem_bits);
  int b = c < 3 ? c : 3, s = c > 3 ? c : 3;
  if (b == 0) {
    *out = l;
    return true;
  }
  return tl_shared_layout_swizzle(out, &l, b, m, s, err);
}

static int64_t swizzle(const TlSharedLayout *l, int64_t x) {
  if (l->swizzle_bits == 0)
    return x;
  int64_t mask = (((int64_t)1 << l->swizzle_bits) - 1)
                 << (l->swizzle_base + l->swizzle_shift);
  return x ^ ((x & mask) >> l->swizzle_shift);
}

bool tl_shared_layout_offset(const TlSharedLayout *l, const int64_t *index,
                             int64_t *offset, TlErr *err) {
  int64_t lin = l->base;
  for (int d = 0; d < l->rank; d++) {
    if (index[d] < 0 || index[d] >= l->shape[d])
      return tl_err(err, "index %lld of dimension %d is outside [0, %lld)",
                    (long long)index[d], d, (long long)l->shape[d]);
    int64_t v = index[d];
    for (int m = l->num_modes - 1; m >= 0; m--)
      if (l->mode_dim[m] == d) {
        lin += (v % l->mode_shape[m]) * l->mode_stride[m];
        v /= l->mode_shape[m];
      }
  }
  *offset = swizzle(l, lin);
  return true;
}

int64_t tl_shared_layout_cosize(const TlSharedLayout *l) {
  int64_t hi = l->base;
  for (int m = 0; m < l->num_modes; m++)
    hi += (l->mode_shape[m] - 1) * l->mode_stride[m];
  hi += 1;
  if (l->swizzle_bits) {
    int64_t block = (int64_t)1
                    << (l->swizzle_base + l->swizzle_shift + l->swizzle_bits);
    hi = (hi + block - 1) / block * block;
  }
  return hi;
}

bool tl_shared_layout_compose(TlSharedLayout *out, const TlSharedLayout *outer,
                              const TlSharedLayout *inner, TlErr *err) {
  if (outer->rank != inner->rank)
    return tl_err(err, "cannot compose layouts of rank %d and %d", outer->rank,
                  inner->rank);
  if (outer->swizzle_bits != 0 || outer->base != 0)
    return tl_err(err, "the outer layout of a composition must be unswizzled "
                       "with base 0");
  int64_t cos = tl_shared_layout_cosize(inner);
  SRaw r;
  memset(&r, 0, sizeof r);
  r.rank = outer->rank;
  r.base = inner->base;
  r.bits = inner->swizzle_bits;
  r.mbase = inner->swizzle_base;
  r.shift = inner->swizzle_shift;
  for (int d = 0; d < r.rank; d++) {
    r.shape[d] = outer->shape[d] * inner->shape[d];
    if (r.shape[d] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "dimension %d of the composition is too large", d);
    for (int m = 0; m < outer->num_modes; m++)
      if (outer->mode_dim[m] == d) {
        if (outer->mode_stride[m] > ((int64_t)1 << 48) / cos)
          return tl_err(err, "offsets exceed 2^48 elements");
        r.size[r.n] = outer->mode_shape[m];
        r.stride[r.n] = outer->mode_stride[m] * cos;
        r.dim[r.n++] = d;
      }
    for (int m = 0; m < inner->num_modes; m++)
      if (inner->mode_dim[m] == d) {
        r.size[r.n] = inner->mode_shape[m];
        r.stride[r.n] = inner->mode_stride[m];
        r.dim[r.n++] = d;
      }
  }
  return sraw_pack(&r, out, err);
}

/* Cuts r down to the sub-tile [offsets[d], offsets[d] + sizes[d]) of every
 * dimension: the trailing modes of each dimension (one split where the size
 * falls inside a mode) stay, the leading ones go, and their digits (from
 * offset / size) times their strides add up in *shift. With `view`, each
 * dropped stride must be a multiple of the swizzle block, which makes the
 * remaining layout the same at every offset. */
static bool slice_raw(SRaw *r, const int64_t *offsets, const int64_t *sizes,
                      bool view, int64_t *shift, TlErr *err) {
  int64_t block = r->bits ? (int64_t)1 << (r->mbase + r->shift + r->bits) : 1;
  *shift = 0;
  for (int d = 0; d < r->rank; d++) {
    int64_t off = offsets[d], size = sizes[d];
    if (size < 1 || off < 0 || off > r->shape[d] - size)
      return tl_err(err,
                    "slice [%lld, %lld) of dimension %d is outside [0, "
                    "%lld)",
                    (long long)off, (long long)(off + size), d,
                    (long long)r->shape[d]);
    if (off % size != 0)
      return tl_err(err,
                    "slice offset %lld of dimension %d is not a multiple of "
                    "its size %lld",
                    (long long)off, d, (long long)size);
    /* Make the trailing modes of d multiply to exactly `size`. */
    int first = 0, n = 0;
    while (first < r->n && r->dim[first] < d)
      first++;
    while (first + n < r->n && r->dim[first + n] == d)
      n++;
    int64_t need = size;
    int k = first + n - 1;
    for (; k >= first && need > 1; k--) {
      if (need % r->size[k] == 0) {
        need /= r->size[k];
      } else if (r->size[k] % need == 0) {
        if (!sraw_split(r, k, need, err))
          return false;
        /* The high part stays at k and leads; the low part at k + 1 is the
         * first trailing mode. */
        need = 1;
        break;
      } else {
        return tl_err(err,
                      "slice of size %lld does not align with the modes of "
                      "dimension %d",
                      (long long)size, d);
      }
    }
    /* Modes first..k lead: fold the offset's digits over them into the
     * shift and drop them. Since size divides off, the trailing digits are
     * 0. */
    int64_t v = off / size;
    for (int m = k; m >= first; m--) {
      if (view && r->stride[m] % block != 0)
        return tl_err(err,
                      "dimension %d: the sliced-off mode of size %lld has "
                      "stride %lld, not a multiple of the swizzle block of "
                      "%lld elements",
                      d, (long long)r->size[m], (long long)r->stride[m],
                      (long long)block);
      *shift += (v % r->size[m]) * r->stride[m];
      v /= r->size[m];
    }
    for (int m = k; m >= first; m--)
      sraw_delete(r, m);
    r->shape[d] = size;
  }
  return true;
}

bool tl_shared_layout_slice(TlSharedLayout *out, const TlSharedLayout *l,
                            const int64_t *offsets, const int64_t *sizes,
                            TlErr *err) {
  SRaw r;
  int64_t shift;
  sraw_from(&r, l);
  if (!slice_raw(&r, offsets, sizes, false, &shift, err))
    return false;
  r.base += shift;
  return sraw_pack(&r, out, err);
}

bool tl_shared_layout_slice_view(TlSharedLayout *out, int64_t *shift,
                                 const TlSharedLayout *l,
                                 const int64_t *offsets, const int64_t *sizes,
                                 TlErr *err) {
  SRaw r;
  int64_t zeros[TL_LAYOUT_MAX_RANK] = {0}, s;
  sraw_from(&r, l);
  if (!slice_raw(&r, offsets ? offsets : zeros, sizes, true, &s, err) ||
      !sraw_pack(&r, out, err))
    return false;
  if (shift)
    *shift = s;
  return true;
}

bool tl_shared_layout_permute(TlSharedLayout *out, const TlSharedLayout *l,
                              const int *perm, TlErr *err) {
  bool used[TL_LAYOUT_MAX_RANK] = {false};
  for (int k = 0; k < l->rank; k++) {
    if (perm[k] < 0 || perm[k] >= l->rank || used[perm[k]])
      return tl_err(err, "not a permutation of the %d dimensions", l->rank);
    used[perm[k]] = true;
  }
  SRaw r, s;
  sraw_from(&s, l);
  r = s;
  r.n = 0;
  for (int k = 0; k < l->rank; k++) {
    r.shape[k] = l->shape[perm[k]];
    for (int m = 0; m < s.n; m++)
      if (s.dim[m] == perm[k]) {
        r.size[r.n] = s.size[m];
        r.stride[r.n] = s.stride[m];
        r.dim[r.n++] = k;
      }
  }
  return sraw_pack(&r, out, err);
}

bool tl_shared_layout_reshape(TlSharedLayout *out, const TlSharedLayout *l,
                              int rank, const int64_t *shape, TlErr *err) {
  if (rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", rank, TL_LAYOUT_MAX_RANK);
  int64_t total, have;
  if (!tl_size_product(shape, rank, &total))
    return tl_err(err, "new shape has a size below 1 or more than %d elements",
                  TL_LAYOUT_MAX_SIZE);
  tl_size_product(l->shape, l->rank, &have);
  if (total != have)
    return tl_err(err, "cannot reshape %lld elements into %lld",
                  (long long)have, (long long)total);
  SRaw r;
  sraw_from(&r, l);
  int m = r.n - 1;
  for (int d = rank - 1; d >= 0; d--) {
    int64_t need = shape[d];
    while (need > 1) {
      int64_t s = r.size[m];
      if (need % s == 0) {
        need /= s;
        r.dim[m--] = d;
      } else if (s % need == 0) {
        if (!sraw_split(&r, m, need, err))
          return false;
        r.dim[m + 1] = d;
        need = 1;
      } else {
        return tl_err(err,
                      "cannot reshape: a mode of size %lld straddles the "
                      "boundary of new dimension %d (size %lld)",
                      (long long)s, d, (long long)shape[d]);
      }
    }
  }
  r.rank = rank;
  for (int d = 0; d < rank; d++)
    r.shape[d] = shape[d];
  return sraw_pack(&r, out, err);
}

bool tl_shared_layout_equal(const TlSharedLayout *a, const TlSharedLayout *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

uint64_t tl_shared_layout_hash(const TlSharedLayout *l) {
  return tl_hash_bytes(l, sizeof *l, 0x51ed270b27d1c3a5ull);
}

static void print_i64s(TlStr *out, const int64_t *v, int n) {
  tl_str_putc(out, '[');
  for (int i = 0; i < n; i++)
    tl_str_printf(out, "%s%lld", i ? ", " : "", (long long)v[i]);
  tl_str_putc(out, ']');
}

void tl_shared_layout_print(const TlSharedLayout *l, TlStr *out) {
  tl_str_puts(out, "shared<shape=");
  print_i64s(out, l->shape, l->rank);
  tl_str_puts(out, ", modes=");
  print_i64s(out, l->mode_shape, l->num_modes);
  tl_str_puts(out, ", strides=");
  print_i64s(out, l->mode_stride, l->num_modes);
  if (l->base)
    tl_str_printf(out, ", base=%lld", (long long)l->base);
  if (l->swizzle_bits)
    tl_str_printf(out, ", swizzle=<%d, %d, %d>", l->swizzle_bits,
                  l->swizzle_base, l->swizzle_shift);
  tl_str_putc(out, '>');
}

bool tl_smem_wavefronts(const int64_t *addrs, int num_lanes, int width,
                        int *wavefronts, TlErr *err) {
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
    return tl_err(err, "access width %d is not 1, 2, 4, 8 or 16 bytes", width);
  if (num_lanes < 0 || num_lanes > 32)
    return tl_err(err, "a warp has 32 lanes, not %d", num_lanes);
  for (int i = 0; i < num_lanes; i++)
    if (addrs[i] < 0 || addrs[i] % width != 0)
      return tl_err(err, "lane %d: address %lld is not aligned to %d bytes", i,
                    (long long)addrs[i], width);
  /* 128 bytes per wavefront: wider accesses serve fewer lanes per phase. */
  int per_phase = width <= 4 ? 32 : 128 / width;
  int words = width <= 4 ? 1 : width / 4;
  int total = 0;
  for (int p = 0; p < num_lanes; p += per_phase) {
    int64_t seen[32 * 4];
    int nseen = 0, count[32] = {0}, worst = 0;
    for (int i = p; i < p + per_phase && i < num_lanes; i++)
      for (int w = 0; w < words; w++) {
        int64_t word = addrs[i] / 4 + w;
        bool dup = false;
        for (int k = 0; k < nseen && !dup; k++)
          dup = seen[k] == word;
        if (dup)
          continue; /* same word: broadcast, no extra wavefront */
        seen[nseen++] = word;
        int bank = (int)(word % 32);
        if (++count[bank] > worst)
          worst = count[bank];
      }
    total += worst;
  }
  *wavefronts = total;
  return true;
}

bool tl_shared_layout_wavefronts(const TlSharedLayout *smem,
                                 const TlLayout *reg, int elem_bits,
                                 int64_t warp, int64_t first, int vec,
                                 int *wavefronts, TlErr *err) {
  if (smem->rank != reg->rank)
    return tl_err(err, "shared layout has rank %d, register layout %d",
                  smem->rank, reg->rank);
  for (int d = 0; d < reg->rank; d++)
    if (smem->shape[d] != reg->shape[d])
      return tl_err(err, "shapes differ in dimension %d (%lld vs %d)", d,
                    (long long)smem->shape[d], reg->shape[d]);
  if (elem_bits < 1 || elem_bits > 64 || vec < 1 ||
      ((int64_t)vec * elem_bits) % 8 != 0)
    return tl_err(err, "%d elements of %d bits are not whole bytes", vec,
                  elem_bits);
  int width = vec * elem_bits / 8;
  int64_t nt = tl_layout_num_threads(reg), nl = tl_layout_local_size(reg);
  if (warp < 0 || warp * 32 >= nt)
    return tl_err(err, "warp %lld is outside the %lld threads", (long long)warp,
                  (long long)nt);
  if (first < 0 || first + vec > nl)
    return tl_err(err, "local elements [%lld, %lld) are outside [0, %lld)",
                  (long long)first, (long long)(first + vec), (long long)nl);
  int64_t addrs[32];
  int lanes = 0;
  for (int lane = 0; lane < 32 && warp * 32 + lane < nt; lane++, lanes++) {
    int64_t off0 = 0;
    for (int k = 0; k < vec; k++) {
      int64_t idx[TL_LAYOUT_MAX_RANK], off;
      tl_layout_map(reg, warp * 32 + lane, first + k, idx, NULL);
      if (!tl_shared_layout_offset(smem, idx, &off, err))
        return false;
      if (k == 0)
        off0 = off;
      else if (off != off0 + k)
        return tl_err(err,
                      "lane %d: local elements %lld.. are not contiguous in "
                      "shared memory",
                      lane, (long long)first);
    }
    if ((off0 * elem_bits) % 8 != 0)
      return tl_err(err, "lane %d: element offset %lld is not byte aligned",
                    lane, (long long)off0);
    addrs[lane] = off0 * elem_bits / 8;
  }
  return tl_smem_wavefronts(addrs, lanes, width, wavefronts, err);
}
