#!/usr/bin/env bash
# Device batch 1 of the busy-time work (2026-11-27): what the PM sampler offers on this GPU, the
# precision and fusion pairs untraced and traced, torch.profiler traces for `gpt-trace import`, and
# real programs traced for the kernel-owner classifier. usage: batch1.sh BUILD OUT
set -u
B=${1:-build}; OUT=${2:-/tmp/batch1}; W=/tmp/batch1w
rm -rf "$W"; mkdir -p "$W" "$OUT"
nvidia-smi > "$W/nvidia-smi.txt" 2>&1
cp -r /usr/local/cuda/extras/CUPTI/samples "$W/cupti-samples"
ls /usr/local/cuda/extras/CUPTI/samples > "$W/cupti-samples.txt"
( cd "$W/cupti-samples/pm_sampling" && make CUDA_INSTALL_PATH=/usr/local/cuda > "$W/pm_build.log" 2>&1
  ./pm_sampling --help > "$W/pm_help.txt" 2>&1
  timeout 60 ./pm_sampling -d 0 -q > "$W/pm_query.txt" 2>&1
  mkdir -p "$W/pm_src"; cp *.cpp *.h Makefile "$W/pm_src/" 2>/dev/null; cp ../common/*.h "$W/pm_src/" 2>/dev/null
  timeout 60 ./pm_sampling -d 0 > "$W/pm_default_run.txt" 2>&1 )
for r in 1 2; do
	for v in fp32 tf32 bf16; do timeout 120 python3 tests/gpu/busy/precision.py $v >> "$W/precision-untraced.txt" 2>&1; done
	for v in eager compiled; do timeout 200 python3 tests/gpu/busy/fusion.py $v >> "$W/fusion-untraced.txt" 2>&1; done
done
for v in fp32 tf32 bf16; do
	timeout 120 "$B/bin/gpt-trace" run -o "$W/precision-$v.sqlite" -- python3 tests/gpu/busy/precision.py $v --steps 10 >> "$W/precision-traced.txt" 2>&1
done
for v in eager compiled; do
	timeout 200 "$B/bin/gpt-trace" run -o "$W/fusion-$v.sqlite" -- python3 tests/gpu/busy/fusion.py $v --steps 10 >> "$W/fusion-traced.txt" 2>&1
done
timeout 300 python3 tests/gpu/kineto/record.py "$W/kineto" > "$W/kineto.txt" 2>&1
STEPS=12 PROGRAMS="resnet compile gpt2train" timeout 500 tests/gpu/real/run.sh "$B" "$W/real"
python3 -c 'import torch, sys; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), sys.version)' > "$W/versions.txt" 2>&1
rm -rf "$W/cupti-samples"
tar -C "$W" -czf /tmp/batch1.tgz .
ls -la /tmp/batch1.tgz
split -b 15M /tmp/batch1.tgz "$OUT/batch1.tgz."
ls -la "$OUT"
