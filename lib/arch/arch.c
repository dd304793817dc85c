/* The target table: include/tl/targets.def expanded into TlArch rows, with
 * lookups by name and by device, and the name lists diagnostics print. */
#include "tl/arch.h"

#include <string.h>

static const TlArch targets[] = {
#define TL_TARGET(name, sm, smem, exact, min_ptx, default_ptx, features)       \
  {name, sm, smem, exact, min_ptx, default_ptx, features},
#include "tl/targets.def"
};

#define NUM_TARGETS (sizeof targets / sizeof targets[0])

static const char *const names[] = {
#define TL_TARGET(name, sm, smem, exact, min_ptx, default_ptx, features) name,
#include "tl/targets.def"
    NULL};

static const struct {
  unsigned bit;
  const char *what;
} features[] = {
#define TL_FEATURE(NAME, bit, what) {TL_FEATURE_##NAME, what},
#include "tl/targets.def"
};

unsigned tl_arch_count(void) { return NUM_TARGETS; }

const TlArch *tl_arch_at(unsigned i) {
  return i < NUM_TARGETS ? &targets[i] : NULL;
}

const TlArch *tl_arch_lookup(const char *name) {
  for (unsigned i = 0; name && i < NUM_TARGETS; i++)
    if (!strcmp(targets[i].name, name))
      return &targets[i];
  return NULL;
}

const TlArch *tl_arch_default(void) { return &targets[0]; }

const TlArch *tl_arch_for_device(unsigned sm) {
  const TlArch *best = NULL;
  for (unsigned i = 0; i < NUM_TARGETS; i++) {
    const TlArch *a = &targets[i];
    if (a->sm > sm || (a->exact && a->sm != sm))
      continue;
    /* A later SM wins; of one SM, the exact target (it has more). */
    if (!best || a->sm > best->sm || (a->sm == best->sm && a->exact))
      best = a;
  }
  return best;
}

bool tl_arch_has(const TlArch *arch, unsigned f) {
  return (arch->features & f) == f;
}

int64_t tl_arch_max_smem_any(void) {
  int64_t most = 0;
  for (unsigned i = 0; i < NUM_TARGETS; i++)
    if (targets[i].max_smem > most)
      most = targets[i].max_smem;
  return most;
}

const char *const *tl_arch_names(void) { return names; }

void tl_arch_names_text(TlStr *out, unsigned f, bool or_last) {
  unsigned n = 0, total = 0;
  for (unsigned i = 0; i < NUM_TARGETS; i++)
    total += tl_arch_has(&targets[i], f);
  for (unsigned i = 0; i < NUM_TARGETS; i++) {
    if (!tl_arch_has(&targets[i], f))
      continue;
    if (n)
      tl_str_puts(out, or_last && n + 1 == total ? " or " : ", ");
    tl_str_puts(out, targets[i].name);
    n++;
  }
}

void tl_arch_lacks_text(TlStr *out, const char *what, const TlArch *arch,
                        unsigned feature) {
  tl_str_printf(out, "%s, which %s lacks (targets with it: ", what,
                arch->name);
  tl_arch_names_text(out, feature, true);
  tl_str_putc(out, ')');
}

const char *tl_feature_name(unsigned f) {
  for (unsigned i = 0; i < sizeof features / sizeof features[0]; i++)
    if (features[i].bit == f)
      return features[i].what;
  return NULL;
}
