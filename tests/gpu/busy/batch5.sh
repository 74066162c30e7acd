#!/bin/bash
# The tensor-idle pair on one GPU (issue 23), from the repository root with the binaries in
# .dev/bin: usage batch5.sh OUT. Untraced bad/fixed interleaved, 3 rounds (the measured saving);
# then each traced with --gpu-metrics, trimmed to its steps (the fixtures).
OUT=${1:-/tmp/b5}; mkdir -p $OUT; B=$PWD/.dev/bin; L=$OUT/vocab.txt; : > $L
for r in 1 2 3; do for v in bad fixed; do
	timeout 120 python3 tests/gpu/busy/vocab.py $v >> $L 2>&1
done; done
for v in bad fixed; do
	timeout 120 $B/gpt-trace run --gpu-metrics -o $OUT/vocab-$v.sqlite -- python3 tests/gpu/busy/vocab.py $v >> $L 2>&1
	echo "traced $v rc=$?" >> $L
	python3 tests/gpu/busy/trim_metrics.py $OUT/vocab-$v.sqlite 2 >> $L 2>&1
done
grep -v Warning $L
