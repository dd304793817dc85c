/* String interning: an open-addressing hash set of arena-owned strings. */
#include "tl/support.h"

#include <string.h>

struct TlStrtab {
  TlArena arena;
  const char **slots; /* power-of-two sized; NULL marks an empty slot */
  size_t cap, count;
};

TlStrtab *tl_strtab_create(void) {
  TlStrtab *t = tl_xcalloc(1, sizeof *t);
  t->cap = 256;
  t->slots = tl_xcalloc(t->cap, sizeof *t->slots);
  return t;
}

void tl_strtab_destroy(TlStrtab *t) {
  if (!t)
    return;
  tl_arena_reset(&t->arena);
  tl_free(t->slots);
  tl_free(t);
}

static void rehash(TlStrtab *t) {
  size_t ncap = t->cap * 2;
  const char **ns = tl_xcalloc(ncap, sizeof *ns);
  for (size_t i = 0; i < t->cap; i++) {
    const char *s = t->slots[i];
    if (!s)
      continue;
    size_t j = tl_hash_bytes(s, strlen(s), 0) & (ncap - 1);
    while (ns[j])
      j = (j + 1) & (ncap - 1);
    ns[j] = s;
  }
  tl_free(t->slots);
  t->slots = ns;
  t->cap = ncap;
}

const char *tl_strtab_intern(TlStrtab *t, const char *s, size_t n) {
  if (2 * (t->count + 1) > t->cap)
    rehash(t);
  size_t j = tl_hash_bytes(s, n, 0) & (t->cap - 1);
  for (; t->slots[j]; j = (j + 1) & (t->cap - 1))
    if (strlen(t->slots[j]) == n && memcmp(t->slots[j], s, n) == 0)
      return t->slots[j];
  t->count++;
  return t->slots[j] = tl_arena_strndup(&t->arena, s, n);
}
