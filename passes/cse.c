/* cse: replaces a pure op by an equal op that dominates it. Two ops are
 * equal when they have the same name, operands, attributes and result
 * types and no regions.
 * Requires: verified IR. Guarantees: verified IR with the same meaning.
 *
 * Ops are walked in program order with a scoped hash table: an op is
 * visible to everything after it in its block and in the regions nested
 * there, and to nothing inside an op isolated from above. */
#include "passes_internal.h"

#include <string.h>

const TlPassOptionDef tl_pass_cse_options[] = {{NULL, 0, NULL, NULL}};

typedef struct Entry {
  uint64_t hash;
  TlOp *op;
  int next; /* next entry in the bucket, -1 ends */
} Entry;

typedef struct Table {
  TL_VEC(Entry) entries;
  int *buckets;
  size_t nbuckets;
  size_t floor; /* entries below this index are invisible (isolation) */
} Table;

static uint64_t op_hash(TlOp *op) {
  uint64_t h = tl_hash_bytes(tl_op_name(op), strlen(tl_op_name(op)), 0);
  for (unsigned i = 0; i < tl_op_num_operands(op); i++)
    h = tl_hash_combine(h, (uintptr_t)tl_op_operand(op, i));
  for (unsigned i = 0; i < tl_op_num_results(op); i++)
    h = tl_hash_combine(h, (uintptr_t)tl_value_type(tl_op_result(op, i)));
  for (unsigned i = 0; i < tl_op_num_attrs(op); i++) {
    TlNamedAttr a = tl_op_attr_at(op, i);
    h = tl_hash_combine(tl_hash_combine(h, (uintptr_t)a.name), (uintptr_t)a.attr);
  }
  return h;
}

static bool op_equal(TlOp *a, TlOp *b) {
  if (tl_op_def(a) != tl_op_def(b) ||
      tl_op_num_operands(a) != tl_op_num_operands(b) ||
      tl_op_num_results(a) != tl_op_num_results(b) ||
      tl_op_num_attrs(a) != tl_op_num_attrs(b))
    return false;
  for (unsigned i = 0; i < tl_op_num_operands(a); i++)
    if (tl_op_operand(a, i) != tl_op_operand(b, i))
      return false;
  for (unsigned i = 0; i < tl_op_num_results(a); i++)
    if (tl_value_type(tl_op_result(a, i)) != tl_value_type(tl_op_result(b, i)))
      return false;
  for (unsigned i = 0; i < tl_op_num_attrs(a); i++) {
    TlNamedAttr x = tl_op_attr_at(a, i), y = tl_op_attr_at(b, i);
    if (x.name != y.name || x.attr != y.attr)
      return false;
  }
  return true;
}

static bool candidate(TlOp *op) {
  return tl_op_has_trait(op, TL_TRAIT_PURE) &&
         !tl_op_has_trait(op, TL_TRAIT_TERMINATOR) &&
         tl_op_num_regions(op) == 0 && tl_op_num_results(op) > 0;
}

static TlOp *lookup(Table *t, TlOp *op, uint64_t h) {
  for (int i = t->buckets[h & (t->nbuckets - 1)]; i >= 0;
       i = t->entries.data[i].next) {
    if ((size_t)i < t->floor)
      break; /* older entries in a bucket are all below the floor too */
    Entry *e = &t->entries.data[i];
    if (e->hash == h && op_equal(e->op, op))
      return e->op;
  }
  return NULL;
}

static void insert(Table *t, TlOp *op, uint64_t h) {
  size_t b = h & (t->nbuckets - 1);
  Entry e = {h, op, t->buckets[b]};
  t->buckets[b] = (int)t->entries.len;
  tl_vec_push(&t->entries, e);
}

/* Drops entries added since `mark` (they are at their buckets' heads). */
static void pop_to(Table *t, size_t mark) {
  while (t->entries.len > mark) {
    Entry e = tl_vec_pop(&t->entries);
    t->buckets[e.hash & (t->nbuckets - 1)] = e.next;
  }
}

static void rehash(Table *t) {
  t->nbuckets *= 2;
  tl_free(t->buckets);
  t->buckets = tl_xmalloc(sizeof *t->buckets * t->nbuckets);
  for (size_t i = 0; i < t->nbuckets; i++)
    t->buckets[i] = -1;
  /* Re-link in index order so heads stay the newest entries. */
  for (size_t i = 0; i < t->entries.len; i++) {
    size_t b = t->entries.data[i].hash & (t->nbuckets - 1);
    t->entries.data[i].next = t->buckets[b];
    t->buckets[b] = (int)i;
  }
}

static void cse_region_ops(Table *t, TlOp *op);

static void cse_block(Table *t, TlBlock *b) {
  size_t mark = t->entries.len;
  for (TlOp *o = tl_block_first_op(b), *next; o; o = next) {
    next = tl_op_next(o);
    if (candidate(o)) {
      uint64_t h = op_hash(o);
      TlOp *same = lookup(t, o, h);
      if (same) {
        for (unsigned i = 0; i < tl_op_num_results(o); i++)
          tl_value_replace_all_uses(tl_op_result(o, i), tl_op_result(same, i));
        tl_op_erase(o);
        continue;
      }
      if (t->entries.len + 1 > t->nbuckets)
        rehash(t);
      insert(t, o, h);
    }
    cse_region_ops(t, o);
  }
  pop_to(t, mark);
}

static void cse_region_ops(Table *t, TlOp *op) {
  size_t saved = t->floor;
  if (tl_op_has_trait(op, TL_TRAIT_ISOLATED))
    t->floor = t->entries.len;
  for (unsigned r = 0; r < tl_op_num_regions(op); r++)
    for (TlBlock *b = tl_region_first_block(tl_op_region(op, r)); b;
         b = tl_block_next(b))
      cse_block(t, b);
  t->floor = saved;
}

TlResult tl_pass_cse(TlOp *module, const TlPassOptions *opts) {
  Table t = {0};
  t.nbuckets = 256;
  t.buckets = tl_xmalloc(sizeof *t.buckets * t.nbuckets);
  for (size_t i = 0; i < t.nbuckets; i++)
    t.buckets[i] = -1;
  cse_region_ops(&t, module);
  tl_vec_free(&t.entries);
  tl_free(t.buckets);
  return TL_SUCCESS;
}
