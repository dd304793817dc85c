/* Register-tile ops of the VM. A tile is its logical elements (codes of the
 * element type, row-major) plus its layout (in the type); the layout
 * matters where bits move between threads' registers (tl.view) and for the
 * memory checks. Undefined elements (tl.alloc_register without init)
 * propagate through computations and are reported where they reach memory.
 * docs/vm.md states each op's arithmetic. */
#include "vm_internal.h"

#include <stdio.h>

static Tile *operand_tile(TlVm *vm, Inst *in, unsigned i) {
  return vm_in(vm, in, i)->obj;
}

static TlType *result_type(Inst *in) {
  return tl_value_type(tl_op_result(in->op, 0));
}

/* undef of the result: the union of the operands' (NULL when none). */
static void merge_undef(Tile *r, const Tile *a) {
  if (!a->undef)
    return;
  if (!r->undef) {
    r->undef = tl_xmalloc((size_t)r->n);
    memcpy(r->undef, a->undef, (size_t)r->n);
    return;
  }
  for (int64_t e = 0; e < r->n; e++)
    r->undef[e] |= a->undef[e];
}

/*===--- Elementwise ------------------------------------------------------===*/

static uint64_t float_unary(const EType *e, TlOpId k, uint64_t c) {
  double x = e_f(e, c), v;
  switch (k) {
  case TL_OP_TL_NEG:
    return c ^ (1ull << (e->bits - 1));
  case TL_OP_TL_ABS:
    return c & ~(1ull << (e->bits - 1));
  /* Computed in double by the C library and rounded once to the type. */
  case TL_OP_TL_EXP:
    v = exp(x);
    break;
  case TL_OP_TL_EXP2:
    v = exp2(x);
    break;
  case TL_OP_TL_LOG2:
    v = log2(x);
    break;
  /* sqrt is correctly rounded in double and 53 >= 2p + 2 for p <= 24. */
  case TL_OP_TL_SQRT:
    v = sqrt(x);
    break;
  case TL_OP_TL_RSQRT:
    v = 1.0 / sqrt(x);
    break;
  default:
    TL_UNREACHABLE("not a float unary op");
  }
  return e_fencode(e, v);
}

/* The arith op that computes elementwise op k on integers (int_op) or on
 * floats (float_op); TL_OP_NONE where there is none. */
static TlOpId int_op(TlOpId k) {
  switch (k) {
  case TL_OP_TL_ADD:
    return TL_OP_ARITH_ADDI;
  case TL_OP_TL_SUB:
    return TL_OP_ARITH_SUBI;
  case TL_OP_TL_MUL:
    return TL_OP_ARITH_MULI;
  case TL_OP_TL_DIV:
    return TL_OP_ARITH_DIVI;
  case TL_OP_TL_MOD:
    return TL_OP_ARITH_REMI;
  case TL_OP_TL_MAX:
    return TL_OP_ARITH_MAXI;
  case TL_OP_TL_MIN:
    return TL_OP_ARITH_MINI;
  case TL_OP_TL_AND:
    return TL_OP_ARITH_ANDI;
  case TL_OP_TL_OR:
    return TL_OP_ARITH_ORI;
  case TL_OP_TL_XOR:
    return TL_OP_ARITH_XORI;
  case TL_OP_TL_SHL:
    return TL_OP_ARITH_SHLI;
  case TL_OP_TL_SHR:
    return TL_OP_ARITH_SHRI;
  default:
    return TL_OP_NONE;
  }
}

static TlOpId float_op(TlOpId k) {
  switch (k) {
  case TL_OP_TL_ADD:
    return TL_OP_ARITH_ADDF;
  case TL_OP_TL_SUB:
    return TL_OP_ARITH_SUBF;
  case TL_OP_TL_MUL:
    return TL_OP_ARITH_MULF;
  case TL_OP_TL_DIV:
    return TL_OP_ARITH_DIVF;
  case TL_OP_TL_MAX:
    return TL_OP_ARITH_MAXF;
  case TL_OP_TL_MIN:
    return TL_OP_ARITH_MINF;
  default:
    return TL_OP_NONE;
  }
}

static bool elem_error(TlVm *vm, Inst *in, const Tile *t, int64_t e) {
  /* vm_int_binary reported the problem; name the element. */
  int rank = (int)tl_tensor_rank(t->type);
  int64_t idx[TL_LAYOUT_MAX_RANK], flat = e;
  for (int d = rank - 1; d >= 0; d--) {
    int64_t s = tl_tensor_dim(t->type, (unsigned)d);
    idx[d] = flat % s;
    flat /= s;
  }
  char ib[256];
  vm_fmt_index(ib, sizeof ib, rank, idx);
  vm_note(vm, in->op, "at element %s of the tile", ib);
  return false;
}

static bool exec_elementwise(TlVm *vm, Inst *in) {
  const EType *e = in->et;
  const Tile *a = operand_tile(vm, in, 0);
  const Tile *b = in->nin > 1 ? operand_tile(vm, in, 1) : NULL;
  Tile *r = tile_new(vm, result_type(in), false);
  merge_undef(r, a);
  if (b)
    merge_undef(r, b);
  TlOpId k = in->code;
  if (e->kind == EK_FLOAT) {
    TlOpId fk = float_op(k);
    if (k == TL_OP_TL_MOD) {
      for (int64_t i = 0; i < r->n; i++) /* fmod is exact */
        r->v[i] = e_fencode(e, fmod(e_f(e, a->v[i]), e_f(e, b->v[i])));
    } else if (fk != TL_OP_NONE) {
      for (int64_t i = 0; i < r->n; i++)
        r->v[i] = vm_float_binary(e, fk, a->v[i], b->v[i]);
    } else {
      for (int64_t i = 0; i < r->n; i++)
        r->v[i] = float_unary(e, k, a->v[i]);
    }
  } else if (b) {
    TlOpId ik = int_op(k);
    for (int64_t i = 0; i < r->n; i++) {
      /* Undefined elements compute nothing (a zero divisor there is not
       * an error). */
      if (r->undef && r->undef[i]) {
        r->v[i] = 0;
        continue;
      }
      if (!vm_int_binary(vm, in->op, e, ik, a->v[i], b->v[i], &r->v[i])) {
        elem_error(vm, in, r, i);
        tile_release(r);
        return false;
      }
    }
  } else {
    for (int64_t i = 0; i < r->n; i++) {
      uint64_t x = a->v[i];
      int64_t s = e_sval(e, x);
      switch (k) {
      case TL_OP_TL_NEG:
        x = (uint64_t)0 - x;
        break;
      case TL_OP_TL_ABS:
        x = (e->kind == EK_SINT && s < 0) ? (uint64_t)0 - x : x;
        break;
      case TL_OP_TL_NOT:
        x = ~x;
        break;
      default:
        TL_UNREACHABLE("not an integer unary op");
      }
      r->v[i] = x & e->mask;
    }
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

/* tl.fma: a * b + c rounded once, by lib/dtype's exact fma of the type
 * (the simt VM's simt.fma and simt.fma2, so both VMs agree bit for bit). */
static bool exec_fma(TlVm *vm, Inst *in) {
  const EType *e = in->et;
  const Tile *a = operand_tile(vm, in, 0), *b = operand_tile(vm, in, 1),
             *c = operand_tile(vm, in, 2);
  Tile *r = tile_new(vm, result_type(in), false);
  merge_undef(r, a);
  merge_undef(r, b);
  merge_undef(r, c);
  bool bf = e->dt.exp_bits == 8;
  for (int64_t i = 0; i < r->n; i++)
    r->v[i] = e->bits == 32
                  ? tl_f32_fma((uint32_t)a->v[i], (uint32_t)b->v[i], (uint32_t)c->v[i])
              : bf ? tl_bf16_fma((uint16_t)a->v[i], (uint16_t)b->v[i], (uint16_t)c->v[i])
                   : tl_f16_fma((uint16_t)a->v[i], (uint16_t)b->v[i], (uint16_t)c->v[i]);
  vm_put_tile(vm, in, 0, r);
  return true;
}

static bool exec_cmp(TlVm *vm, Inst *in) {
  const EType *e = in->et2;
  const Tile *a = operand_tile(vm, in, 0), *b = operand_tile(vm, in, 1);
  Tile *r = tile_new(vm, result_type(in), false);
  merge_undef(r, a);
  merge_undef(r, b);
  TlCmpiPredicate p = in->pred;
  TlCmpfPredicate fp = tl_cmpi_predicate_on_floats(p);
  for (int64_t i = 0; i < r->n; i++) {
    uint64_t x = a->v[i], y = b->v[i];
    if (e->kind == EK_FLOAT)
      r->v[i] = tl_cmpf_holds(fp, e_f(e, x), e_f(e, y));
    else if (e->kind == EK_SINT)
      r->v[i] = tl_cmpi_holds_signed(p, e_sval(e, x), e_sval(e, y));
    else
      r->v[i] = tl_cmpi_holds_unsigned(p, x, y);
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

static bool exec_where(TlVm *vm, Inst *in) {
  const Tile *c = operand_tile(vm, in, 0), *a = operand_tile(vm, in, 1),
             *b = operand_tile(vm, in, 2);
  Tile *r = tile_new(vm, result_type(in), false);
  bool undef = c->undef || a->undef || b->undef;
  if (undef)
    r->undef = tl_xcalloc((size_t)r->n, 1);
  for (int64_t i = 0; i < r->n; i++) {
    const Tile *pick = c->v[i] ? a : b;
    r->v[i] = pick->v[i];
    if (undef)
      r->undef[i] =
          (c->undef && c->undef[i]) || (pick->undef && pick->undef[i]);
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

/*===--- Shape ops --------------------------------------------------------===*/

static bool exec_alloc_register(TlVm *vm, Inst *in) {
  Tile *r = tile_new(vm, result_type(in), !in->has_konst);
  if (in->has_konst)
    for (int64_t i = 0; i < r->n; i++)
      r->v[i] = in->konst;
  vm_put_tile(vm, in, 0, r);
  return true;
}

static bool exec_broadcast(TlVm *vm, Inst *in) {
  TlType *rt = result_type(in);
  Tile *r = tile_new(vm, rt, false);
  Val *src = vm_in(vm, in, 0);
  if (src->kind == V_SCALAR) {
    for (int64_t i = 0; i < r->n; i++)
      r->v[i] = src->bits;
    vm_put_tile(vm, in, 0, r);
    return true;
  }
  const Tile *a = src->obj;
  int rank = (int)tl_tensor_rank(rt);
  int64_t j[TL_LAYOUT_MAX_RANK] = {0}, rs[TL_LAYOUT_MAX_RANK],
          as[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    rs[d] = tl_tensor_dim(rt, (unsigned)d);
    as[d] = tl_tensor_dim(a->type, (unsigned)d);
  }
  if (a->undef)
    r->undef = tl_xcalloc((size_t)r->n, 1);
  for (int64_t i = 0; i < r->n; i++) {
    int64_t f = 0;
    for (int d = 0; d < rank; d++)
      f = f * as[d] + (as[d] == 1 ? 0 : j[d]);
    r->v[i] = a->v[f];
    if (a->undef)
      r->undef[i] = a->undef[f];
    for (int d = rank - 1; d >= 0 && ++j[d] == rs[d]; d--)
      j[d] = 0;
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

/* Row-major re-indexing keeps the element order. */
static bool exec_reshape(TlVm *vm, Inst *in) {
  const Tile *a = operand_tile(vm, in, 0);
  Tile *r = tile_new(vm, result_type(in), false);
  memcpy(r->v, a->v, sizeof(uint64_t) * (size_t)r->n);
  merge_undef(r, a);
  vm_put_tile(vm, in, 0, r);
  return true;
}

/* Result element j (row-major) is operand element j with its indices
 * moved: result dimension k walks operand dimension perm[k]. */
static bool exec_permute(TlVm *vm, Inst *in) {
  const Tile *a = operand_tile(vm, in, 0);
  Tile *r = tile_new(vm, result_type(in), false);
  TlType *at = a->type;
  int rank = (int)tl_tensor_rank(at), perm[TL_LAYOUT_MAX_RANK];
  if (!tl_permute_perm(in->op, perm))
    TL_UNREACHABLE("tl.permute is verified");
  int64_t astride[TL_LAYOUT_MAX_RANK], rs[TL_LAYOUT_MAX_RANK],
      j[TL_LAYOUT_MAX_RANK] = {0};
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    astride[d] = s;
    s *= tl_tensor_dim(at, (unsigned)d);
  }
  for (int k = 0; k < rank; k++)
    rs[k] = tl_tensor_dim(at, (unsigned)perm[k]);
  if (a->undef)
    r->undef = tl_xcalloc((size_t)r->n, 1);
  for (int64_t i = 0; i < r->n; i++) {
    int64_t f = 0;
    for (int k = 0; k < rank; k++)
      f += j[k] * astride[perm[k]];
    r->v[i] = a->v[f];
    if (a->undef)
      r->undef[i] = a->undef[f];
    for (int k = rank - 1; k >= 0 && ++j[k] == rs[k]; k--)
      j[k] = 0;
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

/* Result element j is the operand's at j + offsets (literal offsets, which
 * the verifier checked: multiples of the sizes, inside the operand). */
static bool exec_slice(TlVm *vm, Inst *in) {
  const Tile *a = operand_tile(vm, in, 0);
  Tile *r = tile_new(vm, result_type(in), false);
  TlType *at = a->type, *rt = r->type;
  int rank = (int)tl_tensor_rank(at);
  int64_t off[TL_LAYOUT_MAX_RANK], astride[TL_LAYOUT_MAX_RANK],
      j[TL_LAYOUT_MAX_RANK] = {0};
  if (!tl_slice_offsets(in->op, off))
    TL_UNREACHABLE("tl.slice is verified");
  int64_t s = 1, base = 0;
  for (int d = rank - 1; d >= 0; d--) {
    astride[d] = s;
    base += off[d] * s;
    s *= tl_tensor_dim(at, (unsigned)d);
  }
  if (a->undef)
    r->undef = tl_xcalloc((size_t)r->n, 1);
  for (int64_t i = 0; i < r->n; i++) {
    int64_t f = base;
    for (int d = 0; d < rank; d++)
      f += j[d] * astride[d];
    r->v[i] = a->v[f];
    if (a->undef)
      r->undef[i] = a->undef[f];
    for (int d = rank - 1; d >= 0 && ++j[d] == tl_tensor_dim(rt, (unsigned)d);
         d--)
      j[d] = 0;
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

static bool exec_cast(TlVm *vm, Inst *in) {
  const Tile *a = operand_tile(vm, in, 0);
  const EType *s = in->et2, *d = in->et;
  Tile *r = tile_new(vm, result_type(in), false);
  merge_undef(r, a);
  if (s->bits <= 8) {
    /* Every source code converted once (source types of at most 8 bits). */
    if (!in->ctab) {
      in->ctab = TL_ARENA_NEWN(&vm->arena, uint64_t, 1u << s->bits);
      for (uint32_t c = 0; c < (1u << s->bits); c++)
        in->ctab[c] = e_convert_rounded(s, d, c, in->pred);
    }
    for (int64_t i = 0; i < r->n; i++)
      r->v[i] = in->ctab[a->v[i]];
  } else {
    for (int64_t i = 0; i < r->n; i++)
      r->v[i] = e_convert_rounded(s, d, a->v[i], in->pred);
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

/* Bit i of a little-endian word array. */
static inline uint64_t get_bits(const uint64_t *w, int64_t at, unsigned n) {
  uint64_t lo = w[at >> 6] >> (at & 63);
  unsigned have = 64 - (unsigned)(at & 63);
  if (have < n)
    lo |= w[(at >> 6) + 1] << have;
  return n == 64 ? lo : lo & ((1ull << n) - 1);
}

static inline void put_bits(uint64_t *w, int64_t at, unsigned n, uint64_t v) {
  w[at >> 6] |= v << (at & 63);
  unsigned have = 64 - (unsigned)(at & 63);
  if (have < n)
    w[(at >> 6) + 1] |= v >> have;
}

/* tl.view (Tilus Fig. 2c): each thread's local elements, concatenated as a
 * little-endian bit string in local-index order, re-split into the result
 * type's elements in its local-index order. */
static bool exec_view(TlVm *vm, Inst *in) {
  const Tile *a = operand_tile(vm, in, 0);
  TlType *rt = result_type(in);
  const LTab *la = vm_ltab(vm, tl_reg_layout(a->type));
  const LTab *lr = vm_ltab(vm, tl_reg_layout(rt));
  unsigned wa = in->et2->bits, wr = in->et->bits;
  int64_t bits = la->local * wa;
  size_t words = (size_t)(bits / 64 + 2);
  uint64_t *buf = tl_xmalloc(words * 8), *ubuf = NULL;
  if (a->undef)
    ubuf = tl_xmalloc(words * 8);
  Tile *r = tile_new(vm, rt, false);
  if (a->undef)
    r->undef = tl_xcalloc((size_t)r->n, 1);
  uint64_t ones_a = wa == 64 ? ~0ull : (1ull << wa) - 1;
  for (int64_t t = 0; t < la->threads; t++) {
    memset(buf, 0, words * 8);
    if (ubuf)
      memset(ubuf, 0, words * 8);
    const int32_t *ia = la->idx + t * la->local;
    for (int64_t i = 0; i < la->local; i++) {
      put_bits(buf, i * wa, wa, a->v[ia[i]]);
      if (ubuf && a->undef[ia[i]])
        put_bits(ubuf, i * wa, wa, ones_a);
    }
    const int32_t *ir = lr->idx + t * lr->local;
    for (int64_t i = 0; i < lr->local; i++) {
      r->v[ir[i]] = get_bits(buf, i * wr, wr);
      if (ubuf)
        r->undef[ir[i]] = get_bits(ubuf, i * wr, wr) != 0;
    }
  }
  tl_free(buf);
  tl_free(ubuf);
  vm_put_tile(vm, in, 0, r);
  return true;
}

/*===--- dot and reduce ---------------------------------------------------===*/

/* acc + p rounded once to the accumulator type e (p and acc exact). */
static inline double acc_add(const EType *e, double acc, double p) {
  if (e->bits == 64)
    return acc + p;
  double s = e_add_odd(acc, p);
  if (e->bits == 32)
    return (double)(float)s;
  return e_f(e, e_fencode(e, s));
}

static int sig_bits(const EType *e) {
  return (int)tl_type_float_man(e->type) + 1;
}

/* Whether acc + p rounded to double and then to the accumulator type c is
 * the exact sum rounded once, for every product p of an a and a b value:
 * (1) every product is a value of c (its significand has at most as many
 * bits as c's, its magnitude is within c's normal range or zero), and
 * (2) p_bits + c_bits + 3 <= 53. Then if acc + p is not exact in double,
 * the smaller operand lies below 2^-(c_bits + 2) times the larger one (a
 * value of c), so the exact sum and its double rounding both round to the
 * larger operand: no double-rounding error. */
static bool sum_in_double_is_exact(const EType *a, const EType *b,
                                   const EType *c) {
  if (a->kind != EK_FLOAT || b->kind != EK_FLOAT || c->bits == 64)
    return false;
  int pb = sig_bits(a) + sig_bits(b), cb = sig_bits(c);
  if (pb > cb || pb + cb + 3 > 53)
    return false;
  double min_a = tl_dtype_decode(a->dt, 1), min_b = tl_dtype_decode(b->dt, 1);
  double min_c = ldexp(1.0, 1 - tl_dtype_bias(c->dt));
  return min_a * min_b >= min_c &&
         tl_dtype_max(a->dt) * tl_dtype_max(b->dt) <= tl_dtype_max(c->dt);
}

/* One M x K by K x N product into r (c the accumulator), with the undef
 * flags when any operand has them (ru non-NULL). */
static void dot_core(const EType *ea, const EType *eb, const EType *ec, int64_t M,
                     int64_t K, int64_t N, const uint64_t *av, const uint8_t *au,
                     const uint64_t *bv, const uint8_t *bu, const uint64_t *cv,
                     const uint8_t *cu, uint64_t *rv, uint8_t *ru) {
  if (ru) {
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        bool u = cu && cu[i * N + j];
        for (int64_t k = 0; k < K && !u; k++)
          u = (au && au[i * K + k]) ||
              (bu && bu[k * N + j]);
        ru[i * N + j] = u;
      }
  }
  if (ec->kind != EK_FLOAT) {
    /* Exact products and sums modulo 2^64, then the accumulator's width. */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        uint64_t acc = cv[i * N + j];
        for (int64_t k = 0; k < K; k++)
          acc += (uint64_t)e_sval(ea, av[i * K + k]) *
                 (uint64_t)e_sval(eb, bv[k * N + j]);
        rv[i * N + j] = acc & ec->mask;
      }
    return;
  }
  double *da = tl_xmalloc(sizeof(double) * (size_t)(M * K));
  double *db = tl_xmalloc(sizeof(double) * (size_t)(K * N));
  for (int64_t i = 0; i < M * K; i++)
    da[i] = e_f(ea, av[i]);
  for (int64_t i = 0; i < K * N; i++)
    db[i] = e_f(eb, bv[i]);
  /* Products of two values of at most 26 significant bits are exact in
   * double; f64 operands use a fused multiply-add instead. */
  bool exact = ea->bits <= 32 && eb->bits <= 32;
  bool direct = exact && sum_in_double_is_exact(ea, eb, ec);
  if (direct && ec->bits == 32) {
    /* The same order per output element, with the j loop innermost so
     * that independent accumulators overlap. */
    double *row = tl_xmalloc(sizeof(double) * (size_t)N);
    for (int64_t i = 0; i < M; i++) {
      for (int64_t j = 0; j < N; j++)
        row[j] = e_f(ec, cv[i * N + j]);
      for (int64_t k = 0; k < K; k++) {
        double aik = da[i * K + k];
        const double *bk = db + k * N;
        for (int64_t j = 0; j < N; j++)
          row[j] = (double)(float)(row[j] + aik * bk[j]);
      }
      for (int64_t j = 0; j < N; j++)
        rv[i * N + j] = e_fencode(ec, row[j]);
    }
    tl_free(row);
    tl_free(da);
    tl_free(db);
    return;
  }
  /* b transposed, so that both operands run along k. */
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      db[j * K + k] = e_f(eb, bv[k * N + j]);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = e_f(ec, cv[i * N + j]);
      const double *pa = da + i * K, *pb = db + j * K;
      if (direct) {
        for (int64_t k = 0; k < K; k++)
          acc = e_f(ec, e_fencode(ec, acc + pa[k] * pb[k]));
      } else if (exact) {
        for (int64_t k = 0; k < K; k++)
          acc = acc_add(ec, acc, pa[k] * pb[k]);
      } else {
        for (int64_t k = 0; k < K; k++) {
          double s = fma(pa[k], pb[k], acc);
          acc = ec->bits == 64 ? s : e_f(ec, e_fencode(ec, s));
        }
      }
      rv[i * N + j] = e_fencode(ec, acc);
    }
  tl_free(da);
  tl_free(db);
}


/* tl.dot: 2-D, or 3-D with a leading batch dimension (one product per
 * batch index). */
static bool exec_dot(TlVm *vm, Inst *in) {
  /* tl.dot_async computes at issue; its result and the shared tiles it
   * reads are in flight until a tl.dot_wait retires its number. */
  uint32_t dot = in->code == TL_OP_TL_DOT_ASYNC ? vm_dot_issue(vm, in) : 0;
  /* A shared operand is read in place, as a tile of its values. */
  Tile sh[2] = {{0}};
  const Tile *ab[2];
  for (unsigned i = 0; i < 2; i++) {
    TlType *t = tl_value_type(tl_op_operand(in->op, i));
    if (tl_tensor_kind(t) != TL_TENSOR_SHARED) {
      ab[i] = operand_tile(vm, in, i);
      continue;
    }
    sh[i].type = t;
    sh[i].n = tl_tensor_num_elements(t);
    sh[i].v = vm_read_shared_operand(vm, in, i, dot);
    if (!sh[i].v) {
      tl_free(sh[0].v);
      return false;
    }
    ab[i] = &sh[i];
  }
  const Tile *a = ab[0], *b = ab[1], *c = operand_tile(vm, in, 2);
  TlType *at = a->type, *bt = b->type;
  unsigned rank = tl_tensor_rank(at);
  int64_t B = rank == 3 ? tl_tensor_dim(at, 0) : 1;
  int64_t M = tl_tensor_dim(at, rank - 2), K = tl_tensor_dim(at, rank - 1);
  int64_t N = tl_tensor_dim(bt, rank - 1);
  const EType *ea = vm_etype(vm, tl_tensor_elem(at));
  const EType *eb = vm_etype(vm, tl_tensor_elem(bt));
  Tile *r = tile_new(vm, result_type(in), false);
  if (a->undef || b->undef || c->undef)
    r->undef = tl_xcalloc((size_t)r->n, 1);
  for (int64_t q = 0; q < B; q++) {
    int64_t oa = q * M * K, ob = q * K * N, oc = q * M * N;
    dot_core(ea, eb, in->et, M, K, N, a->v + oa, a->undef ? a->undef + oa : NULL,
             b->v + ob, b->undef ? b->undef + ob : NULL, c->v + oc,
             c->undef ? c->undef + oc : NULL, r->v + oc, r->undef ? r->undef + oc : NULL);
  }
  tl_free(sh[0].v);
  tl_free(sh[1].v);
  if (dot) {
    vm_dot_regs_add(vm, in, dot);
    r->dot = dot;
    r->dot_op = in->op;
  }
  vm_put_tile(vm, in, 0, r);
  return true;
}

static bool exec_reduce(TlVm *vm, Inst *in) {
  const Tile *a = operand_tile(vm, in, 0);
  const EType *e = in->et;
  TlType *at = a->type;
  int rank = (int)tl_tensor_rank(at);
  int dim = (int)in->imm;
  /* The tile as [outer, n, inner] around the reduced dimension. */
  int64_t outer = 1, inner = 1, n = tl_tensor_dim(at, (unsigned)dim);
  for (int d = 0; d < dim; d++)
    outer *= tl_tensor_dim(at, (unsigned)d);
  for (int d = dim + 1; d < rank; d++)
    inner *= tl_tensor_dim(at, (unsigned)d);
  Tile *r = tile_new(vm, result_type(in), false);
  if (a->undef)
    r->undef = tl_xcalloc((size_t)r->n, 1);
  TlOpId fk = in->pred == TL_REDUCE_SUM   ? TL_OP_ARITH_ADDF
              : in->pred == TL_REDUCE_MAX ? TL_OP_ARITH_MAXF
                                          : TL_OP_ARITH_MINF;
  TlOpId ik = in->pred == TL_REDUCE_SUM   ? TL_OP_ARITH_ADDI
              : in->pred == TL_REDUCE_MAX ? TL_OP_ARITH_MAXI
                                          : TL_OP_ARITH_MINI;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = o * n * inner + q;
      uint64_t acc = a->v[base];
      bool u = a->undef && a->undef[base];
      for (int64_t k = 1; k < n; k++) {
        uint64_t x = a->v[base + k * inner];
        u |= a->undef && a->undef[base + k * inner];
        if (e->kind == EK_FLOAT)
          acc = vm_float_binary(e, fk, acc, x);
        else if (!vm_int_binary(vm, in->op, e, ik, acc, x, &acc))
          TL_UNREACHABLE("sum, max and min are total");
      }
      r->v[o * inner + q] = acc;
      if (r->undef)
        r->undef[o * inner + q] = u;
    }
  vm_put_tile(vm, in, 0, r);
  return true;
}

/*===--- print ------------------------------------------------------------===*/

static void print_elem(FILE *f, const EType *e, uint64_t c) {
  switch (e->kind) {
  case EK_BOOL:
    fputs(c ? "true" : "false", f);
    return;
  case EK_UINT:
    fprintf(f, "%llu", (unsigned long long)c);
    return;
  case EK_SINT:
    fprintf(f, "%lld", (long long)e_sval(e, c));
    return;
  case EK_FLOAT: {
    /* Enough digits to identify the value within its type. */
    unsigned man = tl_type_float_man(e->type);
    int digits = man >= 52 ? 17 : man >= 23 ? 9 : man >= 10 ? 5 : 4;
    fprintf(f, "%.*g", digits, e_f(e, c));
    return;
  }
  }
}

static bool exec_print(TlVm *vm, Inst *in) {
  FILE *f = vm->print_out;
  if (!f)
    return true;
  TlLoc l = tl_op_loc(in->op);
  Val *v = vm_in(vm, in, 0);
  TlType *t = tl_value_type(tl_op_operand(in->op, 0));
  TlStr ts = {0};
  tl_type_print(t, &ts);
  fprintf(f,
          "block (%lld, %lld, %lld): %s:%u:%u: %s = ", (long long)vm->block[0],
          (long long)vm->block[1], (long long)vm->block[2],
          l.file ? l.file : "<unknown>", l.line, l.col, tl_str_cstr(&ts));
  tl_str_free(&ts);
  if (v->kind == V_SCALAR) {
    print_elem(f, in->et2, v->bits);
    fputc('\n', f);
    return true;
  }
  const Tile *a = v->obj;
  int rank = (int)tl_tensor_rank(t);
  int64_t shape[TL_LAYOUT_MAX_RANK], j[TL_LAYOUT_MAX_RANK] = {0};
  for (int d = 0; d < rank; d++)
    shape[d] = tl_tensor_dim(t, (unsigned)d);
  for (int64_t i = 0; i < a->n; i++) {
    int open = 0;
    for (int d = rank - 1; d >= 0 && j[d] == 0; d--)
      open++;
    for (int k = 0; k < open; k++)
      fputc('[', f);
    if (a->undef && a->undef[i])
      fputs("undef", f);
    else
      print_elem(f, in->et2, a->v[i]);
    int close = 0;
    for (int d = rank - 1; d >= 0 && ++j[d] == shape[d]; d--) {
      j[d] = 0;
      close++;
    }
    for (int k = 0; k < close; k++)
      fputc(']', f);
    if (i + 1 < a->n)
      fputs(", ", f);
  }
  fputc('\n', f);
  return true;
}

bool vm_exec_tile(TlVm *vm, Inst *in) {
  switch (in->code) {
  case TL_OP_TL_ALLOC_REGISTER:
    return exec_alloc_register(vm, in);
  case TL_OP_TL_CMP:
    return exec_cmp(vm, in);
  case TL_OP_TL_FMA:
    return exec_fma(vm, in);
  case TL_OP_TL_WHERE:
    return exec_where(vm, in);
  case TL_OP_TL_BROADCAST:
    return exec_broadcast(vm, in);
  case TL_OP_TL_CAST:
    return exec_cast(vm, in);
  case TL_OP_TL_VIEW:
    return exec_view(vm, in);
  case TL_OP_TL_RESHAPE:
    return exec_reshape(vm, in);
  case TL_OP_TL_PERMUTE:
    return exec_permute(vm, in);
  case TL_OP_TL_SLICE:
    return exec_slice(vm, in);
  case TL_OP_TL_DOT:
  case TL_OP_TL_DOT_ASYNC:
    return exec_dot(vm, in);
  case TL_OP_TL_REDUCE:
    return exec_reduce(vm, in);
  case TL_OP_TL_PRINT:
    return exec_print(vm, in);
  case TL_OP_TL_ADD:
  case TL_OP_TL_SUB:
  case TL_OP_TL_MUL:
  case TL_OP_TL_DIV:
  case TL_OP_TL_MOD:
  case TL_OP_TL_MAX:
  case TL_OP_TL_MIN:
  case TL_OP_TL_AND:
  case TL_OP_TL_OR:
  case TL_OP_TL_XOR:
  case TL_OP_TL_SHL:
  case TL_OP_TL_SHR:
  case TL_OP_TL_NEG:
  case TL_OP_TL_ABS:
  case TL_OP_TL_NOT:
  case TL_OP_TL_EXP:
  case TL_OP_TL_EXP2:
  case TL_OP_TL_LOG2:
  case TL_OP_TL_SQRT:
  case TL_OP_TL_RSQRT:
    return exec_elementwise(vm, in);
  default:
    TL_UNREACHABLE("not a tile op");
  }
}
