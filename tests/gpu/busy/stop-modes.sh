#!/bin/bash
# Which end of the PM samplers aborts a traced program at exit (issue 23), for the lead to run:
# usage stop-modes.sh BIN OUT. BIN holds gpt-trace, libgpt_inject.so, membw.
# Each GPT_TRACE_GPU_METRICS_STOP mode (inject/gpu-metrics.c) on membw and on a short PyTorch step,
# three runs each, with the collector's debug lines: the exit status, glibc's message if any,
# trace_complete and the sample count. Then a backtrace of the first aborting mode under gdb, if
# the machine has gdb.
export GPT_TRACE_GPU_METRICS_EXPERIMENTAL=1 GPT_TRACE_GPU_METRICS_DEBUG=1
B=${1:-build/bin}; OUT=${2:-/tmp/stop-modes}; mkdir -p "$OUT"; L=$OUT/stop-modes.txt; : > $L
W=/tmp/stop-modes-work; rm -rf $W; mkdir -p $W
one() {	# mode set label program...
	local mode=$1 set=$2 label=$3; shift 3
	GPT_TRACE_GPU_METRICS_STOP=$mode GPT_TRACE_GPU_METRICS_SET=$set timeout 120 \
		$B/gpt-trace run --gpu-metrics -o $W/t.sqlite -- "$@" > $W/out.txt 2>&1
	local rc=$? glibc meta
	glibc=$(grep -m1 -E "corrupt|free\(\)|malloc\(\)|double" $W/out.txt)
	meta=$(python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); m=dict(db.execute(\"select name,value from GPT_META\")); k=db.execute('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0]; s=db.execute('select count(*) from GPU_METRICS').fetchone()[0] if db.execute(\"select 1 from sqlite_master where name='GPU_METRICS'\").fetchone() else 0; print('complete=%s kernels=%d metric_rows=%d' % (m.get('trace_complete'), k, s))" $W/t.sqlite 2>&1 | tail -1)
	printf '%-10s %-9s %-8s rc=%-4s %s %s\n' "$mode" "${set:-all}" "$label" "$rc" "$meta" "${glibc:+glibc: $glibc}" >> $L
	cp $W/out.txt $OUT/last-$mode-$label.txt 2>/dev/null
	rm -f $W/t.sqlite*
}
for rep in 1 2 3; do
	for mode in full early norelease decode nodecode; do
		one $mode "" membw $B/membw --launches 20
	done
	one full required membw $B/membw --launches 20
done
for mode in full early norelease; do
	one $mode "" torch python3 tests/gpu/busy/precision.py bf16 --steps 5
done
cat $OUT/last-full-membw.txt > $OUT/debug-full.txt; cat $OUT/last-early-membw.txt > $OUT/debug-early.txt
rm -f $OUT/last-*.txt
if command -v gdb > /dev/null; then
	GPT_TRACE_GPU_METRICS_STOP=early timeout 180 gdb -q -batch -ex 'set follow-fork-mode child' \
		-ex 'set detach-on-fork on' -ex run -ex 'thread apply all bt 12' \
		--args $B/gpt-trace run --gpu-metrics -o $W/g.sqlite -- $B/membw --launches 20 \
		> $OUT/gdb-early.txt 2>&1
else
	echo "no gdb" > $OUT/gdb-early.txt
fi
cat $L
