#!/bin/bash
# The hardware-metrics proof, on a machine with an NVIDIA GPU and Nsight Compute (ncu) on PATH.
# Runs the probe built by tests/gpu/metrics/Makefile (build it where the CUDA toolkit is:
# `make -C tests/gpu/metrics`) under several GPT_TRACE_METRICS specs, then ncu on the same binary
# with the same metrics, and prints both side by side (compare.py). Logs go to $OUT (default
# build-metrics/out); the last lines are the comparison. Exits 77 (skip) without a GPU, 1 when
# the figures disagree with ncu or a probe run fails.
#   tests/gpu/metrics/run.sh [BUILD_DIR]
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build-metrics}" && pwd) || exit 2
OUT=${OUT:-$BUILD/out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
PROBE=$BUILD/metrics_probe
HERE=$ROOT/tests/gpu/metrics
LD=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
ST=l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
status=0

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "skip: no NVIDIA GPU here (nvidia-smi -L failed)"
	exit 77
fi
if [ ! -x "$PROBE" ]; then
	echo "error: $PROBE missing: run 'make -C tests/gpu/metrics' first"
	exit 2
fi
mkdir -p "$OUT"
# The CUPTI the probe was built with travels in $BUILD/lib (the probe's rpath looks there first).
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

step() {
	echo
	echo "=== $*"
}

step "device"
nvidia-smi -L
"$PROBE" --list 2>&1

# One probe run: name, spec; its log and trace go to $OUT.
probe() {
	local name=$1 spec=$2
	step "probe $name: GPT_TRACE_METRICS='$spec'"
	(cd "$OUT" && timeout 90 "$PROBE" "$spec" "$name.sqlite") >"$OUT/$name.log" 2>&1
	local rc=$?
	cat "$OUT/$name.log"
	echo "(exit status $rc)"
	[ $rc -eq 0 ] || status=1
}

probe all "all,debug"
probe counters "all,source=0"
probe filter "kernel=transpose_*,first=1"

step "ncu: the same four metrics and the duration, every launch of the plain probe"
timeout 120 ncu --clock-control none --csv --print-units base \
	--metrics "$LD,$ST,gpu__time_duration.sum" "$PROBE" --plain >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
echo "(exit status $?)"
tail -n 3 "$OUT/ncu.err"

step "ncu: SourceCounters (UncoalescedGlobalAccess inputs), first launch of each kernel"
timeout 120 ncu --clock-control none --section SourceCounters --launch-count 4 --csv \
	--page raw --print-units base "$PROBE" --plain >"$OUT/ncu-source.csv" 2>"$OUT/ncu-source.err"
echo "(exit status $?)"
timeout 120 ncu --clock-control none --section SourceCounters --launch-count 4 \
	"$PROBE" --plain 2>&1 | grep -i -E "uncoalesced|excessive|==PROF==|kernel|coalesced_copy|gather|transpose" | head -40

step "our metrics while ncu holds the counters (expect one clear line, then a normal exit)"
(cd "$OUT" && timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum \
	--launch-count 1 "$PROBE" all under-ncu.sqlite) 2>&1 | grep -v "^==PROF==" | head -20

step "side by side: ours (probe 'all') vs ncu"
python3 "$HERE/compare.py" "$OUT/all.sqlite" "$OUT/ncu.csv" "$OUT/ncu-source.csv" || status=1
step "side by side: ours (probe 'counters', no SASS instrumentation at all) vs ncu"
python3 "$HERE/compare.py" "$OUT/counters.sqlite" "$OUT/ncu.csv" | head -30 || status=1

exit $status
