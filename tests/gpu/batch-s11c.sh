#!/bin/bash
# Session 11, device call 3 (one GPU), from the repository root with the binaries in .dev/bin:
#   1. issue 23: the --gpu-metrics hang of call 2, looked for (tests/gpu/busy/hang-hunt.sh, 4 rounds
#      of the launch loop, resnet18 and transformer steps at 10 kHz, each watched for 60 s);
#   2. issue 25: bare, armed and idle, recording (bench/overhead/modes.py, 3 rounds, launch loop and
#      resnet18);
#   3. issue 25: the capture windows on PyTorch again (the on-demand case waits for the armed file).
# usage: tests/gpu/batch-s11c.sh OUT
set -u
OUT=${1:-/tmp/s11c}; mkdir -p "$OUT"; B=$PWD/.dev/bin
L=$OUT/s11c.txt; : >"$L"
say() { echo "== $* ($(date +%T))" >>"$L"; }
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$L"
say "1. hang hunt"
timeout 270 bash tests/gpu/busy/hang-hunt.sh "$B" 4 60 >>"$L" 2>&1
say "2. modes"
timeout 200 python3 bench/overhead/modes.py "$B" /tmp/modes --reps 3 --modes bare,armed,default \
	--workloads launch,resnet18 >/tmp/modes.md 2>/tmp/modes.err
echo "modes rc=$?" >>"$L"; cat /tmp/modes.md >>"$L"; grep -v "done" /tmp/modes.err | tail -5 >>"$L"
cp /tmp/modes/modes.json "$OUT/" 2>/dev/null
say "3. capture-torch"
timeout 90 bash tests/gpu/capture-torch.sh "$B" /tmp/cap >>"$L" 2>&1
say "end"
cat "$L"
