#!/usr/bin/env bash
# Capture windows on a PyTorch loop (issue 25), with known answers from tests/gpu/capture_torch.py
# (step i, an NVTX range ProfilerStep#i, launches i element-wise kernels and one matrix product,
# then synchronizes). A whole trace of the same program gives each step's kernels (by name, those
# that start inside its range); each windowed trace must hold exactly the kernels of its steps:
#   steps      --steps 3-5                                     steps 3, 4, 5
#   nvtx       -c nvtx -p 'ProfilerStep#4'                     step 4
#   repeat     -c nvtx -p 'ProfilerStep#*' --capture-range-end repeat:3   steps 1, 2, 3 (3 windows)
#   profapi    -c cudaProfilerApi, torch.cuda.profiler.start/stop around steps 6-8   steps 6, 7, 8
#   ondemand   --start-later, `gpt-trace start all` 0.5 s after the process is armed (its CUDA
#              start), `gpt-trace stop all` 1 s later,
#              steps 50 ms apart: one window of whole, contiguous steps (at least 10)
# Each case also checks that the program's output (but its pid) and exit status are the untraced
# run's. Prints PASS/FAIL lines and "N passed, M failed"; exit 1 on any FAIL.
# usage: tests/gpu/capture-torch.sh BINDIR OUTDIR   (BINDIR holds gpt-trace and libgpt_inject.so)
set -u
bin=${1:?usage: capture-torch.sh BINDIR OUTDIR}
out=${2:?usage: capture-torch.sh BINDIR OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
prog=(python3 "$here/capture_torch.py")
mkdir -p "$out"
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
norm() { sed -E 's/pid=[0-9]+/pid=P/' "$1"; }

# run NAME "RUN OPTIONS" ARGS...: untraced, then traced; checks output and exit status.
run() {
	local name=$1 opts=$2
	shift 2
	"${prog[@]}" "$@" >"$out/$name.bare.out" 2>&1
	local brc=$?
	# shellcheck disable=SC2086
	"$bin/gpt-trace" run -f -o "$out/$name.sqlite" $opts -- "${prog[@]}" "$@" >"$out/$name.out" 2>"$out/$name.err"
	local rc=$?
	if [ "$rc" != "$brc" ]; then
		fail "$name exit" "status $rc, untraced $brc"
	elif ! diff <(norm "$out/$name.bare.out") <(norm "$out/$name.out") >/dev/null; then
		fail "$name output" "$(cat "$out/$name.out")"
	else
		pass "$name: output and exit status unchanged"
	fi
}

# check NAME "WHAT" PYTHON: compare the windowed trace with the whole one; prints ok or why not.
check() {
	local name=$1 what=$2 code=$3 res
	res=$(python3 - "$out/whole.sqlite" "$out/$name.sqlite" <<PY 2>&1
import collections, sqlite3, sys
whole, win = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
NAMES = "(SELECT value FROM StringIds WHERE id = k.shortName)"
def steps(db):
    rows = db.execute("SELECT COALESCE(n.text, s.value), n.start, n.end FROM NVTX_EVENTS n "
                      "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.end IS NOT NULL").fetchall()
    return {int(t.split('#')[1]): (a, b) for t, a, b in rows if t and t.startswith('ProfilerStep#')}
def kernels(db, a=None, b=None):
    sql = "SELECT %s, k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k" % NAMES
    return collections.Counter(n for n, s in db.execute(sql) if a is None or a <= s <= b)
W = steps(whole)
per_step = {i: kernels(whole, a, b) for i, (a, b) in W.items()}
def want(ids):
    c = collections.Counter()
    for i in ids: c += per_step[i]
    return c
got = kernels(win)
windows = win.execute("SELECT openedBy, closedBy FROM GPT_CAPTURE_WINDOWS ORDER BY id").fetchall()
$code
PY
)
	if [ "$(echo "$res" | tail -1)" = ok ]; then pass "$name: $what"; else fail "$name: $what" "$res"; fi
}

run whole "" --steps 12
check whole "every step has its i element-wise kernels and a matrix product" "
bad = [i for i in range(1, 13) if sum(per_step[i].values()) < i + 1]
print('ok' if len(W) == 12 and not bad else 'steps %s, short %s' % (sorted(W), bad))"

run steps "--steps 3-5" --steps 12
check steps "exactly the kernels of steps 3-5" "
print('ok' if got == want([3, 4, 5]) and len(windows) == 1 else 'got %s want %s windows %s' % (got, want([3, 4, 5]), windows))"

run nvtx "-c nvtx -p ProfilerStep#4" --steps 12
check nvtx "exactly the kernels of step 4" "
print('ok' if got == want([4]) and windows == [('nvtx range start', 'nvtx range end')] else 'got %s want %s windows %s' % (got, want([4]), windows))"

run repeat "-c nvtx -p ProfilerStep#* --capture-range-end repeat:3" --steps 12
check repeat "exactly the kernels of steps 1-3, three windows" "
print('ok' if got == want([1, 2, 3]) and len(windows) == 3 else 'got %s want %s windows %s' % (got, want([1, 2, 3]), windows))"

run profapi "-c cudaProfilerApi" --steps 12 --profiler-api 6-8
check profapi "exactly the kernels of steps 6-8 (torch.cuda.profiler)" "
print('ok' if got == want([6, 7, 8]) and windows == [('cudaProfilerStart', 'cudaProfilerStop')] else 'got %s want %s windows %s' % (got, want([6, 7, 8]), windows))"

# On demand: the untraced run, then the traced one started and stopped from outside.
"${prog[@]}" --steps 80 --pace 0.05 >"$out/ondemand.bare.out" 2>&1
export GPT_TRACE_CONTROL_DIR=$out/control
"$bin/gpt-trace" run -f --start-later -o "$out/ondemand.sqlite" -- "${prog[@]}" --steps 80 --pace 0.05 \
	>"$out/ondemand.out" 2>"$out/ondemand.err" &
pid=$!
# The library announces itself when CUDA starts (after torch's import): wait for that, then 0.5 s.
for _ in $(seq 100); do
	ls "$GPT_TRACE_CONTROL_DIR"/*.armed >/dev/null 2>&1 && break
	sleep 0.2
done
sleep 0.5
"$bin/gpt-trace" start all >"$out/ondemand.start" 2>&1
sleep 1
"$bin/gpt-trace" stop all >"$out/ondemand.stop" 2>&1
wait $pid
rc=$?
if [ "$rc" = 0 ] && diff <(norm "$out/ondemand.bare.out") <(norm "$out/ondemand.out") >/dev/null; then
	pass "ondemand: output and exit status unchanged"
else
	fail "ondemand" "status $rc: $(cat "$out/ondemand.out" "$out/ondemand.start" "$out/ondemand.stop")"
fi
# The whole trace has 12 steps: steps after 12 repeat step 12's pattern with more additions, so
# compare by counts: step i holds i element-wise kernels plus what step 1 holds besides its one.
check ondemand "one window of whole contiguous steps (10 or more)" "
steps_in = sorted(i for i, (a, b) in steps(win).items())
base = sum(per_step[1].values()) - 1
ok = len(windows) == 1 and len(steps_in) >= 10 and steps_in == list(range(steps_in[0], steps_in[-1] + 1))
n = sum(got.values())
expect = sum(i + base for i in steps_in)
print('ok' if ok and n == expect else 'windows %s steps %s kernels %d expected %d' % (windows, steps_in, n, expect))"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
