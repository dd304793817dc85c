/* Unit tests for lib/support: arenas, vectors, strings, interning, the
 * diagnostics engine, reading and writing files and integer literals. */
#define _POSIX_C_SOURCE 200809L
#include "tl/diag.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_arena(void) {
  TlArena a;
  tl_arena_init(&a);
  char *p = tl_arena_alloc(&a, 10);
  for (int i = 0; i < 10; i++)
    CHECK(p[i] == 0);
  CHECK(((uintptr_t)p & 15) == 0);
  /* Many allocations spanning several chunks, including one larger than a
   * chunk, stay distinct and writable. */
  char *prev = NULL;
  for (int i = 0; i < 5000; i++) {
    char *q = tl_arena_alloc(&a, (size_t)(i % 97) + 1);
    q[0] = (char)i;
    CHECK(q != prev);
    prev = q;
  }
  char *big = tl_arena_alloc(&a, 1 << 20);
  big[(1 << 20) - 1] = 1;
  CHECK_EQ_STR(tl_arena_printf(&a, "%d-%s", 42, "x"), "42-x");
  CHECK_EQ_STR(tl_arena_strndup(&a, "hello", 3), "hel");
  tl_arena_reset(&a);
  CHECK(a.chunk == NULL);
  tl_arena_reset(&a);
}

static void test_vec(void) {
  TL_VEC(int) v = {0};
  for (int i = 0; i < 1000; i++)
    tl_vec_push(&v, i * 3);
  CHECK_EQ_INT(v.len, 1000);
  CHECK_EQ_INT(v.data[999], 2997);
  CHECK_EQ_INT(tl_vec_pop(&v), 2997);
  CHECK_EQ_INT(tl_vec_last(&v), 2994);
  tl_vec_free(&v);
  CHECK(v.data == NULL && v.len == 0);
}

static void test_str(void) {
  TlStr s = {0};
  CHECK_EQ_STR(tl_str_cstr(&s), "");
  tl_str_puts(&s, "ab");
  tl_str_putc(&s, 'c');
  tl_str_printf(&s, "%05d", 42);
  CHECK_EQ_STR(tl_str_cstr(&s), "abc00042");
  tl_str_clear(&s);
  CHECK_EQ_STR(tl_str_cstr(&s), "");
  for (int i = 0; i < 200; i++)
    tl_str_printf(&s, "%d,", i);
  CHECK_EQ_INT(s.len, strlen(s.data));
  tl_str_free(&s);
}

static void test_strtab(void) {
  TlStrtab *t = tl_strtab_create();
  const char *a = tl_strtab_intern(t, "hello world", 5);
  const char *b = tl_strtab_intern(t, "hello", 5);
  const char *c = tl_strtab_intern(t, "help", 4);
  CHECK(a == b);
  CHECK(a != c);
  CHECK_EQ_STR(a, "hello");
  /* Force several rehashes; earlier pointers stay valid and unique. */
  char buf[32];
  const char *first = NULL;
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(buf, sizeof buf, "s%d", i);
    const char *p = tl_strtab_intern(t, buf, (size_t)n);
    if (i == 0)
      first = p;
  }
  CHECK(tl_strtab_intern(t, "s0", 2) == first);
  CHECK(tl_strtab_intern(t, "hello", 5) == a);
  /* A string with an embedded NUL never aliases its prefix. */
  CHECK(tl_strtab_intern(t, "he\0lo", 5) != tl_strtab_intern(t, "he", 2));
  tl_strtab_destroy(t);
}

typedef struct Captured {
  int count;
  TlDiagSeverity last;
  char msg[128];
} Captured;

static void capture(const TlDiag *d, void *user) {
  Captured *c = user;
  c->count++;
  c->last = d->severity;
  snprintf(c->msg, sizeof c->msg, "%s", d->message);
}

static void test_diag(void) {
  TlDiagEngine *e = tl_diag_engine_create();
  const char *src = "line one\n  %x = foo\n\tbar\n";
  tl_diag_add_source(e, "f.tl", src, strlen(src));

  TlDiag d = {TL_DIAG_ERROR, {"f.tl", 2, 3}, "unknown op"};
  TlStr out = {0};
  tl_diag_format(e, &d, &out);
  CHECK_EQ_STR(tl_str_cstr(&out),
               "f.tl:2:3: error: unknown op\n    %x = foo\n    ^\n");
  tl_str_clear(&out);

  /* Tabs in the source line are repeated in the caret line. */
  TlDiag t = {TL_DIAG_NOTE, {"f.tl", 3, 2}, "here"};
  tl_diag_format(e, &t, &out);
  CHECK_EQ_STR(tl_str_cstr(&out), "f.tl:3:2: note: here\n  \tbar\n  \t^\n");
  tl_str_clear(&out);

  /* An unregistered file or an unknown location prints the message only. */
  TlDiag u = {TL_DIAG_WARNING, {"g.tl", 1, 1}, "w"};
  tl_diag_format(e, &u, &out);
  CHECK_EQ_STR(tl_str_cstr(&out), "g.tl:1:1: warning: w\n");
  tl_str_clear(&out);
  TlDiag k = {TL_DIAG_REMARK, {NULL, 0, 0}, "r"};
  tl_diag_format(e, &k, &out);
  CHECK_EQ_STR(tl_str_cstr(&out), "<unknown>: remark: r\n");
  tl_str_clear(&out);
  /* A line past the end of the file prints no source line. */
  TlDiag past = {TL_DIAG_ERROR, {"f.tl", 99, 1}, "eof"};
  tl_diag_format(e, &past, &out);
  CHECK_EQ_STR(tl_str_cstr(&out), "f.tl:99:1: error: eof\n");
  tl_str_free(&out);

  Captured c = {0};
  tl_diag_set_handler(e, capture, &c);
  tl_diag_emit(e, TL_DIAG_WARNING, tl_loc_unknown(), "w %d", 1);
  CHECK_EQ_INT(tl_diag_error_count(e), 0);
  tl_diag_emit(e, TL_DIAG_ERROR, d.loc, "bad %s", "thing");
  CHECK_EQ_INT(c.count, 2);
  CHECK(c.last == TL_DIAG_ERROR);
  CHECK_EQ_STR(c.msg, "bad thing");
  CHECK_EQ_INT(tl_diag_error_count(e), 1);
  tl_diag_reset_count(e);
  CHECK_EQ_INT(tl_diag_error_count(e), 0);
  tl_diag_engine_destroy(e);
}

static void test_err(void) {
  TlErr err;
  CHECK(!tl_err(&err, "bad %d", 3));
  CHECK_EQ_STR(err.msg, "bad 3");
  CHECK(!tl_err(NULL, "ignored"));
}

/* tl_read_file: a file's bytes NUL-terminated, "" for an empty one, and
 * the reason for a missing one. */
static void test_read_file(void) {
  char path[] = "/tmp/tl-support-test-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0)
    return;
  FILE *f = fdopen(fd, "wb");
  fputs("ab\0c", f); /* fputs stops at the NUL: "ab" */
  fclose(f);
  size_t len = 99;
  TlErr err = {{0}};
  char *t = tl_read_file(path, &len, &err);
  CHECK(t != NULL && len == 2 && !strcmp(t, "ab"));
  tl_free(t);
  f = fopen(path, "wb");
  fclose(f);
  t = tl_read_file(path, &len, &err);
  CHECK(t != NULL && len == 0 && t[0] == 0);
  tl_free(t);
  remove(path);
  CHECK(tl_read_file(path, &len, &err) == NULL);
  CHECK(strstr(err.msg, "cannot open '/tmp/tl-support-test-") == err.msg);
  CHECK(strstr(err.msg, "No such file") != NULL);
  /* A directory is refused by what it is, not read as an empty file. */
  CHECK(tl_read_file("/tmp", &len, &err) == NULL);
  CHECK_EQ_STR(err.msg, "cannot read '/tmp': it is a directory");
}

/* Writes: the data lands; a device that refuses it is an error. */
static void test_write_file(void) {
  char path[] = "/tmp/tl-support-write-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0)
    return;
  close(fd);
  TlErr err = {{0}};
  CHECK(tl_write_file(path, "abc", 3, &err));
  size_t len = 0;
  char *t = tl_read_file(path, &len, &err);
  CHECK(t != NULL && len == 3 && !memcmp(t, "abc", 3));
  tl_free(t);
  remove(path);
  CHECK(!tl_write_file("/dev/full", "abc", 3, &err));
  CHECK_EQ_STR(err.msg, "cannot write '/dev/full': No space left on device");
  CHECK(!tl_write_file("/tmp", "abc", 3, &err));
  CHECK_EQ_STR(err.msg, "cannot write '/tmp': Is a directory");
}

/* Integer literals: decimal whatever the leading digit, 0x hex, nothing
 * else (against values written out by hand). */
static TlIntStatus lit(const char *s, TlIntLit *l) {
  return tl_int_literal(s, strlen(s), l);
}

static void test_int_literal(void) {
  TlIntLit l = {0, false, false};
  CHECK(lit("0512", &l) == TL_INT_OK && l.mag == 512 && !l.neg && !l.hex);
  CHECK(lit("089", &l) == TL_INT_OK && l.mag == 89);
  CHECK(lit("0100", &l) == TL_INT_OK && l.mag == 100);
  CHECK(lit("000", &l) == TL_INT_OK && l.mag == 0);
  CHECK(lit("0x0100", &l) == TL_INT_OK && l.mag == 256 && l.hex);
  CHECK(lit("0XfF", &l) == TL_INT_OK && l.mag == 255 && l.hex);
  CHECK(lit("-0x10", &l) == TL_INT_OK && l.mag == 16 && l.neg && l.hex);
  CHECK(lit("18446744073709551615", &l) == TL_INT_OK && l.mag == UINT64_MAX);
  CHECK(lit("0xFFFFFFFFFFFFFFFF", &l) == TL_INT_OK && l.mag == UINT64_MAX);
  CHECK(lit("18446744073709551616", &l) == TL_INT_TOO_LARGE);
  CHECK(lit("0x10000000000000000", &l) == TL_INT_TOO_LARGE);
  const char *bad[] = {"", "-", "0x", "0x-1", "+1", " 1", "1 ", "1e3",
                       "0b101", "0o17", "12a", "--1", "0xg", "99999999999999999999z"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    CHECK(lit(bad[i], &l) == TL_INT_MALFORMED);
  /* Only the first n bytes count. */
  CHECK(tl_int_literal("12x", 2, &l) == TL_INT_OK && l.mag == 12);
  int64_t v = 0;
  CHECK(tl_int64_literal("-9223372036854775808", 20, &v) == TL_INT_OK &&
        v == INT64_MIN);
  CHECK(tl_int64_literal("9223372036854775807", 19, &v) == TL_INT_OK &&
        v == INT64_MAX);
  CHECK(tl_int64_literal("9223372036854775808", 19, &v) == TL_INT_TOO_LARGE);
  CHECK(tl_int64_literal("-0100", 5, &v) == TL_INT_OK && v == -100);
}

int main(void) {
  test_arena();
  test_vec();
  test_str();
  test_strtab();
  test_diag();
  test_err();
  test_read_file();
  test_write_file();
  test_int_literal();
  return unit_report();
}
