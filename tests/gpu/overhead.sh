#!/usr/bin/env bash
# Per-launch cost of tracing, measured on a GPU machine: launch_bound (N back-to-back empty kernel
# launches, one sync) run R times untraced and R times under `gpt-trace run`, interleaved so that
# clock and thermal drift hit both sides alike. Prints every run's microseconds per launch, the
# medians, and the traced-minus-untraced difference per launch.
#
# usage: tests/gpu/overhead.sh [-b BUILD] [-r RUNS] [-n LAUNCHES]
#   -b BUILD     the build folder with bin/gpt-trace and bin/launch_bound (default: $BUILD, else build)
#   -r RUNS      runs per side (default 5)
#   -n LAUNCHES  launches per run (default 200000)
set -u -o pipefail

build=${BUILD:-build}
runs=5
launches=200000
while getopts "b:r:n:h" opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) runs=$OPTARG ;;
	n) launches=$OPTARG ;;
	*) sed -n '/^# usage:/,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; [ "$opt" = h ]; exit $? ;;
	esac
done
bin=$build/bin
[ -x "$bin/gpt-trace" ] && [ -x "$bin/launch_bound" ] || {
	echo "overhead: no '$bin/gpt-trace' or '$bin/launch_bound': build first" >&2
	exit 2
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpt-trace-overhead.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# us_per_launch from a launch_bound result line
per_launch() {
	sed -n 's/^launch_bound: ok .* us_per_launch=\([0-9.]*\).*/\1/p' | tail -n 1
}

bare=()
traced=()
for i in $(seq "$runs"); do
	b=$("$bin/launch_bound" --launches "$launches" | per_launch)
	t=$("$bin/gpt-trace" run -o "$tmp/run$i-%p.sqlite" -- "$bin/launch_bound" --launches "$launches" \
		2>/dev/null | per_launch)
	[ -n "$b" ] && [ -n "$t" ] || { echo "overhead: run $i failed" >&2; exit 1; }
	echo "run $i: untraced $b us/launch, traced $t us/launch"
	bare+=("$b")
	traced+=("$t")
	rm -f "$tmp"/*.sqlite
done
python3 - "${#bare[@]}" "${bare[@]}" "${traced[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1])
bare, traced = [float(v) for v in sys.argv[2:2 + n]], [float(v) for v in sys.argv[2 + n:]]
mb, mt = statistics.median(bare), statistics.median(traced)
print("median of %d runs of %s: untraced %.3f us/launch, traced %.3f us/launch, overhead %+.3f us/launch (%+.0f%%)"
      % (n, "launch_bound", mb, mt, mt - mb, 100 * (mt - mb) / mb))
PY
