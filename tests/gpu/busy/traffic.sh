#!/bin/bash
# Issue 23's PCIe and NVLink bytes: does CUPTI's PM sampler take the default set with PCIe and
# NVLink bytes (GPT_TRACE_GPU_METRICS_TRY=traffic, inject/gpu-metrics-chip.c) on this GPU, and does
# a program traced with it exit cleanly? GH100 refused the whole list; this smaller set was never
# tried on a GPU. From the repository root, with gpt-trace, libgpt_inject.so, copies and membw in
# BINDIR: usage traffic.sh BINDIR [RUNS]. Per run: exit status, the tier the debug lines name, and
# the samples whose PCIe columns are filled (copies moves 4 MiB x 10 each way between host and GPU,
# so a working sampler shows PCIe bytes in its samples).
set -u
B=${1:?usage: traffic.sh BINDIR [RUNS]}; N=${2:-3}; W=$(mktemp -d /tmp/traffic.XXXXXX)
for i in $(seq "$N"); do
	for prog in "copies --bytes 268435456" "membw"; do
		name=${prog%% *}
		GPT_TRACE_GPU_METRICS_TRY=traffic GPT_TRACE_GPU_METRICS_DEBUG=1 timeout 60 \
			"$B/gpt-trace" run -q -f --gpu-metrics=20us -o "$W/$name.sqlite" -- $B/$prog \
			>"$W/$name.out" 2>"$W/$name.err"
		rc=$?
		python3 - "$W/$name.sqlite" "$name" "$rc" "$(grep -h 'tier' "$W/$name.err" | tr '\n' ';')" <<'PY'
import sqlite3, sys
path, name, rc, tiers = sys.argv[1:5]
try:
    db = sqlite3.connect(path)
    cols = [r[1] for r in db.execute("PRAGMA table_info(GPT_GPU_METRICS)")]
    pcie = [c for c in cols if "pcie" in c.lower() or "nvl" in c.lower()]
    filled = {c: db.execute(f"SELECT count(*), max({c}) FROM GPT_GPU_METRICS WHERE {c} > 0").fetchone() for c in pcie}
    meta = dict(db.execute("SELECT name, value FROM GPT_META"))
    print(f"{name} rc={rc} complete={meta.get('trace_complete')} collected={meta.get('gpu_metrics_collected')} filled={filled} [{tiers}]")
except Exception as e:
    print(f"{name} rc={rc} unreadable: {e} [{tiers}]")
PY
	done
done
rm -rf "$W"
