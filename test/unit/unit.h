/* A minimal unit-test harness: CHECK records a failure and continues;
 * tests end with `return unit_report();`. */
#ifndef TL_UNIT_H
#define TL_UNIT_H
#include <stdio.h>
#include <string.h>

static int unit_checks, unit_failures;

#define CHECK(c)                                                               \
  do {                                                                         \
    unit_checks++;                                                             \
    if (!(c)) {                                                                \
      unit_failures++;                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);    \
    }                                                                          \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                     \
  do {                                                                         \
    long long a_ = (long long)(a), b_ = (long long)(b);                        \
    unit_checks++;                                                             \
    if (a_ != b_) {                                                            \
      unit_failures++;                                                         \
      fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,      \
              __LINE__, #a, #b, a_, b_);                                       \
    }                                                                          \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                     \
  do {                                                                         \
    const char *a_ = (a), *b_ = (b);                                           \
    unit_checks++;                                                             \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                   \
      unit_failures++;                                                         \
      fprintf(stderr, "%s:%d: %s == %s failed:\n  \"%s\"\n  \"%s\"\n",         \
              __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",                   \
              b_ ? b_ : "(null)");                                             \
    }                                                                          \
  } while (0)

static inline int unit_report(void) {
  printf("%d checks, %d failed\n", unit_checks, unit_failures);
  return unit_failures != 0;
}
#endif
