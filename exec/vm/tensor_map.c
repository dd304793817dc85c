/* TL's encoding of a TMA tensor map (include/tl/tensor_map.h), the one the
 * thread-level VM interprets, and the rules every tensor map TL makes
 * satisfies. The layout, little-endian (docs/runtime.md "Tensor maps"):
 *
 *   bytes    field
 *   0..3     magic "TLtm"
 *   4        rank (1..3)
 *   5        element size in bytes (1, 2, 4, 8)
 *   6        swizzle span in 16-byte units (0, 2, 4, 8)
 *   7        out-of-bounds fill (0: zero, the only one)
 *   8..15    base address
 *   16..39   dims[3], u64
 *   40..63   strides[3], u64 (strides[i] for dimension i + 1)
 *   64..75   box[3], u32
 *   76..87   elem_strides[3], u32
 *   88..127  zero
 */
#include "tl/tensor_map.h"

#include <string.h>

bool tl_tensor_map_check(const TlTensorMapDesc *d, TlErr *err) {
  if (d->rank < 1 || d->rank > TL_TENSOR_MAP_MAX_RANK)
    return tl_err(err, "a tensor map has 1 to %d dimensions, not %u",
                  TL_TENSOR_MAP_MAX_RANK, d->rank);
  unsigned eb = d->elem_bytes;
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
    return tl_err(err, "elements are 1, 2, 4 or 8 bytes, not %u", eb);
  if (d->base % 16)
    return tl_err(err, "the base address is not a multiple of 16 bytes");
  for (unsigned i = 0; i < d->rank; i++) {
    if (d->dims[i] < 1 || d->dims[i] > ((uint64_t)1 << 32))
      return tl_err(err,
                    "dimension %u has %llu elements; a tensor map dimension "
                    "has 1 to 2^32",
                    i, (unsigned long long)d->dims[i]);
    if (d->box[i] < 1 || d->box[i] > 256)
      return tl_err(err,
                    "box dimension %u is %u elements; a box has 1 to 256",
                    i, d->box[i]);
    uint32_t es = d->elem_strides[i] ? d->elem_strides[i] : 1;
    if (es > 8)
      return tl_err(err, "element stride %u of dimension %u is not 1 to 8",
                    es, i);
    if (i == 0 && es != 1)
      return tl_err(err, "the element stride of dimension 0 must be 1 (TMA "
                         "does not stride the innermost dimension)");
    if (i + 1 < d->rank &&
        (d->strides[i] % 16 || d->strides[i] >= ((uint64_t)1 << 40)))
      return tl_err(err,
                    "the stride of dimension %u is %llu bytes; strides are "
                    "multiples of 16 below 2^40",
                    i + 1, (unsigned long long)d->strides[i]);
  }
  uint64_t inner = (uint64_t)d->box[0] * eb;
  if (inner % 16)
    return tl_err(err,
                  "the box's inner dimension is %llu bytes, not a multiple "
                  "of 16",
                  (unsigned long long)inner);
  if (d->swizzle != 0 && d->swizzle != 32 && d->swizzle != 64 &&
      d->swizzle != 128)
    return tl_err(err, "the swizzle is none, 32, 64 or 128 bytes, not %u",
                  d->swizzle);
  /* The hardware lays out a box narrower than the swizzle span otherwise
   * than the span's XOR pattern over the box would (docs/simt.md), so TL
   * makes only maps whose inner box is exactly the span. */
  if (d->swizzle && inner != d->swizzle)
    return tl_err(err,
                  "the box's inner dimension is %llu bytes; under the "
                  "%u-byte swizzle it must be exactly %u",
                  (unsigned long long)inner, d->swizzle, d->swizzle);
  return true;
}

static void put(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

bool tl_tensor_map_encode(const TlTensorMapDesc *d, void *out, TlErr *err) {
  if (!tl_tensor_map_check(d, err))
    return false;
  uint8_t b[TL_TENSOR_MAP_BYTES];
  memset(b, 0, sizeof b);
  memcpy(b, "TLtm", 4);
  b[4] = (uint8_t)d->rank;
  b[5] = (uint8_t)d->elem_bytes;
  b[6] = (uint8_t)(d->swizzle / 16);
  put(b + 8, d->base, 8);
  for (unsigned i = 0; i < d->rank; i++) {
    put(b + 16 + 8 * i, d->dims[i], 8);
    if (i + 1 < d->rank)
      put(b + 40 + 8 * i, d->strides[i], 8);
    put(b + 64 + 4 * i, d->box[i], 4);
    put(b + 76 + 4 * i, d->elem_strides[i] ? d->elem_strides[i] : 1, 4);
  }
  memcpy(out, b, sizeof b);
  return true;
}

bool tl_tensor_map_decode(const void *in, TlTensorMapDesc *d, TlErr *err) {
  const uint8_t *b = in;
  if (memcmp(b, "TLtm", 4))
    return tl_err(err, "not a tensor map made for the VM (its first 4 bytes "
                       "are not 'TLtm')");
  memset(d, 0, sizeof *d);
  d->rank = b[4];
  d->elem_bytes = b[5];
  d->swizzle = b[6] * 16u;
  if (b[7])
    return tl_err(err, "unknown out-of-bounds fill %u", b[7]);
  d->base = get(b + 8, 8);
  for (unsigned i = 0; i < d->rank && i < TL_TENSOR_MAP_MAX_RANK; i++) {
    d->dims[i] = get(b + 16 + 8 * i, 8);
    d->strides[i] = get(b + 40 + 8 * i, 8);
    d->box[i] = (uint32_t)get(b + 64 + 4 * i, 4);
    d->elem_strides[i] = (uint32_t)get(b + 76 + 4 * i, 4);
  }
  return tl_tensor_map_check(d, err);
}
