"""The host cost of a kernel launch through python/tl: the time of
k(x, y, z, n) for vector_add over 256 elements, in a loop, per launch.

    python3 bench/launch_cost.py [--reps N]
        on the GPU with torch: the launch, and torch.add for comparison
    python3 bench/launch_cost.py --fake BUILD [--reps N]
        on the CPU, through the stand-in torch (test/python/Inputs/faketorch)
        and CUDA driver (BUILD/test/fake-cuda/libcuda.so.1): the host-side
        cost alone (the stand-in's tensors are slower than torch's)

Prints the best and the median of 11 rounds of the per-launch time in
microseconds (docs/runtime.md records them)."""
import argparse
import os
import sys
import timeit

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--fake", metavar="BUILD")
ap.add_argument("--reps", type=int, default=20000)
o = ap.parse_args()
driver = None
if o.fake:
    sys.path.insert(0, os.path.join(root, "test", "python", "Inputs", "faketorch"))
    driver = os.path.join(os.path.abspath(o.fake), "test", "fake-cuda", "libcuda.so.1")
sys.path.insert(0, os.path.join(root, "python"))
import torch  # noqa: E402

import tl  # noqa: E402

s = tl.Session(cache_dir="", driver=driver)
k = s.compile(os.path.join(root, "kernels", "vector_add.tl"))
x = torch.zeros(256, device="cuda")
k(x, x, x, 256)


def per_launch(stmt):
    """The best and the median of 11 rounds, in us a launch."""
    times = sorted(t / o.reps * 1e6 for t in timeit.repeat(stmt, number=o.reps, repeat=11))
    return "%.2f us (median %.2f)" % (times[0], times[5])


launch = per_launch(lambda: k(x, x, x, 256))
if o.fake:
    print("launch through python (host only, stand-in driver): " + launch)
else:
    torch.cuda.synchronize()
    ref = per_launch(lambda: torch.add(x, x, out=x))
    torch.cuda.synchronize()
    print("launch through python: %s; torch.add: %s" % (launch, ref))
