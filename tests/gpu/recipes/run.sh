#!/bin/bash
# Issue 39 on one GPU: traces with the default metric set (on a GH100 without an NVLink peer: nsys's
# GH100 set from 200 us intervals up, the PCIe set and SM Issue at 10 kHz) against the set before
# (GPT_TRACE_GPU_METRICS_SET=pcie, 11 metrics), and NVIDIA's own recipes on them
# (tests/gpu/recipes/check.py, with the device's Nsight Systems recipes).
#  1. an idle-heavy PyTorch program (tests/gpu/busy/idle_program.py) and precision.py bf16 (40
#     steps: a steady state of some 140 ms, 140 samples at 1 kHz), each
#     set at 10 kHz and 1 kHz: exit status, bytes, GPU_METRICS rows, metrics, samples;
#  2. the exit with the default sets: 8 launch loops of 200,000 kernels at 10 kHz and 8 at 1 kHz
#     (tests/gpu/busy/hang-hunt.sh: HANG lines, rc), 4 chase runs;
#  3. check.py on every new-set trace: gpu_metric_util_sum and gpu_metric_util_map against gpt-trace
#     stats' per-GPU means, within 1 point; nvlink_sum;
#  4. stats' kernel classes and the report's top finding, each set: the readers' answers.
# usage: run.sh BINDIR OUT  (OUT/recipes.log, OUT/sizes.tsv and three traces; about 6 minutes)
set -u
B=${1:?usage: run.sh BINDIR OUT}; OUT=${2:?}; mkdir -p "$OUT"; L=$OUT/recipes.log
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
W=$(mktemp -d /tmp/recipes.XXXXXX)
R=${NSYS_RECIPE_DIR:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/python/packages/nsys_recipe}
q() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$@"; }
{
	echo "# $(date -u +%F' '%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	printf 'program\tset\trate\trc\tbytes\tgpu_metrics_rows\tmetrics\tsamples\tidle\n' > "$OUT/sizes.tsv"
	for rate in 10khz 1khz; do
		for set in default pcie; do
			for prog in idle bf16; do
				t=$W/$prog-$set-$rate.sqlite
				[ $set = default ] && unset GPT_TRACE_GPU_METRICS_SET || export GPT_TRACE_GPU_METRICS_SET=$set
				if [ $prog = idle ]; then
					"$B/gpt-trace" run -q -f -o "$t" --gpu-metrics=$rate -- python3 "$root/tests/gpu/busy/idle_program.py" > "$W/$prog.out" 2>&1
				else
					"$B/gpt-trace" run -q -f -o "$t" --gpu-metrics=$rate -- \
						python3 "$root/tests/gpu/busy/precision.py" bf16 --steps 40 > "$W/$prog.out" 2>&1
				fi
				rc=$?
				grep -h "gpu metrics" "$W/$prog.out" | sed "s/^/  $prog $set $rate: /"
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $prog $set $rate $rc "$(stat -c %s "$t")" \
					"$(q "$t" "SELECT count(*) FROM GPU_METRICS")" \
					"$(q "$t" "SELECT count(DISTINCT metricName) FROM TARGET_INFO_GPU_METRICS")" \
					"$(q "$t" "SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples'")" \
					"$(q "$t" "SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples_idle'")" >> "$OUT/sizes.tsv"
			done
		done
	done
	unset GPT_TRACE_GPU_METRICS_SET
	cat "$OUT/sizes.tsv"
	echo "== metric names, default set at 1 kHz"
	q "$W/bf16-default-1khz.sqlite" "SELECT group_concat(metricName, '; ') FROM (SELECT DISTINCT metricName FROM TARGET_INFO_GPU_METRICS ORDER BY metricId)"
	q "$W/bf16-default-1khz.sqlite" "SELECT value FROM GPT_META WHERE name = 'gpu_metrics_collected'"
	q "$W/bf16-default-10khz.sqlite" "SELECT value FROM GPT_META WHERE name = 'gpu_metrics_collected'"
	echo "== rows per metric and their means (clocks in Hz), default set at 1 kHz"
	q "$W/bf16-default-1khz.sqlite" "SELECT group_concat(n || ' ' || c || ' rows, mean ' || m, '; ') FROM (SELECT metricName n, count(*) c, round(avg(value)) m FROM GPU_METRICS JOIN TARGET_INFO_GPU_METRICS USING (typeId, metricId) GROUP BY metricId)"
	echo "== exits, default sets"
	timeout 200 bash "$root/tests/gpu/busy/hang-hunt.sh" "$B" 8 20 launch --gpu-metrics
	timeout 200 bash "$root/tests/gpu/busy/hang-hunt.sh" "$B" 8 20 launch --gpu-metrics=1khz
	for i in 1 2 3 4; do
		"$B/gpt-trace" run -q -f -o "$W/chase-$i.sqlite" --gpu-metrics -- "$B/chase" --launches 4 > "$W/chase.out" 2>&1
		echo "run chase-$i rc=$? $(q "$W/chase-$i.sqlite" "SELECT value FROM GPT_META WHERE name = 'trace_complete'")"
	done
	echo "== NVIDIA's recipes ($R)"
	python3 "$here/check.py" "$R" "$B/gpt-trace" "$W"/*-default-*.sqlite
	echo "== readers: stats' kernel classes and the report's first finding, each set"
	for t in "$W"/bf16-*.sqlite "$W"/idle-*.sqlite; do
		echo "-- $(basename "$t")"
		"$B/gpt-trace" stats -q -f json "$t" | python3 -c "
import json, sys
e = json.load(sys.stdin)['gpu_efficiency']
print('  classes', {k: round(v['share'], 3) for k, v in e['classes'].items()}, 'devices',
      [{k: d[k] for k in ('sm_active_pct', 'tensor_active_pct', 'dram_read_pct')} for d in e['devices']])"
		"$B/gpt-trace" report -q "$t" 2>&1 | grep -m2 -E '^ +[0-9]+\.|^  1 ' | sed 's/^/  /'
	done
} > "$L" 2>&1
cp "$W/bf16-default-1khz.sqlite" "$W/idle-default-1khz.sqlite" "$W/idle-default-10khz.sqlite" "$OUT/" 2>/dev/null
tail -5 "$L"
