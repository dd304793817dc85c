/* The GF(2) linear view of power-of-two layouts (as Triton's linear
 * layouts): a register layout whose modes and replication factors are all
 * powers of two maps the bits of (local, thread) to the bits of the flat
 * logical index, each input bit to one output bit (or to nothing, for
 * replicated threads). Compositions and inverses of such matrices are how
 * swizzles, bank conflicts and instruction atoms are reasoned about without
 * enumerating grids.
 *
 * Columns are uint64_t bit sets: cols[j] is the image of input bit j, so
 * applying a matrix is XOR-ing the columns of the set input bits. */
#include "layout_internal.h"

#include <string.h>

static int log2_exact(int64_t x) {
  int k = 0;
  if (x < 1 || (x & (x - 1)) != 0)
    return -1;
  while ((int64_t)1 << k != x)
    k++;
  return k;
}

bool tl_layout_to_linear(const TlLayout *l, TlLinearLayout *out, TlErr *err) {
  TlLinearLayout m;
  memset(&m, 0, sizeof m);
  m.rank = l->rank;
  /* Output bit offset of each mode: the flat index's least significant
   * bits belong to the last dimension's last mode. */
  int off[TL_LAYOUT_MAX_MODES], bits[TL_LAYOUT_MAX_MODES], pos = 0;
  for (int d = l->rank - 1; d >= 0; d--) {
    int k = log2_exact(l->shape[d]);
    if (k < 0)
      return tl_err(err, "dimension %d has size %d, not a power of two", d,
                    l->shape[d]);
    m.out_dim_bits[d] = k;
  }
  for (int mo = l->num_modes - 1; mo >= 0; mo--) {
    bits[mo] = log2_exact(l->mode_shape[mo]);
    if (bits[mo] < 0)
      return tl_err(err, "mode %d has size %d, not a power of two", mo,
                    l->mode_shape[mo]);
    off[mo] = pos;
    pos += bits[mo];
  }
  m.num_out = pos;
  int in = 0;
  for (int k = l->num_local - 1; k >= 0; k--) {
    int e = l->local_modes[k];
    for (int b = 0; b < bits[e]; b++)
      m.cols[in++] = (uint64_t)1 << (off[e] + b);
  }
  m.local_bits = in;
  for (int k = l->num_spatial - 1; k >= 0; k--) {
    int e = l->spatial_modes[k];
    if (e < 0) {
      int b = log2_exact(-(int64_t)e);
      if (b < 0)
        return tl_err(err, "replication factor %d is not a power of two", -e);
      in += b; /* zero columns: these thread bits select no element */
      continue;
    }
    for (int b = 0; b < bits[e]; b++)
      m.cols[in++] = (uint64_t)1 << (off[e] + b);
  }
  m.thread_bits = in - m.local_bits;
  m.num_in = in;
  *out = m;
  return true;
}

bool tl_linear_to_layout(const TlLinearLayout *m, TlLayout *out, TlErr *err) {
  if (m->rank < 1 || m->rank > TL_LAYOUT_MAX_RANK || m->num_out > 31 ||
      m->num_in > TL_LINEAR_MAX_BITS || m->local_bits < 0 ||
      m->thread_bits < 0 || m->local_bits + m->thread_bits != m->num_in)
    return tl_err(err, "matrix partition does not describe a layout");
  int total = 0;
  for (int d = 0; d < m->rank; d++) {
    if (m->out_dim_bits[d] < 0)
      return tl_err(err, "matrix partition does not describe a layout");
    total += m->out_dim_bits[d];
  }
  if (total != m->num_out)
    return tl_err(err, "dimension bits add up to %d, not %d output bits", total,
                  m->num_out);
  /* One size-2 mode per output bit, numbered dimension by dimension, most
   * significant bit first; canonicalisation merges them back. Output bit
   * o is mode num_out - 1 - o. */
  int64_t shape[TL_LAYOUT_MAX_RANK], modes[64], sp[64], lo[64];
  for (int d = 0; d < m->rank; d++)
    shape[d] = (int64_t)1 << m->out_dim_bits[d];
  for (int o = 0; o < m->num_out; o++)
    modes[o] = 2;
  uint64_t hit = 0;
  int ns = 0, nl = 0;
  for (int j = m->num_in - 1; j >= 0; j--) {
    uint64_t c = m->cols[j];
    bool thread = j >= m->local_bits;
    if (c == 0 && thread) {
      sp[ns++] = -2;
      continue;
    }
    if (c == 0 || (c & (c - 1)) != 0)
      return tl_err(err,
                    "input bit %d maps to %s: a layout maps each bit to "
                    "one index bit",
                    j,
                    c == 0 ? "zero (only thread bits may replicate)"
                           : "a sum of index bits");
    if (c & hit)
      return tl_err(err, "two input bits map to the same index bit");
    if (c >> m->num_out)
      return tl_err(err, "input bit %d maps outside the %d output bits", j,
                    m->num_out);
    hit |= c;
    int o = 0;
    while (!((c >> o) & 1))
      o++;
    if (thread)
      sp[ns++] = m->num_out - 1 - o;
    else
      lo[nl++] = m->num_out - 1 - o;
  }
  if (hit != (m->num_out == 64 ? ~0ull : (((uint64_t)1 << m->num_out) - 1)))
    return tl_err(err, "some index bits are reached by no input bit");
  /* Thread and local lists were built most significant first, as the
   * layout wants them. */
  return tl_layout_make(out, m->rank, shape, m->num_out, modes, ns, sp, nl, lo,
                        err);
}

bool tl_linear_make(TlLinearLayout *out, int num_in, int num_out,
                    const uint64_t *cols, TlErr *err) {
  if (num_in < 0 || num_in > TL_LINEAR_MAX_BITS || num_out < 0 ||
      num_out > TL_LINEAR_MAX_BITS)
    return tl_err(err, "a bit matrix has at most %d inputs and outputs",
                  TL_LINEAR_MAX_BITS);
  TlLinearLayout m;
  memset(&m, 0, sizeof m);
  m.num_in = m.local_bits = num_in;
  m.num_out = num_out;
  m.rank = 1;
  m.out_dim_bits[0] = num_out;
  uint64_t mask = num_out == 64 ? ~0ull : (((uint64_t)1 << num_out) - 1);
  for (int j = 0; j < num_in; j++) {
    if (cols[j] & ~mask)
      return tl_err(err, "column %d has bits beyond the %d outputs", j,
                    num_out);
    m.cols[j] = cols[j];
  }
  *out = m;
  return true;
}

uint64_t tl_linear_apply(const TlLinearLayout *m, uint64_t x) {
  uint64_t y = 0;
  for (int j = 0; j < m->num_in; j++)
    if ((x >> j) & 1)
      y ^= m->cols[j];
  return y;
}

bool tl_linear_compose(TlLinearLayout *out, const TlLinearLayout *outer,
                       const TlLinearLayout *inner, TlErr *err) {
  if (inner->num_out != outer->num_in)
    return tl_err(err, "cannot compose: %d output bits feed %d input bits",
                  inner->num_out, outer->num_in);
  TlLinearLayout m = *inner;
  for (int j = 0; j < inner->num_in; j++)
    m.cols[j] = tl_linear_apply(outer, inner->cols[j]);
  m.num_out = outer->num_out;
  m.rank = outer->rank;
  memcpy(m.out_dim_bits, outer->out_dim_bits, sizeof m.out_dim_bits);
  *out = m;
  return true;
}

/* Gauss-Jordan elimination over the columns. Each working column carries
 * the set of original columns it is the XOR of; once bit k is a pivot,
 * it is cleared from every other column, so at the end each pivot column
 * is exactly e_k and its combination solves M x = e_k. Returns the rank;
 * inv[k] receives that x when bit k has a pivot. */
static int eliminate(const TlLinearLayout *m, uint64_t *inv) {
  uint64_t v[TL_LINEAR_MAX_BITS], c[TL_LINEAR_MAX_BITS];
  bool used[TL_LINEAR_MAX_BITS] = {false};
  for (int j = 0; j < m->num_in; j++)
    v[j] = m->cols[j], c[j] = (uint64_t)1 << j;
  int rank = 0;
  for (int k = 0; k < m->num_out; k++) {
    int p = -1;
    for (int j = 0; j < m->num_in && p < 0; j++)
      if (!used[j] && ((v[j] >> k) & 1))
        p = j;
    if (p < 0)
      continue;
    used[p] = true;
    rank++;
    for (int j = 0; j < m->num_in; j++)
      if (j != p && ((v[j] >> k) & 1))
        v[j] ^= v[p], c[j] ^= c[p];
  }
  if (inv)
    for (int j = 0; j < m->num_in; j++)
      if (used[j]) {
        int k = 0;
        while (!((v[j] >> k) & 1))
          k++;
        inv[k] = c[j];
      }
  return rank;
}

int tl_linear_rank(const TlLinearLayout *m) { return eliminate(m, NULL); }

bool tl_linear_invert(TlLinearLayout *out, const TlLinearLayout *m,
                      TlErr *err) {
  if (m->num_in != m->num_out)
    return tl_err(err, "cannot invert a %d x %d bit matrix", m->num_out,
                  m->num_in);
  uint64_t inv[TL_LINEAR_MAX_BITS] = {0};
  int rank = eliminate(m, inv);
  if (rank != m->num_in)
    return tl_err(err, "bit matrix is singular (rank %d of %d)", rank,
                  m->num_in);
  return tl_linear_make(out, m->num_in, m->num_in, inv, err);
}

bool tl_linear_equal(const TlLinearLayout *a, const TlLinearLayout *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

/* Rank of a set of bit vectors (Gaussian elimination on the vectors). */
static int span_rank(uint64_t *v, int n) {
  int rank = 0;
  for (int bit = 0; bit < 64; bit++) {
    int p = -1;
    for (int j = rank; j < n && p < 0; j++)
      if ((v[j] >> bit) & 1)
        p = j;
    if (p < 0)
      continue;
    uint64_t t = v[p];
    v[p] = v[rank];
    v[rank] = t;
    for (int j = 0; j < n; j++)
      if (j != rank && ((v[j] >> bit) & 1))
        v[j] ^= t;
    rank++;
  }
  return rank;
}

bool tl_linear_wavefronts(const TlLinearLayout *lane_addr, int width,
                          int *wavefronts, TlErr *err) {
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
    return tl_err(err, "access width %d is not 1, 2, 4, 8 or 16 bytes", width);
  if (lane_addr->num_in > 5)
    return tl_err(err, "a warp has 5 lane bits, not %d", lane_addr->num_in);
  for (int j = 0; j < lane_addr->num_in; j++)
    if (lane_addr->cols[j] & (uint64_t)(width - 1))
      return tl_err(err,
                    "lane bit %d moves the address by a multiple of "
                    "less than the %d-byte access width",
                    j, width);
  /* A phase is the lanes that differ only in the low phase_bits lane bits;
   * the others translate the phase's address set, which changes no count.
   * Words are address bits >= 2; a vector of width / 4 words adds its word
   * offsets, which XOR into the aligned word index. */
  int phase_bits = width <= 4 ? 5 : width == 8 ? 4 : 3;
  if (phase_bits > lane_addr->num_in)
    phase_bits = lane_addr->num_in;
  int phases = 1 << (lane_addr->num_in - phase_bits);
  uint64_t w[8], pw[8];
  int n = 0;
  for (int j = 0; j < phase_bits; j++)
    w[n++] = lane_addr->cols[j] >> 2;
  for (int k = 1; k < width / 4; k *= 2)
    w[n++] = (uint64_t)k;
  for (int j = 0; j < n; j++)
    pw[j] = w[j] & 31; /* bank = word index mod 32 */
  /* The phase's words form a coset of span(w); each bank it touches gets
   * |span(w)| / |span(pw)| distinct words, the fibre size of the bank
   * projection restricted to span(w). */
  int per_phase = 1 << (span_rank(w, n) - span_rank(pw, n));
  *wavefronts = phases * per_phase;
  return true;
}

bool tl_shared_layout_to_linear(const TlSharedLayout *l, TlLinearLayout *out,
                                TlErr *err) {
  if (l->base != 0)
    return tl_err(err, "base offset %lld makes the layout affine, not linear",
                  (long long)l->base);
  TlLinearLayout m;
  memset(&m, 0, sizeof m);
  m.rank = 1;
  int in = 0;
  uint64_t used = 0;
  int top = l->swizzle_bits
                ? l->swizzle_base + l->swizzle_shift + l->swizzle_bits
                : 0;
  for (int d = l->rank - 1; d >= 0; d--)
    if (log2_exact(l->shape[d]) < 0)
      return tl_err(err, "dimension %d has size %lld, not a power of two", d,
                    (long long)l->shape[d]);
  /* Input bits: the flat row-major index, last mode lowest. A mode of size
   * 2^k and stride 2^s sends its digit bits to offset bits [s, s + k); the
   * sum of the modes is their XOR when these ranges are disjoint. */
  for (int mo = l->num_modes - 1; mo >= 0; mo--) {
    int k = log2_exact(l->mode_shape[mo]);
    if (k < 0)
      return tl_err(err, "mode %d has size %lld, not a power of two", mo,
                    (long long)l->mode_shape[mo]);
    int64_t st = l->mode_stride[mo];
    int s = st == 0 ? 0 : log2_exact(st);
    if (s < 0)
      return tl_err(err, "mode %d has stride %lld, not a power of two", mo,
                    (long long)st);
    for (int b = 0; b < k; b++) {
      if (in >= TL_LINEAR_MAX_BITS)
        return tl_err(err, "more than %d index bits", TL_LINEAR_MAX_BITS);
      if (st == 0) {
        m.cols[in++] = 0;
        continue;
      }
      uint64_t c = (uint64_t)1 << (s + b);
      if (used & c)
        return tl_err(err,
                      "modes overlap in offset bit %d: offsets add with "
                      "carries, not XOR",
                      s + b);
      used |= c;
      m.cols[in++] = c;
      if (s + b + 1 > top)
        top = s + b + 1;
    }
  }
  if (l->swizzle_bits) {
    uint64_t mask = (((uint64_t)1 << l->swizzle_bits) - 1)
                    << (l->swizzle_base + l->swizzle_shift);
    for (int j = 0; j < in; j++)
      m.cols[j] ^= (m.cols[j] & mask) >> l->swizzle_shift;
  }
  m.num_in = m.local_bits = in;
  m.num_out = top;
  m.out_dim_bits[0] = top;
  *out = m;
  return true;
}

bool tl_shared_layout_wavefronts_linear(const TlSharedLayout *smem,
                                        const TlLayout *reg, int elem_bits,
                                        int vec, int *wavefronts, TlErr *err) {
  if (smem->rank != reg->rank)
    return tl_err(err, "shared layout has rank %d, register layout %d",
                  smem->rank, reg->rank);
  for (int d = 0; d < reg->rank; d++)
    if (smem->shape[d] != reg->shape[d])
      return tl_err(err, "shapes differ in dimension %d (%lld vs %d)", d,
                    (long long)smem->shape[d], reg->shape[d]);
  int eb = log2_exact(elem_bits), vb = log2_exact(vec);
  if (eb < 3 || vb < 0 || elem_bits * vec > 128)
    return tl_err(err,
                  "%d elements of %d bits are not a 1..16-byte vector "
                  "of whole-byte, power-of-two elements",
                  vec, elem_bits);
  TlLinearLayout r, s, lanes, addr;
  if (!tl_layout_to_linear(reg, &r, err) ||
      !tl_shared_layout_to_linear(smem, &s, err))
    return false;
  if (r.thread_bits < 5)
    return tl_err(err, "layout has %lld threads, less than a warp",
                  (long long)tl_layout_num_threads(reg));
  if (r.local_bits < vb)
    return tl_err(err, "layout has fewer than %d local elements", vec);
  /* The vector's elements must be consecutive offsets: local bit b < vb
   * must move the offset by exactly 2^b. */
  for (int b = 0; b < vb; b++)
    if (tl_linear_apply(&s, r.cols[b]) != (uint64_t)1 << b)
      return tl_err(err, "local elements of a vector are not contiguous in "
                         "shared memory");
  uint64_t lane_cols[5];
  for (int j = 0; j < 5; j++)
    lane_cols[j] = r.cols[r.local_bits + j];
  if (!tl_linear_make(&lanes, 5, r.num_out, lane_cols, err) ||
      !tl_linear_compose(&addr, &s, &lanes, err))
    return false;
  /* Element offsets to byte addresses: shift by log2(bytes per element). */
  for (int j = 0; j < 5; j++)
    addr.cols[j] <<= eb - 3;
  addr.num_out += eb - 3;
  return tl_linear_wavefronts(&addr, elem_bits * vec / 8, wavefronts, err);
}
