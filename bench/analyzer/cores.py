#!/usr/bin/env python3
"""The loader's threads on a machine with more cores than this one (the GPU machine has 16).

Each analyzer command runs on every CPU and on one (sched_setaffinity: the loader then starts no
thread), on synthetic traces of N kernels (make-trace.sh) and on any traces given with -t; each pair
is timed (wall and user, from wait4) and its outputs (stdout and the file it writes) compared
byte for byte. Prints a Markdown table; exits 1 when any pair differs.

usage: cores.py BINDIR [-t TRACE]... [N...]      (default N: 1000000)
The GPU machine has no sqlite3 command: make-trace.sh then runs through Python's sqlite3 module.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = """#!/usr/bin/env python3
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
if len(sys.argv) > 2:
    for row in db.execute(sys.argv[2]):
        print("|".join(str(v) for v in row))
else:
    db.executescript(sys.stdin.read())
db.commit()
"""

COMMANDS = [
    ("stats", ["stats", "-q"], False),
    ("report", ["report", "-q"], False),
    ("report json", ["report", "-q", "-f", "json"], False),
    ("baseline save", ["baseline", "save", "-q", "-o", "@"], True),
    ("export (Perfetto, with findings)", ["export", "-q", "-o", "@"], True),
]


def run(argv, cpus, out_file, stdout_file):
    """Run argv on the CPUs given (None: all); returns wall, user and system seconds and a digest of
    its exit status, stdout and out_file. (Not the peak RSS: a forked child's counts its parent's
    before exec; bench/analyzer/run.sh measures it.)"""
    for path in (out_file, stdout_file):
        if path and os.path.exists(path):
            os.unlink(path)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
        fd = os.open(stdout_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    digest = hashlib.sha256()
    digest.update(str(os.waitstatus_to_exitcode(status)).encode())
    for path in (stdout_file, out_file):
        if path and os.path.exists(path):
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
            os.unlink(path)
    return wall, usage.ru_utime, usage.ru_stime, digest.hexdigest()


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    bindir, args = args[0], args[1:]
    traces, sizes = [], []
    while args:
        if args[0] == "-t":
            traces.append(args[1])
            args = args[2:]
        else:
            sizes.append(int(args[0]))
            args = args[1:]
    if not sizes and not traces:
        sizes = [1000000]
    work = tempfile.mkdtemp()
    env = dict(os.environ)
    if not shutil.which("sqlite3"):
        with open(os.path.join(work, "sqlite3"), "w") as f:
            f.write(SHIM)
        os.chmod(os.path.join(work, "sqlite3"), 0o755)
        env["PATH"] = work + ":" + env["PATH"]
    for n in sizes:
        path = os.path.join(work, "synthetic-%d.sqlite" % n)
        subprocess.run(["bash", os.path.join(HERE, "make-trace.sh"), path, str(n)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        traces.append(path)
    gpt = os.path.join(bindir, "gpt-trace")
    ncpu = len(os.sched_getaffinity(0))
    print("%d CPUs; each row: every CPU, then CPU 0 alone" % ncpu)
    print()
    print("| trace | command | wall (all) | wall (one) | speed-up | user (all) | user (one) | outputs |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    differ = 0
    for trace in traces:
        with open(trace, "rb") as f:		# into the page cache, as for every run after it
            while f.read(1 << 24):
                pass
        for name, argv, writes in COMMANDS:
            out_file = os.path.join(work, "out") if writes else None
            full = [gpt] + [out_file if a == "@" else a for a in argv] + [trace]
            stdout_file = os.path.join(work, "stdout")
            a = run(full, None, out_file, stdout_file)
            b = run(full, {0}, out_file, stdout_file)
            same = a[3] == b[3]
            differ += not same
            print("| %s | %s | %.2f s | %.2f s | %.2f× | %.2f s | %.2f s | %s |" % (
                os.path.basename(trace), name, a[0], b[0], b[0] / a[0], a[1], b[1],
                "same" if same else "DIFFER"), flush=True)
    shutil.rmtree(work)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
