/* Unit tests for the SASS reader (exec/runtime/sass.c): the hot loop of a
 * real disassembly (argv[1]: cuobjdump -sass of kernels/qmatmul_m8.tl
 * with its default i4 weights, for sm_90) counted opcode by opcode; the
 * classes; the loop rule on small made-up texts (nested loops, several back
 * edges, no mma, several functions, nvdisasm's labels); and malformed text
 * (empty, garbage, no loop, branches to nowhere, every cut of the real text),
 * read from buffers of exactly their length so that a read past the end is
 * ASan's error. */
#define _POSIX_C_SOURCE 200809L
#include "tl/sass.h"
#include "unit.h"

#include <stdlib.h>

/* A copy of s without its NUL. */
static char *exact(const char *s, size_t n) {
  char *p = tl_xmalloc(n ? n : 1);
  memcpy(p, s, n);
  return p;
}

/* The counts of a found loop agree with one another: by class, by opcode
 * and in all, and the opcodes are sorted and distinct. */
static void check_sums(const TlSassLoop *l) {
  unsigned by_class = 0, by_opcode = 0, again[TL_SASS_NUM_CLASSES] = {0};
  for (int c = 0; c < TL_SASS_NUM_CLASSES; c++)
    by_class += l->classes[c];
  for (size_t i = 0; i < l->num_opcodes; i++) {
    by_opcode += l->opcodes[i].count;
    again[tl_sass_classify(l->opcodes[i].name)] += l->opcodes[i].count;
    if (i)
      CHECK(l->opcodes[i - 1].count > l->opcodes[i].count ||
            (l->opcodes[i - 1].count == l->opcodes[i].count &&
             strcmp(l->opcodes[i - 1].name, l->opcodes[i].name) < 0));
  }
  CHECK_EQ_INT(by_class, l->instructions);
  CHECK_EQ_INT(by_opcode, l->instructions);
  CHECK(!memcmp(again, l->classes, sizeof again));
  CHECK(l->start <= l->end);
  CHECK(l->instructions <= l->function_instructions);
}

static TlSassStatus read_text(const char *s, const char *function,
                              TlSassLoop *l, TlErr *err) {
  size_t n = strlen(s);
  char *p = exact(s, n);
  TlSassStatus st = tl_sass_hot_loop(p, n, function, l, err);
  tl_free(p);
  if (st == TL_SASS_FOUND)
    check_sums(l);
  return st;
}

static unsigned opcode_count(const TlSassLoop *l, const char *name) {
  for (size_t i = 0; i < l->num_opcodes; i++)
    if (!strcmp(l->opcodes[i].name, name))
      return l->opcodes[i].count;
  return 0;
}


static void test_classes(void) {
  static const struct {
    const char *mnemonic;
    TlSassClass cls;
  } cases[] = {
      {"HMMA", TL_SASS_MMA},         {"HGMMA", TL_SASS_MMA},
      {"IMMA", TL_SASS_MMA},         {"QGMMA", TL_SASS_MMA},
      {"BMMA", TL_SASS_MMA},         {"UTCHMMA", TL_SASS_MMA},
      {"LOP3", TL_SASS_BIT},         {"PRMT", TL_SASS_BIT},
      {"SHF", TL_SASS_BIT},          {"F2FP", TL_SASS_BIT},
      {"I2F", TL_SASS_BIT},          {"I2FP", TL_SASS_BIT},
      {"HADD2", TL_SASS_F16X2},      {"HFMA2", TL_SASS_F16X2},
      {"HMNMX2", TL_SASS_F16X2},     {"FADD", TL_SASS_F32},
      {"FFMA", TL_SASS_F32},         {"FMUL32I", TL_SASS_F32},
      {"MUFU", TL_SASS_F32},         {"IMAD", TL_SASS_INTEGER},
      {"IADD3", TL_SASS_INTEGER},    {"VIADD", TL_SASS_INTEGER},
      {"LEA", TL_SASS_INTEGER},      {"SEL", TL_SASS_INTEGER},
      {"MOV", TL_SASS_INTEGER},      {"ISETP", TL_SASS_INTEGER},
      {"LDS", TL_SASS_SHARED},       {"LDSM", TL_SASS_SHARED},
      {"STS", TL_SASS_SHARED},       {"STSM", TL_SASS_SHARED},
      {"LDG", TL_SASS_GLOBAL},       {"LDGSTS", TL_SASS_GLOBAL},
      {"LDGDEPBAR", TL_SASS_GLOBAL}, {"DEPBAR", TL_SASS_GLOBAL},
      {"STG", TL_SASS_GLOBAL},       {"UTMALDG", TL_SASS_GLOBAL},
      {"UBLKCP", TL_SASS_GLOBAL},    {"LDL", TL_SASS_GLOBAL},
      {"BAR", TL_SASS_SYNC},         {"SYNCS", TL_SASS_SYNC},
      {"MEMBAR", TL_SASS_SYNC},      {"WARPSYNC", TL_SASS_SYNC},
      {"WARPGROUP", TL_SASS_SYNC},   {"BRA", TL_SASS_OTHER},
      {"EXIT", TL_SASS_OTHER},       {"ULOP3", TL_SASS_OTHER},
      {"UIADD3", TL_SASS_OTHER},     {"S2R", TL_SASS_OTHER},
      {"REDUX", TL_SASS_OTHER},      {"LDC", TL_SASS_OTHER},
      {"NOTANOP", TL_SASS_OTHER},    {"", TL_SASS_OTHER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (tl_sass_classify(cases[i].mnemonic) != cases[i].cls)
      fprintf(stderr, "class of '%s'\n", cases[i].mnemonic);
    CHECK_EQ_INT(tl_sass_classify(cases[i].mnemonic), cases[i].cls);
  }
  CHECK_EQ_STR(tl_sass_class_name(TL_SASS_MMA), "mma");
  CHECK_EQ_STR(tl_sass_class_name(TL_SASS_BIT), "bit/convert");
  CHECK_EQ_STR(tl_sass_class_name(TL_SASS_OTHER), "other");
  CHECK_EQ_STR(tl_sass_class_name(TL_SASS_NUM_CLASSES), "?");
}

/* kernels/qmatmul_m8.tl's main loop: its k-steps of 32 HMMA. */
static void test_sample(const char *path) {
  size_t len = 0;
  char *text = tl_read_file(path, &len, NULL);
  CHECK(text != NULL);
  if (!text)
    return;
  static const struct {
    const char *name;
    unsigned count;
  } want[] = {{"LOP3", 132}, {"HADD2", 72}, {"HFMA2", 64},  {"IMAD", 34},
              {"HMMA", 32},  {"SHF", 32},   {"LDS", 22},    {"IADD3", 19},
              {"FADD", 16},  {"FMUL", 16},  {"LDGSTS", 13}, {"SEL", 12},
              {"LDSM", 4},   {"LEA", 4},    {"BRA", 3},     {"ISETP", 3},
              {"VIADD", 2},  {"BAR", 1},    {"DEPBAR", 1},  {"LDGDEPBAR", 1}};
  const char *names[] = {"qmatmul_m8", NULL};
  for (int k = 0; k < 2; k++) {
    TlSassLoop l;
    TlErr err = {{0}};
    char *p = exact(text, len);
    CHECK_EQ_INT(tl_sass_hot_loop(p, len, names[k], &l, &err), TL_SASS_FOUND);
    tl_free(p);
    check_sums(&l);
    CHECK_EQ_INT(l.start, 0x1340);
    CHECK_EQ_INT(l.end, 0x3160);
    CHECK_EQ_INT(l.instructions, 483);
    CHECK_EQ_INT(l.num_opcodes, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0] && i < l.num_opcodes;
         i++) {
      CHECK_EQ_STR(l.opcodes[i].name, want[i].name);
      CHECK_EQ_INT(l.opcodes[i].count, want[i].count);
    }
    CHECK_EQ_INT(l.classes[TL_SASS_MMA], 32);
    CHECK_EQ_INT(l.classes[TL_SASS_BIT], 164);
    CHECK_EQ_INT(l.classes[TL_SASS_F16X2], 136);
    CHECK_EQ_INT(l.classes[TL_SASS_F32], 32);
    CHECK_EQ_INT(l.classes[TL_SASS_INTEGER], 74);
    CHECK_EQ_INT(l.classes[TL_SASS_SHARED], 26);
    CHECK_EQ_INT(l.classes[TL_SASS_GLOBAL], 15);
    CHECK_EQ_INT(l.classes[TL_SASS_SYNC], 1);
    CHECK_EQ_INT(l.classes[TL_SASS_OTHER], 3);
    tl_sass_loop_free(&l);
    CHECK(l.opcodes == NULL && l.instructions == 0);
  }
  /* Another name: nothing of it. */
  TlSassLoop l;
  TlErr err = {{0}};
  CHECK_EQ_INT(tl_sass_hot_loop(text, len, "gemm", &l, &err), TL_SASS_NO_CODE);
  CHECK_EQ_STR(err.msg, "no function 'gemm' in the disassembly");
  CHECK(l.opcodes == NULL && l.function_instructions == 0);
  /* Every cut of the text reads without a fault (in a buffer of exactly
   * that length); the counts agree whatever is found. */
  for (size_t cut = 0; cut <= len; cut += cut < 4096 ? 97 : 3331) {
    char *p = exact(text, cut);
    TlSassStatus st = tl_sass_hot_loop(p, cut, "qmatmul_m8", &l, NULL);
    if (st == TL_SASS_FOUND)
      check_sums(&l);
    else
      CHECK(l.opcodes == NULL);
    tl_sass_loop_free(&l);
    tl_free(p);
  }
  tl_free(text);
}

static void test_malformed(void) {
  TlSassLoop l;
  TlErr err = {{0}};
  CHECK_EQ_INT(tl_sass_hot_loop(NULL, 0, NULL, &l, &err), TL_SASS_NO_CODE);
  CHECK_EQ_STR(err.msg, "no instructions in the disassembly");
  CHECK_EQ_INT(read_text("", "k", &l, &err), TL_SASS_NO_CODE);
  CHECK_EQ_INT(read_text("\n\n\n", NULL, &l, &err), TL_SASS_NO_CODE);
  /* Garbage: no line is an instruction. */
  CHECK_EQ_INT(read_text("hello\n/*\n/*12\n/*12*/\n/*12*/ lower ;\n"
                         "/*zz*/ NOP ;\n/*00000000000000000*/ NOP ;\n"
                         "/* 0x000fe20000000800 */\n\t\tFunction\n"
                         "/*10*/ @P0\n/*10*/ HMMAx.1 ;\n[B-- /*10*/ NOP ;\n",
                         NULL, &l, &err),
               TL_SASS_NO_CODE);
  CHECK_EQ_INT(l.function_instructions, 0);
  /* Instructions without a loop: forward branches only, a branch beyond
   * the text, a branch back to no instruction, a branch to itself (the
   * trap), a never-taken branch, an indirect one. */
  const char *no_loop = "  Function : k\n"
                        "  /*0000*/  MOV R1, c[0x0][0x28] ;\n"
                        "  /*0010*/  @P0 BRA 0x30 ;\n"
                        "  /*0020*/  HMMA.16816.F32 R0, R4, R8, R0 ;\n"
                        "  /*0030*/  BRA 0xfffffff0 ;\n"
                        "  /*0040*/  BRA 0x8 ;\n"
                        "  /*0050*/  @!PT BRA 0x20 ;\n"
                        "  /*0060*/  BRX R4 -0x70 ;\n"
                        "  /*0070*/  BRA 0x70;\n"
                        "  /*0080*/  BRA `(.L_x_9) ;\n"
                        "  /*0090*/  BRA ;\n";
  CHECK_EQ_INT(read_text(no_loop, "k", &l, &err), TL_SASS_NO_LOOP);
  CHECK_EQ_STR(err.msg, "no loop found in 10 instructions (no branch back "
                        "to an earlier instruction)");
  CHECK_EQ_INT(l.function_instructions, 10);
  CHECK(l.opcodes == NULL && l.instructions == 0);
  /* The same lines cut at every byte. */
  size_t n = strlen(no_loop);
  for (size_t cut = 0; cut <= n; cut++) {
    char *p = exact(no_loop, cut);
    CHECK(tl_sass_hot_loop(p, cut, "k", &l, NULL) != TL_SASS_FOUND);
    tl_free(p);
  }
  /* A line without its end (no newline, no NUL) still reads. */
  CHECK_EQ_INT(
      read_text("/*0000*/ NOP ;\n/*0010*/ @P1 BRA 0x0", NULL, &l, &err),
      TL_SASS_FOUND);
  CHECK_EQ_INT(l.instructions, 2);
  tl_sass_loop_free(&l);
  /* Odd bytes: NULs, CRs, high bytes, very long lines. */
  char odd[] = "/*0000*/ NOP ;\r\n\0\xff\xfe /*0010*/ BRA 0x0 ;\r\n"
               "/*0020*/ LOP3.LUT R0, R0, 0xf, RZ, 0xc0, !PT ;\r\n";
  CHECK_EQ_INT(tl_sass_hot_loop(odd, sizeof odd - 1, NULL, &l, &err),
               TL_SASS_NO_LOOP);
  TlStr big = {0};
  tl_str_puts(&big, "/*0000*/ NOP ;\n/*0010*/ ");
  for (int i = 0; i < 100000; i++)
    tl_str_putc(&big, 'A');
  tl_str_puts(&big, " ;\n/*0020*/ BRA 0x0 ;\n");
  CHECK_EQ_INT(read_text(tl_str_cstr(&big), NULL, &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.instructions, 2); /* the long word is no instruction */
  tl_sass_loop_free(&l);
  tl_str_free(&big);
}

static void test_loop_rule(void) {
  TlSassLoop l;
  TlErr err = {{0}};
  /* Nested loops, every mma in the inner one: the inner one. */
  const char *nested = "/*0000*/ MOV R0, RZ ;\n"
                       "/*0010*/ IADD3 R1, R1, 0x1, RZ ;\n"
                       "/*0020*/ HMMA.16816.F32 R4, R8, R12, R4 ;\n"
                       "/*0030*/ HMMA.16816.F32 R4, R8, R12, R4 ;\n"
                       "/*0040*/ @P0 BRA 0x20 ;\n"
                       "/*0050*/ FADD R2, R2, R4 ;\n"
                       "/*0060*/ @P1 BRA 0x10 ;\n"
                       "/*0070*/ EXIT ;\n";
  CHECK_EQ_INT(read_text(nested, NULL, &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.start, 0x20);
  CHECK_EQ_INT(l.end, 0x40);
  CHECK_EQ_INT(l.instructions, 3);
  CHECK_EQ_INT(l.classes[TL_SASS_MMA], 2);
  CHECK_EQ_INT(l.function_instructions, 8);
  tl_sass_loop_free(&l);
  /* The mma in the outer loop, a wait's spin loop inside it: the outer. */
  const char *spin = "/*0000*/ MOV R0, RZ ;\n"
                     "/*0010*/ SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2], R3 ;\n"
                     "/*0020*/ @!P0 BRA 0x10 ;\n"
                     "/*0030*/ HGMMA.64x64x16.F32 R24, gdesc[UR4], R24 ;\n"
                     "/*0040*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n"
                     "/*0050*/ @P1 BRA 0x10 ;\n";
  CHECK_EQ_INT(read_text(spin, NULL, &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.start, 0x10);
  CHECK_EQ_INT(l.end, 0x50);
  CHECK_EQ_INT(l.instructions, 5);
  CHECK_EQ_INT(opcode_count(&l, "HGMMA"), 1);
  CHECK_EQ_INT(l.classes[TL_SASS_SYNC], 2);
  tl_sass_loop_free(&l);
  /* Two loops with mma: the one with more, though it is shorter. */
  const char *two = "/*0000*/ HMMA.1688.F32 R0, R4, R8, R0 ;\n"
                    "/*0010*/ IADD3 R1, R1, 0x1, RZ ;\n"
                    "/*0020*/ IADD3 R1, R1, 0x1, RZ ;\n"
                    "/*0030*/ @P0 BRA 0x0 ;\n"
                    "/*0040*/ HMMA.1688.F32 R0, R4, R8, R0 ;\n"
                    "/*0050*/ HMMA.1688.F32 R0, R4, R8, R0 ;\n"
                    "/*0060*/ @P0 BRA 0x40 ;\n";
  CHECK_EQ_INT(read_text(two, NULL, &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.start, 0x40);
  tl_sass_loop_free(&l);
  /* No mma: the innermost loop with the most instructions; two back edges
   * to one target are one loop, to the last of them. */
  const char *plain = "/*0000*/ MOV R0, RZ ;\n"
                      "/*0010*/ FFMA R1, R2, R3, R1 ;\n"
                      "/*0020*/ @P2 BRA 0x10 ;\n"
                      "/*0030*/ LDG.E R2, desc[UR4][R4.64] ;\n"
                      "/*0040*/ @P0 BRA 0x30 ;\n"
                      "/*0050*/ STS [R6], R2 ;\n"
                      "/*0060*/ @P1 BRA 0x30 ;\n"
                      "/*0070*/ @P3 BRA 0x0 ;\n";
  CHECK_EQ_INT(read_text(plain, NULL, &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.start, 0x30);
  CHECK_EQ_INT(l.end, 0x60);
  CHECK_EQ_INT(l.instructions, 4);
  CHECK_EQ_INT(l.classes[TL_SASS_GLOBAL], 1);
  CHECK_EQ_INT(l.classes[TL_SASS_SHARED], 1);
  CHECK_EQ_INT(l.classes[TL_SASS_OTHER], 2);
  tl_sass_loop_free(&l);
}

/* Several functions (cuobjdump); nvdisasm's headers, labels and
 * scheduling prefixes. */
static void test_functions(void) {
  TlSassLoop l;
  TlErr err = {{0}};
  const char *two = "\tcode for sm_90\n"
                    "/*0000*/ NOP ;\n" /* before any header: no function's */
                    "/*0010*/ BRA 0x0 ;\n"
                    "\t\tFunction : first\n"
                    "/*0000*/ FADD R0, R0, R1 ;\n"
                    "/*0010*/ @P0 BRA 0x0 ;\n"
                    "\t\tFunction : second\n"
                    "/*0000*/ MOV R0, RZ ;\n"
                    "/*0010*/ LDS R1, [R2] ;\n"
                    "/*0020*/ HMMA.16816.F16 R4, R8, R12, R4 ;\n"
                    "/*0030*/ @!P1 BRA 0x10 ;\n"
                    "\t\tFunction : second\n" /* a second copy: ignored */
                    "/*0000*/ @P0 BRA 0x0 ;\n";
  CHECK_EQ_INT(read_text(two, "second", &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.start, 0x10);
  CHECK_EQ_INT(l.instructions, 3);
  CHECK_EQ_INT(l.function_instructions, 4);
  tl_sass_loop_free(&l);
  CHECK_EQ_INT(read_text(two, NULL, &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.instructions, 2);
  CHECK_EQ_INT(opcode_count(&l, "FADD"), 1);
  tl_sass_loop_free(&l);
  CHECK_EQ_INT(read_text(two, "secon", &l, &err), TL_SASS_NO_CODE);
  CHECK_EQ_STR(err.msg, "no function 'secon' in the disassembly");
  /* Without a header the text is the named function. */
  CHECK_EQ_INT(
      read_text("/*0000*/ NOP ;\n/*0010*/ @P0 BRA 0x0 ;\n", "any", &l, &err),
      TL_SASS_FOUND);
  tl_sass_loop_free(&l);

  const char *nv =
      "//--------------------- .text.k --------------------------\n"
      "\t.section\t.text.k,\"ax\",@progbits\n"
      "        .size           k,(.L_x_3 - k)\n"
      "k:\n"
      ".text.k:\n"
      "        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
      ".L_x_0:\n"
      "      [B------:R-:W-:Y:S04]         /*0010*/  LDSM.16.M88.4 R4, [R2] ;\n"
      "        /*0020*/                   IMMA.16832.S8.S8 R8, R4, R6, R8 ;\n"
      "        /*0030*/               @P0 BRA `(.L_x_0) ;\n"
      "        /*0040*/                   BRA.U !UP0, `(.L_x_1) ;\n"
      ".L_x_1:\n"
      "        /*0050*/                   EXIT ;\n"
      ".L_x_2:\n"
      "        /*0060*/                   BRA `(.L_x_2);\n"
      ".L_x_3:\n";
  CHECK_EQ_INT(read_text(nv, "k", &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.start, 0x10);
  CHECK_EQ_INT(l.end, 0x30);
  CHECK_EQ_INT(l.classes[TL_SASS_MMA], 1);
  CHECK_EQ_INT(l.classes[TL_SASS_SHARED], 1);
  CHECK_EQ_INT(l.function_instructions, 7);
  tl_sass_loop_free(&l);
  /* A backward label branch under BRA.U's operands. */
  const char *nv2 = ".text.k:\n"
                    ".L_x_5:\n"
                    "        /*0000*/   NOP ;\n"
                    "        /*0010*/   BRA.U !UP0, `(.L_x_5) ;\n";
  CHECK_EQ_INT(read_text(nv2, NULL, &l, &err), TL_SASS_FOUND);
  CHECK_EQ_INT(l.instructions, 2);
  tl_sass_loop_free(&l);
}

int main(int argc, char **argv) {
  test_classes();
  if (argc > 1)
    test_sample(argv[1]);
  else
    CHECK(!"usage: unit_sass qmatmul_m8_i4.sass");
  test_malformed();
  test_loop_rule();
  test_functions();
  return unit_report();
}
