#!/bin/bash
# Which step of the PM sampler harms the traced program (issue 23), for the lead to run:
# usage skip-steps.sh BIN OUT. Each GPT_TRACE_GPU_METRICS_SKIP (inject/gpu-metrics.c) on membw,
# twice, with the collector's debug lines and, on a fatal signal, the backtrace (GPT_TRACE_BACKTRACE).
export GPT_TRACE_GPU_METRICS_EXPERIMENTAL=1 GPT_TRACE_GPU_METRICS_DEBUG=1 GPT_TRACE_BACKTRACE=1
B=${1:-build/bin}; OUT=${2:-/tmp/skip-steps}; mkdir -p "$OUT"; L=$OUT/skip-steps.txt; : > $L
W=/tmp/skip-steps-work; rm -rf $W; mkdir -p $W
for rep in ${REPS:-1 2}; do
	for skip in ${SKIPS:-none ctxdestroy thread eval start ctxdestroy,thread thread,eval,start enable decode decode,thread}; do
		GPT_TRACE_GPU_METRICS_SKIP=$skip timeout 120 $B/gpt-trace run --gpu-metrics \
			-o $W/t.sqlite -- $B/membw --launches 20 > $W/out.txt 2>&1
		rc=$?
		meta=$(python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); m=dict(db.execute(\"select name,value from GPT_META\")); k=db.execute('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0]; print('complete=%s kernels=%d samples=%s' % (m.get('trace_complete'), k, m.get('gpu_metric_samples')))" $W/t.sqlite 2>&1 | tail -1)
		printf '%-22s rc=%-4s %s\n' "$skip" "$rc" "$meta" >> $L
		[ $rep = 1 ] && { echo "=== $skip"; cat $W/out.txt; } >> $OUT/skip-steps-out.txt
		rm -f $W/t.sqlite*
	done
done
cat $L
