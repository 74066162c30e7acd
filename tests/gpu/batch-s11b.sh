#!/bin/bash
# Session 11, device call 2 (one GPU), from the repository root with the binaries in .dev/bin:
#   1. issue 24: leak.py's new fixed variant (a detached clone) against the old one (leak_diag.py),
#      then the leak pair re-recorded: untraced twice alternating, traced once each
#      (tests/gpu/pairs/memory-batch.sh with PAIRS=leak NOCOST=1);
#   2. issues 25 and 23: what each mode costs (bench/overhead/modes.py, 3 interleaved rounds): bare,
#      armed and idle (--start-later), recording, --gpu-metrics at 10 kHz and 1 kHz, on the launch
#      loop, resnet18 and a transformer step.
# usage: tests/gpu/batch-s11b.sh OUT   (OUT/s11b.txt, OUT/mem.tgz, OUT/modes.json)
set -u
OUT=${1:-/tmp/s11b}; mkdir -p "$OUT"; B=$PWD/.dev/bin
L=$OUT/s11b.txt; : >"$L"
say() { echo "== $* ($(date +%T))" >>"$L"; }
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$L"
say "1. leak variants"
timeout 120 python3 tests/gpu/pairs/leak_diag.py --variants detach,clone --snapshot none --steps 20 >>"$L" 2>&1
say "1b. leak pair"
D=/tmp/memd; rm -rf $D; mkdir -p $D; ln -s "$B" $D/bin; cp tests/gpu/pairs/*.py $D/
PAIRS=leak NOCOST=1 timeout 200 bash tests/gpu/pairs/memory-batch.sh $D "$OUT" >>"$L" 2>&1
tar -xzOf "$OUT/mem.tgz" ./pairs.tsv >>"$L" 2>&1
say "2. modes"
timeout 470 python3 bench/overhead/modes.py "$B" /tmp/modes --reps 3 --modes bare,armed,default,gm10k,gm1k \
	--workloads launch,resnet18,transformer >/tmp/modes.md 2>/tmp/modes.err
echo "modes rc=$?" >>"$L"; cat /tmp/modes.md >>"$L"; tail -20 /tmp/modes.err >>"$L"
cp /tmp/modes/modes.json "$OUT/" 2>/dev/null
say "end"
cat "$L"
