/* Shape operations on register layouts: reshape, flatten, permute, squeeze,
 * unsqueeze, reduce, concat and slice. All but reduce and slice keep which
 * thread holds which element and change only how elements are indexed;
 * slice keeps, in every thread, the elements of a sub-tile.
 *
 * Because modes are numbered dimension by dimension, most significant
 * first, the mode array read in order is the mixed radix of the row-major
 * flat index. Reshape therefore only has to cut that digit sequence at the
 * new dimension boundaries, splitting a digit where a boundary falls
 * inside it. */
#include "layout_internal.h"

#include <string.h>

bool tl_layout_reshape(TlLayout *out, const TlLayout *l, int rank,
                       const int64_t *shape, TlErr *err) {
  if (rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "rank %d is outside [1, %d]", rank, TL_LAYOUT_MAX_RANK);
  int64_t total;
  if (!tl_size_product(shape, rank, &total))
    return tl_err(err, "new shape has a size below 1 or more than %d elements",
                  TL_LAYOUT_MAX_SIZE);
  if (total != tl_layout_num_elements(l))
    return tl_err(err, "cannot reshape %lld elements into %lld",
                  (long long)tl_layout_num_elements(l), (long long)total);
  TlRawLayout r;
  tl_raw_from_layout(&r, l);
  /* Walk the digits from the least significant end. For new dimension d
   * (last first) take whole digits while they divide what is still needed;
   * a digit of size s larger than the remaining need splits as
   * (s / need, need) when need divides s. Otherwise the new index would be
   * a non-mixed-radix function of the digit, which no layout expresses. */
  int m = r.num_modes - 1;
  for (int d = rank - 1; d >= 0; d--) {
    int64_t need = shape[d];
    while (need > 1) {
      tl_assert(m >= 0);
      int64_t s = r.mode_shape[m];
      if (need % s == 0) {
        need /= s;
        r.mode_dim[m--] = d;
      } else if (s % need == 0) {
        if (!tl_raw_split_mode(&r, m, need, err))
          return false;
        r.mode_dim[m + 1] = d;
        need = 1;
      } else {
        return tl_err(err,
                      "cannot reshape: a mode of size %lld straddles the "
                      "boundary of new dimension %d (size %lld)",
                      (long long)s, d, (long long)shape[d]);
      }
    }
  }
  tl_assert(m < 0);
  r.rank = rank;
  for (int d = 0; d < rank; d++)
    r.shape[d] = shape[d];
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_flatten(TlLayout *out, const TlLayout *l, int first, int last,
                       TlErr *err) {
  if (first < 0 || last >= l->rank || first > last)
    return tl_err(err, "cannot flatten dimensions %d..%d of a rank-%d layout",
                  first, last, l->rank);
  int64_t shape[TL_LAYOUT_MAX_RANK];
  int n = 0;
  for (int d = 0; d < l->rank; d++) {
    if (d > first && d <= last)
      shape[n - 1] *= l->shape[d];
    else
      shape[n++] = l->shape[d];
  }
  return tl_layout_reshape(out, l, n, shape, err);
}

bool tl_layout_permute(TlLayout *out, const TlLayout *l, const int *perm,
                       TlErr *err) {
  bool used[TL_LAYOUT_MAX_RANK] = {false};
  for (int k = 0; k < l->rank; k++) {
    if (perm[k] < 0 || perm[k] >= l->rank || used[perm[k]])
      return tl_err(err, "not a permutation of the %d dimensions", l->rank);
    used[perm[k]] = true;
  }
  TlRawLayout r;
  memset(&r, 0, sizeof r);
  r.rank = l->rank;
  int map[TL_LAYOUT_MAX_MODES];
  for (int k = 0; k < l->rank; k++) {
    r.shape[k] = l->shape[perm[k]];
    for (int m = 0; m < l->num_modes; m++)
      if (l->mode_dim[m] == perm[k]) {
        map[m] = r.num_modes;
        r.mode_shape[r.num_modes] = l->mode_shape[m];
        r.mode_dim[r.num_modes++] = k;
      }
  }
  for (int k = 0; k < l->num_spatial; k++) {
    int32_t e = l->spatial_modes[k];
    r.spatial[k] = e >= 0 ? map[e] : e;
  }
  for (int k = 0; k < l->num_local; k++)
    r.local[k] = map[l->local_modes[k]];
  r.num_spatial = l->num_spatial;
  r.num_local = l->num_local;
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_squeeze(TlLayout *out, const TlLayout *l, int dim, TlErr *err) {
  if (dim < 0 || dim >= l->rank)
    return tl_err(err, "dimension %d is outside [0, %d)", dim, l->rank);
  if (l->shape[dim] != 1)
    return tl_err(err, "cannot squeeze dimension %d of size %d", dim,
                  l->shape[dim]);
  if (l->rank == 1)
    return tl_err(err, "cannot squeeze the only dimension");
  TlRawLayout r;
  tl_raw_from_layout(&r, l);
  for (int d = dim; d + 1 < r.rank; d++)
    r.shape[d] = r.shape[d + 1];
  r.shape[--r.rank] = 0;
  for (int m = 0; m < r.num_modes; m++)
    if (r.mode_dim[m] > dim)
      r.mode_dim[m]--;
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_unsqueeze(TlLayout *out, const TlLayout *l, int dim,
                         TlErr *err) {
  if (dim < 0 || dim > l->rank)
    return tl_err(err, "dimension %d is outside [0, %d]", dim, l->rank);
  if (l->rank == TL_LAYOUT_MAX_RANK)
    return tl_err(err, "a layout has at most %d dimensions",
                  TL_LAYOUT_MAX_RANK);
  TlRawLayout r;
  tl_raw_from_layout(&r, l);
  for (int d = r.rank; d > dim; d--)
    r.shape[d] = r.shape[d - 1];
  r.shape[dim] = 1;
  r.rank++;
  for (int m = 0; m < r.num_modes; m++)
    if (r.mode_dim[m] >= dim)
      r.mode_dim[m]++;
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_reduce(TlLayout *out, const TlLayout *l, int dim, TlErr *err) {
  if (dim < 0 || dim >= l->rank)
    return tl_err(err, "dimension %d is outside [0, %d)", dim, l->rank);
  TlRawLayout r;
  tl_raw_from_layout(&r, l);
  /* Spatial digits of the reduced dimension no longer select an element:
   * the threads they told apart now hold the same value. Local digits
   * vanish with the elements they indexed. */
  for (int k = 0; k < r.num_spatial; k++) {
    int64_t e = r.spatial[k];
    if (e >= 0 && r.mode_dim[e] == dim)
      r.spatial[k] = -r.mode_shape[e];
  }
  int n = 0;
  for (int k = 0; k < r.num_local; k++)
    if (r.mode_dim[r.local[k]] != dim)
      r.local[n++] = r.local[k];
  r.num_local = n;
  for (int m = r.num_modes - 1; m >= 0; m--)
    if (r.mode_dim[m] == dim)
      tl_raw_delete_mode(&r, m);
  r.shape[dim] = 1;
  return tl_raw_to_layout(&r, out, err);
}

bool tl_layout_concat(TlLayout *out, const TlLayout *a, const TlLayout *b,
                      TlErr *err) {
  if (a->rank + b->rank > TL_LAYOUT_MAX_RANK)
    return tl_err(err, "concatenation has rank %d, above %d", a->rank + b->rank,
                  TL_LAYOUT_MAX_RANK);
  TlRawLayout r;
  tl_raw_from_layout(&r, a);
  r.rank = a->rank + b->rank;
  for (int d = 0; d < b->rank; d++)
    r.shape[a->rank + d] = b->shape[d];
  int off = a->num_modes;
  for (int m = 0; m < b->num_modes; m++) {
    r.mode_shape[off + m] = b->mode_shape[m];
    r.mode_dim[off + m] = a->rank + b->mode_dim[m];
  }
  r.num_modes = off + b->num_modes;
  for (int k = 0; k < b->num_spatial; k++) {
    int32_t e = b->spatial_modes[k];
    r.spatial[r.num_spatial++] = e >= 0 ? off + e : e;
  }
  for (int k = 0; k < b->num_local; k++)
    r.local[r.num_local++] = off + b->local_modes[k];
  return tl_raw_to_layout(&r, out, err);
}

/* Slicing keeps, in every thread, the elements of the sub-tile that thread
 * already holds. Per dimension the kept size must be the product of the
 * dimension's trailing (least significant) modes, splitting one mode where
 * the boundary falls inside it; the leading modes then index which sub-tile
 * it is, and must be local: a thread drops the local slots of the other
 * sub-tiles, while a spatial leading mode would leave threads without
 * elements. The dropped modes' digits come from offset / size. */
bool tl_layout_slice(TlLayout *out, const TlLayout *l, const int64_t *offsets,
                     const int64_t *sizes, int64_t *local_map, TlErr *err) {
  TlRawLayout r;
  tl_raw_from_layout(&r, l);
  int64_t digit[TL_RAW_MAX_MODES] = {0};
  bool drop[TL_RAW_MAX_MODES] = {false};
  for (int d = 0; d < r.rank; d++) {
    int64_t off = offsets[d], size = sizes[d];
    if (size < 1 || size > r.shape[d])
      return tl_err(err, "dimension %d: size %lld is outside [1, %lld]", d,
                    (long long)size, (long long)r.shape[d]);
    if (off < 0 || off > r.shape[d] - size)
      return tl_err(err, "dimension %d: [%lld, %lld) is outside [0, %lld)", d,
                    (long long)off, (long long)(off + size),
                    (long long)r.shape[d]);
    if (off % size != 0)
      return tl_err(err,
                    "dimension %d: offset %lld is not a multiple of the size "
                    "%lld",
                    d, (long long)off, (long long)size);
    int first = 0, last;
    while (first < r.num_modes && r.mode_dim[first] < d)
      first++;
    last = first;
    while (last < r.num_modes && r.mode_dim[last] == d)
      last++;
    /* Modes first..last-1 are dimension d's; take trailing ones. */
    int64_t need = size;
    int k = last - 1;
    while (need > 1) {
      int64_t s = r.mode_shape[k];
      if (need % s == 0) {
        need /= s;
        k--;
      } else if (s % need == 0) {
        if (!tl_raw_split_mode(&r, k, need, err))
          return false;
        need = 1; /* the high part stays at k and leads */
      } else {
        return tl_err(err,
                      "dimension %d: size %lld is not a product of trailing "
                      "modes of the dimension",
                      d, (long long)size);
      }
    }
    /* Modes first..k lead: each must be local. */
    int64_t v = off / size;
    for (int m = k; m >= first; m--) {
      bool local = false;
      for (int e = 0; e < r.num_local && !local; e++)
        local = r.local[e] == m;
      if (!local)
        return tl_err(err,
                      "dimension %d: the sliced-off mode of size %lld is "
                      "spatial (its other elements are held by other "
                      "threads)",
                      d, (long long)r.mode_shape[m]);
      digit[m] = v % r.mode_shape[m];
      v /= r.mode_shape[m];
      drop[m] = true;
    }
    r.shape[d] = size;
  }
  /* Result local j: its digits over the kept local entries, the dropped
   * entries' digits fixed, raveled over the whole local list. */
  if (local_map) {
    int64_t kept = 1;
    for (int e = 0; e < r.num_local; e++)
      if (!drop[r.local[e]])
        kept *= r.mode_shape[r.local[e]];
    for (int64_t j = 0; j < kept; j++) {
      int64_t rest = j, idx = 0, scale = 1;
      for (int e = r.num_local - 1; e >= 0; e--) {
        int64_t m = r.local[e], s = r.mode_shape[m], dg;
        if (drop[m]) {
          dg = digit[m];
        } else {
          dg = rest % s;
          rest /= s;
        }
        idx += dg * scale;
        scale *= s;
      }
      local_map[j] = idx;
    }
  }
  int n = 0;
  for (int e = 0; e < r.num_local; e++)
    if (!drop[r.local[e]])
      r.local[n++] = r.local[e];
  r.num_local = n;
  for (int m = r.num_modes - 1; m >= 0; m--)
    if (drop[m])
      tl_raw_delete_mode(&r, m);
  return tl_raw_to_layout(&r, out, err);
}
