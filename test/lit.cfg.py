# The TL test suite: lit + FileCheck over .tl files, and the C unit tests
# (one .test file per unit binary under test/unit).
import os
import shutil
import subprocess
import lit.formats

config.name = "TL"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tl", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tl_obj_root, "test")

bindir = os.path.join(config.tl_obj_root, "bin")
unitdir = os.path.join(config.tl_obj_root, "test", "unit")
config.environment["PATH"] = os.pathsep.join(
    [bindir, unitdir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%unitdir", unitdir))
config.substitutions.append(("%bindir", bindir))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%srcroot", config.tl_src_root))
# A stand-in CUDA driver (test/gpu/fake_cuda.c): LD_LIBRARY_PATH=%fakecuda;
# %fakecuda-tma is the one with cuTensorMapEncodeTiled, %fakecuda-nolink
# the one without the JIT linker (cuLink*).
config.substitutions.append(("%fakecuda", os.path.join(config.tl_obj_root, "test", "fake-cuda")))

# The shared library libtl and the Python package over it (python/tl).
config.substitutions.append(("%libtl", os.path.join(config.tl_obj_root, "lib", "libtl.so")))
config.substitutions.append(("%pypkg", os.path.join(config.tl_src_root, "python")))

# Sanitizer builds: leaks are errors; the report must fail the test.
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
if config.tl_sanitize:
    config.available_features.add("asan")

# Python scripts that load libtl run under %pyenv: in sanitizer builds,
# where libtl expects the sanitizers' runtime from the executable, it
# preloads that runtime into Python (whose own allocations at exit are not
# leaks to report).
pyenv = "env"
if config.tl_sanitize:
    rt = subprocess.run(["clang-22", "-print-file-name=libclang_rt.asan-x86_64.so"],
                        capture_output=True, text=True).stdout.strip()
    if os.path.isabs(rt) and os.path.exists(rt):
        pyenv = "env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:abort_on_error=0" % rt
    else:
        config.available_features.add("no-asan-runtime")
config.substitutions.append(("%pyenv", pyenv))

# Optional capabilities, each a lit feature so tests can say REQUIRES:.
ptxas = shutil.which("ptxas") or (os.path.exists("/usr/local/cuda/bin/ptxas") and "/usr/local/cuda/bin/ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
for lib in ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/local/cuda/compat/libcuda.so.1"):
    if os.path.exists(lib) and os.path.exists("/dev/nvidiactl"):
        config.available_features.add("cuda")
        break
# Python helpers run under %python (the build's interpreter), which need not
# be the one running lit: ask it.
try:
    subprocess.run([config.python_executable, "-c", "import numpy, ml_dtypes"],
                   check=True, capture_output=True, timeout=60)
    config.available_features.add("numpy")
except (OSError, subprocess.SubprocessError):
    pass
# torch (and transformers) for the torch modules' tests (tl.nn).
for mod in ("torch", "transformers"):
    try:
        subprocess.run([config.python_executable, "-c", "import " + mod],
                       check=True, capture_output=True, timeout=120)
        config.available_features.add(mod)
    except (OSError, subprocess.SubprocessError):
        pass
# `pip install ./python` offline (no build isolation) needs setuptools
# with bdist_wheel: the wheel package, or setuptools 70.1 and later.
try:
    subprocess.run([config.python_executable, "-c",
                    "import setuptools, importlib.util as u; "
                    "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2]); "
                    "assert u.find_spec('wheel') or v >= (70, 1)"],
                   check=True, capture_output=True, timeout=60)
    config.available_features.add("pip-build")
except (OSError, subprocess.SubprocessError):
    pass
