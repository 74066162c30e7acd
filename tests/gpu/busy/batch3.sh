#!/usr/bin/env bash
# Device batch 3 (2026-11-27), on the merged build: the installed package (tests/gpu/doctor.sh -d),
# the busy-time pairs and resnet18 under --gpu-metrics with their reports and stats, and the CUB
# loop without NVTX (issue 31). usage: batch3.sh BIN DEB OUT
set -u
BIN=${1:-.dev/bin}; DEB=$2; OUT=${3:-/tmp/batch3}; W=/tmp/batch3w
rm -rf "$W"; mkdir -p "$W" "$OUT"
G=$BIN/gpt-trace
timeout 150 bash tests/gpu/doctor.sh -d "$DEB" -w "$W/doctor" > "$W/doctor.log" 2>&1
echo "doctor: exit $?" >> "$W/status.txt"
GM=; "$G" run --help 2>&1 | grep -q -- --gpu-metrics && GM=--gpu-metrics
run() {	# run NAME PROGRAM...: traced, then its report (text, json) and stats
	local name=$1; shift
	timeout 150 "$G" run $GM -o "$W/$name.sqlite" -- "$@" > "$W/$name.out" 2>&1
	echo "$name: exit $?" >> "$W/status.txt"
	"$G" report -q "$W/$name.sqlite" > "$W/$name.txt" 2>&1
	"$G" report -q -f json -o "$W/$name.json" "$W/$name.sqlite" 2>> "$W/$name.txt"
	"$G" stats "$W/$name.sqlite" > "$W/$name.stats.txt" 2>&1
}
run precision-fp32 python3 tests/gpu/busy/precision.py fp32 --steps 10
run precision-bf16 python3 tests/gpu/busy/precision.py bf16 --steps 10
run fusion-eager python3 tests/gpu/busy/fusion.py eager --steps 10
run resnet python3 tests/gpu/real/programs.py resnet
run cub_loop python3 tests/gpu/busy/cub_loop.py 12
for r in 1 2; do python3 tests/gpu/busy/cub_loop.py 30 >> "$W/cub_loop-untraced.txt" 2>&1; done
tar -C "$W" --exclude='*.deb' -czf /tmp/batch3.tgz .
ls -la /tmp/batch3.tgz
split -b 15M /tmp/batch3.tgz "$OUT/batch3.tgz."
cat "$W/status.txt"
