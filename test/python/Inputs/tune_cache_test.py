"""tl.autotune's tune cache (the one tl-run --tune keeps), through the
stand-in torch and CUDA driver: by the driver's clock T threads per block
over B blocks take T / 1000 + 1 / B ms, and every launch is a line in
$TL_FAKE_CUDA_LOG, so a choice taken from the cache is seen to launch
nothing. The cache is $TL_CACHE_DIR's.

    tune_cache_test.py SOURCE-ROOT FAKE-LIBCUDA LOG [MODE]

MODE "check" (the default) runs the checks below; "hit" expects the
launch of vector_add over 4096 elements with BLOCK in {128, 512, 1024}
cached (by tl-run) and prints its log line; "store" tunes that launch
(for tl-run to find)."""
import glob
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "faketorch"))
sys.path.insert(0, os.path.join(here, "..", "..", "Inputs"))
import torch  # noqa: E402
from cache_entry import reseal  # noqa: E402

import tl  # noqa: E402

root, driver, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
mode = sys.argv[4] if len(sys.argv) > 4 else "check"
path = os.path.join(root, "kernels", "vector_add.tl")
cache = os.environ["TL_CACHE_DIR"]
SPACE = {"BLOCK": [128, 512, 1024]}


def launches():
    if not os.path.exists(log_path):
        return 0
    with open(log_path) as f:
        return sum(line.startswith("launch ") for line in f)


def tensors(n):
    return [torch.zeros(n, device="cuda") for _ in range(3)]


def tune(session, n=4096, space=SPACE, source=path, **kw):
    log = []
    before = launches()
    k, choice = tl.autotune(source, space, args=(*tensors(n), n), session=session,
                            log=log, warmup=1, iters=2, **kw)
    return k, choice, log, launches() - before


s = tl.Session(driver=driver)
if mode == "hit":
    _, choice, log, n = tune(s)
    assert n == 0 and choice == {"BLOCK": 128}, (n, choice, log)
    print(log[0])
    sys.exit(0)
if mode == "store":
    _, choice, log, n = tune(s)
    assert n > 0 and choice == {"BLOCK": 128}, (n, choice, log)
    print(log[-1])
    sys.exit(0)

# A first run times every candidate and keeps the choice under
# $TL_CACHE_DIR/tune.
k, choice, log, n = tune(s)
assert choice == {"BLOCK": 128} and k.template_value("BLOCK") == 128, (choice, log)
assert log == ["BLOCK=128: 0.0633 ms", "BLOCK=512: 0.2530 ms", "BLOCK=1024: 0.5060 ms",
               "best: BLOCK=128 (0.0633 ms)"], log
assert n == 3 * (1 + 2), n
entries = glob.glob(os.path.join(cache, "tune", "*.txt"))
assert len(entries) == 1, entries
with open(entries[0]) as f:
    text = f.read()
assert text.startswith("tl tune cache 2\nchecksum: fnv1a 0x"), text
for line in ("kernel: vector_add", "tune: BLOCK=128,512,1024", "arg: x = f32[4096]",
             "arg: n = 4096", "device: TL fake GPU", "best: BLOCK=128"):
    assert "\n" + line + "\n" in text, (line, text)

# The second run takes it from the cache and launches nothing.
k, choice, log, n = tune(s)
assert choice == {"BLOCK": 128} and k.template_value("BLOCK") == 128, choice
assert log == [f"cached BLOCK=128 (0.0633 ms, {entries[0]})"], log
assert n == 0, n

# retune=True times again (and rewrites the entry).
_, choice, log, n = tune(s, retune=True)
assert choice == {"BLOCK": 128} and n == 9 and len(log) == 4, (choice, n, log)

# rounds=2 times every candidate twice, in two passes, and keeps each
# one's fastest (the stand-in's clock gives the same time both passes).
_, choice, log, n = tune(s, retune=True, rounds=2)
assert choice == {"BLOCK": 128} and n == 18, (choice, n, log)
assert log[0] == "BLOCK=128: 0.0633 / 0.0633 ms" and log[-1] == "best: BLOCK=128 (0.0633 ms)", log
for bad, exc in ((0, ValueError), (-1, ValueError), (1.5, TypeError)):
    try:
        tune(s, retune=True, rounds=bad)
    except exc as e:
        assert str(e).startswith("rounds: expected an integer"), e
    else:
        raise AssertionError(bad)


def sealed(t):
    """t with the checksum its edits need: a resealed edit gets past the
    checksum to the checks behind it, as a hash collision would."""
    return reseal(t.encode()).decode()


# A corrupt entry is not trusted: the candidates are timed and the entry
# rewritten, then hit. An edit that keeps every line well formed (another
# choice in the space, of the same length) is caught by the checksum.
damaged = "its contents do not match its checksum"
for bad, why in (("garbage\n", "not a tune cache entry"),
                 (text[:150], damaged),
                 (text.replace("best: BLOCK=128", "best: BLOCK=512"), damaged),
                 (text.replace("best: BLOCK=128", "best: BLOCK=64"), damaged),
                 (sealed(text.replace("best: BLOCK=128", "best: BLOCK=64")),
                  "lies outside the space"),
                 (None, "it is not a regular file (a FIFO)")):
    if bad is None:  # a FIFO: the lookup must not wait for a writer
        os.remove(entries[0])
        os.mkfifo(entries[0])
    else:
        with open(entries[0], "w") as f:
            f.write(bad)
    _, choice, log, n = tune(s)
    assert log[0].startswith(f"ignoring the tune cache entry '{entries[0]}': "), log
    assert why in log[0], log
    assert choice == {"BLOCK": 128} and n == 9, (choice, n, log)
    _, choice, log, n = tune(s)
    assert n == 0 and log[0].startswith("cached BLOCK=128"), (n, log)
# A choice the kernel refuses (in the space, but BLOCK % 4 != 0) is not
# trusted either.
S6 = {"BLOCK": [6, 128, 512, 1024]}
_, choice, log, n = tune(s, space=S6)
assert choice == {"BLOCK": 128} and log[0].startswith("BLOCK=6: skipped: "), log
six = [e for e in glob.glob(os.path.join(cache, "tune", "*.txt"))
       if "tune: BLOCK=6,128" in open(e).read()]
assert len(six) == 1, six
with open(six[0]) as f:
    edited = sealed(f.read().replace("best: BLOCK=128", "best: BLOCK=6"))
with open(six[0], "w") as f:
    f.write(edited)
_, choice, log, n = tune(s, space=S6)
assert log[0].startswith(f"ignoring the tune cache entry '{six[0]}': the kernel refuses "
                         f"its choice BLOCK=6 ("), log
assert "does not hold with BLOCK = 6" in log[0], log
assert choice == {"BLOCK": 128} and n == 9, (choice, n, log)


# Other shapes, spaces, defines and devices are other keys: each is timed
# and kept beside the first.
def count():
    return len(glob.glob(os.path.join(cache, "tune", "*.txt")))


had = count()
_, _, log, n = tune(s, n=2048)
assert n > 0 and not log[0].startswith("cached"), log
_, _, log, n = tune(s, space={"BLOCK": [512, 128, 1024]})
assert n > 0 and not log[0].startswith("cached"), log
with open(path) as f:
    two = f.read().replace("template(BLOCK = 512)", "template(BLOCK = 512, U = 1)")
for u in (1, 2):
    _, _, log, n = tune(s, source=two, U=u)
    assert n > 0 and not log[0].startswith("cached"), log
    _, _, log, n = tune(s, source=two, U=u)
    assert n == 0 and log[0].startswith("cached"), log
assert count() == had + 4, count()
os.environ["TL_FAKE_CUDA_NAME"] = "TL other GPU"
other = tl.Session(driver=driver)
_, _, log, n = tune(other)
assert n > 0 and not log[0].startswith("cached"), log
_, _, log, n = tune(other)
assert n == 0 and log[0].startswith("cached"), log
assert count() == had + 5, count()
del os.environ["TL_FAKE_CUDA_NAME"]

# A cache that cannot be written costs the choice, not the call.
_, choice, log, n = tune(tl.Session(cache_dir=os.path.abspath(__file__), driver=driver))
assert choice == {"BLOCK": 128} and n == 9, (choice, n, log)
assert log[-1].startswith("warning: the choice is not cached: ") and \
    "is not a directory" in log[-1], log

# A session without a cache keeps nothing; without a device the heuristic
# picks, as before.
_, choice, log, n = tune(tl.Session(cache_dir="", driver=driver))
assert n == 9 and log[-1] == "no cache directory: the choice is not kept", log
nodrv = tl.Session(driver="/nonexistent/libcuda.so.1")
_, choice, log, n = tune(nodrv)
assert choice == {"BLOCK": 512} and log == ["BLOCK=512: the kernel's defaults"], log
assert count() == had + 5, count()
print("tune_cache_test: ok")
