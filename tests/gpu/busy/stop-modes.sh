#!/bin/bash
# Which end of the PM samplers a CUPTI survives (issue 23), to re-check a new CUPTI: usage
# stop-modes.sh BIN OUT. BIN holds gpt-trace, libgpt_inject.so, membw. Each
# GPT_TRACE_GPU_METRICS_STOP mode and GPT_TRACE_GPU_METRICS_TRY variant (inject/gpu-metrics.c) on
# membw and on a short PyTorch step, three runs each, with the collector's debug lines: the exit
# status, glibc's message if any, trace_complete and the sample count; on a fatal signal the
# backtrace (GPT_TRACE_BACKTRACE) is in OUT/debug-*.txt. With CUPTI 13.0 on the H200
# (2026-11-27) only the default (decode, one configuration) exited cleanly every time.
export GPT_TRACE_GPU_METRICS_DEBUG=1 GPT_TRACE_BACKTRACE=1
B=${1:-build/bin}; OUT=${2:-/tmp/stop-modes}; mkdir -p "$OUT"; L=$OUT/stop-modes.txt; : > $L
W=/tmp/stop-modes-work; rm -rf $W; mkdir -p $W
one() {	# mode try label program...
	local mode=$1 set=$2 label=$3; shift 3
	GPT_TRACE_GPU_METRICS_STOP=$mode GPT_TRACE_GPU_METRICS_TRY=$set timeout 120 \
		$B/gpt-trace run --gpu-metrics -o $W/t.sqlite -- "$@" > $W/out.txt 2>&1
	local rc=$? glibc meta
	glibc=$(grep -m1 -E "corrupt|free\(\)|malloc\(\)|double" $W/out.txt)
	meta=$(python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); m=dict(db.execute(\"select name,value from GPT_META\")); k=db.execute('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0]; s=db.execute('select count(*) from GPU_METRICS').fetchone()[0] if db.execute(\"select 1 from sqlite_master where name='GPU_METRICS'\").fetchone() else 0; print('complete=%s kernels=%d metric_rows=%d' % (m.get('trace_complete'), k, s))" $W/t.sqlite 2>&1 | tail -1)
	printf '%-10s %-9s %-8s rc=%-4s %s %s\n' "$mode" "${set:-all}" "$label" "$rc" "$meta" "${glibc:+glibc: $glibc}" >> $L
	cp $W/out.txt $OUT/last-$mode-$label.txt 2>/dev/null
	rm -f $W/t.sqlite*
}
for rep in 1 2 3; do
	for mode in decode stop release early nodecode; do
		one $mode "" membw $B/membw --launches 20
	done
	one decode all membw $B/membw --launches 20
	one decode deinit membw $B/membw --launches 20
done
for mode in decode stop release; do
	one $mode "" torch python3 tests/gpu/busy/precision.py bf16 --steps 5
done
cat $OUT/last-decode-membw.txt > $OUT/debug-decode.txt; cat $OUT/last-release-membw.txt > $OUT/debug-release.txt
rm -f $OUT/last-*.txt
cat $L
