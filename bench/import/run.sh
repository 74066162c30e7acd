#!/usr/bin/env bash
# Import speed and memory of `gpt-trace import` on large generated Kineto traces (gen-kineto.py):
# each size plain and gzipped, REPS runs each, wall and CPU time, MB of JSON per second and peak RSS
# (GNU time). Appends a dated section to bench/import/RESULTS.md with the machine's description.
# usage: bench/import/run.sh [BUILD] [REPS] [STEPS...]   (default: build 3 50 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
reps=${2:-3}
shift $(($# > 2 ? 2 : $#))
steps=("${@:-50 200}")
read -r -a steps <<<"${steps[*]}"
gpt=$build/bin/gpt-trace
work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-import-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=bench/import/RESULTS.md

{
	echo
	echo "## $(date -u +%Y-%m-%d) on $(hostname -s): $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo
	echo "Commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)'), \`bench/import/run.sh $build $reps ${steps[*]}\`;"
	echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (wall time counts other users of the CPUs; CPU time does not)."
	echo
	echo "| trace | JSON MB | file MB | rows written | wall s (median) | CPU s (median) | MB/s of JSON, wall | MB/s of JSON, CPU | peak RSS MB | trace MB |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
} >> "$out"

for n in "${steps[@]}"; do
	for gz in "" ".gz"; do
		f=$work/steps$n.json$gz
		python3 bench/import/gen-kineto.py --steps "$n" --ops 1000 ${gz:+--gzip} "$f"
		json_bytes=$(if [ -n "$gz" ]; then zcat "$f" | wc -c; else wc -c < "$f"; fi)
		: > "$work/times"
		for _ in $(seq "$reps"); do
			/usr/bin/time -f "%e %U %S %M" -a -o "$work/times" "$gpt" import -q "$f" -o "$work/out.sqlite"
		done
		events=$(sqlite3 "$work/out.sqlite" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) +
			(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) +
			(SELECT count(*) FROM NVTX_EVENTS)")
		python3 - "$work/times" "$json_bytes" "$(stat -c %s "$f")" "$events" "$(stat -c %s "$work/out.sqlite")" \
			"$n steps x 1000 ops${gz:+ (gzip)}" >> "$out" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip() and l[0].isdigit()]
mb = int(sys.argv[2]) / 1e6
wall = statistics.median(r[0] for r in rows)
cpu = statistics.median(r[1] + r[2] for r in rows)
rss = max(r[3] for r in rows) / 1024
print(f"| {sys.argv[6]} | {mb:.0f} | {int(sys.argv[3]) / 1e6:.0f} | {int(sys.argv[4]):,} | {wall:.2f} | "
      f"{cpu:.2f} | {mb / wall:.0f} | {mb / cpu:.0f} | {rss:.0f} | {int(sys.argv[5]) / 1e6:.0f} |")
PY
		rm -f "$f"
	done
done
tail -n $((${#steps[@]} * 2 + 2)) "$out"
