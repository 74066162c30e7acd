#!/usr/bin/env python3
"""What each way of running gpt-trace costs, against bare and Nsight Systems, in one GPU call.

usage: modes.py BINDIR OUT_DIR [--reps 3] [--launches 200000] [--modes a,b,...] [--workloads ...]
                [--timeout S] [--deadline S] [--median] [--model-steps N] [--fixed-algorithms]
                [--build NAME=DIR ...]

Modes (interleaved, --reps rounds; every mode of a round runs before the next round starts):
    bare          the program alone
    armed         gpt-trace run --start-later, never started (issue 25: armed and idle)
    default       gpt-trace run
    gm10k         gpt-trace run --gpu-metrics (10 kHz, issue 23)
    gm1k          gpt-trace run --gpu-metrics=1khz
    nsys          nsys profile -t cuda (the collector yardstick)
    nsys-gm       nsys profile -t cuda --gpu-metrics-devices=all (10 kHz, its default)
    NAME          gpt-trace run of another build, --build NAME=DIR (DIR holds its gpt-trace and
                  libgpt_inject.so), in the same rounds: this build against earlier ones
Workloads: the launch-bound loop (BINDIR/bench_launch_loop, ns per launch) and the PyTorch steps of
torch_bench.py (tinyops, resnet18, transformer: ms per step, mean of 20 timed steps after warm-up).
Prints one Markdown table per workload: the median of the rounds, min-max, and the median against
bare; trace bytes of the last round. Writes modes.json to OUT_DIR.
"""
import argparse, json, os, re, signal, statistics, subprocess, sys, time

from multi_gpu import dump_states

NSYS = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys"
HERE = os.path.dirname(os.path.abspath(__file__))
ALL = ["bare", "armed", "default", "gm10k", "gm1k", "nsys", "nsys-gm"]


def prefix(mode, b, out, tag, builds):
    trace = f"{out}/{tag}-{mode}.sqlite"
    gpt = [f"{b}/gpt-trace", "run", "-q", "-f", "-o", trace]
    if mode in builds:
        return [f"{builds[mode]}/gpt-trace", "run", "-q", "-f", "-o", trace, "--"], trace
    return {
        "bare": ([], None),
        "armed": (gpt + ["--start-later", "--"], None),
        "default": (gpt + ["--"], trace),
        "gm10k": (gpt + ["--gpu-metrics", "--"], trace),
        "gm1k": (gpt + ["--gpu-metrics=1khz", "--"], trace),
        "nsys": ([NSYS, "profile", "-t", "cuda", "--force-overwrite", "true", "-o", f"{out}/nsys-{tag}"], None),
        "nsys-gm": ([NSYS, "profile", "-t", "cuda", "--gpu-metrics-devices=all", "--force-overwrite", "true",
                     "-o", f"{out}/nsysgm-{tag}"], None),
    }[mode]


def run(cmd, timeout, hang_file):
    """Output, error output and exit status; a run past its timeout is killed with its children after
    their threads' states are written to hang_file, and keeps what it printed (nsys can hang at
    exit after the program has finished)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        o, e = p.communicate(timeout=timeout)
        return o, e, p.returncode
    except subprocess.TimeoutExpired:
        dump_states(p.pid, hang_file)
        os.killpg(p.pid, signal.SIGKILL)
        o, e = p.communicate()
        return o, e + "\ntimeout", -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bindir")
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--launches", type=int, default=200000)
    ap.add_argument("--modes", default=",".join(ALL))
    ap.add_argument("--workloads", default="launch,tinyops,resnet18,transformer")
    ap.add_argument("--timeout", type=int, default=300, help="seconds one run may take")
    ap.add_argument("--deadline", type=int, default=0, help="start no run after this many seconds")
    ap.add_argument("--model-steps", type=int, default=20,
                    help="timed resnet18/transformer steps; with --median, their median")
    ap.add_argument("--median", action="store_true", help="torch_bench.py --median: steps timed one by one")
    ap.add_argument("--fixed-algorithms", action="store_true",
                    help="torch_bench.py --fixed-algorithms: cudnn.benchmark off")
    ap.add_argument("--build", action="append", default=[], help="NAME=DIR: another gpt-trace build")
    a = ap.parse_args()
    b, out = os.path.abspath(a.bindir), os.path.abspath(a.out)
    builds = {k: os.path.abspath(v) for k, v in (x.split("=", 1) for x in a.build)}
    os.makedirs(out, exist_ok=True)
    modes = [m for m in a.modes.split(",") if m != "nsys" or os.access(NSYS, os.X_OK)]
    modes += [m for m in builds if m not in modes]
    works = a.workloads.split(",")
    env_control = os.path.join(out, "control")	# armed processes announce themselves here
    os.environ["GPT_TRACE_CONTROL_DIR"] = env_control
    res = {w: {m: [] for m in modes} for w in works}
    size = {w: {} for w in works}
    torch_works = [w for w in works if w != "launch"]
    start = time.time()
    for rep in range(a.reps):
        for mode in modes:
            if a.deadline and time.time() - start > a.deadline:
                print(f"round {rep + 1} {mode}: not run, past the deadline", file=sys.stderr)
                continue
            if "launch" in works:
                pre, trace = prefix(mode, b, out, "launch", builds)
                o, e, rc = run(pre + [f"{b}/bench_launch_loop", str(a.launches)], a.timeout,
                               f"{out}/hang-launch-{mode}-{rep + 1}.txt")
                m = re.search(r"ns_per_launch=([\d.]+)", o)
                res["launch"][mode].append(float(m.group(1)) if m and (rc == 0 or mode.startswith("nsys")) else None)
                if rc:
                    print(f"launch {mode} rep {rep}: rc={rc} {e.strip()[-300:]}", file=sys.stderr)
                if trace and os.path.exists(trace):
                    size["launch"][mode] = os.path.getsize(trace)
            for w in torch_works:
                pre, trace = prefix(mode, b, out, w, builds)
                o, e, rc = run(pre + [sys.executable, f"{HERE}/torch_bench.py", "--only", w,
                                     "--model-steps", str(a.model_steps)] + (["--median"] if a.median else [])
                               + (["--fixed-algorithms"] if a.fixed_algorithms else []),
                               a.timeout, f"{out}/hang-{w}-{mode}-{rep + 1}.txt")
                m = re.search(w + r" ms_per_step=([\d.]+)", o)
                res[w][mode].append(float(m.group(1)) if m and (rc == 0 or mode.startswith("nsys")) else None)
                if rc or not m:
                    print(f"{w} {mode} rep {rep}: rc={rc} {e.strip()[-300:]}", file=sys.stderr)
                if trace and os.path.exists(trace):
                    size[w][mode] = os.path.getsize(trace)
            print(f"round {rep + 1} {mode} done {time.strftime('%H:%M:%S')}", file=sys.stderr, flush=True)
        with open(os.path.join(out, "modes.json"), "w") as fh:	# what a timeout would leave
            json.dump({"rounds": rep + 1, "results": res, "bytes": size}, fh, indent=1)
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()[0]
    print(f"# {time.strftime('%Y-%m-%d')}, {gpu}, {a.reps} interleaved rounds\n")
    for w in works:
        unit = "ns/launch" if w == "launch" else "ms/step"
        xs = [x for x in res[w]["bare"] if x is not None] if "bare" in res[w] else []
        base = statistics.median(xs) if xs else None
        print(f"## {w} ({unit})\n\n| mode | median | min-max | against bare | trace bytes |\n|---|---|---|---|---|")
        for mode in modes:
            v = [x for x in res[w][mode] if x is not None]
            if not v:
                print(f"| {mode} | failed | | | |")
                continue
            med = statistics.median(v)
            rel = f"{(med / base - 1) * 100:+.1f}%" if base else ""
            print(f"| {mode} | {med:.3f} | {min(v):.3f}-{max(v):.3f} | {rel} | {size[w].get(mode, '')} |")
        print()
    with open(os.path.join(out, "modes.json"), "w") as fh:
        json.dump({"gpu": gpu, "results": res, "bytes": size}, fh, indent=1)


if __name__ == "__main__":
    main()
