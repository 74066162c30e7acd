#!/bin/bash
# gpt-trace report --format html: pages of real and synthetic traces opened in headless Chromium
# (Debian's chromium, installed by scripts/install-deps.sh) with the network blocked, through the
# DevTools protocol (html-check.js): no console error, no exception, no network request, the number
# of chart elements the trace's data calls for, and every number equal to the JSON report's and
# gpt-trace stats' (html-compare.py). Without chromium or node the test fails: CI installs both.
. "$SRC/tests/analyzer/lib.sh"
GPU=$SRC/tests/fixtures/gpu
HERE=$SRC/tests/analyzer

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ] || ! command -v node > /dev/null; then
	echo "FAIL chromium or node not found (chromium: '${CHROMIUM}'): run scripts/install-deps.sh"
	exit 1
fi

# A trace with one kernel and its launch; an empty one (no kernels, copies or API calls).
cat > "$TMP/one.sql" <<'SQL'
INSERT INTO GPT_META VALUES ('schema_version', '1'), ('tool', 'gpt-trace'), ('time_origin_ns', '1700000000000000000'),
	('command', './one'), ('process_name', 'one'), ('pid', '7'), ('trace_complete', '1');
INSERT INTO StringIds VALUES (1, 'only_kernel(float*)'), (2, 'cudaLaunchKernel');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, smCount,
	computeMajor, computeMinor) VALUES (0, 0, 'NVIDIA H200', '0000:45:00.0', 150137864192, 4916736000000,
	1980000000, 132, 9, 0);
INSERT INTO PROCESSES VALUES (7 << 24, 7, 'one');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
	VALUES (1000, 1500, 0, (7 << 24) + 8, 1, 2, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
	staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
	VALUES (3000, 8000, 0, 1, 7, 1, 7 << 24, 1, 1, 32, 132, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1);
SQL
make_trace "$TMP/one-kernel.sqlite" "$TMP/one.sql"
make_trace "$TMP/no-kernels.sqlite"

# check NAME EXTRA-PYTHON TRACE...: render, open in Chromium, compare with the JSON report and stats
check() {
	local name=$1 extra=$2
	shift 2
	if ! "$GPT" report --format html -o "$TMP/$name.html" "$@" 2> "$TMP/err"; then
		expect "html $name renders" "" "$(cat "$TMP/err")"
		return
	fi
	"$GPT" report --format json -o "$TMP/$name.json" "$@"
	"$GPT" stats --format json "$@" > "$TMP/$name.stats.json"
	if ! node "$HERE/html-check.js" "$CHROMIUM" "$TMP/$name.html" --pdf "$TMP/$name.pdf" > "$TMP/$name.page.json" \
		2> "$TMP/err"; then
		expect "html $name opens in chromium" "" "$(cat "$TMP/err")"
		return
	fi
	expect "html $name" "ok" "$(python3 "$HERE/html-compare.py" "$TMP/$name.page.json" "$TMP/$name.json" \
		"$TMP/$name.stats.json" "$TMP/$name.html" "$extra" 2>&1 | tail -3)"
	expect "html $name prints" "%PDF" "$(head -c 4 "$TMP/$name.pdf")"
}

# A PyTorch loop (20 NVTX steps after seconds of start-up and warm-up): the timeline is drawn
# whole and zoomed on the steady state, one bar per steady iteration, pageable copies highlighted.
steady='sum(tp["iterations"]["steady_count"] for tp in rep["phases"])'
check train_small "
assert len(windows) == 2 and len(bars) == $steady > 10 and len(rows) == 20
assert [num(e, 'pageable') for e in copies].count(1) >= 1" "$GPU/train_small.sqlite"
# cudaMalloc/cudaFree in every step: the steady idle time is in CUDA calls (allocation).
check steady_malloc "
assert len(bars) == $steady >= 100 and any(e['data']['kind'] == 'cuda-call' for e in els('idle-cause'))" \
	"$GPU/pairs/steady_malloc-bad.sqlite"
# An Nsight Systems export (nvFuser on an H200): no steady state, every kernel runs about once.
check nvfuser "
assert rep['traces'][0].endswith('(nsys)') and not bars and len(rows) == 15" "$H200"
# --metrics: the uncoalesced-access findings show their source lines.
check access_metrics "
assert len(page['src_lines']) >= 2 and all('.cu:' in l for l in page['src_lines'])" "$GPU/access-metrics.sqlite"
# The per-process traces of one job (a parent and its forked children): one group of lanes each.
forks=("$GPU"/fork_child-*.sqlite)
check processes "
assert len(rep['traces']) == ${#forks[@]} >= 2 and len(els('tl-trace')) == ${#forks[@]} * len(windows)" "${forks[@]}"
check one_kernel "
assert len(rows) == 1 and len(lanes) == 1 and num(rows[0], 'total-ns') == 5000 and idle_total == 0" \
	"$TMP/one-kernel.sqlite"
check no_kernels "
assert windows == [] and lanes == [] and rows == [] and copies == [] and bins == []" "$TMP/no-kernels.sqlite"

# More streams than lanes (CHART_LANES_MAX 128): GPU 0 runs streams 1-100, then GPU 1 streams 160
# down to 101, each stream twice (at its first time and 10 ms later). Streams take lanes in the
# order they first run, GPUs in order: GPU 1's first 28 (160-133), then its merged lane, which
# holds the other 32 streams' 64 kernels.
{
	sed -n '/^INSERT INTO GPT_META/,/^INSERT INTO PROCESSES/p' "$TMP/one.sql"
	echo "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, smCount,"
	echo "	computeMajor, computeMinor) VALUES (0, 1, 'NVIDIA H200', '0000:46:00.0', 150137864192, 4916736000000,"
	echo "	1980000000, 132, 9, 0);"
	for i in $(seq 1 160); do
		dev=0 stream=$i at=$((i * 1000))
		[ "$i" -gt 100 ] && dev=1 stream=$((261 - i))
		for t in $at $((at + 10000000)); do
			echo "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
			echo "	globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,"
			echo "	blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)"
			echo "	VALUES ($t, $((t + 500)), $dev, 1, $stream, NULL, 7 << 24, 1, 1, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 1);"
		done
	done
} > "$TMP/lanes.sql"
make_trace "$TMP/lanes.sqlite" "$TMP/lanes.sql"
"$GPT" report -q --format html -o "$TMP/lanes.html" "$TMP/lanes.sqlite"
lanes=$(grep -o '<g class="tl-lane" data-trace="0" data-device="[0-9]*" data-stream="-\?[0-9]*" data-ops="[0-9]*"' \
	"$TMP/lanes.html" | sed 's/.*data-device="\([0-9]*\)" data-stream="\(-\?[0-9]*\)" data-ops="\([0-9]*\)"/\1:\2:\3/')
expect "lanes: one per stream of GPU 0, 28 of GPU 1 and its merged lane" "100 29" \
	"$(echo "$lanes" | grep -c '^0:') $(echo "$lanes" | grep -c '^1:')"
expect "lanes: GPU 1's lanes are its first 28 streams" "$(seq 133 160 | tr '\n' ' ')" \
	"$(echo "$lanes" | grep '^1:' | grep -v ':-1:' | cut -d: -f2 | sort -n | tr '\n' ' ')"
expect "lanes: GPU 1's merged lane holds the other 32 streams' kernels" "1:-1:64" "$(echo "$lanes" | grep ':-1:')"

# a kernel-sequence trace says, as the text report does, where each iteration starts (issue 31)
"$GPT" report -q --format html -o "$TMP/cub.html" "$SRC/tests/fixtures/gpu/real/cub_loop.sqlite"
expect "iterations: how the kernel sequence's start was chosen" "1" \
	"$(grep -c 'a repeating sequence of 71 kernels: each iteration starts after the idle gap that recurs once per period' "$TMP/cub.html")"

expect_exit "html needs -o" 2 "needs an output file" "$GPT" report --format html "$TMP/one-kernel.sqlite"
expect_exit "html unwritable output" 2 "cannot write" "$GPT" report --format html -o "$TMP/no/such/dir/r.html" \
	"$TMP/one-kernel.sqlite"
finish
