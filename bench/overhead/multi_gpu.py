#!/usr/bin/env python3
"""What tracing a multi-GPU job costs (issue 30): one torchrun DDP job, rounds interleaved.

usage: multi_gpu.py BINDIR OUT_DIR [--ranks 4] [--rounds 3] [--batches 256,32] [--steps 60]
                    [--warmup 20] [--variants a,b,...] [--build NAME=DIR ...] [--timeout 150]
                    [--deadline S]

The job is tests/gpu/multi/mlp_ddp.py (three 2048->8192->2048 MLP blocks under DDP, AdamW, an NVTX
range per step), one loop per batch size in each process; the number is rank 0's median ms per step
after the warm-up. Variants (each round runs every variant once before the next round starts):
    bare            the job alone
    default         BINDIR/gpt-trace run, its defaults
    api-none        gpt-trace run --api none: no API records
    kernels-only    gpt-trace run with kernel records alone (GPT_TRACE_KINDS=device,context,stream)
    floor           CUPTI's floor: BINDIR/libnoop_cupti.so subscribed, kernel records only, consumed
                    by nothing (bench/overhead/noop_cupti.c)
    nsys            Nsight Systems' collector: nsys profile -t cuda over torchrun
    torch-profiler  torch.profiler (CPU and CUDA activities) inside every rank
    NAME            gpt-trace run of another build, --build NAME=DIR (DIR holds its gpt-trace and
                    libgpt_inject.so): the same job under an earlier collector (placed where
                    --variants names it, else last)
Prints one Markdown table per batch size (median of the rounds, min-max, against bare, wall seconds
of the whole job) and the rows of rank 0's trace of the last default run; writes multi_gpu.json.
A job that outlives --timeout is killed after its threads' states (tests/gpu/dump-threads.sh) are
written to OUT_DIR/hang-VARIANT-ROUND.txt.
"""
import argparse, json, os, re, signal, statistics, subprocess, sys, time

NSYS = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys"
TESTS_GPU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "gpu")
JOB = os.path.join(TESTS_GPU, "multi", "mlp_ddp.py")
DUMP = os.path.join(TESTS_GPU, "dump-threads.sh")


def prefix(variant, a, work):
    """The command that goes before torchrun, the environment it adds, and mlp_ddp.py's extra flags."""
    trace = [os.path.join(work, "t", "r%p.sqlite")]
    if variant == "bare":
        return [], {}, []
    if variant == "default":
        return [os.path.join(a.bindir, "gpt-trace"), "run", "-q", "-o"] + trace + ["--"], {}, []
    if variant == "api-none":
        return [os.path.join(a.bindir, "gpt-trace"), "run", "-q", "--api", "none", "-o"] + trace + ["--"], {}, []
    if variant == "kernels-only":
        return ([os.path.join(a.bindir, "gpt-trace"), "run", "-q", "-o"] + trace + ["--"],
                {"GPT_TRACE_KINDS": "device,context,stream"}, [])
    if variant == "floor":
        return [], {"CUDA_INJECTION64_PATH": os.path.join(a.bindir, "libnoop_cupti.so")}, []
    if variant == "nsys":
        return [NSYS, "profile", "-t", "cuda", "--force-overwrite", "true",
                "-o", os.path.join(work, "t", "nsys")], {}, []
    if variant == "torch-profiler":
        return [], {}, ["--torch-profiler"]
    return [os.path.join(a.builds[variant], "gpt-trace"), "run", "-q", "-o"] + trace + ["--"], {}, []


def dump_states(pid, path):
    """What each thread of the job is doing (tests/gpu/dump-threads.sh) into path."""
    with open(path, "w") as fh:
        subprocess.run(["bash", DUMP, str(pid)], stdout=fh, stderr=subprocess.STDOUT)


def run_job(variant, rnd, a, work):
    pre, env_add, flags = prefix(variant, a, work)
    subprocess.run(["rm", "-rf", os.path.join(work, "t")])
    os.makedirs(os.path.join(work, "t"))
    cmd = pre + ["torchrun", "--standalone", "--nproc-per-node", str(a.ranks), JOB, "--steps", str(a.steps),
                 "--warmup", str(a.warmup), "--batches", a.batches] + flags
    env = dict(os.environ, **env_add)
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=a.timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        dump_states(p.pid, os.path.join(a.out, f"hang-{variant}-{rnd}.txt"))
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = "timeout"
    wall = time.time() - t0
    got = {int(b): float(m) for b, m in re.findall(r"batch=(\d+) median_ms=([\d.]+)", out)}
    if rc != 0 or not got:
        with open(os.path.join(a.out, f"fail-{variant}-{rnd}.txt"), "w") as fh:
            fh.write(out[-20000:])
    return got, wall, rc


def trace_rows(work):
    """Rows per table of one rank's trace (the smallest pid's), to compare with the issue's counts."""
    import sqlite3
    files = sorted((f for f in os.listdir(os.path.join(work, "t")) if f.endswith(".sqlite")),
                   key=lambda f: int(re.sub(r"\D", "", f) or 0))
    rows = {}
    for f in files:
        db = sqlite3.connect(os.path.join(work, "t", f))
        names = [r[0] for r in db.execute("select name from sqlite_master where type='table' "
                                          "and name like 'CUPTI_ACTIVITY_KIND_%'")]
        counts = {n[len("CUPTI_ACTIVITY_KIND_"):]: db.execute(f"select count(*) from {n}").fetchone()[0]
                  for n in names}
        if counts.get("KERNEL"):
            rows[f] = counts
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bindir")
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", default="256,32")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--variants", default="bare,default,floor,nsys,torch-profiler")
    ap.add_argument("--build", action="append", default=[], help="NAME=DIR: another gpt-trace build")
    ap.add_argument("--timeout", type=int, default=150)
    ap.add_argument("--deadline", type=int, default=0, help="start no job after this many seconds")
    a = ap.parse_args()
    a.bindir, a.out = os.path.abspath(a.bindir), os.path.abspath(a.out)
    a.builds = dict(b.split("=", 1) for b in a.build)
    variants = a.variants.split(",")
    variants += [b for b in a.builds if b not in variants]
    if not os.access(NSYS, os.X_OK) and "nsys" in variants:
        print(f"nsys not found at {NSYS}: left out", file=sys.stderr)
        variants.remove("nsys")
    os.makedirs(a.out, exist_ok=True)
    work = "/tmp/multi_gpu_work"
    batches = [int(b) for b in a.batches.split(",")]
    res = {v: {b: [] for b in batches} for v in variants}
    walls = {v: [] for v in variants}
    rows = {}
    start = time.time()
    for rnd in range(1, a.rounds + 1):
        for v in variants:
            if a.deadline and time.time() - start > a.deadline:
                print(f"round {rnd} {v}: not run, past the deadline", file=sys.stderr)
                walls[v].append(0.0)
                for b in batches:
                    res[v][b].append(None)
                continue
            got, wall, rc = run_job(v, rnd, a, work)
            walls[v].append(wall)
            for b in batches:
                res[v][b].append(got.get(b))
            print(f"round {rnd} {v}: rc={rc} {got} wall={wall:.1f}s {time.strftime('%H:%M:%S')}",
                  file=sys.stderr, flush=True)
            if v == "default" and rc == 0:
                rows = trace_rows(work)
        with open(os.path.join(a.out, "multi_gpu.json"), "w") as fh:	# what a cut-off call leaves
            json.dump({"rounds": rnd, "results": res, "walls": walls, "rows": rows}, fh, indent=1)
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip().splitlines()
    except OSError:
        gpu = []
    print(f"# {time.strftime('%Y-%m-%d')}, {len(gpu)} x {gpu[0] if gpu else '?'}, {a.ranks} ranks, "
          f"{a.rounds} interleaved rounds\n")
    for b in batches:
        base = [x for x in res.get("bare", {}).get(b, []) if x is not None]
        base = statistics.median(base) if base else None
        print(f"## batch {b} (rank 0's median ms per step)\n")
        print("| variant | " + " | ".join(f"round {r}" for r in range(1, a.rounds + 1)) +
              " | median | against bare | wall s (median) |")
        print("|---|" + "---:|" * (a.rounds + 3))
        for v in variants:
            xs = [x for x in res[v][b] if x is not None]
            med = statistics.median(xs) if xs else None
            cells = " | ".join("%.3f" % x if x is not None else "-" for x in res[v][b])
            rel = "%+.1f%%" % ((med / base - 1) * 100) if med and base else ""
            print(f"| {v} | {cells} | {'%.3f' % med if med else 'failed'} | {rel} | "
                  f"{statistics.median(walls[v]):.1f} |")
        print()
    for f, counts in sorted(rows.items())[:1]:
        print("rows of one rank's trace (last default run): " +
              ", ".join(f"{k.lower()} {n}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
