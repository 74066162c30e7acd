#!/usr/bin/env python3
"""NVIDIA's own GPU-metric recipes on gpt-trace traces, against `gpt-trace stats` (issue 39).

Runs the mapper functions of Nsight Systems' recipes gpu_metric_util_sum, gpu_metric_util_map and
nvlink_sum, from an Nsight Systems install's python/packages/nsys_recipe (its code, unchanged, read
where it lies: it is not ours to copy), on each trace, and compares their per-GPU means with the
per-GPU means that `gpt-trace stats -f json` prints (gpu_efficiency.devices, over the steady state,
which the recipes are given as their --filter-time): PASS within 1 point.

The recipes' command line takes only .nsys-rep files, so their DataService is given the trace as
the SQLite export of an empty stand-in report (X.nsys-rep beside X.sqlite, older than it, as nsys
leaves them), through its own SQLite loader. Three modules it imports are replaced where they are
missing: nsysstats (nsys's Python library: a Report over a sqlite3 connection is all the loader asks
of it), pyarrow (used only by the Parquet and Arrow loaders) and psutil (imported, not used, by the
recipe base class). Debian's python3-pandas is enough on a machine without nsys.

usage: check.py NSYS_RECIPE_DIR GPT_TRACE TRACE... (exit 0 all passed, 1 a check failed)
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import types


def load_recipes(recipe_dir):
    """The three recipes' modules, nsys_recipe's package __init__ files left out (they check that
    every requirement of every recipe is installed)."""
    for name, sub in (("nsys_recipe", ""), ("nsys_recipe.lib", "lib"), ("nsys_recipe.recipes", "recipes")):
        mod = types.ModuleType(name)
        mod.__path__ = [os.path.join(recipe_dir, sub)]
        sys.modules[name] = mod
    try:
        import nsysstats  # noqa: F401
    except ImportError:
        sys.modules["nsysstats"] = shim_nsysstats()
    try:
        import psutil  # noqa: F401  (recipe.py imports it; the mappers do not use it)
    except ImportError:
        sys.modules["psutil"] = types.ModuleType("psutil")
    import pandas  # noqa: F401  (before a pyarrow stand-in, which pandas would take for pyarrow)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        for name in ("pyarrow", "pyarrow.parquet"):
            sys.modules[name] = types.ModuleType(name)
        sys.modules["pyarrow"].__path__ = []
        sys.modules["pyarrow"].parquet = sys.modules["pyarrow.parquet"]
    from nsys_recipe.lib import data_reader
    data_reader.DEFAULT_FORMAT = "sqlite"
    from nsys_recipe.recipes.gpu_metric_util_map import gpu_metric_util_map as umap
    from nsys_recipe.recipes.gpu_metric_util_sum import gpu_metric_util_sum as usum
    from nsys_recipe.recipes.nvlink_sum import nvlink_sum as nvl
    return umap.GpuMetricUtilMap, usum.GpuMetricUtilSum, nvl.NvlinkSum


def shim_nsysstats():
    mod = types.ModuleType("nsysstats")

    class Report:
        def __init__(self, dbfile):
            self.dbfile = dbfile
            self.dbcon = sqlite3.connect(dbfile)
            self.tables = [r[0] for r in self.dbcon.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]

        def table_exists(self, table):
            return table in self.tables

        def table_col_exists(self, table, column):
            return column in [r[1] for r in self.dbcon.execute(f"PRAGMA table_info({table})")]

    mod.Report = Report
    return mod


def args(**kw):
    base = dict(filter_time=None, filter_nvtx=None, filter_projected_nvtx=None, per_kernel=False,
                per_projected_nvtx=False, match_ranges=None, longest_n=100)
    base.update(kw)
    return types.SimpleNamespace(**base)


def ours(gpt, trace):
    """stats' per-GPU means, and the window they are over (the steady state, trace ns)."""
    out = subprocess.run([gpt, "stats", "-q", "-f", "json", trace], check=True, capture_output=True, text=True)
    e = json.loads(out.stdout)["gpu_efficiency"]
    return {d["device"]: d for d in e["devices"]}, (e["start_ns"], e["end_ns"])


def db_period(trace):
    """The median interval between one GPU's samples."""
    db = sqlite3.connect(trace)
    t = [r[0] for r in db.execute("SELECT DISTINCT timestamp FROM GPU_METRICS WHERE typeId = "
                                  "(SELECT min(typeId) FROM GPU_METRICS) ORDER BY 1")]
    db.close()
    gaps = sorted(b - a for a, b in zip(t, t[1:]))
    return gaps[len(gaps) // 2] if gaps else 0


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.split("usage: ")[1])
    recipe_dir, gpt, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
    umap, usum, nvl = load_recipes(recipe_dir)
    failed = 0
    work = tempfile.mkdtemp(prefix="gpt-recipes.")

    def check(label, ok, text):
        nonlocal failed
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {label}: {text}")

    for trace in traces:
        name = os.path.splitext(os.path.basename(trace))[0]
        rep = os.path.join(work, name + ".nsys-rep")
        open(rep, "w").close()
        time.sleep(0.01)
        shutil.copy(trace, os.path.join(work, name + ".sqlite"))
        db = sqlite3.connect(trace)
        span = db.execute("SELECT max(timestamp) + 1 FROM GPU_METRICS").fetchone()[0] or 1
        db.close()
        mine, (lo, hi) = ours(gpt, trace)
        # The recipes keep the samples whose start lies in --filter-time, stats weighs each by its
        # overlap: shifted half a sample back, the window holds the samples more than half in it.
        period = db_period(trace)
        window = (lo - period // 2, hi - period // 2)
        print(f"== {name}: {len(mine)} GPU(s) in gpt-trace stats, window {lo}-{hi} ns (the recipes are "
              f"given it as --filter-time, {period // 2} ns earlier)")
        # gpu_metric_util_sum: the whole trace, per GPU and metric
        db = sqlite3.connect(trace)
        missing = [t for t in ("GPU_METRICS", "TARGET_INFO_GPU_METRICS", "TARGET_INFO_CUDA_DEVICE", "TARGET_INFO_GPU")
                   if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (t,)).fetchone()]
        db.close()
        if missing:	# the recipes would export the stand-in report again, with nsys
            check(f"{name} tables", False, f"no {', '.join(missing)}")
            continue
        res = usum._mapper_func(rep, args(filter_time=window))
        check(f"{name} gpu_metric_util_sum", res is not None, "ran" if res is not None else "returned nothing")
        if res is not None:
            stats = res[1]
            for (gpu, metric), row in stats.iterrows():
                print(f"   util_sum GPU {gpu} {metric}: mean {row['Mean']} (count {row['Count']})")
            for gpu, d in mine.items():
                # (the recipes rename nsys's SM and tensor rows to these short names)
                for metric, key in (("SMs Active", "sm_active_pct"), ("Tensor Active", "tensor_active_pct"),
                                    ("DRAM Read Bandwidth [Throughput %]", "dram_read_pct"),
                                    ("DRAM Write Bandwidth [Throughput %]", "dram_write_pct")):
                    if (gpu, metric) not in stats.index or d.get(key) is None:
                        check(f"{name} GPU {gpu} {metric}", False, "missing on one side")
                        continue
                    theirs = float(stats.loc[(gpu, metric), "Mean"])
                    check(f"{name} GPU {gpu} {metric}", abs(theirs - d[key]) <= 1.0,
                          f"util_sum {theirs:.2f} / gpt-trace stats {d[key]:.2f}")
        # gpu_metric_util_map, in one bin: each GPU's mean of SMs Active, SM Issue, Tensor Active
        res = umap._mapper_func(rep, span, None, [0, span], args(bins=1, filter_time=window))
        check(f"{name} gpu_metric_util_map", res is not None, "ran" if res is not None else "returned nothing")
        if res is not None:
            for _, row in res[1].iterrows():
                gpu = int(row["GPU"])
                text = ", ".join(f"{m} {row[m]}" for m in ("SMs Active", "SM Issue", "Tensor Active"))
                sm = mine.get(gpu, {}).get("sm_active_pct")
                check(f"{name} GPU {gpu} util_map SMs Active", sm is not None and abs(row["SMs Active"] - sm) <= 1.0,
                      f"{text}; gpt-trace stats SMs {sm}")
        # nvlink_sum: nsys's NVLink rows (none where the trace has no NVLink peer)
        res = nvl._mapper_func(rep, args(filter_time=window))
        print(f"   nvlink_sum: {'no NVLink rows' if res is None else res[1].to_string()}")
    shutil.rmtree(work, ignore_errors=True)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
