#!/bin/bash
# One call on a 2-GPU machine (issue 23), from the repository root with the binaries in .dev/bin:
# usage batch-x2.sh OUT.
#  1. --gpu-metrics on a 2-rank torchrun job (issue 30's job): every rank exits 0, traces complete;
#  2. real programs with --gpu-metrics: resnet18 and GPT-2 training (tests/gpu/real/programs.py),
#     traces kept for reading the busy-time section as their authors would (docs/real-programs);
#  3. chase four times with --gpu-metrics: the exit the H200 runs checked, on this machine's card.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 STEPS=30
OUT=${1:-/tmp/x2}; mkdir -p $OUT; B=$PWD/.dev/bin; L=$OUT/x2.txt; : > $L
W=/tmp/x2w; rm -rf $W; mkdir -p $W/g
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >> $L
meta() { python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); m=dict(db.execute('select name,value from GPT_META')); print(sys.argv[1].split('/')[-1], 'complete=%s exit=%s samples=%s setup_ms=%s' % (m.get('trace_complete'), m.get('exit_reason'), m.get('gpu_metric_samples'), m.get('gpu_metrics_setup_ms')))" $1 >> $L; }
timeout 150 $B/gpt-trace run --gpu-metrics -o $W/g/r%r.sqlite -- torchrun --standalone --nproc-per-node 2 \
	tests/gpu/multi/mlp_ddp.py --steps 60 --warmup 20 > $W/g.out 2>&1
echo "torchrun 2 ranks --gpu-metrics rc=$?" >> $L; grep -E "median|gpt-trace" $W/g.out | head -8 >> $L
for f in $W/g/*.sqlite; do meta $f; done
for p in resnet gpt2train; do
	timeout 120 $B/gpt-trace run --gpu-metrics -o $W/$p.sqlite -- python3 tests/gpu/real/programs.py $p > $W/$p.out 2>&1
	echo "$p rc=$?" >> $L; grep -E "ok|gpt-trace" $W/$p.out | head -3 >> $L; meta $W/$p.sqlite
	python3 tests/gpu/busy/trim_metrics.py $W/$p.sqlite 20 >> $L 2>&1
	cp $W/$p.sqlite $OUT/real-$p.sqlite
done
for r in 1 2 3 4; do
	timeout 60 $B/gpt-trace run --gpu-metrics -o $W/c.sqlite -- $B/chase --launches 4 > $W/c.out 2>&1
	echo "chase rc=$? $(grep -m1 'gpu metrics:' $W/c.out)" >> $L
done
cat $L
