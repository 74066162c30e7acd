#!/bin/bash
# Analyzer speed benchmark: makes (or reuses) a synthetic trace of N kernels with make-trace.sh and
# times `gpt-trace stats` and `gpt-trace report` on it: wall time and peak RSS from /usr/bin/time -v,
# and events per second (kernels + API calls + copies + syncs + NVTX ranges over wall time).
#   usage: run.sh [-n N] [-t TRACE] [-b BINDIR] [-o RESULTS.md]
# With -o, the results are appended to that file as a dated Markdown section.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
n=10000000
trace=""
bin="$src/build/bin"
results=""
while getopts "n:t:b:o:" opt; do
	case $opt in
	n) n=$OPTARG ;;
	t) trace=$OPTARG ;;
	b) bin=$OPTARG ;;
	o) results=$OPTARG ;;
	*) echo "usage: run.sh [-n N] [-t TRACE] [-b BINDIR] [-o RESULTS.md]" >&2; exit 2 ;;
	esac
done
[ -n "$trace" ] || trace=${TMPDIR:-/tmp}/gpt-trace-bench-$n.sqlite
if [ ! -s "$trace" ]; then
	echo "making $trace ($n kernels)..." >&2
	start=$(date +%s.%N)
	"$here/make-trace.sh" "$trace" "$n"
	echo "made in $(echo "$(date +%s.%N) - $start" | bc) s" >&2
fi
events=$(sqlite3 "$trace" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) +
	(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) +
	(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) + (SELECT count(*) FROM NVTX_EVENTS)")
size=$(stat -c %s "$trace")

measure() {
	local name=$1 log
	shift
	log=$(mktemp)
	/usr/bin/time -v "$@" > /dev/null 2> "$log" || { cat "$log" >&2; rm -f "$log"; exit 1; }
	local wall rss cpu load
	load=$(cut -d' ' -f1 /proc/loadavg)
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
		for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$log")
	cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$log")
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log")
	rm -f "$log"
	printf '| `%s` | %.1f s | %.1f s | %.1f MiB | %.2f M/s | %s |\n' "$name" "$wall" "$cpu" \
		"$(echo "$rss / 1024" | bc -l)" "$(echo "$events / $wall / 1000000" | bc -l)" "$load"
}

# CPU time is the steadier number on a shared machine; the load average (1 min, at the end of the
# run) says how shared it was.
table=$(
	echo "| command | wall | CPU | peak RSS | events/s (wall) | load |"
	echo "|---|---:|---:|---:|---:|---:|"
	measure "gpt-trace stats" "$bin/gpt-trace" stats "$trace"
	measure "gpt-trace report" "$bin/gpt-trace" report "$trace"
)
header="## $(date -u +%Y-%m-%d) — $n kernels, $events events, $((size / 1048576)) MiB trace
machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), \
$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM; \
commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); SQLite $(sqlite3 --version | cut -d' ' -f1)"
echo "$header"
echo
echo "$table"
if [ -n "$results" ]; then
	printf '\n%s\n\n%s\n' "$header" "$table" >> "$results"
fi
