#!/usr/bin/env bash
# Crash-safe traces on a GPU machine (issue 12): for each death of samples/crash.cu (segfault 0.5 s
# after the first kernel and after some seconds, abort, _exit, an uncaught C++ exception, SIGKILL at
# a random time) run under `gpt-trace run`, check the trace: readable by `gpt-trace report`, by
# python3's sqlite3 read-only (mode=ro) and by the sqlite3 command with -readonly when there is one,
# no journal left, exit status as untraced, kernels lost: 0 (≤ 1 s worth for SIGKILL), the
# launcher's summary true (wrote / recovered). Then a SIGKILL without the launcher (hot journal)
# read by the analyzer from a recovered copy in a read-only folder; PyTorch: torch.profiler's CUDA
# kernel count with and without gpt-trace (equal), os._exit keeps every kernel. Last, the
# per-launch cost of the rollback journal (default) against WAL (GPT_TRACE_JOURNAL=wal), medians of
# alternating runs of launch_bound. Prints PASS/FAIL per check, info lines, "N passed, M failed";
# exits non-zero when a check failed.
#
# usage: tests/gpu/crash.sh [-b BUILD] [-w WORKDIR] [-r RUNS] [-n LAUNCHES] [-F FIXTURE_DIR]
#   -b BUILD      build folder with bin/gpt-trace, bin/libgpt_inject.so, bin/crash, bin/launch_bound
#                 (default: $BUILD, else build)
#   -w WORKDIR    traces and logs (default: a new folder under ${TMPDIR:-/tmp})
#   -r RUNS       journal-cost runs per mode (default 3); -n LAUNCHES per run (default 200000)
#   -F DIR        copy the small crash traces there as fixtures
set -u -o pipefail

build=${BUILD:-build}
work=
runs=3
launches=200000
fixtures=
while getopts "b:w:r:n:F:h" opt; do
	case $opt in
	b) build=$OPTARG ;;
	w) work=$OPTARG ;;
	r) runs=$OPTARG ;;
	n) launches=$OPTARG ;;
	F) fixtures=$OPTARG ;;
	*) sed -n '/^# usage:/,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$build/bin" 2>/dev/null && pwd) || { echo "crash.sh: no '$build/bin'" >&2; exit 2; }
gpt=$bin/gpt-trace
for f in "$gpt" "$bin/libgpt_inject.so" "$bin/crash" "$bin/launch_bound"; do
	[ -e "$f" ] || { echo "crash.sh: '$f' missing: build with nvcc and CUPTI" >&2; exit 2; }
done
[ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-trace-crash.XXXXXX")
mkdir -p "$work" && rm -rf "${work:?}"/*
cd "$work" || exit 2
have_sqlite3=0
command -v sqlite3 >/dev/null && have_sqlite3=1
passed=0
failed=0

check() {	# check LABEL WHAT CONDITION-STATUS DETAIL
	if [ "$3" = 0 ]; then
		echo "PASS $1: $2"
		passed=$((passed + 1))
	else
		echo "FAIL $1: $2 ($4)"
		failed=$((failed + 1))
	fi
}

# The kernel count and a GPT_META value, read-only through python's sqlite3.
q() {
	python3 - "$1" "$2" <<'EOF'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(db.execute(sys.argv[2]).fetchone()[0])
EOF
}

kernels() { q "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName WHERE s.value LIKE 'empty_kernel%'"; }
meta() { q "$1" "SELECT coalesce((SELECT value FROM GPT_META WHERE name = '$2'), '')"; }

readable() {	# readable LABEL TRACE
	local t=$2 rc
	"$gpt" report "$t" >"$1.report" 2>"$1.report.err"
	rc=$?
	check "$1" "gpt-trace report reads the trace" $rc "exit $rc: $(head -c 300 "$1.report.err")"
	q "$t" "SELECT count(*) FROM GPT_META" >/dev/null 2>"$1.ro.err"
	check "$1" "python sqlite3 mode=ro reads the trace" $? "$(head -c 300 "$1.ro.err")"
	if [ $have_sqlite3 = 1 ]; then
		sqlite3 -readonly "$t" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL' >/dev/null 2>"$1.sq.err"
		check "$1" "sqlite3 -readonly reads the trace" $? "$(head -c 300 "$1.sq.err")"
	fi
	ls "$t"-journal "$t"-wal >/dev/null 2>&1
	[ $? != 0 ]
	check "$1" "no journal left beside the trace" $? "$(ls "$t"-*)"
}

last_launched() { grep '^launched ' "$1" | tail -n 1 | awk '{print $2}'; }

# --- deaths of the sample, each traced and untraced -------------------------------------------
for mode in segv-early segv-late abort _exit exception; do
	label=$mode
	(ulimit -c 0; exec "$bin/crash" --mode "$mode" --seconds 4) >"$label.bare.out" 2>"$label.bare.err"
	bare=$?
	rm -f "$label.sqlite"*
	(ulimit -c 0; exec timeout 120 "$gpt" run -o "$work/$label.sqlite" -- "$bin/crash" --mode "$mode" \
		--seconds 4) >"$label.out" 2>"$label.err"
	rc=$?
	[ $rc = $bare ]
	check "$label" "exit status $rc as untraced" $? "untraced $bare"
	n=$(last_launched "$label.out")
	[ -f "$label.sqlite" ]
	check "$label" "trace written" $? "no $label.sqlite; stderr: $(head -c 300 "$label.err")"
	[ -f "$label.sqlite" ] || continue
	readable "$label" "$label.sqlite"
	k=$(kernels "$label.sqlite")
	[ "$k" = "$n" ]
	check "$label" "0 kernels lost ($k of $n)" $? "launched $n, traced $k"
	grep -q "^gpt-trace: wrote $work/$label.sqlite: " "$label.err"
	check "$label" "summary says wrote" $? "$(grep gpt-trace "$label.err" | head -3)"
	reason=$(meta "$label.sqlite" exit_reason)
	case $mode in segv*) want='signal 11' ;; _exit) want='_exit(3)' ;; *) want='signal 6' ;; esac
	[ "$reason" = "$want" ]
	check "$label" "exit_reason '$want'" $? "'$reason'"
done

# --- SIGKILL at a random time, under the launcher ---------------------------------------------
label=sigkill
delay_ms=$((2000 + RANDOM % 4000))
rm -f sigkill.sqlite*
"$gpt" run -o "$work/sigkill.sqlite" -- "$bin/crash" --mode sigkill --seconds 60 \
	>sigkill.out 2>sigkill.err &
launcher=$!
sleep "$(awk "BEGIN{print $delay_ms/1000}")"
# The program is the launcher's child, named crash.
program=$(pgrep -P "$launcher" -x crash | head -n 1)
[ -n "$program" ] && kill -KILL "$program"
wait "$launcher"
rc=$?
[ $rc = 137 ]
check sigkill "launcher exits 137 (program killed at ${delay_ms} ms)" $? "exit $rc"
if [ -f sigkill.sqlite ]; then
	readable sigkill sigkill.sqlite
	n=$(last_launched sigkill.out)
	k=$(kernels sigkill.sqlite)
	# Launch rate from the sample's own lines: kernels per second over the run.
	rate=$(grep '^launched ' sigkill.out | tail -n 1 | awk '{split($3, a, "="); print ($2 * 1000 / a[2])}')
	lost=$((n - k))
	awk "BEGIN{exit !($lost <= $rate * 1.0 + 1000)}"
	check sigkill "kernels lost ≤ 1 s worth ($lost of $n; 1 s = $rate)" $? "traced $k"
	grep -q "^gpt-trace: recovered $work/sigkill.sqlite (process $program killed by signal 9" sigkill.err
	check sigkill "summary says recovered" $? "$(grep gpt-trace sigkill.err | head -3)"
	grep -q "no process used CUDA" sigkill.err
	[ $? != 0 ]
	check sigkill "no 'no process used CUDA'" $? "$(cat sigkill.err)"
	[ "$(meta sigkill.sqlite exit_reason)" = "signal 9" ] && [ "$(meta sigkill.sqlite trace_complete)" = 0 ]
	check sigkill "GPT_META exit_reason 'signal 9', trace_complete 0" $? "$(meta sigkill.sqlite exit_reason)"
	echo "info sigkill: killed at $delay_ms ms, launched $n, traced $k, recovered_by '$(meta sigkill.sqlite recovered_by)'"
else
	check sigkill "trace exists" 1 "$(cat sigkill.err)"
fi

# --- SIGKILL without the launcher: a hot journal, read from a recovered copy -------------------
mkdir -p ro tmp
lib=$bin/libgpt_inject.so
env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" \
	GPT_TRACE_OUTPUT="$work/ro/hot.sqlite" GPT_TRACE_COMMIT_MS=3000 \
	"$bin/crash" --mode sigkill --seconds 60 >hot.out 2>hot.err &
program=$!
sleep 4.5
kill -KILL "$program"
wait "$program" 2>/dev/null
if [ -s ro/hot.sqlite-journal ]; then
	chmod a-w ro ro/*
	TMPDIR=$work/tmp "$gpt" report ro/hot.sqlite >hot.report 2>hot.report.err
	check hot_journal "report reads it from a read-only folder" $? "$(head -c 300 hot.report.err)"
	grep -q "read from a recovered copy" hot.report.err
	check hot_journal "with the note" $? "$(cat hot.report.err)"
	chmod u+w ro ro/*
else
	echo "info hot_journal: no hot journal left at the kill (killed between commits); not checked"
fi

# --- PyTorch ------------------------------------------------------------------------------------
if python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
	python3 "$here/torch_profiler.py" >torch.bare.out 2>torch.bare.err
	bare=$(awk '/^profiler_cuda_kernels/{print $2}' torch.bare.out)
	"$gpt" run -o "$work/torch-%p.sqlite" -- python3 "$here/torch_profiler.py" >torch.out 2>torch.err
	rc=$?
	traced=$(awk '/^profiler_cuda_kernels/{print $2}' torch.out)
	[ $rc = 0 ] && [ -n "$bare" ] && [ "$bare" = "$traced" ] && [ "$bare" -gt 0 ]
	check torch_profiler "torch.profiler's CUDA kernels the same with gpt-trace ($traced) as without ($bare)" $? \
		"exit $rc; $(grep -v '^$' torch.err | tail -3)"
	grep -q "the program's own profiler took CUPTI" torch.err
	check torch_profiler "one line says gpt-trace stepped aside" $? "$(grep gpt-trace torch.err | head -3)"
	echo "info torch_profiler: $(grep gpt-trace torch.err | tr '\n' ' ')"

	rm -f torch-exit*.sqlite*
	"$gpt" run -o "$work/torch-normal.sqlite" -- python3 "$here/torch_profiler.py" --exit normal \
		>torch-normal.out 2>torch-normal.err
	"$gpt" run -o "$work/torch-exit.sqlite" -- python3 "$here/torch_profiler.py" --exit 3 \
		>torch-exit.out 2>torch-exit.err
	rc=$?
	[ $rc = 3 ]
	check os_exit "os._exit(3): exit status 3" $? "exit $rc"
	if [ -f torch-exit.sqlite ] && [ -f torch-normal.sqlite ]; then
		readable os_exit torch-exit.sqlite
		a=$(q torch-exit.sqlite "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
		b=$(q torch-normal.sqlite "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
		[ "$a" = "$b" ] && [ "$a" -gt 0 ]
		check os_exit "0 kernels lost: $a as with a normal exit ($b)" $? "exit $a, normal $b"
		[ "$(meta torch-exit.sqlite exit_reason)" = "_exit(3)" ]
		check os_exit "exit_reason '_exit(3)'" $? "$(meta torch-exit.sqlite exit_reason)"
		grep -q "^gpt-trace: wrote $work/torch-exit.sqlite" torch-exit.err
		check os_exit "summary says wrote" $? "$(grep gpt-trace torch-exit.err | head -3)"
	else
		check os_exit "traces written" 1 "$(cat torch-exit.err)"
	fi
else
	echo "info torch: no PyTorch with CUDA here; torch.profiler and os._exit checks skipped"
fi

# --- journal mode: per-launch cost -------------------------------------------------------------
med() { sort -n | awk '{a[NR]=$1} END{print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
: >cost.delete; : >cost.wal; : >cost.bare
for i in $(seq "$runs"); do
	"$bin/launch_bound" --launches "$launches" | grep -o 'us_per_launch=[0-9.]*' | cut -d= -f2 >>cost.bare
	rm -f j.sqlite*
	"$gpt" run -q -f -o "$work/j.sqlite" -- "$bin/launch_bound" --launches "$launches" |
		grep -o 'us_per_launch=[0-9.]*' | cut -d= -f2 >>cost.delete
	rm -f j.sqlite*
	GPT_TRACE_JOURNAL=wal "$gpt" run -q -f -o "$work/j.sqlite" -- "$bin/launch_bound" --launches "$launches" |
		grep -o 'us_per_launch=[0-9.]*' | cut -d= -f2 >>cost.wal
	jm=$(q j.sqlite "PRAGMA journal_mode" 2>/dev/null)
done
echo "info journal: us per launch, medians of $runs runs of $launches launches: bare $(med <cost.bare)," \
	"rollback journal (DELETE, default) $(med <cost.delete), WAL $(med <cost.wal) (last WAL trace's journal_mode: ${jm:-?})"

if [ -n "$fixtures" ]; then
	mkdir -p "$fixtures"
	for t in segv-early abort _exit exception sigkill; do
		[ -f "$t.sqlite" ] && cp "$t.sqlite" "$fixtures/crash-$t.sqlite"
	done
	echo "info fixtures: copied to $fixtures"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
