#!/bin/bash
# A report walks a trace twice (the phases over the whole trace, the rules over the steady state).
# Each table the walks read is read from SQLite once: the scan that finds its storage order keeps
# the view's rows in a temporary copy, and both walks read the copy (event_streams_keep in
# analyzer/loader/events.h, gap_walk_keep in analyzer/analysis/gaps.h). Checked here:
#   - one statement reads the kernels' rows per report (four without the copy: the scan, then
#     each walk and the what-if replay's read of the steady state);
#   - where the copy cannot be written (a file size limit, as on a full disk), the report reads the
#     trace instead and says exactly the same, on real traces from the GPU, an nsys export and a
#     synthetic trace with NVTX steps and syncs (text and JSON), and over a --window;
#   - an export with its findings reads the kernels once too, and stats on a trace with NVTX ranges
#     reads the API calls only through the event streams.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 > /dev/null || { echo "skip: no sqlite3"; exit 77; }
bash "$SRC/bench/analyzer/make-trace.sh" "$TMP/synthetic.sqlite" 30000
traces="$TMP/synthetic.sqlite $SRC/tests/fixtures/gpu/real/jax_mlp.sqlite $SRC/tests/fixtures/gpu/train_small.sqlite
	$SRC/tests/fixtures/gpu/nvtx.sqlite $H200"

# kernel_reads TRACE [ARGS...]: how many statements read the kernels' rows during one report
kernel_reads() {
	local t=$1
	shift
	GPT_TRACE_SQL_PROFILE=1 "$GPT" report -q "$@" "$t" 2>&1 > /dev/null |
		grep -c 'SELECT gpt_event_row(e.rowid, .*e."graphNodeId".*coalesce(e."demangledName"' || true
}

# limited CMD...: run CMD where no file may grow past 64 KiB (the copies cannot be written); the
# signal a process gets at the limit is ignored, so the write fails with EFBIG instead
limited() {
	(trap '' XFSZ; ulimit -f 64; "$@")
}

expect "synthetic: the kernels are read once" "1" "$(kernel_reads "$TMP/synthetic.sqlite")"
expect "synthetic, no room for the copy: the kernels are read four times" "4" \
	"$(limited bash -c "$(declare -f kernel_reads); GPT='$GPT' kernel_reads '$TMP/synthetic.sqlite'")"
for t in $traces; do
	name=$(basename "$t")
	for f in text json; do
		a=$("$GPT" report -q -f $f "$t" 2>&1)
		b=$(limited "$GPT" report -q -f $f "$t" 2>&1)
		expect "$name ($f): the same with and without the copy" "$a" "$b"
	done
done
# several traces of one job (a forked parent and children), each with its own copies
forks=("$SRC"/tests/fixtures/gpu/fork_child-*.sqlite)
expect "${#forks[@]} traces of one job: the same with and without the copies" \
	"$("$GPT" report -q -f json "${forks[@]}" 2>&1)" "$(limited "$GPT" report -q -f json "${forks[@]}" 2>&1)"
expect "${#forks[@]} traces of one job, HTML: the same with and without the copies" "same" \
	"$("$GPT" report -q -f html -o "$TMP/a.html" "${forks[@]}" &&
		limited "$GPT" report -q -f html -o /dev/stdout "${forks[@]}" | cmp -s "$TMP/a.html" - && echo same)"
w=$("$GPT" report -q -f json --window 4:2000 "$TMP/synthetic.sqlite" 2>&1)
expect "synthetic --window: the same with and without the copy" "$w" \
	"$(limited "$GPT" report -q -f json --window 4:2000 "$TMP/synthetic.sqlite" 2>&1)"
# every scan prepares (a scan that cannot would fall back to ORDER BY, the same rows, slower)
for t in $traces; do
	expect "$(basename "$t"): every scan prepares" "0" \
		"$(GPT_TRACE_SQL_PROFILE=1 "$GPT" report -q "$t" 2>&1 > /dev/null | grep -c 'cannot be prepared' || true)"
done
# export with its findings track: the export's columns and the rules' walk share one copy per table
# (event_streams_keep merges them), so the kernels are still read from SQLite once
expect "export with findings: the kernels are read once" "1" \
	"$(GPT_TRACE_SQL_PROFILE=1 "$GPT" export -q -o "$TMP/x.pftrace" "$TMP/synthetic.sqlite" 2>&1 > /dev/null |
		grep -c 'SELECT gpt_event_row(e.rowid, .*coalesce(e."demangledName"' || true)"
# stats on a trace with NVTX ranges: the API table comes with the ranges' pass, no scan of its own
expect "stats with NVTX ranges: no separate scan of the API calls" "0" \
	"$(GPT_TRACE_SQL_PROFILE=1 "$GPT" stats "$TMP/synthetic.sqlite" 2>&1 > /dev/null | grep -c 'FROM api_calls' || true)"
expect "stats with NVTX ranges: the API calls read through the event streams" "yes" \
	"$(GPT_TRACE_SQL_PROFILE=1 "$GPT" stats "$TMP/synthetic.sqlite" 2>&1 > /dev/null |
		grep -q 'SELECT gpt_event_row(e.rowid, .*"nameId", e."globalTid", e."correlationId") FROM "main"."CUPTI_ACTIVITY_KIND_RUNTIME"' && echo yes)"
[ "$failures" = 0 ]
