#!/bin/bash
# Analyzer speed benchmark: makes (or reuses) a synthetic trace of N kernels with make-trace.sh and
# times `gpt-trace stats`, `gpt-trace report` (all rules, and the seven that read the shared walk),
# `gpt-trace baseline save` (what diff and check read of a trace) and (with -x) `gpt-trace export`
# to Perfetto on it (written to /dev/null: the writer's work, not the disk's),
# against the SQLite floor measured in the same run on the same file: one window-function pass over
# the kernels (`lag(end) over (partition by deviceId order by start)`). Per command: wall, user and
# system time and peak RSS from /usr/bin/time, events per second (kernels + API calls + copies +
# syncs + NVTX ranges over wall and over user time), and wall and user time as multiples of the
# window pass's (the loader scans and reads ahead on every CPU, so a command's wall time can be less
# than its user time; the window pass runs on one). With -B, the same commands of a second build
# ("before") run first, for a before/after table.
#   usage: run.sh [-n N] [-t TRACE] [-b BINDIR] [-B BEFORE_BINDIR] [-x] [-o RESULTS.md]
# With -o, the results are appended to that file as a dated Markdown section.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
n=10000000
trace=""
bin="$src/build/bin"
before=""
export_too=0
results=""
while getopts "n:t:b:B:xo:" opt; do
	case $opt in
	n) n=$OPTARG ;;
	t) trace=$OPTARG ;;
	b) bin=$OPTARG ;;
	B) before=$OPTARG ;;
	x) export_too=1 ;;
	o) results=$OPTARG ;;
	*) echo "usage: run.sh [-n N] [-t TRACE] [-b BINDIR] [-B BEFORE_BINDIR] [-x] [-o RESULTS.md]" >&2; exit 2 ;;
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
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
window_user=""
window_wall=""

# measure NAME COMMAND...: one table row; sets last_user
measure() {
	local name=$1 log wall user sys rss ratio wall_ratio
	shift
	log=$out/time.log
	/usr/bin/time -f "%e %U %S %M" -o "$log" "$@" > /dev/null 2> "$out/stderr" || { cat "$log" "$out/stderr" >&2; exit 1; }
	read -r wall user sys rss < <(tail -1 "$log")
	last_user=$user
	last_wall=$wall
	ratio="–"
	wall_ratio="–"
	[ -n "$window_user" ] && ratio=$(printf '%.2f×' "$(echo "$user / $window_user" | bc -l)")
	[ -n "$window_wall" ] && wall_ratio=$(printf '%.2f×' "$(echo "$wall / $window_wall" | bc -l)")
	printf '| %s | %.2f s | %.2f s | %.2f s | %.1f MiB | %.2f M/s | %.2f M/s | %s | %s |\n' "$name" "$wall" "$user" \
		"$sys" "$(echo "$rss / 1024" | bc -l)" "$(echo "$events / $wall / 1000000" | bc -l)" \
		"$(echo "$events / ($user + 0.001) / 1000000" | bc -l)" "$wall_ratio" "$ratio"
}

commands() {
	local label=$1 dir=$2
	measure "$label \`stats\`" "$dir/gpt-trace" stats "$trace"
	measure "$label \`report\`" "$dir/gpt-trace" report -q "$trace"
	# the rules that read the shared walk, as when issue 14 was measured (before the NCCL rules)
	measure "$label \`report -r\` (7 walk rules)" "$dir/gpt-trace" report -q -r small-kernels -r idle-gaps \
		-r pageable-memcpy -r excessive-sync -r sync-memcpy -r small-grid -r uncoalesced-access "$trace"
	# the kernel timings diff and check read (one side)
	measure "$label \`baseline save\`" "$dir/gpt-trace" baseline save -q -o "$out/baseline.json" "$trace"
	if [ "$export_too" = 1 ]; then
		measure "$label \`export\` (Perfetto)" "$dir/gpt-trace" export -q --no-findings -o /dev/null "$trace"
	fi
}

# User time is the steadier number on a shared machine; the load average (1 min, at the end of the
# run) says how shared it was.
table=$(
	echo "| command | wall | user | sys | peak RSS | events/s (wall) | events/s (user) | wall / window pass | user / window pass |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	measure "SQLite window pass (the floor)" sqlite3 "$trace" "SELECT count(*), sum(g) FROM (SELECT start -
		lag(end) OVER (PARTITION BY deviceId ORDER BY start) AS g FROM CUPTI_ACTIVITY_KIND_KERNEL)"
	window_user=$last_user
	window_wall=$last_wall
	[ -n "$before" ] && commands "before:" "$before"
	commands "${before:+after: }" "$bin"
	echo
	echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
)
kernels=$(sqlite3 "$trace" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
header="## $(date -u +%Y-%m-%d) — $(basename "$trace"): $kernels kernels, $events events, $((size / 1048576)) MiB trace
machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), \
$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM; \
commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); SQLite $(sqlite3 --version | cut -d' ' -f1)"
echo "$header"
echo
echo "$table"
if [ -n "$results" ]; then
	printf '\n%s\n\n%s\n' "$header" "$table" >> "$results"
fi
