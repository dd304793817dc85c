/* Shared helpers of lib/layout: the wide working form of a register layout
 * that every operation builds before canonicalising into a TlLayout. */
#ifndef TL_LAYOUT_INTERNAL_H
#define TL_LAYOUT_INTERNAL_H

#include "tl/layout.h"

/* Room for the uncanonicalised intermediate results: a product concatenates
 * two layouts (2 * 32 modes) and division or reshape may split up to one
 * mode per dimension and list boundary on top of that. */
#define TL_RAW_MAX_MODES 96

/* A register layout before canonicalisation: same meaning as TlLayout, with
 * 64-bit sizes, more room, and no canonical-form guarantees. Modes are kept
 * ordered by dimension, most significant first. Spatial entries >= 0 are
 * modes, < 0 replication factors. */
typedef struct TlRawLayout {
  int rank;
  int num_modes;
  int num_spatial;
  int num_local;
  int64_t shape[TL_LAYOUT_MAX_RANK];
  int64_t mode_shape[TL_RAW_MAX_MODES];
  int mode_dim[TL_RAW_MAX_MODES];
  int64_t spatial[TL_RAW_MAX_MODES];
  int64_t local[TL_RAW_MAX_MODES];
} TlRawLayout;

void tl_raw_from_layout(TlRawLayout *r, const TlLayout *l);
/* Canonicalises r and stores it in *out; fails when a limit is exceeded or
 * r is invalid (the message names the problem). */
bool tl_raw_to_layout(TlRawLayout *r, TlLayout *out, TlErr *err);
/* Checks the representation invariants (each mode listed once, products of
 * modes equal the shape, sizes within TL_LAYOUT_MAX_SIZE). */
bool tl_raw_validate(const TlRawLayout *r, TlErr *err);
void tl_raw_canonicalize(TlRawLayout *r);
/* Splits mode m (size s) into modes m (size s / lo) and m + 1 (size lo),
 * adjacent in its list; lo divides s. Fails when out of room. */
bool tl_raw_split_mode(TlRawLayout *r, int m, int64_t lo, TlErr *err);
/* Splits the replication entry at spatial position pos into -(c / lo), -lo. */
bool tl_raw_split_rep(TlRawLayout *r, int pos, int64_t lo, TlErr *err);
/* Removes mode m (which must not be listed any more) and renumbers. */
void tl_raw_delete_mode(TlRawLayout *r, int m);

/* Product of n sizes with overflow and limit check; false when the product
 * exceeds TL_LAYOUT_MAX_SIZE. */
bool tl_size_product(const int64_t *v, int n, int64_t *out);
int64_t tl_raw_entry_size(const TlRawLayout *r, int64_t entry);

/* Refines h so that for every dimension d the trailing modes multiply to
 * inner_shape[d], and the spatial and local lists end in entries that
 * multiply to inner_threads and inner_local; then separates h into outer and
 * inner parts with h = outer.inner (unchecked products of parts). Fails
 * when a boundary falls inside a mode that cannot be split there or a mode
 * is on different sides of its dimension and list boundaries. */
bool tl_raw_split_product(const TlLayout *h, const int64_t *inner_shape,
                          int64_t inner_threads, int64_t inner_local,
                          TlLayout *outer, TlLayout *inner, TlErr *err);

#endif
