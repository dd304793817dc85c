#!/usr/bin/env python3
"""Random tl kernels: the lowering's property test.

Generates random, well-typed tl kernels from a seed (global loads into
random register layouts, a random chain of casts, views, reshapes,
permutes and element-wise ops, global stores and atomics, scalar loads,
gathers, counters and fences), and checks that the kernel
lowered by `lower-tl-to-simt,canonicalize,cse` and run on the thread-level
VM (`tl-run --simt`) writes the same bits as the kernel itself on the
block-level VM (`tl-run --vm`), on the same seeded random inputs.

  random_tl.py --seed N                 print kernel N (its commands on top)
  random_tl.py --check --seeds 0-199 --tools BUILD/bin [--jobs J] [--dir DIR] [--keep]

The check runs, for every seed, tl-opt (the kernel must verify: a kernel
that does not is a generator or verifier bug), tl-run --vm saving every
output buffer, tl-opt with the lowering, and tl-run --simt checking every
output against the saved one with --check (tolerance 0; NaN matches NaN)
and saving it again, then compares the two saves bit for bit, so that -0
against +0 fails too while any NaN matches any NaN of the same type. Any
failure prints the seed, what failed and the commands that reproduce it,
and the exit status is 1. Python 3 standard library only.

docs/testing.md ("Random programs") describes the test.
"""

import argparse
import concurrent.futures
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

PIPELINE = "lower-tl-to-simt,canonicalize,cse"

# Features the generator can produce but leaves off: each is reported by
# the lowering as not lowered yet (docs/lowering.md, "Not lowered yet"),
# or found broken (the reduced case is named). Turning one on makes the
# generator emit it; the check then shows whether it now works.
FEATURES = {
    # 'tl.store_global' op cannot lower to simt yet: global stores of
    # sub-byte or 64-bit elements.
    "subbyte_store": False,
    # 64-bit element types (i64, u64, f64).
    "wide_types": True,
    # masked global loads of 3, 5, 6 or 7-bit elements.
    "masked_straddling_load": False,
    # casts from or to small floats (fNeXmY), and element-wise arithmetic,
    # comparisons and negation on them. The lowering handles them (in f32,
    # rounded once back), but with it on the generator also emits programs
    # the verifier refuses (bit ops on floats, float literals outside the
    # format's range) and casts the lowering refuses (32-bit integers into
    # small floats, which would round twice through f32); those need
    # excluding first.
    "small_float_compute": False,
    # float tl.mod (exact fmod; f64 is not lowered).
    "float_mod": True,
    # casts to i1 (bool): x != 0 on both VMs (NaN is true). Regression
    # case: test/passes/Inputs/random/cast-to-bool.tl.
    "cast_to_bool": True,
    # casts from a float type to itself: the identity, NaN payloads kept.
    # Regression case: test/passes/Inputs/random/identity-cast-nan.tl.
    "identity_float_cast": True,
    # float -> integer casts with a rounding (rn, rz, rm, rp): the
    # quantising recipes for rn into 2, 4 and 8 bits, cvt to an integral
    # value otherwise.
    "cast_rounding": True,
    # tl.atomic_rmw and tl.atomic_cas in place of some stores, a scalar
    # counter atomic, tl.fence; tl.load_scalar operands and tl.gather
    # tiles. Their choices come from a second random stream, so that a
    # seed's other ops stay what they were without them.
    "atomics": True,
    "data_dependent_loads": True,
    # a tile stored into a shared tile and loaded back in another layout
    # (tl.alloc_shared, tl.store_shared, tl.synchronize, tl.load_shared,
    # tl.free_shared), every element type: sub-byte ones only where each
    # thread's runs along the last dimension are whole bytes (else threads
    # would share bytes: the block VM reports a race and the lowering
    # refuses). Its choices come from a third random stream.
    "shared_round_trip": True,
    # warp branches: scf.if on tl.warp_index == k, in which warp k alone
    # loads, computes and stores (docs/langref.md, "Warp-uniform values and
    # warp branches"), and stores a tile made from the warp index. Their
    # choices come from a fourth random stream.
    "warp_branches": True,
}

# --------------------------------------------------------------------------
# Element types

class DType:
    """A tl element type: its name, width and kind ('bool', 'int' signed,
    'uint', 'float' for f16/bf16/f32, 'small' for fNeXmY)."""

    def __init__(self, name, bits, kind, exp=0, man=0):
        self.name, self.bits, self.kind, self.exp, self.man = name, bits, kind, exp, man

    def is_int(self):
        return self.kind in ("bool", "int", "uint")

    def is_float(self):
        return self.kind in ("float", "small")

    def compute(self):
        """The lowering decodes it to a 32-bit value (arith, casts, cmp)."""
        if self.bits > 32:
            return False
        return self.kind != "small" or FEATURES["small_float_compute"]

    def storable(self):
        if self.bits > 32 or self.bits in (8, 16, 32):
            return self.bits <= 32 or FEATURES["wide_types"]
        return FEATURES["subbyte_store"]

    def is_nan(self, code):
        """Whether the code is a NaN (any payload, either sign)."""
        if not self.is_float():
            return False
        body = code & ((1 << (self.bits - 1)) - 1)
        allexp = ((1 << self.exp) - 1) << self.man
        if self.name == "f8e4m3":
            return body == 0x7F
        if self.kind == "float" or self.name in ("f8e5m2", "f64"):
            return (body & allexp) == allexp and (body & ((1 << self.man) - 1)) != 0
        return False

    def __repr__(self):
        return self.name


def _types():
    ts = [DType("i1", 1, "bool")]
    for w in range(1, 9):
        ts.append(DType("u%d" % w, w, "uint"))
        if w >= 2:
            ts.append(DType("i%d" % w, w, "int"))
    for w in (16, 32, 64):
        ts.append(DType("u%d" % w, w, "uint"))
        ts.append(DType("i%d" % w, w, "int"))
    ts.append(DType("f16", 16, "float", 5, 10))
    ts.append(DType("bf16", 16, "float", 8, 7))
    ts.append(DType("f32", 32, "float", 8, 23))
    ts.append(DType("f64", 64, "float", 11, 52))
    for n in range(2, 9):
        for x in range(1, n):
            ts.append(DType("f%de%dm%d" % (n, x, n - 1 - x), n, "small", x, n - 1 - x))
    return {t.name: t for t in ts}


TYPES = _types()


def all_types():
    return [t for t in TYPES.values() if t.bits <= 32 or FEATURES["wide_types"]]


def compute_types():
    return [t for t in all_types() if t.compute()]


def cast_targets():
    return [t for t in compute_types() if t.kind != "bool" or FEATURES["cast_to_bool"]]


def random_type(rng, pool=None):
    """Integers, IEEE floats and small floats in about equal shares (the
    small floats alone are more than half of the family)."""
    pool = pool if pool is not None else all_types()
    groups = [[t for t in pool if t.is_int()],
              [t for t in pool if t.kind == "float"],
              [t for t in pool if t.kind == "small"]]
    groups = [g for g in groups if g]
    return rng.choice(rng.choice(groups))


# The atomics of each element type (tl.atomic_rmw's kinds, and "cas").
ATOMIC_KINDS = {
    "i32": ["add", "max", "min", "exch", "cas"],
    "u32": ["add", "max", "min", "exch", "cas"],
    "f32": ["add", "exch", "cas"],
    "f16": ["add"],
}


def storable_types():
    return [t for t in all_types() if t.storable()]


# --------------------------------------------------------------------------
# Register layouts (docs/layouts.md): modes per dimension, most significant
# first; the spatial list (mode ids, or -c for a replication digit of size
# c) and the local list (mode ids), both most significant first.

class Layout:
    def __init__(self, rank):
        self.rank = rank
        self.size = {}  # mode id -> size
        self.dims = [[] for _ in range(rank)]
        self.spatial = []
        self.local = []
        self.text = None  # the primitive chain it was built from, if any

    def copy(self):
        l = Layout(self.rank)
        l.size = dict(self.size)
        l.dims = [list(d) for d in self.dims]
        l.spatial = list(self.spatial)
        l.local = list(self.local)
        return l

    def new_mode(self, size):
        m = max(self.size, default=-1) + 1
        self.size[m] = size
        return m

    @staticmethod
    def primitive(kind, sizes):
        """local, spatial, column_local, column_spatial or replicated."""
        l = Layout(len(sizes))
        if kind == "replicated":
            l.spatial = [-sizes[0]]
            return l
        ids = []
        for d, n in enumerate(sizes):
            m = l.new_mode(n)
            l.dims[d].append(m)
            ids.append(m)
        if kind.startswith("column_"):
            ids.reverse()
        (l.local if kind.endswith("local") else l.spatial).extend(ids)
        return l

    def product(self, g):
        """self . g: self's modes and entries are the more significant."""
        h = self.copy()
        ren = {m: h.new_mode(s) for m, s in sorted(g.size.items())}
        for d in range(self.rank):
            h.dims[d] += [ren[m] for m in g.dims[d]]
        h.spatial += [e if e < 0 else ren[e] for e in g.spatial]
        h.local += [ren[m] for m in g.local]
        return h

    def shape(self):
        out = []
        for d in self.dims:
            p = 1
            for m in d:
                p *= self.size[m]
            out.append(p)
        return out

    def threads(self):
        p = 1
        for e in self.spatial:
            p *= -e if e < 0 else self.size[e]
        return p

    def replication(self):
        p = 1
        for e in self.spatial:
            if e < 0:
                p *= -e
        return p

    def local_size(self):
        p = 1
        for m in self.local:
            p *= self.size[m]
        return p

    def canonical(self):
        """Size-1 modes dropped, replication digits merged, and modes
        adjacent both in their dimension and in their list merged (the
        library's canonical form, up to mode numbering)."""
        l = self.copy()
        ones = {m for m, s in l.size.items() if s == 1}
        l.dims = [[m for m in d if m not in ones] for d in l.dims]
        l.local = [m for m in l.local if m not in ones]
        sp = []
        for e in l.spatial:
            if e in ones or e == -1:
                continue
            if e < 0 and sp and sp[-1] < 0:
                sp[-1] *= -e
                sp[-1] = -abs(sp[-1])
                continue
            sp.append(e)
        l.spatial = sp
        for m in ones:
            del l.size[m]
        changed = True
        while changed:
            changed = False
            for d in l.dims:
                for i in range(len(d) - 1):
                    a, b = d[i], d[i + 1]
                    for lst in (l.spatial, l.local):
                        for j in range(len(lst) - 1):
                            if lst[j] == a and lst[j + 1] == b:
                                l.size[a] *= l.size[b]
                                del l.size[b]
                                del d[i + 1]
                                del lst[j + 1]
                                changed = True
                                break
                        if changed:
                            break
                    if changed:
                        break
                if changed:
                    break
        return l

    def explicit(self):
        """The explicit text form: modes numbered dimension by dimension."""
        l = self.canonical()
        order = [m for d in l.dims for m in d]
        num = {m: i for i, m in enumerate(order)}
        return "layout<shape=[%s], modes=[%s], spatial=[%s], local=[%s]>" % (
            ", ".join(str(s) for s in l.shape()),
            ", ".join(str(l.size[m]) for m in order),
            ", ".join(str(e if e < 0 else num[e]) for e in l.spatial),
            ", ".join(str(num[m]) for m in l.local))

    def body(self):
        return self.text if self.text else self.explicit()

    def permute(self, perm):
        l = self.copy()
        l.dims = [self.dims[p] for p in perm]
        l.rank = len(perm)
        l.text = None
        return l

    def reshape(self, shape):
        """Row-major re-indexing, or None where the modes do not split at
        the new dimension boundaries."""
        l = self.canonical()
        flat = [m for d in l.dims for m in d]
        l.text = None
        new_dims = [[] for _ in shape]
        i = len(flat)
        for d in range(len(shape) - 1, -1, -1):
            need = shape[d]
            while need > 1:
                if i == 0:
                    return None
                m = flat[i - 1]
                s = l.size[m]
                if s <= need:
                    if need % s:
                        return None
                    new_dims[d].insert(0, m)
                    need //= s
                    i -= 1
                else:
                    if s % need:
                        return None
                    # split m into an outer (s / need) and an inner (need)
                    inner = l.new_mode(need)
                    l.size[m] = s // need
                    for lst in (l.spatial, l.local):
                        if m in lst:
                            k = lst.index(m)
                            lst.insert(k + 1, inner)
                    new_dims[d].insert(0, inner)
                    need = 1
        if i != 0:
            return None
        l.dims = new_dims
        l.rank = len(shape)
        return l


def factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def random_layout(rng, threads, rank, local_total, repl=1):
    """A random chain of primitives over `threads` threads (replicated
    `repl` times) holding `local_total` elements per thread."""
    terms = []

    def spread(fs, kinds, maxterms):
        fs = list(fs)
        rng.shuffle(fs)
        k = rng.randint(1, max(1, min(maxterms, len(fs))))
        groups = [[] for _ in range(k)]
        for f in fs:
            groups[rng.randrange(k)].append(f)
        for g in groups:
            sizes = [1] * rank
            for f in g:
                sizes[rng.randrange(rank)] *= f
            terms.append((rng.choice(kinds), sizes))

    spread(factors(threads // repl), ["spatial", "column_spatial"], 3)
    spread(factors(local_total), ["local", "column_local"], 3)
    if repl > 1:
        rf = factors(repl)
        cut = rng.randint(0, len(rf))
        for part in (rf[:cut], rf[cut:]):
            if part:
                p = 1
                for f in part:
                    p *= f
                terms.append(("replicated", [p]))
    rng.shuffle(terms)
    # a chain needs a term with a shape
    if all(k == "replicated" for k, _ in terms):
        terms.append(("local", [1] * rank))
    l = None
    texts = []
    for kind, sizes in terms:
        if kind == "replicated":
            p = Layout.primitive(kind, sizes)
            p.rank = rank
            p.dims = [[] for _ in range(rank)]
        else:
            p = Layout.primitive(kind, sizes)
        l = p if l is None else l.product(p)
        texts.append("%s(%s)" % (kind, ", ".join(str(s) for s in sizes)))
    l.text = ".".join(texts)
    return l


def whole_byte_runs(layout, bits):
    """Whether a tile of `bits`-bit elements in `layout` stores into a
    row-major shared tile in whole bytes per thread: always for whole-byte
    elements; for sub-byte ones, the last dimension's least significant
    mode must be the last local one, of a power-of-two size s whose run
    (cut to at most 128 bits) is whole bytes."""
    if bits % 8 == 0:
        return True
    c = layout.canonical()
    last = c.dims[c.rank - 1]
    if not last or not c.local or c.local[-1] != last[-1]:
        return False
    s = c.size[last[-1]]
    if s & (s - 1):
        return False
    while s * bits > 128:
        s //= 2
    return s * bits % 8 == 0


# --------------------------------------------------------------------------
# Kernels

class Tile:
    def __init__(self, name, dtype, layout):
        self.name, self.dtype, self.layout = name, dtype, layout

    def key(self):
        return (self.dtype.name, tuple(self.layout.shape()), self.layout.canonical().explicit())


class Kernel:
    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.rng2 = random.Random(seed * 1000003 + 17)  # the new ops' stream
        self.rng3 = random.Random(seed * 1000033 + 29)  # shared round trips
        self.rng4 = random.Random(seed * 7919 + 5)  # warp branches
        rng = self.rng
        self.threads = 32 * rng.choice([1, 1, 2, 3, 4, 5, 6, 7, 8])
        self.grid = rng.choice([(1, 1), (1, 1), (2, 1), (3, 1), (1, 2), (2, 2)])
        self.params = []  # (name, type text, arg spec)
        self.assume = {}
        self.lines = []
        self.aliases = {}  # layout body -> alias
        self.outputs = []  # (param name, dtype)
        self.counter = 0
        self.consts = {}
        self.pool = []

    # --- text helpers
    def fresh(self, base="v"):
        self.counter += 1
        return "%%%s%d" % (base, self.counter)

    def emit(self, line):
        self.lines.append("  " + line)

    def const(self, v):
        if v not in self.consts:
            n = "%%c%s" % (str(v).replace("-", "m"))
            self.emit("%s = arith.constant %d : i32" % (n, v))
            self.consts[v] = n
        return self.consts[v]

    def lay(self, layout):
        body = layout.body()
        if body not in self.aliases:
            self.aliases[body] = "#l%d" % len(self.aliases)
        return self.aliases[body]

    def ty(self, dtype, layout):
        return "!tl.reg<%sx%s, %s>" % ("x".join(str(s) for s in layout.shape()), dtype.name, self.lay(layout))

    def tty(self, t):
        return self.ty(t.dtype, t.layout)

    # --- memory
    def access(self, dtype, shape, store):
        """A new buffer parameter, its view and the offsets of one access
        of a tile of `shape` by every block; returns (view, view type,
        offsets, masked)."""
        rng = self.rng
        rank = len(shape)
        gx, gy = self.grid
        pname = "%s%d" % ("y" if store else "x", len(self.params))
        masked = rng.random() < 0.2 and (store or dtype.bits >= 8 or 8 % dtype.bits == 0
                                         or FEATURES["masked_straddling_load"])
        # the dimensions the block indices step along
        bdim = [0, 0] if rank == 1 else rng.sample(range(rank), 2)
        blocks = [1] * rank
        if rank == 1:
            blocks[0] = gx * gy
        else:
            blocks[bdim[0]] *= gx
            blocks[bdim[1]] *= gy
        # constant part of the offset, room after the tiles
        base = [rng.choice([0, 0, 0, 1, 2, 5]) for _ in range(rank)]
        pad = [rng.choice([0, 0, 1, 3]) for _ in range(rank)]
        dims = [base[d] + blocks[d] * shape[d] + pad[d] for d in range(rank)]
        if masked:
            for d in range(rank):
                r = rng.random()
                if r < 0.3:
                    base[d] = -rng.randint(1, shape[d])
                if r > 0.6:
                    dims[d] = rng.randint(1, dims[d])
        # offsets
        offs = []
        for d in range(rank):
            terms = []
            if rank == 1:
                # x + y * gx
                if gx > 1 or gy > 1:
                    lin = self.block_linear()
                    terms.append(self.mul(lin, shape[0]))
            else:
                if d == bdim[0] and gx > 1:
                    terms.append(self.mul("%bx", shape[d]))
                if d == bdim[1] and gy > 1:
                    terms.append(self.mul("%by", shape[d]))
            if base[d] or not terms:
                terms.append(self.const(base[d]))
            o = terms[0]
            for t in terms[1:]:
                n = self.fresh("o")
                self.emit("%s = arith.addi %s, %s : i32" % (n, o, t))
                o = n
            offs.append(o)
        # the view: row-major, or strided with permuted dimensions
        strided = rng.random() < 0.2
        sizes = []
        dyn = []
        for d in range(rank):
            if masked and rng.random() < 0.5:
                n = "n%d_%d" % (len(self.params), d)
                dyn.append((n, dims[d]))
                sizes.append("%" + n)
            else:
                sizes.append(str(dims[d]))
        gty_dims = "x".join("?" if s.startswith("%") else s for s in sizes)
        if strided:
            order = list(range(rank))
            rng.shuffle(order)
            strides = [0] * rank
            st = 1
            for d in reversed(order):
                strides[d] = st
                st *= dims[d] + rng.choice([0, 0, 1])
            if not store and rng.random() < 0.2:
                strides[rng.randrange(rank)] = 0
            extent = 1 + sum((dims[d] - 1) * strides[d] for d in range(rank))
            gty = "!tl.global<%sx%s, strided>" % (gty_dims, dtype.name)
            view_args = "[%s] strides[%s]" % (", ".join(sizes), ", ".join(str(s) for s in strides))
        else:
            extent = 1
            for d in dims:
                extent *= d
            gty = "!tl.global<%sx%s>" % (gty_dims, dtype.name)
            view_args = "[%s]" % ", ".join(sizes)
        spec = "%s:%s:%d" % ("rand", dtype.name, extent)
        self.params.append((pname, "!tl.ptr<%s>" % dtype.name, spec))
        for n, v in dyn:
            self.params.append((n, "i32", str(v)))
            if v % 2 == 0 and rng.random() < 0.5:
                self.assume[n] = 2 ** min(4, (v & -v).bit_length() - 1)
        if rng.random() < 0.3:
            self.assume[pname] = 16
        g = self.fresh("g")
        self.emit("%s = tl.view_global %%%s%s : %s" % (g, pname, view_args, gty))
        return pname, g, gty, offs, masked

    def block_linear(self):
        if "lin" not in self.consts:
            gx, gy = self.grid
            if gy > 1:
                t = self.fresh("o")
                self.emit("%s = arith.muli %%by, %s : i32" % (t, self.const(gx)))
                n = self.fresh("o")
                self.emit("%s = arith.addi %%bx, %s : i32" % (n, t))
                self.consts["lin"] = n
            else:
                self.consts["lin"] = "%bx"
        return self.consts["lin"]

    def mul(self, v, k):
        n = self.fresh("o")
        self.emit("%s = arith.muli %s, %s : i32" % (n, v, self.const(k)))
        return n

    def load(self, dtype, layout):
        _, g, gty, offs, masked = self.access(dtype, layout.shape(), False)
        t = Tile(self.fresh("t"), dtype, layout)
        self.emit("%s = tl.load_global %s[%s]%s : %s -> %s" % (
            t.name, g, ", ".join(offs), " masked" if masked else "", gty, self.tty(t)))
        self.pool.append(t)
        return t

    def shared_round_trip(self, x):
        """x through a shared tile of its type and shape: stored, the
        block synchronized, loaded back in a random layout of x's shape
        (x's own when none comes up), the tile freed."""
        r3 = self.rng3
        shape = x.layout.shape()
        l = x.layout
        for _ in range(30):
            c = random_layout(r3, self.threads, x.layout.rank, r3.choice([1, 2, 4, 8, 16]))
            if c.shape() == shape:
                l = c
                break
        sty = "!tl.shared<%sx%s>" % ("x".join(str(d) for d in shape), x.dtype.name)
        zeros = ", ".join(self.const(0) for _ in shape)
        sm = self.fresh("s")
        self.emit("%s = tl.alloc_shared : %s" % (sm, sty))
        self.emit("tl.store_shared %s, %s[%s] : %s, %s" % (x.name, sm, zeros, self.tty(x), sty))
        self.emit("tl.synchronize")
        t = Tile(self.fresh(), x.dtype, l)
        self.emit("%s = tl.load_shared %s[%s] : %s -> %s" % (t.name, sm, zeros, sty, self.tty(t)))
        self.emit("tl.free_shared %s : %s" % (sm, sty))
        self.pool.append(t)
        return t

    def store(self, t):
        pname, g, gty, offs, masked = self.access(t.dtype, t.layout.shape(), True)
        kinds = ATOMIC_KINDS.get(t.dtype.name, []) if FEATURES["atomics"] else []
        if kinds and self.rng2.random() < 0.3:
            self.atomic_store(t, pname, g, gty, offs, masked, self.rng2.choice(kinds))
        else:
            self.emit("tl.store_global %s, %s[%s]%s : %s, %s" % (
                t.name, g, ", ".join(offs), " masked" if masked else "", self.tty(t), gty))
        self.outputs.append((pname, t.dtype))

    def memory_order(self):
        """Random `scope` and `ordering` attributes (or none)."""
        r2 = self.rng2
        attrs = []
        if r2.random() < 0.4:
            attrs.append('ordering = "%s"' % r2.choice(["relaxed", "acquire", "release", "acq_rel"]))
        if r2.random() < 0.3:
            attrs.append('scope = "%s"' % r2.choice(["cta", "gpu", "sys"]))
        return " {%s}" % ", ".join(attrs) if attrs else ""

    def atomic_store(self, t, pname, g, gty, offs, masked, kind):
        """The tile form of an atomic into the output buffer: add, max,
        min and exch into its random contents, cas into zeros with a
        compared tile of zeros (every element swapped) or ones (none)."""
        r2 = self.rng2
        m = " masked" if masked else ""
        if kind != "cas":
            self.emit("tl.atomic_rmw %s %s, %s[%s]%s%s : %s, %s" % (
                kind, t.name, g, ", ".join(offs), m, self.memory_order(), self.tty(t), gty))
            return
        for i, (n, ty, spec) in enumerate(self.params):
            if n == pname:
                self.params[i] = (n, ty, spec.replace("rand:", "zeros:", 1))
        zero = "0.0" if t.dtype.kind == "float" else "0"
        one = "1.0" if t.dtype.kind == "float" else "1"
        c = self.constant(t.dtype, t.layout, zero if r2.random() < 0.7 else one)
        self.emit("tl.atomic_cas %s, %s, %s[%s]%s%s : %s, %s" % (
            c.name, t.name, g, ", ".join(offs), m, self.memory_order(), self.tty(t), gty))

    def counter_atomic(self):
        """A scalar atomic on a counter buffer, after a fence sometimes; its
        old value (which depends on the block order, the same in both VMs)
        broadcast into a tile and stored."""
        r2 = self.rng2
        dt = TYPES[r2.choice(["u32", "i32"])]
        pname = "cnt%d" % len(self.params)
        self.params.append((pname, "!tl.ptr<%s>" % dt.name, "%s:%s:4" % (r2.choice(["zeros", "rand"]), dt.name)))
        g = self.fresh("g")
        self.emit("%s = tl.view_global %%%s[4] : !tl.global<4x%s>" % (g, pname, dt.name))
        if r2.random() < 0.5:
            self.emit("tl.fence%s" % r2.choice(["", ' {ordering = "release"}', ' {ordering = "acquire", scope = "sys"}']))
        kind = r2.choice(["add", "max", "min", "exch", "cas"])
        v = self.fresh("s")
        self.emit("%s = arith.constant %d : %s" % (v, r2.randint(0, 5), dt.name))
        idx = "%bx" if r2.random() < 0.5 else self.const(r2.randint(0, 3))
        old = self.fresh("s")
        if kind == "cas":
            c = self.fresh("s")
            self.emit("%s = arith.constant %d : %s" % (c, r2.randint(0, 1), dt.name))
            self.emit("%s = tl.atomic_cas %s, %s, %s[%s]%s : %s, !tl.global<4x%s>" % (
                old, c, v, g, idx, self.memory_order(), dt.name, dt.name))
        else:
            self.emit("%s = tl.atomic_rmw %s %s, %s[%s]%s : %s, !tl.global<4x%s>" % (
                old, kind, v, g, idx, self.memory_order(), dt.name, dt.name))
        self.outputs.append((pname, dt))
        l = random_layout(r2, self.threads, r2.randint(1, 2), r2.choice([1, 2]))
        t = Tile(self.fresh("t"), dt, l)
        self.emit("%s = tl.broadcast %s : %s -> %s" % (t.name, old, dt.name, self.tty(t)))
        return t

    def scalar_mix(self, x):
        """x combined with one element of a new buffer (tl.load_scalar, an
        acquire load sometimes), broadcast to x's layout."""
        r2 = self.rng2
        dt = x.dtype
        pname = "ls%d" % len(self.params)
        self.params.append((pname, "!tl.ptr<%s>" % dt.name, "rand:%s:8" % dt.name))
        g = self.fresh("g")
        self.emit("%s = tl.view_global %%%s[8] : !tl.global<8x%s>" % (g, pname, dt.name))
        order = ""
        if dt.bits in (16, 32, 64) and r2.random() < 0.4:
            order = ' {ordering = "%s"}' % r2.choice(["relaxed", "acquire"])
        idx = "%bx" if r2.random() < 0.5 else self.const(r2.randint(0, 7))
        v = self.fresh("s")
        self.emit("%s = tl.load_scalar %s[%s]%s : !tl.global<8x%s> -> %s" % (
            v, g, idx, order, dt.name, dt.name))
        b = Tile(self.fresh("b"), dt, x.layout)
        self.emit("%s = tl.broadcast %s : %s -> %s" % (b.name, v, dt.name, self.tty(b)))
        ops = ["tl.max", "tl.min"] + (["tl.xor", "tl.and"] if dt.is_int() else ["tl.add"])
        return self.binary(r2.choice(ops), x, b)

    def gather(self):
        """A tile of rows (rank 2) or elements (rank 1) selected by an
        index tile loaded from a u8 buffer (every row of a 256-row view
        reachable) or an i32 one (masked: mostly outside, reading 0). The
        index tile's layout has the result's row structure or another of
        the same size (the indices then move through the shared scratch)."""
        r2 = self.rng2
        dt = r2.choice([t for t in all_types() if t.bits in (8, 16, 32, 64) and t.kind != "small"])
        rank = r2.choice([1, 2])
        local = r2.choice([1, 1, 2, 4])
        repl = 1
        if r2.random() < 0.3:
            repl = r2.choice([d for d in divisors(self.threads) if d > 1])
        base = random_layout(r2, self.threads, 1, local, repl)
        rows = base.shape()[0]
        ilay = random_layout(r2, self.threads, 1, local, repl) if r2.random() < 0.5 else base
        cols = r2.choice([1, 2, 4]) if rank == 2 else 1
        if rank == 2:
            lr = base.reshape([rows, 1])
            p = Layout.primitive("local", [1, cols])
            lr = lr.product(p) if r2.random() < 0.5 else p.product(lr)
            ilay = ilay.reshape([rows, 1])
        else:
            lr = base
        if lr is None or ilay is None:
            return None
        itype = TYPES[r2.choice(["u8", "u8", "i32"])]
        masked = itype.name == "i32" or r2.random() < 0.3
        nrows = r2.randint(1, 256) if masked else 256
        ishape = [rows] + [1] * (rank - 1)
        ip = "ix%d" % len(self.params)
        self.params.append((ip, "!tl.ptr<%s>" % itype.name, "rand:%s:%d" % (itype.name, rows)))
        gi = self.fresh("g")
        idims = ", ".join(str(d) for d in ishape)
        ity = "!tl.global<%sx%s>" % ("x".join(str(d) for d in ishape), itype.name)
        self.emit("%s = tl.view_global %%%s[%s] : %s" % (gi, ip, idims, ity))
        it = Tile(self.fresh("i"), itype, ilay)
        self.emit("%s = tl.load_global %s[%s] : %s -> %s" % (
            it.name, gi, ", ".join([self.const(0)] * rank), ity, self.tty(it)))
        dp = "x%d" % len(self.params)
        ddims = [nrows] + ([cols] if rank == 2 else [])
        n = 1
        for d in ddims:
            n *= d
        self.params.append((dp, "!tl.ptr<%s>" % dt.name, "rand:%s:%d" % (dt.name, n)))
        gd = self.fresh("g")
        dty = "!tl.global<%sx%s>" % ("x".join(str(d) for d in ddims), dt.name)
        self.emit("%s = tl.view_global %%%s[%s] : %s" % (gd, dp, ", ".join(str(d) for d in ddims), dty))
        r = Tile(self.fresh("t"), dt, lr)
        offs = [it.name] + [self.const(0)] * (rank - 1)
        self.emit("%s = tl.gather %s[%s]%s : %s, %s -> %s" % (
            r.name, gd, ", ".join(offs), " masked" if masked else "", dty, self.tty(it), self.tty(r)))
        return r

    # --- ops
    def unary(self, op, x, dtype=None, layout=None, extra=""):
        dtype = dtype or x.dtype
        layout = layout or x.layout
        r = Tile(self.fresh(), dtype, layout)
        if op not in ("tl.cast", "tl.view", "tl.reshape", "tl.permute"):
            self.emit("%s = %s %s : %s" % (r.name, op, x.name, self.tty(r)))
        else:
            self.emit("%s = %s %s%s : %s -> %s" % (r.name, op, x.name, extra, self.tty(x), self.tty(r)))
        self.pool.append(r)
        return r

    def partner(self, x):
        """Another tile of x's type: one in the pool, a constant tile or a
        fresh load."""
        rng = self.rng
        same = [t for t in self.pool if t.key() == x.key()]
        r = rng.random()
        if r < 0.35 and same:
            return rng.choice(same)
        if r < 0.5 and x.dtype.compute():
            return self.constant(x.dtype, x.layout)
        return self.load(x.dtype, x.layout)

    def constant(self, dtype, layout, value=None):
        rng = self.rng
        if value is None:
            if dtype.kind == "float":
                value = rng.choice(["0.0", "-0.0", "1.0", "-1.5", "0.25", "3.0"])
            elif dtype.kind == "bool":
                value = str(rng.randint(0, 1))
            elif dtype.kind == "uint":
                value = str(rng.randint(0, (1 << dtype.bits) - 1))
            else:
                value = str(rng.randint(-(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1))
        t = Tile(self.fresh("k"), dtype, layout)
        self.emit("%s = tl.alloc_register %s : %s" % (t.name, value, self.tty(t)))
        return t

    def binary(self, op, a, b):
        r = Tile(self.fresh(), a.dtype, a.layout)
        self.emit("%s = %s %s, %s : %s" % (r.name, op, a.name, b.name, self.tty(r)))
        self.pool.append(r)
        return r

    def random_op(self, x):
        rng = self.rng
        dt = x.dtype
        choices = ["reshape", "permute", "where"]
        if x.layout.replication() == 1:
            choices += ["view", "view"]
        if dt.compute():
            choices += ["cast"] * 4 + ["binary"] * 4 + ["unary", "cmp_where", "intdiv"]
        op = rng.choice(choices)
        if op == "cast":
            to = random_type(rng, cast_targets())
            if to is dt and dt.is_float() and not FEATURES["identity_float_cast"]:
                to = TYPES["i32"]
            extra = ""
            if (FEATURES["cast_rounding"] and dt.is_float() and
                    to.kind in ("int", "uint") and rng.random() < 0.6):
                extra = ' {rounding = "%s"}' % rng.choice(["rn", "rn", "rz", "rm", "rp"])
            return self.unary("tl.cast", x, dtype=to, extra=extra)
        if op == "view":
            return self.view(x)
        if op == "reshape":
            n = 1
            for s in x.layout.shape():
                n *= s
            for _ in range(10):
                rank = rng.randint(1, 4)
                shape = [1] * rank
                for f in factors(n):
                    shape[rng.randrange(rank)] *= f
                l = x.layout.reshape(shape)
                if l is not None:
                    break
            else:
                l = x.layout.reshape([n])
            return self.unary("tl.reshape", x, layout=l)
        if op == "permute":
            perm = list(range(x.layout.rank))
            rng.shuffle(perm)
            return self.unary("tl.permute", x, layout=x.layout.permute(perm),
                              extra=", [%s]" % ", ".join(str(p) for p in perm))
        if op == "binary":
            ops = ["tl.add", "tl.sub", "tl.mul", "tl.max", "tl.min"]
            if dt.is_int():
                ops += ["tl.and", "tl.or", "tl.xor"]
            else:
                ops += ["tl.div"]
            y = self.partner(x)
            a, b = (x, y) if rng.random() < 0.5 else (y, x)
            return self.binary(rng.choice(ops), a, b)
        if op == "unary":
            ops = ["tl.neg", "tl.abs"] + (["tl.not"] if dt.is_int() else [])
            return self.unary(rng.choice(ops), x)
        if op == "intdiv":
            return self.intdiv(x)
        # a condition over a tile of this layout, and a choice
        if op == "cmp_where" or rng.random() < 0.5 and dt.compute():
            c0, c1 = x, self.partner(x)
        else:
            ct = random_type(rng, compute_types())
            c0 = self.load(ct, x.layout)
            c1 = self.partner(c0)
        c = Tile(self.fresh("p"), TYPES["i1"], x.layout)
        pred = rng.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        self.emit("%s = tl.cmp %s, %s, %s : %s" % (c.name, pred, c0.name, c1.name, self.tty(c0)))
        y = self.partner(x) if rng.random() < 0.7 else x
        a, b = (x, y) if rng.random() < 0.5 else (y, x)
        r = Tile(self.fresh(), dt, x.layout)
        self.emit("%s = tl.where %s, %s, %s : %s" % (r.name, c.name, a.name, b.name, self.tty(r)))
        self.pool.append(r)
        return r

    def intdiv(self, x):
        """tl.div, tl.mod, tl.shl, tl.shr with operands made defined:
        divisors odd and positive, shift amounts below the width."""
        rng = self.rng
        dt = x.dtype
        y = self.partner(x)
        if dt.kind == "float":
            if FEATURES["float_mod"] and rng.random() < 0.5:
                return self.binary("tl.mod", x, y)
            return self.binary("tl.div", x, y)
        if dt.kind == "bool":
            return self.binary("tl.xor", x, y)
        op = rng.choice(["tl.div", "tl.mod", "tl.shl", "tl.shr"])
        if op in ("tl.div", "tl.mod"):
            top = (1 << (dt.bits - 1)) - 1 if dt.kind == "int" else (1 << dt.bits) - 1
            if top == 0:  # i2 ... keeps 1: {1}
                top = 1
            m = self.constant(dt, x.layout, str(top))
            one = self.constant(dt, x.layout, "1")
            y = self.binary("tl.or", self.binary("tl.and", y, m), one)
        else:
            # amounts in [0, 2^floor(log2 w)), below the width
            k = 1
            while k * 2 <= dt.bits:
                k *= 2
            m = self.constant(dt, x.layout, str(k - 1))
            y = self.binary("tl.and", y, m)
        return self.binary(op, x, y)

    def view(self, x):
        rng = self.rng
        bits = x.layout.local_size() * x.dtype.bits
        cands = [t for t in all_types() if bits % t.bits == 0 and bits // t.bits <= 64]
        to = random_type(rng, cands)
        lo = bits // to.bits
        l = random_layout(rng, self.threads, rng.randint(1, 3), lo)
        return self.unary("tl.view", x, dtype=to, layout=l)

    def finish(self, x):
        """A storable tile from x, or None."""
        rng = self.rng
        if x.dtype.storable():
            return x
        if x.dtype.compute() and rng.random() < 0.5:
            return self.unary("tl.cast", x, dtype=rng.choice([t for t in compute_types() if t.storable()]))
        if x.layout.replication() == 1:
            bits = x.layout.local_size() * x.dtype.bits
            cands = [t for t in storable_types() if bits % t.bits == 0]
            if cands:
                to = rng.choice(cands)
                l = random_layout(rng, self.threads, rng.randint(1, 3), bits // to.bits)
                return self.unary("tl.view", x, dtype=to, layout=l)
        if x.dtype.compute():
            return self.unary("tl.cast", x, dtype=rng.choice([t for t in compute_types() if t.storable()]))
        return None

    def generate(self):
        rng = self.rng
        for chain in range(rng.randint(1, 2)):
            dt = random_type(rng)
            rank = rng.randint(1, 3)
            local = rng.choice([1, 1, 2, 2, 3, 4, 4, 6, 8, 16])
            repl = 1
            if rng.random() < 0.25:
                repl = rng.choice([d for d in divisors(self.threads) if d > 1])
            l = random_layout(rng, self.threads, rank, local, repl)
            x = self.load(dt, l)
            if (FEATURES["data_dependent_loads"] and dt.compute() and dt.bits >= 8
                    and dt.kind != "small" and self.rng2.random() < 0.25):
                x = self.scalar_mix(x)
            chain = []
            for _ in range(rng.randint(1, 6)):
                x = self.random_op(x)
                if (FEATURES["shared_round_trip"] and self.rng3.random() < 0.2
                        and whole_byte_runs(x.layout, x.dtype.bits)):
                    x = self.shared_round_trip(x)
                chain.append(x)
                if x.dtype.storable() and rng.random() < 0.2:
                    self.store(x)
            # the chain's end, made storable; else its last storable value
            y = self.finish(x)
            for t in reversed(chain):
                if y is not None:
                    break
                if t.dtype.storable():
                    y = t
            if y is not None:
                self.store(y)
        if FEATURES["data_dependent_loads"] and self.rng2.random() < 0.3:
            t = self.gather()
            if t is not None:
                self.store(t)
        if FEATURES["atomics"] and self.rng2.random() < 0.3:
            self.store(self.counter_atomic())
        if FEATURES["warp_branches"] and self.rng4.random() < 0.3:
            self.warp_branch()
        if not self.outputs:
            # every chain ended in a type that cannot be stored: store a
            # plain f32 tile, so that the kernel writes something
            t = self.load(TYPES["f32"], random_layout(rng, self.threads, 1, 1))
            self.store(t)

    def warp_branch(self):
        """scf.if on tl.warp_index == k: warp k alone loads a tile, runs a
        short chain of ops on it and stores it (each element its threads
        hold, by the lowest of them), and stores the warp index plus a
        constant broadcast into a tile. The branch's values stay in it:
        the constants and tiles it makes leave the pools afterwards."""
        main = self.rng
        self.rng = rng = self.rng4
        w = self.fresh("w")
        self.emit("%s = tl.warp_index : i32" % w)
        cond = self.fresh("wb")
        self.emit("%s = arith.cmpi eq, %s, %s : i32" % (
            cond, w, self.const(rng.randrange(self.threads // 32))))
        consts, pool = dict(self.consts), list(self.pool)
        self.emit("scf.if %s {" % cond)
        # replicated layouts too (each warp writes every element its
        # threads hold), in blocks of 2^k threads: the lowering refuses
        # replication groups that straddle warps
        repl = 1
        if rng.random() < 0.4 and self.threads & (self.threads - 1) == 0:
            repl = rng.choice([d for d in divisors(self.threads) if d > 1])
        x = self.load(random_type(rng), random_layout(
            rng, self.threads, rng.randint(1, 3), rng.choice([1, 2, 4]), repl))
        for _ in range(rng.randint(0, 3)):
            x = self.random_op(x)
        y = self.finish(x)
        if y is not None:
            self.plain_store(y)
        if rng.random() < 0.5:
            v = self.fresh("s")
            self.emit("%s = arith.addi %s, %s : i32" % (v, w, self.const(rng.randint(-3, 9))))
            t = Tile(self.fresh("t"), TYPES["i32"],
                     random_layout(rng, self.threads, rng.randint(1, 2), rng.choice([1, 2])))
            self.emit("%s = tl.broadcast %s : i32 -> %s" % (t.name, v, self.tty(t)))
            self.plain_store(t)
        self.emit("scf.yield")
        self.emit("}")
        self.consts, self.pool = consts, pool
        self.rng = main

    def plain_store(self, t):
        """tl.store_global of t (no atomic): what a warp branch may do."""
        pname, g, gty, offs, masked = self.access(t.dtype, t.layout.shape(), True)
        self.emit("tl.store_global %s, %s[%s]%s : %s, %s" % (
            t.name, g, ", ".join(offs), " masked" if masked else "", self.tty(t), gty))
        self.outputs.append((pname, t.dtype))

    def text(self):
        gx, gy = self.grid
        head = []
        for body, alias in sorted(self.aliases.items(), key=lambda kv: int(kv[1][2:])):
            head.append("%s = #tl.layout<%s>" % (alias, body))
        params = ", ".join("%%%s: %s" % (n, t) for n, t, _ in self.params)
        attrs = ""
        if self.assume:
            attrs = " attributes {assume = {%s}}" % ", ".join(
                "%s = %d" % kv for kv in sorted(self.assume.items()))
        grid = "%d, %d" % (gx, gy) if gy > 1 else "%d" % gx
        out = ["// random_tl.py seed %d" % self.seed]
        out += ["// " + c for c in self.commands("k.tl", "k.simt.tl", "ref", "got")]
        out += head
        out.append("tl.kernel @k(%s) grid(%s) threads(%d)%s {" % (params, grid, self.threads, attrs))
        bi = "  %bx, %by = tl.block_indices : i32, i32" if gy > 1 else "  %bx = tl.block_indices : i32"
        out.append(bi)
        out += self.lines
        out.append("}")
        return "\n".join(out) + "\n"

    def args(self):
        a = ["--seed", str(self.seed)]
        for n, _, spec in self.params:
            a += ["--arg", "%s=%s" % (n, spec)]
        return a

    def commands(self, src, low, ref, got, tools=""):
        p = lambda t: os.path.join(tools, t) if tools else t
        gx, gy = self.grid
        saves = []
        checks = []
        for n, _ in self.outputs:
            saves += ["--save", "%s=%s.%s.npy" % (n, ref, n)]
            checks += ["--check", "%s=%s.%s.npy" % (n, ref, n), "--save", "%s=%s.%s.npy" % (n, got, n)]
        return [
            " ".join([p("tl-opt"), src, "-o", os.devnull]),
            " ".join([p("tl-run"), "--vm", src] + self.args() + saves),
            " ".join([p("tl-opt"), src, "--pass-pipeline='%s'" % PIPELINE, "-o", low]),
            " ".join([p("tl-run"), "--simt", low, "--grid", "%d,%d" % (gx, gy)] + self.args() + checks),
        ]


def make_kernel(seed):
    k = Kernel(seed)
    k.generate()
    return k


# --------------------------------------------------------------------------
# .npy reading (tl-run writes version 1.0, little-endian, C order)

def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not an .npy file" % path)
    if data[6] == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10 + hlen
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12 + hlen
    header = data[start - hlen:start].decode("latin1")
    descr = header.split("'descr':")[1].split("'")[1]
    return descr, data[start:]


def codes(dtype, raw):
    """The element codes of a saved buffer (its bytes, packed for types
    NumPy lacks)."""
    if dtype.bits in (8, 16, 32, 64):
        n = dtype.bits // 8
        return [int.from_bytes(raw[i:i + n], "little") for i in range(0, len(raw), n)]
    big = int.from_bytes(raw, "little")
    count = len(raw) * 8 // dtype.bits
    mask = (1 << dtype.bits) - 1
    return [(big >> (i * dtype.bits)) & mask for i in range(count)]


def compare_bits(dtype, ref_path, got_path):
    """None when every element has the same code, or both are NaNs; else
    a description of the first difference."""
    _, r = read_npy(ref_path)
    _, g = read_npy(got_path)
    rc, gc = codes(dtype, r), codes(dtype, g)
    if len(rc) != len(gc):
        return "sizes differ (%d and %d elements)" % (len(rc), len(gc))
    bad = [i for i in range(len(rc))
           if rc[i] != gc[i] and not (dtype.is_nan(rc[i]) and dtype.is_nan(gc[i]))]
    if bad:
        i = bad[0]
        return "%d of %d elements differ in their bits; the first is [%d]: got 0x%x, expected 0x%x" % (
            len(bad), len(rc), i, gc[i], rc[i])
    return None


# --------------------------------------------------------------------------
# The check

def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def corrupt(dtype, path):
    """Changes element 0 of a saved buffer to another number (0, or 1 where
    it was 0: neither is a NaN code), so that the check must fail."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    hlen = struct.unpack("<H", data[8:10])[0]
    start = 10 + hlen
    n = max(1, dtype.bits // 8)
    zero = not any(data[start:start + n])
    data[start:start + n] = (1 if zero else 0).to_bytes(n, "little")
    with open(path, "wb") as f:
        f.write(data)


def check_seed(seed, tools, workdir, keep, corrupt_ref=False):
    """Returns None when the seed passes, else (seed, stage, message,
    directory, commands)."""
    k = make_kernel(seed)
    d = tempfile.mkdtemp(prefix="random_tl.%d." % seed, dir=workdir)
    src = os.path.join(d, "k.tl")
    low = os.path.join(d, "k.simt.tl")
    ref = os.path.join(d, "ref")
    got = os.path.join(d, "got")
    with open(src, "w") as f:
        f.write(k.text())
    gx, gy = k.grid
    tool = lambda t: os.path.join(tools, t)
    saves, checks = [], []
    for n, _ in k.outputs:
        saves += ["--save", "%s=%s.%s.npy" % (n, ref, n)]
        checks += ["--check", "%s=%s.%s.npy" % (n, ref, n), "--save", "%s=%s.%s.npy" % (n, got, n)]
    steps = [
        ("verify", [tool("tl-opt"), src, "-o", os.devnull]),
        ("tl-run --vm", [tool("tl-run"), "--vm", src] + k.args() + saves),
        ("lower", [tool("tl-opt"), src, "--pass-pipeline=" + PIPELINE, "-o", low]),
        ("tl-run --simt", [tool("tl-run"), "--simt", low, "--grid", "%d,%d" % (gx, gy)] + k.args() + checks),
    ]
    shown = k.commands(src, low, ref, got, tools)
    for stage, cmd in steps:
        try:
            rc, out = run(cmd, d)
        except subprocess.TimeoutExpired:
            return (seed, stage, "timed out", d, shown)
        if rc != 0:
            what = "crashed (signal %d)" % -rc if rc < 0 else "exit status %d" % rc
            return (seed, stage, "%s\n%s" % (what, out.strip()[-3000:]), d, shown)
        if stage == "tl-run --vm" and corrupt_ref:
            n, dt = k.outputs[0]
            corrupt(dt, "%s.%s.npy" % (ref, n))
    for n, dt in k.outputs:
        diff = compare_bits(dt, "%s.%s.npy" % (ref, n), "%s.%s.npy" % (got, n))
        if diff:
            return (seed, "bits of %s (%s)" % (n, dt.name), diff, d, shown)
    if not keep:
        shutil.rmtree(d, ignore_errors=True)
    return None


def parse_seeds(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, help="print the kernel of this seed")
    ap.add_argument("--check", action="store_true", help="run the differential check")
    ap.add_argument("--seeds", default="0-99", help="seeds to check: 0-199 or 1,5,9")
    ap.add_argument("--tools", default="", help="the folder holding tl-opt and tl-run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="seeds checked at once (default: the CPU count)")
    ap.add_argument("--dir", help="make each seed's folder here (default: the system's "
                    "temporary folder); a failing seed's folder is kept")
    ap.add_argument("--keep", action="store_true", help="keep the folders of passing seeds too")
    ap.add_argument("--corrupt-reference", action="store_true",
                    help="change one element of each seed's first saved output before the "
                    "check (every seed must then fail: this tests the test)")
    ap.add_argument("--enable", action="append", default=[],
                    help="turn a left-off feature on (%s)" % ", ".join(FEATURES))
    o = ap.parse_args()
    for f in o.enable:
        if f not in FEATURES:
            ap.error("unknown feature '%s'" % f)
        FEATURES[f] = True
    if not o.check:
        sys.stdout.write(make_kernel(o.seed if o.seed is not None else 0).text())
        return 0
    seeds = parse_seeds(o.seeds)
    if o.tools:
        o.tools = os.path.abspath(o.tools)
    if o.dir:
        o.dir = os.path.abspath(o.dir)
        os.makedirs(o.dir, exist_ok=True)
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, o.jobs)) as ex:
        for r in ex.map(lambda s: check_seed(s, o.tools, o.dir, o.keep,
                                                  o.corrupt_reference), seeds):
            if r:
                failures.append(r)
                seed, stage, msg, d, cmds = r
                print("FAIL seed %d: %s failed: %s" % (seed, stage, msg))
                print("  files in %s; to reproduce:" % d)
                for c in cmds:
                    print("    " + c)
                sys.stdout.flush()
    print("random_tl: %d seeds, %d passed, %d failed%s" % (
        len(seeds), len(seeds) - len(failures), len(failures),
        (" (seeds %s)" % " ".join(str(f[0]) for f in failures)) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
