#!/usr/bin/env bash
# Capture windows on the GPU (docs/run.md "Capture windows"), with known answers from
# samples/profiler_range.cu (iteration i launches add_one P times with grid i, then synchronizes;
# cudaProfilerStart/Stop bracket the ranges of iterations given):
#   range        -c cudaProfilerApi, range 10-20 of 50: exactly grids 10..20, P kernels each
#   repeat       --capture-range-end repeat, ranges 10-20,30-35: grids 10..20 and 30..35
#   stop         the same program with the default end (stop): only 10..20
#   delay        -y 0.4 -d 0.3 on a paced loop (--times): the window opens 0.4 s after the launch
#                and lasts 0.3 s; every iteration started well inside it is there, none well outside
#   max-size     --max-size 1M on 3000 iterations of 50 launches: one line, a finished trace of
#                about 1 MB, the first iterations only
#   ondemand     --start-later on 300 iterations 10 ms apart; `gpt-trace start PID` after 1.5 s,
#                `gpt-trace stop` 1 s later: one window, whole contiguous iterations, about 100
# Each case also checks that the program's output (but its pid and elapsed time) and exit status
# are those of the untraced run. Prints PASS/FAIL lines and "N passed, M failed"; exit 1 on any FAIL.
# usage: tests/gpu/capture.sh BINDIR OUTDIR   (BINDIR holds gpt-trace, libgpt_inject.so, profiler_range)
set -u
bin=${1:?usage: capture.sh BINDIR OUTDIR}
out=${2:?usage: capture.sh BINDIR OUTDIR}
mkdir -p "$out"
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
norm() { sed -E 's/pid=[0-9]+/pid=P/; s/elapsed_ms=[0-9.]+/elapsed_ms=T/' "$1"; }

# bare NAME ARGS...: the untraced run, for comparison.
bare() {
	local name=$1
	shift
	"$bin/profiler_range" "$@" >"$out/$name.bare.out" 2>"$out/$name.bare.err"
	echo $? >"$out/$name.bare.rc"
}

# traced NAME "RUN OPTIONS" ARGS...: the same under gpt-trace run; checks output and status.
traced() {
	local name=$1 opts=$2
	shift 2
	# shellcheck disable=SC2086
	"$bin/gpt-trace" run -f -o "$out/$name.sqlite" $opts -- "$bin/profiler_range" "$@" \
		>"$out/$name.out" 2>"$out/$name.err"
	local rc=$?
	if [ "$rc" != "$(cat "$out/$name.bare.rc")" ]; then
		fail "$name exit" "status $rc, untraced $(cat "$out/$name.bare.rc")"
	elif ! diff <(norm "$out/$name.bare.out") <(norm "$out/$name.out") >/dev/null; then
		fail "$name output" "$(cat "$out/$name.out")"
	else
		pass "$name: output and exit status unchanged"
	fi
}

# check NAME PYTHON: run a check over the trace (db: a sqlite3 connection, q(sql): rows) that
# prints "ok" or what is wrong.
check() {
	local name=$1 code=$2 res
	res=$(python3 - "$out/$name.sqlite" <<PY 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def q(sql): return db.execute(sql).fetchall()
def meta(n):
    r = q("SELECT value FROM GPT_META WHERE name = '%s'" % n)
    return r[0][0] if r else None
def grids(): return q("SELECT gridX, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY gridX ORDER BY gridX")
def windows(): return [(o, c) for o, c in q("SELECT openedBy, closedBy FROM GPT_CAPTURE_WINDOWS ORDER BY id")]
$code
PY
)
	if [ "$(echo "$res" | tail -1)" = ok ]; then pass "$name: $3"; else fail "$name: $3" "$res"; fi
}

P=3
bare range --iterations 50 --per-iteration $P --ranges 10-20
traced range "-c cudaProfilerApi" --iterations 50 --per-iteration $P --ranges 10-20
check range "
want = [(g, $P) for g in range(10, 21)]
print('ok' if grids() == want else 'grids %s' % grids())" "exactly grids 10..20, $P kernels each"
check range "
w = windows()
print('ok' if w == [('cudaProfilerStart', 'cudaProfilerStop')] else w)" "one window, cudaProfilerStart to cudaProfilerStop"

bare repeat --iterations 50 --per-iteration $P --ranges 10-20,30-35
traced repeat "-c cudaProfilerApi --capture-range-end repeat" --iterations 50 --per-iteration $P --ranges 10-20,30-35
check repeat "
want = [(g, $P) for g in list(range(10, 21)) + list(range(30, 36))]
print('ok' if grids() == want and len(windows()) == 2 else 'grids %s windows %s' % (grids(), windows()))" "grids 10..20 and 30..35, two windows"
cp "$out/repeat.bare.out" "$out/stop.bare.out"; cp "$out/repeat.bare.rc" "$out/stop.bare.rc"
traced stop "-c cudaProfilerApi" --iterations 50 --per-iteration $P --ranges 10-20,30-35
check stop "
want = [(g, $P) for g in range(10, 21)]
print('ok' if grids() == want and len(windows()) == 1 else 'grids %s windows %s' % (grids(), windows()))" "stop: only the first range"

# delay/duration: 100 iterations 10 ms apart (about 1 s after CUDA's start-up); the window is
# [launch + 0.4 s, launch + 0.7 s], launch taken here just before gpt-trace starts.
bare delay --iterations 100 --per-iteration $P --spin-us 10000 --ranges none
launch=$(python3 -c 'import time; print(time.monotonic_ns())')
traced delay "-y 0.4 -d 0.3" --iterations 100 --per-iteration $P --spin-us 10000 --ranges none \
	--times "$out/delay.times"
check delay "
origin = int(meta('time_origin_ns'))
(ws, we), = q('SELECT start, end FROM GPT_CAPTURE_WINDOWS')
ws += origin; we += origin
bad = []
if abs(ws - ($launch + 400000000)) > 50000000: bad.append('window opens %.3f s after launch' % ((ws - $launch) / 1e9))
if abs((we - ws) - 300000000) > 1000: bad.append('window lasts %d ns' % (we - ws))
got = dict(grids())
for line in open('$out/delay.times'):
    i, t = map(int, line.split())
    if ws + 2000000 <= t <= we - 5000000 and got.get(i) != $P: bad.append('iteration %d inside, %s kernels' % (i, got.get(i)))
    if (t + 5000000 < ws or t > we + 1000000) and i in got: bad.append('iteration %d outside, kept' % i)
if windows() != [('delay', 'duration')]: bad.append(windows())
print('ok' if not bad and got else bad or 'no kernels')" "window at launch+0.4 s for 0.3 s; iterations inside kept, outside not"

bare maxsize --iterations 3000 --per-iteration 50 --spin-us 0 --ranges none
traced maxsize "--max-size 1M" --iterations 3000 --per-iteration 50 --spin-us 0 --ranges none
if [ "$(grep -c 'reached --max-size' "$out/maxsize.err")" = 1 ]; then pass "maxsize: one line"; else fail "maxsize: one line" "$(cat "$out/maxsize.err")"; fi
check maxsize "
import os
size = os.path.getsize(sys.argv[1])
g = grids()
bad = []
if size > 1300000: bad.append('size %d' % size)
if windows() != [('start', 'max-size')]: bad.append(windows())
if meta('trace_complete') != '1': bad.append('not complete')
if not g or len(g) >= 3000 or [x for x, _ in g] != list(range(1, len(g) + 1)): bad.append('grids 1..%d? %s' % (len(g), g[-3:]))
print('ok' if not bad else bad)" "finished trace of about 1 MB holding the first iterations"
# On demand: armed, started and stopped from outside while it runs.
export GPT_TRACE_CONTROL_DIR="$out/control"
bare ondemand --iterations 300 --per-iteration $P --spin-us 10000 --ranges none
"$bin/gpt-trace" run -f -o "$out/ondemand.sqlite" --start-later -- "$bin/profiler_range" --iterations 300 \
	--per-iteration $P --spin-us 10000 --ranges none >"$out/ondemand.out" 2>"$out/ondemand.err" &
launcher=$!
for i in $(seq 100); do ls "$out"/control/*.armed >/dev/null 2>&1 && break; sleep 0.1; done
pid=$(basename "$(ls "$out"/control/*.armed | head -1)" .armed)
sleep 1.5
"$bin/gpt-trace" start "$pid" >"$out/ondemand.start" 2>&1
sleep 1
"$bin/gpt-trace" stop all >>"$out/ondemand.start" 2>&1
wait $launcher
rc=$?
cat "$out/ondemand.start"
if [ $rc = "$(cat "$out/ondemand.bare.rc")" ] && diff <(norm "$out/ondemand.bare.out") <(norm "$out/ondemand.out") >/dev/null; then
	pass "ondemand: output and exit status unchanged"
else
	fail "ondemand output" "rc $rc: $(cat "$out/ondemand.out")"
fi
check ondemand "
g = grids()
its = [x for x, _ in g]
bad = []
if windows() != [('start command', 'stop command')]: bad.append(windows())
if not g or its != list(range(its[0], its[-1] + 1)): bad.append('not contiguous: %s' % its)
elif not 50 <= len(its) <= 110: bad.append('%d iterations' % len(its))
if any(c != $P for _, c in g[1:-1]): bad.append('partial iterations inside: %s' % g)
print('ok' if not bad else bad)" "one window from start to stop, contiguous whole iterations"
ls -la "$out"/*.sqlite

# Cost between windows (informational, no PASS/FAIL): the launch-bound loop (200k empty kernels)
# bare, traced whole, traced with -c cudaProfilerApi never opened (the writer gates rows, CUPTI
# still records them), and --start-later never started (CUPTI's event kinds off), five runs each
# interleaved, ns per launch.
if [ -x "$bin/bench_launch_loop" ]; then
	for i in 1 2 3 4 5; do
		b=$("$bin/bench_launch_loop" 200000 | sed -n 's/.*ns_per_launch=\([0-9.]*\).*/\1/p')
		t=$("$bin/gpt-trace" run -q -f -o "$out/ov.sqlite" -- "$bin/bench_launch_loop" 200000 2>/dev/null |
			sed -n 's/.*ns_per_launch=\([0-9.]*\).*/\1/p')
		a=$("$bin/gpt-trace" run -q -f -c cudaProfilerApi -o "$out/ov.sqlite" -- "$bin/bench_launch_loop" 200000 2>/dev/null |
			sed -n 's/.*ns_per_launch=\([0-9.]*\).*/\1/p')
		l=$("$bin/gpt-trace" run -q -f --start-later -o "$out/ov.sqlite" -- "$bin/bench_launch_loop" 200000 2>/dev/null |
			sed -n 's/.*ns_per_launch=\([0-9.]*\).*/\1/p')
		echo "overhead run $i: ns/launch bare $b traced $t range-never-opened $a start-later-armed $l"
	done
	rm -f "$out/ov.sqlite"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
