#!/usr/bin/env python3
"""Compare `nsys stats` with `gpt-trace stats` on the same traces (see tests/gpu/nsys-compat.sh).

    nsys_compat.py OUTDIR
        OUTDIR as nsys-compat.sh leaves it: traces.tsv (label, trace, nsys exit status, gpt-trace
        exit status) and per label <label>_<report>.csv from `nsys stats --format csv`,
        <label>.gpt.json from `gpt-trace stats --format json`, the logs and the trace's copy
        <label>.sqlite. Prints, per trace, the numbers of both side by side and a PASS/FAIL line
        per check, then "N passed, M failed"; exits 1 when a check failed.
    nsys_compat.py --fake-nsys stats --report R1,R2 --format csv --output PREFIX ... TRACE
        a stand-in for `nsys stats` (CPU tests only: it computes the five reports with SQL as
        described in NVIDIA's documentation, with their CSV headers; it proves the plumbing and the
        comparison, not nsys's numbers). FAKE_NSYS_SKEW=kernels|api|memory|nvtx adds one to the
        first row's count of that report, so that a self-test sees the comparison fail.
    nsys_compat.py --self-test GPT_TRACE TRACE...
        runs nsys-compat.sh with the stand-in on TRACE..., expects every comparison to pass
        (invariants may fail on traces recorded before schema version 2), then once per
        FAKE_NSYS_SKEW value expects that comparison to fail as well, and nothing else.

Checks per trace:
    nsys-ran, gpt-ran   both tools exit 0 (a failure shows the end of the tool's log)
    kernels             per kernel name: instances and total GPU time (cuda_gpu_kern_sum)
    api                 per CUDA function: number of calls and total time (cuda_api_sum; nsys drops
                        the "_v7000" version suffix of the names CUPTI gives, so both sides are
                        compared without it)
    memory-time         per kind of copy (Host-to-Device, ...) and memset: count and total time
                        (cuda_gpu_mem_time_sum)
    memory-bytes        per kind: bytes (cuda_gpu_mem_size_sum, in MB = 10^6 B)
    nvtx                per range name: instances and total time (nvtx_sum; nsys may prefix the
                        domain, "domain:name" or ":name")
    invariant <name>    tests/collector/sql_invariants.py on the trace
A report nsys writes no CSV for (it says SKIPPED when a trace has no such data) passes when
gpt-trace has no rows of that kind either.
"""
import csv
import glob
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
import sql_invariants  # noqa: E402

REPORTS = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
           "nvtx_sum"]
COPY_KINDS = {0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array",
              4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array",
              8: "Device-to-Device", 9: "Host-to-Host", 10: "Peer-to-Peer",
              11: "Unified Host-to-Device", 12: "Unified Device-to-Host",
              13: "Unified Device-to-Device"}
ABBREVIATIONS = {"htod": "Host-to-Device", "dtoh": "Device-to-Host", "dtod": "Device-to-Device",
                 "htoh": "Host-to-Host", "ptop": "Peer-to-Peer"}
SHOWN = 12      # agreeing rows printed per table; disagreeing rows are always printed
MB = 1e6


def api_name(name):
    return re.sub(r"_v\d+$", "", name)


def nvtx_candidates(name):
    """nsys's range name, then the forms without a domain prefix."""
    yield name
    if name.startswith(":"):
        yield name[1:]
    if ":" in name:
        yield name.split(":", 1)[1]


def memory_key(operation):
    text = operation.lower()
    if "memset" in text:
        return "memset"
    for kind in sorted(COPY_KINDS.values(), key=len, reverse=True):
        if kind.lower() in text:
            return kind
    for abbreviation, kind in ABBREVIATIONS.items():
        if abbreviation in text:
            return kind
    return operation


def number(value):
    value = (value or "").replace(",", "").strip()
    try:
        return float(value)
    except ValueError:
        return None


def column(header, *wanted):
    """Index of the first header that starts with one of wanted (case-insensitive)."""
    lowered = [h.strip().lower() for h in header]
    for w in wanted:
        for i, h in enumerate(lowered):
            if h.startswith(w.lower()):
                return i
    return None


def read_csv(out, label, report):
    """(header, rows) of nsys's CSV for report, or None when nsys wrote none."""
    paths = [os.path.join(out, "%s_%s.csv" % (label, report))]
    paths += sorted(glob.glob(os.path.join(glob.escape(out), "%s_%s*.csv" % (
        glob.escape(label), report))))
    for path in paths:
        if os.path.exists(path):
            with open(path, newline="") as f:
                rows = [r for r in csv.reader(f) if r]
            # Lines before the header (notices) are skipped: the header has the most columns.
            while len(rows) > 1 and len(rows[0]) < len(rows[1]):
                rows.pop(0)
            return (rows[0], rows[1:]) if rows else ([], [])
    return None


def nsys_table(out, label, report, name_columns, count_columns, value_columns, key=lambda n: n):
    """{key(name): [count, value]} summed over nsys's rows, or None when there is no CSV."""
    table = read_csv(out, label, report)
    if table is None:
        return None
    header, rows = table
    # nsys writes an empty file for a report with nothing to show (no NVTX ranges, no kernels):
    # that is an empty table, to be compared with ours.
    if not header and not rows:
        return {}
    name_i = column(header, *name_columns)
    count_i = column(header, *count_columns)
    value_i = column(header, *value_columns)
    if None in (name_i, count_i, value_i):
        raise ValueError("%s: unexpected header %s" % (report, header))
    result = {}
    for row in rows:
        if len(row) <= max(name_i, count_i, value_i):
            continue
        entry = result.setdefault(key(row[name_i]), [0, 0.0])
        entry[0] += number(row[count_i]) or 0
        entry[1] += number(row[value_i]) or 0
    return result


class Checks:
    def __init__(self):
        self.passed = self.failed = 0
        self.failed_names = []

    def report(self, ok, label, name, detail):
        print("%s %s: %s: %s" % ("PASS" if ok else "FAIL", label, name, detail))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failed_names.append((label, name))


def log_tail(path, lines=3):
    try:
        with open(path, errors="replace") as f:
            tail = [l.rstrip() for l in f if l.strip()][-lines:]
        return " | ".join(tail) or "(empty log)"
    except OSError:
        return "(no log)"


def compare_table(checks, label, name, what, nsys, ours, count_word, value_word, close):
    """Print both tables side by side; one PASS/FAIL line for the whole table."""
    if nsys is None:
        ok = not ours
        checks.report(ok, label, name, "nsys wrote no CSV; gpt-trace has %d %ss" % (
            len(ours), what) + ("" if ok else " (see the nsys log)"))
        return
    keys = sorted(set(nsys) | set(ours), key=lambda k: -max(nsys.get(k, [0, 0])[1],
                                                              ours.get(k, [0, 0])[1]))
    width = min(60, max([len(what)] + [len(str(k)) for k in keys]))
    print("  %-*s %12s %12s %16s %16s" % (width, what, "nsys " + count_word, "ours " + count_word,
                                          "nsys " + value_word, "ours " + value_word))
    bad, shown = [], 0
    for k in keys:
        n, o = nsys.get(k), ours.get(k)
        agree = n is not None and o is not None and n[0] == o[0] and close(n[1], o[1])
        if not agree:
            bad.append(k)
        if agree and shown >= SHOWN:
            continue
        shown += agree
        print("  %-*s %12s %12s %16s %16s%s" % (
            width, str(k)[:width], fmt(n and n[0]), fmt(o and o[0]), fmt(n and n[1]),
            fmt(o and o[1]), "" if agree else "   <- differs"))
    if len(keys) - len(bad) > shown:
        print("  ... %d more agree" % (len(keys) - len(bad) - shown))
    total_n = [sum(v[0] for v in nsys.values()), sum(v[1] for v in nsys.values())]
    total_o = [sum(v[0] for v in ours.values()), sum(v[1] for v in ours.values())]
    detail = "%d %ss: %s %s / %s %s (nsys) vs %s / %s (gpt-trace)" % (
        len(keys), what, count_word, fmt(total_n[0]), value_word, fmt(total_n[1]),
        fmt(total_o[0]), fmt(total_o[1]))
    if bad:
        detail += "; differ: %s" % ", ".join(str(k) for k in bad[:4])
    checks.report(not bad, label, name, detail)


def fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return "%.3f" % value
    return "%d" % value


def exact(a, b):
    return a == b


def megabytes(a, b):
    # nsys prints MB rounded; one unit of the last printed digit either way.
    return abs(a - b) <= max(0.0011, 1e-6 * abs(b))


def ours_tables(gpt):
    kernels = {}
    for k in gpt.get("kernels", []):
        entry = kernels.setdefault(k["name"], [0, 0])
        entry[0] += k["count"]
        entry[1] += k["total_ns"]
    api = {}
    for a in gpt.get("api", []):
        entry = api.setdefault(api_name(a["name"]), [0, 0])
        entry[0] += a["count"]
        entry[1] += a["total_ns"]
    mem_time, mem_bytes = {}, {}
    for m in gpt.get("memory", []):
        key = "memset" if m.get("copy_kind") is None else COPY_KINDS.get(m["copy_kind"],
                                                                         str(m["copy_kind"]))
        entry = mem_time.setdefault(key, [0, 0])
        entry[0] += m["count"]
        entry[1] += m["total_ns"]
        entry = mem_bytes.setdefault(key, [0, 0.0])
        entry[0] += m["count"]
        entry[1] += m["bytes"] / MB
    nvtx = {}
    for r in gpt.get("nvtx", []):
        entry = nvtx.setdefault(r["text"], [0, 0])
        entry[0] += r["count"]
        entry[1] += r["total_ns"]
    return kernels, api, mem_time, mem_bytes, nvtx


def match_nvtx(nsys, ours):
    """nsys's range names in our spelling where a domain prefix is all that differs."""
    if nsys is None:
        return None
    matched = {}
    for name, value in nsys.items():
        key = next((c for c in nvtx_candidates(name) if c in ours), name)
        entry = matched.setdefault(key, [0, 0.0])
        entry[0] += value[0]
        entry[1] += value[1]
    return matched


def compare_trace(checks, out, label, trace, nsys_rc, gpt_rc):
    print("\n== %s (%s)" % (label, trace))
    nsys_log = os.path.join(out, label + ".nsys.log")
    gpt_log = os.path.join(out, label + ".gpt.log")
    checks.report(nsys_rc == 0, label, "nsys-ran", "exit %d" % nsys_rc +
                  ("" if nsys_rc == 0 else ": " + log_tail(nsys_log)))
    checks.report(gpt_rc == 0, label, "gpt-ran", "exit %d" % gpt_rc +
                  ("" if gpt_rc == 0 else ": " + log_tail(gpt_log)))
    try:
        with open(os.path.join(out, label + ".gpt.json")) as f:
            gpt = json.load(f)
    except (OSError, ValueError) as e:
        checks.report(False, label, "gpt-json", "cannot read gpt-trace's JSON: %s" % e)
        gpt = {}
    kernels, api, mem_time, mem_bytes, nvtx = ours_tables(gpt)
    try:
        compare_table(checks, label, "kernels", "kernel", nsys_table(
            out, label, "cuda_gpu_kern_sum", ["name"], ["instances"], ["total time"]),
            kernels, "inst", "ns", exact)
        compare_table(checks, label, "api", "function", nsys_table(
            out, label, "cuda_api_sum", ["name"], ["num calls", "calls", "count"],
            ["total time"], key=api_name), api, "calls", "ns", exact)
        compare_table(checks, label, "memory-time", "operation", nsys_table(
            out, label, "cuda_gpu_mem_time_sum", ["operation"], ["count"], ["total time"],
            key=memory_key), mem_time, "count", "ns", exact)
        compare_table(checks, label, "memory-bytes", "operation", nsys_table(
            out, label, "cuda_gpu_mem_size_sum", ["operation"], ["count"], ["total"],
            key=memory_key), mem_bytes, "count", "MB", megabytes)
        compare_table(checks, label, "nvtx", "range", match_nvtx(nsys_table(
            out, label, "nvtx_sum", ["range", "name"], ["instances", "count"], ["total time"]),
            nvtx), nvtx, "inst", "ns", exact)
    except ValueError as e:
        checks.report(False, label, "nsys-csv", str(e))
    copy = os.path.join(out, label + ".sqlite")
    path = copy if os.path.exists(copy) else trace
    with open(os.devnull, "w") as quiet:
        results = sql_invariants.run(path, sql_invariants.INVARIANTS, out=quiet)
    for name, problems in results.items():
        checks.report(not problems, label, "invariant " + name,
                      "holds" if not problems else "; ".join(problems)[:300])


def compare(out):
    checks = Checks()
    try:
        with open(os.path.join(out, "traces.tsv")) as f:
            runs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    except OSError as e:
        print("nsys_compat.py: %s" % e, file=sys.stderr)
        return 2
    for label, trace, nsys_rc, gpt_rc in runs:
        compare_trace(checks, out, label, trace, int(nsys_rc), int(gpt_rc))
    print("\n%d passed, %d failed" % (checks.passed, checks.failed))
    return 1 if checks.failed else 0


# The stand-in for `nsys stats` (CPU tests only).

def fake_stats(rows, header):
    """nsys's summary columns for rows of (name, duration)."""
    groups = {}
    for name, duration in rows:
        groups.setdefault(name, []).append(duration)
    total_all = sum(sum(v) for v in groups.values()) or 1
    table = []
    for name, values in groups.items():
        total = sum(values)
        table.append([round(100.0 * total / total_all, 1), total, len(values),
                      round(total / len(values), 1), statistics.median(values), min(values),
                      max(values), round(statistics.stdev(values), 1) if len(values) > 1 else 0.0,
                      name])
    table.sort(key=lambda r: -r[1])
    return [header] + table


def fake_reports(db, skew):
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    time_header = ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                   "Min (ns)", "Max (ns)", "StdDev (ns)"]
    reports = {}
    kernels = [(strings.get(n, "?"), e - s) for n, s, e in db.execute(
        "SELECT demangledName, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL")]
    reports["cuda_gpu_kern_sum"] = fake_stats(kernels, time_header + ["Name"]) if kernels else None
    calls = [(api_name(strings.get(n, "?")), e - s) for n, s, e in db.execute(
        "SELECT nameId, start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME")]
    header = list(time_header)
    header[2] = "Num Calls"
    reports["cuda_api_sum"] = fake_stats(calls, header + ["Name"]) if calls else None
    ops, sizes = [], []
    for kind, s, e, size in db.execute("SELECT copyKind, start, end, bytes FROM "
                                       "CUPTI_ACTIVITY_KIND_MEMCPY"):
        ops.append(("[CUDA memcpy %s]" % COPY_KINDS.get(kind, "Unknown"), e - s))
        sizes.append((ops[-1][0], size / MB))
    for s, e, size in db.execute("SELECT start, end, bytes FROM CUPTI_ACTIVITY_KIND_MEMSET"):
        ops.append(("[CUDA memset]", e - s))
        sizes.append(("[CUDA memset]", size / MB))
    header = list(time_header)
    header[2] = "Count"
    reports["cuda_gpu_mem_time_sum"] = fake_stats(ops, header + ["Operation"]) if ops else None
    if sizes:
        table = fake_stats(sizes, header)
        reports["cuda_gpu_mem_size_sum"] = [["Total (MB)", "Count", "Avg (MB)", "Med (MB)",
                                             "Min (MB)", "Max (MB)", "StdDev (MB)", "Operation"]]
        for r in table[1:]:
            reports["cuda_gpu_mem_size_sum"].append(["%.3f" % r[1], r[2]] + [
                "%.3f" % v for v in r[3:8]] + [r[8]])
    else:
        reports["cuda_gpu_mem_size_sum"] = None
    ranges = []
    if "NVTX_EVENTS" in tables:
        for text, text_id, s, e in db.execute(
                "SELECT text, textId, start, end FROM NVTX_EVENTS WHERE eventType IN (59, 60) "
                "AND end IS NOT NULL"):
            ranges.append((":" + (text if text is not None else strings.get(text_id, "")), e - s))
    reports["nvtx_sum"] = fake_stats(ranges, time_header + ["Style", "Range"]) if ranges else None
    if reports["nvtx_sum"]:
        for r in reports["nvtx_sum"][1:]:
            r.insert(8, "PushPop")
    which = {"kernels": "cuda_gpu_kern_sum", "api": "cuda_api_sum",
             "memory": "cuda_gpu_mem_time_sum", "nvtx": "nvtx_sum"}.get(skew)
    if which and reports.get(which):
        reports[which][1][2] += 1
    return reports


def fake_nsys(argv):
    if "--version" in argv:
        print("NVIDIA Nsight Systems version 0 (stand-in: tests/gpu/nsys_compat.py)")
        return 0
    opts, args, i = {}, [], 0
    while i < len(argv):
        if argv[i].startswith("--") and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if args[:1] != ["stats"] or len(args) != 2 or opts.get("--format") != "csv":
        print("fake nsys: unsupported command line %s" % argv, file=sys.stderr)
        return 2
    db = sqlite3.connect("file:%s?mode=ro" % args[1], uri=True)
    reports = fake_reports(db, os.environ.get("FAKE_NSYS_SKEW"))
    db.close()
    for report in opts.get("--report", "").split(","):
        rows = reports.get(report)
        if not rows:
            print("SKIPPED: %s does not contain data for %s." % (args[1], report))
            continue
        with open("%s_%s.csv" % (opts["--output"], report), "w", newline="") as f:
            csv.writer(f, quoting=csv.QUOTE_NONNUMERIC).writerows(rows)
    return 0


def self_test(gpt, traces):
    script = os.path.join(HERE, "nsys-compat.sh")
    fake = "%s %s --fake-nsys" % (sys.executable, os.path.abspath(__file__))
    build = os.path.dirname(os.path.dirname(os.path.abspath(gpt)))
    baseline, failures = None, 0
    for skew in ("", "kernels", "api", "memory", "nvtx"):
        out = tempfile.mkdtemp(prefix="gpt-nsys-compat-selftest.")
        try:
            env = dict(os.environ, FAKE_NSYS_SKEW=skew, NSYS=fake, BUILD=build)
            run = subprocess.run(["bash", script, "-o", out] + traces, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        finally:
            shutil.rmtree(out)
        failed = {line.split(": ")[1] for line in run.stdout.splitlines()
                  if line.startswith("FAIL ")}
        if baseline is None:
            # Without skew only invariants may fail (traces recorded before schema version 2).
            baseline = failed
            ok = all(name.startswith("invariant ") for name in failed) and \
                run.stdout.rstrip().endswith("%d failed" % sum(
                    line.startswith("FAIL ") for line in run.stdout.splitlines()))
            expect = failed
        else:
            expect = baseline | {"memory-time" if skew == "memory" else skew}
            ok = failed == expect and run.returncode == 1
        failures += not ok
        print("%s %s: failed checks %s, exit %d" % (
            "ok" if ok else "WRONG", "skew " + skew if skew else "no skew",
            ", ".join(sorted(failed)) or "none", run.returncode))
        if not ok:
            print(run.stdout)
    print("self-test: %s" % ("passed" if not failures else "failed"))
    return 1 if failures else 0


def main(argv):
    if argv[:1] == ["--fake-nsys"]:
        return fake_nsys(argv[1:])
    if argv[:1] == ["--self-test"] and len(argv) >= 3:
        return self_test(argv[1], argv[2:])
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    return compare(argv[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
