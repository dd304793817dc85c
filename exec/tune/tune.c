/* The tuning space and the tune cache (include/tl/tune.h): parsing and
 * enumerating the candidates of `--tune NAME=V1,V2,...` lists, the cache
 * key, and the entry files, read with every line checked and written by
 * rename so that a reader never sees half an entry.
 *
 * An entry, line by line:
 *   tl tune cache 2                    the format and its version
 *   checksum: fnv1a 0x0123456789abcdef the hash of every other byte
 *   key: 0123456789abcdef              the hash that names the file
 *   source: 5123 bytes, fnv1a 0x...    the key's ingredients, in order
 *   ...
 *   best: BN=64 W=8                    the choice, the space's order
 *   ms: 0.1174                         its time
 *
 * Entries of other kinds (the PTX cache of exec/program) share the first
 * four parts, "tl KIND cache VERSION" first, and bring their own body.
 *
 * The checksum is what makes an edit that keeps every line well formed
 * (a choice changed to another in the space, a PTX instruction or its
 * shared memory size changed in place) an untrusted entry rather than a
 * wrong answer: the lines are checked against the key, but the body's
 * values could only be checked for form. FNV-1a's step h -> (h ^ b) * p is
 * a bijection of h for each byte b (p is odd), so two texts that differ
 * in one byte always hash apart; other edits collide by chance only (one
 * in 2^64). It guards against damage and hand edits, not an adversary who
 * can write the cache (who could write a matching checksum as well). */
#define _POSIX_C_SOURCE 200809L
#include "tl/tune.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Far above any entry (a few hundred bytes): a larger file is not one. */
#define MAX_ENTRY_BYTES (1 << 20)
/* The tune entries' format: 2 added the checksum line. */
#define TUNE_VERSION 2

typedef struct Param {
  char *name;
  TL_VEC(int64_t) values;
} Param;

struct TlTuneSpace {
  TL_VEC(Param) params;
  size_t size; /* candidates: the product of the lists' lengths */
};

TlTuneSpace *tl_tune_space_create(void) {
  TlTuneSpace *s = tl_xcalloc(1, sizeof *s);
  s->size = 1;
  return s;
}

static void param_free(Param *p) {
  tl_free(p->name);
  tl_vec_free(&p->values);
}

void tl_tune_space_destroy(TlTuneSpace *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->params.len; i++)
    param_free(&s->params.data[i]);
  tl_vec_free(&s->params);
  tl_free(s);
}

/* A decimal integer, or hexadecimal with 0x, after an optional '-'; the
 * whole of [s, s + n). */
static bool parse_int(const char *s, size_t n, int64_t *out) {
  char buf[32];
  if (n == 0 || n >= sizeof buf)
    return false;
  memcpy(buf, s, n);
  buf[n] = 0;
  const char *digits = buf + (buf[0] == '-');
  if (!isdigit((unsigned char)digits[0]))
    return false;
  int base =
      digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, base);
  if (*end || errno)
    return false;
  *out = v;
  return true;
}

bool tl_tune_space_add(TlTuneSpace *s, const char *spec, TlErr *err) {
  const char *eq = strchr(spec, '=');
  if (!eq)
    return tl_err(err, "expected NAME=V1,V2,..., not '%s'", spec);
  size_t nlen = (size_t)(eq - spec);
  bool ident = nlen > 0 && !isdigit((unsigned char)spec[0]);
  for (size_t i = 0; i < nlen; i++)
    ident &= isalnum((unsigned char)spec[i]) || spec[i] == '_';
  if (!ident)
    return tl_err(err, "'%.*s' is not a parameter name (in '%s')", (int)nlen,
                  spec, spec);
  Param p = {tl_xmalloc(nlen + 1), {0}};
  memcpy(p.name, spec, nlen);
  p.name[nlen] = 0;
  if (tl_tune_space_find_param(s, p.name) >= 0) {
    tl_err(err, "%s is tuned twice", p.name);
    goto fail;
  }
  if (!eq[1]) {
    tl_err(err, "%s lists no values", p.name);
    goto fail;
  }
  for (const char *at = eq + 1;;) {
    const char *comma = strchr(at, ',');
    size_t len = comma ? (size_t)(comma - at) : strlen(at);
    int64_t v;
    if (!len) {
      tl_err(err, "%s: an empty value in '%s'", p.name, eq + 1);
      goto fail;
    }
    if (!parse_int(at, len, &v)) {
      tl_err(err, "%s: '%.*s' is not an integer", p.name, (int)len, at);
      goto fail;
    }
    for (size_t i = 0; i < p.values.len; i++)
      if (p.values.data[i] == v) {
        tl_err(err, "%s: %lld is listed twice", p.name, (long long)v);
        goto fail;
      }
    tl_vec_push(&p.values, v);
    if (!comma)
      break;
    at = comma + 1;
  }
  if (s->size * p.values.len > TL_TUNE_MAX_CANDIDATES) {
    tl_err(err, "%s: the space would have %zu candidates (at most %d)", p.name,
           s->size * p.values.len, TL_TUNE_MAX_CANDIDATES);
    goto fail;
  }
  s->size *= p.values.len;
  tl_vec_push(&s->params, p);
  return true;
fail:
  param_free(&p);
  return false;
}

unsigned tl_tune_space_num_params(const TlTuneSpace *s) {
  return (unsigned)s->params.len;
}

const char *tl_tune_space_name(const TlTuneSpace *s, unsigned param) {
  tl_assert(param < s->params.len);
  return s->params.data[param].name;
}

int tl_tune_space_find_param(const TlTuneSpace *s, const char *name) {
  for (size_t i = 0; i < s->params.len; i++)
    if (!strcmp(s->params.data[i].name, name))
      return (int)i;
  return -1;
}

size_t tl_tune_space_size(const TlTuneSpace *s) { return s->size; }

/* Mixed radix, the last parameter's digit the least significant. */
void tl_tune_space_candidate(const TlTuneSpace *s, size_t index,
                             int64_t *values) {
  tl_assert(index < s->size);
  for (size_t i = s->params.len; i-- > 0;) {
    const Param *p = &s->params.data[i];
    values[i] = p->values.data[index % p->values.len];
    index /= p->values.len;
  }
}

bool tl_tune_space_find(const TlTuneSpace *s, const int64_t *values,
                        size_t *index) {
  size_t at = 0;
  for (size_t i = 0; i < s->params.len; i++) {
    const Param *p = &s->params.data[i];
    size_t j = 0;
    while (j < p->values.len && p->values.data[j] != values[i])
      j++;
    if (j == p->values.len)
      return false;
    at = at * p->values.len + j;
  }
  if (index)
    *index = at;
  return true;
}

void tl_tune_space_format(const TlTuneSpace *s, const int64_t *values,
                          TlStr *out) {
  for (size_t i = 0; i < s->params.len; i++)
    tl_str_printf(out, "%s%s=%lld", i ? " " : "", s->params.data[i].name,
                  (long long)values[i]);
}

/*===--- Keys -------------------------------------------------------------===*/

void tl_tune_key_init(TlTuneKey *k, const char *source, size_t len) {
  k->source_hash = tl_hash_bytes(source, len, 0);
  tl_str_clear(&k->lines);
  tl_tune_key_add(k, "source", "%zu bytes, fnv1a 0x%016llx", len,
                  (unsigned long long)k->source_hash);
}

void tl_tune_key_add(TlTuneKey *k, const char *field, const char *fmt, ...) {
  TlStr v = {0};
  va_list ap;
  va_start(ap, fmt);
  tl_str_vprintf(&v, fmt, ap);
  va_end(ap);
  tl_str_printf(&k->lines, "%s: ", field);
  for (size_t i = 0; i < v.len; i++)
    tl_str_putc(&k->lines, iscntrl((unsigned char)v.data[i]) ? '?' : v.data[i]);
  tl_str_putc(&k->lines, '\n');
  tl_str_free(&v);
}

void tl_tune_key_add_space(TlTuneKey *k, const TlTuneSpace *s) {
  for (size_t i = 0; i < s->params.len; i++) {
    const Param *p = &s->params.data[i];
    TlStr list = {0};
    for (size_t j = 0; j < p->values.len; j++)
      tl_str_printf(&list, "%s%lld", j ? "," : "",
                    (long long)p->values.data[j]);
    tl_tune_key_add(k, "tune", "%s=%s", p->name, tl_str_cstr(&list));
    tl_str_free(&list);
  }
}

uint64_t tl_tune_key_hash(const TlTuneKey *k) {
  return tl_hash_bytes(k->lines.data, k->lines.len, k->source_hash);
}

void tl_tune_key_free(TlTuneKey *k) { tl_str_free(&k->lines); }

/*===--- Entries ----------------------------------------------------------===*/

char *tl_tune_cache_dir(void) {
  const char *d = getenv("TL_CACHE_DIR");
  TlStr s = {0};
  if (d && *d)
    tl_str_puts(&s, d);
  else if ((d = getenv("XDG_CACHE_HOME")) && *d)
    tl_str_printf(&s, "%s/tl", d);
  else if ((d = getenv("HOME")) && *d)
    tl_str_printf(&s, "%s/.cache/tl", d);
  return s.data;
}

char *tl_tune_cache_path(const char *dir, const TlTuneKey *k) {
  TlStr s = {0};
  tl_str_printf(&s, "%s/tune/%016llx.txt", dir,
                (unsigned long long)tl_tune_key_hash(k));
  return s.data;
}

/* The first line of an entry of `kind`: "tl tune cache 2". */
static void entry_format(const char *kind, unsigned version, TlStr *out) {
  tl_str_printf(out, "tl %s cache %u\n", kind, version);
}

/* Everything an entry holds before its body, its checksum line aside. */
static void entry_head(const char *kind, unsigned version, const TlTuneKey *k,
                       TlStr *out) {
  entry_format(kind, version, out);
  tl_str_printf(out, "key: %016llx\n", (unsigned long long)tl_tune_key_hash(k));
  tl_str_putn(out, k->lines.data ? k->lines.data : "", k->lines.len);
}

/* The next whole line of [*at, end) (without its '\n'); false at the end
 * or when the text ends before a '\n'. */
static bool next_line(const char **at, const char *end, const char **line,
                      size_t *len) {
  const char *nl = *at < end ? memchr(*at, '\n', (size_t)(end - *at)) : NULL;
  if (!nl)
    return false;
  *line = *at;
  *len = (size_t)(nl - *at);
  *at = nl + 1;
  return true;
}

/* Parses the choice "NAME=V NAME=V" of the space's parameters, in order. */
static bool parse_choice(const TlTuneSpace *s, const char *p, size_t n,
                         int64_t *values, TlErr *err) {
  const char *end = p + n;
  for (size_t i = 0; i < s->params.len; i++) {
    const char *name = s->params.data[i].name;
    size_t nl = strlen(name);
    if (i && (p >= end || *p++ != ' '))
      return tl_err(err, "its choice names other parameters than the space");
    if ((size_t)(end - p) <= nl || memcmp(p, name, nl) || p[nl] != '=')
      return tl_err(err, "its choice names other parameters than the space");
    p += nl + 1;
    const char *v = p;
    while (p < end && *p != ' ')
      p++;
    if (!parse_int(v, (size_t)(p - v), &values[i]))
      return tl_err(err, "its choice gives %s the value '%.*s'", name,
                    (int)(p - v), v);
  }
  if (p != end)
    return tl_err(err, "its choice names other parameters than the space");
  if (!tl_tune_space_find(s, values, NULL)) {
    TlStr c = {0};
    tl_tune_space_format(s, values, &c);
    tl_err(err, "its choice %s lies outside the space", tl_str_cstr(&c));
    tl_str_free(&c);
    return false;
  }
  return true;
}

/* The checksum of an entry: FNV-1a over its first line and then
 * everything after its checksum line (the rest of the entry's bytes, in
 * order), as one stream. */
static uint64_t payload_hash(const char *first, size_t flen, const char *rest,
                             size_t rlen) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a's 64-bit offset basis */
  for (size_t i = 0; i < flen + rlen; i++)
    h = (h ^ (unsigned char)(i < flen ? first[i] : rest[i - flen])) *
        0x100000001b3ull; /* FNV's 64-bit prime */
  return h;
}

#define CHECKSUM_FIELD "checksum: fnv1a 0x"

/* The value of a checksum line: CHECKSUM_FIELD and 16 lowercase hex
 * digits, as the writer prints them. */
static bool parse_checksum(const char *line, size_t len, uint64_t *out) {
  size_t fl = sizeof CHECKSUM_FIELD - 1;
  if (len != fl + 16 || memcmp(line, CHECKSUM_FIELD, fl))
    return false;
  uint64_t h = 0;
  for (size_t i = fl; i < len; i++) {
    char c = line[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
    h = h << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  *out = h;
  return true;
}

/* Checks the head of an entry (its format line, checksum, key and
 * ingredients) against the key; *body gets the offset of what follows.
 * The checksum is checked before the lines it covers, so that a damaged
 * entry is reported as one; an entry of other ingredients is whole, and
 * reported by the line that differs. */
static bool check_head(const char *text, size_t n, const char *kind,
                       unsigned version, const TlTuneKey *k, size_t *body,
                       TlErr *err) {
  const char *at = text, *end = text + n, *line;
  size_t len;
  TlStr head = {0};
  entry_head(kind, version, k, &head);
  size_t flen = strcspn(head.data, "\n") + 1;
  bool ok = true;
  uint64_t sum = 0;
  if (n < flen || memcmp(text, head.data, flen))
    ok = tl_err(err, "not a %s cache entry (its first line is not '%.*s')",
                kind, (int)flen - 1, head.data);
  else {
    at += flen;
    if (!next_line(&at, end, &line, &len) || !parse_checksum(line, len, &sum))
      ok = tl_err(err, "it is truncated or malformed: no 'checksum:' line "
                       "after its first");
    else if (payload_hash(text, flen, at, (size_t)(end - at)) != sum)
      ok = tl_err(err, "its contents do not match its checksum (it was cut "
                       "short, damaged or edited)");
  }
  const char *want = head.data + flen, *wend = head.data + head.len, *wline;
  size_t wlen;
  while (ok && next_line(&want, wend, &wline, &wlen)) {
    if (!next_line(&at, end, &line, &len))
      ok = tl_err(err, "it is truncated: it ends before '%.*s'",
                  (int)(wlen < 100 ? wlen : 100), wline);
    else if (len != wlen || memcmp(line, wline, len))
      ok = tl_err(err,
                  "it was %s for other ingredients: '%.*s' where this "
                  "run has '%.*s'",
                  strcmp(kind, "tune") ? "made" : "tuned",
                  (int)(len < 80 ? len : 80), line,
                  (int)(wlen < 80 ? wlen : 80), wline);
  }
  tl_str_free(&head);
  *body = (size_t)(at - text);
  return ok;
}

/* Checks the body of a tune entry: its choice and time. */
static bool check_choice(const char *text, size_t n, const TlTuneSpace *s,
                         int64_t *values, double *ms, TlErr *err) {
  const char *at = text, *end = text + n, *line;
  size_t len;
  bool ok = true;
  int64_t *v = tl_xcalloc(s->params.len + 1, sizeof *v);
  if (!next_line(&at, end, &line, &len) || len < 6 || memcmp(line, "best: ", 6))
    ok = tl_err(err, "it is truncated or malformed: no 'best:' line after the "
                     "ingredients");
  else
    ok = parse_choice(s, line + 6, len - 6, v, err);
  double t = 0;
  if (ok) {
    char buf[64];
    char *tend;
    if (!next_line(&at, end, &line, &len) || len < 4 ||
        memcmp(line, "ms: ", 4) || len - 4 >= sizeof buf)
      ok = tl_err(err, "it is truncated or malformed: no 'ms:' line after the "
                       "choice");
    else {
      memcpy(buf, line + 4, len - 4);
      buf[len - 4] = 0;
      errno = 0;
      t = strtod(buf, &tend);
      if (!buf[0] || *tend || errno || !isfinite(t) || !(t > 0))
        ok = tl_err(err, "its time '%s' is not a positive number of ms", buf);
    }
  }
  if (ok && at != end)
    ok = tl_err(err, "it has text after its last line");
  if (ok) {
    memcpy(values, v, s->params.len * sizeof *v);
    *ms = t;
  }
  tl_free(v);
  return ok;
}

/* What a file that is not a regular file is, for a message. */
static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  return "not a regular file";
}

TlTuneCacheStatus tl_cache_entry_read(const char *path, const char *kind,
                                      unsigned version, const TlTuneKey *k,
                                      size_t max_bytes, TlStr *body,
                                      TlErr *err) {
  /* O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise;
   * it never blocks a regular file's reads, and no other kind of file is
   * read. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    /* No file, or no directory where the path needs one. */
    if (errno == ENOENT || errno == ENOTDIR)
      return TL_TUNE_CACHE_MISS;
    tl_err(err, "it cannot be opened: %s", strerror(errno));
    return TL_TUNE_CACHE_INVALID;
  }
  struct stat st;
  if (fstat(fd, &st)) {
    tl_err(err, "it cannot be read: %s", strerror(errno));
    close(fd);
    return TL_TUNE_CACHE_INVALID;
  }
  if (!S_ISREG(st.st_mode)) {
    tl_err(err, "it is not a regular file (%s)", file_kind(st.st_mode));
    close(fd);
    return TL_TUNE_CACHE_INVALID;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    tl_err(err, "it cannot be read: %s", strerror(errno));
    close(fd);
    return TL_TUNE_CACHE_INVALID;
  }
  TlStr text = {0};
  char buf[65536];
  size_t n;
  while (text.len <= max_bytes && (n = fread(buf, 1, sizeof buf, f)) > 0)
    tl_str_putn(&text, buf, n);
  bool bad_read = ferror(f);
  fclose(f);
  bool ok;
  size_t at = 0;
  if (bad_read)
    ok = tl_err(err, "it cannot be read");
  else if (text.len > max_bytes)
    ok = tl_err(err, "it is larger than any entry (%zu bytes)", max_bytes);
  else
    ok = check_head(text.data ? text.data : "", text.len, kind, version, k, &at,
                    err);
  if (ok)
    tl_str_putn(body, text.data + at, text.len - at);
  tl_str_free(&text);
  return ok ? TL_TUNE_CACHE_HIT : TL_TUNE_CACHE_INVALID;
}

TlTuneCacheStatus tl_tune_cache_read(const char *path, const TlTuneKey *k,
                                     const TlTuneSpace *s, int64_t *values,
                                     double *ms, TlErr *err) {
  TlStr body = {0};
  TlTuneCacheStatus st = tl_cache_entry_read(path, "tune", TUNE_VERSION, k,
                                             MAX_ENTRY_BYTES, &body, err);
  if (st == TL_TUNE_CACHE_HIT &&
      !check_choice(body.data ? body.data : "", body.len, s, values, ms, err))
    st = TL_TUNE_CACHE_INVALID;
  tl_str_free(&body);
  return st;
}

/* mkdir -p of the directory that holds path. */
static bool make_parents(const char *path, TlErr *err) {
  char *p = tl_xstrdup(path);
  char *slash = strrchr(p, '/');
  bool ok = true;
  if (slash && slash != p) {
    *slash = 0;
    for (char *c = p + 1;; c++) {
      if (*c && *c != '/')
        continue;
      char saved = *c;
      *c = 0;
      struct stat st;
      if (mkdir(p, 0777) && errno != EEXIST) {
        ok = tl_err(err, "cannot create the directory '%s': %s", p,
                    strerror(errno));
      } else if (stat(p, &st) || !S_ISDIR(st.st_mode)) {
        ok = tl_err(err, "'%s' is not a directory", p);
      }
      *c = saved;
      if (!ok || !saved)
        break;
    }
  }
  tl_free(p);
  return ok;
}

bool tl_cache_entry_write(const char *path, const char *kind, unsigned version,
                          const TlTuneKey *k, const char *body, size_t len,
                          TlErr *err) {
  if (!make_parents(path, err))
    return false;
  TlStr payload = {0}, text = {0}, tmp = {0};
  entry_head(kind, version, k, &payload);
  tl_str_putn(&payload, body, len);
  size_t flen = strcspn(payload.data, "\n") + 1;
  const char *rest = payload.data + flen;
  size_t rlen = payload.len - flen;
  tl_str_putn(&text, payload.data, flen);
  tl_str_printf(
      &text, CHECKSUM_FIELD "%016llx\n",
      (unsigned long long)payload_hash(payload.data, flen, rest, rlen));
  tl_str_putn(&text, rest, rlen);
  tl_str_free(&payload);
  tl_str_printf(&tmp, "%s.XXXXXX", path);
  bool ok = false;
  int fd = mkstemp(tmp.data);
  if (fd < 0) {
    tl_err(err, "cannot create a file beside '%s': %s", path, strerror(errno));
    goto out;
  }
  /* mkstemp makes the file private; an entry is as readable as any file
   * the user creates. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    tl_err(err, "cannot write '%s': %s", tmp.data, strerror(errno));
    close(fd);
  } else {
    bool wrote = fwrite(text.data, 1, text.len, f) == text.len &&
                 fflush(f) == 0 && fsync(fd) == 0;
    int e = errno;
    if (fclose(f) != 0 && wrote)
      wrote = false, e = errno;
    if (!wrote)
      tl_err(err, "cannot write '%s': %s", tmp.data, strerror(e));
    else if (rename(tmp.data, path) != 0)
      tl_err(err, "cannot rename '%s' to '%s': %s", tmp.data, path,
             strerror(errno));
    else
      ok = true;
  }
  if (!ok)
    unlink(tmp.data);
out:
  tl_str_free(&text);
  tl_str_free(&tmp);
  return ok;
}

bool tl_tune_cache_write(const char *path, const TlTuneKey *k,
                         const TlTuneSpace *s, const int64_t *values, double ms,
                         TlErr *err) {
  TlStr body = {0};
  tl_str_puts(&body, "best: ");
  tl_tune_space_format(s, values, &body);
  tl_str_printf(&body, "\nms: %.9g\n", ms);
  bool ok = tl_cache_entry_write(path, "tune", TUNE_VERSION, k, body.data,
                                 body.len, err);
  tl_str_free(&body);
  return ok;
}
