#!/bin/bash
# --metrics=first=2 on a PyTorch resnet18 (H200, tests/gpu/batch-s11a.sh step 3; fixture
# tests/fixtures/gpu/real/resnet-metrics.sqlite): every measured launch is in the warm-up, the
# first two of each kernel, and the report judges the steady state. The counters still judge the
# steady state's launches of the same kernels (rules/uncoalesced-access.c). Before that, the report
# said "not checked: no hardware metrics to read (needs gpt-trace run --metrics)" on this trace.
# Without ideal counts (the SASS counters were off here), coalesced float4 accesses at 16 sectors
# per request must not be flagged.
. "$SRC/tests/analyzer/lib.sh"

T=$SRC/tests/fixtures/gpu/real/resnet-metrics.sqlite
"$GPT" report -q -f json -o "$TMP/r.json" "$T" || { echo "FAIL report"; exit 1; }
findings() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    if f["rule"] == "uncoalesced-access":
        ev = " ".join(f["evidence"])
        print(f["owner"], f["message"].split(":")[-1].strip(), "ideal-from-trace" if "(from the trace)" in ev else "ideal-assumed",
              "warmup-counters" if "counters from 2 measured launches" in ev else "other")' "$TMP/r.json"
}
expect "uncoalesced-access judges the steady state with the warm-up's counters" \
"cudnn uncoalesced global loads, 9.2 sectors per request where 4.0 would do ideal-from-trace warmup-counters
aten uncoalesced global loads, 8.3 sectors per request where 4.0 would do ideal-from-trace warmup-counters
aten uncoalesced global stores, 32.0 sectors per request where 16.0 would do ideal-assumed warmup-counters
aten uncoalesced global loads, 20.0 sectors per request where 16.0 would do ideal-assumed warmup-counters" "$(findings)"
expect "no 'not checked' finding" "0" "$(grep -c 'not checked' "$TMP/r.json")"
expect "the measured ATen float4 kernels are not flagged" "0" \
	"$(python3 -c 'import json,sys; print(sum("vectorized_elementwise" in f["message"] for f in json.load(open(sys.argv[1]))["findings"]))' "$TMP/r.json")"
# The kernels were measured: 59 kernels, 118 launches, all in the warm-up (iterations 1-2).
expect "measured launches" "118" "$(sqlite3 "$T" 'SELECT count(*) FROM GPT_KERNEL_METRICS WHERE source IS NULL OR source = "counters"')"
exit $((failures > 0))
