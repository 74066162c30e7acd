#!/bin/bash
# One call on a 4-GPU machine (issues 28, 30, 23), from the repository root with the binaries in
# .dev/bin: usage batch-x4.sh OUT.
#  1. tests/gpu/kineto/record_ddp.py on 2 ranks: the torch.profiler pair for import.ddp-straggler;
#  2. issue 30's job (mlp_ddp.py) on 4 ranks, rounds interleaved: bare, traced, and traced with one
#     group of activity kinds left out at a time, and CUPTI's floor (the no-op consumer);
#  3. --gpu-metrics on a 2-rank torchrun job: every rank exits 0, every trace is complete.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${1:-/tmp/x4}; mkdir -p $OUT; B=$PWD/.dev/bin; L=$OUT/x4.txt; : > $L
W=/tmp/x4w; rm -rf $W; mkdir -p $W
TR="torchrun --standalone"
# 1
timeout 150 $TR --nproc-per-node 2 tests/gpu/kineto/record_ddp.py $W/k > $W/k.out 2>&1; echo "record_ddp rc=$?" >> $L
tail -3 $W/k.out >> $L
i=0; for f in $(ls $W/k/*.pt.trace.json.gz | sort); do
	r=$(python3 -c "import gzip,json,sys; print(json.load(gzip.open(sys.argv[1]))['distributedInfo']['rank'])" $f)
	cp $f $OUT/ddp-slow-rank$r.pt.trace.json.gz; ls -l $f >> $L; done
$B/gpt-trace report -q $OUT/ddp-slow-rank0.pt.trace.json.gz $OUT/ddp-slow-rank1.pt.trace.json.gz > $OUT/ddp-report.txt 2>&1
echo "report rc=$?" >> $L
# 2
J="tests/gpu/multi/mlp_ddp.py --steps 60 --warmup 20"
ALL=memcpy,memcpy2,memset,synchronization,device,context,stream,memory
run2() {	# label, then the command's prefix
	local label=$1; shift
	local t0=$(date +%s.%N)
	timeout 120 "$@" $TR --nproc-per-node 4 $J > $W/m.out 2>&1; local rc=$?
	echo "$label rc=$rc $(grep -o 'median_ms=[0-9.]*' $W/m.out) wall=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")" >> $L
	rm -rf $W/t; mkdir -p $W/t
}
for round in 1 2 3; do
	run2 bare env
	run2 traced $B/gpt-trace run -q -o $W/t/r%r.sqlite --
	run2 kernels-only env GPT_TRACE_KINDS=device,context,stream $B/gpt-trace run -q -o $W/t/r%r.sqlite --
	run2 no-sync env GPT_TRACE_KINDS=${ALL/synchronization,/} $B/gpt-trace run -q -o $W/t/r%r.sqlite --
	run2 no-copies env GPT_TRACE_KINDS=synchronization,device,context,stream,memory $B/gpt-trace run -q -o $W/t/r%r.sqlite --
	run2 api-none $B/gpt-trace run -q --api none -o $W/t/r%r.sqlite --
	# the floor hung under torchrun once (issue 30): 60 s, and not again after a timeout
	grep -q "^cupti-floor rc=124" $L || run2 cupti-floor env CUDA_INJECTION64_PATH=$B/libnoop_cupti.so timeout 60
done
# 3
timeout 150 $B/gpt-trace run --gpu-metrics -o $W/g/r%r.sqlite -- $TR --nproc-per-node 2 $J > $W/g.out 2>&1
echo "gpu-metrics 2 ranks rc=$?" >> $L; grep "gpt-trace\|median" $W/g.out | head -6 >> $L
for f in $W/g/*.sqlite; do echo "$(basename $f) $(sqlite3 $f "select group_concat(name||'='||value,' ') from GPT_META where name in ('trace_complete','exit_reason','gpu_metric_samples','rank')")" >> $L; done
cat $L
