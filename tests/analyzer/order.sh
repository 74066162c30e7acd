#!/bin/bash
# The event reader (analyzer/loader/events.c) gives the same rows in the same order however a trace's tables
# are stored: a report and stats of one synthetic trace must not change when its kernels and API
# calls are stored in order, a little out of order (one run that the reorder buffer repairs), in
# long reversed blocks (tens of runs, merged), shuffled (dozens of runs, each through the reorder
# buffer), or in 70 interleaved sorted runs (as our collector's buffers; below), nor when rows the
# views leave out (impossible times) sit among them.
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
# Our collector's CUPTI buffers interleave: a GPT-2 training trace (1M kernels) stores its kernels as
# 94 sorted runs that overlap in time. Here 71 such runs (88,000 kernels in blocks of 8,800, each
# stored as 8 interleaved parts of every 8th row): more than the 64 once merged (the rest went
# through ORDER BY), merged now through the heap of runs, with the same report and stats.
mkdir -p "$TMP/sorted88" "$TMP/interleaved"
bash "$SRC/bench/analyzer/make-trace.sh" "$TMP/sorted88/t.sqlite" 88000
cp "$TMP/sorted88/t.sqlite" "$TMP/interleaved/t.sqlite"
sqlite3 "$TMP/interleaved/t.sqlite" "
	CREATE TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY (rowid - 1) / 8800, (rowid - 1) % 8, rowid;
	DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k; DROP TABLE k"
for d in sorted88 interleaved; do
	(cd "$TMP/$d" && "$GPT" report -q -f json t.sqlite > report.json && "$GPT" stats -f json t.sqlite > stats.json) ||
		{ echo "FAIL report or stats on the $d trace"; failures=$((failures + 1)); }
done
expect "report stored interleaved = report stored in order" "$(cat "$TMP/sorted88/report.json")" \
	"$(cat "$TMP/interleaved/report.json")"
expect "stats stored interleaved = stats stored in order" "$(cat "$TMP/sorted88/stats.json")" \
	"$(cat "$TMP/interleaved/stats.json")"
# the statements that read the kernels: the scan in storage order (which keeps the copy the walks
# read), and, for a table no bounded merge puts in order, ORDER BY (SELECT 0, ...) once per walk
GPT_TRACE_SQL_PROFILE=1 "$GPT" report -q "$TMP/interleaved/t.sqlite" 2> "$TMP/profile" > /dev/null
expect "interleaved: the kernels are read once, in storage order, and merged from their runs" "1 0" \
	"$(grep -c 'SELECT gpt_event_row(e.rowid, .*coalesce(e."demangledName"' "$TMP/profile") $(grep -c 'SELECT 0, e."start".*coalesce(e."demangledName"' "$TMP/profile")"
expect "the trace's events" "30000" "$(python3 -c "import json; print(json.load(open('$TMP/sorted/report.json'))['events']['kernels'])")"
[ "$failures" = 0 ]
