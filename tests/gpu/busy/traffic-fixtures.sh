#!/bin/bash
# The PCIe and NVLink fixtures of tests/fixtures/gpu/busy (README there), on a machine with two GPUs
# joined by NVLink, from the repository root with gpt-trace, libgpt_inject.so and copies in BINDIR:
# usage: traffic-fixtures.sh BINDIR OUT  (OUT/traffic-copies.sqlite, OUT/traffic-peer.sqlite)
# Each trace keeps its GPU metrics only from 5 ms before its first copy to 5 ms after its last.
set -u
B=${1:?usage: traffic-fixtures.sh BINDIR OUT}; OUT=${2:?}; mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
"$B/gpt-trace" run -q -f --gpu-metrics -o "$OUT/traffic-copies.sqlite" -- "$B/copies" --bytes 67108864 --copies 4
echo "copies rc=$?"
"$B/gpt-trace" run -q -f --gpu-metrics -o "$OUT/traffic-peer.sqlite" -- python3 "$(dirname "$0")/peer.py" --mib 64 --copies 4
echo "peer rc=$?"
for f in "$OUT"/traffic-*.sqlite; do
	python3 - "$f" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
lo, hi = db.execute("SELECT min(start) - 5000000, max(\"end\") + 5000000 FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchone()
db.execute("DELETE FROM GPU_METRICS WHERE timestamp < ? OR timestamp > ?", (lo, hi))
db.execute("DELETE FROM GPT_GPU_METRICS WHERE start < ? OR start > ?", (lo, hi))
db.execute("INSERT OR REPLACE INTO GPT_META VALUES ('fixture_trimmed', ?)",
           (f"GPU_METRICS rows kept from {lo} to {hi} ns (the copies +- 5 ms)",))
db.commit(); db.execute("VACUUM")
n = db.execute("SELECT count(*) FROM GPT_GPU_METRICS").fetchone()[0]
m = dict(db.execute("SELECT name, value FROM GPT_META"))
print(sys.argv[1].split("/")[-1], "samples kept", n, "complete", m.get("trace_complete"),
      "metrics", len(m.get("gpu_metrics_collected", "").split(",")))
PY
done
ls -la "$OUT"
