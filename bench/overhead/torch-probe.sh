#!/usr/bin/env bash
# Where does gpt-trace's time go on PyTorch tiny ops? Runs the tinyops workload under variants of the
# collector, interleaved, 3 times each, and prints ms per step (1000 ops). Run on the GPU machine:
#   bench/overhead/torch-probe.sh BUILD
set -u
b=$(cd "${1:-build}" && pwd)
lib=$b/bin/libgpt_inject.so
here=$(cd "$(dirname "$0")" && pwd)
t="python3 $here/torch_bench.py --only tinyops"
o=$(mktemp -d)
declare -A cmd=(
	[bare]="$t"
	[noop-cupti]="env CUDA_INJECTION64_PATH=$b/bin/libnoop_cupti.so $t"
	[gpt-default]="$b/bin/gpt-trace run -q -f -o $o/a.sqlite -- $t"
	[gpt-api-none]="$b/bin/gpt-trace run -q -f --api none -o $o/b.sqlite -- $t"
	[gpt-api-all]="$b/bin/gpt-trace run -q -f --api all -o $o/c.sqlite -- $t"
	[gpt-discard]="env GPT_TRACE_DISCARD=1 $b/bin/gpt-trace run -q -f -o $o/d.sqlite -- $t"
	[gpt-no-nvtx-inject]="env LD_PRELOAD=$lib CUDA_INJECTION64_PATH=$lib GPT_TRACE_OUTPUT=$o/e.sqlite GPT_TRACE_FORCE=1 $t"
	[gpt-cupti-clock]="env GPT_TRACE_CLOCK=cupti $b/bin/gpt-trace run -q -f -o $o/f.sqlite -- $t"
	[kineto]="$t --kineto"
)
order="bare noop-cupti gpt-default gpt-api-none gpt-api-all gpt-discard gpt-no-nvtx-inject gpt-cupti-clock kineto"
for rep in 1 2 3; do
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
print("\n| variant | ms/step median | overhead per op (us) |\n|---|---|---|")
for k, v in r.items():
    m = statistics.median(v)
    print(f"| {k} | {m:.3f} | {(m - bare):+.3f} |")
PY
for f in "$o"/*.sqlite; do
	python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(sys.argv[1], d.execute('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL').fetchone(), d.execute('select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME').fetchone())" "$f"
done
