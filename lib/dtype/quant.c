/* Quantisation of weight matrices to any integer type or small float with
 * per-tensor, per-channel or per-group (along k) scales, and the matching
 * dequantisers: the host side of the weight packers and the reference the
 * quantised-matmul kernels are checked against.
 *
 * Rounding is done once and in the open: the scale is computed in double,
 * stored as f32, and quantisation divides by that stored f32 (so the
 * packer and a kernel that reads the same scale agree); x / scale is
 * rounded to nearest, ties to even, then the zero point is added and the
 * result clamped to the type's range. Small-float targets go through
 * tl_dtype_encode (same rounding, saturating). */
#include "dtype_internal.h"

#include <math.h>
#include <string.h>

static double rne(double x) {
  double fl = floor(x), frac = x - fl;
  if (frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) != 0.0))
    return fl + 1.0;
  return fl;
}

size_t tl_quant_num_groups(const TlQuantSpec *spec, size_t k, size_t n) {
  if (spec->per_tensor)
    return 1;
  size_t g = spec->group_size ? spec->group_size : k;
  return g ? (k + g - 1) / g * n : 0;
}

static size_t group_of(const TlQuantSpec *spec, size_t k, size_t n, size_t i,
                       size_t j) {
  if (spec->per_tensor)
    return 0;
  size_t g = spec->group_size ? spec->group_size : k;
  return i / g * n + j;
}

/* Integer range [qmin, qmax], the symmetric zero point and the largest
 * positive level P = qmax - zsym used to fit absmax. */
typedef struct IntRange {
  double qmin, qmax, zsym, pos;
} IntRange;

static IntRange int_range(TlDType q) {
  IntRange r;
  r.qmin = tl_dtype_min(q);
  r.qmax = tl_dtype_max(q);
  /* iN: symmetric around 0, levels -P..P with P = 2^(N-1)-1 (the most
   * negative code is unused so that +absmax and -absmax are both exact).
   * uN: offset binary with z = 2^(N-1), levels z-P..z+P. */
  r.zsym = q.kind == TL_DTYPE_UINT ? ldexp(1.0, q.bits - 1) : 0.0;
  r.pos = ldexp(1.0, q.bits - 1) - 1.0;
  return r;
}

static bool check_spec(const TlQuantSpec *spec, size_t k, size_t n,
                       TlErr *err) {
  TlDType q = spec->qtype;
  if (!tl_dtype_is_valid(q) || q.kind == TL_DTYPE_BOOL)
    return tl_err(err, "unsupported quantisation type %s", tl_dtype_name(q));
  if (tl_dtype_is_integer(q)) {
    if (q.bits > 32)
      return tl_err(err, "quantisation to %s: at most 32 bits",
                    tl_dtype_name(q));
    if (spec->mode == TL_QUANT_SYMMETRIC && q.bits < 2)
      return tl_err(err, "symmetric quantisation needs at least 2 bits");
  } else {
    if (q.bits > 16)
      return tl_err(err, "quantisation to %s: not a low-precision float",
                    tl_dtype_name(q));
    if (spec->mode != TL_QUANT_SYMMETRIC)
      return tl_err(err, "float quantisation (%s) is symmetric only",
                    tl_dtype_name(q));
  }
  if (k == 0 || n == 0)
    return tl_err(err, "empty %zu x %zu matrix", k, n);
  return true;
}

static bool src_ok(TlDType t) {
  return tl_dtype_eq(t, tl_dtype_f32()) || tl_dtype_eq(t, tl_dtype_f16()) ||
         tl_dtype_eq(t, tl_dtype_bf16());
}

static double read_elem(TlDType t, const void *p, size_t i) {
  if (t.bits == 32) {
    float f;
    memcpy(&f, (const char *)p + 4 * i, sizeof f);
    return f;
  }
  uint16_t h;
  memcpy(&h, (const char *)p + 2 * i, sizeof h);
  return tl_dtype_decode(t, h);
}

static void write_elem(TlDType t, void *p, size_t i, double v) {
  if (t.bits == 32) {
    uint32_t c = (uint32_t)tl_dtype_encode(t, v);
    memcpy((char *)p + 4 * i, &c, sizeof c);
  } else {
    uint16_t c = (uint16_t)tl_dtype_encode(t, v);
    memcpy((char *)p + 2 * i, &c, sizeof c);
  }
}

/* f32 scale from a double; a scale that is 0 (all-zero group, or one so
 * small it underflows f32) becomes 1 so that every value maps to 0. */
static float store_scale(double s) {
  float f = (float)s;
  return (f == 0.0f || !isfinite(f)) ? 1.0f : f;
}

bool tl_quant_matrix(const TlQuantSpec *spec, TlDType src_type, const void *src,
                     size_t k, size_t n, void *packed, float *scales,
                     int32_t *zeros, TlErr *err) {
  if (!check_spec(spec, k, n, err))
    return false;
  if (!src_ok(src_type))
    return tl_err(err, "unsupported source type %s", tl_dtype_name(src_type));
  TlDType q = spec->qtype;
  size_t ng = tl_quant_num_groups(spec, k, n);
  double *lo = tl_xcalloc(ng, sizeof *lo), *hi = tl_xcalloc(ng, sizeof *hi);
  bool ok = true;
  /* pass 1: ranges (lo <= 0 <= hi so that 0 is always a level) */
  for (size_t i = 0; i < k && ok; i++)
    for (size_t j = 0; j < n; j++) {
      double x = read_elem(src_type, src, i * n + j);
      if (!isfinite(x)) {
        ok = tl_err(err, "non-finite input at [%zu, %zu]", i, j);
        break;
      }
      size_t g = group_of(spec, k, n, i, j);
      lo[g] = fmin(lo[g], x);
      hi[g] = fmax(hi[g], x);
    }
  /* scales and zero points */
  IntRange ir = {0, 0, 0, 0};
  if (tl_dtype_is_integer(q))
    ir = int_range(q);
  for (size_t g = 0; g < ng && ok; g++) {
    double absmax = fmax(-lo[g], hi[g]);
    if (!tl_dtype_is_integer(q)) {
      scales[g] = store_scale(absmax / tl_dtype_max(q));
    } else if (spec->mode == TL_QUANT_SYMMETRIC) {
      scales[g] = store_scale(absmax / ir.pos);
      if (zeros)
        zeros[g] = (int32_t)ir.zsym;
    } else {
      scales[g] = store_scale((hi[g] - lo[g]) / (ir.qmax - ir.qmin));
      double z = rne(ir.qmin - lo[g] / (double)scales[g]);
      z = fmin(fmax(z, ir.qmin), ir.qmax);
      if (zeros)
        zeros[g] = (int32_t)z;
      lo[g] = z; /* reuse: the zero point for pass 2 */
    }
  }
  if (ok && spec->mode == TL_QUANT_ASYMMETRIC && !zeros)
    ok = tl_err(err, "asymmetric quantisation needs a zeros buffer");
  /* pass 2: codes */
  for (size_t i = 0; i < k && ok; i++)
    for (size_t j = 0; j < n; j++) {
      size_t g = group_of(spec, k, n, i, j);
      double v = read_elem(src_type, src, i * n + j) / (double)scales[g];
      uint64_t code;
      if (!tl_dtype_is_integer(q))
        code = tl_dtype_encode(q, v);
      else {
        double z = spec->mode == TL_QUANT_SYMMETRIC ? ir.zsym : lo[g];
        double qv = fmin(fmax(rne(v) + z, ir.qmin), ir.qmax);
        code = tl_dtype_encode(q, qv); /* an in-range integer: exact */
      }
      tl_dtype_store(q, packed, i * n + j, code);
    }
  tl_free(lo);
  tl_free(hi);
  return ok;
}

bool tl_dequant_matrix(const TlQuantSpec *spec, const void *packed,
                       const float *scales, const int32_t *zeros, size_t k,
                       size_t n, TlDType dst_type, void *dst, TlErr *err) {
  if (!check_spec(spec, k, n, err))
    return false;
  if (!src_ok(dst_type))
    return tl_err(err, "unsupported destination type %s",
                  tl_dtype_name(dst_type));
  TlDType q = spec->qtype;
  bool is_int = tl_dtype_is_integer(q);
  if (is_int && spec->mode == TL_QUANT_ASYMMETRIC && !zeros)
    return tl_err(err, "asymmetric dequantisation needs zero points");
  IntRange ir = {0, 0, 0, 0};
  if (is_int)
    ir = int_range(q);
  for (size_t i = 0; i < k; i++)
    for (size_t j = 0; j < n; j++) {
      size_t g = group_of(spec, k, n, i, j);
      double v = tl_dtype_decode(q, tl_dtype_load(q, packed, i * n + j));
      if (is_int)
        v -= spec->mode == TL_QUANT_SYMMETRIC ? ir.zsym : (double)zeros[g];
      /* (q - z) has at most 33 bits and the scale 24: for qtypes up to
       * 29 bits the product is exact and the store rounds once */
      write_elem(dst_type, dst, i * n + j, v * (double)scales[g]);
    }
  return true;
}
