/* Compact storage of sub-byte and wide values in byte arrays (Tilus
 * section 7.1, Fig. 8): values are laid end to end with no padding, so a
 * 3-bit or 6-bit value may straddle two bytes.
 *
 * Both directions work a byte at a time: a value's w bits are split into
 * the pieces that fall into successive bytes, each piece cleared and
 * OR-ed (pack) or masked and shifted (unpack). This is the definition the
 * device-side layouts and recipes are checked against, so it favours
 * obviousness over speed. */
#include "tl/dtype.h"

static uint64_t width_mask(unsigned w) {
  return w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
}

static void put_bits(uint8_t *buf, size_t pos, unsigned w, uint64_t v) {
  while (w) {
    size_t byte = pos / 8;
    unsigned sh = (unsigned)(pos % 8), take = 8 - sh;
    if (take > w)
      take = w;
    uint8_t m = (uint8_t)(((1u << take) - 1) << sh);
    buf[byte] = (uint8_t)((buf[byte] & ~m) | (((unsigned)v << sh) & m));
    v >>= take;
    pos += take;
    w -= take;
  }
}

static uint64_t get_bits(const uint8_t *buf, size_t pos, unsigned w) {
  uint64_t v = 0;
  unsigned got = 0;
  while (got < w) {
    size_t byte = pos / 8;
    unsigned sh = (unsigned)(pos % 8), take = 8 - sh;
    if (take > w - got)
      take = w - got;
    uint64_t piece = (uint64_t)((buf[byte] >> sh) & ((1u << take) - 1));
    v |= piece << got;
    got += take;
    pos += take;
  }
  return v;
}

void tl_dtype_pack(TlDType t, const uint64_t *codes, size_t n, void *buf,
                   size_t bit_off) {
  unsigned w = t.bits;
  for (size_t i = 0; i < n; i++)
    put_bits(buf, bit_off + i * w, w, codes[i] & width_mask(w));
}

void tl_dtype_unpack(TlDType t, const void *buf, size_t bit_off, size_t n,
                     uint64_t *codes) {
  unsigned w = t.bits;
  for (size_t i = 0; i < n; i++)
    codes[i] = get_bits(buf, bit_off + i * w, w);
}

uint64_t tl_dtype_load(TlDType t, const void *buf, size_t i) {
  return get_bits(buf, i * t.bits, t.bits);
}

void tl_dtype_store(TlDType t, void *buf, size_t i, uint64_t code) {
  put_bits(buf, i * t.bits, t.bits, code & width_mask(t.bits));
}

size_t tl_dtype_storage_bytes(TlDType t, size_t n) {
  return (n * t.bits + 7) / 8;
}
