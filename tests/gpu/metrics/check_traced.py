#!/usr/bin/env python3
"""Check a trace of samples/access recorded with `gpt-trace run --metrics` (run-traced.sh on the
GPU machine; the committed copy, tests/fixtures/gpu/access-metrics.sqlite, under ctest).

samples/access launches coalesced_copy, strided_gather, transpose_naive and transpose_tiled ITERS
times each on the default stream, with one HtoD copy, one memset and one DtoH readback per kernel.
Under --metrics the first launch of each kernel carries the SASS instrumentation and the others are
profiled with the range profiler in kernel replay (docs/metrics.md). The checks: one kernel row per
launch whatever replay did, every metrics row joined to its kernel row by correlationId, sectors
per request as the access patterns dictate (4 ideal for 4-byte elements, 32 for the gather's loads
and the naive transpose's stores), ideal sectors, and source lines of kernels/access.cu. Prints
PASS/FAIL per check, INFO lines about replay, and "N passed, M failed"; exit status 1 on a failure.

usage: check_traced.py TRACE [--iters N]
       check_traced.py --self-test   synthetic traces from schema/schema.sql, as a run of access
                                     leaves them: a good one must pass, each broken one must fail
"""
import contextlib
import io
import os
import shutil
import sqlite3
import sys
import tempfile
from collections import defaultdict

KERNELS = ("coalesced_copy", "strided_gather", "transpose_naive", "transpose_tiled")
# Expected global sectors per request (loads, stores) for 4-byte elements.
PER_REQUEST = {
    "coalesced_copy": (4, 4),
    "strided_gather": (32, 4),
    "transpose_naive": (4, 32),
    "transpose_tiled": (4, 4),
}
TOLERANCE = 0.02
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
ACCESS_CU = os.path.join(ROOT, "kernels", "access.cu")
SCHEMA = os.path.join(ROOT, "schema", "schema.sql")
# As inject/metrics.c creates them.
METRICS_DDL = """
CREATE TABLE GPT_KERNEL_METRICS (correlationId INTEGER NOT NULL, deviceId INTEGER, contextId INTEGER,
    kernelName TEXT, shortName TEXT, source TEXT, gldSectors INTEGER, gldRequests INTEGER,
    gstSectors INTEGER, gstRequests INTEGER, gldSectorsIdeal INTEGER, gstSectorsIdeal INTEGER,
    idealSource TEXT, durationNs INTEGER, replayDurationNs INTEGER, passes INTEGER);
CREATE TABLE GPT_SOURCE_METRICS (kernelName TEXT, shortName TEXT, file TEXT, line INTEGER,
    gldSectors INTEGER, gldSectorsIdeal INTEGER, gldRequests INTEGER, gstSectors INTEGER,
    gstSectorsIdeal INTEGER, gstRequests INTEGER, launches INTEGER);
"""
MANGLED = {
    "coalesced_copy": "_Z14coalesced_copyPKfPfm",
    "strided_gather": "_Z14strided_gatherPKfPfm",
    "transpose_naive": "_Z15transpose_naivePKfPfii",
    "transpose_tiled": "_Z15transpose_tiledPKfPfii",
}


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {what}" + (f" ({detail})" if detail else ""))
        return ok


def info(text):
    print(f"INFO {text}")


def near(value, want):
    return value is not None and abs(value - want) <= TOLERANCE * want


def ratio(num, den):
    return num / den if num is not None and den else None


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def source_line(needle):
    """Line number of the first line of kernels/access.cu holding needle, or None."""
    try:
        with open(ACCESS_CU) as f:
            for n, text in enumerate(f, 1):
                if needle in text:
                    return n
    except OSError:
        pass
    return None


def sources_on(spec, summary):
    """Source lines were on: as the spec says, else the library's default when the trace was made
    (on since kernel tracing steps aside for the SASS launch, off before; the summary line tells
    which: "; source lines for N of M kernels instrumented" only when they were on)."""
    items = [x.strip() for x in (spec or "").split(",")]
    if any(x in ("source=0", "source=off", "source=no") for x in items):
        return False
    if any(x in ("source=1", "source=on", "source=yes") for x in items):
        return True
    return "source lines" in (summary or "")


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__)
        return 2
    path, iters = argv[1], 10
    if "--iters" in argv:
        iters = int(argv[argv.index("--iters") + 1])
    c = Checks()
    if not c.check(os.path.isfile(path), f"trace {path} exists"):
        print(f"{c.passed} passed, {c.failed} failed")
        return 1
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = lambda sql, *a: db.execute(sql, a).fetchall()
    meta = dict(q("SELECT name, value FROM GPT_META"))
    tables = {r[0] for r in q("SELECT name FROM sqlite_master WHERE type = 'table'")}
    source = sources_on(meta.get("metrics_spec"), meta.get("metrics_summary"))
    sass_launches = 1 if source else 0
    replayed = len(KERNELS) * (iters - sass_launches)
    info(f"GPT_TRACE_METRICS={meta.get('metrics_spec')}: source lines "
         f"{'on: the first launch of each kernel is its SASS launch' if source else 'off: every launch is replayed'}")

    c.check(meta.get("trace_complete") == "1", "the trace is complete (GPT_META trace_complete)")

    # Kernel rows: exactly one per launch, with times.
    kernels = q("SELECT s.value, m.value, k.correlationId, k.start, k.end "
                "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                "LEFT JOIN StringIds m ON m.id = k.mangledName ORDER BY k.start")
    per_kernel = defaultdict(list)
    for name, mangled, corr, start, end in kernels:
        per_kernel[name].append((corr, mangled, start, end))
    for name in KERNELS:
        n = len(per_kernel.get(name, []))
        c.check(n == iters, f"{name}: one kernel row per launch", f"{n} rows, {iters} launches")
    corrs = [k[2] for k in kernels]
    c.check(len(corrs) == len(set(corrs)), "no two kernel rows share a correlationId",
            f"{len(corrs)} rows, {len(set(corrs))} ids")
    calls = dict(q("SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME"))
    c.check(all(x in calls for x in corrs), "every kernel row joins its launch API call")
    bad = [k for k in kernels if not (k[3] and k[4] >= k[3] and k[2] in calls and k[3] >= calls[k[2]])]
    c.check(not bad, "every kernel row has times, ends after it starts, starts after its launch call",
            f"{len(bad)} do not" + (f", e.g. corr {bad[0][2]}: {bad[0][3]}..{bad[0][4]}" if bad else ""))
    shared = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
               "USING (correlationId)")[0][0]
    syncs = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s JOIN "
              "CUPTI_ACTIVITY_KIND_KERNEL k USING (correlationId)")[0][0] \
        if "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" in tables else 0
    c.check(shared == len(kernels) and syncs == 0, "no API call or synchronization of the library's "
            "own inside a launch call (one API row per kernel row, no sync rows)",
            f"{shared} API rows for {len(kernels)} kernel rows, {syncs} sync rows")
    timed = meta.get("replayed_kernel_rows_timed")
    c.check(timed == str(replayed), "kernel rows of replayed launches timed from the profiler "
            "(GPT_META replayed_kernel_rows_timed)", f"{timed}, {replayed} replayed launches")
    info(f"kernel records CUPTI delivered beyond one per replayed launch: "
         f"{meta.get('replayed_kernel_records_dropped', 'not recorded')}; untimed records: "
         f"{meta.get('untimed_records')}")
    copies = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")[0][0]
    memsets = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")[0][0] \
        if "CUPTI_ACTIVITY_KIND_MEMSET" in tables else 0
    c.check(copies == 1 + len(KERNELS) and memsets == len(KERNELS),
            "replay added no copy or memset rows", f"{copies} copies, {memsets} memsets")

    if not c.check("GPT_KERNEL_METRICS" in tables and "GPT_SOURCE_METRICS" in tables,
                   "GPT_KERNEL_METRICS and GPT_SOURCE_METRICS are there"):
        print(f"{c.passed} passed, {c.failed} failed")
        return 1
    rows = q("SELECT correlationId, kernelName, shortName, source, gldSectors, gldRequests, "
             "gstSectors, gstRequests, gldSectorsIdeal, gstSectorsIdeal, idealSource, durationNs, "
             "replayDurationNs, passes FROM GPT_KERNEL_METRICS ORDER BY rowid")
    cols = ("corr kernel short source lds ldr sts str ldi sti ideal dur replay passes").split()
    rows = [dict(zip(cols, r)) for r in rows]
    by_corr = {k[2]: k for k in kernels}
    joined = [r for r in rows if r["corr"] in by_corr and by_corr[r["corr"]][1] == r["kernel"]]
    c.check(len(joined) == len(rows) and rows, "every GPT_KERNEL_METRICS row joins one kernel row "
            "by correlationId, same kernel", f"{len(joined)} of {len(rows)}")
    span = lambda values: ("-" if not values or None in values else
                           fmt(min(values)) if max(values) - min(values) < 0.005 else
                           f"{fmt(min(values))}..{fmt(max(values))}")
    for name in KERNELS:
        mine = [r for r in rows if r["short"] == name]
        sass = [r for r in mine if r["source"] == "sass"]
        counters = [r for r in mine if r["source"] == "counters"]
        c.check(len(sass) == sass_launches and len(counters) == iters - sass_launches,
                f"{name}: {sass_launches} SASS launch(es) and {iters - sass_launches} launches "
                f"with counters", f"{len(sass)} sass, {len(counters)} counters")
        want_ld, want_st = PER_REQUEST[name]
        ld = [ratio(r["lds"], r["ldr"]) for r in counters]
        st = [ratio(r["sts"], r["str"]) for r in counters]
        c.check(counters and all(near(v, want_ld) for v in ld) and all(near(v, want_st) for v in st),
                f"{name}: sectors/request ld ~{want_ld} st ~{want_st} (counters)",
                f"ld {span(ld)} st {span(st)}")
        c.check(counters and all(r["dur"] and r["dur"] > 0 and r["passes"] for r in counters),
                f"{name}: duration and passes on every launch with counters",
                ", ".join(f"{r['dur']} ns/{r['passes']}" for r in counters))
        rows_match = [r for r in counters if r["corr"] in by_corr and r["dur"] is not None and
                      abs((by_corr[r["corr"]][4] - by_corr[r["corr"]][3]) - r["dur"]) <= 1]
        c.check(len(rows_match) == len(counters),
                f"{name}: kernel rows of replayed launches last the measured duration",
                f"{len(rows_match)} of {len(counters)}")
        if not source:
            c.check(all(r["ldi"] is None and r["ideal"] is None for r in counters),
                    f"{name}: no ideal sectors without source lines")
            continue
        ldi = [ratio(r["ldi"], r["ldr"]) for r in counters]
        sti = [ratio(r["sti"], r["str"]) for r in counters]
        c.check(counters and all(near(v, 4) for v in ldi + sti) and
                all(r["ideal"] == "sass-scaled" for r in counters),
                f"{name}: ideal sectors/request 4 (sass-scaled)", f"ld {span(ldi)} st {span(sti)}")
        for r in sass:
            ld, st = ratio(r["lds"], r["ldr"]), ratio(r["sts"], r["str"])
            c.check(near(ld, want_ld) and near(st, want_st) and near(ratio(r["ldi"], r["ldr"]), 4),
                    f"{name}: SASS launch sectors/instruction ld ~{want_ld} st ~{want_st}, ideal 4",
                    f"ld {fmt(ld)} st {fmt(st)} ideal ld {fmt(ratio(r['ldi'], r['ldr']))}")

    # Source lines: the excess where the source says it is.
    lines = q("SELECT shortName, file, line, gldSectors - gldSectorsIdeal, "
              "gstSectors - gstSectorsIdeal FROM GPT_SOURCE_METRICS")
    if not source:
        c.check(not lines, "no GPT_SOURCE_METRICS rows without source lines", f"{len(lines)}")
    else:
        for name in KERNELS:
            mine = [l for l in lines if l[0] == name and l[1] and l[1].endswith("access.cu")]
            c.check(mine, f"{name}: GPT_SOURCE_METRICS has access.cu lines",
                    ", ".join(f"{os.path.basename(l[1])}:{l[2]}" for l in mine))
        gather = source_line("GATHER_STRIDE) % n]")
        naive = source_line("out[(size_t)col * rows + row + j]")
        worst = lambda name, col: max((l for l in lines if l[0] == name), key=lambda l: l[col],
                                      default=None)
        w = worst("strided_gather", 3)
        c.check(w and w[2] == gather and w[3] > 0,
                f"strided_gather: the load excess is on access.cu:{gather}",
                w and f"access.cu:{w[2]}, {w[3]} excess sectors")
        w = worst("transpose_naive", 4)
        c.check(w and w[2] == naive and w[4] > 0,
                f"transpose_naive: the store excess is on access.cu:{naive}",
                w and f"access.cu:{w[2]}, {w[4]} excess sectors")
        for name in ("coalesced_copy", "transpose_tiled"):
            excess = sum(l[3] + l[4] for l in lines if l[0] == name)
            c.check(excess == 0, f"{name}: no excess sectors on any line", f"{excess}")

    summary = meta.get("metrics_summary", "")
    c.check(summary.startswith(f"metrics: {replayed} launches of {len(KERNELS)} kernels profiled"),
            "GPT_META metrics_summary counts the launches", summary)

    print()
    print(f"{'corr':>6} {'kernel':16} {'row us':>8} {'source':8} {'dur us':>8} {'replay ms':>9}"
          f" {'ld s/r':>6} {'st s/r':>6}")
    metrics = {r["corr"]: r for r in rows}
    for name, mangled, corr, start, end in kernels:
        r = metrics.get(corr, {})
        print(f"{corr:6} {name:16} {(end - start) / 1e3:8.1f} {r.get('source', '-'):8} "
              f"{fmt(r['dur'] / 1e3) if r.get('dur') else '-':>8} "
              f"{fmt(r['replay'] / 1e6) if r.get('replay') else '-':>9} "
              f"{fmt(ratio(r.get('lds'), r.get('ldr'))):>6} {fmt(ratio(r.get('sts'), r.get('str'))):>6}")
    print()
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


def make_trace(path, iters, source=False, breakage=None):
    """A trace as `gpt-trace run --metrics[=all,source=1] -- access --iters ITERS` leaves it,
    optionally broken one way."""
    db = sqlite3.connect(path)
    with open(SCHEMA) as f:
        db.executescript(f.read())
    db.executescript(METRICS_DDL)
    strings = {}

    def sid(text):
        if text not in strings:
            strings[text] = len(strings) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[text], text))
        return strings[text]

    t, corr, req, dur = 1000, 0, 524288, 50000
    lines = {"coalesced_copy": source_line("out[i] = in[i]"),
             "strided_gather": source_line("GATHER_STRIDE) % n]"),
             "transpose_naive": source_line("out[(size_t)col * rows + row + j]"),
             "transpose_tiled": source_line("tile[threadIdx.y + j][threadIdx.x] = in")}

    def api(name, length=50):
        nonlocal t, corr
        corr += 1
        t += 100
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, 1, ?, ?, 0, NULL)",
                   (t, t + length, corr, sid(name)))
        return corr

    def kernel(name, c, start, end):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
                   "streamId, correlationId, demangledName, shortName, mangledName, "
                   "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                   "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                   "localMemoryTotal, gridId) VALUES "
                   "(?, ?, 0, 1, 7, ?, ?, ?, ?, 16, 1, 1, 1, 256, 1, 1, 0, 0, 0, 0, ?)",
                   (start, end, c, sid(name), sid(name), sid(MANGLED[name]), c))

    c = api("cudaMemcpy_v3020")
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
               "correlationId, bytes, copyKind) VALUES (?, ?, 0, 1, 7, ?, 64, 1)", (t, t + 10, c))
    for name in KERNELS:
        c = api("cudaMemset_v3020")
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
                   "streamId, correlationId, value, bytes) VALUES (?, ?, 0, 1, 7, ?, 0, 64)",
                   (t, t + 10, c))
        want_ld, want_st = PER_REQUEST[name]
        if breakage == "coalesced-gather" and name == "strided_gather":
            want_ld = 4
        for i in range(iters):
            sass = source and i == 0
            c = api("cudaLaunchKernel_v7000", 100 if sass else 3 * dur)
            row_corr = c + 1000 if breakage == "unjoined" and i == 1 else c
            if sass:
                kernel(name, c, t + 60, t + 90)
                db.execute("INSERT INTO GPT_KERNEL_METRICS VALUES (?, 0, 1, ?, ?, 'sass', ?, ?, ?, "
                           "?, ?, ?, 'sass', NULL, 2000000, NULL)",
                           (row_corr, MANGLED[name], name, want_ld * req // 4, req // 4,
                            want_st * req // 4, req // 4, req, req))
                continue
            end = t + 3 * dur
            for _ in range(3 if breakage == "duplicates" and i == 1 else 1):
                kernel(name, c, end - dur, end)
            ideal = (4 * req, 4 * req, "sass-scaled") if source else (None, None, None)
            db.execute("INSERT INTO GPT_KERNEL_METRICS VALUES (?, 0, 1, ?, ?, 'counters', ?, "
                       "?, ?, ?, ?, ?, ?, ?, 30000000, 3)",
                       (row_corr, MANGLED[name], name, want_ld * req, req, want_st * req, req,
                        *ideal, dur))
        if source:
            db.execute("INSERT INTO GPT_SOURCE_METRICS VALUES (?, ?, '/src/kernels/access.cu', ?, "
                       "?, ?, 1, ?, ?, 1, 1)",
                       (MANGLED[name], name, lines[name], want_ld, 4, want_st, 4))
        c = api("cudaMemcpy_v3020")
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                   "streamId, correlationId, bytes, copyKind) VALUES (?, ?, 0, 1, 7, ?, 64, 2)",
                   (t, t + 10, c))
    replayed = 4 * (iters - 1 if source else iters)
    meta = {"trace_complete": "1", "metrics_spec": "1" if source else "all,source=0",
            "replayed_kernel_rows_timed": str(replayed), "replayed_kernel_records_dropped": "0",
            "untimed_records": "0",
            "metrics_summary": f"metrics: {replayed} launches of 4 kernels profiled "
                               "(3 passes each), 0.40 s in kernel replay" +
                               ("; source lines for 4 of 4 kernels instrumented" if source else "")}
    db.executemany("INSERT OR REPLACE INTO GPT_META VALUES (?, ?)", meta.items())
    db.commit()
    db.close()


def self_test():
    work = tempfile.mkdtemp(prefix="check-traced-")
    bad = 0
    cases = [(False, None), (True, None), (False, "duplicates"), (False, "coalesced-gather"),
             (False, "unjoined"), (True, "coalesced-gather")]
    try:
        for source, breakage in cases:
            what = f"{breakage or 'a good trace'}{', source lines' if source else ''}"
            path = os.path.join(work, f"{breakage or 'good'}-{int(source)}.sqlite")
            make_trace(path, 4, source, breakage)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = main(["check_traced.py", path, "--iters", "4"])
            fails = [l for l in out.getvalue().splitlines() if l.startswith("FAIL")]
            ok = status == 0 and not fails if breakage is None else status == 1 and fails
            print(f"{'PASS' if ok else 'FAIL'} self-test: {what} "
                  f"{'passes' if breakage is None else 'fails'}"
                  + (f" ({fails[0]})" if fails else ""))
            if not ok:
                print(out.getvalue())
                bad += 1
    finally:
        shutil.rmtree(work)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:2] == ["--self-test"] else main(sys.argv))
