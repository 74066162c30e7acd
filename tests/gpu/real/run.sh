#!/usr/bin/env bash
# Real programs under gpt-trace run, with their reports, to read as their authors would.
# usage: [PROGRAMS='resnet ...'] tests/gpu/real/run.sh BUILD OUTDIR
# Each program runs untraced first (NAME.bare.out), then traced (NAME.out, NAME.sqlite, NAME.txt, NAME.json).
set -u
B=${1:-build}; OUT=${2:-/tmp/real}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
for p in ${PROGRAMS:-resnet compile generate gpt2train jax small}; do
	timeout 240 python3 "$here/programs.py" "$p" > "$OUT/$p.bare.out" 2>&1	# untraced, to compare
	timeout 240 "$B/bin/gpt-trace" run -o "$OUT/$p.sqlite" -- python3 "$here/programs.py" "$p" > "$OUT/$p.out" 2>&1
	echo "$p: exit $?" >> "$OUT/status.txt"
	"$B/bin/gpt-trace" report -q "$OUT/$p.sqlite" > "$OUT/$p.txt" 2>&1
	"$B/bin/gpt-trace" report -q -f json -o "$OUT/$p.json" "$OUT/$p.sqlite" 2>> "$OUT/$p.txt"
done
