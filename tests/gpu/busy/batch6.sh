#!/bin/bash
# Issue 38's busy-time pairs (tests/gpu/busy/advice.py) and issue 42's start-before-CUDA check, on one
# GPU, from the repository root with the binaries in .dev/bin: usage batch6.sh OUT GROUP, GROUP one of
#   blocks  the three fusion pairs (rmsnorm, lngelu, scores: eager|compiled) and graphs eager|graph,
#           then `gpt-trace start` 1 s after launching a PyTorch program (--start-later)
#   convs   scores eager again, conv nchw|cl|cl_bf16 and mixed fp32|bf16
# Each variant runs untraced (the measured saving: the median step), then traced with --gpu-metrics;
# the traces are in OUT/traces (blocks: also packed into OUT/blocks.txz), the log is OUT/GROUP.txt.
# The start-later trace (1.6M kernels) is too big to bring back: its check is the log line.
OUT=${1:-/tmp/b6}; GROUP=${2:-blocks}; mkdir -p "$OUT/traces"; B=$PWD/.dev/bin; L=$OUT/$GROUP.txt; : > "$L"
P=tests/gpu/busy/advice.py
case $GROUP in
blocks) runs="rmsnorm:eager rmsnorm:compiled lngelu:eager lngelu:compiled scores:eager scores:compiled graphs:eager graphs:graph" ;;
convs) runs="scores:eager conv:nchw conv:cl conv:cl_bf16 mixed:fp32 mixed:bf16" ;;
esac
for r in $runs; do
	timeout 150 python3 $P ${r%:*} ${r#*:} 2>&1 | grep -v Warning >> "$L"
done
for r in $runs; do
	t=$OUT/traces/${r%:*}-${r#*:}.sqlite
	timeout 150 $B/gpt-trace run --gpu-metrics -o "$t" -- python3 $P ${r%:*} ${r#*:} >> "$L" 2>&1
	echo "traced $r rc=$? bytes=$(stat -c %s "$t" 2>/dev/null)" >> "$L"
done
if [ "$GROUP" = blocks ]; then
	# gpt-trace start while the program is still importing torch (issue 42)
	export GPT_TRACE_CONTROL_DIR=$OUT/control
	t=$OUT/traces/start-later.sqlite
	$B/gpt-trace run --start-later -o "$t" -- python3 $P graphs eager --steps 4000 >> "$L" 2>&1 &
	sleep 1
	$B/gpt-trace start all >> "$L" 2>&1
	wait
	python3 - "$t" >> "$L" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda s: db.execute(s).fetchall()
print("start-later: windows", q("select openedBy, closedBy, start, end from GPT_CAPTURE_WINDOWS"),
      "kernels", q("select count(*), min(start), max(end) from CUPTI_ACTIVITY_KIND_KERNEL"),
      "late", q("select value from GPT_META where name = 'capture_command_late_ns'"),
      "first cuda call", q("select min(start) from CUPTI_ACTIVITY_KIND_RUNTIME"))
PY
fi
rm -f "$OUT/traces/start-later.sqlite"
ls -l "$OUT" >> "$L"
cat "$L"
