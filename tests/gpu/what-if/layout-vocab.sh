#!/bin/bash
# Issue 41's kernel fixes on the GPU, replayed against measured pairs not used to build them:
# layout-conversion on torchvision resnet18 training (tests/gpu/busy/layout.py nchw|channels_last;
# the model of removed conversions was read on resnet50), tensor-idle on the GPT-2 vocabulary pair
# (tests/gpu/busy/vocab.py bad|fixed), and small-grid on samples/small_grid (8 blocks against
# 1056), measured untraced twice, interleaved, then the bad variants traced and their fixes
# replayed. The traces come back in OUT for the CPU tests.
# usage: layout-vocab.sh BINDIR OUT  (OUT/layout-vocab.log, OUT/*.json; about 3 minutes)
set -u
B=${1:?usage: layout-vocab.sh BINDIR OUT}; OUT=${2:?}; mkdir -p "$OUT"; L=$OUT/layout-vocab.log
W=$(mktemp -d /tmp/layout-vocab.XXXXXX)
replay() {	# replay JSON RULE: the fix's replayed saving per iteration
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["what_if"]:
    it = t["iterations"]
    rec = t["recorded"]["window_ns"] / it
    print("what_if %s: %d iterations, %.3f ms each as recorded, bounded by %s" % (sys.argv[2], it, rec / 1e6,
          {k: round(v / t["recorded"]["window_ns"], 3) for k, v in t["recorded"]["critical_path_ns"].items() if v}))
    for f in t.get("fixes", []):
        print("  %-18s alone saves %.3f ms per iteration" % (f["rule"], rec / 1e6 - f["alone_ns"] / it / 1e6))
for f in d["findings"]:
    if f["rule"] == sys.argv[2]:
        print("  finding %s: recoverable per iteration %.3f ms" % (f["rule"], f.get("recoverable_per_iteration_ns", 0) / 1e6))
PY
}
{
	echo "# $(date -u +%F' '%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	for round in 1 2; do
		for v in nchw channels_last; do
			python3 tests/gpu/busy/layout.py $v --steps 30 2>&1 | grep '^layout:' | sed "s/^/untraced round $round /"
		done
		for v in bad fixed; do
			python3 tests/gpu/busy/vocab.py $v --steps 30 2>&1 | grep '^vocab:' | sed "s/^/untraced round $round /"
		done
		for blocks in 8 1056; do
			"$B/small_grid" --launches 200 --blocks $blocks 2>&1 | grep '^small_grid:' | sed "s/^/untraced round $round /"
		done
	done
	"$B/gpt-trace" run -q -f -o "$W/small_grid.sqlite" -- "$B/small_grid" --launches 200 2>&1 | sed 's/^/traced /'
	"$B/gpt-trace" report -q -f json -o "$OUT/small_grid.json" "$W/small_grid.sqlite"
	replay "$OUT/small_grid.json" small-grid
	cp "$W/small_grid.sqlite" "$OUT/" 
	"$B/gpt-trace" run -q -f -o "$W/layout-nchw.sqlite" -- python3 tests/gpu/busy/layout.py nchw --steps 30 2>&1 |
		grep '^layout:' | sed 's/^/traced /'
	"$B/gpt-trace" run -q -f --gpu-metrics -o "$W/vocab-bad.sqlite" -- python3 tests/gpu/busy/vocab.py bad --steps 30 2>&1 |
		grep '^vocab:' | sed 's/^/traced /'
	"$B/gpt-trace" report -q -f json -o "$OUT/layout-nchw.json" "$W/layout-nchw.sqlite"
	"$B/gpt-trace" report -q -f json -o "$OUT/vocab-bad.json" "$W/vocab-bad.sqlite"
	replay "$OUT/layout-nchw.json" layout-conversion
	replay "$OUT/vocab-bad.json" tensor-idle
	"$B/gpt-trace" report "$W/layout-nchw.sqlite" 2>&1 | sed -n '/What to shorten first/,/ranked by/p'
	"$B/gpt-trace" report "$W/vocab-bad.sqlite" 2>&1 | sed -n '/What to shorten first/,/ranked by/p'
	for t in layout-nchw vocab-bad; do xz -T4 -9 -c "$W/$t.sqlite" > "$OUT/$t.sqlite.xz"; done
	ls -l "$OUT"
} > "$L" 2>&1
tail -40 "$L"
