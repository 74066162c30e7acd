#!/usr/bin/env python3
"""Check gpt-trace's GPU traces against what each sample program says it did.

tests/gpu/run-samples.sh runs every sample in samples/ (and tests/gpu/train_small.py) under
`gpt-trace run`, then calls this script on its work folder. Each sample prints one result line,
    <sample>: ok pid=<pid> kernel=<name>:<launches>:<gx>x<gy>x<gz>:<bx>x<by>x<bz> ... key=value ...
naming every kernel it launched with its count and launch configuration, and the copies, memsets,
syncs, streams, threads and processes it made. This script holds each trace (plain SQLite with the
tables of schema/schema.sql, read with Python's sqlite3 module: no sqlite3 CLI needed) against
that line and against what the sample is known to do, and prints PASS/FAIL per check and a final
"N passed, M failed" line; it exits 1 when a check failed.

    check_traces.py DIR          check the runs listed in DIR/runs.txt (written by run-samples.sh;
                                 the committed fixtures folder has one too)
    check_traces.py --self-test  build synthetic traces from schema/schema.sql as the samples
                                 would leave them, check that they pass, then break them one way at
                                 a time and check that the right check fails

DIR/runs.txt holds one line per run, tab-separated:
    label  sample  exit-status  untraced-exit-status  command  result-line  untraced-result-line
The traces of a run are DIR/<label>.sqlite or DIR/<label>-<pid>.sqlite (the .N suffix the library
adds instead of overwriting is accepted too). An exit status "skip: reason" marks a run that could
not be made here (e.g. no PyTorch); it is reported as SKIP and counts neither way.
"""
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import urllib.parse
from collections import Counter, defaultdict, namedtuple

# Enum values shared with the Nsight Systems export (schema/schema.sql).
COPY_HTOD, COPY_DTOH = 1, 2
MEM_PAGEABLE, MEM_PINNED, MEM_DEVICE = 0, 1, 2
SYNC_EVENT, SYNC_STREAM_WAIT, SYNC_STREAM, SYNC_CONTEXT = 1, 2, 3, 4
NVTX_MARK, NVTX_PUSHPOP, NVTX_STARTEND, NVTX_DOMAIN_CREATE = 34, 59, 60, 75
API_RUNTIME, API_DRIVER = 0, 1

Kernel = namedtuple("Kernel", "name demangled mangled start end stream corr gpid grid block graph_id "
                    "graph_node static_shared dynamic_shared")
Copy = namedtuple("Copy", "kind src dst bytes stream start end corr gpid")
Memset = namedtuple("Memset", "bytes value mem_kind stream graph_node start end corr gpid")
Sync = namedtuple("Sync", "type stream start end corr gpid")
Api = namedtuple("Api", "name start end gtid corr cls")
Nvtx = namedtuple("Nvtx", "type text start end gtid domain color category")
KernelSpec = namedtuple("KernelSpec", "name count grid block")


def pid_of(global_id):
    return None if global_id is None else (global_id >> 24) & 0xFFFFFF


def tid_of(global_tid):
    return None if global_tid is None else global_tid & 0xFFFFFF


def median(values):
    return statistics.median(values) if values else 0


class Trace:
    """One trace file, opened read-only; rows come back as named tuples with names resolved."""

    def __init__(self, path):
        self.path = path
        uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(path))
        self.db = sqlite3.connect(uri, uri=True)
        self.tables = {r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        self._strings = None
        self._cache = {}

    def close(self):
        self.db.close()

    def has(self, table):
        return table in self.tables

    def rows(self, table, columns):
        if not self.has(table):
            return []
        return self.db.execute("SELECT %s FROM %s" % (columns, table)).fetchall()

    def string(self, sid):
        if self._strings is None:
            self._strings = dict(self.rows("StringIds", "id, value"))
        return self._strings.get(sid)

    def meta(self, name):
        if not self.has("GPT_META"):
            return None
        row = self.db.execute("SELECT value FROM GPT_META WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def kernels(self):
        def make():
            out = []
            for r in self.rows("CUPTI_ACTIVITY_KIND_KERNEL",
                               "shortName, demangledName, mangledName, start, end, streamId, "
                               "correlationId, globalPid, gridX, gridY, gridZ, blockX, blockY, "
                               "blockZ, graphId, graphNodeId, staticSharedMemory, "
                               "dynamicSharedMemory"):
                out.append(Kernel(self.string(r[0]), self.string(r[1]), self.string(r[2]), r[3], r[4],
                                  r[5], r[6], r[7], tuple(r[8:11]), tuple(r[11:14]), r[14], r[15],
                                  r[16], r[17]))
            return out
        return self._cached("kernels", make)

    def copies(self):
        return self._cached("copies", lambda: [Copy(*r) for r in self.rows(
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "copyKind, srcKind, dstKind, bytes, streamId, start, end, correlationId, globalPid")])

    def memsets(self):
        return self._cached("memsets", lambda: [Memset(*r) for r in self.rows(
            "CUPTI_ACTIVITY_KIND_MEMSET",
            "bytes, value, memKind, streamId, graphNodeId, start, end, correlationId, globalPid")])

    def syncs(self):
        return self._cached("syncs", lambda: [Sync(*r) for r in self.rows(
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
            "syncType, streamId, start, end, correlationId, globalPid")])

    def api(self):
        def make():
            return [Api(self.string(r[0]) or "", r[1], r[2], r[3], r[4], r[5]) for r in self.rows(
                "CUPTI_ACTIVITY_KIND_RUNTIME", "nameId, start, end, globalTid, correlationId, eventClass")]
        return self._cached("api", make)

    def nvtx(self):
        def make():
            out = []
            for r in self.rows("NVTX_EVENTS", "eventType, text, textId, start, end, globalTid, "
                                              "domainId, color, category"):
                text = r[1] if r[1] is not None else self.string(r[2])
                out.append(Nvtx(r[0], text, r[3], r[4], r[5], r[6], r[7], r[8]))
            return out
        return self._cached("nvtx", make)

    def gpus(self):
        return self.rows("TARGET_INFO_GPU", "id, name, smCount")

    def pids(self):
        """Every process id the rows of this trace name."""
        pids = set()
        for k in self.kernels():
            pids.add(pid_of(k.gpid))
        for c in self.copies():
            pids.add(pid_of(c.gpid))
        for m in self.memsets():
            pids.add(pid_of(m.gpid))
        for s in self.syncs():
            pids.add(pid_of(s.gpid))
        for a in self.api():
            pids.add(pid_of(a.gtid))
        for n in self.nvtx():
            pids.add(pid_of(n.gtid))
        return pids

    def rows_without_pid(self):
        n = 0
        for table, column in (("CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "globalPid"),
                              ("CUPTI_ACTIVITY_KIND_MEMSET", "globalPid"),
                              ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "globalPid"),
                              ("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"), ("NVTX_EVENTS", "globalTid")):
            if self.has(table):
                n += self.db.execute("SELECT count(*) FROM %s WHERE %s IS NULL" % (table, column)).fetchone()[0]
        return n

    def launch_calls(self, prefix="cudaLaunchKernel"):
        return [a for a in self.api() if a.cls == API_RUNTIME and a.name.startswith(prefix)]


class Report:
    """Collects and prints check results."""

    def __init__(self, out=sys.stdout):
        self.out = out
        self.results = []	# (status, subject, what, detail)

    def _add(self, status, subject, what, detail):
        self.results.append((status, subject, what, detail))
        if self.out:
            line = "%s %s: %s" % (status, subject, what)
            if detail:
                line += " (%s)" % detail
            print(line, file=self.out)

    def check(self, subject, what, ok, detail=""):
        self._add("PASS" if ok else "FAIL", subject, what, detail)
        return ok

    def equal(self, subject, what, got, want):
        ok = got == want
        return self.check(subject, what, ok, str(got) if ok else "got %s, expected %s" % (got, want))

    def skip(self, subject, what, why):
        self._add("SKIP", subject, what, why)

    def info(self, subject, text):
        if self.out:
            print("info %s: %s" % (subject, text), file=self.out)

    def count(self, status):
        return sum(1 for r in self.results if r[0] == status)

    def failures(self):
        return [r for r in self.results if r[0] == "FAIL"]


class Run:
    """One line of runs.txt: a sample run, its result line and its trace files."""

    def __init__(self, folder, line):
        cols = line.rstrip("\n").split("\t")
        cols += [""] * (7 - len(cols))
        self.folder = folder
        self.label, self.sample, self.rc, self.bare_rc, self.command, self.line, self.bare_line = cols[:7]
        self.fields, self.kernels = parse_result(self.line, self.sample)
        self.bare_fields, _ = parse_result(self.bare_line, self.sample)
        pattern = re.compile(r"^%s(?:-(\d+))?(?:\.\d+)?\.sqlite$" % re.escape(self.label))
        self.traces = []	# (path, pid in the file name or None)
        for name in sorted(os.listdir(folder)):
            m = pattern.match(name)
            if m:
                self.traces.append((os.path.join(folder, name), int(m.group(1)) if m.group(1) else None))

    def field(self, name, default=None):
        return self.fields.get(name, default) if self.fields else default

    def num(self, name, default=0):
        value = self.field(name)
        return default if value is None else int(value)


def parse_result(line, sample):
    """Split '<sample>: ok k=v ...' into (fields, kernel specs); (None, []) when it is not one."""
    tokens = line.split()
    if len(tokens) < 2 or tokens[0] != sample + ":" or tokens[1] != "ok":
        return None, []
    fields, specs = {}, []
    for token in tokens[2:]:
        key, _, value = token.partition("=")
        if key == "kernel":
            name, count, grid, block = value.rsplit(":", 3)
            specs.append(KernelSpec(name, int(count), tuple(int(v) for v in grid.split("x")),
                                    tuple(int(v) for v in block.split("x"))))
        else:
            fields[key] = value
    return fields, specs


def describe_rc(rc):
    if rc == "124" or rc == "137":
        return "exit %s: timed out" % rc
    return "exit %s" % rc


# ---------------------------------------------------------------------------------------------------
# Checks shared by every trace

def check_trace_basics(rep, subject, trace, pid):
    """Metadata, dropped records, device facts, process id, timestamps, API correlation."""
    rep.check(subject, "GPT_META present", trace.has("GPT_META") and
              trace.db.execute("SELECT count(*) FROM GPT_META").fetchone()[0] > 0)
    dropped = trace.meta("cupti_dropped_records")
    rep.check(subject, "zero dropped records (GPT_META cupti_dropped_records)", dropped == "0",
              "cupti_dropped_records=%s" % dropped)
    gpus = trace.gpus()
    rep.check(subject, "TARGET_INFO_GPU names the device",
              len(gpus) >= 1 and all(g[1] and (g[2] or 0) > 0 for g in gpus),
              "; ".join("%s: %s, %s SMs" % g for g in gpus) or "no rows")
    if pid is not None:
        rep.equal(subject, "rows carry the process id (globalPid/globalTid >> 24)", sorted(
            p for p in trace.pids() if p is not None) or ["none"], [pid])
        rep.equal(subject, "rows without globalPid/globalTid", trace.rows_without_pid(), 0)
    events = trace.kernels() + trace.copies() + trace.memsets() + trace.syncs()
    bad = [e for e in events if e.start is None or e.end is None or e.start <= 0 or e.end < e.start]
    rep.equal(subject, "GPU records have start <= end", len(bad), 0)
    api_corr = {a.corr for a in trace.api()}
    orphans = Counter(type(e).__name__.lower() for e in events if e.corr not in api_corr)
    rep.check(subject, "every kernel, copy, memset and sync has its API call (correlationId)",
              not orphans, ", ".join("%d %s" % (n, k) for k, n in sorted(orphans.items())) or
              "%d records" % len(events))


def check_kernel_specs(rep, subject, trace, specs, launch_calls=None):
    """Exact count and launch configuration per kernel name, no other kernel, names demangled."""
    by_name = defaultdict(list)
    for k in trace.kernels():
        by_name[k.name].append(k)
    for spec in specs:
        rows = by_name.get(spec.name, [])
        rep.equal(subject, "%s launches" % spec.name, len(rows), spec.count)
        configs = sorted({(k.grid, k.block) for k in rows})
        if rows:
            rep.equal(subject, "%s launch configuration (grid, block)" % spec.name, configs,
                      [(spec.grid, spec.block)])
            mangled = "_Z%d%s" % (len(spec.name), spec.name)
            bad = [k for k in rows if not (k.demangled or "").startswith(spec.name + "(") or
                   not (k.mangled or "").startswith(mangled)]
            rep.check(subject, "%s names: demangled '%s(...)', mangled '%s...'" %
                      (spec.name, spec.name, mangled), not bad,
                      "%r / %r" % (bad[0].demangled, bad[0].mangled) if bad else rows[0].demangled)
    unexpected = sorted(set(by_name) - {s.name for s in specs}, key=str)
    rep.check(subject, "no kernel the sample did not launch", not unexpected, ", ".join(map(str, unexpected)))
    if launch_calls is None:
        launch_calls = sum(s.count for s in specs)
    rep.equal(subject, "cudaLaunchKernel API records", len(trace.launch_calls()), launch_calls)


def check_copies(rep, subject, trace, run, streams=None):
    """Copies by direction and memory kind as the result line declares them (absent means none)."""
    copies = trace.copies()
    kinds = {
        "pageable_htod": (COPY_HTOD, MEM_PAGEABLE, MEM_DEVICE, "HtoD from pageable memory (srcKind 0)"),
        "pageable_dtoh": (COPY_DTOH, MEM_DEVICE, MEM_PAGEABLE, "DtoH to pageable memory (dstKind 0)"),
        "pinned_htod": (COPY_HTOD, MEM_PINNED, MEM_DEVICE, "HtoD from pinned memory (srcKind 1)"),
        "pinned_dtoh": (COPY_DTOH, MEM_DEVICE, MEM_PINNED, "DtoH to pinned memory (dstKind 1)"),
    }
    total = 0
    for key, (kind, src, dst, what) in kinds.items():
        want = run.num(key)
        total += want
        got = sum(1 for c in copies if c.kind == kind and c.src == src and c.dst == dst)
        if want or got:
            rep.equal(subject, "copies %s" % what, got, want)
    rep.equal(subject, "copies in all", len(copies), total)
    if run.field("bytes") is not None and copies:
        rep.equal(subject, "bytes per copy", sorted({c.bytes for c in copies}), [run.num("bytes")])


def check_memsets_and_syncs(rep, subject, trace, run):
    memsets = trace.memsets()
    rep.equal(subject, "memsets", len(memsets), run.num("memsets"))
    syncs = Counter(s.type for s in trace.syncs())
    rep.equal(subject, "context synchronizations (syncType 4)", syncs.get(SYNC_CONTEXT, 0),
              run.num("device_syncs"))
    rep.equal(subject, "stream synchronizations (syncType 3)", syncs.get(SYNC_STREAM, 0),
              run.num("stream_syncs"))
    others = sum(n for t, n in syncs.items() if t not in (SYNC_CONTEXT, SYNC_STREAM))
    rep.equal(subject, "no event or stream-wait synchronizations", others, 0)


def check_one_process(rep, run, traces, launch_calls=None):
    """What every single-process sample shares; returns the trace, or None when there is not one."""
    rep.equal(run.label, "one trace file", len(traces), 1)
    if len(traces) != 1:
        return None
    trace = traces[0][1]
    check_trace_basics(rep, run.label, trace, run.num("pid", None))
    check_kernel_specs(rep, run.label, trace, run.kernels, launch_calls)
    check_copies(rep, run.label, trace, run)
    check_memsets_and_syncs(rep, run.label, trace, run)
    return trace


# ---------------------------------------------------------------------------------------------------
# Per-sample checks: each gets the run and its opened traces [(path, Trace)]

def check_launch_bound(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if trace:
        rep.equal(run.label, "kernels on one stream", len({k.stream for k in trace.kernels()}), 1)
        if run.bare_fields:
            rep.info(run.label, "us per launch: untraced %s, traced %s" % (
                run.bare_fields.get("us_per_launch"), run.field("us_per_launch")))


def check_copies_sample(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    memsets = trace.memsets()
    rep.check(run.label, "memset of the device buffer: value 0, all bytes, device memory",
              all(m.value == 0 and m.bytes == run.num("bytes") and m.mem_kind in (None, MEM_DEVICE)
                  for m in memsets), str(memsets[:1]))
    for kind in (MEM_PAGEABLE, MEM_PINNED):
        sel = [c for c in trace.copies() if MEM_DEVICE in (c.src, c.dst) and kind in (c.src, c.dst)]
        ns = sum(c.end - c.start for c in sel)
        rep.info(run.label, "%s copies: %d, %.2f GB/s" % (
            "pageable" if kind == MEM_PAGEABLE else "pinned", len(sel),
            sum(c.bytes for c in sel) / ns if ns else 0))


def check_idle_gaps(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    starts = sorted(k.start for k in trace.kernels())
    deltas = [b - a for a, b in zip(starts, starts[1:])]
    gap_ns = run.num("gap_us") * 1000
    if deltas:
        # The host issues each launch gap_us after the previous launch returned; a kernel on an idle
        # GPU starts within microseconds of its launch, so half the gap is a safe lower bound.
        rep.check(run.label, "consecutive kernels start at least half the host gap apart",
                  min(deltas) >= gap_ns / 2, "min %.1f us, gap %d us" % (min(deltas) / 1e3, gap_ns // 1000))


def check_sync_every_launch(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    launches = run.kernels[0].count if run.kernels else 0
    if run.field("mode") == "stream":
        streams = {k.stream for k in trace.kernels()}
        syncs = [s for s in trace.syncs() if s.type == SYNC_STREAM]
        rep.check(run.label, "stream synchronizations on the kernels' stream",
                  len(streams) == 1 and {s.stream for s in syncs} == streams,
                  "kernels on %s, syncs on %s" % (sorted(streams), sorted({s.stream for s in syncs})))
        rep.equal(run.label, "cudaStreamSynchronize API records",
                  len(trace.launch_calls("cudaStreamSynchronize")), launches)
    else:
        rep.equal(run.label, "cudaDeviceSynchronize API records",
                  len(trace.launch_calls("cudaDeviceSynchronize")), launches)
    # Each kernel is followed by its sync: the sync must end after the kernel it waited for.
    kernels = sorted(trace.kernels(), key=lambda k: k.start)
    syncs = sorted((s for s in trace.syncs() if s.type in (SYNC_STREAM, SYNC_CONTEXT)),
                   key=lambda s: s.start)
    if len(kernels) == len(syncs):
        late = sum(1 for k, s in zip(kernels, syncs) if s.end < k.end)
        rep.equal(run.label, "each sync ends after the kernel before it", late, 0)


def check_access(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    shared = defaultdict(set)
    for k in trace.kernels():
        shared[k.name].add((k.static_shared, k.dynamic_shared))
    for name, want in (("coalesced_copy", 0), ("strided_gather", 0), ("transpose_naive", 0),
                       ("transpose_tiled", 32 * 33 * 4)):
        if name in shared:
            rep.equal(run.label, "%s shared memory (static, dynamic)" % name, sorted(shared[name]),
                      [(want, 0)])
    for name in sorted(shared):
        rep.info(run.label, "%s median %.1f us" % (
            name, median([k.end - k.start for k in trace.kernels() if k.name == name]) / 1e3))


def check_streams(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    nstreams = run.num("streams")
    kernels = Counter(k.stream for k in trace.kernels())
    htod = Counter(c.stream for c in trace.copies() if c.kind == COPY_HTOD)
    dtoh = Counter(c.stream for c in trace.copies() if c.kind == COPY_DTOH)
    syncs = Counter(s.stream for s in trace.syncs() if s.type == SYNC_STREAM)
    rep.equal(run.label, "streams with kernels", len(kernels), nstreams)
    rep.equal(run.label, "kernels per stream", sorted(set(kernels.values())), [run.num("per_stream_kernels")])
    rep.equal(run.label, "HtoD copies per stream", sorted(htod.items()),
              sorted((s, run.num("per_stream_htod")) for s in kernels))
    rep.equal(run.label, "DtoH copies per stream", sorted(dtoh.items()),
              sorted((s, run.num("per_stream_dtoh")) for s in kernels))
    rep.equal(run.label, "one stream synchronize per stream", sorted(syncs.items()),
              sorted((s, 1) for s in kernels))
    # Round-robin issue over streams with async copies: the streams' work must overlap in time.
    spans = {}
    for k in trace.kernels():
        lo, hi = spans.get(k.stream, (k.start, k.end))
        spans[k.stream] = (min(lo, k.start), max(hi, k.end))
    if len(spans) > 1:
        overlap = max(lo for lo, _ in spans.values()) < min(hi for _, hi in spans.values())
        rep.check(run.label, "streams run concurrently (their busy spans overlap)", overlap)


def check_threads(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    nthreads, per_thread = run.num("threads"), run.num("per_thread_kernels")
    tids = sorted(int(t) for t in run.field("tids", "").split(",") if t)
    launches = trace.launch_calls()
    by_tid = Counter(tid_of(a.gtid) for a in launches)
    rep.equal(run.label, "launch API records per thread id", sorted(by_tid.items()),
              [(t, per_thread) for t in tids])
    by_stream = Counter(k.stream for k in trace.kernels())
    rep.equal(run.label, "kernels per stream", sorted(by_stream.values()), [per_thread] * nthreads)
    stream_of = {k.corr: k.stream for k in trace.kernels()}
    thread_streams = defaultdict(set)
    for a in launches:
        thread_streams[tid_of(a.gtid)].add(stream_of.get(a.corr))
    rep.check(run.label, "each thread's kernels on one stream of its own",
              all(len(s) == 1 for s in thread_streams.values()) and
              len(set().union(*thread_streams.values()) if thread_streams else set()) == nthreads,
              "; ".join("tid %s: streams %s" % (t, sorted(s, key=str)) for t, s in sorted(thread_streams.items())))


def check_fork_child(rep, run, traces):
    roles = {"parent": (run.num("pid", None), run.kernels),
             "CUDA child": (run.num("cuda_child", None), None),
             "fork+exec child": (run.num("exec_child", None), None)}
    plain = run.num("plain_child", None)
    spec = run.kernels[0] if run.kernels else None
    rep.equal(run.label, "one trace file per CUDA process", len(traces), 3)
    by_pid = {}
    for path, trace, file_pid in ((p, t, fp) for (p, t), (_, fp) in zip(traces, run.traces)):
        pids = {p for p in trace.pids() if p is not None}
        pid = pids.pop() if len(pids) == 1 else None
        by_pid[pid] = trace
        if file_pid is not None:
            rep.equal(run.label, "%s: file name carries the pid of its process" % os.path.basename(path),
                      file_pid, pid)
    rep.check(run.label, "no trace from the non-CUDA child (pid %s)" % plain, plain not in by_pid and
              not any(fp == plain for _, fp in run.traces))
    for role, count_key in (("parent", None), ("CUDA child", "cuda_child_kernels"),
                            ("fork+exec child", "exec_child_kernels")):
        pid = roles[role][0]
        subject = "%s[%s]" % (run.label, role)
        trace = by_pid.get(pid)
        if not rep.check(subject, "trace of pid %s found" % pid, trace is not None):
            continue
        check_trace_basics(rep, subject, trace, pid)
        specs = run.kernels if count_key is None else (
            [KernelSpec(spec.name, run.num(count_key), spec.grid, spec.block)] if spec else [])
        check_kernel_specs(rep, subject, trace, specs)
        check_copies(rep, subject, trace, run)
        check_memsets_and_syncs(rep, subject, trace, run)


def nested(inner, outer):
    return (inner.gtid == outer.gtid and outer.start <= inner.start and
            inner.end is not None and outer.end is not None and inner.end <= outer.end)


def launches_inside(trace, rng, runtime_only=True):
    """Launch API calls made by the range's thread inside it: runtime calls (cudaLaunch*) only by
    default, since a runtime launch may also leave a driver record (cuLaunch*) of its own."""
    prefixes = ("cudaLaunch",) if runtime_only else ("cudaLaunch", "cuLaunch")
    return sum(1 for a in trace.api() if a.name.startswith(prefixes) and
               (a.cls == API_RUNTIME or not runtime_only) and
               a.gtid == rng.gtid and rng.start <= a.start and a.end <= rng.end)


def check_nvtx(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    subject = run.label
    steps, per_range, in_domain = run.num("steps"), run.num("per_range"), run.num("domain_launches")
    events = trace.nvtx()
    by = defaultdict(list)
    for e in events:
        by[(e.type, e.text)].append(e)
    marks = by[(NVTX_MARK, "start_mark")]
    rep.equal(subject, "mark 'start_mark' (eventType 34)", len(marks), 1)
    outer = by[(NVTX_STARTEND, "all_steps")]
    rep.equal(subject, "start/end range 'all_steps' (eventType 60)", len(outer), 1)
    for name in ("step", "forward", "backward"):
        rep.equal(subject, "push/pop ranges '%s' (eventType 59)" % name, len(by[(NVTX_PUSHPOP, name)]), steps)
    step_ranges = by[(NVTX_PUSHPOP, "step")]
    for name in ("forward", "backward"):
        inner = by[(NVTX_PUSHPOP, name)]
        rep.check(subject, "each '%s' nested in a 'step' on the same thread" % name,
                  len(inner) == steps and all(any(nested(i, s) for s in step_ranges) for i in inner))
        counts = sorted({launches_inside(trace, r) for r in inner})
        rep.equal(subject, "launches inside each '%s'" % name, counts, [per_range] if inner else [])
    rep.equal(subject, "launches inside each 'step'", sorted({launches_inside(trace, r) for r in step_ranges}),
              [2 * per_range] if step_ranges else [])
    if len(outer) == 1:
        rep.check(subject, "'step' ranges inside 'all_steps'",
                  bool(step_ranges) and all(nested(s, outer[0]) for s in step_ranges))
        rep.equal(subject, "launches inside 'all_steps'", launches_inside(trace, outer[0]),
                  2 * steps * per_range)
    domains = by[(NVTX_DOMAIN_CREATE, run.field("domain"))]
    rep.equal(subject, "domain '%s' created (eventType 75)" % run.field("domain"), len(domains), 1)
    domain_id = domains[0].domain if domains else None
    rep.check(subject, "the domain has its own id", domain_id not in (None, 0), "domainId %s" % domain_id)
    reg = by[(NVTX_PUSHPOP, run.field("registered"))]
    if rep.equal(subject, "push/pop range with the registered string '%s'" % run.field("registered"),
                 len(reg), 1):
        r = reg[0]
        rep.equal(subject, "registered range in the domain", r.domain, domain_id)
        rep.equal(subject, "registered range colour (ARGB)", "0x%08X" % ((r.color or 0) & 0xFFFFFFFF),
                  run.field("color"))
        rep.equal(subject, "registered range category", r.category, run.num("category"))
        rep.equal(subject, "launches inside the registered range", launches_inside(trace, r), in_domain)
    default = [e for e in events if e.type in (NVTX_PUSHPOP, NVTX_STARTEND, NVTX_MARK) and
               e.text in ("step", "forward", "backward", "all_steps", "start_mark")]
    rep.check(subject, "default-domain events have domainId 0 or NULL",
              all(e.domain in (None, 0) for e in default))


def check_graph(rep, run, traces):
    # Launch calls made while the stream is captured are real API calls too (CUPTI records them, as
    # nsys does): one eager launch plus one per kernel node captured.
    trace = check_one_process(rep, run, traces, launch_calls=run.num("eager_kernels") + 3)
    if not trace:
        return
    replays = run.num("replays")
    kernels = trace.kernels()
    in_graph = [k for k in kernels if k.graph_id not in (None, 0)]
    eager = [k for k in kernels if k.graph_id in (None, 0)]
    rep.equal(run.label, "kernels with a graph id", len(in_graph), 3 * replays)
    rep.equal(run.label, "kernels without a graph id (the eager launch)",
              [k.name for k in eager], ["add_one"] * run.num("eager_kernels"))
    rep.equal(run.label, "graph kernels share one graph id", len({k.graph_id for k in in_graph}),
              1 if replays else 0)
    rep.equal(run.label, "graph kernels come from three graph nodes",
              len({(k.name, k.graph_node) for k in in_graph if k.graph_node is not None}),
              3 if replays else 0)
    rep.equal(run.label, "cudaGraphLaunch API records", len(trace.launch_calls("cudaGraphLaunch")), replays)
    graph_memsets = [m for m in trace.memsets() if m.graph_node is not None]
    rep.equal(run.label, "memsets from graph nodes (graphNodeId set)", len(graph_memsets),
              run.num("graph_memsets"))
    rep.equal(run.label, "memset sizes", sorted({m.bytes for m in trace.memsets()}), [run.num("bytes")])


def sm_count(trace):
    return min((g[2] or 0) for g in trace.gpus()) if trace.gpus() else 0


def check_small_grid(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if trace and run.kernels:
        sms = sm_count(trace)
        rep.check(run.label, "premise: grid smaller than the SM count", run.kernels[0].grid[0] < sms,
                  "grid %d, %d SMs" % (run.kernels[0].grid[0], sms))


def check_well_written(rep, run, traces):
    trace = check_one_process(rep, run, traces)
    if not trace:
        return
    sms = sm_count(trace)
    rep.check(run.label, "premise: every grid covers the SMs many times",
              all(s.grid[0] >= 4 * sms for s in run.kernels), "%d SMs" % sms)
    kernel_ns = median([k.end - k.start for k in trace.kernels()])
    launch_ns = median([a.end - a.start for a in trace.launch_calls()])
    rep.check(run.label, "premise: kernels run much longer than their launch call",
              kernel_ns >= 5 * launch_ns, "median kernel %.1f us, launch %.1f us" % (kernel_ns / 1e3, launch_ns / 1e3))
    # The steady loop: kernels after each kernel's first launch (which also loads its module, lazily,
    # and takes as long as the host makes it). The copies before and after the loop and the first
    # launches depend on how busy the host is (92.7% busy from first to last operation was seen on
    # a busier host); a loop of queued kernels keeps the GPU busy on any host.
    seen, ops = set(), []
    for k in sorted(trace.kernels(), key=lambda k: k.start):
        if k.name in seen:
            ops.append((k.start, k.end))
        seen.add(k.name)
    if ops:
        busy, last_end = 0, ops[0][0]
        for start, end in ops:
            busy += max(0, end - max(start, last_end))
            last_end = max(last_end, end)
        span = last_end - ops[0][0]
        rep.check(run.label, "premise: the GPU is busy at least 95% of the steady loop (kernels after their first launch)",
                  span > 0 and busy >= 0.95 * span, "%.1f%% of %.3f ms" % (100.0 * busy / span if span else 0, span / 1e6))


def check_slow_kernel(rep, run, traces):
    check_one_process(rep, run, traces)


def check_slow_kernel_pair(rep, runs, opened):
    """The CI-diff premise: a --slow run is ~20% slower on the same kernel, a repeat run the same."""
    base = [r for r in runs if r.sample == "slow_kernel" and r.field("slow") == "0"]
    slow = [r for r in runs if r.sample == "slow_kernel" and r.field("slow") == "1"]

    def med(r):
        traces = opened.get(r.label, [])
        return median([k.end - k.start for k in traces[0][1].kernels()]) if len(traces) == 1 else 0

    if not base or not med(base[0]):
        return
    ref = med(base[0])
    for r in base[1:]:
        ratio = med(r) / ref
        rep.check(r.label, "median fma_loop time within 10%% of %s" % base[0].label, 0.9 <= ratio <= 1.1,
                  "ratio %.3f" % ratio)
    for r in slow:
        ratio = med(r) / ref
        rep.check(r.label, "--slow makes the median fma_loop time 10-40%% longer than %s" % base[0].label,
                  1.1 <= ratio <= 1.4, "ratio %.3f" % ratio)
        configs = {(k.grid, k.block) for _, t in opened.get(r.label, []) + opened.get(base[0].label, [])
                   for k in t.kernels()}
        rep.equal(r.label, "same launch configuration as the base run", len(configs), 1)


def check_train_small(rep, run, traces):
    rep.equal(run.label, "one trace file", len(traces), 1)
    if len(traces) != 1:
        return
    trace = traces[0][1]
    subject = run.label
    steps = run.num("steps")
    check_trace_basics(rep, subject, trace, run.num("pid", None))
    kernels = trace.kernels()
    rep.check(subject, "kernels recorded", len(kernels) >= 3 * steps, "%d kernels" % len(kernels))
    rep.check(subject, "kernel names resolved", all(k.name and k.demangled for k in kernels))
    copies = trace.copies()
    htod = [c for c in copies if c.kind == COPY_HTOD]
    dtoh = [c for c in copies if c.kind == COPY_DTOH]
    rep.check(subject, "HtoD copies (two batches per step)", len(htod) >= 2 * steps, "%d" % len(htod))
    rep.check(subject, "DtoH copies (loss.item() per step)", len(dtoh) >= steps, "%d" % len(dtoh))
    by = defaultdict(list)
    for e in trace.nvtx():
        if e.type == NVTX_PUSHPOP:
            by[e.text].append(e)
    rep.equal(subject, "push/pop ranges 'train_step'", len(by["train_step"]), steps)
    for name in ("forward", "backward", "optimizer"):
        inner = by[name]
        rep.equal(subject, "push/pop ranges '%s'" % name, len(inner), steps)
        rep.check(subject, "each '%s' nested in a 'train_step'" % name,
                  bool(inner) and all(any(nested(i, s) for s in by["train_step"]) for i in inner))
    rep.check(subject, "every 'forward' range launched kernels",
              bool(by["forward"]) and all(launches_inside(trace, r, runtime_only=False) > 0 for r in by["forward"]))
    rep.info(subject, "%d kernels (%d distinct), %d copies, %d API records, %d NVTX events" % (
        len(kernels), len({k.name for k in kernels}), len(copies), len(trace.api()), len(trace.nvtx())))


SAMPLE_CHECKS = {
    "launch_bound": check_launch_bound,
    "copies": check_copies_sample,
    "idle_gaps": check_idle_gaps,
    "sync_every_launch": check_sync_every_launch,
    "access": check_access,
    "streams": check_streams,
    "threads": check_threads,
    "fork_child": check_fork_child,
    "nvtx": check_nvtx,
    "graph": check_graph,
    "small_grid": check_small_grid,
    "well_written": check_well_written,
    "slow_kernel": check_slow_kernel,
    "train_small": check_train_small,
}


def check_folder(folder, rep):
    manifest = os.path.join(folder, "runs.txt")
    if not os.path.exists(manifest):
        rep.check(folder, "runs.txt present", False, "no %s" % manifest)
        return
    with open(manifest) as f:
        runs = [Run(folder, line) for line in f if line.strip() and not line.startswith("#")]
    opened = {}
    for run in runs:
        if run.rc.startswith("skip"):
            rep.skip(run.label, "run", run.rc.partition(":")[2].strip() or "skipped")
            continue
        if run.bare_rc not in ("", "-"):
            rep.check(run.label, "sample exits 0 untraced", run.bare_rc == "0", describe_rc(run.bare_rc))
        rep.check(run.label, "gpt-trace run exits 0 (the sample's status)", run.rc == "0", describe_rc(run.rc))
        if not rep.check(run.label, "result line '%s: ok ...'" % run.sample, run.fields is not None,
                         run.line or "none"):
            continue
        traces = []
        for path, _ in run.traces:
            try:
                traces.append((path, Trace(path)))
            except sqlite3.Error as e:
                rep.check(run.label, "%s opens" % os.path.basename(path), False, str(e))
        opened[run.label] = traces
        check = SAMPLE_CHECKS.get(run.sample)
        if not rep.check(run.label, "known sample '%s'" % run.sample, check is not None):
            continue
        try:
            check(rep, run, traces)
        except sqlite3.Error as e:
            rep.check(run.label, "trace readable", False, str(e))
    check_slow_kernel_pair(rep, runs, opened)
    for traces in opened.values():
        for _, t in traces:
            t.close()


# ---------------------------------------------------------------------------------------------------
# Self-test: synthetic traces, made from schema/schema.sql, as the samples should leave them

class FakeTrace:
    """Writes a trace the way the collector should: API records on the host clock, GPU records on
    a device timeline that starts each operation no earlier than its launch."""

    def __init__(self, path, pid, schema, tid=None):
        self.db = sqlite3.connect(path)
        self.db.executescript(schema)
        self.pid, self.tid = pid, tid or pid
        self.host, self.gpu, self.corr = 1000000, 0, 0
        self.strings = {}
        self.open_ranges = []

    def sid(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.db.execute("INSERT INTO StringIds VALUES (?, ?)", (self.strings[text], text))
        return self.strings[text]

    def gtid(self, tid=None):
        return self.pid << 24 | (tid or self.tid)

    def api(self, name, dur=1500, tid=None, cls=API_RUNTIME):
        self.corr += 1
        start, self.host = self.host, self.host + dur
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
                        "correlationId, nameId, returnValue) VALUES (?, ?, ?, ?, ?, ?, 0)",
                        (start, self.host, cls, self.gtid(tid), self.corr, self.sid(name)))
        self.host += 200
        return self.corr, start

    def gpu_span(self, issued, dur):
        start = max(issued + 800, self.gpu)
        self.gpu = start + dur
        return start, self.gpu

    def kernel(self, name, sig, grid, block, stream=7, dur=3000, tid=None, graph=None, node=None,
               corr=None, shared=0):
        if corr is None:
            corr, issued = self.api("cudaLaunchKernel_v7000", tid=tid)
        else:
            issued = self.host
        start, end = self.gpu_span(issued, dur)
        self.db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
            "correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread, "
            "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
            "localMemoryPerThread, localMemoryTotal, gridId, graphNodeId, graphId) VALUES "
            "(?, ?, 0, 1, ?, ?, ?, ?, ?, ?, 16, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, ?)",
            (start, end, stream, corr, self.pid << 24, self.sid("%s(%s)" % (name, sig)),
             self.sid(name), self.sid("_Z%d%s%s" % (len(name), name, "Pfm")), *grid, *block, shared,
             self.corr, node, graph))

    def copy(self, kind, src, dst, nbytes, stream=7, sync=True, tid=None):
        corr, issued = self.api("cudaMemcpy_v3020" if sync else "cudaMemcpyAsync_v3020", tid=tid)
        start, end = self.gpu_span(issued, 1000 + nbytes // 20)
        if sync:
            self.host = max(self.host, end + 500)
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                        "streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES "
                        "(?, ?, 0, 1, ?, ?, ?, ?, ?, ?, ?)",
                        (start, end, stream, corr, self.pid << 24, nbytes, kind, src, dst))

    def memset(self, nbytes, stream=7, node=None, corr=None, tid=None):
        if corr is None:
            corr, issued = self.api("cudaMemset_v3020", tid=tid)
        else:
            issued = self.host
        start, end = self.gpu_span(issued, 1500)
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
                        "streamId, correlationId, globalPid, value, bytes, graphNodeId, memKind) VALUES "
                        "(?, ?, 0, 1, ?, ?, ?, 0, ?, ?, 2)",
                        (start, end, stream, corr, self.pid << 24, nbytes, node))

    def sync(self, sync_type, stream=7, tid=None):
        name = "cudaDeviceSynchronize_v3020" if sync_type == SYNC_CONTEXT else "cudaStreamSynchronize_v3020"
        corr, start = self.api(name, dur=500, tid=tid)
        self.host = max(self.host, self.gpu + 500)
        self.db.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = ? WHERE correlationId = ?",
                        (self.host, corr))
        self.db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, "
                        "contextId, streamId, correlationId, globalPid, syncType, eventId) VALUES "
                        "(?, ?, 0, 1, ?, ?, ?, ?, 4294967295)",
                        (start, self.host, stream, corr, self.pid << 24, sync_type))
        self.host += 200

    def spin(self, ns):
        self.host += ns

    def nvtx(self, etype, text, start, end=None, domain=0, registered=False, color=None, category=None):
        self.db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid, "
                        "domainId, color, category) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (start, end, etype, None if registered else text,
                         self.sid(text) if registered else None, self.gtid(), domain, color, category))

    def push(self):
        self.host += 100
        return self.host

    def finish(self, dropped=0):
        self.db.executemany("INSERT INTO GPT_META VALUES (?, ?)", [
            ("schema_version", "1"), ("pid", str(self.pid)), ("cupti_dropped_records", str(dropped))])
        self.db.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, computeMajor, computeMinor) "
                        "VALUES (0, 0, 'NVIDIA H200', 132, 9, 0)")
        self.db.commit()
        self.db.close()


def spec_text(name, count, grid, block):
    return "kernel=%s:%d:%s:%s" % (name, count, "x".join(map(str, grid)), "x".join(map(str, block)))


class FakeFolder:
    """A work folder as run-samples.sh leaves it, with fake runs of every sample."""

    def __init__(self, folder, schema):
        self.folder, self.schema = folder, schema
        self.next_pid = 4000
        self.lines = []

    def trace(self, label, pid=None):
        pid = pid or self.new_pid()
        return FakeTrace(os.path.join(self.folder, "%s-%d.sqlite" % (label, pid)), pid, self.schema), pid

    def new_pid(self):
        self.next_pid += 7
        return self.next_pid

    def add(self, label, sample, pid, fields, rc="0", bare_rc="0"):
        line = "%s: ok pid=%d %s" % (sample, pid, fields)
        self.lines.append("\t".join([label, sample, rc, bare_rc, "build/bin/" + sample, line, line]))

    def write_manifest(self):
        with open(os.path.join(self.folder, "runs.txt"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


ADD_ONE = ("add_one", "float *, unsigned long")


def fake_launch_bound(ff, label, n):
    t, pid = ff.trace(label)
    for _ in range(n):
        t.kernel("empty_kernel", "", (1, 1, 1), (1, 1, 1), dur=1000)
    t.sync(SYNC_CONTEXT)
    t.finish()
    ff.add(label, "launch_bound", pid, spec_text("empty_kernel", n, (1, 1, 1), (1, 1, 1)) +
           " device_syncs=1 us_per_launch=2.9")


def fake_copies(ff, k=3, nbytes=4096):
    t, pid = ff.trace("copies")
    t.memset(nbytes)
    for kind, src, dst, sync in ((COPY_HTOD, MEM_PAGEABLE, MEM_DEVICE, True),
                                 (COPY_DTOH, MEM_DEVICE, MEM_PAGEABLE, True),
                                 (COPY_HTOD, MEM_PINNED, MEM_DEVICE, False),
                                 (COPY_DTOH, MEM_DEVICE, MEM_PINNED, False)):
        for _ in range(k):
            t.copy(kind, src, dst, nbytes, stream=7 if sync else 13, sync=sync)
    t.sync(SYNC_STREAM, stream=13)
    t.finish()
    ff.add("copies", "copies", pid, "bytes=%d pageable_htod=%d pageable_dtoh=%d pinned_htod=%d "
           "pinned_dtoh=%d memsets=1 stream_syncs=1" % (nbytes, k, k, k, k))


def fake_idle_gaps(ff, n=10, gap_us=200):
    t, pid = ff.trace("idle_gaps")
    t.memset(1024)
    for i in range(n):
        if i:
            t.spin(gap_us * 1000)
        t.kernel(*ADD_ONE, (1, 1, 1), (256, 1, 1))
    t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 1024)
    t.finish()
    ff.add("idle_gaps", "idle_gaps", pid, spec_text("add_one", n, (1, 1, 1), (256, 1, 1)) +
           " gap_us=%d memsets=1 pinned_dtoh=1 bytes=1024" % gap_us)


def fake_sync_every_launch(ff, stream_mode, n=20):
    label = "sync_every_launch_stream" if stream_mode else "sync_every_launch"
    t, pid = ff.trace(label)
    stream = 13 if stream_mode else 7
    t.memset(1024)
    for _ in range(n):
        t.kernel(*ADD_ONE, (4, 1, 1), (256, 1, 1), stream=stream)
        t.sync(SYNC_STREAM if stream_mode else SYNC_CONTEXT, stream=stream)
    t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 1024)
    t.finish()
    ff.add(label, "sync_every_launch", pid, spec_text("add_one", n, (4, 1, 1), (256, 1, 1)) +
           " mode=%s %s=%d memsets=1 pinned_dtoh=1 bytes=1024" % (
               "stream" if stream_mode else "device", "stream_syncs" if stream_mode else "device_syncs", n))


def fake_access(ff, iters=3):
    t, pid = ff.trace("access")
    t.copy(COPY_HTOD, MEM_PINNED, MEM_DEVICE, 4096)
    kernels = [("coalesced_copy", (64, 1, 1), (256, 1, 1), 0), ("strided_gather", (64, 1, 1), (256, 1, 1), 0),
               ("transpose_naive", (4, 4, 1), (32, 8, 1), 0), ("transpose_tiled", (4, 4, 1), (32, 8, 1), 4224)]
    for name, grid, block, shared in kernels:
        t.memset(4096)
        for _ in range(iters):
            t.kernel(name, "const float *, float *, unsigned long", grid, block, shared=shared)
        t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 4096)
    t.finish()
    ff.add("access", "access", pid, " ".join(spec_text(n, iters, g, b) for n, g, b, _ in kernels) +
           " elements=16384 rows=128 cols=128 pinned_htod=1 pinned_dtoh=4 bytes=4096 memsets=4")


def fake_streams(ff, nstreams=3, rounds=4):
    t, pid = ff.trace("streams")
    streams = [13 + s for s in range(nstreams)]
    for _ in range(rounds):
        for s in streams:
            t.copy(COPY_HTOD, MEM_PINNED, MEM_DEVICE, 4096, stream=s, sync=False)
            t.kernel(*ADD_ONE, (16, 1, 1), (256, 1, 1), stream=s)
            t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 4096, stream=s, sync=False)
    # Streams overlap: rewrite each stream's kernels onto a shared window.
    t.db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start - (streamId - 13) * 100000")
    for s in streams:
        t.sync(SYNC_STREAM, stream=s)
    t.finish()
    ff.add("streams", "streams", pid, spec_text("add_one", nstreams * rounds, (16, 1, 1), (256, 1, 1)) +
           " streams=%d per_stream_kernels=%d per_stream_htod=%d per_stream_dtoh=%d pinned_htod=%d "
           "pinned_dtoh=%d bytes=4096 stream_syncs=%d" % (nstreams, rounds, rounds, rounds,
                                                          nstreams * rounds, nstreams * rounds, nstreams))


def fake_threads(ff, nthreads=3, launches=5):
    t, pid = ff.trace("threads")
    tids = [pid + 1 + i for i in range(nthreads)]
    for i, tid in enumerate(tids):
        t.memset(1024, stream=20 + i, tid=tid)
    for _ in range(launches):
        for i, tid in enumerate(tids):
            t.kernel(*ADD_ONE, (4, 1, 1), (256, 1, 1), stream=20 + i, tid=tid)
    for i, tid in enumerate(tids):
        t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 1024, stream=20 + i, sync=False, tid=tid)
        t.sync(SYNC_STREAM, stream=20 + i, tid=tid)
    t.finish()
    ff.add("threads", "threads", pid, spec_text("add_one", nthreads * launches, (4, 1, 1), (256, 1, 1)) +
           " threads=%d per_thread_kernels=%d tids=%s memsets=%d pinned_dtoh=%d bytes=1024 stream_syncs=%d" % (
               nthreads, launches, ",".join(map(str, tids)), nthreads, nthreads, nthreads))


def fake_fork_child(ff, counts=(3, 5, 7)):
    pids = [ff.new_pid() for _ in range(4)]	# parent, CUDA child, plain child, exec child
    for pid, n in ((pids[0], counts[0]), (pids[1], counts[1]), (pids[3], counts[2])):
        t, _ = ff.trace("fork_child", pid)
        t.memset(1024)
        for _ in range(n):
            t.kernel(*ADD_ONE, (4, 1, 1), (256, 1, 1))
        t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 1024)
        t.finish()
    ff.add("fork_child", "fork_child", pids[0], "cuda_child=%d plain_child=%d exec_child=%d %s "
           "cuda_child_kernels=%d exec_child_kernels=%d memsets=1 pinned_dtoh=1 bytes=1024" % (
               pids[1], pids[2], pids[3], spec_text("add_one", counts[0], (4, 1, 1), (256, 1, 1)),
               counts[1], counts[2]))


def fake_nvtx(ff, steps=3, per_range=4, in_domain=5):
    t, pid = ff.trace("nvtx")
    t.memset(1024)
    t.nvtx(NVTX_MARK, "start_mark", t.push())
    all_start = t.push()
    for _ in range(steps):
        step_start = t.push()
        for name in ("forward", "backward"):
            start = t.push()
            for _ in range(per_range):
                t.kernel(*ADD_ONE, (4, 1, 1), (256, 1, 1))
            t.nvtx(NVTX_PUSHPOP, name, start, t.push())
        t.nvtx(NVTX_PUSHPOP, "step", step_start, t.push())
    t.nvtx(NVTX_STARTEND, "all_steps", all_start, t.push())
    t.nvtx(NVTX_DOMAIN_CREATE, "gpt_samples", t.push(), domain=1)
    start = t.push()
    for _ in range(in_domain):
        t.kernel(*ADD_ONE, (4, 1, 1), (256, 1, 1))
    t.nvtx(NVTX_PUSHPOP, "registered_range", start, t.push(), domain=1, registered=True,
           color=0xFF76B900 - (1 << 32), category=7)
    t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 1024)
    t.finish()
    total = 2 * steps * per_range + in_domain
    ff.add("nvtx", "nvtx", pid, spec_text("add_one", total, (4, 1, 1), (256, 1, 1)) +
           " steps=%d per_range=%d domain_launches=%d domain=gpt_samples registered=registered_range "
           "color=0xFF76B900 category=7 memsets=1 pinned_dtoh=1 bytes=1024" % (steps, per_range, in_domain))


def fake_graph(ff, replays=4):
    t, pid = ff.trace("graph")
    t.memset(4096, stream=13)
    t.kernel(*ADD_ONE, (16, 1, 1), (256, 1, 1), stream=13)
    for _ in range(3):  # the launches captured into the graph: API calls without GPU work
        t.api("cudaLaunchKernel_v7000")
    for _ in range(replays):
        corr, _ = t.api("cudaGraphLaunch_v10000")
        t.memset(4096, stream=13, node=101, corr=corr)
        t.kernel(*ADD_ONE, (16, 1, 1), (256, 1, 1), stream=13, graph=9, node=102, corr=corr)
        t.kernel("scale", "float *, float, unsigned long", (16, 1, 1), (256, 1, 1), stream=13, graph=9,
                 node=103, corr=corr)
        t.kernel("saxpy", "float, const float *, float *, unsigned long", (16, 1, 1), (256, 1, 1),
                 stream=13, graph=9, node=104, corr=corr)
    t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 4096, stream=13, sync=False)
    t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 4096, stream=13, sync=False)
    t.sync(SYNC_STREAM, stream=13)
    t.finish()
    ff.add("graph", "graph", pid, " ".join([spec_text("add_one", replays + 1, (16, 1, 1), (256, 1, 1)),
                                            spec_text("scale", replays, (16, 1, 1), (256, 1, 1)),
                                            spec_text("saxpy", replays, (16, 1, 1), (256, 1, 1))]) +
           " replays=%d eager_kernels=1 graph_memsets=%d memsets=%d bytes=4096 pinned_dtoh=2 stream_syncs=1" % (
               replays, replays, replays + 1))


def fake_small_grid_or_well_written(ff, sample, grid, names, iters=4):
    t, pid = ff.trace(sample)
    t.copy(COPY_HTOD, MEM_PINNED, MEM_DEVICE, 8192, stream=13, sync=False)
    t.copy(COPY_HTOD, MEM_PINNED, MEM_DEVICE, 8192, stream=13, sync=False)
    for _ in range(iters):
        for name in names:
            t.kernel(name, "float, const float *, float *, unsigned long", (grid, 1, 1), (256, 1, 1),
                     stream=13, dur=40000)
    t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 8192, stream=13, sync=False)
    t.sync(SYNC_STREAM, stream=13)
    t.finish()
    ff.add(sample, sample, pid, " ".join(spec_text(n, iters, (grid, 1, 1), (256, 1, 1)) for n in names) +
           " pinned_htod=2 pinned_dtoh=1 bytes=8192 stream_syncs=1")


def fake_slow_kernel(ff, label, slow, n=30):
    t, pid = ff.trace(label)
    t.copy(COPY_HTOD, MEM_PINNED, MEM_DEVICE, 4096)
    for _ in range(n):
        t.kernel("fma_loop", "float *, float, float, int, unsigned long", (64, 1, 1), (256, 1, 1),
                 dur=36000 if slow else 30000)
    t.sync(SYNC_CONTEXT)
    t.copy(COPY_DTOH, MEM_DEVICE, MEM_PINNED, 4096)
    t.finish()
    ff.add(label, "slow_kernel", pid, spec_text("fma_loop", n, (64, 1, 1), (256, 1, 1)) +
           " work=%d slow=%d device_syncs=1 pinned_htod=1 pinned_dtoh=1 bytes=4096" % (300 if slow else 250, slow))


def fake_train_small(ff, steps=4):
    t, pid = ff.trace("train_small")
    for _ in range(steps):
        step = t.push()
        t.copy(COPY_HTOD, MEM_PAGEABLE, MEM_DEVICE, 4096, sync=False)
        t.copy(COPY_HTOD, MEM_PAGEABLE, MEM_DEVICE, 512, sync=False)
        for name, count in (("forward", 3), ("backward", 4), ("optimizer", 2)):
            start = t.push()
            for i in range(count):
                t.kernel("%s_kernel_%d" % (name, i), "int", (8, 1, 1), (128, 1, 1))
            t.nvtx(NVTX_PUSHPOP, name, start, t.push())
        t.copy(COPY_DTOH, MEM_DEVICE, MEM_PAGEABLE, 4)
        t.nvtx(NVTX_PUSHPOP, "train_step", step, t.push())
    t.finish()
    ff.add("train_small", "train_small", pid, "steps=%d first_loss=2.3 last_loss=2.1" % steps)


def make_fake_folder(folder, schema):
    ff = FakeFolder(folder, schema)
    fake_launch_bound(ff, "launch_bound", 2000)
    fake_copies(ff)
    fake_idle_gaps(ff)
    fake_sync_every_launch(ff, False)
    fake_sync_every_launch(ff, True)
    fake_access(ff)
    fake_streams(ff)
    fake_threads(ff)
    fake_fork_child(ff)
    fake_nvtx(ff)
    fake_graph(ff)
    fake_small_grid_or_well_written(ff, "small_grid", 8, ["saxpy_grid_stride"])
    fake_small_grid_or_well_written(ff, "well_written", 4096, ["scale", "saxpy"])
    fake_slow_kernel(ff, "slow_kernel_base", 0)
    fake_slow_kernel(ff, "slow_kernel_base2", 0)
    fake_slow_kernel(ff, "slow_kernel_slow", 1)
    fake_train_small(ff)
    ff.lines.append("\t".join(["train_skipped", "train_small", "skip: no PyTorch", "-", "x", "", ""]))
    ff.write_manifest()


def mutation(label, sql):
    """A mutation that runs SQL on every trace of one run."""
    def mutate(folder):
        pattern = re.compile(r"^%s-\d+\.sqlite$" % re.escape(label))
        for name in os.listdir(folder):
            if pattern.match(name):
                db = sqlite3.connect(os.path.join(folder, name))
                db.executescript(sql)
                db.commit()
                db.close()
    return mutate


def edit_manifest(label, column, value):
    def mutate(folder):
        path = os.path.join(folder, "runs.txt")
        with open(path) as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            cols = line.split("\t")
            if cols[0] == label:
                cols[column] = value(cols[column]) if callable(value) else value
                lines[i] = "\t".join(cols)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
    return mutate


def add_plain_child_trace(folder):
    with open(os.path.join(folder, "runs.txt")) as f:
        line = next(l for l in f if l.startswith("fork_child\t"))
    plain = int(re.search(r"plain_child=(\d+)", line).group(1))
    shutil.copy(os.path.join(folder, next(n for n in sorted(os.listdir(folder)) if n.startswith("fork_child-"))),
                os.path.join(folder, "fork_child-%d.sqlite" % plain))


def remove_one(prefix):
    def mutate(folder):
        names = sorted(n for n in os.listdir(folder) if n.startswith(prefix))
        os.remove(os.path.join(folder, names[-1]))
    return mutate


K = "CUPTI_ACTIVITY_KIND_KERNEL"
KERNEL_OF = "(SELECT id FROM StringIds WHERE value = '%s')"
# (what is broken, the mutation, a text the resulting FAIL line must contain)
MUTATIONS = [
    ("a lost kernel", mutation("launch_bound", "DELETE FROM %s WHERE rowid = 5" % K), "empty_kernel launches"),
    ("dropped records", mutation("launch_bound", "UPDATE GPT_META SET value = '12' WHERE name = "
                                 "'cupti_dropped_records'"), "zero dropped records"),
    ("no dropped-record count", mutation("idle_gaps", "DELETE FROM GPT_META WHERE name = "
                                         "'cupti_dropped_records'"), "zero dropped records"),
    ("launch API records missing", mutation("launch_bound", "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                                            "WHERE rowid % 2 = 0"), "API call"),
    ("a pageable copy marked pinned", mutation("copies", "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 1 "
                                               "WHERE rowid = 1"), "HtoD from pageable"),
    ("a pinned copy marked pageable", mutation("copies", "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET dstKind = 0 "
                                               "WHERE copyKind = 2 AND dstKind = 1"), "DtoH to pinned"),
    ("a copy's size", mutation("copies", "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 7 WHERE rowid = 2"),
     "bytes per copy"),
    ("no device facts", mutation("copies", "DELETE FROM TARGET_INFO_GPU"), "TARGET_INFO_GPU"),
    ("gaps lost", mutation("idle_gaps", "UPDATE %s SET start = rowid * 10000, end = rowid * 10000 + 3000" % K),
     "half the host gap"),
    ("syncs lost", mutation("sync_every_launch", "DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION "
                                                 "WHERE rowid > 3"), "syncType 4"),
    ("wrong sync type", mutation("sync_every_launch_stream", "UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION "
                                                             "SET syncType = 4"), "syncType 3"),
    ("sync on the wrong stream", mutation("sync_every_launch_stream", "UPDATE "
                                          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET streamId = 99"),
     "kernels' stream"),
    ("wrong grid", mutation("access", "UPDATE %s SET gridX = 3 WHERE rowid = 5" % K), "launch configuration"),
    ("shared memory lost", mutation("access", "UPDATE %s SET staticSharedMemory = 0" % K), "shared memory"),
    ("names not demangled", mutation("access", "UPDATE StringIds SET value = 'coalesced_copy' "
                                     "WHERE value LIKE 'coalesced_copy(%'"), "demangled"),
    ("a kernel on the wrong stream", mutation("streams", "UPDATE %s SET streamId = 14 WHERE streamId = 13 "
                                              "AND rowid IN (SELECT rowid FROM %s WHERE streamId = 13 LIMIT 1)"
                                              % (K, K)), "kernels per stream"),
    ("copies on one stream", mutation("streams", "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = 13"),
     "copies per stream"),
    ("thread ids lost", mutation("threads", "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = "
                                 "(globalTid >> 24) << 24 | 1"), "per thread id"),
    ("wrong process id", mutation("graph", "UPDATE %s SET globalPid = 77 << 24 WHERE rowid = 1" % K),
     "process id"),
    ("graph id lost", mutation("graph", "UPDATE %s SET graphId = NULL WHERE rowid = 4" % K), "graph id"),
    ("graph memset node lost", mutation("graph", "UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET graphNodeId = NULL"),
     "graph nodes"),
    ("a trace for the non-CUDA child", add_plain_child_trace, "non-CUDA child"),
    ("the CUDA child's trace missing", remove_one("fork_child-"), "trace file per CUDA process"),
    ("a forward range outside its step", mutation("nvtx", "UPDATE NVTX_EVENTS SET start = start - 100000000 "
                                                  "WHERE text = 'forward'"), "nested"),
    ("registered range outside the domain", mutation("nvtx", "UPDATE NVTX_EVENTS SET domainId = 0 WHERE "
                                                     "textId IS NOT NULL"), "in the domain"),
    ("registered string lost", mutation("nvtx", "UPDATE NVTX_EVENTS SET textId = NULL WHERE textId IS NOT NULL"),
     "registered string"),
    ("mark lost", mutation("nvtx", "DELETE FROM NVTX_EVENTS WHERE eventType = 34"), "start_mark"),
    ("colour mangled", mutation("nvtx", "UPDATE NVTX_EVENTS SET color = 255 WHERE textId IS NOT NULL"), "colour"),
    ("slow run not slower", mutation("slow_kernel_slow", "UPDATE %s SET end = start + 30000" % K), "--slow"),
    ("repeat run differs", mutation("slow_kernel_base2", "UPDATE %s SET end = start + 40000" % K), "within 10%"),
    ("GPU mostly idle", mutation("well_written", "UPDATE %s SET start = start + rowid * 1000000, "
                                 "end = end + rowid * 1000000" % K), "busy"),
    ("train_step ranges lost", mutation("train_small", "DELETE FROM NVTX_EVENTS WHERE text = 'train_step'"),
     "train_step"),
    ("sample failed", edit_manifest("streams", 2, "1"), "exits 0"),
    ("sample timed out untraced", edit_manifest("threads", 3, "124"), "untraced"),
    ("no result line", edit_manifest("graph", 5, "graph: wrong result"), "result line"),
    ("an extra kernel", mutation("small_grid", "INSERT INTO %s SELECT * FROM %s LIMIT 1; UPDATE %s SET "
                                 "shortName = 1 WHERE rowid = (SELECT max(rowid) FROM %s)" % (K, K, K, K)),
     "did not launch"),
]


def self_test(schema_path):
    with open(schema_path) as f:
        schema = f.read()
    top = tempfile.mkdtemp(prefix="gpt-trace-selftest.")
    ok = True
    try:
        good = os.path.join(top, "good")
        os.mkdir(good)
        make_fake_folder(good, schema)
        rep = Report(out=None)
        check_folder(good, rep)
        fails = rep.failures()
        print("self-test: %d checks on the synthetic traces of every sample: %d passed, %d failed, %d skipped"
              % (len(rep.results), rep.count("PASS"), len(fails), rep.count("SKIP")))
        for f in fails:
            print("  unexpected FAIL %s: %s (%s)" % f[1:])
        ok = not fails and rep.count("PASS") > 300 and rep.count("SKIP") == 1
        for what, mutate, expect in MUTATIONS:
            folder = os.path.join(top, "m")
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(good, folder)
            mutate(folder)
            rep = Report(out=None)
            check_folder(folder, rep)
            hits = [f for f in rep.failures() if expect in f[2] or expect in f[3]]
            caught = bool(hits)
            ok &= caught
            print("self-test: %-40s %s" % (what, "caught: FAIL %s: %s" % hits[0][1:3] if caught else
                                           "NOT CAUGHT (failures: %s)" % [f[1:3] for f in rep.failures()]))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    print("self-test: %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if len(argv) >= 2 and argv[1] == "--self-test":
        schema = argv[2] if len(argv) > 2 else os.path.join(here, "..", "..", "schema", "schema.sql")
        return self_test(schema)
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: check_traces.py DIR | --self-test [SCHEMA]", file=sys.stderr)
        return 2
    rep = Report()
    check_folder(argv[1], rep)
    failed = rep.count("FAIL")
    print("%d passed, %d failed%s" % (rep.count("PASS"), failed,
                                      ", %d skipped" % rep.count("SKIP") if rep.count("SKIP") else ""))
    return 1 if failed or not rep.count("PASS") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
