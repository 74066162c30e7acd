#!/bin/bash
# Session 11, device call 1 (one GPU), from the repository root with the binaries in .dev/bin:
#   1. issue 24: why leak.py --fixed still grows (tests/gpu/pairs/leak_diag.py), and whether any
#      `nsys stats` report reads the memory rows (then run it on the leak fixture);
#   2. issue 25: capture windows on a PyTorch loop (tests/gpu/capture-torch.sh), and a windowed
#      report of a real program (GPT-2 training, --steps 10-19 of its NVTX 'step' ranges);
#   3. issue 26: --metrics=first=2 on resnet18 (tests/gpu/real/programs.py), its report;
#   4. issue 23: JAX under --gpu-metrics, its report.
# usage: tests/gpu/batch-s11a.sh OUT   (everything lands in OUT/s11a.tar.gz and OUT/s11a.txt)
set -u
OUT=${1:-/tmp/s11a}; mkdir -p "$OUT"; B=$PWD/.dev/bin; W=/tmp/s11a; rm -rf $W; mkdir -p $W
L=$OUT/s11a.txt; : >"$L"
say() { echo "== $* ($(date +%T))" >>"$L"; }
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$L"

say "1. leak diagnosis"
timeout 240 python3 tests/gpu/pairs/leak_diag.py >>"$L" 2>&1
say "1b. nsys stats reports that read CUDA_GPU_MEMORY_USAGE_EVENTS"
NS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
grep -rl "MEMORY_USAGE_EVENTS\|MEMORY_POOL_EVENTS" $NS 2>/dev/null | head -20 >>"$L"
ls $NS/reports 2>/dev/null | tr '\n' ' ' >>"$L"; echo >>"$L"
for r in $(grep -rl "MEMORY_USAGE_EVENTS" $NS/reports 2>/dev/null | xargs -r -n1 basename | sed 's/\.py$//'); do
	cp tests/fixtures/gpu/pairs/leak-bad.sqlite $W/leak-bad.sqlite
	timeout 60 $NS/nsys stats --report "$r" --format csv -o $W/nsys-$r $W/leak-bad.sqlite >>"$L" 2>&1
	echo "nsys stats $r rc=$?" >>"$L"; head -20 $W/nsys-$r* >>"$L" 2>/dev/null
done

say "2. capture windows on PyTorch"
timeout 300 bash tests/gpu/capture-torch.sh $B $W/cap >>"$L" 2>&1
echo "capture-torch rc=$?" >>"$L"
say "2b. windowed real program: GPT-2 training (vocab.py bad), --steps 10-19 -p step"
timeout 200 $B/gpt-trace run -f -o $W/gpt2-steps.sqlite --steps 10-19 -p step -- \
	python3 tests/gpu/busy/vocab.py bad --steps 30 >$W/gpt2-steps.out 2>&1
echo "rc=$?" >>"$L"; tail -3 $W/gpt2-steps.out >>"$L"
$B/gpt-trace report $W/gpt2-steps.sqlite >$W/gpt2-steps.txt 2>&1
sed -n 1,40p $W/gpt2-steps.txt >>"$L"

say "3. --metrics=first=2 on resnet18"
timeout 300 $B/gpt-trace run -f -o $W/resnet-metrics.sqlite --metrics=first=2 -- \
	python3 tests/gpu/real/programs.py resnet >$W/resnet-metrics.out 2>&1
echo "rc=$?" >>"$L"; tail -4 $W/resnet-metrics.out >>"$L"
$B/gpt-trace report $W/resnet-metrics.sqlite >$W/resnet-metrics.txt 2>&1
$B/gpt-trace report -f json -o $W/resnet-metrics.json $W/resnet-metrics.sqlite 2>>"$L"

say "4. JAX with --gpu-metrics"
timeout 200 $B/gpt-trace run -f -o $W/jax-gm.sqlite --gpu-metrics -- python3 tests/gpu/real/programs.py jax \
	>$W/jax-gm.out 2>&1
echo "rc=$?" >>"$L"; tail -3 $W/jax-gm.out >>"$L"
$B/gpt-trace report $W/jax-gm.sqlite >$W/jax-gm.txt 2>&1
$B/gpt-trace stats $W/jax-gm.sqlite >$W/jax-gm.stats 2>&1
sed -n 1,30p $W/jax-gm.txt >>"$L"

say "pack"
cd $W && tar czf "$OUT/s11a.tar.gz" . 2>>"$L"
ls -la "$OUT" >>"$L"
cat "$L"
