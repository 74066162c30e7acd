#!/bin/bash
# Issue 23's PCIe bytes, on a GPU: with the default set (eleven metrics on GH100, PCIe bytes and
# percentages among them; inject/gpu-metrics-chip.c), copies moves 256 MiB x 10 each way from
# pageable and from pinned memory. Checked per run: exit status 0 and a complete trace; the run's
# PCIe read (RX) bytes are 0.95-1.3x the bytes copied to the device, its write (TX) bytes those
# copied to the host, and within the copies of one direction the other direction is under a tenth;
# PCIe RX/TX rows in GPU_METRICS reach 50% in pinned copies; and what the sampler cost (samples,
# idle samples, decoding CPU time).
# From the repository root, with gpt-trace, libgpt_inject.so, copies and membw in BINDIR:
# usage: traffic.sh BINDIR [RUNS]  (prints PASS or FAIL lines; exit status 1 on any FAIL)
set -u
B=${1:?usage: traffic.sh BINDIR [RUNS]}; N=${2:-2}; W=$(mktemp -d /tmp/traffic.XXXXXX); bad=0
for i in $(seq "$N"); do
	for prog in "copies --bytes 268435456" "membw"; do
		name=${prog%% *}
		GPT_TRACE_GPU_METRICS_DEBUG=1 timeout 120 "$B/gpt-trace" run -q -f --gpu-metrics \
			-o "$W/$name.sqlite" -- $B/$prog >"$W/$name.out" 2>"$W/$name.err"
		rc=$?
		python3 - "$W/$name.sqlite" "$name" "$rc" "$(grep -h 'tier' "$W/$name.err" | tr '\n' ';')" <<'PY' || bad=1
import sqlite3, sys
path, name, rc, tiers = sys.argv[1:5]
ok = True
def check(cond, what):
    global ok
    ok &= bool(cond)
    print(f"{'PASS' if cond else 'FAIL'} {name}: {what}")
try:
    db = sqlite3.connect(path)
    meta = dict(db.execute("SELECT name, value FROM GPT_META"))
except Exception as e:
    print(f"FAIL {name} rc={rc}: unreadable: {e} [{tiers}]"); sys.exit(1)
check(rc == "0" and meta.get("trace_complete") == "1", f"rc={rc} complete={meta.get('trace_complete')} [{tiers}]")
check("pcie__read_bytes" in meta.get("gpu_metrics_collected", ""), "PCIe bytes collected")
print(f"  samples {meta.get('gpu_metric_samples')}, idle {meta.get('gpu_metric_samples_idle')}, "
      f"decoding CPU {meta.get('gpu_metrics_decode_cpu_ms')} ms, setup {meta.get('gpu_metrics_setup_ms')} ms")
def inside(kind):
    """PCIe read and write bytes of the samples within the copies of a kind."""
    return db.execute("""SELECT coalesce(sum(g.pcieReadBytes), 0), coalesce(sum(g.pcieWriteBytes), 0)
        FROM GPT_GPU_METRICS g WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY m
        WHERE m.copyKind = ? AND g.start >= m.start AND g."end" <= m."end")""", (kind,)).fetchone()
if name == "copies":
    # Over the run (idle samples, unstored, move under 1 GB/s): the bytes each way against the
    # bytes copied; CUPTI's PCIe counts include the packets' overhead (pm_probe's pinned copies:
    # 1.05x read, 1.15x write). Within the copies of one direction, the other direction's bytes
    # stay small (the 1.16-1.67x of the samples inside copies, against a uniform rate, said
    # nothing: a pageable copy's span is not uniformly busy).
    total = db.execute("SELECT sum(pcieReadBytes), sum(pcieWriteBytes) FROM GPT_GPU_METRICS").fetchone()
    for kind, label, main in ((1, "host to device", 0), (2, "device to host", 1)):
        copied = db.execute("SELECT coalesce(sum(bytes), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = ?",
                            (kind,)).fetchone()[0]
        ratio = (total[main] or 0) / copied if copied else 0
        got = inside(kind)
        check(0.95 <= ratio <= 1.3 and got[1 - main] < 0.1 * got[main],
              f"{label}: {'read' if main == 0 else 'write'} {total[main] or 0:.4g} B in the run against "
              f"{copied:.4g} copied ({ratio:.2f}x); within these copies {got[main]:.4g} B that way, "
              f"{got[1 - main]:.4g} B the other")
    rows = dict(db.execute("""SELECT t.metricName, max(m.value) FROM GPU_METRICS m JOIN TARGET_INFO_GPU_METRICS t
        USING (typeId, metricId) WHERE t.metricName LIKE 'PCIe%' GROUP BY t.metricName"""))
    check(all(rows.get(f"PCIe {d} Throughput [Throughput %]", 0) >= 50 for d in ("RX", "TX")),
          f"GPU_METRICS peaks {rows}")
else:
    r = db.execute("SELECT sum(pcieReadBytes), sum(pcieWriteBytes), sum(dramReadBytes) FROM GPT_GPU_METRICS").fetchone()
    print(f"  PCIe read {r[0] or 0:.4g} B, write {r[1] or 0:.4g} B, DRAM read {r[2] or 0:.4g} B")
sys.exit(0 if ok else 1)
PY
	done
done
rm -rf "$W"
exit $bad
