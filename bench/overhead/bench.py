#!/usr/bin/env python3
"""Overhead and scale benchmark of gpt-trace's collector, run on a GPU machine in one call.

usage: bench.py BUILD_DIR OUT_DIR [--reps 5] [--launches 200000] [--no-torch]

Runs each configuration --reps times, interleaved (bare, no-op CUPTI floor, gpt-trace default,
gpt-trace --api all, Nsight Systems' collector), on the launch-bound loop, then PyTorch tiny ops and
real model steps (bare, gpt-trace, torch.profiler), then collector throughput at 1M launches.
Prints Markdown tables (medians and spread) and writes results.json to OUT_DIR.
"""
import argparse, json, os, re, resource, shutil, sqlite3, statistics, subprocess, sys, time

NSYS = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys"
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env=None, timeout=600):
    """Run cmd; return (stdout, stderr, rc, wall seconds, peak RSS of children in KiB so far)."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    return p.stdout, p.stderr, p.returncode, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def parse_launch(out):
    m = re.search(r"ns_per_launch=([\d.]+) exit_realtime_ns=(\d+)", out)
    return (float(m.group(1)), int(m.group(2))) if m else (None, None)


def trace_facts(path):
    db = sqlite3.connect(path)
    kernels = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    api = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    meta = dict(db.execute("select name, value from GPT_META").fetchall())
    db.close()
    return {"kernels": kernels, "api_rows": api, "bytes": os.path.getsize(path),
            "dropped": int(meta.get("cupti_dropped_records", -1))}


def stat(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def launch_configs(b, out):
    gpt = [f"{b}/bin/gpt-trace", "run", "-q", "-f", "-o"]
    loop = f"{b}/bin/bench_launch_loop"
    env_noop = dict(os.environ, CUDA_INJECTION64_PATH=f"{b}/bin/libnoop_cupti.so")
    cfgs = {
        "bare": ([loop], None, None),
        "noop-cupti (floor)": ([loop], env_noop, None),
        "gpt-trace default": (gpt + [f"{out}/default.sqlite", "--", loop], None, f"{out}/default.sqlite"),
        "gpt-trace --api all": (gpt + [f"{out}/all.sqlite", "--api", "all", "--", loop], None, f"{out}/all.sqlite"),
    }
    if os.access(NSYS, os.X_OK):
        cfgs["nsys -t cuda"] = ([NSYS, "profile", "-t", "cuda", "--force-overwrite", "true",
                                 "-o", f"{out}/nsys", loop], None, None)
    return cfgs


def bench_launch(b, out, reps, n):
    cfgs = launch_configs(b, out)
    res = {k: [] for k in cfgs}
    facts = {}
    for rep in range(reps):
        for name, (cmd, env, trace) in cfgs.items():
            stdout, stderr, rc, wall, _ = run(cmd + [str(n)], env=env)
            ns, _ = parse_launch(stdout)
            if rc != 0 or ns is None:
                print(f"  {name} rep {rep}: rc={rc} {stderr.strip()[-300:]}", file=sys.stderr)
            res[name].append(ns)
            if trace and os.path.exists(trace):
                facts[name] = trace_facts(trace)
    return res, facts


def bench_throughput(b, out, n):
    """1M launches: bytes per launch, dropped records, time from program exit to finished trace."""
    trace = f"{out}/million.sqlite"
    cmd = [f"{b}/bin/gpt-trace", "run", "-q", "-f", "-o", trace, "--", f"{b}/bin/bench_launch_loop", str(n)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    stdout, stderr, rc, wall, maxrss = run(cmd)
    done_ns = time.time_ns()
    ns, exit_ns = parse_launch(stdout)
    f = trace_facts(trace) if os.path.exists(trace) else {}
    bare_out, _, _, _, bare_rss = run([f"{b}/bin/bench_launch_loop", str(n)])
    return {"launches": n, "rc": rc, "ns_per_launch": ns, "trace": f,
            "bytes_per_launch": f.get("bytes", 0) / n if f else None,
            "exit_to_finished_s": (done_ns - exit_ns) / 1e9 if exit_ns else None,
            "records_per_s": (f.get("kernels", 0) + f.get("api_rows", 0)) / wall if f else None,
            "peak_rss_kib_traced": maxrss, "peak_rss_kib_before": before, "stderr": stderr[-500:]}


def bench_torch(b, out, reps):
    script = os.path.join(HERE, "torch_bench.py")
    modes = {
        "bare": [sys.executable, script],
        "gpt-trace": [f"{b}/bin/gpt-trace", "run", "-q", "-f", "-o", f"{out}/torch-%p.sqlite", "--",
                      sys.executable, script],
        "torch.profiler": [sys.executable, script, "--kineto"],
    }
    res = {}
    for rep in range(reps):
        for mode, cmd in modes.items():
            stdout, stderr, rc, _, _ = run(cmd, timeout=900)
            if rc != 0:
                print(f"  torch {mode}: rc={rc} {stderr.strip()[-500:]}", file=sys.stderr)
                continue
            for line in stdout.splitlines():
                m = re.match(r"(\S+) ms_per_step=([\d.]+)", line)
                if m:
                    res.setdefault(m.group(1), {}).setdefault(mode, []).append(float(m.group(2)))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--launches", type=int, default=200000)
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    os.makedirs(a.out, exist_ok=True)
    results = {"date": time.strftime("%Y-%m-%d"), "launches": a.launches, "reps": a.reps}
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True)
    results["gpu"] = smi.stdout.strip()

    launch, facts = bench_launch(b, a.out, a.reps, a.launches)
    results["launch"] = {k: {"samples": v, **stat(v)} for k, v in launch.items()}
    results["launch_traces"] = facts
    bare = results["launch"]["bare"]["median"]
    print(f"\n## Launch-bound loop: {a.launches} empty kernels, {a.reps} interleaved runs ({results['gpu']})\n")
    print("| configuration | ns/launch median | min | max | overhead/launch (median - bare) |")
    print("|---|---|---|---|---|")
    for k, s in results["launch"].items():
        if s["median"] is None:
            print(f"| {k} | failed | | | |")
            continue
        over = s["median"] - bare if bare else float("nan")
        print(f"| {k} | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {over:+.1f} ns |")
    for k, f in facts.items():
        print(f"\n{k}: {f['kernels']} kernel rows, {f['api_rows']} API rows, dropped {f['dropped']}, "
              f"{f['bytes'] / max(f['kernels'], 1):.1f} bytes/launch on disk")

    t = bench_throughput(b, a.out, 1000000)
    results["throughput"] = t
    print("\n## Collector at 1,000,000 launches\n")
    print(json.dumps({k: v for k, v in t.items() if k != "stderr"}, indent=1))

    if not a.no_torch:
        tr = bench_torch(b, a.out, max(3, a.reps // 2))
        results["torch"] = {w: {m: {"samples": v, **stat(v)} for m, v in ms.items()} for w, ms in tr.items()}
        print("\n## PyTorch (ms per step, median of runs)\n")
        print("| workload | bare | gpt-trace | torch.profiler | gpt-trace overhead | Kineto overhead | ratio |")
        print("|---|---|---|---|---|---|---|")
        for w, ms in results["torch"].items():
            g = lambda m: ms.get(m, {}).get("median")
            bb, gg, kk = g("bare"), g("gpt-trace"), g("torch.profiler")
            if None in (bb, gg, kk):
                print(f"| {w} | {bb} | {gg} | {kk} | | | |")
                continue
            print(f"| {w} | {bb:.3f} | {gg:.3f} | {kk:.3f} | {gg - bb:+.3f} ({(gg / bb - 1) * 100:+.1f}%) "
                  f"| {kk - bb:+.3f} ({(kk / bb - 1) * 100:+.1f}%) | {(gg - bb) / max(kk - bb, 1e-9) * 100:.0f}% |")
    with open(os.path.join(a.out, "results.json"), "w") as fh:
        json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
