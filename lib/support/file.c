/* Files: a whole file read at once, and writes whose every failure
 * (open, write, flush, close: a full disk shows only at the flush or the
 * close) is reported, so that a tool never exits 0 over lost output. */
#define _POSIX_C_SOURCE 200809L
#include "tl/support.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

char *tl_read_file(const char *path, size_t *len, TlErr *err) {
  bool in = strcmp(path, "-") == 0;
  FILE *f = in ? stdin : fopen(path, "rb");
  if (!f) {
    tl_err(err, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  /* fopen takes a directory, and reading one gives no bytes on some
   * systems: say what it is rather than read an empty file. */
  struct stat st;
  if (!in && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    tl_err(err, "cannot read '%s': it is a directory", path);
    return NULL;
  }
  TlStr s = {0};
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    tl_str_putn(&s, buf, n);
  bool bad = ferror(f);
  if (!in)
    fclose(f);
  if (bad) {
    tl_str_free(&s);
    tl_err(err, "cannot read '%s'", path);
    return NULL;
  }
  tl_str_putc(&s, 0);
  *len = s.len - 1;
  return s.data;
}

/* The first failure's errno, or EIO where the C library left none. */
static int write_errno(void) { return errno ? errno : EIO; }

bool tl_write_file(const char *path, const void *data, size_t n,
                   TlErr *err) {
  bool out = strcmp(path, "-") == 0;
  FILE *f = out ? stdout : fopen(path, "wb");
  if (!f)
    return tl_err(err, "cannot write '%s': %s", path, strerror(errno));
  int e = 0;
  errno = 0;
  if (fwrite(data, 1, n, f) != n || fflush(f) != 0)
    e = write_errno();
  if (!out && fclose(f) != 0 && !e)
    e = write_errno();
  if (e && out) {
    /* Reported here: tl_stdout_flush need not say it again. */
    clearerr(stdout);
    return tl_err(err, "cannot write standard output: %s", strerror(e));
  }
  if (e)
    return tl_err(err, "cannot write '%s': %s", path, strerror(e));
  return true;
}

bool tl_stdout_flush(TlErr *err) {
  errno = 0;
  bool failed = fflush(stdout) != 0;
  /* An earlier write may have failed with its errno long gone. */
  if (!failed && !ferror(stdout))
    return true;
  return tl_err(err, "cannot write standard output: %s",
                failed ? strerror(write_errno()) : "a write failed");
}
