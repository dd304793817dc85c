"""tl.autotune without a GPU: the kernel's defaults when the lists hold
them, else the first candidate the kernel accepts, candidates it refuses
skipped with the reason; the chosen instance runs on the VM.

    tune_test.py SOURCE-ROOT"""
import os
import sys

import numpy as np

import tl

path = os.path.join(sys.argv[1], "kernels", "vector_add.tl")

log = []
k, choice = tl.autotune(path, {"BLOCK": [128, 512]}, timed=False, log=log)
assert choice == {"BLOCK": 512} and k.template_value("BLOCK") == 512, choice
assert log == ["BLOCK=512: the kernel's defaults"], log

log = []
k, choice = tl.autotune(path, {"BLOCK": [6, 256, 1024]}, timed=False, log=log)
assert choice == {"BLOCK": 256}, choice
assert len(log) == 2 and log[0].startswith("BLOCK=6: skipped: "), log
assert log[1] == "BLOCK=256: the first candidate the kernel accepts", log

x = np.arange(300, dtype=np.float32)
z = np.zeros(300, np.float32)
k.run_vm(x, x, z, 300)
assert np.array_equal(z, 2 * x)

for space, want in (({"BLOCK": [6, 10]}, "refuses every candidate"),):
    try:
        tl.autotune(path, space, timed=False)
    except tl.TLError as e:
        assert want in str(e), e
    else:
        raise AssertionError("expected a TLError")
try:
    tl.autotune(path, {"BLOCK": [128]}, BLOCK=128)
except ValueError as e:
    assert "BLOCK is both tuned and defined" in str(e), e
else:
    raise AssertionError("expected a ValueError")
print("tune_test: ok")
