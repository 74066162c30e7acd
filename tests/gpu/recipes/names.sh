#!/usr/bin/env bash
# Where nsys defines its GPU metrics (names and counters), and which candidate sets the PM sampler takes.
set -u
out=${OUT:-/tmp/out}; mkdir -p "$out"
N=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
{
grep -rIl "SM Issue" "$N" 2>/dev/null | head -20
echo "-- binary"
grep -rl --binary-files=binary "SM Issue" "$N" 2>/dev/null | head -20
} > "$out/where-names.txt"
for f in $(grep -rl "SM Issue" "$N" 2>/dev/null | head -8); do
	echo "=== $f"
	strings -n 6 "$f" | grep -n -i -E "SM Issue|Warps in Flight|GR Active|Clock Frequency|NVLink (RX|TX)|Unallocated|sm__inst_executed|tpc__warps|gr__cycles|cycles_elapsed.avg.per_second|nvlrx__|nvltx__|gh100|GH100" | head -150
done > "$out/names.txt" 2>&1
ls $N/*.config $N/*gpu*metric* $N/*/*.config 2>/dev/null >> "$out/where-names.txt"
find $N -iname "*metric*" | head -40 >> "$out/where-names.txt"
