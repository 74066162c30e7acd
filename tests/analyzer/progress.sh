#!/bin/bash
# The progress line (common/progress.h): on a terminal, every long command shows what it is doing -
# the loader's first read of the tables it keeps, in one batch on as many threads as there are CPUs
# ("reading api_calls, kernels, nvtx, copies: 64k of 450k rows, 1.2M/s, 0 s left", the biggest first),
# then the command's own passes - with a count, a rate and the time left; nothing with -q, and
# nothing when stderr is not a terminal. GPT_TRACE_PROGRESS_DELAY=0 lets the lines show at once
# instead of 2 s into the command, so a 150,000-kernel trace is enough (the line refreshes every
# 65,536 rows).
. "$(dirname "$0")/lib.sh"

command -v sqlite3 > /dev/null || { echo "skip: no sqlite3"; exit 77; }
command -v script > /dev/null || { echo "skip: no script(1) to make a terminal"; exit 77; }
bash "$SRC/bench/analyzer/make-trace.sh" "$TMP/t.sqlite" 150000

# lines CMD...: the progress lines CMD writes on a terminal, as "what: unit" ("reading kernels: rows")
lines() {
	GPT_TRACE_PROGRESS_DELAY=0 script -qec "$*" /dev/null | tr '\r' '\n' | sed 's/\x1b\[K//' |
		sed -n 's/^gpt-trace: \([a-z_, ]*\): [0-9.]*[kM]* of [0-9.]*[kM]* \([a-zA-Z ]*\), [0-9.]*[kM]*\/s, [0-9]* s left *$/\1: \2/p' |
		sort -u
}

expect "report: the tables' first read, then the phases and the rules" \
	"phases: GPU operations
reading api_calls, kernels, nvtx, copies: rows
rules: GPU operations" "$(lines "$GPT" report "$TMP/t.sqlite" '> /dev/null')"
expect "stats: the tables' first read, then its passes" \
	"reading api_calls, kernels, nvtx, copies: rows
stats: events" "$(lines "$GPT" stats "$TMP/t.sqlite" '> /dev/null')"
expect "export: the findings' walks, then the timeline" \
	"export: events
phases: GPU operations
reading api_calls, kernels, nvtx, syncs, copies: rows
rules: GPU operations" "$(lines "$GPT" export -o "$TMP/t.pftrace" "$TMP/t.sqlite" '> /dev/null')"
expect "baseline save: the kernels' read, then diff's pass" \
	"diff: events
reading kernels, copies: rows" "$(lines "$GPT" baseline save -o "$TMP/t.json" "$TMP/t.sqlite" '> /dev/null')"
expect "report -q: no progress line" "" \
	"$(GPT_TRACE_PROGRESS_DELAY=0 script -qec "$GPT report -q $TMP/t.sqlite > /dev/null" /dev/null | tr '\r' '\n' |
		grep 'gpt-trace: ' || true)"
expect "report with stderr not a terminal: no progress line" "" \
	"$(GPT_TRACE_PROGRESS_DELAY=0 "$GPT" report "$TMP/t.sqlite" 2>&1 > /dev/null | grep 'gpt-trace: ' || true)"
[ "$failures" = 0 ]
