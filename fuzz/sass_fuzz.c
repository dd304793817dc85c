/* libFuzzer target for the SASS reader (include/tl/sass.h). The input is
 * the disassembly text, read with no function named and, when it has a
 * `Function : NAME` header, with the first header's name. Properties:
 *   - reading never crashes, hangs, leaks or reads past the input (the
 *     sanitizers watch; the input is not NUL-terminated);
 *   - a found loop's counts agree: by class, by opcode and in all, each
 *     opcode's count in its class, the opcodes sorted and distinct, the
 *     loop within the function; anything else leaves no loop behind;
 *   - reading is deterministic, and a line that is no instruction
 *     appended to the text changes nothing.
 * A broken property aborts with a message naming it. */
#include "tl/sass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *property) {
  fprintf(stderr, "sass fuzz: %s\n", property);
  abort();
}

static void check(TlSassStatus st, const TlSassLoop *l) {
  if (st != TL_SASS_FOUND) {
    if (l->opcodes || l->num_opcodes || l->instructions)
      fail("a loop left behind without one found");
    if (st == TL_SASS_NO_CODE && l->function_instructions)
      fail("instructions counted without code");
    return;
  }
  unsigned by_class = 0, by_opcode = 0, again[TL_SASS_NUM_CLASSES] = {0};
  for (int c = 0; c < TL_SASS_NUM_CLASSES; c++)
    by_class += l->classes[c];
  for (size_t i = 0; i < l->num_opcodes; i++) {
    const TlSassOpcode *op = &l->opcodes[i];
    if (!op->count || !memchr(op->name, 0, sizeof op->name) || !op->name[0])
      fail("an opcode without a count or a name");
    by_opcode += op->count;
    again[tl_sass_classify(op->name)] += op->count;
    if (i && !(l->opcodes[i - 1].count > op->count ||
               (l->opcodes[i - 1].count == op->count &&
                strcmp(l->opcodes[i - 1].name, op->name) < 0)))
      fail("opcodes not sorted, or one listed twice");
  }
  if (by_class != l->instructions || by_opcode != l->instructions ||
      memcmp(again, l->classes, sizeof again))
    fail("the counts by class, by opcode and in all disagree");
  if (!l->instructions || l->start >= l->end ||
      l->instructions > l->function_instructions)
    fail("the loop is empty, reversed or larger than its function");
}

static bool same(TlSassStatus s1, const TlSassLoop *a, TlSassStatus s2,
                 const TlSassLoop *b) {
  return s1 == s2 && a->start == b->start && a->end == b->end &&
         a->instructions == b->instructions &&
         a->function_instructions == b->function_instructions &&
         !memcmp(a->classes, b->classes, sizeof a->classes) &&
         a->num_opcodes == b->num_opcodes &&
         (!a->num_opcodes ||
          !memcmp(a->opcodes, b->opcodes, a->num_opcodes * sizeof *a->opcodes));
}

/* The first `Function : NAME` header's name, or NULL. */
static char *first_function(const char *text, size_t size) {
  const char *key = "Function : ";
  size_t n = strlen(key);
  for (size_t i = 0; i + n < size; i++) {
    if (memcmp(text + i, key, n))
      continue;
    size_t j = i + n;
    while (j < size && text[j] != ' ' && text[j] != '\t' && text[j] != '\r' &&
           text[j] != '\n' && text[j] != 0)
      j++;
    if (j == i + n)
      return NULL;
    char *name = tl_xmalloc(j - (i + n) + 1);
    memcpy(name, text + i + n, j - (i + n));
    name[j - (i + n)] = 0;
    return name;
  }
  return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  char *name = first_function(text, size);
  const char *names[2] = {NULL, name};
  for (int k = 0; k < (name ? 2 : 1); k++) {
    TlSassLoop a, b, c;
    TlErr err;
    TlSassStatus sa = tl_sass_hot_loop(text, size, names[k], &a, &err);
    check(sa, &a);
    TlSassStatus sb = tl_sass_hot_loop(text, size, names[k], &b, NULL);
    if (!same(sa, &a, sb, &b))
      fail("two readings of one text differ");
    /* A comment line appended: no instruction, header or label. */
    static const char tail[] = "\n// end of text\n";
    char *longer = tl_xmalloc(size + sizeof tail - 1);
    memcpy(longer, text, size);
    memcpy(longer + size, tail, sizeof tail - 1);
    TlSassStatus sc =
        tl_sass_hot_loop(longer, size + sizeof tail - 1, names[k], &c, NULL);
    if (!same(sa, &a, sc, &c))
      fail("a line that is no instruction changed the result");
    tl_free(longer);
    tl_sass_loop_free(&a);
    tl_sass_loop_free(&b);
    tl_sass_loop_free(&c);
  }
  tl_free(name);
  return 0;
}
