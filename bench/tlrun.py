"""What the benches share that needs no GPU library: running tl-run on a
kernel instance, reading its --json timing, and printing the summary the
device scripts look for."""
import json
import os
import subprocess


def tl_run(tlbin, kernel, defines, args, extra=()):
    """(exit status, stdout and stderr) of tl-run on `kernel` with -D
    defines and --arg args ({name: value}) and the extra options."""
    cmd = [os.path.join(tlbin, "tl-run"), kernel]
    for k, v in defines.items():
        cmd += ["-D", "%s=%s" % (k, v)]
    for k, v in args.items():
        cmd += ["--arg", "%s=%s" % (k, v)]
    cmd += list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def median_of(out):
    """The median time (ms) of tl-run --json's line in out, or None."""
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line)["median_ms"]
    return None


def sass_of(out):
    """tl-run --json's SASS fields in out (the hot loop's instructions a
    warp and iteration, by class, and a loop byte), or None where tl-run
    found no disassembler."""
    for line in out.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            if j.get("sass_loop_instructions") is None:
                return None
            return dict(instructions=j["sass_loop_instructions"], mix=j.get("sass_mix", {}),
                        per_byte=j.get("instructions_per_byte"))
    return None


def summary(bw, checks, lines):
    """Prints the "== summary" block: the copy bandwidth (bytes/s), the
    checks' outcome ("passed", "FAILED" or "skipped") and the lines."""
    print("\n== summary")
    print("copy bandwidth %.0f GB/s; checks %s" % (bw / 1e9, checks))
    for line in lines:
        print(line)
