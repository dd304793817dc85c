/* Register layouts: the representation, its canonical form, the primitive
 * constructors, the Kronecker product and its two divisions, and the maps
 * between (thread, local) and logical indices.
 *
 * Every operation works on the wide TlRawLayout (room for intermediate
 * results, 64-bit sizes) and ends in tl_raw_to_layout, which validates,
 * canonicalises and packs into the fixed-size, zero-padded TlLayout. Keeping
 * canonical form an invariant of every returned value is what lets equality
 * and hashing be bytewise. */
#include "layout_internal.h"

#include <stdio.h>
#include <string.h>

/* Equality and hashing are bytewise: the value types must have no padding
 * (whose bytes would be indeterminate). */
_Static_assert(sizeof(TlLayout) == 4 * (4 + TL_LAYOUT_MAX_RANK +
                                        4 * TL_LAYOUT_MAX_MODES),
               "TlLayout has padding");
_Static_assert(sizeof(TlSharedLayout) ==
                   4 * 6 + 8 + 8 * TL_LAYOUT_MAX_RANK +
                       (8 + 8 + 4) * TL_LAYOUT_MAX_MODES,
               "TlSharedLayout has padding");
_Static_assert(sizeof(TlLinearLayout) ==
                   4 * (6 + TL_LAYOUT_MAX_RANK) + 8 * TL_LINEAR_MAX_BITS,
               "TlLinearLayout has padding");

int64_t tl_raw_entry_size(const TlRawLayout *r, int64_t entry) {
  return entry >= 0 ? r->mode_shape[entry] : -entry;
}

bool tl_size_product(const int64_t *v, int n, int64_t *out) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) {
    /* Both factors are <= TL_LAYOUT_MAX_SIZE < 2^31 here, so the product
     * fits in 62 bits before the check. */
    if (v[i] < 1 || v[i] > TL_LAYOUT_MAX_SIZE)
      return false;
    p *= v[i];
    if (p > TL_LAYOUT_MAX_SIZE)
      return false;
  }
  *out = p;
  return true;
}

void tl_raw_from_layout(TlRawLayout *r, const TlLayout *l) {
  memset(r, 0, sizeof *r);
  r->rank = l->rank;
  r->num_modes = l->num_modes;
  r->num_spatial = l->num_spatial;
  r->num_local = l->num_local;
  for (int d = 0; d < l->rank; d++)
    r->shape[d] = l->shape[d];
  for (int m = 0; m < l->num_modes; m++) {
    r->mode_shape[m] = l->mode_shape[m];
    r->mode_dim[m] = l->mode_dim[m];
  }
  for (int k = 0; k < l->num_spatial; k++)
    r->spatial[k] = l->spatial_modes[k];
  for (int k = 0; k < l->num_local; k++)
    r->local[k] = l->local_modes[k];
}

bool tl_raw_validate(const TlRawLayout *r, TlErr *err) {
  if (r->rank < 1 || r->rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", r->rank,
                  TL_LAYOUT_MAX_RANK);
  if (r->num_modes < 0 || r->num_modes > TL_RAW_MAX_MODES ||
      r->num_spatial < 0 || r->num_spatial > TL_RAW_MAX_MODES ||
      r->num_local < 0 || r->num_local > TL_RAW_MAX_MODES)
    return tl_err(err, "too many modes");
  for (int d = 0; d < r->rank; d++)
    if (r->shape[d] < 1 || r->shape[d] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "dimension %d has size %lld outside [1, %d]", d,
                    (long long)r->shape[d], TL_LAYOUT_MAX_SIZE);
  int64_t elems;
  if (!tl_size_product(r->shape, r->rank, &elems))
    return tl_err(err, "shape has more than %d elements", TL_LAYOUT_MAX_SIZE);
  int64_t dim_prod[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < r->rank; d++)
    dim_prod[d] = 1;
  int prev_dim = 0;
  for (int m = 0; m < r->num_modes; m++) {
    int d = r->mode_dim[m];
    if (d < prev_dim || d >= r->rank)
      return tl_err(err, "mode %d has a bad dimension", m);
    prev_dim = d;
    if (r->mode_shape[m] < 1 || r->mode_shape[m] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "mode %d has size %lld outside [1, %d]", m,
                    (long long)r->mode_shape[m], TL_LAYOUT_MAX_SIZE);
    dim_prod[d] *= r->mode_shape[m];
    if (dim_prod[d] > r->shape[d])
      return tl_err(err, "modes of dimension %d multiply past its size %lld", d,
                    (long long)r->shape[d]);
  }
  for (int d = 0; d < r->rank; d++)
    if (dim_prod[d] != r->shape[d])
      return tl_err(err,
                    "modes of dimension %d multiply to %lld, not its size %lld",
                    d, (long long)dim_prod[d], (long long)r->shape[d]);
  int seen[TL_RAW_MAX_MODES] = {0};
  int64_t threads = 1, local = 1;
  for (int k = 0; k < r->num_spatial; k++) {
    int64_t e = r->spatial[k];
    if (e >= r->num_modes)
      return tl_err(err, "spatial entry %lld names no mode", (long long)e);
    if (e < 0 && -e > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "replication factor %lld exceeds %d", (long long)-e,
                    TL_LAYOUT_MAX_SIZE);
    if (e >= 0 && seen[e]++)
      return tl_err(err, "mode %lld is listed twice", (long long)e);
    threads *= tl_raw_entry_size(r, e);
    if (threads > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "more than %d threads", TL_LAYOUT_MAX_SIZE);
  }
  for (int k = 0; k < r->num_local; k++) {
    int64_t e = r->local[k];
    if (e < 0)
      return tl_err(err,
                    "local entry %lld is negative: only spatial entries "
                    "may replicate",
                    (long long)e);
    if (e >= r->num_modes)
      return tl_err(err, "local entry %lld names no mode", (long long)e);
    if (seen[e]++)
      return tl_err(err, "mode %lld is listed twice", (long long)e);
    local *= r->mode_shape[e];
    if (local > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "more than %d local elements", TL_LAYOUT_MAX_SIZE);
  }
  for (int m = 0; m < r->num_modes; m++)
    if (!seen[m])
      return tl_err(err, "mode %d is in neither the spatial nor the local list",
                    m);
  return true;
}

/* Removes list entry k of a list of n entries. */
static void list_remove(int64_t *list, int *n, int k) {
  memmove(list + k, list + k + 1, sizeof *list * (size_t)(*n - k - 1));
  (*n)--;
}

void tl_raw_delete_mode(TlRawLayout *r, int m) {
  int n = r->num_modes - m - 1;
  memmove(r->mode_shape + m, r->mode_shape + m + 1,
          sizeof(int64_t) * (size_t)n);
  memmove(r->mode_dim + m, r->mode_dim + m + 1, sizeof(int) * (size_t)n);
  r->num_modes--;
  for (int k = 0; k < r->num_spatial; k++)
    if (r->spatial[k] > m)
      r->spatial[k]--;
  for (int k = 0; k < r->num_local; k++)
    if (r->local[k] > m)
      r->local[k]--;
}

/* Finds mode m in the lists: sets *list and *pos. */
static void find_mode(TlRawLayout *r, int64_t m, int64_t **list, int **n,
                      int *pos) {
  for (int k = 0; k < r->num_spatial; k++)
    if (r->spatial[k] == m) {
      *list = r->spatial, *n = &r->num_spatial, *pos = k;
      return;
    }
  for (int k = 0; k < r->num_local; k++)
    if (r->local[k] == m) {
      *list = r->local, *n = &r->num_local, *pos = k;
      return;
    }
  TL_UNREACHABLE("mode missing from both lists");
}

bool tl_raw_split_mode(TlRawLayout *r, int m, int64_t lo, TlErr *err) {
  if (r->num_modes >= TL_RAW_MAX_MODES)
    return tl_err(err, "too many modes (more than %d)", TL_RAW_MAX_MODES);
  int64_t s = r->mode_shape[m];
  tl_assert(lo > 1 && lo < s && s % lo == 0);
  int64_t *list;
  int *n, pos;
  find_mode(r, m, &list, &n, &pos);
  if (*n >= TL_RAW_MAX_MODES)
    return tl_err(err, "too many modes (more than %d)", TL_RAW_MAX_MODES);
  /* Renumber modes after m, then open slot m + 1. */
  for (int k = 0; k < r->num_spatial; k++)
    if (r->spatial[k] > m)
      r->spatial[k]++;
  for (int k = 0; k < r->num_local; k++)
    if (r->local[k] > m)
      r->local[k]++;
  int tail = r->num_modes - m - 1;
  memmove(r->mode_shape + m + 2, r->mode_shape + m + 1,
          sizeof(int64_t) * (size_t)tail);
  memmove(r->mode_dim + m + 2, r->mode_dim + m + 1, sizeof(int) * (size_t)tail);
  r->num_modes++;
  r->mode_shape[m] = s / lo;
  r->mode_shape[m + 1] = lo;
  r->mode_dim[m + 1] = r->mode_dim[m];
  memmove(list + pos + 2, list + pos + 1,
          sizeof *list * (size_t)(*n - pos - 1));
  list[pos + 1] = m + 1;
  (*n)++;
  return true;
}

bool tl_raw_split_rep(TlRawLayout *r, int pos, int64_t lo, TlErr *err) {
  if (r->num_spatial >= TL_RAW_MAX_MODES)
    return tl_err(err, "too many modes (more than %d)", TL_RAW_MAX_MODES);
  int64_t c = -r->spatial[pos];
  tl_assert(lo > 1 && lo < c && c % lo == 0);
  memmove(r->spatial + pos + 2, r->spatial + pos + 1,
          sizeof(int64_t) * (size_t)(r->num_spatial - pos - 1));
  r->spatial[pos] = -(c / lo);
  r->spatial[pos + 1] = -lo;
  r->num_spatial++;
  return true;
}

/* One merging pass over a list; returns whether anything changed. Two
 * entries merge when they are the consecutive modes m, m+1 of one dimension
 * (then digit_m * size_{m+1} + digit_{m+1} is both their contribution to
 * the index and to the list's ravel, so one mode of the product size says
 * the same), or two replication factors (c1 * c2 threads in a row). */
static bool merge_list(TlRawLayout *r, int64_t *list, int *n) {
  for (int k = 0; k + 1 < *n; k++) {
    int64_t a = list[k], b = list[k + 1];
    if (a < 0 && b < 0) {
      list[k] = a * -b;
      list_remove(list, n, k + 1);
      return true;
    }
    if (a >= 0 && b == a + 1 && r->mode_dim[a] == r->mode_dim[b]) {
      r->mode_shape[a] *= r->mode_shape[b];
      list_remove(list, n, k + 1);
      tl_raw_delete_mode(r, (int)b);
      return true;
    }
  }
  return false;
}

void tl_raw_canonicalize(TlRawLayout *r) {
  for (int m = 0; m < r->num_modes;) {
    if (r->mode_shape[m] != 1) {
      m++;
      continue;
    }
    int64_t *list;
    int *n, pos;
    find_mode(r, m, &list, &n, &pos);
    list_remove(list, n, pos);
    tl_raw_delete_mode(r, m);
  }
  for (int k = 0; k < r->num_spatial;) {
    if (r->spatial[k] == -1)
      list_remove(r->spatial, &r->num_spatial, k);
    else
      k++;
  }
  while (merge_list(r, r->spatial, &r->num_spatial) ||
         merge_list(r, r->local, &r->num_local))
    ;
}

bool tl_raw_to_layout(TlRawLayout *r, TlLayout *out, TlErr *err) {
  if (!tl_raw_validate(r, err))
    return false;
  tl_raw_canonicalize(r);
  if (r->num_modes > TL_LAYOUT_MAX_MODES ||
      r->num_spatial > TL_LAYOUT_MAX_MODES)
    return tl_err(err, "layout needs %d modes, more than the %d a layout holds",
                  r->num_modes > r->num_spatial ? r->num_modes : r->num_spatial,
                  TL_LAYOUT_MAX_MODES);
  TlLayout l;
  memset(&l, 0, sizeof l);
  l.rank = r->rank;
  l.num_modes = r->num_modes;
  l.num_spatial = r->num_spatial;
  l.num_local = r->num_local;
  for (int d = 0; d < r->rank; d++)
    l.shape[d] = (int32_t)r->shape[d];
  for (int m = 0; m < r->num_modes; m++) {
    l.mode_shape[m] = (int32_t)r->mode_shape[m];
    l.mode_dim[m] = r->mode_dim[m];
  }
  for (int k = 0; k < r->num_spatial; k++)
    l.spatial_modes[k] = (int32_t)r->spatial[k];
  for (int k = 0; k < r->num_local; k++)
    l.local_modes[k] = (int32_t)r->local[k];
  *out = l;
  return true;
}

bool tl_layout_make(TlLayout *out, int rank, const int64_t *shape,
                    int num_modes, const int64_t *mode_shape, int num_spatial,
                    const int64_t *spatial_modes, int num_local,
                    const int64_t *local_modes, TlErr *err) {
  if (rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", rank, TL_LAYOUT_MAX_RANK);
  if (num_modes < 0 || num_modes > TL_RAW_MAX_MODES || num_spatial < 0 ||
      num_spatial > TL_RAW_MAX_MODES || num_local < 0 ||
      num_local > TL_RAW_MAX_MODES)
    return tl_err(err, "too many modes (more than %d)", TL_RAW_MAX_MODES);
  TlRawLayout r;
  memset(&r, 0, sizeof r);
  r.rank = rank;
  for (int d = 0; d < rank; d++) {
    if (shape[d] < 1 || shape[d] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "dimension %d has size %lld outside [1, %d]", d,
                    (long long)shape[d], TL_LAYOUT_MAX_SIZE);
    r.shape[d] = shape[d];
  }
  /* Assign modes to dimensions: dimension d takes modes while their product
   * is below shape[d]; leftover (size-1) modes join the last dimension. */
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
    r.mode_shape[m] = mode_shape[m];
    r.mode_dim[m] = d;
  }
  r.num_modes = num_modes;
  for (int k = 0; k < num_spatial; k++) {
    if (spatial_modes[k] < -(int64_t)TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "replication factor %lld exceeds %d",
                    (long long)-spatial_modes[k], TL_LAYOUT_MAX_SIZE);
    if (spatial_modes[k] >= num_modes)
      return tl_err(err, "spatial entry %lld names no mode",
                    (long long)spatial_modes[k]);
    r.spatial[k] = spatial_modes[k];
  }
  r.num_spatial = num_spatial;
  for (int k = 0; k < num_local; k++) {
    if (local_modes[k] < 0 || local_modes[k] >= num_modes)
      return tl_err(err, "local entry %lld names no mode",
                    (long long)local_modes[k]);
    r.local[k] = local_modes[k];
  }
  r.num_local = num_local;
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_canonicalize(TlLayout *l, TlErr *err) {
  if (l->rank < 1 || l->rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", l->rank,
                  TL_LAYOUT_MAX_RANK);
  if (l->num_modes < 0 || l->num_modes > TL_LAYOUT_MAX_MODES ||
      l->num_spatial < 0 || l->num_spatial > TL_LAYOUT_MAX_MODES ||
      l->num_local < 0 || l->num_local > TL_LAYOUT_MAX_MODES)
    return tl_err(err, "mode counts outside [0, %d]", TL_LAYOUT_MAX_MODES);
  TlRawLayout r;
  tl_raw_from_layout(&r, l);
  return tl_raw_to_layout(&r, l, err);
}

/* Primitive: one mode per dimension, all in one list, in row-major or
 * column-major (reversed) order. */
static bool primitive(TlLayout *out, int rank, const int64_t *dims,
                      bool spatial, bool column, TlErr *err) {
  if (rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", rank, TL_LAYOUT_MAX_RANK);
  TlRawLayout r;
  memset(&r, 0, sizeof r);
  r.rank = rank;
  for (int d = 0; d < rank; d++) {
    if (dims[d] < 1 || dims[d] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "size %lld is outside [1, %d]", (long long)dims[d],
                    TL_LAYOUT_MAX_SIZE);
    r.shape[d] = dims[d];
    r.mode_shape[d] = dims[d];
    r.mode_dim[d] = d;
  }
  r.num_modes = rank;
  int64_t *list = spatial ? r.spatial : r.local;
  for (int k = 0; k < rank; k++)
    list[k] = column ? rank - 1 - k : k;
  if (spatial)
    r.num_spatial = rank;
  else
    r.num_local = rank;
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_local(TlLayout *out, int rank, const int64_t *dims, TlErr *err) {
  return primitive(out, rank, dims, false, false, err);
}
bool tl_layout_spatial(TlLayout *out, int rank, const int64_t *dims,
                       TlErr *err) {
  return primitive(out, rank, dims, true, false, err);
}
bool tl_layout_column_local(TlLayout *out, int rank, const int64_t *dims,
                            TlErr *err) {
  return primitive(out, rank, dims, false, true, err);
}
bool tl_layout_column_spatial(TlLayout *out, int rank, const int64_t *dims,
                              TlErr *err) {
  return primitive(out, rank, dims, true, true, err);
}

bool tl_layout_replicated(TlLayout *out, int rank, int64_t count, TlErr *err) {
  if (rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", rank, TL_LAYOUT_MAX_RANK);
  if (count < 1 || count > TL_LAYOUT_MAX_SIZE)
    return tl_err(err, "replication factor %lld is outside [1, %d]",
                  (long long)count, TL_LAYOUT_MAX_SIZE);
  TlRawLayout r;
  memset(&r, 0, sizeof r);
  r.rank = rank;
  for (int d = 0; d < rank; d++)
    r.shape[d] = 1;
  r.spatial[0] = -count;
  r.num_spatial = 1;
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_product(TlLayout *out, const TlLayout *f, const TlLayout *g,
                       TlErr *err) {
  if (f->rank != g->rank)
    return tl_err(err, "cannot multiply layouts of rank %d and %d", f->rank,
                  g->rank);
  TlRawLayout r;
  memset(&r, 0, sizeof r);
  r.rank = f->rank;
  /* f's modes are the more significant digits of every dimension, and its
   * thread and local indices the more significant digits of the product's:
   * exactly h(t, i) = f(t / T_g, i / N_g) * S_g + g(t % T_g, i % N_g). */
  int fmap[TL_LAYOUT_MAX_MODES], gmap[TL_LAYOUT_MAX_MODES];
  for (int d = 0; d < r.rank; d++) {
    r.shape[d] = (int64_t)f->shape[d] * g->shape[d];
    if (r.shape[d] > TL_LAYOUT_MAX_SIZE)
      return tl_err(err, "dimension %d of the product has size %lld, above %d",
                    d, (long long)r.shape[d], TL_LAYOUT_MAX_SIZE);
    for (int m = 0; m < f->num_modes; m++)
      if (f->mode_dim[m] == d) {
        fmap[m] = r.num_modes;
        r.mode_shape[r.num_modes] = f->mode_shape[m];
        r.mode_dim[r.num_modes++] = d;
      }
    for (int m = 0; m < g->num_modes; m++)
      if (g->mode_dim[m] == d) {
        gmap[m] = r.num_modes;
        r.mode_shape[r.num_modes] = g->mode_shape[m];
        r.mode_dim[r.num_modes++] = d;
      }
  }
  for (int k = 0; k < f->num_spatial; k++) {
    int32_t e = f->spatial_modes[k];
    r.spatial[r.num_spatial++] = e >= 0 ? fmap[e] : e;
  }
  for (int k = 0; k < g->num_spatial; k++) {
    int32_t e = g->spatial_modes[k];
    r.spatial[r.num_spatial++] = e >= 0 ? gmap[e] : e;
  }
  for (int k = 0; k < f->num_local; k++)
    r.local[r.num_local++] = fmap[f->local_modes[k]];
  for (int k = 0; k < g->num_local; k++)
    r.local[r.num_local++] = gmap[g->local_modes[k]];
  return tl_raw_to_layout(&r, out, err);
}

/* Walks entries from the least significant end, taking whole entries while
 * they divide what is still needed; when an entry is larger than what is
 * left, the boundary falls inside it and it must split as (size / need,
 * need). Returns the index of the entry to split with *lo set, -1 when the
 * boundary already falls between entries, -2 when it cannot be placed. */
static int boundary(const int64_t *sizes, int n, int64_t need, int64_t *lo) {
  for (int k = n - 1; k >= 0 && need > 1; k--) {
    int64_t s = sizes[k];
    if (need % s == 0) {
      need /= s;
    } else if (s % need == 0) {
      *lo = need;
      return k;
    } else {
      return -2;
    }
  }
  return need == 1 ? -1 : -2;
}

bool tl_raw_split_product(const TlLayout *h, const int64_t *inner_shape,
                          int64_t inner_threads, int64_t inner_local,
                          TlLayout *outer, TlLayout *inner, TlErr *err) {
  TlRawLayout r;
  tl_raw_from_layout(&r, h);
  for (int d = 0; d < r.rank; d++)
    if (inner_shape[d] < 1 || r.shape[d] % inner_shape[d] != 0)
      return tl_err(err, "dimension %d: size %lld is not a multiple of %lld", d,
                    (long long)r.shape[d], (long long)inner_shape[d]);
  /* Refine until every boundary falls between entries. Each split adds a
   * boundary that later passes respect, so this terminates. */
  for (bool changed = true; changed;) {
    changed = false;
    for (int d = 0; d < r.rank && !changed; d++) {
      int first = 0, n = 0;
      while (first < r.num_modes && r.mode_dim[first] < d)
        first++;
      while (first + n < r.num_modes && r.mode_dim[first + n] == d)
        n++;
      int64_t lo;
      int k = boundary(r.mode_shape + first, n, inner_shape[d], &lo);
      if (k == -2)
        return tl_err(err,
                      "dimension %d: no mode boundary leaves an inner size "
                      "of %lld",
                      d, (long long)inner_shape[d]);
      if (k >= 0) {
        if (!tl_raw_split_mode(&r, first + k, lo, err))
          return false;
        changed = true;
      }
    }
    if (changed)
      continue;
    int64_t sizes[TL_RAW_MAX_MODES], lo;
    for (int k = 0; k < r.num_spatial; k++)
      sizes[k] = tl_raw_entry_size(&r, r.spatial[k]);
    int k = boundary(sizes, r.num_spatial, inner_threads, &lo);
    if (k == -2)
      return tl_err(err,
                    "no boundary of the thread index leaves %lld inner "
                    "threads",
                    (long long)inner_threads);
    if (k >= 0) {
      if (!(r.spatial[k] >= 0
                ? tl_raw_split_mode(&r, (int)r.spatial[k], lo, err)
                : tl_raw_split_rep(&r, k, lo, err)))
        return false;
      changed = true;
      continue;
    }
    for (int j = 0; j < r.num_local; j++)
      sizes[j] = r.mode_shape[r.local[j]];
    k = boundary(sizes, r.num_local, inner_local, &lo);
    if (k == -2)
      return tl_err(err,
                    "no boundary of the local index leaves %lld inner "
                    "elements",
                    (long long)inner_local);
    if (k >= 0) {
      if (!tl_raw_split_mode(&r, (int)r.local[k], lo, err))
        return false;
      changed = true;
    }
  }
  /* Mark each mode inner or outer by its dimension boundary. */
  bool is_inner[TL_RAW_MAX_MODES];
  for (int d = 0; d < r.rank; d++) {
    int64_t need = inner_shape[d];
    for (int m = r.num_modes - 1; m >= 0; m--) {
      if (r.mode_dim[m] != d)
        continue;
      is_inner[m] = need > 1;
      if (need > 1)
        need /= r.mode_shape[m];
    }
  }
  TlRawLayout o, in;
  memset(&o, 0, sizeof o);
  memset(&in, 0, sizeof in);
  o.rank = in.rank = r.rank;
  int map[TL_RAW_MAX_MODES];
  for (int d = 0; d < r.rank; d++) {
    in.shape[d] = inner_shape[d];
    o.shape[d] = r.shape[d] / inner_shape[d];
  }
  for (int m = 0; m < r.num_modes; m++) {
    TlRawLayout *p = is_inner[m] ? &in : &o;
    map[m] = p->num_modes;
    p->mode_shape[p->num_modes] = r.mode_shape[m];
    p->mode_dim[p->num_modes++] = r.mode_dim[m];
  }
  /* The list suffixes holding the inner threads and local elements must
   * consist of inner modes exactly. */
  int64_t need = inner_threads;
  for (int k = r.num_spatial - 1; k >= 0; k--) {
    int64_t e = r.spatial[k];
    bool side_inner = need > 1;
    if (side_inner)
      need /= tl_raw_entry_size(&r, e);
    if (e >= 0 && is_inner[e] != side_inner)
      return tl_err(err, "%s mode of dimension %d sits among the %s threads",
                    is_inner[e] ? "an inner" : "an outer", r.mode_dim[e],
                    side_inner ? "inner" : "outer");
  }
  need = inner_threads;
  int split_at = r.num_spatial;
  for (int k = r.num_spatial - 1; k >= 0 && need > 1; k--) {
    need /= tl_raw_entry_size(&r, r.spatial[k]);
    split_at = k;
  }
  for (int k = 0; k < r.num_spatial; k++) {
    int64_t e = r.spatial[k];
    TlRawLayout *p = k >= split_at ? &in : &o;
    p->spatial[p->num_spatial++] = e >= 0 ? map[e] : e;
  }
  need = inner_local;
  split_at = r.num_local;
  for (int k = r.num_local - 1; k >= 0 && need > 1; k--) {
    need /= r.mode_shape[r.local[k]];
    split_at = k;
  }
  for (int k = 0; k < r.num_local; k++) {
    int64_t e = r.local[k];
    bool side_inner = k >= split_at;
    if (is_inner[e] != side_inner)
      return tl_err(err,
                    "%s mode of dimension %d sits among the %s local "
                    "elements",
                    is_inner[e] ? "an inner" : "an outer", r.mode_dim[e],
                    side_inner ? "inner" : "outer");
    TlRawLayout *p = side_inner ? &in : &o;
    p->local[p->num_local++] = map[e];
  }
  return tl_raw_to_layout(&o, outer, err) && tl_raw_to_layout(&in, inner, err);
}

static void describe(const TlLayout *l, char *buf, size_t n) {
  TlStr s = {0};
  tl_layout_print(l, &s);
  snprintf(buf, n, "%s", tl_str_cstr(&s));
  tl_str_free(&s);
}

bool tl_layout_divide(TlLayout *out, const TlLayout *h, const TlLayout *g,
                      TlErr *err) {
  if (h->rank != g->rank)
    return tl_err(err, "cannot divide a layout of rank %d by one of rank %d",
                  h->rank, g->rank);
  int64_t shape[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < g->rank; d++)
    shape[d] = g->shape[d];
  int64_t tg = tl_layout_num_threads(g), ng = tl_layout_local_size(g);
  if (tl_layout_num_threads(h) % tg != 0)
    return tl_err(err, "%lld threads are not a multiple of the divisor's %lld",
                  (long long)tl_layout_num_threads(h), (long long)tg);
  if (tl_layout_local_size(h) % ng != 0)
    return tl_err(err,
                  "%lld local elements are not a multiple of the divisor's "
                  "%lld",
                  (long long)tl_layout_local_size(h), (long long)ng);
  TlLayout o, in;
  if (!tl_raw_split_product(h, shape, tg, ng, &o, &in, err))
    return false;
  if (!tl_layout_equal(&in, g)) {
    char buf[160];
    describe(&in, buf, sizeof buf);
    return tl_err(err, "the inner factor is %s, not the divisor", buf);
  }
  *out = o;
  return true;
}

bool tl_layout_divide_left(TlLayout *out, const TlLayout *g, const TlLayout *h,
                           TlErr *err) {
  if (h->rank != g->rank)
    return tl_err(err, "cannot divide a layout of rank %d by one of rank %d",
                  h->rank, g->rank);
  int64_t shape[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < g->rank; d++) {
    if (h->shape[d] % g->shape[d] != 0)
      return tl_err(err, "dimension %d: size %d is not a multiple of %d", d,
                    h->shape[d], g->shape[d]);
    shape[d] = h->shape[d] / g->shape[d];
  }
  int64_t th = tl_layout_num_threads(h), nh = tl_layout_local_size(h);
  int64_t tg = tl_layout_num_threads(g), ng = tl_layout_local_size(g);
  if (th % tg != 0 || nh % ng != 0)
    return tl_err(err,
                  "%lld threads x %lld local elements are not multiples of "
                  "the divisor's %lld x %lld",
                  (long long)th, (long long)nh, (long long)tg, (long long)ng);
  TlLayout o, in;
  if (!tl_raw_split_product(h, shape, th / tg, nh / ng, &o, &in, err))
    return false;
  if (!tl_layout_equal(&o, g)) {
    char buf[160];
    describe(&o, buf, sizeof buf);
    return tl_err(err, "the outer factor is %s, not the divisor", buf);
  }
  *out = in;
  return true;
}

bool tl_layout_equal(const TlLayout *a, const TlLayout *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

uint64_t tl_layout_hash(const TlLayout *l) {
  return tl_hash_bytes(l, sizeof *l, 0x9e3779b97f4a7c15ull);
}

int64_t tl_layout_num_threads(const TlLayout *l) {
  int64_t t = 1;
  for (int k = 0; k < l->num_spatial; k++) {
    int32_t e = l->spatial_modes[k];
    t *= e >= 0 ? l->mode_shape[e] : -(int64_t)e;
  }
  return t;
}

int64_t tl_layout_local_size(const TlLayout *l) {
  int64_t n = 1;
  for (int k = 0; k < l->num_local; k++)
    n *= l->mode_shape[l->local_modes[k]];
  return n;
}

int64_t tl_layout_num_elements(const TlLayout *l) {
  int64_t n = 1;
  for (int d = 0; d < l->rank; d++)
    n *= l->shape[d];
  return n;
}

int64_t tl_layout_replication(const TlLayout *l) {
  int64_t c = 1;
  for (int k = 0; k < l->num_spatial; k++)
    if (l->spatial_modes[k] < 0)
      c *= -(int64_t)l->spatial_modes[k];
  return c;
}

bool tl_layout_map(const TlLayout *l, int64_t thread, int64_t local,
                   int64_t *index, TlErr *err) {
  int64_t nt = tl_layout_num_threads(l), nl = tl_layout_local_size(l);
  if (thread < 0 || thread >= nt)
    return tl_err(err, "thread %lld is outside [0, %lld)", (long long)thread,
                  (long long)nt);
  if (local < 0 || local >= nl)
    return tl_err(err, "local index %lld is outside [0, %lld)",
                  (long long)local, (long long)nl);
  int64_t digit[TL_LAYOUT_MAX_MODES] = {0};
  for (int k = l->num_spatial - 1; k >= 0; k--) {
    int32_t e = l->spatial_modes[k];
    int64_t s = e >= 0 ? l->mode_shape[e] : -(int64_t)e;
    if (e >= 0)
      digit[e] = thread % s;
    thread /= s;
  }
  for (int k = l->num_local - 1; k >= 0; k--) {
    int32_t e = l->local_modes[k];
    digit[e] = local % l->mode_shape[e];
    local /= l->mode_shape[e];
  }
  for (int d = 0; d < l->rank; d++)
    index[d] = 0;
  for (int m = 0; m < l->num_modes; m++) {
    int d = l->mode_dim[m];
    index[d] = index[d] * l->mode_shape[m] + digit[m];
  }
  return true;
}

bool tl_layout_locate(const TlLayout *l, const int64_t *index, int64_t *local,
                      int64_t *threads, int64_t cap, int64_t *count,
                      TlErr *err) {
  int64_t digit[TL_LAYOUT_MAX_MODES];
  for (int d = 0; d < l->rank; d++) {
    if (index[d] < 0 || index[d] >= l->shape[d])
      return tl_err(err, "index %lld of dimension %d is outside [0, %d)",
                    (long long)index[d], d, l->shape[d]);
    int64_t v = index[d];
    for (int m = l->num_modes - 1; m >= 0; m--)
      if (l->mode_dim[m] == d) {
        digit[m] = v % l->mode_shape[m];
        v /= l->mode_shape[m];
      }
  }
  int64_t li = 0;
  for (int k = 0; k < l->num_local; k++) {
    int32_t e = l->local_modes[k];
    li = li * l->mode_shape[e] + digit[e];
  }
  *local = li;
  *count = tl_layout_replication(l);
  /* With the mode digits fixed, thread ids ordered ascending are the
   * replication digits counted lexicographically (list order is
   * significance order), so an odometer over them lists the smallest ids
   * first. */
  int64_t rep[TL_LAYOUT_MAX_MODES] = {0};
  for (int64_t n = 0; n < cap && n < *count; n++) {
    int64_t t = 0;
    for (int k = 0; k < l->num_spatial; k++) {
      int32_t e = l->spatial_modes[k];
      t = e >= 0 ? t * l->mode_shape[e] + digit[e] : t * -(int64_t)e + rep[k];
    }
    threads[n] = t;
    for (int k = l->num_spatial - 1; k >= 0; k--) {
      int32_t e = l->spatial_modes[k];
      if (e >= 0)
        continue;
      if (++rep[k] < -(int64_t)e)
        break;
      rep[k] = 0;
    }
  }
  return true;
}

int tl_layout_reorder(const TlLayout *from, const TlLayout *to, int64_t *perm) {
  int64_t threads = tl_layout_num_threads(to), n = tl_layout_local_size(to);
  if (tl_layout_num_threads(from) != threads ||
      tl_layout_local_size(from) != n || tl_layout_replication(from) != 1 ||
      tl_layout_replication(to) != 1)
    return -1;
  int result = 1;
  for (int64_t t = 0; t < threads; t++)
    for (int64_t i = 0; i < n; i++) {
      int64_t idx[TL_LAYOUT_MAX_RANK], s, holder, count;
      if (!tl_layout_map(to, t, i, idx, NULL) ||
          !tl_layout_locate(from, idx, &s, &holder, 1, &count, NULL) ||
          count != 1 || holder != t)
        return -1;
      if (t == 0)
        perm[i] = s;
      else if (perm[i] != s)
        result = 0;
    }
  return result;
}
