#!/bin/bash
# Real programs under gpt-trace run on the GPU machine, with their reports: the .item() pair (bad
# and fixed, also untraced for the measured step times) and the small PyTorch training loop.
# Usage: tests/gpu/pairs/run-real.sh BUILD OUT
set -u
B=${1:-build}; OUT=${2:-/tmp/pairs}
mkdir -p "$OUT"
for v in bad fixed; do
	flag=; [ $v = fixed ] && flag=--fixed
	python3 tests/gpu/pairs/item_sync.py --steps 300 $flag > "$OUT/item-$v-untraced.out" 2>&1
	"$B/bin/gpt-trace" run -o "$OUT/item-$v.sqlite" -- python3 tests/gpu/pairs/item_sync.py --steps 300 $flag \
		> "$OUT/item-$v-traced.out" 2>&1
	"$B/bin/gpt-trace" report "$OUT/item-$v.sqlite" > "$OUT/item-$v.txt" 2>&1
	"$B/bin/gpt-trace" report -f json -o "$OUT/item-$v.json" "$OUT/item-$v.sqlite"
	"$B/bin/gpt-trace" report --whole-trace "$OUT/item-$v.sqlite" > "$OUT/item-$v-whole.txt" 2>&1
done
"$B/bin/gpt-trace" run -o "$OUT/train.sqlite" -- python3 tests/gpu/train_small.py --steps 60 > "$OUT/train.out" 2>&1
"$B/bin/gpt-trace" report "$OUT/train.sqlite" > "$OUT/train.txt" 2>&1
