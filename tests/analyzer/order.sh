#!/bin/bash
# The event reader (loader/events.c) gives the same rows in the same order however a trace's tables
# are stored: a report and stats of one synthetic trace must not change when its kernels and API
# calls are stored in order, a little out of order (one run that the reorder buffer repairs), in
# long reversed blocks (tens of runs, merged), or shuffled (more runs than are merged: ORDER BY), nor
# when rows the views leave out (impossible times) sit among them.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 > /dev/null || { echo "skip: no sqlite3"; exit 77; }
mkdir -p "$TMP/sorted" "$TMP/local" "$TMP/blocks" "$TMP/shuffled"
bash "$SRC/bench/analyzer/make-trace.sh" "$TMP/sorted/t.sqlite" 30000
# rows no clock produces: the views leave them out, and so must the reader's own time filter
sqlite3 "$TMP/sorted/t.sqlite" "
	CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid IN (1, 2);
	UPDATE k SET start = -50, end = 100, correlationId = 999999001 WHERE correlationId = 1;
	UPDATE k SET start = 5000, end = 4000, correlationId = 999999002 WHERE correlationId = 2;
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
	CREATE TEMP TABLE r AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid = 1;
	UPDATE r SET start = -7, end = 10, correlationId = 999999003;
	INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM r"

# reorder DIR ORDER-BY: the trace's kernels and API calls stored again in that order
reorder() {
	cp "$TMP/sorted/t.sqlite" "$TMP/$1/t.sqlite"
	sqlite3 "$TMP/$1/t.sqlite" "
		CREATE TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY $2;
		DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
		CREATE TABLE r AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY $2;
		DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME; INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM r;
		DROP TABLE k; DROP TABLE r; VACUUM"
}
reorder local "rowid / 300, rowid DESC"
reorder blocks "rowid / 4000, rowid DESC"
reorder shuffled "(rowid * 7919) % 30011"

for d in sorted local blocks shuffled; do
	(cd "$TMP/$d" && "$GPT" report -q -f json t.sqlite > report.json && "$GPT" stats -f json t.sqlite > stats.json) ||
		{ echo "FAIL report or stats on the $d trace"; failures=$((failures + 1)); }
done
for d in local blocks shuffled; do
	expect "report stored $d = report stored in order" "$(cat "$TMP/sorted/report.json")" "$(cat "$TMP/$d/report.json")"
	expect "stats stored $d = stats stored in order" "$(cat "$TMP/sorted/stats.json")" "$(cat "$TMP/$d/stats.json")"
done
expect "the trace's events" "30000" "$(python3 -c "import json; print(json.load(open('$TMP/sorted/report.json'))['events']['kernels'])")"
[ "$failures" = 0 ]
