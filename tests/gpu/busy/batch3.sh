#!/usr/bin/env bash
# Device batch 3 (2026-11-27, H200), on the merged build, as run: GPU metrics (gpu-metrics.sh, two
# overhead repetitions), the installed package (doctor.sh -d), the CUB loop without NVTX (issue 31)
# and the Kineto both-ways comparison. The build's gpt-trace, libgpt_inject.so, launch_bound, membw
# and chase go in BIN_DIR/bin, the .deb beside. usage: batch3.sh BIN_DIR DEB OUT
set -u
D=${1:-.dev}; DEB=$2; OUT=${3:-/tmp/batch3}; W=/tmp/batch3w
rm -rf "$W"; mkdir -p "$W" "$OUT"
REPS="1 2" timeout 430 bash tests/gpu/busy/gpu-metrics.sh "$D" "$W/gm" > "$W/gm.out" 2>&1
echo "gpu-metrics.sh rc=$?" >> "$W/status.txt"
timeout 100 bash tests/gpu/doctor.sh -d "$DEB" -w "$W/doctor" > "$W/doctor.log" 2>&1
echo "doctor rc=$?" >> "$W/status.txt"
rm -rf "$W/doctor/root"
timeout 120 "$D/bin/gpt-trace" run -o "$W/cub_loop.sqlite" -- python3 tests/gpu/busy/cub_loop.py 12 > "$W/cub_loop.out" 2>&1
echo "cub_loop rc=$?" >> "$W/status.txt"
"$D/bin/gpt-trace" report -q "$W/cub_loop.sqlite" > "$W/cub_loop.txt" 2>&1
timeout 240 python3 tests/gpu/kineto/both_ways.py "$D/bin/gpt-trace" "$W/bw" --steps 10 > "$W/both_ways.txt" 2>&1
echo "both_ways rc=$?" >> "$W/status.txt"
rm -f "$W"/bw/*.sqlite
tar -C "$W" -czf "$OUT/batch3.tgz" .
cat "$W/status.txt"
