#!/bin/sh
# Capture windows under `gpt-trace run` (--capture-range=cudaProfilerApi with each
# --capture-range-end, --delay, --duration, --max-size), with the real library over the stand-in
# CUPTI (fake_cupti.c, driven by fake_launch.c: FAKE_PROFILER plays cudaProfilerStart/Stop around
# launches, FAKE_BATCH_MS spaces batches of 1000 launches in time). Each case checks that the
# trace holds exactly its windows' kernels (by correlation id: launch i has id i), that
# GPT_CAPTURE_WINDOWS says what opened and closed each window, and that the program's output and
# exit status are those of the untraced run. Exit 0 pass, 1 fail, 77 skip.
#
# Usage: capture.sh CASE GPT_TRACE LIBRARY BINDIR
set -u
case_name=$1
gpt=$2
lib=$3
bindir=$4
fake=$bindir/libfake_cupti.so
work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-capture-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
command -v sqlite3 >/dev/null || { echo "skipped: sqlite3 (the command) is needed"; exit 77; }

fail() {
	echo "FAIL ($case_name): $*"
	for f in out err; do
		[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
	done
	exit 1
}

# run N [gpt-trace run options...]: fake_launch N launches then exit 0, under the launcher.
run() {
	n=$1
	shift
	env GPT_TRACE_CUPTI_LIB="$fake" "$gpt" run -o "$work/t.sqlite" --commit-ms 100 "$@" -- \
		"$bindir/fake_launch" "$lib" "$fake" exit "$n" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc, untraced 0"
	[ "$(cat out)" = "launched $n" ] || fail "stdout differs from the untraced run"
}

q() {
	sqlite3 -readonly t.sqlite "$1"
}

# kernels EXPECTED: the correlation ids kept, as "count min max".
kernels() {
	got=$(q 'SELECT count(*), min(correlationId), max(correlationId) FROM CUPTI_ACTIVITY_KIND_KERNEL' | tr '|' ' ')
	[ "$got" = "$1" ] || fail "kernels (count min max): expected [$1], got [$got]"
}

# windows EXPECTED: "openedBy-closedBy" of each window, space-separated.
windows() {
	got=$(q "SELECT group_concat(openedBy || '-' || coalesce(closedBy, 'open'), ' ') FROM (SELECT * FROM GPT_CAPTURE_WINDOWS ORDER BY id)")
	[ "$got" = "$1" ] || fail "windows: expected [$1], got [$got]"
	# Every kept kernel starts inside a window (no window: the whole run was recorded).
	[ -z "$1" ] && return 0
	out=$(q 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM GPT_CAPTURE_WINDOWS w WHERE k.start >= w.start AND k.start < coalesce(w.end, 1 << 62))')
	[ "$out" = 0 ] || fail "$out kernels outside every window"
}

meta() {
	q "SELECT value FROM GPT_META WHERE name = '$1'"
}

case $case_name in
profiler_stop)
	FAKE_PROFILER=10-20,30-35 run 50 -c cudaProfilerApi
	kernels "11 10 20"
	windows "cudaProfilerStart-cudaProfilerStop"
	[ "$(meta capture_range)" = cudaProfilerApi ] || fail "capture_range meta"
	[ "$(meta capture_range_end)" = stop ] || fail "capture_range_end meta"
	[ "$(meta capture_records_outside)" -ge 39 ] || fail "capture_records_outside: $(meta capture_records_outside)"
	;;
profiler_repeat)
	FAKE_PROFILER=10-20,30-35,40-42 run 50 --capture-range=cudaProfilerApi --capture-range-end=repeat
	kernels "20 10 42"
	windows "cudaProfilerStart-cudaProfilerStop cudaProfilerStart-cudaProfilerStop cudaProfilerStart-cudaProfilerStop"
	;;
profiler_repeat_n)
	FAKE_PROFILER=10-20,30-35,40-42 run 50 -c cudaProfilerApi --capture-range-end repeat:2
	kernels "17 10 35"
	windows "cudaProfilerStart-cudaProfilerStop cudaProfilerStart-cudaProfilerStop"
	[ "$(meta capture_range_end)" = repeat:2 ] || fail "capture_range_end meta"
	;;
profiler_none)
	FAKE_PROFILER=10-20,30-35 run 50 -c cudaProfilerApi --capture-range-end none
	kernels "41 10 50"
	windows "cudaProfilerStart-exit"
	;;
profiler_never)
	# No cudaProfilerStart: a trace with no window and no rows, saying so.
	run 50 -c cudaProfilerApi
	[ -f t.sqlite ] || fail "no trace"
	kernels "0  "
	windows ""
	[ "$(meta capture_records_outside)" -ge 50 ] || fail "capture_records_outside: $(meta capture_records_outside)"
	;;
profiler_duration)
	# --duration caps each range: launches 1000 apart in time by 1 s, the range spans them all.
	FAKE_PROFILER=500-2500 FAKE_BATCH_MS=1000 run 3000 -c cudaProfilerApi -d 0.5
	kernels "501 500 1000"
	windows "cudaProfilerStart-duration"
	;;
delay_duration)
	# Batches of 1000 launches at about 0, 1 and 2 s; the window [0.5 s, 1.5 s] holds the second.
	FAKE_BATCH_MS=1000 run 3000 --delay 0.5 --duration 1
	kernels "1000 1001 2000"
	windows "delay-duration"
	[ "$(meta capture_delay_ns)" = 500000000 ] || fail "capture_delay_ns meta"
	;;
delay)
	FAKE_BATCH_MS=1000 run 3000 -y 1.5
	kernels "1000 2001 3000"
	windows "delay-exit"
	;;
duration)
	FAKE_BATCH_MS=1000 run 3000 -d 0.5
	kernels "1000 1 1000"
	windows "start-duration"
	;;
max_size)
	# 256 KiB: recording stops there, the trace is finished cleanly, one line says so.
	FAKE_BATCH_MS=10 run 20000 --max-size 256K
	size=$(stat -c %s t.sqlite)
	[ "$size" -le $((256 * 1024 + 200 * 1024)) ] || fail "trace is $size bytes"
	k=$(q 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
	[ "$k" -gt 100 ] && [ "$k" -lt 20000 ] || fail "$k kernels kept"
	kernels "$k 1 $k"
	windows "start-max-size"
	[ "$(q 'SELECT start >= 0 FROM GPT_CAPTURE_WINDOWS')" = 1 ] || fail "a window before the trace's origin"
	[ "$(grep -c "reached --max-size" err)" = 1 ] || fail "expected one --max-size line"
	grep -q "^gpt-trace: trace '$work/t.sqlite' reached --max-size 0\.2 MiB ([0-9]* bytes) at [0-9.]* s: recording stopped" err ||
		fail "--max-size line"
	[ "$(meta trace_complete)" = 1 ] || fail "trace not finished cleanly"
	[ "$(meta max_size_bytes)" = 262144 ] || fail "max_size_bytes meta"
	;;
nvtx)
	# The NVTX range "capture" around launches 10-20 and 30-35 (each launch in an "iter" range
	# of its own): the first range only; its "iter" ranges are kept, the ones outside are not.
	FAKE_NVTX=10-20,30-35 run 50 -c nvtx -p capture
	kernels "11 10 20"
	windows "nvtx range start-nvtx range end"
	[ "$(q "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'iter'")" = 11 ] || fail "iter ranges kept"
	[ "$(q "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'capture'")" = 1 ] || fail "capture range kept"
	[ "$(meta capture_nvtx)" = capture ] || fail "capture_nvtx meta"
	;;
nvtx_repeat)
	FAKE_NVTX=10-20,30-35 run 50 -c nvtx -p capture --capture-range-end repeat
	kernels "17 10 35"
	windows "nvtx range start-nvtx range end nvtx range start-nvtx range end"
	;;
nvtx_other_domain)
	# The range is in the default domain, not in 'other': no window.
	FAKE_NVTX=10-20 run 50 -c nvtx -p capture@other
	kernels "0  "
	windows ""
	;;
steps)
	# 10 launches per ProfilerStep#n range, steps counted from 1: steps 3-5 are launches 21-50.
	FAKE_STEPS=10 run 100 --steps 3-5
	kernels "30 21 50"
	windows "step start-step end"
	[ "$(q "SELECT group_concat(text, ' ') FROM (SELECT text FROM NVTX_EVENTS WHERE text LIKE 'ProfilerStep#%' ORDER BY start)")" = "ProfilerStep#2 ProfilerStep#3 ProfilerStep#4" ] ||
		fail "step ranges kept"
	[ "$(meta capture_steps)" = 3-5 ] || fail "capture_steps meta"
	;;
steps_named)
	# Steps named by -p, each with an "iter" range per launch inside (pops of those do not end a step).
	FAKE_STEPS=10 FAKE_NVTX=1-1 run 100 --steps 2-2 -p 'ProfilerStep#*'
	kernels "10 11 20"
	windows "step start-step end"
	;;
on_demand)
	# --start-later: armed, nothing recorded until `gpt-trace start PID`, then until `stop`.
	# 16 batches of 1000 launches, 0.5 s apart (8 s at least, a loaded machine only stretches the
	# pauses); start sent 1 s after arming (it opens 1 s after that), stop 2.5 s later: the window
	# holds whole batches and the program is still running when stop reaches it, with 4.5 s to
	# spare for a slow shell.
	export GPT_TRACE_CONTROL_DIR="$work/control"
	"$gpt" start >start.out 2>start.err && fail "start with no armed process succeeded"
	grep -q "^gpt-trace: start: no armed process on this host" start.err || fail "start: $(cat start.err)"
	env GPT_TRACE_CUPTI_LIB="$fake" FAKE_BATCH_MS=500 "$gpt" run -o "$work/t.sqlite" --commit-ms 100 \
		--start-later -- "$bindir/fake_launch" "$lib" "$fake" exit 16000 >out 2>err &
	launcher=$!
	for i in $(seq 50); do ls control/*.armed >/dev/null 2>&1 && break; sleep 0.1; done
	armed=$(ls control/*.armed 2>/dev/null | head -1)
	[ -n "$armed" ] || fail "no .armed file"
	pid=$(basename "$armed" .armed)
	grep -q fake_launch "$armed" || fail ".armed holds no command line: $(cat "$armed")"
	sleep 1
	"$gpt" start "$pid" >start.out 2>start.err || fail "start exited $?: $(cat start.err)"
	grep -q "^gpt-trace: start sent to process $pid (.*fake_launch" start.out || fail "start: $(cat start.out)"
	sleep 2.5
	"$gpt" stop all >stop.out 2>stop.err || fail "stop exited $?: $(cat stop.err)"
	wait $launcher
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ "$(cat out)" = "launched 16000" ] || fail "stdout"
	windows "start command-stop command"
	got=$(q 'SELECT count(*), max(correlationId) - min(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_KERNEL' | tr '|' ' ')
	set -- $got
	[ "$1" = "$2" ] && [ "$1" -ge 1000 ] && [ "$1" -lt 16000 ] || fail "kernels (count span): $got"
	[ "$(meta capture_start_later)" = 1 ] || fail "capture_start_later meta"
	[ -e "$armed" ] && fail ".armed left behind"
	"$gpt" stop "$pid" >stop.out 2>stop.err && fail "stop of a finished process succeeded"
	;;
on_demand_duration)
	# `gpt-trace start all --duration 1` and no stop: one window of about a second, closed by the
	# duration, whole batches of launches inside it (a 2-rank torchrun job kept none, 2026-11-27).
	# The program runs 8 s at least (16 batches, 0.5 s apart); the window closes about 3 s after
	# arming, so the duration, not the exit, ends it.
	export GPT_TRACE_CONTROL_DIR="$work/control"
	env GPT_TRACE_CUPTI_LIB="$fake" FAKE_BATCH_MS=500 "$gpt" run -o "$work/t.sqlite" --commit-ms 100 \
		--start-later -- "$bindir/fake_launch" "$lib" "$fake" exit 16000 >out 2>err &
	launcher=$!
	for i in $(seq 50); do ls control/*.armed >/dev/null 2>&1 && break; sleep 0.1; done
	sleep 1
	"$gpt" start all --duration 1 >start.out 2>start.err || fail "start exited $?: $(cat start.err)"
	wait $launcher
	[ $? -eq 0 ] || fail "exit status"
	windows "start command-duration"
	got=$(q 'SELECT count(*), max(correlationId) - min(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_KERNEL' | tr '|' ' ')
	set -- $got
	[ "$1" = "$2" ] && [ "$1" -ge 1000 ] && [ "$1" -lt 16000 ] || fail "kernels (count span): $got"
	;;
on_demand_starting)
	# `gpt-trace start` while the process has not started CUDA yet (a Python program still
	# importing torch): it is reached and said to be starting, and its window opens when CUDA
	# starts, here after the command's instant had passed, so every launch is kept.
	export GPT_TRACE_CONTROL_DIR="$work/control"
	env GPT_TRACE_CUPTI_LIB="$fake" FAKE_INIT_AFTER="$work/go" FAKE_BATCH_MS=100 "$gpt" run \
		-o "$work/t.sqlite" --commit-ms 100 --start-later -- "$bindir/fake_launch" "$lib" "$fake" \
		exit 3000 >out 2>err &
	launcher=$!
	for i in $(seq 100); do ls control/*.armed >/dev/null 2>&1 && break; sleep 0.1; done
	armed=$(ls control/*.armed 2>/dev/null | head -1)
	[ -n "$armed" ] || { touch go; fail "no .armed file before CUDA started"; }
	grep -qx starting "$armed" || { touch go; fail ".armed does not say starting: $(cat "$armed")"; }
	"$gpt" start all >start.out 2>start.err || { touch go; fail "start exited $?: $(cat start.err)"; }
	grep -q "^gpt-trace: start sent to process [0-9]* (.*fake_launch.*): still starting, CUDA not initialised yet; it acts when CUDA starts$" start.out ||
		{ touch go; fail "start: $(cat start.out)"; }
	sleep 1.2	# past the instant the command named (1 s after it was sent)
	touch go
	wait $launcher
	[ $? -eq 0 ] || fail "exit status"
	[ "$(cat out)" = "launched 3000" ] || fail "stdout"
	windows "start command-exit"
	kernels "3000 1 3000"
	[ "$(meta capture_command_late_ns)" -gt 0 ] 2>/dev/null || fail "capture_command_late_ns: '$(meta capture_command_late_ns)'"
	[ -e "$armed" ] && fail ".armed left behind"
	# A process that never starts CUDA is listed while it runs, and leaves nothing at exit.
	"$gpt" run --start-later -- sh -c 'cat "$GPT_TRACE_CONTROL_DIR"/*.armed' >out 2>err ||
		fail "sh under --start-later exited $?"
	grep -q "^sh -c" out && grep -qx starting out || fail "sh's .armed: $(cat out)"
	[ -z "$(ls control)" ] || fail "left in the control folder: $(ls control)"
	;;
on_demand_together)
	# Two armed processes, one `gpt-trace start all`: both windows open at the same ns, the
	# instant the command names (1 s after it, cli/run-control.h), though each reads it at its own
	# tick; the duration closes both at the same ns too. The mechanism is asserted, not the speed
	# of a loaded machine: a process whose tick came after the instant opened late and says so
	# (capture_command_late_ns), and the duration still ends at the common instant.
	command -v python3 >/dev/null || { echo "skipped: python3 is needed"; exit 77; }
	export GPT_TRACE_CONTROL_DIR="$work/control"
	for i in 1 2; do
		env GPT_TRACE_CUPTI_LIB="$fake" FAKE_BATCH_MS=500 "$gpt" run -o "$work/t$i.sqlite" \
			--commit-ms $((i * 300)) --start-later -- "$bindir/fake_launch" "$lib" "$fake" exit 16000 \
			>out$i 2>err$i &
	done
	for i in $(seq 50); do [ "$(ls control/*.armed 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.1; done
	sent=$(python3 -c 'import time; print(time.monotonic_ns())')
	# --duration=S, as getopt takes it (until 2026-11-27 start read only '--duration S')
	"$gpt" start all --duration=1 >start.out 2>start.err || fail "start exited $?: $(cat start.err)"
	wait
	# on the host's clock: trace times count from the trace's origin (GPT_META time_origin_ns)
	abs="SELECT start + o, \"end\" + o FROM GPT_CAPTURE_WINDOWS,
		(SELECT CAST(value AS INTEGER) AS o FROM GPT_META WHERE name = 'time_origin_ns')"
	w1=$(sqlite3 -readonly t1.sqlite "$abs")
	w2=$(sqlite3 -readonly t2.sqlite "$abs")
	late1=$(sqlite3 -readonly t1.sqlite "SELECT value FROM GPT_META WHERE name = 'capture_command_late_ns'")
	late2=$(sqlite3 -readonly t2.sqlite "SELECT value FROM GPT_META WHERE name = 'capture_command_late_ns'")
	python3 - "$sent" "$w1" "$w2" "${late1:-0}" "${late2:-0}" <<'PY' || fail "windows $w1 and $w2 (late ${late1:-0}, ${late2:-0}), command sent at $sent"
import sys
sent = int(sys.argv[1])
(a1, e1), (a2, e2) = ([int(v) for v in w.split("|")] for w in sys.argv[2:4])
late1, late2 = int(sys.argv[4]), int(sys.argv[5])
# the instant named: the window's start less its lateness, the same ns in both
assert a1 - late1 == a2 - late2, "not together: instants %d and %d" % (a1 - late1, a2 - late2)
assert e1 == e2 and e1 - (a1 - late1) == 1_000_000_000, "duration"
# the command took its clock after `sent`, and named 1 s after that
assert a1 - late1 - sent >= 1_000_000_000, "start %d ns after the command" % (a1 - late1 - sent)
PY
	for i in 1 2; do
		n=$(sqlite3 -readonly t$i.sqlite "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
		[ "$n" -ge 1000 ] || fail "process $i kept $n kernels"
	done
	;;
plain)
	# No capture option: every launch, no window rows, no capture facts.
	run 50
	kernels "50 1 50"
	windows ""
	[ -z "$(meta capture_range)" ] || fail "capture facts without capture options"
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS ($case_name)"
