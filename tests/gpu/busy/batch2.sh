#!/usr/bin/env bash
# Device batch 2 (2026-11-27): the sample pairs re-recorded with today's collector (schema version 2,
# replacing the version-1 fixtures), the hardware-metrics fixture likewise, and the layout pair
# (resnet18 NCHW vs channels_last) untraced twice and traced once. usage: batch2.sh BUILD OUT
set -u
B=${1:-build}; OUT=${2:-/tmp/batch2}; W=/tmp/batch2w
rm -rf "$W"; mkdir -p "$W" "$OUT"
timeout 400 tests/gpu/pairs/run.sh "$B" "$W/pairs" > "$W/pairs.log" 2>&1
echo "pairs: exit $?" >> "$W/status.txt"
timeout 200 tests/gpu/metrics/run-traced.sh "$B" "$W/metrics" > "$W/metrics.log" 2>&1
echo "metrics: exit $?" >> "$W/status.txt"
for r in 1 2; do for v in nchw channels_last; do
	timeout 120 python3 tests/gpu/busy/layout.py $v >> "$W/layout-untraced.txt" 2>&1
done; done
for v in nchw channels_last; do
	timeout 120 "$B/bin/gpt-trace" run -o "$W/layout-$v.sqlite" -- python3 tests/gpu/busy/layout.py $v --steps 10 >> "$W/layout-traced.txt" 2>&1
done
rm -f "$W"/pairs/*.json
tar -C "$W" -czf /tmp/batch2.tgz .
ls -la /tmp/batch2.tgz
split -b 15M /tmp/batch2.tgz "$OUT/batch2.tgz."
