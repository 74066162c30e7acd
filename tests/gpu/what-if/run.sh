#!/bin/bash
# Issue 41 on the GPU: the what-if replay against measured fixes. two_fixes.py in its four variants
# (both bottlenecks, each fix, both fixes), untraced (3 runs each, the median kept) and traced; the
# bad variant's report (text and JSON) says what each fix would leave, alone and together.
#
# Usage: tests/gpu/what-if/run.sh BIN OUT   (BIN: gpt-trace and libgpt_inject.so)
set -u
B=$1
W=$2
here=$(cd "$(dirname "$0")" && pwd)
L=$W/log.txt
mkdir -p "$W"
nvidia-smi -L >"$L" 2>&1
for v in bad nosync tf32 both; do
	for r in 1 2 3; do
		python3 "$here/two_fixes.py" "$v" 30 2>&1 | grep two_fixes: | sed "s/^/untraced $r: /" >>"$L"
	done
	"$B/gpt-trace" run -f -o "$W/two_fixes-$v.sqlite" -- python3 "$here/two_fixes.py" "$v" 30 >"$W/run-$v.out" 2>&1
	echo "traced rc=$?: $(grep two_fixes: "$W/run-$v.out")" >>"$L"
	"$B/gpt-trace" report "$W/two_fixes-$v.sqlite" >"$W/report-$v.txt" 2>&1
	sed -n '/What to shorten/,/^$/p' "$W/report-$v.txt" | sed "s/^/$v: /" >>"$L"
	grep -E '^ ?[0-9]+\. |recoverable:' "$W/report-$v.txt" | sed "s/^/$v: /" >>"$L"
done
"$B/gpt-trace" report -f json -o "$W/report-bad.json" "$W/two_fixes-bad.sqlite" 2>>"$L"
