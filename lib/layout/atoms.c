/* Hardware atoms: the register layouts of PTX warp-level instructions as
 * named layouts, and the algebraic test of whether a tile layout is a
 * tiling of an atom.
 *
 * Each atom is written in the paper's syntax and parsed; test/unit checks
 * every one against the PTX ISA fragment formulas (row/col of element i of
 * lane l, with groupID = l >> 2 and threadID_in_group = l % 4) by full
 * enumeration, an independent reference. */
#include "layout_internal.h"

#include <string.h>

typedef struct Atom {
  const char *name;
  const char *summary;
  const char *expr;
} Atom;

#define MMA_C "local(2, 1).spatial(8, 4).local(1, 2)"

/* Columns: name, what it is, the layout. */
static const Atom atoms[] = {
    {"mma_m16n8k16_f16_a", "mma.m16n8k16 f16/bf16 A, 16x16, a0..a7",
     "column_local(2, 2).spatial(8, 4).local(1, 2)"},
    {"mma_m16n8k16_f16_b", "mma.m16n8k16 f16/bf16 B, 16x8 (k x n), b0..b3",
     "local(2, 1).column_spatial(4, 8).local(2, 1)"},
    {"mma_m16n8k16_f16_c", "mma.m16n8k16 f16/f32 C/D, 16x8, c0..c3", MMA_C},
    {"mma_m16n8k16_bf16_a", "mma.m16n8k16 bf16 A (same as f16)",
     "column_local(2, 2).spatial(8, 4).local(1, 2)"},
    {"mma_m16n8k16_bf16_b", "mma.m16n8k16 bf16 B (same as f16)",
     "local(2, 1).column_spatial(4, 8).local(2, 1)"},
    {"mma_m16n8k16_bf16_c", "mma.m16n8k16 bf16 C/D (same as f16)", MMA_C},
    {"mma_m16n8k8_f16_a", "mma.m16n8k8 f16/bf16 A, 16x8, a0..a3 (Figure 3)",
     "local(2, 1).spatial(8, 4).local(1, 2)"},
    {"mma_m16n8k8_f16_b", "mma.m16n8k8 f16/bf16 B, 8x8 (k x n), b0..b1",
     "column_spatial(4, 8).local(2, 1)"},
    {"mma_m16n8k8_f16_c", "mma.m16n8k8 f16/f32 C/D, 16x8, c0..c3", MMA_C},
    {"mma_m16n8k32_s8_a", "mma.m16n8k32 s8/u8/e4m3/e5m2 A, 16x32, a0..a15",
     "column_local(2, 2).spatial(8, 4).local(1, 4)"},
    {"mma_m16n8k32_s8_b", "mma.m16n8k32 s8/u8/e4m3/e5m2 B, 32x8 (k x n), b0..b7",
     "local(2, 1).column_spatial(4, 8).local(4, 1)"},
    {"mma_m16n8k32_s8_c", "mma.m16n8k32 s32/f32 C/D, 16x8, c0..c3", MMA_C},
    {"mma_m16n8k256_b1_a", "mma.m16n8k256 b1 A, 16x256 bits, a0..a127",
     "column_local(2, 2).spatial(8, 4).local(1, 32)"},
    {"mma_m16n8k256_b1_b", "mma.m16n8k256 b1 B, 256x8 bits, b0..b63",
     "local(2, 1).column_spatial(4, 8).local(32, 1)"},
    {"mma_m16n8k256_b1_c", "mma.m16n8k256 s32 C/D, 16x8, c0..c3", MMA_C},
    {"mma_m8n8k128_b1_a", "mma.m8n8k128 b1 A, 8x128 bits, a0..a31",
     "spatial(8, 4).local(1, 32)"},
    {"mma_m8n8k128_b1_b", "mma.m8n8k128 b1 B, 128x8 bits, b0..b31",
     "column_spatial(4, 8).local(32, 1)"},
    {"mma_m8n8k128_b1_c", "mma.m8n8k128 s32 C/D, 8x8, c0..c1",
     "spatial(8, 4).local(1, 2)"},
    {"ldmatrix_x1", "ldmatrix.m8n8.x1.b16, one 8x8 matrix",
     "spatial(8, 4).local(1, 2)"},
    {"ldmatrix_x2", "ldmatrix.m8n8.x2.b16, matrices stacked: 16x8",
     "local(2, 1).spatial(8, 4).local(1, 2)"},
    {"ldmatrix_x4", "ldmatrix.m8n8.x4.b16, matrices stacked: 32x8",
     "local(4, 1).spatial(8, 4).local(1, 2)"},
    {"ldmatrix_x1_trans", "ldmatrix.m8n8.x1.trans.b16, one 8x8 matrix",
     "column_spatial(4, 8).local(2, 1)"},
    {"ldmatrix_x2_trans", "ldmatrix.m8n8.x2.trans.b16, stacked: 16x8",
     "local(2, 1).column_spatial(4, 8).local(2, 1)"},
    {"ldmatrix_x4_trans", "ldmatrix.m8n8.x4.trans.b16, stacked: 32x8",
     "local(4, 1).column_spatial(4, 8).local(2, 1)"},
};

#define NUM_ATOMS ((int)(sizeof atoms / sizeof atoms[0]))

int tl_layout_atom_count(void) { return NUM_ATOMS; }

const char *tl_layout_atom_name(int i) {
  return i >= 0 && i < NUM_ATOMS ? atoms[i].name : NULL;
}

const char *tl_layout_atom_summary(int i) {
  return i >= 0 && i < NUM_ATOMS ? atoms[i].summary : NULL;
}

bool tl_layout_atom(TlLayout *out, const char *name, TlErr *err) {
  for (int i = 0; i < NUM_ATOMS; i++)
    if (strcmp(atoms[i].name, name) == 0) {
      bool ok = tl_layout_parse(out, atoms[i].expr, strlen(atoms[i].expr), NULL,
                                NULL);
      tl_assert(ok);
      return true;
    }
  return tl_err(err, "unknown atom '%.64s' (tl-layout --list-atoms lists them)",
                name);
}

bool tl_layout_match_atom(const TlLayout *l, const TlLayout *atom,
                          TlLayout *quotient, TlErr *err) {
  if (l->rank < atom->rank)
    return tl_err(err, "a rank-%d layout cannot tile a rank-%d atom", l->rank,
                  atom->rank);
  /* Extra leading dimensions (batches of tiles) are size-1 dimensions of
   * the atom. */
  TlLayout a = *atom;
  while (a.rank < l->rank)
    if (!tl_layout_unsqueeze(&a, &a, 0, err))
      return false;
  TlLayout q;
  TlErr why;
  if (!tl_layout_divide(&q, l, &a, &why))
    return tl_err(err, "layout is not a tiling of the atom: %s", why.msg);
  if (quotient)
    *quotient = q;
  return true;
}

bool tl_layout_ldmatrix_compatible(const TlLayout *l, int elem_bits, bool trans,
                                   int num, TlLayout *quotient, TlErr *err) {
  if (num != 1 && num != 2 && num != 4)
    return tl_err(err, "ldmatrix loads 1, 2 or 4 matrices, not %d", num);
  if (elem_bits < 1 || elem_bits > 32 || 32 % elem_bits != 0)
    return tl_err(err, "element width %d does not divide 32 bits", elem_bits);
  if (trans && elem_bits != 16)
    return tl_err(err, "ldmatrix .trans moves 16-bit elements, not %d-bit",
                  elem_bits);
  /* One 8x8 matrix of b16 is 8 rows of 16 bytes: each lane receives 32 bits
   * of row lane / 4, so for w-bit elements 32 / w consecutive ones. */
  TlLayout atom;
  int64_t dims[2] = {1, 32 / elem_bits};
  if (trans) {
    int64_t cs[2] = {4, 8}, loc[2] = {2, 1};
    TlLayout a, b;
    if (!tl_layout_column_spatial(&a, 2, cs, err) ||
        !tl_layout_local(&b, 2, loc, err) ||
        !tl_layout_product(&atom, &a, &b, err))
      return false;
  } else {
    int64_t sp[2] = {8, 4};
    TlLayout a, b;
    if (!tl_layout_spatial(&a, 2, sp, err) ||
        !tl_layout_local(&b, 2, dims, err) ||
        !tl_layout_product(&atom, &a, &b, err))
      return false;
  }
  TlLayout q;
  if (!tl_layout_match_atom(l, &atom, &q, err))
    return false;
  if (tl_layout_local_size(&q) % num != 0)
    return tl_err(err,
                  "each thread holds %lld matrices, not a multiple of the %d "
                  "one ldmatrix.x%d loads",
                  (long long)tl_layout_local_size(&q), num, num);
  if (quotient)
    *quotient = q;
  return true;
}
