#!/usr/bin/env bash
# SQL written for nsys exports averages GPU_METRICS rows over a window; since every sample interval
# is stored, idle ones too (issue 39), that average is the time-weighted mean `gpt-trace stats`
# prints over the same window. On an H200 trace that idles most of its run (a matmul, a
# synchronize and 20 ms of sleep, 40 times, sampled at 1 kHz: tests/gpu/busy/idle-samples.sh).
# Before, idle samples were not stored: the same SQL gave 66-68% 'SMs Active' where the GPU was
# 8-11% active.
# usage: gpu-metrics-sql.sh GPT_TRACE SRC
set -euo pipefail
gpt=$1 src=$2
trace=$src/tests/fixtures/gpu/busy/idle-samples-1khz.sqlite
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$gpt" stats -f json "$trace" > "$tmp"
python3 - "$trace" "$tmp" <<'PY'
import json, sqlite3, sys
d = json.load(open(sys.argv[2]))["gpu_efficiency"]
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
names = {"sm_active_pct": "SMs Active [Throughput %]", "tensor_active_pct": "Tensor Active [Throughput %]",
         "dram_read_pct": "DRAM Read Bandwidth [Throughput %]", "dram_write_pct": "DRAM Write Bandwidth [Throughput %]",
         "pcie_rx_pct": "PCIe RX Throughput [Throughput %]", "pcie_tx_pct": "PCIe TX Throughput [Throughput %]",
         "hmma_pct": "Tensor Active HMMA [Throughput %]"}  # the fixture's (before the rename)
bad = 0
dev = d["devices"][0]
for key, metric in names.items():
    avg, n = db.execute("SELECT avg(g.value), count(*) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m "
                        "USING (typeId, metricId) WHERE m.metricName = ? AND g.timestamp >= ? AND g.timestamp < ? "
                        "AND g.typeId & 255 = ?", (metric, d["start_ns"], d["end_ns"], dev["device"])).fetchone()
    ok = avg is not None and abs(avg - dev[key]) <= 1.0 and n == d["samples"]
    bad += not ok
    print(("ok  " if ok else "FAIL"), f"{metric}: windowed avg(value) {avg} over {n} rows, stats {dev[key]} over {d['samples']} samples")
idle = int(db.execute("SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples_idle'").fetchone()[0])
rows = db.execute("SELECT count(*) FROM GPT_GPU_METRICS").fetchone()[0]
stored = int(db.execute("SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples'").fetchone()[0])
ok = idle > 0 and rows == stored + idle
bad += not ok
print(("ok  " if ok else "FAIL"), f"every sample stored: {rows} GPT_GPU_METRICS rows = {stored} active + {idle} idle samples")
sys.exit(1 if bad else 0)
PY
