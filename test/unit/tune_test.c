/* Unit tests for exec/tune: the tuning space (parsing, enumeration,
 * lookup), cache keys, and cache entries written and read back in a
 * scratch directory (argv[1]): hits, misses, and every way an entry can be
 * untrustworthy (truncated at each length, other ingredients, a checksum
 * that does not match, a choice outside the space, a bad time, trailing
 * text, not an entry at all, not a regular file). */
#define _POSIX_C_SOURCE 200809L
#include "tl/tune.h"
#include "unit.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *scratch;

static TlTuneSpace *space_of(const char *a, const char *b) {
  TlTuneSpace *s = tl_tune_space_create();
  CHECK(tl_tune_space_add(s, a, NULL));
  if (b)
    CHECK(tl_tune_space_add(s, b, NULL));
  return s;
}

static void check_add_error(const char *spec, const char *msg) {
  TlTuneSpace *s = space_of("W=2,4", NULL);
  TlErr err = {{0}};
  CHECK(!tl_tune_space_add(s, spec, &err));
  CHECK_EQ_STR(err.msg, msg);
  /* A refused list leaves the space as it was. */
  CHECK_EQ_INT(tl_tune_space_num_params(s), 1);
  CHECK_EQ_INT(tl_tune_space_size(s), 2);
  tl_tune_space_destroy(s);
}

static void test_space(void) {
  TlTuneSpace *s = tl_tune_space_create();
  CHECK_EQ_INT(tl_tune_space_size(s), 1);
  CHECK(tl_tune_space_add(s, "BN=64,128", NULL));
  CHECK(tl_tune_space_add(s, "W=2,4,0x8", NULL));
  CHECK(tl_tune_space_add(s, "S=-1", NULL));
  CHECK_EQ_INT(tl_tune_space_num_params(s), 3);
  CHECK_EQ_INT(tl_tune_space_size(s), 6);
  CHECK_EQ_STR(tl_tune_space_name(s, 1), "W");
  CHECK_EQ_INT(tl_tune_space_find_param(s, "S"), 2);
  CHECK_EQ_INT(tl_tune_space_find_param(s, "G"), -1);
  /* The first parameter varies slowest; every candidate is found at its
   * own index. */
  const char *want[6] = {"BN=64 W=2 S=-1",  "BN=64 W=4 S=-1",
                         "BN=64 W=8 S=-1",  "BN=128 W=2 S=-1",
                         "BN=128 W=4 S=-1", "BN=128 W=8 S=-1"};
  for (size_t i = 0; i < 6; i++) {
    int64_t v[3];
    tl_tune_space_candidate(s, i, v);
    TlStr t = {0};
    tl_tune_space_format(s, v, &t);
    CHECK_EQ_STR(tl_str_cstr(&t), want[i]);
    tl_str_free(&t);
    size_t at = 99;
    CHECK(tl_tune_space_find(s, v, &at));
    CHECK_EQ_INT(at, i);
  }
  int64_t out[3] = {64, 16, -1};
  CHECK(!tl_tune_space_find(s, out, NULL));
  tl_tune_space_destroy(s);
  tl_tune_space_destroy(NULL);

  check_add_error("BN", "expected NAME=V1,V2,..., not 'BN'");
  check_add_error("=64", "'' is not a parameter name (in '=64')");
  check_add_error("2X=1", "'2X' is not a parameter name (in '2X=1')");
  check_add_error("B-N=1", "'B-N' is not a parameter name (in 'B-N=1')");
  check_add_error("BN=", "BN lists no values");
  check_add_error("BN=64,,128", "BN: an empty value in '64,,128'");
  check_add_error("BN=64,", "BN: an empty value in '64,'");
  check_add_error("BN=64,x", "BN: 'x' is not an integer");
  check_add_error("BN=6.5", "BN: '6.5' is not an integer");
  check_add_error("BN= 64", "BN: ' 64' is not an integer");
  check_add_error("BN=99999999999999999999",
                  "BN: '99999999999999999999' is not an integer");
  check_add_error("BN=64,0x40", "BN: 64 is listed twice");
  check_add_error("W=8", "W is tuned twice");

  /* The product of the lists is bounded. */
  TlTuneSpace *big = space_of("A=1,2,3,4,5,6,7,8", "B=1,2,3,4,5,6,7,8");
  CHECK(tl_tune_space_add(big, "C=1,2,3,4,5,6,7,8", NULL));
  CHECK(tl_tune_space_add(big, "D=1,2,3,4,5,6,7,8", NULL));
  TlErr err = {{0}};
  CHECK(!tl_tune_space_add(big, "E=1,2", &err));
  CHECK_EQ_STR(err.msg,
               "E: the space would have 8192 candidates (at most 4096)");
  CHECK_EQ_INT(tl_tune_space_size(big), 4096);
  tl_tune_space_destroy(big);
}

static void make_key(TlTuneKey *k, const char *source, const char *define) {
  TlTuneSpace *s = space_of("BN=64,128", "W=4,8");
  memset(k, 0, sizeof *k);
  tl_tune_key_init(k, source, strlen(source));
  tl_tune_key_add(k, "kernel", "%s", "qmatmul");
  tl_tune_key_add(k, "define", "%s", define);
  tl_tune_key_add_space(k, s);
  tl_tune_key_add(k, "device", "%s", "GPU\nwith a newline");
  tl_tune_space_destroy(s);
}

static void test_key(void) {
  TlTuneKey a, b, c;
  make_key(&a, "tl.kernel @k", "K=1024");
  make_key(&b, "tl.kernel @k", "K=1024");
  CHECK(tl_tune_key_hash(&a) == tl_tune_key_hash(&b));
  CHECK_EQ_STR(tl_str_cstr(&a.lines),
               "source: 12 bytes, fnv1a 0x8a4c5ef17dfbd8f5\n"
               "kernel: qmatmul\n"
               "define: K=1024\n"
               "tune: BN=64,128\n"
               "tune: W=4,8\n"
               "device: GPU?with a newline\n");
  /* The source and each ingredient are part of the key. */
  make_key(&c, "tl.kernel @j", "K=1024");
  CHECK(tl_tune_key_hash(&a) != tl_tune_key_hash(&c));
  tl_tune_key_free(&c);
  make_key(&c, "tl.kernel @k", "K=2048");
  CHECK(tl_tune_key_hash(&a) != tl_tune_key_hash(&c));
  tl_tune_key_free(&a);
  tl_tune_key_free(&b);
  tl_tune_key_free(&c);
}

static void test_dir(void) {
  char *d;
  setenv("TL_CACHE_DIR", "/x/tl-cache", 1);
  setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  setenv("HOME", "/x/home", 1);
  CHECK_EQ_STR(d = tl_tune_cache_dir(), "/x/tl-cache");
  tl_free(d);
  setenv("TL_CACHE_DIR", "", 1);
  CHECK_EQ_STR(d = tl_tune_cache_dir(), "/x/xdg/tl");
  tl_free(d);
  unsetenv("XDG_CACHE_HOME");
  CHECK_EQ_STR(d = tl_tune_cache_dir(), "/x/home/.cache/tl");
  tl_free(d);
  unsetenv("HOME");
  unsetenv("TL_CACHE_DIR");
  CHECK(tl_tune_cache_dir() == NULL);
  TlTuneKey k;
  make_key(&k, "src", "K=1");
  char *p = tl_tune_cache_path("/c", &k);
  char want[64];
  snprintf(want, sizeof want, "/c/tune/%016llx.txt",
           (unsigned long long)tl_tune_key_hash(&k));
  CHECK_EQ_STR(p, want);
  tl_free(p);
  tl_tune_key_free(&k);
}

static char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = tl_xmalloc(1 << 16);
  *n = fread(buf, 1, 1 << 16, f);
  fclose(f);
  return buf;
}

static void write_all(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    fwrite(text, 1, n, f);
    fclose(f);
  }
}

/* The number of entries of a directory, "." and ".." aside. */
static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d)
    return -1;
  for (struct dirent *e; (e = readdir(d));)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* The checksum from its definition (docs/tools.md, "The tune cache"):
 * FNV-1a 64 over the entry's bytes but its checksum line. */
static uint64_t fnv1a(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
  return h;
}

/* The entry of payload (an entry without its checksum line) in out: its
 * first line, the checksum line of the rest, the rest. */
static void seal(const char *payload, char *out, size_t cap) {
  size_t flen = strcspn(payload, "\n") + 1;
  uint64_t h = fnv1a(payload, strlen(payload));
  snprintf(out, cap, "%.*schecksum: fnv1a 0x%016llx\n%s", (int)flen, payload,
           (unsigned long long)h, payload + flen);
}

/* payload with one edit, `from` (which must occur) replaced by `to`. */
static void edit(const char *payload, const char *from, const char *to,
                 char *out, size_t cap) {
  const char *at = strstr(payload, from);
  CHECK(at != NULL);
  if (!at) {
    snprintf(out, cap, "%s", payload);
    return;
  }
  snprintf(out, cap, "%.*s%s%s", (int)(at - payload), payload, to,
           at + strlen(from));
}

static void expect_invalid(const char *path, const TlTuneKey *k,
                           const TlTuneSpace *s, const char *msg) {
  int64_t v[2] = {-7, -7};
  double ms = -7;
  TlErr err = {{0}};
  CHECK_EQ_INT(tl_tune_cache_read(path, k, s, v, &ms, &err),
               TL_TUNE_CACHE_INVALID);
  if (msg && !strstr(err.msg, msg)) {
    unit_failures++;
    fprintf(stderr, "expected '%s' in '%s'\n", msg, err.msg);
  }
  /* Nothing of an untrusted entry is used. */
  CHECK(v[0] == -7 && v[1] == -7 && ms == -7);
}

static void test_entries(void) {
  char dir[512], path[600], text[4096], payload[4096], edited[4096];
  snprintf(dir, sizeof dir, "%s/cache", scratch);
  TlTuneSpace *s = space_of("BN=64,128", "W=4,8");
  TlTuneKey k;
  make_key(&k, "tl.kernel @k", "K=1024");
  char *p = tl_tune_cache_path(dir, &k);
  int64_t v[2];
  double ms;
  TlErr err = {{0}};

  /* A miss creates nothing; the first write creates the directories. */
  CHECK_EQ_INT(tl_tune_cache_read(p, &k, s, v, &ms, &err), TL_TUNE_CACHE_MISS);
  int64_t best[2] = {128, 4};
  CHECK(tl_tune_cache_write(p, &k, s, best, 0.1174, &err));
  CHECK_EQ_INT(tl_tune_cache_read(p, &k, s, v, &ms, &err), TL_TUNE_CACHE_HIT);
  CHECK(v[0] == 128 && v[1] == 4 && ms == 0.1174);
  snprintf(path, sizeof path, "%s/tune", dir);
  CHECK_EQ_INT(count_files(path), 1); /* no temporary file left */

  /* The entry shows its ingredients, under a checksum of all the rest. */
  size_t n = 0;
  char *entry = read_all(p, &n);
  CHECK(entry != NULL);
  if (!entry)
    return;
  snprintf(payload, sizeof payload,
           "tl tune cache 2\n"
           "key: %016llx\n"
           "%s"
           "best: BN=128 W=4\n"
           "ms: 0.1174\n",
           (unsigned long long)tl_tune_key_hash(&k), tl_str_cstr(&k.lines));
  seal(payload, text, sizeof text);
  CHECK(n == strlen(text) && !memcmp(entry, text, n));
  entry[n] = 0;

  /* Every truncation is refused. */
  for (size_t len = 0; len < n; len++) {
    write_all(p, entry, len);
    expect_invalid(p, &k, s, NULL);
  }
  /* Other ingredients: another key's entry copied under this name. */
  TlTuneKey other;
  make_key(&other, "tl.kernel @k", "K=2048");
  snprintf(path, sizeof path, "%s/other.txt", scratch);
  CHECK(tl_tune_cache_write(path, &other, s, best, 1.0, &err));
  size_t on = 0;
  char *otext = read_all(path, &on);
  write_all(p, otext, on);
  expect_invalid(p, &k, s, "it was tuned for other ingredients: 'key: ");
  tl_free(otext);
  tl_tune_key_free(&other);
  /* Edited lines, the checksum made again for each so that the checks
   * behind it see the edit (as a hash collision would let them). */
  const struct {
    const char *from, *to, *msg;
  } edits[] = {
      {"define: K=1024", "define: K=1025",
       "other ingredients: 'define: K=1025' where this run has 'define: "
       "K=1024'"},
      {"tl tune cache 2", "tl tune cache 1", "not a tune cache entry"},
      {"best: BN=128 W=4", "best: BN=96 W=4",
       "its choice BN=96 W=4 lies outside the space"},
      {"best: BN=128 W=4", "best: W=4 BN=128", "names other parameters"},
      {"best: BN=128 W=4", "best: BN=128", "names other parameters"},
      {"best: BN=128 W=4", "best: BN=128 W=4 S=2", "names other parameters"},
      {"best: BN=128 W=4", "best: BN=128 W=four", "gives W the value 'four'"},
      {"best: BN=128 W=4", "choice: BN=128 W=4", "no 'best:' line"},
      {"ms: 0.1174", "ms: -1", "its time '-1' is not a positive number"},
      {"ms: 0.1174", "ms: inf", "its time 'inf'"},
      {"ms: 0.1174", "ms: 0.1 ms", "its time '0.1 ms'"},
      {"ms: 0.1174", "time: 0.1174", "no 'ms:' line"},
      {"ms: 0.1174\n", "ms: 0.1174\nmore\n", "text after its last line"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    edit(payload, edits[i].from, edits[i].to, edited, sizeof edited);
    seal(edited, text, sizeof text);
    write_all(p, text, strlen(text));
    expect_invalid(p, &k, s, edits[i].msg);
  }
  /* The same edits under the entry's own checksum, and edits that keep
   * every line well formed (a choice in the space, another time): the
   * checksum refuses them all but the first line's. */
  const struct {
    const char *from, *to;
  } unsealed[] = {
      {"define: K=1024", "define: K=1025"},
      {"best: BN=128 W=4", "best: BN=64 W=4"},
      {"W=4\n", "W=8\n"},
      {"ms: 0.1174", "ms: 0.0174"},
      {"ms: 0.1174\n", "ms: 0.1174\n\n"},
      {"key: ", "kez: "},
  };
  for (size_t i = 0; i < sizeof unsealed / sizeof *unsealed; i++) {
    edit(entry, unsealed[i].from, unsealed[i].to, text, sizeof text);
    write_all(p, text, strlen(text));
    expect_invalid(p, &k, s, "its contents do not match its checksum");
  }
  edit(entry, "tl tune cache 2", "tl tune cache 1", text, sizeof text);
  write_all(p, text, strlen(text));
  expect_invalid(p, &k, s, "not a tune cache entry");
  /* A checksum line missing or not as the writer prints it. */
  write_all(p, payload, strlen(payload));
  expect_invalid(p, &k, s, "no 'checksum:' line after its first");
  edit(entry, "checksum: fnv1a 0x", "checksum: fnv1a 0X", text, sizeof text);
  write_all(p, text, strlen(text));
  expect_invalid(p, &k, s, "no 'checksum:' line after its first");
  write_all(p, "garbage", 7);
  expect_invalid(p, &k, s, "not a tune cache entry");
  /* A rewrite replaces an untrusted entry. */
  CHECK(tl_tune_cache_write(p, &k, s, best, 0.5, &err));
  CHECK_EQ_INT(tl_tune_cache_read(p, &k, s, v, &ms, &err), TL_TUNE_CACHE_HIT);
  CHECK(ms == 0.5);
  /* The same key in another space does not read it. */
  TlTuneSpace *s2 = space_of("BN=64,128", "W=8,16");
  expect_invalid(p, &k, s2, "its choice BN=128 W=4 lies outside the space");
  tl_tune_space_destroy(s2);
  /* A directory in the way of the entry's file, and a file in the way of
   * its directory. */
  snprintf(path, sizeof path, "%s/adir", scratch);
  CHECK(mkdir(path, 0777) == 0);
  expect_invalid(path, &k, s, "it is not a regular file (a directory)");
  CHECK(!tl_tune_cache_write(path, &k, s, best, 1.0, &err));
  CHECK(strstr(err.msg, "cannot rename") != NULL);
  CHECK_EQ_INT(count_files(path), 0);
  /* A FIFO in the entry's place: not opened for a read that waits for a
   * writer (this test would hang), and replaced by the next write. */
  snprintf(path, sizeof path, "%s/fifo.txt", scratch);
  CHECK(mkfifo(path, 0666) == 0);
  expect_invalid(path, &k, s, "it is not a regular file (a FIFO)");
  CHECK(tl_tune_cache_write(path, &k, s, best, 1.0, &err));
  CHECK_EQ_INT(tl_tune_cache_read(path, &k, s, v, &ms, &err),
               TL_TUNE_CACHE_HIT);
  snprintf(path, sizeof path, "%s/afile", scratch);
  write_all(path, "x", 1);
  snprintf(path, sizeof path, "%s/afile/tune/e.txt", scratch);
  CHECK(!tl_tune_cache_write(path, &k, s, best, 1.0, &err));
  CHECK(strstr(err.msg, "afile") != NULL);
  tl_free(entry);
  tl_free(p);
  tl_tune_key_free(&k);
  tl_tune_space_destroy(s);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: unit_tune SCRATCH-DIR\n");
    return 2;
  }
  scratch = argv[1];
  test_space();
  test_key();
  test_dir();
  test_entries();
  return unit_report();
}
