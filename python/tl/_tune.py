"""tl.autotune: pick template values for a kernel among candidates, as
tl-run's --tune does (docs/tools.md, "Tuning").

The candidates are the product of the lists, the first parameter varying
slowest; a candidate the kernel refuses (its requires clause, a type it
makes invalid) is skipped with the reason. On a CUDA device each
candidate is timed on the arguments as tl-run --bench times (Kernel.time:
the median of cold-L2 runs) and the fastest kept; without one the choice
is the kernel's defaults when the lists hold them and the kernel accepts
them, else the first candidate it accepts.

A timed choice is kept in the tune cache, the one tl-run --tune keeps
(libtl's tl_program_tune_lookup and _store; docs/runtime.md): the next
autotune of the same launch (kernel text, defines, space, the arguments'
shapes, element types and scalar values, device, compiler) takes it from
there without timing, as does tl-run for the same launch."""

import itertools

from . import Session, TLError, _check, default_session
from ._lib import TUNE_HIT as _TUNE_HIT, TUNE_INVALID as _TUNE_INVALID


def autotune(source, space, args=None, kernel=None, session=None, timed=None,
             warmup=5, iters=50, log=None, retune=False, cached_only=False, rounds=1,
             **defines):
    """Returns (Kernel, choice): the chosen instance and its values.

    space: {NAME: [values]} of template parameters (not also in defines).
    args: the launch's arguments (tensors and scalars), needed to time.
    timed: None times when args are given and the session has or can open
    a device; False picks without timing; True times or fails. log: a
    list that gets one line per candidate (or one for a cached choice).
    retune: time the candidates even when the cache holds a choice.
    cached_only: only look the choice up in the tune cache (args needed):
    (None, None) when it holds none, and nothing is timed. rounds: time
    the candidates in that many passes, one after another in each, and
    keep each one's fastest pass (a slow moment of the device then costs
    one pass of one candidate, not the choice)."""
    _check.path("source", source)
    _check.text("kernel", kernel, optional=True)
    if session is not None:
        _check.instance("session", session, Session, "a tl.Session")
    session = session or default_session()
    if not isinstance(space, dict):
        raise TypeError(f"space: expected a dict {{NAME: [values]}}, got {type(space).__name__}")
    checked = {}
    for n, vals in space.items():
        _check.text("space", n)
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise TypeError(f"space[{n!r}]: expected a list of integers, got "
                            f"{type(vals).__name__}")
        checked[n] = [_check.integer(f"space[{n!r}]", v) for v in vals]
    space = checked
    if args is not None and not isinstance(args, (tuple, list)):
        raise TypeError(f"args: expected a tuple of the launch's arguments, got "
                        f"{type(args).__name__}")
    if log is not None and not isinstance(log, list):
        raise TypeError(f"log: expected a list, got {type(log).__name__}")
    for name, v in (("retune", retune), ("cached_only", cached_only)):
        _check.boolean(name, v)
    if timed is not None:
        _check.boolean("timed", timed)
    _check.integer("warmup", warmup, 0, 0xffffffff)
    _check.integer("iters", iters, 1, 0xffffffff)
    rounds = _check.integer("rounds", rounds, 1)
    names = list(space)
    for n in names:
        if n in defines:
            raise ValueError(f"space: {n} is both tuned and defined (a "
                             f"parameter is fixed or tuned, not both)")
        if not space[n]:
            raise ValueError(f"space: {n} has no values")
    candidates = [dict(zip(names, vals))
                  for vals in itertools.product(*(space[n] for n in names))]
    log = log if log is not None else []

    def accepted(choice):
        """The instance of choice, or None and the reason the kernel
        refuses it."""
        try:
            return session.compile(source, kernel=kernel, **defines, **choice), None
        except TLError as e:
            return None, str(e).splitlines()[0] if str(e) else "the kernel refuses it"

    def instance(choice):
        k, why = accepted(choice)
        if k is None:
            log.append(f"{_label(choice)}: skipped: {why}")
        return k

    if cached_only:
        if args is None:
            raise ValueError("args: a cache lookup needs the launch's arguments (args=)")
        timed = retune = False
    if timed is None:
        timed = args is not None and _device(session)
    if timed and args is None:
        raise ValueError("args: timing needs the launch's arguments (args=)")
    if not timed and not cached_only:
        try:
            k = session.compile(source, kernel=kernel, **defines)
            dflt = {n: k.template_value(n) for n in names}
        except TLError:
            dflt = None
        if dflt and dflt in candidates:
            log.append(f"{_label(dflt)}: the kernel's defaults")
            return instance(dflt), dflt
        for c in candidates:
            k = instance(c)
            if k is not None:
                log.append(f"{_label(c)}: the first candidate the kernel accepts")
                return k, c
        raise TLError("autotune: the kernel refuses every candidate")

    # The cache's key is made with any instance the kernel accepts: the
    # defaults, else the first candidate (as tl-run binds its arguments).
    base = _base(session, source, kernel, defines, candidates)
    if session.device_ordinal() < 0:  # (timed=True with no device)
        base = None
    space = {n: list(space[n]) for n in names}
    if base is not None and not retune:
        status, choice, ms, why, path = base._tune_lookup(space, args)
        if status == _TUNE_HIT:
            k, refused = accepted(choice)
            if k is not None:
                log.append(f"cached {_label(choice)} ({ms:.4f} ms, {path})")
                return k, choice
            why = f"the kernel refuses its choice {_label(choice)} ({refused})"
            status = _TUNE_INVALID
        if status == _TUNE_INVALID:
            log.append(f"ignoring the tune cache entry '{path}': {why}")
    if cached_only:
        return None, None

    runs = []  # [Kernel, choice, times] of the candidates that run
    for c in candidates:
        k = instance(c)
        if k is not None:
            runs.append([k, c, []])
    for _ in range(rounds):
        for r in runs:
            if r[2] is None:
                continue
            try:
                r[2].append(r[0].time(*args, warmup=warmup, iters=iters))
            except TLError as e:
                log.append(f"{_label(r[1])}: skipped: {str(e).splitlines()[0]}")
                r[2] = None
    best = None
    for k, c, times in runs:
        if not times:
            continue
        ms = min(times)
        log.append(f"{_label(c)}: " + " / ".join(f"{t:.4f}" for t in times) + " ms")
        if best is None or ms < best[0]:
            best = (ms, k, c)
    if best is None:
        raise TLError("autotune: no candidate could be run")
    log.append(f"best: {_label(best[2])} ({best[0]:.4f} ms)")
    if base is not None:
        try:
            if base._tune_store(space, args, best[2], best[0]) is None:
                log.append("no cache directory: the choice is not kept")
        except TLError as e:
            first = str(e).splitlines()[0]
            if first.startswith("error: "):
                first = first[len("error: "):]
            log.append("warning: " + first)
    return best[1], best[2]


def _base(session, source, kernel, defines, candidates):
    """The kernel's default instance, else the first candidate it accepts;
    None when it accepts none."""
    for c in [{}] + candidates:
        try:
            return session.compile(source, kernel=kernel, **defines, **c)
        except TLError:
            continue
    return None


def _label(choice):
    return " ".join(f"{k}={v}" for k, v in choice.items())


def _device(session):
    """Whether the session has a device, opening device 0 if it can."""
    if session.device_ordinal() >= 0:
        return True
    try:
        session.open_device(0)
    except TLError:
        return False
    return True
