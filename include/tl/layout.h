/* The layout algebra: register layouts (Tilus §4-5), their GF(2) linear
 * view, shared-memory layouts with XOR swizzles, hardware atoms (mma
 * fragments, ldmatrix), a text syntax and a grid viewer.
 *
 * This library is pure: no IR, no context, no global state. Every layout is
 * a VALUE (a plain struct of fixed-capacity arrays, no heap pointers): copy it
 * with `=`, compare it with tl_layout_equal, hash it with tl_layout_hash.
 *
 * Conventions for every function below:
 *  - Pointers are non-NULL unless a parameter says "may be NULL".
 *  - A function that can fail returns bool: true on success; on failure it
 *    returns false, leaves *out unspecified (but valid to overwrite) and
 *    writes a lowercase message without a trailing period into *err when
 *    err is non-NULL. User input never aborts; only broken invariants
 *    inside the library do (tl_assert).
 *  - Outputs may alias inputs (`tl_layout_product(&a, &a, &b, err)` is fine).
 *  - Nothing here allocates except the text functions, which append to a
 *    caller-owned TlStr (free it with tl_str_free). Returned strings
 *    (atom names) are static.
 *  - Every TlLayout and TlSharedLayout a function returns is canonical
 *    (see below), so equal layouts are equal bytewise.
 *
 * See docs/layouts.md for the algebra, the laws, the text syntax and the
 * atoms. */
#ifndef TL_LAYOUT_H
#define TL_LAYOUT_H

#include "tl/support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Register layouts
 * ------------------------------------------------------------------------ */

/* Capacity. Every size (each dimension, the number of elements, of threads
 * including replication, and of local elements) is at most
 * TL_LAYOUT_MAX_SIZE = 2^31 - 1. Eight dimensions cover every tile TL uses
 * (the widest are 4-D attention tiles). 32 modes never bind: a canonical
 * layout has no size-1 mode, so 32 modes would need 2^32 elements (and 32
 * spatial entries 2^32 threads). sizeof(TlLayout) is 560 bytes, with no
 * padding, so bytewise comparison is structural comparison. */
#define TL_LAYOUT_MAX_RANK 8
#define TL_LAYOUT_MAX_MODES 32
#define TL_LAYOUT_MAX_SIZE 2147483647

/* A register layout in Tilus's unified representation (paper §5):
 *  - shape[d] for d < rank: the tile's shape; rank >= 1.
 *  - mode_shape[m] for m < num_modes: each dimension splits into modes
 *    (mixed radix, most significant first); modes are numbered dimension by
 *    dimension, and mode_dim[m] names the dimension mode m belongs to (it is
 *    derivable from the shapes; kept so readers need not re-derive it).
 *  - spatial_modes[k] for k < num_spatial: the thread index is the
 *    row-major ravel of these entries (first most significant); an entry
 *    m >= 0 is a mode, an entry -c (c >= 2) is a replication factor: a
 *    thread digit of size c that selects nothing, so the c threads that
 *    differ only in it hold the same data.
 *  - local_modes[k] for k < num_local: the local index is the row-major
 *    ravel of these modes.
 * Each mode appears exactly once in spatial_modes or local_modes.
 *
 * Canonical form (every TlLayout this library returns is canonical): no
 * size-1 mode, no factor -1, no two adjacent replication entries, no two
 * modes m, m+1 of one dimension that appear as adjacent entries m, m+1 of
 * one list (they are merged into one mode), and every unused array slot is
 * zero. Two canonical layouts are equal iff their mapping tables
 * (thread, local) -> index are equal. */
typedef struct TlLayout {
  int32_t rank;
  int32_t num_modes;
  int32_t num_spatial;
  int32_t num_local;
  int32_t shape[TL_LAYOUT_MAX_RANK];
  int32_t mode_shape[TL_LAYOUT_MAX_MODES];
  int32_t mode_dim[TL_LAYOUT_MAX_MODES];
  int32_t spatial_modes[TL_LAYOUT_MAX_MODES];
  int32_t local_modes[TL_LAYOUT_MAX_MODES];
} TlLayout;

/* Builds a layout from the raw representation and canonicalises it. Modes
 * are assigned to dimensions in order: dimension d takes modes until their
 * product reaches shape[d]; trailing size-1 modes go to the last dimension.
 * Fails on rank out of [1, TL_LAYOUT_MAX_RANK], non-positive sizes, mode
 * products that do not match the shape, a mode listed zero or two times, a
 * negative local entry, or a size above TL_LAYOUT_MAX_SIZE. */
bool tl_layout_make(TlLayout *out, int rank, const int64_t *shape,
                    int num_modes, const int64_t *mode_shape, int num_spatial,
                    const int64_t *spatial_modes, int num_local,
                    const int64_t *local_modes, TlErr *err);

/* Primitive layouts of the paper (§4.1), for any rank in [1, MAX_RANK];
 * dims[0..rank) are the sizes (>= 1):
 *  local(n...)          one thread holds everything, row-major local index
 *  spatial(n...)        one element per thread, row-major thread index
 *  column_local(n...)   as local, column-major local index
 *  column_spatial(n...) as spatial, column-major thread index
 *  replicated(rank, c)  shape all ones, c threads hold the one element
 * Fail on a bad rank or a size outside [1, TL_LAYOUT_MAX_SIZE] (also for
 * the product of the sizes). */
bool tl_layout_local(TlLayout *out, int rank, const int64_t *dims, TlErr *err);
bool tl_layout_spatial(TlLayout *out, int rank, const int64_t *dims,
                       TlErr *err);
bool tl_layout_column_local(TlLayout *out, int rank, const int64_t *dims,
                            TlErr *err);
bool tl_layout_column_spatial(TlLayout *out, int rank, const int64_t *dims,
                              TlErr *err);
bool tl_layout_replicated(TlLayout *out, int rank, int64_t count, TlErr *err);

/* Kronecker product out = f.g (paper §4.2):
 *   out(t, i) = f(t / T_g, i / N_g) * S_g + g(t % T_g, i % N_g)
 * Associative, not commutative. The ranks must match: a rank mismatch is
 * an error (use tl_layout_unsqueeze to line ranks up explicitly; silently
 * padding would hide mistakes such as chaining a 1-D and a 2-D primitive).
 * Also fails when a size would exceed TL_LAYOUT_MAX_SIZE or the canonical
 * result needs more than TL_LAYOUT_MAX_MODES modes. */
bool tl_layout_product(TlLayout *out, const TlLayout *f, const TlLayout *g,
                       TlErr *err);

/* Right division: finds out with out.g == h (out = h / g). Left division:
 * finds out with g.out == h. The quotient is unique when it exists; fails
 * (saying why) when h is not such a product. */
bool tl_layout_divide(TlLayout *out, const TlLayout *h, const TlLayout *g,
                      TlErr *err);
bool tl_layout_divide_left(TlLayout *out, const TlLayout *g, const TlLayout *h,
                           TlErr *err);

/* Canonicalises an arbitrary struct in place (for layouts assembled by hand
 * or read from untrusted bytes); fails, leaving *l unspecified, when *l is
 * not a valid layout. Layouts from this library are already canonical. */
bool tl_layout_canonicalize(TlLayout *l, TlErr *err);

/* Structural equality of canonical layouts (bytewise, so equal mapping
 * tables) and a hash consistent with it. */
bool tl_layout_equal(const TlLayout *a, const TlLayout *b);
uint64_t tl_layout_hash(const TlLayout *l);

/* Queries. num_threads counts replicated threads; replication is the product
 * of the replication factors (1 when none); num_elements = prod(shape). */
int64_t tl_layout_num_threads(const TlLayout *l);
int64_t tl_layout_local_size(const TlLayout *l);
int64_t tl_layout_num_elements(const TlLayout *l);
int64_t tl_layout_replication(const TlLayout *l);

/* (thread, local) -> logical index: writes index[0..rank). Fails when
 * thread or local is out of range. */
bool tl_layout_map(const TlLayout *l, int64_t thread, int64_t local,
                   int64_t *index, TlErr *err);

/* Logical index -> (threads, local): writes the local index to *local, the
 * number of threads holding the element (= tl_layout_replication) to
 * *count, and the min(cap, count) smallest of those thread indices in
 * ascending order to threads[] (may be NULL when cap == 0). Fails when the
 * index is out of range. */
bool tl_layout_locate(const TlLayout *l, const int64_t *index, int64_t *local,
                      int64_t *threads, int64_t cap, int64_t *count,
                      TlErr *err);

/* How `to` holds `from`'s elements (same shape): -1 when some thread does
 * not hold the same elements under both (or either is replicated, or the
 * sizes differ); 0 when every thread does, in orders that differ between
 * threads; 1 when the order is the same in every thread, and then perm[i]
 * (tl_layout_local_size entries) is from's local index of to's local
 * element i. */
int tl_layout_reorder(const TlLayout *from, const TlLayout *to, int64_t *perm);

/* Shape operations. All keep the mapping (thread, local) -> element and
 * change only how elements are indexed, except reduce.
 *  reshape:   row-major re-indexing to shape[0..rank); fails when the
 *             element counts differ or a mode straddles a new dimension
 *             boundary in a way no mixed radix can express.
 *  flatten:   merges dimensions first..last (inclusive) into one.
 *  permute:   new dimension k is old dimension perm[k] (perm is a
 *             permutation of 0..rank-1).
 *  squeeze:   removes dimension dim, which must have size 1 (rank > 1).
 *  unsqueeze: inserts a size-1 dimension at position dim (0..rank).
 *  reduce:    reduces dimension dim to size 1: its spatial modes become
 *             replication (the threads that held different elements now
 *             hold the same reduced value), its local modes disappear.
 *  concat:    the outer product of layouts over disjoint dimensions:
 *             shape a.shape ++ b.shape, out(t, i) = (a(t / T_b, i / N_b),
 *             b(t % T_b, i % N_b)). */
bool tl_layout_reshape(TlLayout *out, const TlLayout *l, int rank,
                       const int64_t *shape, TlErr *err);
bool tl_layout_flatten(TlLayout *out, const TlLayout *l, int first, int last,
                       TlErr *err);
bool tl_layout_permute(TlLayout *out, const TlLayout *l, const int *perm,
                       TlErr *err);
bool tl_layout_squeeze(TlLayout *out, const TlLayout *l, int dim, TlErr *err);
bool tl_layout_unsqueeze(TlLayout *out, const TlLayout *l, int dim, TlErr *err);
bool tl_layout_reduce(TlLayout *out, const TlLayout *l, int dim, TlErr *err);
bool tl_layout_concat(TlLayout *out, const TlLayout *a, const TlLayout *b,
                      TlErr *err);

/* Slice: the sub-tile [offsets[d], offsets[d] + sizes[d]) of every
 * dimension (same rank), with no data movement: every thread keeps exactly
 * the elements of the sub-tile it already holds. Per dimension d, sizes[d]
 * must be the product of trailing modes of d (modes most significant
 * first; one mode may split where the size falls inside it), offsets[d] a
 * multiple of sizes[d] inside the dimension, and every leading (sliced-off)
 * mode of d local. out is l with those modes removed; it depends on the
 * sizes only. local_map (may be NULL) receives tl_layout_local_size(out)
 * entries: local_map[j] is the operand's local index of the element that a
 * thread holds at the result's local index j (at these offsets), so
 *   map(out, t, j) + offsets == map(l, t, local_map[j]).
 * Fails, naming the dimension and why, otherwise. */
bool tl_layout_slice(TlLayout *out, const TlLayout *l, const int64_t *offsets,
                     const int64_t *sizes, int64_t *local_map, TlErr *err);

/* Text syntax (EBNF in docs/layouts.md), as the paper writes layouts:
 *   local(2, 1).spatial(8, 4).local(1, 2)
 *   column_local(2, 2).spatial(8, 4).local(1, 2)
 *   spatial(8, 1).replicated(4)     (replicated takes the chain's rank)
 *   layout<shape=[4], modes=[2, 2], spatial=[1, 0], local=[]>
 * tl_layout_parse parses all of text[0..len) (surrounding whitespace
 * allowed). tl_layout_parse_prefix parses the longest layout expression at
 * the start of text and stores in *end the offset just past it, so that an
 * enclosing parser (the IR's #tl.layout<...>) can continue there. On
 * failure both write the 0-based byte offset of the error into *err_offset
 * (may be NULL) and the message into *err. */
bool tl_layout_parse(TlLayout *out, const char *text, size_t len, TlErr *err,
                     size_t *err_offset);
bool tl_layout_parse_prefix(TlLayout *out, const char *text, size_t len,
                            size_t *end, TlErr *err, size_t *err_offset);

/* Appends the canonical text of l to *out: a product of primitives when l is
 * one (greedy from the outermost factor, so the paper's layouts print as the
 * paper writes them), otherwise the explicit layout<...> form. Parsing the
 * text gives back a layout equal to l, and printing that gives the same
 * text. tl_layout_print_explicit always prints the explicit form. */
void tl_layout_print(const TlLayout *l, TlStr *out);
void tl_layout_print_explicit(const TlLayout *l, TlStr *out);

/* Appends the thread:local grid of l (as the paper's Figures 3-5): rank 1
 * draws one row, rank 2 a matrix, higher ranks fold the leading dimensions
 * into rows. A replicated cell shows its thread set: {0,8,16,24}:0 for up
 * to four threads, {0,8,..,248}:0 for an arithmetic progression, otherwise
 * the first two, the last and the count, {0,1,..,57}#16:0. */
void tl_layout_render(const TlLayout *l, TlStr *out);

/* ------------------------------------------------------------------------
 * Hardware atoms
 * ------------------------------------------------------------------------ */

/* Named warp-level register layouts of PTX instructions, each over one warp
 * (32 threads), element = one operand element (.b1 bit for b1 types):
 *   mma_m16n8k16_f16_{a,b,c}  (also bf16; c is the f32 accumulator)
 *   mma_m16n8k8_f16_{a,b,c}   mma_m16n8k32_s8_{a,b,c} (also u8, e4m3, e5m2)
 *   mma_m16n8k256_b1_{a,b,c}  mma_m8n8k128_b1_{a,b,c}
 *   ldmatrix_x{1,2,4}[_trans]  (b16 elements; the N 8x8 matrices are
 *                               stacked along dimension 0, matrix j in
 *                               register j)
 * The index order of the list is stable. */
int tl_layout_atom_count(void);
/* Name and one-line description of atom i (0 <= i < count), or NULL. The
 * strings are static. */
const char *tl_layout_atom_name(int i);
const char *tl_layout_atom_summary(int i);
/* Looks an atom up by name; fails for an unknown name. */
bool tl_layout_atom(TlLayout *out, const char *name, TlErr *err);

/* out = quotient with l == quotient.atom, i.e. l is a tiling of the atom:
 * the atom's 32 threads are the low thread bits and its registers the low
 * local bits of l, and the quotient says how warps (its spatial part) and
 * repeated instructions (its local part) cover the tile. Decided by
 * division, not by enumeration. quotient may be NULL. Fails, saying why,
 * when l is not such a tiling. */
bool tl_layout_match_atom(const TlLayout *l, const TlLayout *atom,
                          TlLayout *quotient, TlErr *err);

/* Whether ldmatrix.x{num} (num in 1, 2, 4), optionally .trans, can produce
 * register layout l for elements of elem_bits bits (a divisor of 32;
 * .trans needs 16): l must be a tiling of the one-matrix fragment (each
 * thread holds 32 bits of one row, or for .trans two b16 of one column) and
 * the quotient must hold a multiple of num matrices per thread. quotient
 * may be NULL. */
bool tl_layout_ldmatrix_compatible(const TlLayout *l, int elem_bits, bool trans,
                                   int num, TlLayout *quotient, TlErr *err);

/* ------------------------------------------------------------------------
 * GF(2) linear view (as Triton's linear layouts)
 * ------------------------------------------------------------------------ */

#define TL_LINEAR_MAX_BITS 64

/* A bit matrix over GF(2) from num_in input bits to num_out output bits:
 * cols[j] is the image of input bit j (bit k of cols[j] = row k); y = XOR of
 * cols[j] over set bits j of x. For a register layout the input is the
 * local index in bits [0, local_bits) and the thread index in bits
 * [local_bits, local_bits + thread_bits); the output is the row-major flat
 * logical index, whose bits split by dimension as out_dim_bits[] (last
 * dimension lowest). Unused cols are zero. */
typedef struct TlLinearLayout {
  int32_t num_in;
  int32_t num_out;
  int32_t local_bits;
  int32_t thread_bits;
  int32_t rank;
  int32_t out_dim_bits[TL_LAYOUT_MAX_RANK];
  int32_t reserved;
  uint64_t cols[TL_LINEAR_MAX_BITS];
} TlLinearLayout;

/* Layout -> bit matrix; fails unless every mode and replication factor is
 * a power of two. Replicated thread bits map to zero. */
bool tl_layout_to_linear(const TlLayout *l, TlLinearLayout *out, TlErr *err);
/* Bit matrix (with the layout partition of its bits) -> layout; fails
 * unless every local column is a distinct unit vector, every thread column
 * is zero (replication) or a distinct unit vector, and every output bit is
 * hit: exactly the matrices that a Tilus layout can express. */
bool tl_linear_to_layout(const TlLinearLayout *m, TlLayout *out, TlErr *err);
/* A general matrix with no layout partition (local_bits = num_in,
 * thread_bits = 0, rank 1); fails when a count exceeds 64. */
bool tl_linear_make(TlLinearLayout *out, int num_in, int num_out,
                    const uint64_t *cols, TlErr *err);
uint64_t tl_linear_apply(const TlLinearLayout *m, uint64_t x);
/* out = outer o inner (apply inner, then outer); the input partition comes
 * from inner, the output partition from outer. Fails unless
 * inner->num_out == outer->num_in. */
bool tl_linear_compose(TlLinearLayout *out, const TlLinearLayout *outer,
                       const TlLinearLayout *inner, TlErr *err);
/* Inverse of a square invertible matrix; fails (naming the rank) when the
 * matrix is not square or singular. The output partition becomes
 * local_bits = num_out, rank 1. */
bool tl_linear_invert(TlLinearLayout *out, const TlLinearLayout *m, TlErr *err);
int tl_linear_rank(const TlLinearLayout *m);
bool tl_linear_equal(const TlLinearLayout *a, const TlLinearLayout *b);

/* Wavefronts of one warp-wide shared-memory access whose byte address is a
 * linear function of the lane: lane_addr maps lane bits (num_in <= 5;
 * fewer means fewer lanes) to byte address bits, lane 0 at an aligned base.
 * Same hardware model as tl_smem_wavefronts, computed by ranks instead of
 * by enumeration: a phase costs 2^(rank W - rank PW) wavefronts, W the span
 * of the phase's word vectors and P the projection onto the bank bits.
 * Fails on a bad width or a lane column not aligned to the width. */
bool tl_linear_wavefronts(const TlLinearLayout *lane_addr, int width,
                          int *wavefronts, TlErr *err);

/* ------------------------------------------------------------------------
 * Shared-memory layouts
 * ------------------------------------------------------------------------ */

/* A shared-memory layout maps a logical index to an element offset:
 *   lin(index) = base + sum over modes m of digit_m * mode_stride[m]
 *   offset     = swizzle(lin)
 * where each dimension splits into modes (mixed radix, most significant
 * first, modes numbered dimension by dimension) and the swizzle is CuTe's
 * Swizzle<B, M, S> on element offsets:
 *   swizzle(x) = x ^ ((x & (((1 << B) - 1) << (M + S))) >> S)
 * i.e. the B bits at [M+S, M+S+B) are XORed into the bits [M, M+B). B == 0
 * means no swizzle; otherwise S >= B (the two bit ranges must not overlap)
 * and M + S + B <= 40. Canonical: no size-1 modes, adjacent modes of one
 * dimension merged when their strides chain (hi stride == lo stride * lo
 * size), unused slots zero. */
typedef struct TlSharedLayout {
  int32_t rank;
  int32_t num_modes;
  int32_t swizzle_bits;  /* B */
  int32_t swizzle_base;  /* M */
  int32_t swizzle_shift; /* S */
  int32_t reserved;
  int64_t base;
  int64_t shape[TL_LAYOUT_MAX_RANK];
  int64_t mode_shape[TL_LAYOUT_MAX_MODES];
  int64_t mode_stride[TL_LAYOUT_MAX_MODES];
  int32_t mode_dim[TL_LAYOUT_MAX_MODES];
} TlSharedLayout;

/* Row-major (last dimension contiguous) and column-major (first dimension
 * contiguous) compact layouts; fail on a bad rank or size. */
bool tl_shared_layout_row_major(TlSharedLayout *out, int rank,
                                const int64_t *shape, TlErr *err);
bool tl_shared_layout_column_major(TlSharedLayout *out, int rank,
                                   const int64_t *shape, TlErr *err);
/* Explicit modes and strides (strides >= 0); modes are assigned to
 * dimensions as in tl_layout_make. */
bool tl_shared_layout_make(TlSharedLayout *out, int rank, const int64_t *shape,
                           int num_modes, const int64_t *mode_shape,
                           const int64_t *mode_stride, TlErr *err);
/* Adds Swizzle<B, M, S> to an unswizzled layout (B == 0 removes nothing and
 * is allowed). */
bool tl_shared_layout_swizzle(TlSharedLayout *out, const TlSharedLayout *in,
                              int bits, int base, int shift, TlErr *err);
/* The ldmatrix-friendly layout of a [rows, row_bytes * 8 / elem_bits] tile
 * stored row-major with rows of row_bytes bytes (a power of two >= 16):
 * Swizzle<B, M, S> with M = log2(128 / elem_bits) (16-byte chunks),
 * B = min(3, log2(row_bytes / 16)) and S = max(3, log2(row_bytes / 16)),
 * which XORs the row's position among the eight 128-byte lines into the
 * chunk index so that the eight rows one ldmatrix phase reads fall in eight
 * different 16-byte bank groups. elem_bits divides 128. */
bool tl_shared_layout_ldmatrix(TlSharedLayout *out, int64_t rows,
                               int64_t row_bytes, int elem_bits, TlErr *err);
/* Element offset of index[0..rank); fails when out of range. */
bool tl_shared_layout_offset(const TlSharedLayout *l, const int64_t *index,
                             int64_t *offset, TlErr *err);
/* A warpgroup mma (wgmma) operand slice in shared memory, as its matrix
 * descriptor gives it (lib/layout/wgmma.c): swizzle 0 (8 x 16-byte core
 * matrices), 32, 64 or 128 (the swizzle's row bytes); K- or MN-major;
 * the leading and stride byte offsets; and `start`, the element offset
 * (before the swizzle) of the slice's first element in the layout. */
typedef struct TlWgmmaDesc {
  int swizzle;
  bool mn_major;
  int64_t lbo, sbo;
  int64_t start;
} TlWgmmaDesc;
/* The byte offset from the slice's start, before the swizzle, at which the
 * hardware reads element (mn, k) of an operand of elem_bytes elements. */
int64_t tl_wgmma_offset(const TlWgmmaDesc *d, unsigned elem_bytes, int64_t mn,
                        int64_t k);
/* Whether the mns x ks slice at (mn0, k0) of the 2-D shared layout l, whose
 * dimension mn_dim is MN and the other K, is a canonical wgmma operand:
 * l's swizzle is the hardware's for its element size (or none) and every
 * element lies where the descriptor *d puts it. MN-major only when
 * allow_mn_major (16-bit types). */
bool tl_shared_layout_wgmma(const TlSharedLayout *l, unsigned elem_bits,
                            int mn_dim, int64_t mn0, int64_t mns, int64_t k0,
                            int64_t ks, bool allow_mn_major, TlWgmmaDesc *d,
                            TlErr *err);
/* One past the largest offset, rounded up to a multiple of 2^(M+S+B) when
 * swizzled (the swizzle permutes within such blocks). */
int64_t tl_shared_layout_cosize(const TlSharedLayout *l);
/* Tiling: out has shape outer.shape * inner.shape and
 *   out(idx) = outer_lin(idx / S_inner) * cosize(inner) + inner(idx % S_inner)
 * so the inner layout is the tile and the outer one places tiles. The
 * outer layout must be unswizzled with base 0; an inner swizzle is kept,
 * which is exact because cosize(inner) is a multiple of the swizzle block.
 * Ranks must match. */
bool tl_shared_layout_compose(TlSharedLayout *out, const TlSharedLayout *outer,
                              const TlSharedLayout *inner, TlErr *err);
/* The sub-tile [offsets[d], offsets[d] + sizes[d]) of every dimension; each
 * offset must be a multiple of its size and the size must be expressible
 * as trailing modes of the dimension. */
bool tl_shared_layout_slice(TlSharedLayout *out, const TlSharedLayout *l,
                            const int64_t *offsets, const int64_t *sizes,
                            TlErr *err);
/* The same sub-tile as a view that has one layout at every offset: out is
 * the slice at offset 0 (l's base and swizzle kept, the sliced-off digits
 * 0) and *shift (may be NULL) the element offset that the sub-tile at
 * `offsets` (NULL: all 0) adds, sum of digit * stride over the sliced-off
 * modes, so that for every index i of out
 *   offset(l, i + offsets) == offset(out, i) + *shift.
 * Fails as tl_shared_layout_slice does, and when a sliced-off mode's stride
 * is not a multiple of the swizzle block 2^(M+S+B) (any stride when
 * unswizzled), where the sub-tile's offsets would depend on its position. */
bool tl_shared_layout_slice_view(TlSharedLayout *out, int64_t *shift,
                                 const TlSharedLayout *l,
                                 const int64_t *offsets, const int64_t *sizes,
                                 TlErr *err);
bool tl_shared_layout_permute(TlSharedLayout *out, const TlSharedLayout *l,
                              const int *perm, TlErr *err);
bool tl_shared_layout_reshape(TlSharedLayout *out, const TlSharedLayout *l,
                              int rank, const int64_t *shape, TlErr *err);
bool tl_shared_layout_equal(const TlSharedLayout *a, const TlSharedLayout *b);
uint64_t tl_shared_layout_hash(const TlSharedLayout *l);
/* Text form: shared<shape=[..], modes=[..], strides=[..], base=N,
 * swizzle=<B, M, S>>, base and swizzle omitted when zero. Print appends to
 * *out; parse reads all of text[0..len) and, on failure, writes the byte
 * offset of the error to *err_offset (may be NULL). Parse of print is the
 * identity. */
void tl_shared_layout_print(const TlSharedLayout *l, TlStr *out);
bool tl_shared_layout_parse(TlSharedLayout *out, const char *text, size_t len,
                            TlErr *err, size_t *err_offset);
/* Appends the grid of element offsets of l (rank 1: one row; higher ranks
 * fold the leading dimensions into numbered rows). */
void tl_shared_layout_render(const TlSharedLayout *l, TlStr *out);

/* Shared-memory wavefronts of one warp-wide instruction as the hardware
 * counts them: 32 banks of 4 bytes; accesses of width <= 4 bytes are served
 * for all lanes at once, 8-byte accesses per half warp, 16-byte accesses
 * (and ldmatrix, whose phases read eight 16-byte rows) per quarter warp.
 * Within one phase, lanes reading the same 4-byte word share it
 * (broadcast), and the phase needs as many wavefronts as the largest
 * number of distinct words falling in one bank. addrs[0..num_lanes) are the
 * byte addresses of lanes 0..num_lanes-1 (num_lanes <= 32; absent lanes are
 * inactive); width is 1, 2, 4, 8 or 16 and every address must be aligned
 * to it. Writes the total over phases to *wavefronts (0 when no lane). */
bool tl_smem_wavefronts(const int64_t *addrs, int num_lanes, int width,
                        int *wavefronts, TlErr *err);

/* Wavefronts of one vectorised access of a register tile with layout reg
 * to/from shared layout smem (same shape): warp `warp` accesses, in each
 * lane, the vec consecutive local elements starting at local index first
 * (vec * elem_bits / 8 bytes, 1..16, must be contiguous and aligned in
 * shared memory). Fails when the access is not one instruction (elements
 * not contiguous) or out of range. */
bool tl_shared_layout_wavefronts(const TlSharedLayout *smem,
                                 const TlLayout *reg, int elem_bits,
                                 int64_t warp, int64_t first, int vec,
                                 int *wavefronts, TlErr *err);

/* The GF(2) view of a shared layout: input bits are the flat row-major
 * index (as the output of tl_layout_to_linear), output bits the element
 * offset, swizzle included. Fails unless base is 0, every dimension and
 * mode size is a power of two, every stride is 0 or a power of two, and the
 * modes' offset bit ranges are disjoint (so that adding is XOR). */
bool tl_shared_layout_to_linear(const TlSharedLayout *l, TlLinearLayout *out,
                                TlErr *err);

/* tl_shared_layout_wavefronts for one warp, computed through the GF(2)
 * views of both layouts (every warp and every vec-aligned vector costs the
 * same, being a translate). Needs power-of-two layouts, at least 32
 * threads, elem_bits >= 8 and a power-of-two vec whose elements are
 * contiguous in shared memory; fails, saying which, otherwise. */
bool tl_shared_layout_wavefronts_linear(const TlSharedLayout *smem,
                                        const TlLayout *reg, int elem_bits,
                                        int vec, int *wavefronts, TlErr *err);

#ifdef __cplusplus
}
#endif
#endif
