#!/bin/bash
# The checks session 12 left for a GPU (issue 23), in one call on one H200, from the repository root
# with gpt-trace, libgpt_inject.so, bench_launch_loop, copies, membw and libstackdump.so in BINDIR:
#  1. the exit hang: 26 launch loops under --gpu-metrics (13 at 10 kHz, 13 at 1 kHz); before the fix
#     of 8445675, 10 of 26 hung at exit in the last decode. Expect no HANG line, every rc=0;
#  2. PCIe bytes in the default set (eleven metrics on GH100): copies' PCIe bytes against the bytes
#     it copied, each way (tests/gpu/busy/traffic.sh: PASS/FAIL lines).
# usage: verify-exit.sh BINDIR OUT  (OUT/verify-exit.txt; about 4 minutes)
set -u
B=${1:?usage: verify-exit.sh BINDIR OUT}; OUT=${2:?}; mkdir -p "$OUT"; L=$OUT/verify-exit.txt
here=$(dirname "$0")
{
	echo "# $(date -u +%F' '%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	timeout 200 bash "$here/hang-hunt.sh" "$B" 13 20 launch --gpu-metrics
	timeout 200 bash "$here/hang-hunt.sh" "$B" 13 20 launch --gpu-metrics=1khz
	timeout 150 bash "$here/traffic.sh" "$B" 2
} >"$L" 2>&1
echo "runs: $(grep -c '^run' "$L"), hangs: $(grep -c '^HANG' "$L"), not rc=0: $(grep '^run' "$L" | grep -vc 'rc=0')"
grep -v '^ ' "$L" | grep -v '^run .* rc=0'
