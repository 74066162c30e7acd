#!/bin/bash
# Look for a hang under --gpu-metrics (seen once, 2026-11-27: a run of bench/overhead/modes.py's
# gm10k round 2 did not end in 4 minutes). Runs each program N times under gpt-trace run
# --gpu-metrics with GPT_TRACE_GPU_METRICS_DEBUG=1, each with a watchdog; a run still alive after
# LIMIT seconds has its threads dumped by tests/gpu/dump-threads.sh (with user-space stacks:
# BINDIR/libstackdump.so, tests/gpu/busy/stackdump.c, is preloaded when present), with the debug
# lines it printed, then is killed. Prints one line per run and the dumps.
# usage: hang-hunt.sh BINDIR [N] [LIMIT] [WORKLOADS] [METRICS_OPTION]
#   WORKLOADS: any of launch,resnet,transformer (default all); METRICS_OPTION: --gpu-metrics[=...]
set -u
B=${1:?usage: hang-hunt.sh BINDIR [N] [LIMIT] [WORKLOADS] [METRICS_OPTION]}; N=${2:-4}; LIMIT=${3:-60}
WORK=${4:-launch,resnet,transformer}; GM=${5:---gpu-metrics}
here=$(cd "$(dirname "$0")/../../.." && pwd)
W=$(mktemp -d /tmp/hang.XXXXXX)
run() { # LABEL CMD...
	local label=$1 pid t=0 rc; shift
	STACKDUMP_DIR=$W LD_PRELOAD=$([ -e $B/libstackdump.so ] && echo $B/libstackdump.so) \
	GPT_TRACE_GPU_METRICS_DEBUG=1 "$B/gpt-trace" run -q -f "$GM" -o "$W/$label.sqlite" -- "$@" \
		>"$W/$label.out" 2>"$W/$label.err" &
	pid=$!
	while kill -0 $pid 2>/dev/null && [ $t -lt $((LIMIT * 5)) ]; do sleep 0.2; t=$((t + 1)); done
	if kill -0 $pid 2>/dev/null; then
		echo "HANG $label after ${LIMIT}s"
		bash "$here/tests/gpu/dump-threads.sh" $pid
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
