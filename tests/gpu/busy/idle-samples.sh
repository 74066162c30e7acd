#!/bin/bash
# Issue 39 item 1 on the GPU: every sample interval stored, idle ones too. One PyTorch program that
# idles most of its run (a 4096^3 matmul, a synchronize and 20 ms of sleep, 40 times), traced at
# 10 kHz and 1 kHz by the build before (OLD: idle samples dropped) and this one (NEW), twice
# each, interleaved; per trace: its bytes, GPU_METRICS rows, stored and idle samples, and the
# avg(value) of 'SMs Active' over all rows, and `gpt-trace stats`' mean over its window (the CPU test
# tests/collector/gpu-metrics-sql.sh compares the two over the same window, on the 1 kHz trace kept).
# Usage: tests/gpu/busy/idle-samples.sh OLD_BIN NEW_BIN OUT
OLD=$1 NEW=$2 W=$3
prog=$(dirname "$0")/idle_program.py
printf 'build\trate\trun\tbytes\tgpu_metrics_rows\tsamples\tidle\tavg_sm_active_sql\tstats_sm_active\n' > "$W/sizes.tsv"
for run in 1 2; do
	for rate in 10khz 1khz; do
		for b in old new; do
			B=$OLD; [ $b = new ] && B=$NEW
			t=$W/$b-$rate-$run.sqlite
			"$B/gpt-trace" run -q -f -o "$t" --gpu-metrics=$rate -- python3 "$prog" > /dev/null 2>&1
			bytes=$(stat -c %s "$t")
			q() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$t" "$1"; }
			rows=$(q "SELECT count(*) FROM GPU_METRICS")
			samples=$(q "SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples'")
			idle=$(q "SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples_idle'")
			# the whole sampled span: first to last sample of device 0
			avg=$(q "SELECT round(avg(g.value), 2) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, metricId) WHERE m.metricName = 'SMs Active [Throughput %]'")
			st=$("$B/gpt-trace" stats "$t" 2>/dev/null | grep -o 'SMs active [0-9]*%' | head -1)
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $b $rate $run "$bytes" "$rows" "$samples" "$idle" "$avg" "$st" >> "$W/sizes.tsv"
		done
	done
done
cp "$W/new-1khz-1.sqlite" "$W/idle-samples-1khz.sqlite"
rm -f "$W"/old-*.sqlite "$W"/new-*.sqlite
