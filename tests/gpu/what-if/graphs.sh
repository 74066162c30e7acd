#!/bin/bash
# Issue 41's CUDA-graph fix on the GPU: a launch-bound step of 200 tiny PyTorch ops
# (tests/gpu/busy/advice.py graphs) eager and captured in a CUDA graph, untraced and traced, and the
# replay of the eager trace with small-kernels' fix (its kernels captured in a graph) against the
# graph variant's measured step.
# usage: graphs.sh BINDIR OUT  (OUT/graphs.log, OUT/eager.json; about 1 minute)
set -u
B=${1:?usage: graphs.sh BINDIR OUT}; OUT=${2:?}; mkdir -p "$OUT"; L=$OUT/graphs.log
P=tests/gpu/busy/advice.py; W=$(mktemp -d /tmp/graphs.XXXXXX)
{
	echo "# $(date -u +%F' '%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	for v in eager graph; do
		python3 $P graphs $v --steps 200 2>&1 | grep '^advice:' | sed 's/^/untraced /'
	done
	for v in eager graph; do
		"$B/gpt-trace" run -q -f -o "$W/$v.sqlite" -- python3 $P graphs $v --steps 200 2>&1 | grep '^advice:' | sed 's/^/traced /'
	done
	"$B/gpt-trace" report "$W/eager.sqlite" 2>&1 | sed -n '/What to shorten first/,/ranked by/p'
	"$B/gpt-trace" report "$W/eager.sqlite" 2>&1 | grep -A4 'small-kernels' | head -12
	"$B/gpt-trace" report -q -f json -o "$OUT/eager.json" "$W/eager.sqlite"
	python3 - "$OUT/eager.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["what_if"]:
    it = t["iterations"]
    print("what_if: iterations", it, "measured per iteration", t["measured_ns"] / it, "ns")
    print("  recorded", t["recorded"]["window_ns"] / it, "all fixes", t["all"]["window_ns"] / it)
    for f in t.get("fixes", []):
        print("  fix", f)
PY
	"$B/gpt-trace" report "$W/graph.sqlite" 2>&1 | sed -n '/What to shorten first/,/ranked by/p'
} > "$L" 2>&1
tail -30 "$L"
