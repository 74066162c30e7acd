#!/bin/bash
# GPU metrics on the device (issue 23), for the lead to run: usage gpu-metrics.sh BUILD OUT.
#   1. the sample pair and the busy-time pairs under `gpt-trace run --gpu-metrics`: every run must
#      exit 0 with trace_complete=1 (device runs 2, 4 and 5 of 2026-11-27 all aborted at exit with a
#      glibc heap-corruption message; fixed since, see inject/gpu-metrics.c, not yet re-run), and
#      `gpt-trace stats` must classify membw's copy4 memory-bound, chase's pointer_chase
#      latency-bound, the fp32 GEMMs compute-bound with Tensor Active ~0, the tf32/bf16 GEMMs with
#      Tensor Active > 40, fusion eager's element-wise kernels memory-bound;
#   2. the overhead table of bench/gpu-metrics.md: launch loop, resnet18, GPT-2 training step, with
#      metrics off, at 10 kHz and at 1 kHz, interleaved, with the trace bytes.
# Output: OUT/log.txt, OUT/classes.txt, the traces trimmed to their steps (tests/gpu/busy/trim_metrics.py).
B=${1:-build}; OUT=${2:-/tmp/gpu-metrics}; mkdir -p "$OUT"; T0=$(date +%s)
G="$B/bin/gpt-trace run"; L=$OUT/log.txt
run() { echo "=== $*" >> $L; ( /usr/bin/time -f "wall %e s" timeout 200 "$@" ) >> $L 2>&1; echo "rc=$?" >> $L; }
meta() { python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print(dict(db.execute(\"select name,value from GPT_META where name in ('trace_complete','exit_reason','gpu_metric_samples','gpu_metrics_setup_ms','gpu_metric_samples_dropped','gpu_metrics_image_full','gpu_metrics_collected')\")))" $1 >> $L 2>&1; }
classes() { echo "== $1" >> $OUT/classes.txt; $B/bin/gpt-trace stats -q $OUT/$1.sqlite | sed -n '/GPU busy time by what/,$p' | cut -c1-160 | head -14 >> $OUT/classes.txt; }
run $G --gpu-metrics -o $OUT/membw.sqlite -- $B/bin/membw --launches 20; meta $OUT/membw.sqlite; classes membw
run $G --gpu-metrics -o $OUT/chase.sqlite -- $B/bin/chase --launches 4; meta $OUT/chase.sqlite; classes chase
for v in fp32 tf32 bf16; do run $G --gpu-metrics -o $OUT/precision-$v.sqlite -- python3 tests/gpu/busy/precision.py $v --steps 5; meta $OUT/precision-$v.sqlite; classes precision-$v; done
for v in eager compiled; do run $G --gpu-metrics -o $OUT/fusion-$v.sqlite -- python3 tests/gpu/busy/fusion.py $v --steps 10; meta $OUT/fusion-$v.sqlite; classes fusion-$v; done
for f in $OUT/*.sqlite; do python3 tests/gpu/busy/trim_metrics.py $f 20; done
size() { ls -l $1 | awk '{print "bytes", $5}' >> $L; rm -f $1; }
for r in ${REPS:-1 2 3}; do
	for m in off on 1khz; do
		opt=; [ $m = on ] && opt=--gpu-metrics; [ $m = 1khz ] && opt=--gpu-metrics=1khz
		run $G $opt -o $OUT/o.sqlite -- $B/bin/launch_bound; size $OUT/o.sqlite
	done
done
export STEPS=30
for r in ${REPS:-1 2 3}; do
	for p in resnet gpt2train; do
		for m in off on 1khz; do
			opt=; [ $m = on ] && opt=--gpu-metrics; [ $m = 1khz ] && opt=--gpu-metrics=1khz
			run $G $opt -o $OUT/o.sqlite -- python3 tests/gpu/real/programs.py $p; size $OUT/o.sqlite
		done
	done
done
echo "done in $(( $(date +%s) - T0 )) s" >> $L
