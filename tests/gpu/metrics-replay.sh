#!/bin/bash
# Issue 38 item 4 on the GPU: traces recorded with --metrics whose launch calls hold kernel replay
# (counters) and SASS patching, for tests/fixtures/gpu (access-metrics.sqlite,
# launch-metrics.sqlite, real/resnet-metrics.sqlite). Each trace must carry PROFILER_OVERHEAD rows
# (one per launch measured) and its report must take no launch cost or idle cause from them.
#
# Usage: tests/gpu/metrics-replay.sh BIN OUT   (BIN: gpt-trace, libgpt_inject.so and the samples)
set -u
B=$1
W=$2
L=$W/log.txt
mkdir -p "$W/reports"
nvidia-smi -L >"$L" 2>&1
run() {	# NAME TIMEOUT ARGS...: a trace, its text and JSON reports, and what it says about replay
	name=$1 t=$2
	shift 2
	echo "== $name: $*" >>"$L"
	timeout "$t" "$B/gpt-trace" run -f -o "$W/$name.sqlite" "$@" >"$W/reports/$name.out" 2>&1
	echo "rc=$?" >>"$L"
	tail -3 "$W/reports/$name.out" >>"$L"
	"$B/gpt-trace" report "$W/$name.sqlite" >"$W/reports/$name.txt" 2>&1
	"$B/gpt-trace" report -f json -o "$W/reports/$name.json" "$W/$name.sqlite" 2>>"$L"
	sqlite3 -readonly "$W/$name.sqlite" "SELECT s.value, count(*), sum(o.\"end\" - o.start) FROM PROFILER_OVERHEAD o
		JOIN StringIds s ON s.id = o.nameId GROUP BY 1" >>"$L" 2>&1
	sqlite3 -readonly "$W/$name.sqlite" "SELECT source, count(*) FROM GPT_KERNEL_METRICS GROUP BY 1" >>"$L" 2>&1
	grep -E "steady idle|findings from|^ *[0-9]+\. |launch cost|profiler" "$W/reports/$name.txt" >>"$L"
}
run access-metrics 300 --metrics -- "$B/access" --iters 4
run launch-metrics 300 --metrics=first=2 -- "$B/launch_bound" --launches 2000
run launch-plain 300 -- "$B/launch_bound" --launches 2000
run resnet-metrics 600 --metrics=first=2 -- python3 tests/gpu/real/programs.py resnet
tar czf "$W/reports.tgz" -C "$W" reports && rm -rf "$W/reports"
