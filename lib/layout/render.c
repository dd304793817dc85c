/* The grid viewer: draws which thread and local slot hold every element of
 * a register layout, cell by cell as "thread:local", the way the paper's
 * Figures 3-5 draw layouts, and the element offset of every element of a
 * shared-memory layout. Rank-1 layouts draw one row; higher ranks fold
 * every dimension but the last into rows (labelled by their leading
 * indices for register layouts, by the folded row number for shared
 * ones). */
#include "layout_internal.h"

#include <stdio.h>
#include <string.h>

/* The thread set of a replicated element. The set is
 * {base + sum_k r_k * stride_k}; canonical form merges adjacent replication
 * entries, so with one entry it is an arithmetic progression and with
 * several it has gaps (a mode digit sits between the entries). */
static void thread_set(const TlLayout *l, const int64_t *index, TlStr *cell) {
  int64_t local, count, t[4];
  tl_layout_locate(l, index, &local, t, 4, &count, NULL);
  if (count == 1) {
    tl_str_printf(cell, "%lld", (long long)t[0]);
  } else if (count <= 4) {
    tl_str_putc(cell, '{');
    for (int64_t k = 0; k < count; k++)
      tl_str_printf(cell, "%s%lld", k ? "," : "", (long long)t[k]);
    tl_str_putc(cell, '}');
  } else {
    /* The largest member takes every replication digit at its maximum:
     * stride_k is the product of the sizes of the entries after k. */
    int64_t last = t[0], stride = 1;
    int reps = 0;
    for (int k = l->num_spatial - 1; k >= 0; k--) {
      int32_t e = l->spatial_modes[k];
      int64_t s = e >= 0 ? l->mode_shape[e] : -(int64_t)e;
      if (e < 0) {
        last += (s - 1) * stride;
        reps++;
      }
      stride *= s;
    }
    tl_str_printf(cell, "{%lld,%lld,..,%lld}", (long long)t[0], (long long)t[1],
                  (long long)last);
    if (reps > 1)
      tl_str_printf(cell, "#%lld", (long long)count);
  }
  tl_str_printf(cell, ":%lld", (long long)local);
}

static void row_label(const TlLayout *l, int64_t row, TlStr *s) {
  if (l->rank == 1)
    return;
  int64_t idx[TL_LAYOUT_MAX_RANK];
  for (int d = l->rank - 2; d >= 0; d--) {
    idx[d] = row % l->shape[d];
    row /= l->shape[d];
  }
  for (int d = 0; d + 1 < l->rank; d++)
    tl_str_printf(s, "%s%lld", d ? "," : "", (long long)idx[d]);
}

void tl_layout_render(const TlLayout *l, TlStr *out) {
  int64_t cols = l->shape[l->rank - 1];
  int64_t rows = tl_layout_num_elements(l) / cols;
  /* Two passes: measure the widest cell and label, then draw. */
  size_t width = 1, label_width = 0;
  TlStr cell = {0};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      for (size_t k = 0; k < label_width + (label_width ? 2 : 0); k++)
        tl_str_putc(out, ' ');
      for (int64_t c = 0; c < cols; c++)
        tl_str_printf(out, "%s%*lld", c ? " " : "", (int)width, (long long)c);
      tl_str_putc(out, '\n');
    }
    for (int64_t r = 0; r < rows; r++) {
      tl_str_clear(&cell);
      row_label(l, r, &cell);
      if (pass == 0 && cell.len > label_width)
        label_width = cell.len;
      if (pass == 1 && l->rank > 1)
        tl_str_printf(out, "%*s  ", (int)label_width, tl_str_cstr(&cell));
      for (int64_t c = 0; c < cols; c++) {
        int64_t idx[TL_LAYOUT_MAX_RANK], flat = r * cols + c;
        for (int d = l->rank - 1; d >= 0; d--) {
          idx[d] = flat % l->shape[d];
          flat /= l->shape[d];
        }
        tl_str_clear(&cell);
        thread_set(l, idx, &cell);
        if (pass == 0 && cell.len > width)
          width = cell.len;
        if (pass == 1)
          tl_str_printf(out, "%s%*s", c ? " " : "", (int)width,
                        tl_str_cstr(&cell));
      }
      if (pass == 1)
        tl_str_putc(out, '\n');
    }
    if (pass == 0) {
      char buf[32];
      int n = snprintf(buf, sizeof buf, "%lld", (long long)(cols - 1));
      if ((size_t)n > width)
        width = (size_t)n;
    }
  }
  tl_str_free(&cell);
}

void tl_shared_layout_render(const TlSharedLayout *l, TlStr *out) {
  int64_t cols = l->shape[l->rank - 1], rows = 1;
  for (int d = 0; d + 1 < l->rank; d++)
    rows *= l->shape[d];
  int64_t hi = tl_shared_layout_cosize(l) - 1;
  char buf[32];
  int width = snprintf(buf, sizeof buf, "%lld",
                       (long long)(hi > cols - 1 ? hi : cols - 1));
  int label = snprintf(buf, sizeof buf, "%lld", (long long)(rows - 1));
  if (l->rank > 1)
    tl_str_printf(out, "%*s  ", label, "");
  for (int64_t c = 0; c < cols; c++)
    tl_str_printf(out, "%s%*lld", c ? " " : "", width, (long long)c);
  tl_str_putc(out, '\n');
  for (int64_t r = 0; r < rows; r++) {
    int64_t idx[TL_LAYOUT_MAX_RANK], rr = r;
    for (int d = l->rank - 2; d >= 0; d--) {
      idx[d] = rr % l->shape[d];
      rr /= l->shape[d];
    }
    if (l->rank > 1)
      tl_str_printf(out, "%*lld  ", label, (long long)r);
    for (int64_t c = 0; c < cols; c++) {
      int64_t off = 0;
      idx[l->rank - 1] = c;
      tl_shared_layout_offset(l, idx, &off, NULL);
      tl_str_printf(out, "%s%*lld", c ? " " : "", width, (long long)off);
    }
    tl_str_putc(out, '\n');
  }
}
