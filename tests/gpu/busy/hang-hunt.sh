#!/bin/bash
# Look for a hang under --gpu-metrics (seen once, 2026-11-27: a run of bench/overhead/modes.py's
# gm10k round 2 did not end in 4 minutes). Runs each program N times under gpt-trace run
# --gpu-metrics with GPT_TRACE_GPU_METRICS_DEBUG=1, each with a watchdog; a run still alive after
# LIMIT seconds has its threads dumped (name, kernel wait channel, syscall, kernel stack, from /proc)
# with the debug lines it printed, then is killed. Prints one line per run and the dumps.
# usage: hang-hunt.sh BINDIR [N] [LIMIT]
set -u
B=${1:?usage: hang-hunt.sh BINDIR [N] [LIMIT]}; N=${2:-4}; LIMIT=${3:-60}
here=$(cd "$(dirname "$0")/../../.." && pwd)
W=$(mktemp -d /tmp/hang.XXXXXX)
tree() { echo "$1"; for c in $(cat /proc/$1/task/*/children 2>/dev/null); do tree "$c"; done; }
dump() {
	for p in $(tree "$1"); do
		echo "  process $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-120)"
		for t in /proc/$p/task/*; do
			echo "    thread ${t##*/} $(cat $t/comm 2>/dev/null) wchan=$(cat $t/wchan 2>/dev/null) syscall=$(cut -d' ' -f1-3 $t/syscall 2>/dev/null)"
			sed 's/^/      /' $t/stack 2>/dev/null | head -8
		done
	done
}
run() { # LABEL CMD...
	local label=$1 pid t=0 rc; shift
	GPT_TRACE_GPU_METRICS_DEBUG=1 "$B/gpt-trace" run -q -f --gpu-metrics -o "$W/$label.sqlite" -- "$@" \
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
	run launch-$i "$B/bench_launch_loop" 200000
	run resnet-$i python3 "$here/bench/overhead/torch_bench.py" --only resnet18
	run transformer-$i python3 "$here/bench/overhead/torch_bench.py" --only transformer
done
rm -rf "$W"
