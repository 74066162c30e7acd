#!/usr/bin/env bash
# Runs every sample (and a small PyTorch training loop) under `gpt-trace run` on a GPU machine and
# checks each trace against what the sample did, with tests/gpu/check_traces.py. Each sample also runs
# once untraced, so a broken sample is told apart from a broken tracer. Prints PASS/FAIL per check and
# "N passed, M failed"; exits non-zero when a check failed. With FIXTURE_DIR, also copies the small
# traces there (with their runs.txt) so they can be committed as fixtures. See tests/gpu/README.md.
#
# usage: tests/gpu/run-samples.sh [-b BUILD] [-w WORKDIR] [FIXTURE_DIR]
#   -b BUILD    the build folder holding bin/gpt-trace, bin/libgpt_inject.so and the samples
#               (default: $BUILD, else build)
#   -w WORKDIR  where traces and logs go (default: a new folder under ${TMPDIR:-/tmp}); emptied of
#               earlier results first
set -u -o pipefail

usage() {
	sed -n '/^# usage:/,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
}

die() {
	echo "run-samples: $*" >&2
	exit 2
}

build=${BUILD:-build}
work=
while getopts "b:w:h" opt; do
	case $opt in
	b) build=$OPTARG ;;
	w) work=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -le 1 ] || { usage >&2; exit 2; }
fixtures=${1:-}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ -d "$build/bin" ] || die "no '$build/bin': build first (cmake -S . -B build && cmake --build build -j)"
bin=$(cd "$build/bin" && pwd)
gpt=$bin/gpt-trace
[ -x "$gpt" ] || die "no '$gpt': the build has no gpt-trace"
[ -f "$bin/libgpt_inject.so" ] || die "no '$bin/libgpt_inject.so': the build found no CUDA toolkit with CUPTI"
samples="launch_bound copies idle_gaps sync_every_launch access streams threads fork_child nvtx graph
	small_grid well_written slow_kernel"
for s in $samples; do
	[ -x "$bin/$s" ] || die "no sample '$bin/$s': the build found no nvcc"
done
command -v python3 >/dev/null || die "python3 not found"
python3 -c 'import sqlite3' 2>/dev/null || die "python3 has no sqlite3 module"
command -v timeout >/dev/null || die "timeout (coreutils) not found"

work=${work:-$(mktemp -d "${TMPDIR:-/tmp}/gpt-trace-gpu.XXXXXX")}
mkdir -p "$work" || die "cannot create '$work'"
work=$(cd "$work" && pwd)
rm -f "$work"/runs.txt "$work"/*.sqlite "$work"/*.sqlite.* "$work"/*.out "$work"/*.err

# The checks assume the launcher's defaults.
unset GPT_TRACE_OUTPUT GPT_TRACE_FORCE GPT_TRACE_API GPT_TRACE_COMMIT_MS GPT_TRACE_QUIET GPT_TRACE_METRICS \
	GPT_TRACE_SESSION GPT_TRACE_INJECT_LIB

device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "device:  ${device:-unknown (nvidia-smi failed: without a GPU every sample fails)}"
echo "build:   $bin"
echo "work:    $work"
{
	echo "# gpt-trace GPU sample runs: $(date -u +%Y-%m-%dT%H:%M:%SZ), device: ${device:-unknown}," \
		"commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "# label	sample	exit	untraced-exit	command	result	untraced-result"
} >"$work/runs.txt"

# run LABEL SAMPLE LIMIT_SECONDS PROGRAM [ARGS...]: untraced, then traced, then one runs.txt line.
run() {
	local label=$1 sample=$2 limit=$3
	shift 3
	local rc bare_rc line bare_line cmd
	timeout -k 10 "$limit" "$@" >"$work/$label.bare.out" 2>"$work/$label.bare.err"
	bare_rc=$?
	timeout -k 10 "$limit" "$gpt" run -o "$work/$label-%p.sqlite" -- "$@" \
		>"$work/$label.out" 2>"$work/$label.err"
	rc=$?
	line=$(grep -a "^$sample: " "$work/$label.out" | tail -n 1 | tr -d '\t\r')
	bare_line=$(grep -a "^$sample: " "$work/$label.bare.out" | tail -n 1 | tr -d '\t\r')
	cmd=$(printf '%s ' "$@" | sed "s|$root/||g; s| \$||")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$sample" "$rc" "$bare_rc" "$cmd" "$line" \
		"$bare_line" >>"$work/runs.txt"
	printf 'ran %-26s exit %s (untraced %s): %s\n' "$label" "$rc" "$bare_rc" \
		"${line:-no result line, see $work/$label.err}"
}

# skip LABEL SAMPLE REASON: a run that cannot be made here.
skip() {
	printf '%s\t%s\tskip: %s\t-\t-\t\t\n' "$1" "$2" "$3" >>"$work/runs.txt"
	printf 'skipped %s: %s\n' "$1" "$3"
}

run launch_bound             launch_bound      300 "$bin/launch_bound" --launches 200000
run launch_bound_small       launch_bound      120 "$bin/launch_bound" --launches 2000
run copies                   copies            120 "$bin/copies"
run idle_gaps                idle_gaps         120 "$bin/idle_gaps"
run sync_every_launch        sync_every_launch 120 "$bin/sync_every_launch"
run sync_every_launch_stream sync_every_launch 120 "$bin/sync_every_launch" --stream
run access                   access            120 "$bin/access"
run streams                  streams           120 "$bin/streams"
run threads                  threads           120 "$bin/threads"
run fork_child               fork_child        120 "$bin/fork_child"
run nvtx                     nvtx              120 "$bin/nvtx"
run graph                    graph             120 "$bin/graph"
run small_grid               small_grid        120 "$bin/small_grid"
run well_written             well_written      120 "$bin/well_written"
run slow_kernel_base         slow_kernel       120 "$bin/slow_kernel"
run slow_kernel_base2        slow_kernel       120 "$bin/slow_kernel"
run slow_kernel_slow         slow_kernel       120 "$bin/slow_kernel" --slow
if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	run train_small train_small 600 python3 "$here/train_small.py" --steps 20
else
	skip train_small train_small "PyTorch with CUDA is not importable by python3"
fi

echo
python3 "$here/check_traces.py" "$work"
status=$?

if [ -n "$fixtures" ]; then
	# Everything but the 200,000-launch trace (launch_bound_small stands in for it): single traces
	# as <label>.sqlite, the fork tree's as <label>-<pid>.sqlite (the result line names the pids).
	mkdir -p "$fixtures" || die "cannot create '$fixtures'"
	awk -F'\t' '$1 != "launch_bound"' "$work/runs.txt" >"$fixtures/runs.txt"
	for label in $(awk -F'\t' '$1 !~ /^#/ && $1 != "launch_bound" { print $1 }' "$work/runs.txt"); do
		rm -f "$fixtures/$label.sqlite" "$fixtures/$label"-*.sqlite
		set -- "$work/$label"-*.sqlite
		if [ $# -eq 1 ] && [ -f "$1" ]; then
			cp "$1" "$fixtures/$label.sqlite"
		else
			for f in "$@"; do
				[ -f "$f" ] && cp "$f" "$fixtures/"
			done
		fi
	done
	echo
	echo "fixtures in $fixtures ($(du -sh "$fixtures" | cut -f1)); checking them as copied:"
	python3 "$here/check_traces.py" "$fixtures" | tail -n 1
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
echo "traces and logs: $work"
exit $status
