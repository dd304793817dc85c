/* TMA tensor maps: the 128-byte descriptor simt.tma_load reads (a
 * !simt.tensormap kernel parameter), described here in one struct for
 * both places a kernel runs. On the GPU, tl_runtime_tensor_map
 * (tl/runtime.h) fills the 128 bytes with the driver's encoding
 * (cuTensorMapEncodeTiled); on the thread-level VM, tl_tensor_map_encode
 * fills them with TL's own, documented encoding, which the VM interprets.
 * docs/runtime.md ("Tensor maps") gives the encoding and the rules. */
#ifndef TL_TENSOR_MAP_H
#define TL_TENSOR_MAP_H

#include "tl/support.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TL_TENSOR_MAP_BYTES 128 /* the descriptor's size; 64-byte aligned */
#define TL_TENSOR_MAP_MAX_RANK 3

/* A tiled tensor map over a strided tensor in global memory. Dimension 0
 * is the innermost (contiguous) one, as in the driver's API and in
 * simt.tma_load's coordinates. */
typedef struct TlTensorMapDesc {
  uint64_t base;       /* the tensor's first byte: a device address on the
                          GPU, tl_simt_vm_buffer_address(...) on the VM;
                          16-byte aligned */
  unsigned rank;       /* 1 to TL_TENSOR_MAP_MAX_RANK */
  unsigned elem_bytes; /* 1, 2, 4 or 8 */
  uint64_t dims[TL_TENSOR_MAP_MAX_RANK];    /* elements, 1 to 2^32 */
  uint64_t strides[TL_TENSOR_MAP_MAX_RANK]; /* strides[i]: bytes between
                          consecutive indices of dimension i + 1 (rank - 1
                          of them), multiples of 16 below 2^40 */
  uint32_t box[TL_TENSOR_MAP_MAX_RANK];     /* the box, 1 to 256 elements a
                          dimension; box[0] * elem_bytes a multiple of 16 */
  uint32_t elem_strides[TL_TENSOR_MAP_MAX_RANK]; /* 1 to 8 (0 reads as 1);
                          elem_strides[0] must be 1 */
  unsigned swizzle;    /* 0 (none), 32, 64 or 128: the shared-memory
                          swizzle; box[0] * elem_bytes exactly this
                          when swizzled */
} TlTensorMapDesc;

/* Whether d satisfies the rules above (the driver's, for the tiled,
 * non-interleaved maps TL makes). false with the first broken rule in
 * err: "box dimension 0 is 300 elements; a box has 1 to 256". */
bool tl_tensor_map_check(const TlTensorMapDesc *d, TlErr *err);
/* Writes TL's encoding of d (checked first) to out[0..128). false with
 * err when d breaks a rule; out is then untouched. */
bool tl_tensor_map_encode(const TlTensorMapDesc *d, void *out, TlErr *err);
/* Reads TL's encoding back (and checks it). false with err for bytes that
 * are not one: "not a tensor map made for the VM (its first 4 bytes are
 * not 'TLtm')". */
bool tl_tensor_map_decode(const void *in, TlTensorMapDesc *d, TlErr *err);

#ifdef __cplusplus
}
#endif
#endif
