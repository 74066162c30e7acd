#!/bin/bash
# The HTML report's GPU utilization chart and "what bounds the GPU" (analyzer/report/html/utilization.c), on
# traces recorded with --gpu-metrics (tests/fixtures/gpu/busy): in each timeline window a chart per
# GPU on the timeline's columns, its series' means equal to SQL over the trace's GPU_METRICS rows,
# the bounds equal to gpt-trace stats', drawn by headless Chromium where the lanes are
# (html-util.py). A trace without GPU metrics gets neither. Then the checks are shown to fail on
# pages altered in the ways they guard against. Without chromium or node the test fails, as html.sh.
. "$SRC/tests/analyzer/lib.sh"
BUSY=$SRC/tests/fixtures/gpu/busy
HERE=$SRC/tests/analyzer

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ] || ! command -v node > /dev/null; then
	echo "FAIL chromium or node not found (chromium: '${CHROMIUM}'): run scripts/install-deps.sh"
	exit 1
fi

# render NAME TRACE: the page, the JSON report, stats' JSON and Chromium's view of the page
render() {
	"$GPT" report -q --format html -o "$TMP/$1.html" "$2" &&
		"$GPT" report -q --format json -o "$TMP/$1.json" "$2" &&
		"$GPT" stats --format json "$2" > "$TMP/$1.stats.json" &&
		node "$HERE/html-check.js" "$CHROMIUM" "$TMP/$1.html" > "$TMP/$1.page.json" 2> "$TMP/err"
}

# check NAME TRACE metrics|none: html-util.py's verdict
check() {
	if ! render "$1" "$2"; then
		expect "util $1 renders and opens" "" "$(cat "$TMP/err")"
		return
	fi
	expect "util $1 ($3)" "ok" "$(python3 "$HERE/html-util.py" "$TMP/$1.html" "$2" "$TMP/$1.stats.json" \
		"$TMP/$1.json" "$3" "$TMP/$1.page.json" 2>&1 | tail -1 | cut -d' ' -f1)"
}

# The vocabulary pair's bad side (align1 GEMMs, tensor pipes about 25% while the SMs are full) and
# FP32 GEMMs (SMs full, tensor pipes idle): the chart shows columns with SMs >= 90% and tensor < 1%.
check vocab-bad "$BUSY/vocab-bad.sqlite" metrics
check precision-fp32 "$BUSY/precision-fp32.sqlite" metrics
expect "util precision-fp32 shows the idle tensor pipes" "yes" "$(python3 "$HERE/html-util.py" \
	"$TMP/precision-fp32.html" "$BUSY/precision-fp32.sqlite" "$TMP/precision-fp32.stats.json" \
	"$TMP/precision-fp32.json" metrics | awk -F'tensor-idle-columns=' '{ print ($2 + 0 >= 100 ? "yes" : "no: " $2) }')"
check membw "$BUSY/membw.sqlite" metrics
# PCIe sampled (2 H200s, pinned copies at 92-94% of the link): a fourth band, its columns as SQL
# says, reaching 90%; the traces above have no PCIe, and no fourth band (html-util.py).
check traffic-copies "$BUSY/traffic-copies.sqlite" metrics
expect "util traffic-copies shows the copies on PCIe" "yes" "$(python3 "$HERE/html-util.py" \
	"$TMP/traffic-copies.html" "$BUSY/traffic-copies.sqlite" "$TMP/traffic-copies.stats.json" \
	"$TMP/traffic-copies.json" metrics | awk -F'pcie-peak=' '{ print ($2 + 0 >= 90 ? "yes" : "no: " $2) }')"
# No GPU metrics: no chart, no summary.
check train_small "$SRC/tests/fixtures/gpu/train_small.sqlite" none

# The checks fail where they should: altered copies of a good page.
cat > "$TMP/alter.py" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
sm = r'(data-series="sm" data-pct=")([^"]*)'
alter = {
    "window": lambda: re.sub(r'(<g class="util"[^>]*data-start-ns=")(\d+)', lambda m: m[1] + str(int(m[2]) + 1), h, count=1),
    "high": lambda: re.sub(sm, lambda m: m[1] + " ".join(v if v == "-" else "%.1f" % (float(v) * 1.02)
                                                         for v in m[2].split()), h),
    "late": lambda: re.sub(sm, lambda m: m[1] + " ".join(["-"] + m[2].split()[:-1]), h),
    "series": lambda: h.replace('data-series="tensor"', 'data-series="tensors"'),
    "bounds": lambda: h.replace('<tr class="bound" data-class="memory-bound"', '<tr class="x"'),
    "none": lambda: h,
}[sys.argv[3]]
open(sys.argv[2], "w").write(alter())
PY
# fails NAME ALTERATION MODE: html-util.py rejects vocab-bad's page so altered
fails() {
	python3 "$TMP/alter.py" "$TMP/vocab-bad.html" "$TMP/bad.html" "$2"
	python3 "$HERE/html-util.py" "$TMP/bad.html" "$BUSY/vocab-bad.sqlite" "$TMP/vocab-bad.stats.json" \
		"$TMP/vocab-bad.json" "$3" > "$TMP/out" 2>&1
	expect "util check fails: $1" "AssertionError" "$(grep -o AssertionError "$TMP/out" | head -1)"
}
fails "the chart's window 1 ns off the timeline's" window metrics
fails "SMs active 2% high" high metrics
fails "SMs active one column late" late metrics
fails "a series missing" series metrics
fails "a class missing from the bounds" bounds metrics
fails "a chart on a trace said to have none" none none
finish
