/* Support: memory, arenas, growable vectors, string interning and error
 * messages for fallible pure functions.
 *
 * Every heap allocation in TL goes through tl_xmalloc/tl_xrealloc/tl_free.
 * Out of memory is not a user error: these functions print a message and
 * abort. Everything else that can fail reports through a diagnostic (see
 * diag.h) or a TlErr, never by exiting. */
#ifndef TL_SUPPORT_H
#define TL_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TL_NORETURN __attribute__((noreturn))
#else
#define TL_PRINTF(f, a)
#define TL_NORETURN
#endif

/* Result of a fallible operation whose details went to a diagnostic. */
typedef enum TlResult { TL_SUCCESS = 0, TL_FAILURE = 1 } TlResult;

#define TL_FAILED(r) ((r) != TL_SUCCESS)

/* Broken invariants are bugs in TL, not user errors. */
TL_NORETURN void tl_fatal(const char *file, int line, const char *fmt, ...)
    TL_PRINTF(3, 4);
#define tl_assert(c)                                                           \
  ((c) ? (void)0 : tl_fatal(__FILE__, __LINE__, "assertion failed: %s", #c))
#define TL_UNREACHABLE(why) tl_fatal(__FILE__, __LINE__, "unreachable: %s", why)

/* Heap. Never return NULL; abort on exhaustion. tl_free(NULL) is a no-op. */
void *tl_xmalloc(size_t n);
void *tl_xcalloc(size_t count, size_t size);
void *tl_xrealloc(void *p, size_t n);
char *tl_xstrdup(const char *s);
void tl_free(void *p);
/* Zeroed memory for a size the user chose (a tool's buffer): NULL, for the
 * caller to report, where count * size overflows or the memory is not
 * there; tl_free it. Sizes TL itself derives use tl_xcalloc. */
void *tl_try_calloc(size_t count, size_t size);

/* Arena: bump allocation, freed all at once. Memory is zeroed. A TlArena is
 * a plain struct the owner embeds; zero-initialise it or call
 * tl_arena_init. */
typedef struct TlArenaChunk TlArenaChunk;
typedef struct TlArena {
  TlArenaChunk *chunk; /* current chunk, list of older ones via ->prev */
  size_t used;         /* bytes used in the current chunk */
} TlArena;

void tl_arena_init(TlArena *a);
void *tl_arena_alloc(TlArena *a, size_t n);  /* aligned to 16, zeroed */
char *tl_arena_strdup(TlArena *a, const char *s);
char *tl_arena_strndup(TlArena *a, const char *s, size_t n);
void *tl_arena_memdup(TlArena *a, const void *p, size_t n);
/* Formats into arena memory. */
char *tl_arena_printf(TlArena *a, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_arena_reset(TlArena *a); /* frees all chunks; the arena is reusable */

#define TL_ARENA_NEW(a, T) ((T *)tl_arena_alloc((a), sizeof(T)))
#define TL_ARENA_NEWN(a, T, n) ((T *)tl_arena_alloc((a), sizeof(T) * (size_t)(n)))

/* Growable vector of T on the heap:
 *   TL_VEC(int) v = {0};  tl_vec_push(&v, 3);  ...  tl_vec_free(&v);
 * Fields: data, len, cap. */
#define TL_VEC(T)                                                              \
  struct {                                                                     \
    T *data;                                                                   \
    size_t len, cap;                                                           \
  }
void tl_vec_grow_(void **data, size_t *cap, size_t need, size_t elem);
#define tl_vec_reserve(v, n)                                                   \
  ((n) > (v)->cap ? tl_vec_grow_((void **)&(v)->data, &(v)->cap, (n),          \
                                 sizeof(*(v)->data))                           \
                  : (void)0)
#define tl_vec_push(v, x)                                                      \
  (tl_vec_reserve((v), (v)->len + 1), (v)->data[(v)->len++] = (x))
#define tl_vec_pop(v) ((v)->data[--(v)->len])
#define tl_vec_last(v) ((v)->data[(v)->len - 1])
#define tl_vec_free(v) (tl_free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

/* Growable string buffer; always NUL-terminated once anything is added. */
typedef struct TlStr {
  char *data;
  size_t len, cap;
} TlStr;
void tl_str_putc(TlStr *s, char c);
void tl_str_puts(TlStr *s, const char *cstr);
void tl_str_putn(TlStr *s, const char *p, size_t n);
void tl_str_printf(TlStr *s, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_str_vprintf(TlStr *s, const char *fmt, va_list ap);
const char *tl_str_cstr(TlStr *s); /* "" when empty; owned by s */
void tl_str_clear(TlStr *s);
void tl_str_free(TlStr *s);

/* String interning: equal strings get the same pointer, valid until the
 * table is destroyed. */
typedef struct TlStrtab TlStrtab;
TlStrtab *tl_strtab_create(void);
void tl_strtab_destroy(TlStrtab *t);
const char *tl_strtab_intern(TlStrtab *t, const char *s, size_t n);

/* Hashing helpers (FNV-1a). */
uint64_t tl_hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint64_t tl_hash_combine(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ull;
}

/* Error message for pure functions (layout algebra, dtype) that cannot
 * reach a diagnostic engine. A NULL TlErr* means "caller does not care". */
typedef struct TlErr {
  char msg[256];
} TlErr;
/* Formats into err (if non-NULL); always returns false so that callers can
 * write `return tl_err(err, "...")` in bool functions. */
bool tl_err(TlErr *err, const char *fmt, ...) TL_PRINTF(2, 3);

/* Integer literals, read the same everywhere (the IR, template values, -D
 * definitions, the tools' flags): an optional '-', then decimal digits, or
 * 0x or 0X and hex digits. A leading zero is still decimal (0100 is one
 * hundred; there are no octal literals); no blanks, no '+'. */
typedef enum TlIntStatus {
  TL_INT_OK,
  TL_INT_MALFORMED, /* not such a literal */
  TL_INT_TOO_LARGE, /* well formed, but out of range */
} TlIntStatus;
typedef struct TlIntLit {
  uint64_t mag; /* the magnitude */
  bool neg;     /* written with '-' (also for -0) */
  bool hex;     /* written with 0x */
} TlIntLit;
/* Reads all of s[0, n); TL_INT_TOO_LARGE if the magnitude exceeds
 * UINT64_MAX. *out (may be NULL) is set only on TL_INT_OK. */
TlIntStatus tl_int_literal(const char *s, size_t n, TlIntLit *out);
/* The same, for a value in [INT64_MIN, INT64_MAX]. */
TlIntStatus tl_int64_literal(const char *s, size_t n, int64_t *out);

/* The whole file at path ("-": standard input), NUL-terminated (an empty
 * file gives ""), its length in *len; tl_free it. NULL on failure, with
 * "cannot open 'PATH': REASON", "cannot read 'PATH': it is a directory" or
 * "cannot read 'PATH'" in err. */
char *tl_read_file(const char *path, size_t *len, TlErr *err);

/* Writes data[0, n) to the file at path ("-": standard output, flushed but
 * not closed), created or truncated. false when opening, writing, flushing
 * or closing fails, with "cannot write 'PATH': REASON" (or "cannot write
 * standard output: REASON") in err. */
bool tl_write_file(const char *path, const void *data, size_t n, TlErr *err);

/* Flushes standard output: false, with "cannot write standard output:
 * REASON" in err, if that or any earlier write to it failed. Every tool
 * calls it before it exits and exits 1 when it fails, so that output lost
 * to a full disk is never a success. */
bool tl_stdout_flush(TlErr *err);

#ifdef __cplusplus
}
#endif
#endif
