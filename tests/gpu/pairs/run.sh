#!/usr/bin/env bash
# Runs the sample pairs on a GPU machine: each bottleneck and its fix, one program with a flag
# (samples/steady_*.cu, tests/gpu/pairs/*.py), first untraced (the step times the program measures
# itself) and then under `gpt-trace run`, and writes the steady-state report of each trace as JSON
# (and as text, for people). Every program prints one result line with median_step_us and
# mean_step_us; the difference between a pair's bad and fixed mean_step_us, untraced, is the saving
# the report's estimate is held against. A pair that fails does not stop the others: each run's exit
# status goes into the table. The whole script takes about two to three minutes on an H200.
#
# usage: tests/gpu/pairs/run.sh [BUILD [OUTDIR]]
#   BUILD   the build folder holding bin/gpt-trace and the samples (default: build)
#   OUTDIR  where traces, reports and logs go (default: a new folder under ${TMPDIR:-/tmp});
#           earlier results of the same pairs there are removed first
# environment: STEPS (steps of the CUDA samples, default 200), PY_STEPS (of the PyTorch scripts,
# default 150), LIMIT (seconds one run may take, default 300).
#
# Writes, per pair variant (<name> the program, <variant> bad, fixed or clean):
#   OUTDIR/<name>-<variant>.sqlite          the trace
#   OUTDIR/<name>-<variant>.json            gpt-trace report -f json of it
#   OUTDIR/<name>-<variant>.txt             gpt-trace report of it, as text
#   OUTDIR/<name>-<variant>.untraced.{out,err} and .traced.{out,err} and .report.err: the logs
# and OUTDIR/pairs.tsv, tab-separated with a header line: name, variant, untraced_result_line,
# traced_result_line, untraced_exit, traced_exit, report_exit ("skip" where a run could not be made,
# "missing" where the traced run left no trace). Exits 1 when a run failed, 2 on a setup error.
set -euo pipefail

usage() {
	sed -n '/^# usage:/,/^# Writes/{/^# Writes/d;s/^# \{0,1\}//p}' "$0"
}

die() {
	echo "pairs: $*" >&2
	exit 2
}

case ${1:-} in
-h | --help) usage; exit 0 ;;
-*) usage >&2; exit 2 ;;
esac
[ $# -le 2 ] || { usage >&2; exit 2; }
build=${1:-build}
out=${2:-}
steps=${STEPS:-200}
py_steps=${PY_STEPS:-150}
limit=${LIMIT:-300}

here=$(cd "$(dirname "$0")" && pwd)
[ -d "$build/bin" ] || die "no '$build/bin': build first (cmake -S . -B build && cmake --build build -j)"
bin=$(cd "$build/bin" && pwd)
gpt=$bin/gpt-trace
[ -x "$gpt" ] || die "no '$gpt': the build has no gpt-trace"
for s in steady_sync steady_malloc steady_warmup steady_hostbound; do
	[ -x "$bin/$s" ] || die "no sample '$bin/$s': the build found no nvcc"
done
command -v timeout >/dev/null || die "timeout (coreutils) not found"
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/gpt-trace-pairs.XXXXXX") || die "cannot create a folder in ${TMPDIR:-/tmp}"
fi
mkdir -p "$out" || die "cannot create '$out'"
out=$(cd "$out" && pwd)

# The runs assume the launcher's defaults.
unset GPT_TRACE_OUTPUT GPT_TRACE_FORCE GPT_TRACE_API GPT_TRACE_COMMIT_MS GPT_TRACE_QUIET GPT_TRACE_METRICS \
	GPT_TRACE_SESSION GPT_TRACE_INJECT_LIB

tsv=$out/pairs.tsv
printf 'name\tvariant\tuntraced_result_line\ttraced_result_line\tuntraced_exit\ttraced_exit\treport_exit\n' >"$tsv"
device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1) || true
echo "device:  ${device:-unknown (nvidia-smi failed)}"
echo "build:   $bin"
echo "out:     $out"
failed=0

# result_line NAME FILE: the program's last result line in FILE, tabs and CRs dropped; empty if none.
result_line() {
	{ grep -a "^$1: ok " "$2" 2>/dev/null || true; } | tail -n 1 | tr -d '\t\r'
}

# field LINE KEY: the value of KEY=value in LINE; "-" if absent.
field() {
	local v

	v=$(printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1)
	printf '%s' "${v:--}"
}

# pair NAME VARIANT PROGRAM [ARGS...]: untraced, traced, reported, and one pairs.tsv line.
pair() {
	local name=$1 variant=$2
	shift 2
	local label=$name-$variant bare_rc=0 rc=0 report_rc=0 bare_line line

	rm -f "$out/$label".*
	timeout -k 10 "$limit" "$@" >"$out/$label.untraced.out" 2>"$out/$label.untraced.err" || bare_rc=$?
	timeout -k 10 "$limit" "$gpt" run -f -o "$out/$label.sqlite" -- "$@" \
		>"$out/$label.traced.out" 2>"$out/$label.traced.err" || rc=$?
	if [ -f "$out/$label.sqlite" ]; then
		"$gpt" report -f json -o "$out/$label.json" "$out/$label.sqlite" 2>"$out/$label.report.err" ||
			report_rc=$?
		"$gpt" report --color never -o "$out/$label.txt" "$out/$label.sqlite" 2>>"$out/$label.report.err" ||
			true
	else
		report_rc=missing
	fi
	bare_line=$(result_line "$name" "$out/$label.untraced.out")
	line=$(result_line "$name" "$out/$label.traced.out")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$variant" "$bare_line" "$line" "$bare_rc" "$rc" \
		"$report_rc" >>"$tsv"
	if [ "$bare_rc" != 0 ] || [ "$rc" != 0 ] || [ "$report_rc" != 0 ] || [ -z "$bare_line" ] ||
		[ -z "$line" ]; then
		failed=1
	fi
	printf '%-18s %-6s exit %s, traced %s, report %s; mean step untraced %s us, traced %s us' \
		"$name" "$variant" "$bare_rc" "$rc" "$report_rc" "$(field "$bare_line" mean_step_us)" \
		"$(field "$line" mean_step_us)"
	printf ' (median %s us, traced %s us)\n' "$(field "$bare_line" median_step_us)" \
		"$(field "$line" median_step_us)"
}

# skip NAME VARIANT REASON: a run that cannot be made here.
skip() {
	printf '%s\t%s\t\t\tskip\tskip\tskip\n' "$1" "$2" >>"$tsv"
	printf '%-18s %-6s skipped: %s\n' "$1" "$2" "$3"
}

pair steady_sync bad "$bin/steady_sync" --steps "$steps"
pair steady_sync fixed "$bin/steady_sync" --steps "$steps" --fixed
pair steady_malloc bad "$bin/steady_malloc" --steps "$steps"
pair steady_malloc fixed "$bin/steady_malloc" --steps "$steps" --fixed
pair steady_hostbound bad "$bin/steady_hostbound" --steps "$steps"
pair steady_hostbound fixed "$bin/steady_hostbound" --steps "$steps" --fixed
pair steady_warmup clean "$bin/steady_warmup" --steps "$steps"
if command -v python3 >/dev/null &&
	python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	pair item_sync bad python3 "$here/item_sync.py" --steps "$py_steps"
	pair item_sync fixed python3 "$here/item_sync.py" --steps "$py_steps" --fixed
	pair dataloader_pinned bad python3 "$here/dataloader_pinned.py" --steps "$py_steps"
	pair dataloader_pinned fixed python3 "$here/dataloader_pinned.py" --steps "$py_steps" --fixed
else
	for name in item_sync dataloader_pinned; do
		for variant in bad fixed; do
			skip "$name" "$variant" "PyTorch with CUDA is not importable by python3"
		done
	done
fi

echo "table: $tsv"
exit "$failed"
