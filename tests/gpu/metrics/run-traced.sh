#!/bin/bash
# The hardware-metrics proof through the real library, on a machine with an NVIDIA GPU and Nsight
# Compute (ncu) on PATH: samples/access under `gpt-trace run --metrics`, checked with
# check_traced.py (one kernel row per launch, metrics joined to kernels, sectors per request, source
# lines), beside a trace of the same program without metrics and ncu's figures for the same
# launches (compare.py). Prints PASS/FAIL lines and "N passed, M failed"; exits 77 without a GPU, 1
# when a check fails. --metrics has source lines on (the library's default: kernel tracing steps
# aside for each kernel's SASS launch, docs/metrics.md); the same checks also run on
# --metrics=all,source=1 (said explicitly) and --metrics=all,source=0 (counters only). When a check
# failed, the program once more with the module's debug lines.
#   tests/gpu/metrics/run-traced.sh [BUILD_DIR [DEST_DIR]]
# BUILD_DIR (default build) holds bin/gpt-trace, bin/libgpt_inject.so and bin/access; the traces and
# ncu.csv are copied to DEST_DIR when given (access-metrics.sqlite becomes the CPU tests' fixture).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$ROOT/tests/gpu/metrics
BUILD=$(cd "${1:-$ROOT/build}" && pwd) || exit 2
DEST=${2:-}
BIN=$BUILD/bin
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpt-metrics.XXXXXX")
# Short: 4 launches of each kernel (the first is its SASS launch, 3 are replayed), default sizes
# (2^24 floats, a 4096 x 4096 matrix) so the figures compare with docs/metrics.md.
ACCESS=("$BIN/access" --iters 4)
LD=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
ST=l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
status=0

step() {
	echo
	echo "=== $*"
}

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "skip: no NVIDIA GPU here (nvidia-smi -L failed)"
	exit 77
fi
for f in gpt-trace libgpt_inject.so access; do
	[ -e "$BIN/$f" ] || { echo "error: $BIN/$f missing: build first"; exit 2; }
done
command -v ncu >/dev/null || PATH=$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -n 1)
unset GPT_TRACE_OUTPUT GPT_TRACE_FORCE GPT_TRACE_API GPT_TRACE_COMMIT_MS GPT_TRACE_QUIET \
	GPT_TRACE_METRICS GPT_TRACE_SESSION GPT_TRACE_INJECT_LIB

step "device"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version 2>&1 | tail -n 1
echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), work $WORK"

# One timed command; its stdout and stderr are printed after it.
timed() {
	local name=$1 t0 t1 rc
	shift
	t0=$(date +%s.%N)
	timeout -k 10 "${GPT_METRICS_TIMEOUT:-60}" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
	t1=$(date +%s.%N)
	echo "\$ ${*#$ROOT/}"
	sed 's/^/  out: /' "$WORK/$name.out"
	sed 's/^/  err: /' "$WORK/$name.err"
	awk -v rc="$rc" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "  (exit status %d, %.2f s)\n", rc, t1 - t0 }'
	return $rc
}

step "access untraced, then traced without metrics, then traced with --metrics"
timed bare "${ACCESS[@]}" || status=1
timed plain "$BIN/gpt-trace" run -o "$WORK/access-plain.sqlite" -- "${ACCESS[@]}" || status=1
timed metrics "$BIN/gpt-trace" run --metrics -o "$WORK/access-metrics.sqlite" -- "${ACCESS[@]}" ||
	status=1

step "check the --metrics trace"
python3 "$HERE/check_traced.py" "$WORK/access-metrics.sqlite" --iters 4 | tee "$WORK/check.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "what replay did to the trace: kernel rows per kernel, with and without --metrics"
python3 - "$WORK/access-plain.sqlite" "$WORK/access-metrics.sqlite" <<'EOF'
import sqlite3, statistics, sys
for path in sys.argv[1:]:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = db.execute("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                          "JOIN StringIds s ON s.id = k.shortName ORDER BY k.start").fetchall()
        meta = dict(db.execute("SELECT name, value FROM GPT_META"))
    except sqlite3.Error as e:
        print(f"{path}: {e}")
        continue
    print(path.rsplit("/", 1)[-1])
    for name in sorted({r[0] for r in rows}):
        d = [r[1] / 1e3 for r in rows if r[0] == name]
        print(f"  {name:16} {len(d)} rows, duration us: " + " ".join(f"{x:.1f}" for x in d))
    for key in ("kernel_records", "kernel_replay_records_dropped", "api_records",
                "metrics_spec", "metrics_summary", "metrics_problem"):
        if key in meta:
            print(f"  GPT_META {key} = {meta[key]}")
EOF

step "ncu: the same four metrics and the duration, every launch of access (untraced)"
timeout -k 10 240 ncu --clock-control none --csv --print-units base \
	--metrics "$LD,$ST,gpu__time_duration.sum" "${ACCESS[@]}" >"$WORK/ncu.csv" 2>"$WORK/ncu.err"
echo "(ncu exit status $?)"
tail -n 3 "$WORK/ncu.err"

if [ -f "$WORK/access-metrics.sqlite" ]; then
	step "side by side: ours (the --metrics trace) vs ncu; ours' launch 0 is the SASS launch"
	python3 "$HERE/compare.py" "$WORK/access-metrics.sqlite" "$WORK/ncu.csv" || status=1
	step "gpt-trace report on the --metrics trace"
	timeout -k 10 120 "$BIN/gpt-trace" report "$WORK/access-metrics.sqlite" 2>&1 | head -n 60
fi

step "source lines said explicitly (source=1): the same checks"
timed source "$BIN/gpt-trace" run --metrics=all,source=1 -o "$WORK/access-source.sqlite" -- \
	"${ACCESS[@]}" || status=1
python3 "$HERE/check_traced.py" "$WORK/access-source.sqlite" --iters 4 |
	grep -E '^(FAIL|INFO)|passed'
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "counters only (source=0): every launch replayed, the same checks"
timed counters "$BIN/gpt-trace" run --metrics=all,source=0 -o "$WORK/access-counters.sqlite" -- \
	"${ACCESS[@]}" || status=1
python3 "$HERE/check_traced.py" "$WORK/access-counters.sqlite" --iters 4 |
	grep -E '^(FAIL|INFO)|passed'
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

if [ $status -ne 0 ]; then
	step "a check failed: the same run with the module's debug lines"
	timed debug env "$BIN/gpt-trace" run --metrics=all,debug -o "$WORK/access-debug.sqlite" -- \
		"${ACCESS[@]}"
fi

if [ -n "$DEST" ]; then
	mkdir -p "$DEST"
	for f in access-metrics.sqlite access-plain.sqlite access-source.sqlite \
		access-counters.sqlite access-debug.sqlite ncu.csv; do
		[ -f "$WORK/$f" ] && cp "$WORK/$f" "$DEST/"
	done
fi
step "result"
tail -n 1 "$WORK/check.txt"
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
