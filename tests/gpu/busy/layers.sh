#!/bin/bash
# Issue 38 item 6 on the GPU: tests/gpu/busy/layers.py traced in both modes; the reports' iteration
# lines and the traces (tests/fixtures/gpu/real/layers-*.sqlite).
# Usage: tests/gpu/busy/layers.sh BIN OUT
B=$1 W=$2
for m in sync none; do
	"$B/gpt-trace" run -f -o "$W/layers-$m.sqlite" -- python3 tests/gpu/busy/layers.py $m >"$W/layers-$m.out" 2>&1
	echo "rc=$?" >>"$W/layers-$m.out"
	"$B/gpt-trace" report "$W/layers-$m.sqlite" >>"$W/layers-$m.out" 2>&1
done
