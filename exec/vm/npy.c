/* NumPy .npy files: the reader (versions 1.0, 2.0, 3.0) and writer (1.0)
 * for little-endian numeric arrays in C order. The header is a Python
 * dictionary literal; only the three keys numpy writes are accepted:
 * 'descr' (a string), 'fortran_order' (True/False) and 'shape' (a tuple
 * of non-negative integers). */
#include "tl/vm.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct {
  const char *descr; /* without the byte-order character */
  TlDType (*make)(unsigned);
  unsigned bits;
  char kind;
} npy_types[] = {
    {"f2", NULL, 16, 'f'},          {"f4", NULL, 32, 'f'},
    {"f8", NULL, 64, 'f'},          {"i1", tl_dtype_int, 8, 'i'},
    {"i2", tl_dtype_int, 16, 'i'},  {"i4", tl_dtype_int, 32, 'i'},
    {"i8", tl_dtype_int, 64, 'i'},  {"u1", tl_dtype_uint, 8, 'u'},
    {"u2", tl_dtype_uint, 16, 'u'}, {"u4", tl_dtype_uint, 32, 'u'},
    {"u8", tl_dtype_uint, 64, 'u'}, {"b1", NULL, 8, 'b'},
};

static TlDType type_at(size_t i) {
  switch (npy_types[i].kind) {
  case 'f':
    return npy_types[i].bits == 16   ? tl_dtype_f16()
           : npy_types[i].bits == 32 ? tl_dtype_f32()
                                     : tl_dtype_f64();
  case 'b':
    return tl_dtype_bool();
  default:
    return npy_types[i].make(npy_types[i].bits);
  }
}

const char *tl_npy_descr(TlDType t) {
  static const char *const full[] = {"<f2", "<f4", "<f8", "|i1", "<i2", "<i4",
                                     "<i8", "|u1", "<u2", "<u4", "<u8", "|b1"};
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (tl_dtype_eq(type_at(i), t))
      return full[i];
  return NULL;
}

/* Bytes per element of a NumPy type (bool takes a byte). */
static size_t elem_bytes(TlDType t) { return t.bits == 1 ? 1 : t.bits / 8; }

/*===--- Header parsing ---------------------------------------------------===*/

typedef struct Cur {
  const char *p, *end;
} Cur;

static void skip_ws(Cur *c) {
  while (c->p < c->end && isspace((unsigned char)*c->p))
    c->p++;
}

static bool eat(Cur *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

/* A quoted string ('...' or "..."), no escapes. */
static bool string_lit(Cur *c, char *out, size_t cap) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return false;
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    if (n + 1 >= cap)
      return false;
    out[n++] = *c->p++;
  }
  if (c->p >= c->end)
    return false;
  c->p++;
  out[n] = 0;
  return true;
}

static bool parse_header(const char *h, size_t len, TlNpy *out, TlErr *err) {
  Cur c = {h, h + len};
  bool have_descr = false, have_order = false, have_shape = false;
  char descr[32];
  if (!eat(&c, '{'))
    return tl_err(err, "malformed .npy header: expected '{'");
  while (!eat(&c, '}')) {
    char key[32];
    if (!string_lit(&c, key, sizeof key) || !eat(&c, ':'))
      return tl_err(err,
                    "malformed .npy header: expected a quoted key and ':'");
    if (!strcmp(key, "descr")) {
      if (!string_lit(&c, descr, sizeof descr))
        return tl_err(err, "malformed .npy header: 'descr' must be a string");
      have_descr = true;
    } else if (!strcmp(key, "fortran_order")) {
      skip_ws(&c);
      if ((size_t)(c.end - c.p) >= 5 && !strncmp(c.p, "False", 5)) {
        c.p += 5;
      } else if ((size_t)(c.end - c.p) >= 4 && !strncmp(c.p, "True", 4)) {
        return tl_err(err, "Fortran-order .npy arrays are not supported (save "
                           "in C order)");
      } else {
        return tl_err(err, "malformed .npy header: 'fortran_order' must be "
                           "True or False");
      }
      have_order = true;
    } else if (!strcmp(key, "shape")) {
      if (!eat(&c, '('))
        return tl_err(err, "malformed .npy header: 'shape' must be a tuple");
      out->rank = 0;
      while (!eat(&c, ')')) {
        skip_ws(&c);
        if (c.p >= c.end || !isdigit((unsigned char)*c.p))
          return tl_err(err, "malformed .npy header: bad shape entry");
        int64_t v = 0;
        while (c.p < c.end && isdigit((unsigned char)*c.p)) {
          if (v > (INT64_MAX - 9) / 10)
            return tl_err(err, "malformed .npy header: shape entry too large");
          v = v * 10 + (*c.p++ - '0');
        }
        if (c.p < c.end && *c.p == 'L')
          c.p++;
        if (out->rank >= TL_NPY_MAX_RANK)
          return tl_err(err,
                        ".npy arrays of more than %d dimensions are not "
                        "supported",
                        TL_NPY_MAX_RANK);
        out->shape[out->rank++] = v;
        if (!eat(&c, ',')) {
          if (!eat(&c, ')'))
            return tl_err(err, "malformed .npy header: bad shape tuple");
          break;
        }
      }
      have_shape = true;
    } else {
      return tl_err(err, "malformed .npy header: unknown key '%s'", key);
    }
    if (!eat(&c, ',')) {
      if (!eat(&c, '}'))
        return tl_err(err, "malformed .npy header: expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return tl_err(err, "malformed .npy header: needs 'descr', 'fortran_order' "
                       "and 'shape'");
  char bo = descr[0];
  const char *code = descr + 1;
  if (bo != '<' && bo != '|' && bo != '=') {
    if (bo == '>')
      return tl_err(err, "big-endian .npy data ('%s') is not supported", descr);
    return tl_err(err, "unsupported .npy dtype '%s'", descr);
  }
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (!strcmp(npy_types[i].descr, code)) {
      if (bo == '|' && npy_types[i].bits > 8)
        break;
      out->dtype = type_at(i);
      return true;
    }
  return tl_err(err,
                "unsupported .npy dtype '%s' (supported: f2 f4 f8 i1 i2 "
                "i4 i8 u1 u2 u4 u8 b1)",
                descr);
}

bool tl_npy_parse(const void *bytes, size_t len, TlNpy *out, TlErr *err) {
  const unsigned char *b = bytes;
  memset(out, 0, sizeof *out);
  if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return tl_err(err, "not a .npy file (bad magic)");
  unsigned major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)b[8] | (size_t)b[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12)
      return tl_err(err, "truncated .npy header");
    hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
           (size_t)b[11] << 24;
    hstart = 12;
  } else {
    return tl_err(err, "unsupported .npy format version %u", major);
  }
  if (hlen > len - hstart)
    return tl_err(err, "truncated .npy header");
  if (!parse_header((const char *)b + hstart, hlen, out, err))
    return false;
  size_t count = 1;
  for (int d = 0; d < out->rank; d++) {
    if (out->shape[d] && count > SIZE_MAX / 16 / (size_t)out->shape[d])
      return tl_err(err, ".npy array too large");
    count *= (size_t)out->shape[d];
  }
  size_t need = count * elem_bytes(out->dtype);
  size_t have = len - hstart - hlen;
  if (have < need)
    return tl_err(err,
                  "truncated .npy data: %zu bytes for %zu elements need "
                  "%zu",
                  have, count, need);
  out->size = need;
  out->data = tl_xmalloc(need ? need : 1);
  memcpy(out->data, b + hstart + hlen, need);
  if (out->dtype.bits == 1) {
    /* NumPy bools are bytes; the VM's bool buffers are bit-packed. */
    unsigned char *packed =
        tl_xcalloc((count + 7) / 8 ? (count + 7) / 8 : 1, 1);
    for (size_t i = 0; i < count; i++)
      if (((unsigned char *)out->data)[i])
        packed[i / 8] |= (unsigned char)(1u << (i % 8));
    tl_free(out->data);
    out->data = packed;
    out->size = (count + 7) / 8;
  }
  return true;
}

bool tl_npy_read(const char *path, TlNpy *out, TlErr *err) {
  memset(out, 0, sizeof *out);
  size_t len;
  char *text = tl_read_file(path, &len, err);
  if (!text)
    return false;
  bool ok = tl_npy_parse(text, len, out, err);
  tl_free(text);
  if (!ok) {
    TlErr e2;
    tl_err(&e2, "'%s': %s", path, err ? err->msg : "");
    if (err)
      *err = e2;
  }
  return ok;
}

bool tl_npy_write(const char *path, const TlNpy *a, TlErr *err) {
  const char *descr = tl_npy_descr(a->dtype);
  if (!descr)
    return tl_err(err, "%s has no NumPy dtype", tl_dtype_name(a->dtype));
  size_t count = 1;
  for (int d = 0; d < a->rank; d++)
    count *= (size_t)a->shape[d];
  size_t want =
      a->dtype.bits == 1 ? (count + 7) / 8 : count * elem_bytes(a->dtype);
  if (a->size != want)
    return tl_err(err, "array of %zu elements needs %zu bytes, not %zu", count,
                  want, a->size);
  TlStr h = {0};
  tl_str_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                descr);
  for (int d = 0; d < a->rank; d++)
    tl_str_printf(&h, "%lld%s", (long long)a->shape[d],
                  a->rank == 1      ? ","
                  : d + 1 < a->rank ? ", "
                                    : "");
  tl_str_puts(&h, "), }");
  /* Pad with spaces so that the data starts at a multiple of 64. */
  while ((10 + h.len + 1) % 64)
    tl_str_putc(&h, ' ');
  tl_str_putc(&h, '\n');
  FILE *f = fopen(path, "wb");
  if (!f) {
    tl_str_free(&h);
    return tl_err(err, "cannot write '%s': %s", path, strerror(errno));
  }
  unsigned char pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           (unsigned char)(h.len & 0xff),
                           (unsigned char)(h.len >> 8)};
  errno = 0;
  bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h.data, 1, h.len, f) == h.len;
  if (a->dtype.bits == 1) {
    for (size_t i = 0; ok && i < count; i++) {
      unsigned char v =
          (((const unsigned char *)a->data)[i / 8] >> (i % 8)) & 1;
      ok = fputc(v, f) != EOF;
    }
  } else if (ok && a->size) {
    ok = fwrite(a->data, 1, a->size, f) == a->size;
  }
  /* The first failure's reason; a full disk may show only at the close. */
  int e = ok ? 0 : errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    e = errno;
  }
  tl_str_free(&h);
  if (!ok)
    return tl_err(err, "cannot write '%s': %s", path, strerror(e ? e : EIO));
  return true;
}

void tl_npy_free(TlNpy *a) {
  tl_free(a->data);
  a->data = NULL;
  a->size = 0;
}
