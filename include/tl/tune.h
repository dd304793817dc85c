/* Autotuning bookkeeping: a space of template-parameter values and an
 * on-disk cache of the choices made in it. Nothing here knows kernels or
 * devices; tl-run instantiates, compiles and times the candidates
 * (docs/tools.md, "Tuning").
 *
 * A space is an ordered list of parameters, each with a list of distinct
 * integer values. Its candidates are the cartesian product of the lists,
 * the first parameter varying slowest: candidate 0 takes every list's
 * first value, candidate 1 the last list's second value, and so on.
 *
 * A cache entry is a text file named by a 64-bit FNV-1a hash of its key:
 * the kernel's source text followed by "field: value" lines (the
 * ingredients: defines, space, arguments, device, compiler) that the
 * caller adds. The file holds the ingredients in readable text, then the
 * chosen values and their time. A file is trusted only when its
 * ingredients equal the key's line for line, its values lie in the space
 * and nothing is missing or left over; anything else is reported as
 * invalid, never half-used. */
#ifndef TL_TUNE_H
#define TL_TUNE_H

#include "tl/support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most candidates a space may have. */
#define TL_TUNE_MAX_CANDIDATES 4096

typedef struct TlTuneSpace TlTuneSpace;

/* An empty space (one candidate, with no values). Caller owns it;
 * destroy accepts NULL. */
TlTuneSpace *tl_tune_space_create(void);
void tl_tune_space_destroy(TlTuneSpace *s);

/* Adds a parameter from "NAME=V1,V2,...": NAME an identifier, each value
 * a decimal integer or 0x hexadecimal (after an optional '-'), all
 * distinct. false with err, the space unchanged, for a missing '=', a
 * NAME that is not an identifier, an empty list or item, a value that is
 * not an integer or is repeated, a NAME already in the space, or a space
 * that would have more than TL_TUNE_MAX_CANDIDATES candidates. */
bool tl_tune_space_add(TlTuneSpace *s, const char *spec, TlErr *err);

unsigned tl_tune_space_num_params(const TlTuneSpace *s);
/* The name of parameter `param` (< num_params), owned by the space. */
const char *tl_tune_space_name(const TlTuneSpace *s, unsigned param);
/* The index of the parameter named `name`, or -1. */
int tl_tune_space_find_param(const TlTuneSpace *s, const char *name);
/* The product of the lists' lengths. */
size_t tl_tune_space_size(const TlTuneSpace *s);
/* The values of candidate `index` (< size), one per parameter. */
void tl_tune_space_candidate(const TlTuneSpace *s, size_t index,
                             int64_t *values);
/* Whether values (one per parameter) is a candidate; *index (may be NULL)
 * gets its index. */
bool tl_tune_space_find(const TlTuneSpace *s, const int64_t *values,
                        size_t *index);
/* Appends "BN=64 W=8" (one NAME=VALUE per parameter, in order) to out. */
void tl_tune_space_format(const TlTuneSpace *s, const int64_t *values,
                          TlStr *out);

/* A cache key: the hash of a source text and the ingredient lines added
 * after it. Zero-initialise, then tl_tune_key_init; tl_tune_key_free
 * releases it. */
typedef struct TlTuneKey {
  uint64_t source_hash; /* FNV-1a of the source text */
  TlStr lines;          /* the ingredients, "field: value\n" each */
} TlTuneKey;

/* Starts a key for a source text: its first line records the text's
 * length and hash ("source: 4711 bytes, fnv1a 0x..."). Never fails. */
void tl_tune_key_init(TlTuneKey *k, const char *source, size_t len);
/* Adds the line "field: value" with value formatted from fmt; a newline
 * or other control character in it is written as '?', so that one
 * ingredient stays one line. */
void tl_tune_key_add(TlTuneKey *k, const char *field, const char *fmt, ...)
    TL_PRINTF(3, 4);
/* Adds the space: one line "tune: NAME=V1,V2,..." per parameter. */
void tl_tune_key_add_space(TlTuneKey *k, const TlTuneSpace *s);
/* FNV-1a over the source text, continued over the ingredient lines. */
uint64_t tl_tune_key_hash(const TlTuneKey *k);
void tl_tune_key_free(TlTuneKey *k);

/* The cache directory: $TL_CACHE_DIR, else $XDG_CACHE_HOME/tl, else
 * $HOME/.cache/tl (a variable counts when set and not empty); NULL when
 * none is set. Caller frees it with tl_free. */
char *tl_tune_cache_dir(void);
/* The entry of a key: "DIR/tune/<16 hex digits of its hash>.txt". Caller
 * frees it with tl_free. */
char *tl_tune_cache_path(const char *dir, const TlTuneKey *k);

typedef enum TlTuneCacheStatus {
  TL_TUNE_CACHE_MISS,    /* no entry */
  TL_TUNE_CACHE_HIT,     /* values and *ms read */
  TL_TUNE_CACHE_INVALID, /* an entry that cannot be trusted; err says why */
} TlTuneCacheStatus;

/* Reads the entry at path for key k in space s. HIT fills values (one per
 * parameter of s) and *ms. MISS when the file (or a directory on its
 * path) does not exist. INVALID, with err, when it is not a regular file
 * (a FIFO is not opened for a blocking read), cannot be read, is not a
 * cache entry, does not match its checksum, is truncated, holds other
 * ingredients, names other parameters, values outside the space or a
 * time that is not a positive number, or has text after its last line;
 * values and *ms are then untouched. */
TlTuneCacheStatus tl_tune_cache_read(const char *path, const TlTuneKey *k,
                                     const TlTuneSpace *s, int64_t *values,
                                     double *ms, TlErr *err);
/* Writes the entry at path: creates its directory (and parents) when
 * missing, writes a temporary file beside it and renames it over path, so
 * a reader sees the old entry or the whole new one. false with err (and
 * no temporary file left) when a directory cannot be created or the file
 * cannot be written. */
bool tl_tune_cache_write(const char *path, const TlTuneKey *k,
                         const TlTuneSpace *s, const int64_t *values, double ms,
                         TlErr *err);

/* Entries of any kind (the tune cache's, "tune" version 2, and the PTX
 * cache's) share the rules above: a first line "tl KIND cache VERSION",
 * "checksum: fnv1a 0x<16 hex digits>" (FNV-1a 64 over every byte of the
 * entry but this line's), "key: <hash>", the key's ingredients, then a
 * body of the kind's own. Reading checks the checksum over the whole
 * entry and all but the body line by line, and appends the body to *body
 * on a HIT; MISS and INVALID (with err) as tl_tune_cache_read says, and
 * INVALID too for a file of more than max_bytes. Writing computes the
 * checksum and goes through a temporary file renamed over path, as
 * tl_tune_cache_write does. */
TlTuneCacheStatus tl_cache_entry_read(const char *path, const char *kind,
                                      unsigned version, const TlTuneKey *k,
                                      size_t max_bytes, TlStr *body,
                                      TlErr *err);
bool tl_cache_entry_write(const char *path, const char *kind, unsigned version,
                          const TlTuneKey *k, const char *body, size_t len,
                          TlErr *err);

#ifdef __cplusplus
}
#endif
#endif
