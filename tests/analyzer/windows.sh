#!/bin/bash
# Capture windows (GPT_CAPTURE_WINDOWS, written by gpt-trace run --delay/--duration/--capture-range/
# --max-size): the report must not read the time between windows as idle time, nor the first
# window's start as start-up, and counts iterations within windows. One synthetic trace recorded in
# two windows, and the same rows with the windows table emptied (what the analyzer would say if it
# ignored the windows), so each check could fail.
#
# The trace: host thread 101, device 0. Window 1 [1 ms, 3 ms), window 2 [1001 ms, 1003 ms): a second
# apart, as a program that called cudaProfilerStart/Stop around two stretches of its loop would
# leave. In each window, 10 iterations of 'step_a' (60 us) then 'step_b' (30 us), each kernel
# launched 5 us before it runs, with 10 us of host code before each iteration: an iteration is
# 100 us on the GPU timeline (90 us busy, 10 us idle), so 20 iterations in all, the steady
# iterations' median 100 us, and the idle time 10 us before each iteration but the first of each
# window (a window's first operation has no gap before it, as a trace's has none): 180 us, not a
# second.
. "$SRC/tests/analyzer/lib.sh"

cat > "$TMP/rows.sql" <<'SQL'
-- window w (0, 1) at base = 1 ms + w * 1000 ms; iteration i at base + 100 us + i * 100 us.
CREATE TEMP TABLE win(w INTEGER, base INTEGER);
INSERT INTO win VALUES (0, 1000000), (1, 1001000000);
INSERT INTO api SELECT base + 100000 + n * 100000 + 5000, base + 100000 + n * 100000 + 9000,
	w * 100 + 2 * n + 1, 1, NULL FROM win, loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name) SELECT base + 100000 + n * 100000 + 10000,
	base + 100000 + n * 100000 + 70000, w * 100 + 2 * n + 1, 'step_a' FROM win, loop WHERE n < 10;
INSERT INTO api SELECT base + 100000 + n * 100000 + 60000, base + 100000 + n * 100000 + 64000,
	w * 100 + 2 * n + 2, 1, NULL FROM win, loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name) SELECT base + 100000 + n * 100000 + 70000,
	base + 100000 + n * 100000 + 100000, w * 100 + 2 * n + 2, 'step_b' FROM win, loop WHERE n < 10;
INSERT INTO GPT_META VALUES ('capture_range', 'cudaProfilerApi');
SQL
cat > "$TMP/windows.sql" <<'SQL'
INSERT INTO GPT_CAPTURE_WINDOWS VALUES (1, 1000000, 3000000, 'cudaProfilerStart', 'cudaProfilerStop'),
	(2, 1001000000, 1003000000, 'cudaProfilerStart', 'cudaProfilerStop');
SQL
make_trace "$TMP/windowed.sqlite" "$SRC/tests/rules/cases/prelude.sql" "$TMP/rows.sql" "$TMP/windows.sql"
make_trace "$TMP/whole.sqlite" "$SRC/tests/rules/cases/prelude.sql" "$TMP/rows.sql"

"$GPT" report --format json -o "$TMP/windowed.json" "$TMP/windowed.sqlite" || { echo "report failed"; exit 1; }
"$GPT" report --format json -o "$TMP/whole.json" "$TMP/whole.sqlite" || { echo "report failed"; exit 1; }

q() { python3 -c "import json, sys; d = json.load(open('$TMP/$1.json')); tp = d['phases'][0]; ph = {p['name']: p for p in tp['phases']}; $2"; }
idle='sum(p["split"]["idle_ns"] for p in tp["phases"])'
longest_gap='max([c["ns"] for p in tp["phases"] for c in p["idle_causes"]] + [0])'

# The loader reads the windows.
expect "windows view" "1|1000000|3000000|cudaProfilerStart|cudaProfilerStop
2|1001000000|1003000000|cudaProfilerStart|cudaProfilerStop" \
	"$("$QUERY" --sql "SELECT id, start, end, openedBy, closedBy FROM windows ORDER BY id" "$TMP/windowed.sqlite")"

# Time between windows is not idle time: 10 us before 18 iterations (180 us), not 1 s.
expect "windowed: idle time" "180000" "$(q windowed "print($idle)")"
expect "whole: the second between windows reads as idle" "1" "$(q whole "print(int($idle > 900000000))")"
expect "windowed: no idle cause spans the windows" "1" "$(q windowed "print(int($longest_gap < 1000000))")"

# The first window's start is not start-up.
expect "windowed: start-up" "0" "$(q windowed "print(ph['start-up']['duration_ns'])")"
expect "windowed: start-up says why" "1" \
	"$(q windowed "print(int('capture windows' in ph['start-up']['reason']))")"

# Iterations are counted within windows: none spans the hole, the median is one iteration.
expect "windowed: iterations" "20" "$(q windowed "print(tp['iterations']['count'])")"
expect "windowed: no iteration spans the windows" "1" \
	"$(q windowed "print(int(max(i['duration_ns'] for i in tp['iterations']['items']) < 1000000))")"
expect "windowed: median iteration" "100000" "$(q windowed "print(tp['iterations']['median_ns'])")"
expect "whole: one iteration spans the windows" "1" \
	"$(q whole "print(int(max(i['duration_ns'] for i in tp['iterations']['items']) > 900000000))")"

# A trace recorded on the H100 (tests/gpu/capture.sh, case repeat; tests/gpu/h100-capture-2026-11-27.log):
# samples/profiler_range with cudaProfilerStart/Stop around iterations 10-20 and 30-35 of 50, each
# iteration 3 add_one launches, a cudaDeviceSynchronize and 1 ms of host work; windows of 10.4 ms and
# 5.2 ms, 10.3 ms apart. The hole is no idle gap, and idle-gaps measures the device's idle time
# against its time inside the windows (it is idle most of it: 1 ms of host work per iteration).
cp "$SRC/tests/fixtures/gpu/capture/repeat.sqlite" "$TMP/repeat.sqlite"
"$GPT" report --format json -o "$TMP/repeat.json" "$TMP/repeat.sqlite" || { echo "report failed"; exit 1; }
expect "H100 repeat: windows" "2" "$("$QUERY" --sql "SELECT count(*) FROM windows" "$TMP/repeat.sqlite")"
expect "H100 repeat: kernels" "51" "$("$QUERY" --sql "SELECT count(*) FROM kernels" "$TMP/repeat.sqlite")"
expect "H100 repeat: start-up" "0" "$(q repeat "print(ph['start-up']['duration_ns'])")"
# The largest gaps idle-gaps lists ("gap of 1.02 ms from ... to ..."): none near the 10.3 ms hole.
expect "H100 repeat: no idle gap spans the hole" "1.02 ms" \
	"$(q repeat "import re; e = [x for f in d['findings'] if f['rule'] == 'idle-gaps' for x in f['evidence']]; print(max((m.group(1) for x in e for m in [re.match(r'gap of ([0-9.]+ [mu]s) from', x)] if m), key=lambda v: float(v.split()[0]) * (1000 if v.endswith('ms') else 1)))")"
expect "H100 repeat: idle within the windows' time" "1" \
	"$(q repeat "import re; m = [f['message'] for f in d['findings'] if f['rule'] == 'idle-gaps'][0]; print(int(float(re.search(r'\\(([0-9.]+)% of its', m).group(1)) <= 100))")"
expect "H100 repeat: total idle under the windows' 15.6 ms" "1" "$(q repeat "print(int($idle < 15600000))")"

# A 2-rank DDP job under --steps 40-55 (H200, tests/fixtures/gpu/capture/README.md): rank 1 sleeps
# 20 ms in steps 40, 43, ..., 55. The window's first iteration is not warm-up: it shows every kernel
# for the first time and is slow because the window opened there (before: "15 steady of 16",
# iteration 1 "launched 22 kernels for the first time"), and rank 1 holds up exactly the slept ones
# (named by step number: the cross-rank report lines windowed ranks up by step, docs/multi-rank.md).
cp "$SRC/tests/fixtures/gpu/capture/steps-2rank-rank0.sqlite" "$SRC/tests/fixtures/gpu/capture/steps-2rank-rank1.sqlite" "$TMP/"
C=$TMP	# the cross-rank report caches a summary beside each trace: not in the source tree
expect "--steps window: every iteration steady" "16 steady of 16" \
	"$("$GPT" report "$C/steps-2rank-rank0.sqlite" | grep -o '16 steady of 16')"
"$GPT" report "$C/steps-2rank-rank0.sqlite" "$C/steps-2rank-rank1.sqlite" >"$TMP/steps-job.txt"
expect "--steps window, 2 ranks: the straggler's iterations" "rank 1 held up the job in 6 of 16 iterations
40 43 46 49 52 55" "$(sed -n 's/.*critical straggler  \(rank 1 held up the job in [0-9]* of [0-9]* iterations\).*/\1/p; s/^    - step \([0-9]*\):.*/\1/p' \
	"$TMP/steps-job.txt" | { read -r head; echo "$head"; sort -n | paste -sd' '; })"

# ... and a window that closed before the last step's collectives started is not a trace ended early
expect "--steps window, 2 ranks: the short window said as such" "rank 0's window closed 4 collectives before the others'" \
	"$(grep -o "rank 0's window closed 4 collectives before the others'" "$TMP/steps-job.txt")"

[ $failures -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"
