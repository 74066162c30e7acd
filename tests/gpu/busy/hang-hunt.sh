#!/bin/bash
# Look for a hang under --gpu-metrics (seen once, 2026-11-27: a run of bench/overhead/modes.py's
# gm10k round 2 did not end in 4 minutes). Runs each program N times under gpt-trace run
# --gpu-metrics with GPT_TRACE_GPU_METRICS_DEBUG=1, each with a watchdog; a run still alive after
# LIMIT seconds has its threads dumped (name, kernel wait channel, syscall, the mapping a futex
# wait's address lies in, kernel stack, from /proc), where the program spins (perf, 1 s per running
# thread) and the user-space stacks of the threads that take SIGUSR2 (BINDIR/libstackdump.so,
# tests/gpu/busy/stackdump.c, preloaded when present), with the debug lines it printed, then is
# killed. Prints one line per run and the dumps.
# usage: hang-hunt.sh BINDIR [N] [LIMIT] [WORKLOADS] [METRICS_OPTION]
#   WORKLOADS: any of launch,resnet,transformer (default all); METRICS_OPTION: --gpu-metrics[=...]
set -u
B=${1:?usage: hang-hunt.sh BINDIR [N] [LIMIT] [WORKLOADS] [METRICS_OPTION]}; N=${2:-4}; LIMIT=${3:-60}
WORK=${4:-launch,resnet,transformer}; GM=${5:---gpu-metrics}
here=$(cd "$(dirname "$0")/../../.." && pwd)
W=$(mktemp -d /tmp/hang.XXXXXX)
tree() { echo "$1"; for c in $(cat /proc/$1/task/*/children 2>/dev/null); do tree "$c"; done; }
mapping() { # PID ADDRESS(hex): the line of /proc/PID/maps that holds it
	python3 - "$1" "$2" <<'PY'
import sys
a = int(sys.argv[2], 16)
for line in open(f"/proc/{sys.argv[1]}/maps"):
    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
    if lo <= a < hi:
        f = line.split()
        print(f"{f[5] if len(f) > 5 else '[anonymous]'}+{a - lo:#x}")
        break
PY
}
dump() {
	for p in $(tree "$1"); do
		echo "  process $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-120)"
		for t in /proc/$p/task/*; do
			local sc; sc=$(cut -d' ' -f1-3 $t/syscall 2>/dev/null)
			echo "    thread ${t##*/} $(cat $t/comm 2>/dev/null) state=$(awk '{print $3}' $t/stat 2>/dev/null) wchan=$(cat $t/wchan 2>/dev/null) syscall=$sc"
			[ "${sc%% *}" = 202 ] && echo "      futex in $(mapping $p "$(echo "$sc" | cut -d' ' -f2)")"
			sed 's/^/      /' $t/stack 2>/dev/null | head -8
			if [ "$(awk '{print $3}' $t/stat 2>/dev/null)" = R ] && command -v perf >/dev/null; then
				perf record -q -o $W/perf.data -t ${t##*/} -- sleep 1 >/dev/null 2>&1
				perf report -q -i $W/perf.data --stdio --sort dso,sym 2>/dev/null | grep -v '^$' | head -8 | sed 's/^/      perf /'
			fi
			[ -e $B/libstackdump.so ] && python3 -c "import ctypes,sys; ctypes.CDLL(None).syscall(234, int(sys.argv[1]), int(sys.argv[2]), 12)" $p ${t##*/}
		done
		sleep 0.5; sed 's/^/    stack /' $W/stacks.$p.txt 2>/dev/null | head -60
	done
}
run() { # LABEL CMD...
	local label=$1 pid t=0 rc; shift
	STACKDUMP_DIR=$W LD_PRELOAD=$([ -e $B/libstackdump.so ] && echo $B/libstackdump.so) \
	GPT_TRACE_GPU_METRICS_DEBUG=1 "$B/gpt-trace" run -q -f "$GM" -o "$W/$label.sqlite" -- "$@" \
		>"$W/$label.out" 2>"$W/$label.err" &
	pid=$!
	while kill -0 $pid 2>/dev/null && [ $t -lt $((LIMIT * 5)) ]; do sleep 0.2; t=$((t + 1)); done
	if kill -0 $pid 2>/dev/null; then
		echo "HANG $label after ${LIMIT}s"
		dump $pid
		echo "  its stderr:"; sed 's/^/    /' "$W/$label.err" | tail -25
		pkill -9 -P $pid; kill -9 $pid; wait $pid 2>/dev/null
		return
	fi
	wait $pid; rc=$?
	echo "run $label rc=$rc $(grep -ho 'ns_per_launch=[0-9.]*\|[a-z0-9]* ms_per_step=[0-9.]*' "$W/$label.out" | tr '\n' ' ')" \
		"$(grep -h 'gpu metrics:' "$W/$label.err" | head -1)"
}
for i in $(seq "$N"); do
	case ,$WORK, in *,launch,*) run launch-$i "$B/bench_launch_loop" 200000 ;; esac
	case ,$WORK, in *,resnet,*) run resnet-$i python3 "$here/bench/overhead/torch_bench.py" --only resnet18 ;; esac
	case ,$WORK, in *,transformer,*) run transformer-$i python3 "$here/bench/overhead/torch_bench.py" --only transformer ;; esac
done
rm -rf "$W"
