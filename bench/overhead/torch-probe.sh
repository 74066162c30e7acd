#!/usr/bin/env bash
# Where does gpt-trace's time go on PyTorch tiny ops? Runs the tinyops workload (1000 ops per step)
# under variants of the collector, interleaved, REPS times each, and prints ms per step; the
# difference to bare, in ms per step, is microseconds per op. Run on the GPU machine:
#   bench/overhead/torch-probe.sh BUILD [REPS]
# GPT_TRACE_KINDS (inject/cupti.c) selects which activity kinds besides kernels are enabled.
set -u
b=$(cd "${1:-build}" && pwd)
reps=${2:-5}
lib=$b/bin/libgpt_inject.so
here=$(cd "$(dirname "$0")" && pwd)
t="python3 $here/torch_bench.py --only tinyops --steps 150"
o=$(mktemp -d)
g="$b/bin/gpt-trace run -q -f"
declare -A cmd=(
	[bare]="$t"
	[noop-cupti]="env CUDA_INJECTION64_PATH=$b/bin/libnoop_cupti.so $t"
	[kernels-only]="env GPT_TRACE_KINDS=none $g --api none -o $o/k.sqlite -- $t"
	[kernels+memcpy]="env GPT_TRACE_KINDS=memcpy,memcpy2 $g --api none -o $o/km.sqlite -- $t"
	[kernels+memset]="env GPT_TRACE_KINDS=memset $g --api none -o $o/ks.sqlite -- $t"
	[kernels+sync]="env GPT_TRACE_KINDS=synchronization $g --api none -o $o/ky.sqlite -- $t"
	[kernels+device,context]="env GPT_TRACE_KINDS=device,context $g --api none -o $o/kd.sqlite -- $t"
	[api-none]="$g --api none -o $o/n.sqlite -- $t"
	[default]="$g -o $o/d.sqlite -- $t"
	[kineto]="$t --kineto"
)
order=${VARIANTS:-"bare noop-cupti kernels-only kernels+memcpy kernels+memset kernels+sync kernels+device,context api-none default kineto"}
for rep in $(seq "$reps"); do
	for k in $order; do
		v=$(${cmd[$k]} 2>/dev/null | sed -n 's/^tinyops ms_per_step=//p')
		echo "$k $rep ${v:-failed}"
	done
done | tee $o/probe.txt
python3 - "$o/probe.txt" <<'PY'
import sys, statistics
r = {}
for line in open(sys.argv[1]):
    k, _, v = line.split()
    if v != "failed":
        r.setdefault(k, []).append(float(v))
bare = statistics.median(r["bare"])
print("\n| variant | ms/step median | min | max | overhead per op (us) |\n|---|---|---|---|---|")
for k, v in r.items():
    m = statistics.median(v)
    print(f"| {k} | {m:.3f} | {min(v):.3f} | {max(v):.3f} | {(m - bare):+.3f} |")
PY
