#!/bin/bash
# The loader's threads (analyzer/loader/events.c): with more than one CPU, the first scans of the tables run
# in a batch on several threads, a big table cut into parts by rowid, and big streams are read ahead
# on another thread. None of it may change a byte of any output: every command's output on a
# 600,000-kernel trace (big enough for parts and read-ahead) is compared with the same command on
# one CPU (taskset), where the loader uses no thread. The SQL profile shows that the parts were
# scanned on several CPUs and not on one, so that the comparison compares two paths.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 > /dev/null || { echo "skip: no sqlite3"; exit 77; }
command -v taskset > /dev/null || { echo "skip: no taskset"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "skip: one CPU"; exit 77; }
bash "$SRC/bench/analyzer/make-trace.sh" "$TMP/t.sqlite" 600000

# same NAME ARGS...: the output (stdout, or the file written with -o @) on all CPUs and on one
same() {
	local name=$1 all one
	shift
	all=$("${@//@/$TMP/out}" 2>&1; echo "exit $?")
	[ -f "$TMP/out" ] && all="$all $(cksum < "$TMP/out")"
	rm -f "$TMP/out"
	one=$(taskset -c 0 "${@//@/$TMP/out}" 2>&1; echo "exit $?")
	[ -f "$TMP/out" ] && one="$one $(cksum < "$TMP/out")"
	rm -f "$TMP/out"
	expect "$name: the same on one CPU" "$one" "$all"
}

same "report" "$GPT" report -q "$TMP/t.sqlite"
same "report json" "$GPT" report -q -f json "$TMP/t.sqlite"
same "report html" "$GPT" report -q -f html -o @ "$TMP/t.sqlite"
same "stats json" "$GPT" stats -q -f json "$TMP/t.sqlite"
same "stats window" "$GPT" stats -q --window 100:300 "$TMP/t.sqlite"
same "export perfetto" "$GPT" export -q -o @ "$TMP/t.sqlite"
same "export chrome" "$GPT" export -q -f chrome -o @ "$TMP/t.sqlite"
same "baseline save" "$GPT" baseline save -q -o @ "$TMP/t.sqlite"
same "diff" "$GPT" diff -q --skip-first 3 "$TMP/t.sqlite" "$TMP/t.sqlite"

# the kernels' first scan: in parts (one statement each) on all CPUs, whole on one; every kernel
# read after it comes from the copies (the profile cuts statements before their WHERE)
scans() {
	GPT_TRACE_SQL_PROFILE=1 "$@" "$GPT" report -q "$TMP/t.sqlite" 2>&1 > /dev/null |
		grep -c 'gpt_event_row(e.rowid, e."start", e."end", e."deviceId".* FROM "main"."CUPTI_ACTIVITY_KIND_KERNEL"'
}
n=$(scans env)
[ "$n" -ge 2 ] && r="parts" || r="$n scans"
expect "report on all CPUs scans the kernels in parts" "parts" "$r"
expect "report on one CPU scans the kernels whole" "1" "$(scans taskset -c 0)"
finish
