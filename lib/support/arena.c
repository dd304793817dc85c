/* Memory: the checked heap wrappers, arenas, vectors and string buffers.
 * This is the only file in TL that calls malloc. */
#include "tl/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_fatal(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "tl: internal error at %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

static void *checked(void *p, size_t n) {
  if (!p && n) {
    fprintf(stderr, "tl: out of memory (%zu bytes)\n", n);
    abort();
  }
  return p;
}

void *tl_xmalloc(size_t n) { return checked(malloc(n ? n : 1), n); }
void *tl_xcalloc(size_t c, size_t s) { return checked(calloc(c ? c : 1, s ? s : 1), c * s); }
void *tl_xrealloc(void *p, size_t n) { return checked(realloc(p, n ? n : 1), n); }
void tl_free(void *p) { free(p); }
void *tl_try_calloc(size_t c, size_t s) {
  /* calloc checks c * s for overflow itself. */
  return calloc(c ? c : 1, s ? s : 1);
}

char *tl_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(tl_xmalloc(n), s, n);
}

/* Chunks grow geometrically; a request larger than the default chunk gets a
 * chunk of its own. */
struct TlArenaChunk {
  TlArenaChunk *prev;
  size_t size;
  _Alignas(16) unsigned char mem[];
};

enum { CHUNK_MIN = 64 * 1024 };

void tl_arena_init(TlArena *a) { a->chunk = NULL, a->used = 0; }

void *tl_arena_alloc(TlArena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (!a->chunk || a->used + n > a->chunk->size) {
    size_t size = a->chunk ? a->chunk->size * 2 : CHUNK_MIN;
    if (size > 16u << 20)
      size = 16u << 20;
    if (size < n)
      size = n;
    TlArenaChunk *c = tl_xmalloc(sizeof *c + size);
    c->prev = a->chunk;
    c->size = size;
    a->chunk = c;
    a->used = 0;
  }
  void *p = a->chunk->mem + a->used;
  a->used += n;
  return memset(p, 0, n);
}

void tl_arena_reset(TlArena *a) {
  while (a->chunk) {
    TlArenaChunk *p = a->chunk->prev;
    free(a->chunk);
    a->chunk = p;
  }
  a->used = 0;
}

void *tl_arena_memdup(TlArena *a, const void *p, size_t n) {
  void *q = tl_arena_alloc(a, n);
  if (n)
    memcpy(q, p, n);
  return q;
}

char *tl_arena_strndup(TlArena *a, const char *s, size_t n) {
  char *q = tl_arena_alloc(a, n + 1);
  memcpy(q, s, n);
  q[n] = 0;
  return q;
}

char *tl_arena_strdup(TlArena *a, const char *s) {
  return tl_arena_strndup(a, s, strlen(s));
}

char *tl_arena_printf(TlArena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *q = tl_arena_alloc(a, (size_t)n + 1);
  vsnprintf(q, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return q;
}

void tl_vec_grow_(void **data, size_t *cap, size_t need, size_t elem) {
  size_t c = *cap ? *cap : 4;
  while (c < need)
    c *= 2;
  *data = tl_xrealloc(*data, c * elem);
  *cap = c;
}

void tl_str_putn(TlStr *s, const char *p, size_t n) {
  if (s->len + n + 1 > s->cap)
    tl_vec_grow_((void **)&s->data, &s->cap, s->len + n + 1, 1);
  memcpy(s->data + s->len, p, n);
  s->len += n;
  s->data[s->len] = 0;
}

void tl_str_putc(TlStr *s, char c) { tl_str_putn(s, &c, 1); }
void tl_str_puts(TlStr *s, const char *c) { tl_str_putn(s, c, strlen(c)); }

void tl_str_vprintf(TlStr *s, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (s->len + (size_t)n + 1 > s->cap)
    tl_vec_grow_((void **)&s->data, &s->cap, s->len + (size_t)n + 1, 1);
  vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
  s->len += (size_t)n;
}

void tl_str_printf(TlStr *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_str_vprintf(s, fmt, ap);
  va_end(ap);
}

const char *tl_str_cstr(TlStr *s) { return s->data ? s->data : ""; }
void tl_str_clear(TlStr *s) {
  s->len = 0;
  if (s->data)
    s->data[0] = 0;
}
void tl_str_free(TlStr *s) {
  free(s->data);
  s->data = NULL;
  s->len = s->cap = 0;
}

bool tl_err(TlErr *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return false;
}

uint64_t tl_hash_bytes(const void *p, size_t n, uint64_t h) {
  const unsigned char *b = p;
  if (!h)
    h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
