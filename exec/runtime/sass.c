/* The SASS reader (include/tl/sass.h): the text cuobjdump -sass or
 * nvdisasm prints, read line by line into a function's instructions
 * (address, mnemonic, class, a branch's target), its loops found from the
 * backward branches, and the hot one counted by class and by opcode.
 *
 * The lines it knows, everything else skipped (<...> stands for a C
 * comment around the address and the encoding, which cannot be written
 * inside this one):
 *
 *     Function : qmatmul_m8                          cuobjdump's header
 *     .text.qmatmul_m8:                              nvdisasm's header
 *     .L_x_12:                                       nvdisasm's label
 *     <1340>   @!P2 BRA 0x1830 ;   <0x...>           an instruction
 *     [B------:R-:W-:Y:S04]  <0470>  @P0 BRA `(.L_x_0) ;
 *
 * The text is read within [text, text + len) only: it need not end in a
 * NUL, and any bytes are fine (the fuzzer feeds it anything). */
#include "tl/sass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===--- Classes ----------------------------------------------------------===*/

/* The class of each mnemonic; the first matching row wins. Columns: the
 * pattern (a mnemonic; a prefix of mnemonics when it ends in '*', a
 * suffix when it starts with '*'), its class. Uniform-datapath ops
 * (U...) match no row but the copies' and the cluster barrier's, and so
 * are TL_SASS_OTHER with every mnemonic no row names. */
static const struct {
  const char *pattern;
  TlSassClass cls;
} rules[] = {
    /* HMMA IMMA BMMA DMMA HGMMA IGMMA QGMMA BGMMA UTCHMMA ... */
    {"*MMA", TL_SASS_MMA},
    /* Bits and conversions: what unpacking low-bit weights costs. */
    {"LOP3", TL_SASS_BIT},
    {"LOP", TL_SASS_BIT},
    {"PRMT", TL_SASS_BIT},
    {"SHF", TL_SASS_BIT},
    {"SHL", TL_SASS_BIT},
    {"SHR", TL_SASS_BIT},
    {"BFE", TL_SASS_BIT},
    {"BFI", TL_SASS_BIT},
    {"BMSK", TL_SASS_BIT},
    {"BREV", TL_SASS_BIT},
    {"FLO", TL_SASS_BIT},
    {"POPC", TL_SASS_BIT},
    {"F2FP", TL_SASS_BIT},
    {"F2F", TL_SASS_BIT},
    {"F2I", TL_SASS_BIT},
    {"F2IP", TL_SASS_BIT},
    {"I2F", TL_SASS_BIT},
    {"I2FP", TL_SASS_BIT},
    {"I2I", TL_SASS_BIT},
    {"I2IP", TL_SASS_BIT},
    {"FRND", TL_SASS_BIT},
    /* Packed half-precision arithmetic (f16x2 and, with .BF16, bf16x2). */
    {"HADD2", TL_SASS_F16X2},
    {"HFMA2", TL_SASS_F16X2},
    {"HMUL2", TL_SASS_F16X2},
    {"HMNMX2", TL_SASS_F16X2},
    {"HSET2", TL_SASS_F16X2},
    {"HSETP2", TL_SASS_F16X2},
    /* f32 arithmetic (FADD32I..., the packed FADD2... of later SMs). */
    {"FADD*", TL_SASS_F32},
    {"FMUL*", TL_SASS_F32},
    {"FFMA*", TL_SASS_F32},
    {"FMNMX*", TL_SASS_F32},
    {"FSET", TL_SASS_F32},
    {"FSETP", TL_SASS_F32},
    {"FSEL", TL_SASS_F32},
    {"FCHK", TL_SASS_F32},
    {"FSWZADD", TL_SASS_F32},
    {"MUFU", TL_SASS_F32},
    {"RRO", TL_SASS_F32},
    /* Plain integer ops: addresses, indices, loop counters, moves, and
     * the predicate logic they feed. */
    {"IMAD*", TL_SASS_INTEGER},
    {"IMUL*", TL_SASS_INTEGER},
    {"IADD*", TL_SASS_INTEGER},
    {"IMNMX", TL_SASS_INTEGER},
    {"VIMNMX*", TL_SASS_INTEGER},
    {"VIADD*", TL_SASS_INTEGER},
    {"IABS", TL_SASS_INTEGER},
    {"ISETP", TL_SASS_INTEGER},
    {"ISET", TL_SASS_INTEGER},
    {"ICMP", TL_SASS_INTEGER},
    {"ISCADD*", TL_SASS_INTEGER},
    {"IDP*", TL_SASS_INTEGER},
    {"XMAD", TL_SASS_INTEGER},
    {"LEA", TL_SASS_INTEGER},
    {"SEL", TL_SASS_INTEGER},
    {"MOV", TL_SASS_INTEGER},
    {"MOV32I", TL_SASS_INTEGER},
    {"CS2R", TL_SASS_INTEGER},
    {"PLOP3", TL_SASS_INTEGER},
    {"PSETP", TL_SASS_INTEGER},
    {"P2R", TL_SASS_INTEGER},
    {"R2P", TL_SASS_INTEGER},
    /* Shared memory (STAS and REDAS: a cluster's distributed shared). */
    {"LDS*", TL_SASS_SHARED},
    {"STS*", TL_SASS_SHARED},
    {"ATOMS", TL_SASS_SHARED},
    {"STAS", TL_SASS_SHARED},
    {"REDAS", TL_SASS_SHARED},
    /* Global memory (generic and local, spills, too), the copies to shared
     * memory and their waits (LDGSTS LDGDEPBAR DEPBAR, the TMA's UTMA...,
     * the bulk copies' UBLK...). */
    {"LDG*", TL_SASS_GLOBAL},
    {"STG", TL_SASS_GLOBAL},
    {"LD", TL_SASS_GLOBAL},
    {"ST", TL_SASS_GLOBAL},
    {"LDL", TL_SASS_GLOBAL},
    {"STL", TL_SASS_GLOBAL},
    {"RED", TL_SASS_GLOBAL},
    {"REDG", TL_SASS_GLOBAL},
    {"ATOM", TL_SASS_GLOBAL},
    {"ATOMG", TL_SASS_GLOBAL},
    {"CCTL*", TL_SASS_GLOBAL},
    {"DEPBAR", TL_SASS_GLOBAL},
    {"UTMA*", TL_SASS_GLOBAL},
    {"UBLK*", TL_SASS_GLOBAL},
    /* Barriers, mbarriers, fences, convergence. */
    {"BAR", TL_SASS_SYNC},
    {"SYNCS", TL_SASS_SYNC},
    {"MEMBAR", TL_SASS_SYNC},
    {"FENCE", TL_SASS_SYNC},
    {"ERRBAR", TL_SASS_SYNC},
    {"CGAERRBAR", TL_SASS_SYNC},
    {"WARPSYNC", TL_SASS_SYNC},
    {"WARPGROUP", TL_SASS_SYNC},
    {"ARRIVES", TL_SASS_SYNC},
    {"BSSY", TL_SASS_SYNC},
    {"BSYNC", TL_SASS_SYNC},
    {"UCGABAR*", TL_SASS_SYNC},
};

static const char *const class_names[TL_SASS_NUM_CLASSES] = {
    "mma",    "bit/convert", "f16x2", "f32",   "integer",
    "shared", "global",      "sync",  "other",
};

const char *tl_sass_class_name(TlSassClass c) {
  return (unsigned)c < TL_SASS_NUM_CLASSES ? class_names[c] : "?";
}

static bool matches(const char *pattern, const char *m) {
  size_t pn = strlen(pattern), mn = strlen(m);
  if (pattern[0] == '*')
    return mn >= pn - 1 && !memcmp(m + mn - (pn - 1), pattern + 1, pn - 1);
  if (pattern[pn - 1] == '*')
    return mn >= pn - 1 && !memcmp(m, pattern, pn - 1);
  return !strcmp(pattern, m);
}

TlSassClass tl_sass_classify(const char *mnemonic) {
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (matches(rules[i].pattern, mnemonic))
      return rules[i].cls;
  return TL_SASS_OTHER;
}

/*===--- Lines ------------------------------------------------------------===*/

typedef struct Insn {
  uint64_t addr;
  size_t order; /* its line's rank, to sort stably */
  char mnemonic[TL_SASS_MNEMONIC_MAX];
  TlSassClass cls;
  /* A branch's target: an address, or (nvdisasm) a label to resolve. */
  enum { NO_TARGET, ADDR_TARGET, LABEL_TARGET } target_kind;
  uint64_t target;
  const char *label;
  size_t label_len;
} Insn;

/* A label names the instruction read after it (its index). */
typedef struct Label {
  const char *name;
  size_t len, insn;
} Label;

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static bool upper_or_digit(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static const char *skip_blank(const char *p, const char *e) {
  while (p < e && blank(*p))
    p++;
  return p;
}

/* 1 to 16 hex digits at p; the end of them, or NULL. */
static const char *hex(const char *p, const char *e, uint64_t *v) {
  const char *start = p;
  *v = 0;
  for (; p < e && p - start < 17; p++) {
    char c = *p;
    unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                 : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                 : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                        : 16;
    if (d == 16)
      break;
    *v = *v << 4 | d;
  }
  return p > start && p - start <= 16 ? p : NULL;
}

static bool starts(const char *p, const char *e, const char *word) {
  size_t n = strlen(word);
  return (size_t)(e - p) >= n && !memcmp(p, word, n);
}

/* The target of a branch whose operands start at p: the last operand, an
 * address (0x1340) or a label (`(.L_x_3)); anything else (a register:
 * an indirect branch) is none. */
static void branch_target(const char *p, const char *e, Insn *in) {
  const char *end = p;
  while (end < e && *end != ';' && !starts(end, e, "/*"))
    end++;
  for (const char *q = p; q < end; q++)
    if (*q == ',')
      p = q + 1;
  p = skip_blank(p, end);
  while (end > p && blank(end[-1]))
    end--;
  uint64_t v;
  const char *q;
  if (starts(p, end, "0x") && (q = hex(p + 2, end, &v)) && q == end) {
    in->target_kind = ADDR_TARGET;
    in->target = v;
  } else if (starts(p, end, "`(") && end - p > 3 && end[-1] == ')') {
    in->target_kind = LABEL_TARGET;
    in->label = p + 2;
    in->label_len = (size_t)(end - 1 - (p + 2));
  }
}

/* An instruction line (p..e trimmed): [SCHED] <ADDR> [{] [@GUARD]
 * MNEMONIC[.MOD...] OPERANDS ; <ENCODING>, the address and the encoding in
 * C comments. */
static bool parse_insn(const char *p, const char *e, Insn *in) {
  if (p < e && *p == '[') {
    p = memchr(p, ']', (size_t)(e - p));
    if (!p)
      return false;
    p = skip_blank(p + 1, e);
  }
  uint64_t addr;
  if (!starts(p, e, "/*") || !(p = hex(p + 2, e, &addr)) || !starts(p, e, "*/"))
    return false;
  p = skip_blank(p + 2, e);
  if (p < e && *p == '{') /* dual issue, on old SMs */
    p = skip_blank(p + 1, e);
  /* A branch under the never-true guard @!PT or @!UPT is never taken. */
  bool never = false;
  if (p < e && *p == '@') {
    const char *g = ++p;
    while (p < e && !blank(*p))
      p++;
    never = (p - g == 3 && !memcmp(g, "!PT", 3)) ||
            (p - g == 4 && !memcmp(g, "!UPT", 4));
    p = skip_blank(p, e);
  }
  const char *m = p;
  if (p >= e || *p < 'A' || *p > 'Z')
    return false;
  while (p < e && upper_or_digit(*p))
    p++;
  size_t n = (size_t)(p - m);
  if (n >= TL_SASS_MNEMONIC_MAX ||
      (p < e && *p != '.' && *p != ';' && !blank(*p)))
    return false;
  memset(in, 0, sizeof *in);
  memcpy(in->mnemonic, m, n);
  in->addr = addr;
  in->cls = tl_sass_classify(in->mnemonic);
  in->target_kind = NO_TARGET;
  if (!never && !strcmp(in->mnemonic, "BRA")) {
    while (p < e && *p == '.') /* modifiers: BRA.U, BRA.DIV */
      for (p++; p < e && (upper_or_digit(*p) || (*p >= 'a' && *p <= 'z')); p++)
        ;
    branch_target(p, e, in);
  }
  return true;
}

/* A function header's name: `Function : NAME` or `.text.NAME:`. */
static bool parse_header(const char *p, const char *e, const char **name,
                         size_t *len) {
  if (starts(p, e, "Function")) {
    p = skip_blank(p + 8, e);
    if (p >= e || *p != ':')
      return false;
    *name = p = skip_blank(p + 1, e);
    while (p < e && !blank(*p))
      p++;
    *len = (size_t)(p - *name);
    return *len > 0;
  }
  if (starts(p, e, ".text.") && e - p > 7 && e[-1] == ':' &&
      !memchr(p, ' ', (size_t)(e - p)) && !memchr(p, '\t', (size_t)(e - p))) {
    *name = p + 6;
    *len = (size_t)(e - 1 - *name);
    return true;
  }
  return false;
}

/* A label line: one word ending in ':' (.L_x_12:). */
static bool parse_label(const char *p, const char *e, Label *l) {
  if (e - p < 2 || e[-1] != ':')
    return false;
  for (const char *q = p; q < e - 1; q++)
    if (blank(*q) || *q == ':')
      return false;
  l->name = p;
  l->len = (size_t)(e - 1 - p);
  return true;
}

/*===--- Loops ------------------------------------------------------------===*/

typedef struct Loop {
  uint64_t start, end;
  size_t first, last; /* its instructions: sorted[first..last) */
  unsigned mma;
} Loop;

static int by_address(const void *a, const void *b) {
  const Insn *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

static int by_count(const void *a, const void *b) {
  const TlSassOpcode *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The first instruction at or after addr (lower bound), or after it
 * (upper bound), in instructions sorted by address. */
static size_t bound(const Insn *s, size_t n, uint64_t addr, bool upper) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s[mid].addr < addr || (upper && s[mid].addr == addr))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The hot loop among loops[0..n) (n >= 1): a loop holding another loop
 * with as many mma instructions is not it, as the inner one's iterations
 * are where those run (its other instructions run once a run of the inner
 * loop); of the rest, the most mma instructions, then the most
 * instructions, then the lowest address. With no mma anywhere this is the
 * innermost loop with the most instructions. */
static const Loop *hot_loop(const Loop *loops, size_t n) {
  const Loop *best = NULL;
  for (size_t i = 0; i < n; i++) {
    const Loop *l = &loops[i];
    bool outer = false;
    for (size_t j = 0; j < n && !outer; j++)
      outer = j != i && loops[j].start >= l->start && loops[j].end <= l->end &&
              loops[j].mma == l->mma;
    if (outer)
      continue;
    size_t count = l->last - l->first,
           best_count = best ? best->last - best->first : 0;
    if (!best || l->mma > best->mma ||
        (l->mma == best->mma &&
         (count > best_count ||
          (count == best_count && l->start < best->start))))
      best = l;
  }
  return best;
}

TlSassStatus tl_sass_hot_loop(const char *text, size_t len,
                              const char *function, TlSassLoop *out,
                              TlErr *err) {
  memset(out, 0, sizeof *out);
  if (!text)
    text = "", len = 0;
  TL_VEC(Insn) insns = {0};
  TL_VEC(Label) labels = {0};
  TL_VEC(Loop) loops = {0};
  TlSassStatus status = TL_SASS_NO_CODE;
  /* Code before the first header belongs to no function; without any
   * header the whole text is the one function, whatever its name. */
  bool any_header = false, found = false, in = true;
  size_t lines = 0;
  for (const char *p = text, *end = text + len; p < end; lines++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end, *s = skip_blank(p, e);
    while (e > s && blank(e[-1]))
      e--;
    p = nl ? nl + 1 : end;
    const char *name;
    size_t n;
    Insn insn;
    Label label;
    if (parse_header(s, e, &name, &n)) {
      if (!any_header)
        insns.len = labels.len = 0;
      in = function
               ? !found && strlen(function) == n && !memcmp(function, name, n)
               : !any_header;
      found |= in;
      any_header = true;
    } else if (!in) {
      continue;
    } else if (parse_insn(s, e, &insn)) {
      insn.order = lines;
      tl_vec_push(&insns, insn);
    } else if (parse_label(s, e, &label)) {
      label.insn = insns.len;
      tl_vec_push(&labels, label);
    }
  }
  if (function && any_header && !found) {
    tl_err(err, "no function '%s' in the disassembly", function);
    goto out;
  }
  if (!insns.len) {
    tl_err(err, "no instructions in the disassembly");
    goto out;
  }
  out->function_instructions = (unsigned)insns.len;
  /* nvdisasm's labels become addresses (the first of a name counts). */
  for (size_t i = 0; i < insns.len; i++) {
    Insn *b = &insns.data[i];
    if (b->target_kind != LABEL_TARGET)
      continue;
    b->target_kind = NO_TARGET;
    for (size_t j = 0; j < labels.len; j++)
      if (labels.data[j].len == b->label_len &&
          !memcmp(labels.data[j].name, b->label, b->label_len)) {
        if (labels.data[j].insn < insns.len) {
          b->target_kind = ADDR_TARGET;
          b->target = insns.data[labels.data[j].insn].addr;
        }
        break;
      }
  }
  Insn *sorted = insns.data;
  size_t n = insns.len;
  qsort(sorted, n, sizeof *sorted, by_address);
  /* A loop per backward branch to an instruction, those to one target
   * being one loop that ends at the last of them. A branch to itself (the
   * trap after the last EXIT) is no loop. */
  for (size_t i = 0; i < n; i++) {
    const Insn *b = &sorted[i];
    if (b->target_kind != ADDR_TARGET || b->target >= b->addr)
      continue;
    size_t at = bound(sorted, n, b->target, false);
    if (at == n || sorted[at].addr != b->target)
      continue;
    size_t j = 0;
    while (j < loops.len && loops.data[j].start != b->target)
      j++;
    if (j == loops.len) {
      Loop l = {b->target, b->addr, 0, 0, 0};
      tl_vec_push(&loops, l);
    } else if (loops.data[j].end < b->addr) {
      loops.data[j].end = b->addr;
    }
  }
  if (!loops.len) {
    status = TL_SASS_NO_LOOP;
    tl_err(err,
           "no loop found in %zu instructions (no branch back to an earlier "
           "instruction)",
           n);
    goto out;
  }
  for (size_t i = 0; i < loops.len; i++) {
    Loop *l = &loops.data[i];
    l->first = bound(sorted, n, l->start, false);
    l->last = bound(sorted, n, l->end, true);
    for (size_t k = l->first; k < l->last; k++)
      l->mma += sorted[k].cls == TL_SASS_MMA;
  }
  const Loop *hot = hot_loop(loops.data, loops.len);
  out->start = hot->start;
  out->end = hot->end;
  out->instructions = (unsigned)(hot->last - hot->first);
  TL_VEC(TlSassOpcode) ops = {0};
  for (size_t k = hot->first; k < hot->last; k++) {
    const Insn *in_loop = &sorted[k];
    out->classes[in_loop->cls]++;
    size_t j = 0;
    while (j < ops.len && strcmp(ops.data[j].name, in_loop->mnemonic))
      j++;
    if (j == ops.len) {
      TlSassOpcode op = {{0}, 0};
      memcpy(op.name, in_loop->mnemonic, sizeof op.name);
      tl_vec_push(&ops, op);
    }
    ops.data[j].count++;
  }
  qsort(ops.data, ops.len, sizeof *ops.data, by_count);
  out->opcodes = ops.data;
  out->num_opcodes = ops.len;
  status = TL_SASS_FOUND;
out:
  tl_vec_free(&insns);
  tl_vec_free(&labels);
  tl_vec_free(&loops);
  return status;
}

void tl_sass_loop_free(TlSassLoop *l) {
  if (!l)
    return;
  tl_free(l->opcodes);
  memset(l, 0, sizeof *l);
}
