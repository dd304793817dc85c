/* tl-dtype: inspect the data-type library from the command line.
 *
 *   tl-dtype --list                  every type with its properties
 *   tl-dtype --table TYPE            every code point of TYPE and its value
 *   tl-dtype --encode TYPE           read numbers from stdin, print codes
 *   tl-dtype --recipes               the recipe table: costs and output
 *                                    order (value_of)
 *   tl-dtype --recipe SRC DST        one recipe's register ops
 *   tl-dtype --verify-recipes        check every recipe bit for bit
 *
 * Values print with %.17g (exact for every format here, whose values have
 * at most 24 significant bits), "nan", "inf", "-inf"; -0 prints "-0". The
 * tool only parses flags and calls the library; it exits 1 on a usage
 * error or a failed check. */
#include "tl/dtype.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_value(double v) {
  if (isnan(v))
    printf("nan");
  else if (isinf(v))
    printf(v > 0 ? "inf" : "-inf");
  else if (v == 0.0)
    printf(signbit(v) ? "-0" : "0");
  else
    printf("%.17g", v);
}

static const char *specials_name(TlDType t) {
  if (!tl_dtype_is_float(t))
    return "-";
  switch (tl_dtype_specials(t)) {
  case TL_FLOAT_IEEE:
    return "ieee";
  case TL_FLOAT_FN:
    return "fn";
  default:
    return "finite";
  }
}

static void list_one(TlDType t) {
  printf("%-8s bits=%-2u %-8s bias=%-3d specials=%-6s min=", tl_dtype_name(t),
         tl_dtype_bits(t),
         tl_dtype_is_float(t)    ? "float"
         : tl_dtype_is_signed(t) ? "signed"
                                 : "unsigned",
         tl_dtype_bias(t), specials_name(t));
  print_value(tl_dtype_min(t));
  printf(" max=");
  print_value(tl_dtype_max(t));
  printf("\n");
}

static void list_cb(TlDType t, void *user) {
  (void)user;
  list_one(t);
}

static bool parse_type(const char *s, TlDType *t) {
  if (tl_dtype_parse(s, strlen(s), t))
    return true;
  fprintf(stderr, "tl-dtype: unknown data type '%s'\n", s);
  return false;
}

static int cmd_table(const char *name) {
  TlDType t;
  if (!parse_type(name, &t))
    return 1;
  if (tl_dtype_bits(t) > 16) {
    fprintf(stderr, "tl-dtype: --table needs a type of at most 16 bits\n");
    return 1;
  }
  for (uint64_t c = 0; c < ((uint64_t)1 << tl_dtype_bits(t)); c++) {
    printf("0x%llx ", (unsigned long long)c);
    print_value(tl_dtype_decode(t, c));
    printf("\n");
  }
  return 0;
}

static int cmd_encode(const char *name) {
  TlDType t;
  char buf[128];
  if (!parse_type(name, &t))
    return 1;
  while (scanf("%127s", buf) == 1) {
    char *end;
    double x = strtod(buf, &end);
    if (*end) {
      fprintf(stderr, "tl-dtype: not a number: %s\n", buf);
      return 1;
    }
    printf("0x%llx\n", (unsigned long long)tl_dtype_encode(t, x));
  }
  return 0;
}

static const char *kind_name(TlRecipeKind k) {
  switch (k) {
  case TL_RECIPE_MAGIC:
    return "magic";
  case TL_RECIPE_REBIAS:
    return "rebias";
  case TL_RECIPE_BYTES:
    return "bytes";
  case TL_RECIPE_CHAIN:
    return "chain";
  case TL_RECIPE_LUT:
    return "lut";
  case TL_RECIPE_CVT:
    return "cvt";
  default:
    return "quant";
  }
}

static void recipe_row(const TlCastRecipe *r, bool order) {
  unsigned work = r->n_ops - r->n_const_ops;
  printf("%-7s %-5s %-6s in=%-2u out=%-2u values=%-2u ops=%-3u const=%-2u "
         "per_value=%.3f",
         tl_dtype_name(r->src), tl_dtype_name(r->dst), kind_name(r->kind),
         r->n_in_words, r->n_out_words, r->n_values, work, r->n_const_ops,
         (double)work / r->n_values);
  if (order) {
    printf(" order=");
    for (unsigned e = 0; e < r->n_values; e++)
      printf("%s%u", e ? "," : "", r->value_of[e]);
  }
  printf("\n");
}

static int cmd_recipe(const char *s, const char *d) {
  TlDType src, dst;
  if (!parse_type(s, &src) || !parse_type(d, &dst))
    return 1;
  const TlCastRecipe *r = tl_cast_recipe_find(src, dst);
  if (!r) {
    fprintf(stderr, "tl-dtype: no recipe %s -> %s\n", s, d);
    return 1;
  }
  recipe_row(r, false);
  printf("# %s\n", r->summary);
  printf("# inputs r0..r%u", r->n_in_words - 1);
  if (r->n_params)
    printf(", params r%u..r%u", r->n_in_words, r->n_in_words + r->n_params - 1);
  printf("\n");
  for (unsigned i = 0; i < r->n_ops; i++) {
    const TlRegOp *o = &r->ops[i];
    TlRegOpcode op = (TlRegOpcode)o->op;
    unsigned nreg = tl_regop_num_operands(op);
    const uint8_t srcs[3] = {o->a, o->b, o->c};
    printf("  r%-3u = %-14s", o->dst, tl_regop_name(op));
    for (unsigned k = 0; k < nreg; k++)
      printf("%sr%u", k ? ", " : " ", srcs[k]);
    if (tl_regop_has_imm(op))
      printf("%s0x%08x", nreg ? ", " : " ", o->imm);
    printf("\n");
  }
  printf("# out words:");
  for (unsigned j = 0; j < r->n_out_words; j++)
    printf(" r%u", r->out_regs[j]);
  printf("\n# value_of:");
  for (unsigned e = 0; e < r->n_values; e++)
    printf(" %u", r->value_of[e]);
  printf("\n");
  return 0;
}

static int cmd_recipes(bool verify) {
  size_t n;
  const TlCastRecipe *all = tl_cast_recipe_all(&n);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (!verify) {
      recipe_row(&all[i], true);
      continue;
    }
    TlErr err;
    uint64_t count;
    if (!tl_cast_recipe_verify(&all[i], &count, &err)) {
      printf("FAIL %s\n", err.msg);
      bad = 1;
    } else
      printf("ok %s -> %s (%llu values)\n", tl_dtype_name(all[i].src),
             tl_dtype_name(all[i].dst), (unsigned long long)count);
  }
  return bad;
}

static int usage(void) {
  fprintf(stderr, "usage: tl-dtype --list | --table TYPE | --encode TYPE | "
                  "--recipes | --recipe SRC DST | --verify-recipes\n");
  return 1;
}

static int run(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    tl_dtype_foreach_small(list_cb, NULL);
    TlDType wide[] = {tl_dtype_uint(16), tl_dtype_uint(32), tl_dtype_uint(64),
                      tl_dtype_int(16),  tl_dtype_int(32),  tl_dtype_int(64),
                      tl_dtype_f16(),    tl_dtype_bf16(),   tl_dtype_f32(),
                      tl_dtype_f64()};
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
      list_one(wide[i]);
    return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "--table"))
    return cmd_table(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "--encode"))
    return cmd_encode(argv[2]);
  if (argc == 2 && !strcmp(argv[1], "--recipes"))
    return cmd_recipes(false);
  if (argc == 2 && !strcmp(argv[1], "--verify-recipes"))
    return cmd_recipes(true);
  if (argc == 4 && !strcmp(argv[1], "--recipe"))
    return cmd_recipe(argv[2], argv[3]);
  return usage();
}

int main(int argc, char **argv) {
  int rc = run(argc, argv);
  /* Output lost to a full disk is a failure. */
  TlErr err;
  if (!tl_stdout_flush(&err)) {
    fprintf(stderr, "tl-dtype: error: %s\n", err.msg);
    rc = 1;
  }
  return rc;
}
