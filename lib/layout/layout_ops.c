/* Shape operations on register layouts: reshape, flatten, permute, squeeze,
 * unsqueeze, reduce and concat. All but reduce keep which thread holds which
 * element and change only how elements are indexed.
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
