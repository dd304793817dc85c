/* A reader of SASS, the GPU's machine code, as `cuobjdump -sass` and
 * `nvdisasm` print it: it finds a function's hot loop and counts its
 * instructions by opcode and by class, so that a kernel's instruction mix
 * per iteration can be read off its cubin (tl-run --bench prints it).
 *
 * Pure text in, numbers out: no driver, no files, no processes. The text
 * need not be NUL-terminated and may be anything; lines that are not
 * instructions, function headers or labels are skipped. docs/tools.md
 * ("The SASS line") gives the classes and the loop rule. */
#ifndef TL_SASS_H
#define TL_SASS_H

#include "tl/support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an instruction does, by its mnemonic (the opcode before the first
 * '.'). TL_SASS_NUM_CLASSES counts them. */
typedef enum TlSassClass {
  TL_SASS_MMA,     /* matrix instructions: HMMA, HGMMA, IMMA, QGMMA, ... */
  TL_SASS_BIT,     /* bit manipulation and conversions: LOP3, PRMT, F2FP */
  TL_SASS_F16X2,   /* f16x2 and bf16x2 arithmetic: HADD2, HFMA2 */
  TL_SASS_F32,     /* f32 arithmetic: FADD, FFMA, MUFU */
  TL_SASS_INTEGER, /* integer and address arithmetic, moves: IMAD, LEA */
  TL_SASS_SHARED,  /* shared-memory loads and stores: LDS, LDSM, STS */
  TL_SASS_GLOBAL,  /* global and local memory, asynchronous copies */
  TL_SASS_SYNC,    /* barriers and fences: BAR, SYNCS, MEMBAR */
  TL_SASS_OTHER,   /* branches, uniform-datapath ops, everything else */
  TL_SASS_NUM_CLASSES
} TlSassClass;

/* "mma", "bit/convert", "f16x2", "f32", "integer", "shared", "global",
 * "sync", "other": static strings. */
const char *tl_sass_class_name(TlSassClass c);
/* The class of a mnemonic ("HMMA", not "HMMA.16816.F32"); unknown ones
 * are TL_SASS_OTHER. */
TlSassClass tl_sass_classify(const char *mnemonic);

/* The longest mnemonic read, NUL included; a longer word is no
 * instruction. */
enum { TL_SASS_MNEMONIC_MAX = 32 };

typedef struct TlSassOpcode {
  char name[TL_SASS_MNEMONIC_MAX]; /* the mnemonic, NUL-terminated */
  unsigned count;
} TlSassOpcode;

/* A function's hot loop: the instructions at addresses start..end, the
 * first the target of the loop's backward branch, the last that branch. */
typedef struct TlSassLoop {
  uint64_t start, end;
  unsigned instructions; /* in the loop: what a warp issues an iteration */
  unsigned classes[TL_SASS_NUM_CLASSES]; /* of them, by class */
  TlSassOpcode *opcodes; /* of them, by mnemonic: the most frequent first,
                            then by name; owned, see tl_sass_loop_free */
  size_t num_opcodes;
  unsigned function_instructions; /* in the whole function */
} TlSassLoop;

typedef enum TlSassStatus {
  TL_SASS_FOUND,   /* *out holds the hot loop */
  TL_SASS_NO_LOOP, /* the function has instructions but no loop */
  TL_SASS_NO_CODE, /* no instruction of the function: an empty text, not
                      a disassembly, or no function of that name */
} TlSassStatus;

/* Reads the disassembly text[0..len) and finds the hot loop of the
 * function named `function` (a `Function : NAME` header of cuobjdump, a
 * `.text.NAME:` label of nvdisasm; the first of that name), or with NULL
 * of the first function. A text without any header is one function,
 * whatever its name; code before the first header belongs to none. *out
 * is always written: the loop for TL_SASS_FOUND (free it with
 * tl_sass_loop_free), else zeroes but for function_instructions, with the
 * reason in err ("no loop found in 13 instructions (...)", "no function
 * 'k' in the disassembly", "no instructions in the disassembly"; err may
 * be NULL). The rule for the hot loop is docs/tools.md's ("The SASS
 * line"). */
TlSassStatus tl_sass_hot_loop(const char *text, size_t len,
                              const char *function, TlSassLoop *out,
                              TlErr *err);
/* Frees the loop's opcodes and zeroes it; NULL or a zeroed loop is fine. */
void tl_sass_loop_free(TlSassLoop *l);

#ifdef __cplusplus
}
#endif
#endif
