#!/bin/bash
# Real crash traces recorded on the H200 (tests/gpu/crash-fixtures.sh: samples/crash.cu under
# `gpt-trace run`, dying by segfault early and late, abort, _exit, an uncaught exception; and one
# whose program and launcher were both SIGKILLed, leaving a hot rollback journal). Each death the
# library sees keeps every kernel the program says it launched, with exit_reason; each trace is read
# by `gpt-trace report` and (but the hot one) by sqlite read-only; the hot one through a recovered
# copy, with the note, leaving the fixture and its journal as they were.
. "$SRC/tests/analyzer/lib.sh"
C=$SRC/tests/fixtures/gpu/crash

while IFS=$'\t' read -r mode status launched; do
	t=$C/crash-$mode.sqlite
	n=${launched#launched }
	if [ "$mode" = hot-journal ]; then
		sum=$(md5sum "$t" "$t-journal")
		"$GPT" report -f json -o "$TMP/hot.json" "$t" 2> "$TMP/hot.err"
		expect "crash $mode: report reads it" "0" "$?"
		expect "crash $mode: the note" "1" "$(grep -c 'recovered copy' "$TMP/hot.err")"
		expect "crash $mode: kernels kept (at most 1 s of ~2000 launches lost)" "1" "$(python3 -c "
import json; d = json.load(open('$TMP/hot.json')); k = d['events']['kernels']
print(int($n - 2000 <= k <= $n))")"
		expect "crash $mode: fixture untouched" "$sum" "$(md5sum "$t" "$t-journal")"
		continue
	fi
	expect "crash $mode: report reads it" "0" "$("$GPT" report -q "$t" > /dev/null 2>&1; echo $?)"
	expect "crash $mode: every kernel launched is there, read-only" "$n" "$(python3 -c "
import sqlite3; c = sqlite3.connect('file:$t?mode=ro', uri=True)
print(c.execute('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0])")"
	case $mode in
	segv-*) reason='signal 11' ;;
	abort | exception) reason='signal 6' ;;
	_exit) reason='_exit(3)' ;;
	esac
	expect "crash $mode: exit_reason" "$reason 1" "$(python3 -c "
import sqlite3; c = sqlite3.connect('file:$t?mode=ro', uri=True)
m = dict(c.execute(\"SELECT name, value FROM GPT_META WHERE name IN ('exit_reason', 'trace_complete')\"))
print(m['exit_reason'], m['trace_complete'])")"
done < "$C/crashes.tsv"
finish
