#!/bin/sh
# Deaths under `gpt-trace run`, with the real library over the stand-in CUPTI (fake_cupti.c,
# driven by fake_launch.c): each leaves a trace that `gpt-trace report`, `sqlite3 -readonly` and
# Python's sqlite3 (mode=ro) read, the launcher exits as the program did, and its summary says
# what the trace is (wrote / recovered / partial). Also: a trace left with a hot journal and no
# launcher is read by the analyzer from a recovered copy; a file size limit mid-run keeps what was
# committed and leaves the program alone. Exit 0 pass, 1 fail, 77 skip.
#
# Usage: crash.sh CASE GPT_TRACE LIBRARY BINDIR
set -u
case_name=$1
gpt=$2
lib=$3
bindir=$4
fake=$bindir/libfake_cupti.so
work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-crash-test.XXXXXX")
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cd "$work" || exit 1
command -v sqlite3 >/dev/null || { echo "skipped: sqlite3 (the command) is needed"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 is needed"; exit 77; }

fail() {
	echo "FAIL ($case_name): $*"
	for f in out err report.out report.err; do
		[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
	done
	exit 1
}

# run MODE N [env...]: the program under the launcher, cores off; sets rc.
run() {
	mode=$1 n=$2
	shift 2
	env GPT_TRACE_CUPTI_LIB="$fake" "$@" sh -c 'ulimit -c 0; exec "$@"' sh \
		"$gpt" run -o "$work/t.sqlite" --commit-ms 100 -- "$bindir/fake_launch" "$lib" "$fake" \
		"$mode" "$n" >out 2>err
	rc=$?
}

# kill_when CONDITION: the program (mode kill, FAKE_KILL_AFTER=$work/kill) kills itself once the
# shell test CONDITION holds, polled every 50 ms for at most 60 s. The kill comes from what the
# trace shows, not from a delay that a loaded machine can outrun.
kill_when() {
	i=0
	until eval "$1"; do
		i=$((i + 1))
		[ $i -lt 1200 ] || break
		sleep 0.05
	done
	touch "$work/kill"
}

kernels_ro() {
	sqlite3 -readonly "$1" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL'
}

meta_ro() {
	python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
row = db.execute("SELECT value FROM GPT_META WHERE name = ?", (sys.argv[2],)).fetchone()
print(row[0] if row else "")' "$1" "$2"
}

readable() {
	"$gpt" report "$1" >report.out 2>report.err || fail "gpt-trace report failed on $1"
	[ "$(kernels_ro "$1")" = "$2" ] || fail "sqlite3 -readonly: $(kernels_ro "$1") kernels, expected $2"
	[ -n "$(meta_ro "$1" exit_reason)" ] || fail "python3 mode=ro: no exit_reason"
	ls "$1"-* >/dev/null 2>&1 && fail "a journal is left beside $1"
	return 0
}

case $case_name in
segv_early | segv_late | abort | _exit | stack)
	mode=${case_name%_early}
	mode=${mode%_late}
	n=20
	[ "$case_name" = segv_late ] && n=5000
	run "$mode" $n FAKE_BATCH_MS=150
	case $mode in
	segv | stack) want=139 reason='signal 11' ;;
	abort) want=134 reason='signal 6' ;;
	_exit) want=3 reason='_exit(3)' ;;
	esac
	[ $rc -eq $want ] || fail "exit status $rc, expected $want"
	[ "$(cat out)" = "launched $n" ] || fail "stdout"
	grep -qx "gpt-trace: wrote $work/t.sqlite: $n kernels, 0 copies (0 B), GPU 0 busy .*" err ||
		fail "summary"
	[ "$(grep -c gpt-trace err)" = 1 ] || fail "expected one line from gpt-trace"
	readable t.sqlite $n
	[ "$(meta_ro t.sqlite exit_reason)" = "$reason" ] || fail "exit_reason $(meta_ro t.sqlite exit_reason)"
	;;
sigkill)
	# Killed once all 3000 launches are committed (commits every 100 ms): the launcher recovers
	# and annotates the file, and nothing committed is lost.
	(run kill 3000 FAKE_KILL_AFTER="$work/kill"; echo $rc >rc) &
	kill_when '[ "$(kernels_ro t.sqlite 2>/dev/null)" = 3000 ]'
	wait $!
	rc=$(cat rc)
	[ $rc -eq 137 ] || fail "exit status $rc, expected 137"
	grep -q "^gpt-trace: recovered $work/t.sqlite (process [0-9]* killed by signal 9 (Killed); .*): 3000 kernels," err ||
		fail "summary"
	grep -q 'no process used CUDA' err && fail "said no process used CUDA"
	readable t.sqlite 3000
	[ "$(meta_ro t.sqlite exit_reason)" = "signal 9" ] || fail "exit_reason"
	[ "$(meta_ro t.sqlite trace_complete)" = 0 ] || fail "trace_complete"
	[ -n "$(meta_ro t.sqlite ended_by_ns)" ] || fail "no ended_by_ns"
	;;
sigkill_hot)
	# Killed inside an open transaction: the schema committed and a journal beside it (rows are
	# written every 3 s, committed every 6 s). The hot journal is rolled back by the launcher.
	env GPT_TRACE_CUPTI_LIB="$fake" FAKE_KILL_AFTER="$work/kill" "$gpt" run -o "$work/t.sqlite" \
		--commit-ms 6000 -- "$bindir/fake_launch" "$lib" "$fake" kill 50 >out 2>err &
	pid=$!
	kill_when 'kernels_ro t.sqlite >/dev/null 2>&1 && [ -s t.sqlite-journal ]'
	wait $pid
	rc=$?
	[ $rc -eq 137 ] || fail "exit status $rc"
	grep -q "^gpt-trace: recovered $work/t.sqlite (process [0-9]* killed by signal 9" err || fail "summary"
	readable t.sqlite 0
	[ "$(meta_ro t.sqlite recovered_by)" = "gpt-trace run (journal rolled back)" ] || fail "recovered_by"
	;;
hot_journal_readonly)
	# No launcher: the hot journal stays. The analyzer reads a recovered copy (the folder and
	# file not writable) and says so; the file itself is untouched.
	mkdir ro
	env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" GPT_TRACE_CUPTI_LIB="$fake" \
		GPT_TRACE_COMMIT_MS=6000 FAKE_KILL_AFTER="$work/kill" GPT_TRACE_OUTPUT="$work/ro/t.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" kill 50 >out 2>err &
	pid=$!
	kill_when 'kernels_ro ro/t.sqlite >/dev/null 2>&1 && [ -s ro/t.sqlite-journal ]'
	wait $pid
	[ -s ro/t.sqlite-journal ] || fail "no hot journal left (the test's premise)"
	sqlite3 -readonly ro/t.sqlite 'SELECT count(*) FROM GPT_META' >/dev/null 2>&1 &&
		fail "sqlite3 -readonly read a hot-journal trace (the test's premise)"
	sum=$(cat ro/t.sqlite ro/t.sqlite-journal | cksum)
	chmod a-w ro/t.sqlite ro/t.sqlite-journal ro
	mkdir tmp
	TMPDIR=$work/tmp "$gpt" report ro/t.sqlite >report.out 2>report.err || fail "report failed"
	grep -q "^gpt-trace: warning: 'ro/t.sqlite' was left unfinished with a hot journal .*read from a recovered copy" report.err ||
		fail "no note"
	[ "$(grep -c . report.err)" = 1 ] || fail "expected one line on stderr"
	TMPDIR=$work/tmp "$gpt" stats ro/t.sqlite >/dev/null 2>&1 || fail "stats failed"
	[ -z "$(ls -A tmp)" ] || fail "the recovered copy was left in TMPDIR"
	[ "$(cat ro/t.sqlite ro/t.sqlite-journal | cksum)" = "$sum" ] || fail "the trace was modified"
	;;
file_size_limit)
	# ulimit -f mid-run: no SIGXFSZ for the program, its status and output unchanged, the trace
	# keeps what was committed, one line says why it stopped.
	(ulimit -f 600; env GPT_TRACE_CUPTI_LIB="$fake" FAKE_BATCH_MS=100 "$gpt" run -o "$work/t.sqlite" \
		--commit-ms 50 -- "$bindir/fake_launch" "$lib" "$fake" _exit 20000 >out 2>err)
	rc=$?
	[ $rc -eq 3 ] || fail "exit status $rc, expected 3"
	[ "$(cat out)" = "launched 20000" ] || fail "stdout"
	grep -qx "gpt-trace: process [0-9]*: cannot write trace '$work/t.sqlite': database or disk is full" err ||
		fail "no disk-full line"
	grep -q "^gpt-trace: partial trace $work/t.sqlite (process [0-9]* could not write it to the end; .*): [1-9][0-9]* kernels" err ||
		fail "summary"
	k=$(kernels_ro t.sqlite)
	[ "$k" -gt 0 ] && [ "$k" -lt 20000 ] || fail "$k kernels kept"
	"$gpt" report t.sqlite >report.out 2>report.err || fail "report failed"
	;;
no_cuda)
	# The launcher's last line is true: no process used CUDA only when no trace exists.
	"$gpt" run -- /bin/true >out 2>err || fail "exit status $?"
	[ "$(cat err)" = "gpt-trace: no trace was written: no process used CUDA" ] || fail "message"
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS ($case_name)"
exit 0
