#!/bin/bash
# The trace loader on real nsys exports and synthetic traces: view row counts, name and text
# resolution, pid/tid unpacking, and the alignment of several files by their time origins.
. "$SRC/tests/analyzer/lib.sh"

expect "h200 counts" "trace 0 nsys $H200
kernels|19
copies|1
sets|1
syncs|1
api_calls|968
nvtx|652
gpus|1
processes|1
meta|29" "$("$QUERY" --counts "$H200")"

expect "h200 pinned copy" "1|2|1|1693" \
	"$("$QUERY" --sql "SELECT count(*), copyKind, dstKind, correlationId FROM copies WHERE dstKind = 1" "$H200")"
expect "h200 process" "30156|./bin/test_matmul" "$("$QUERY" --sql "SELECT pid, name FROM processes" "$H200")"
expect "h200 names resolved" "0|0|19" "$("$QUERY" --sql \
	"SELECT sum(name IS NULL), sum(shortName IS NULL), count(*) FROM kernels" \
	"$H200")"
expect "h200 nvtx text inline" "652|0|30156" "$("$QUERY" --sql \
	"SELECT count(*), sum(text IS NULL), min(pid) FROM nvtx WHERE eventType = 59" "$H200")"
expect "h200 api names" "30156|30156|cudaLaunchKernel" "$("$QUERY" --sql \
	"SELECT pid, tid, substr(name, 1, 16) FROM api_calls WHERE name LIKE 'cudaLaunchKernel%' LIMIT 1" "$H200")"
expect "h200 gpu" "NVIDIA H200|132|9|0" "$("$QUERY" --sql \
	"SELECT name, smCount, computeMajor, computeMinor FROM gpus" "$H200")"
expect "h200 meta" "3.16.1" "$("$QUERY" --sql "SELECT value FROM meta WHERE name = 'EXPORT_SCHEMA_VERSION'" "$H200")"

# CloverLeaf: schema 3.13.2, no NVTX_EVENTS and no MEMSET table; 4 GPUs listed, one used.
expect "cloverleaf counts" "trace 0 nsys $CLOVER
kernels|1312
copies|279
sets|0
syncs|1312
api_calls|3048
nvtx|0
gpus|4
processes|1
meta|29" "$("$QUERY" --counts "$CLOVER")"
expect "cloverleaf pageable copies" "254|1|0
25|2|2" "$("$QUERY" --sql \
	"SELECT count(*), copyKind, srcKind FROM copies WHERE srcKind = 0 OR dstKind = 0 GROUP BY copyKind" "$CLOVER")"
expect "cloverleaf process" "1701896|cuda-cloverleaf" "$("$QUERY" --sql "SELECT pid, name FROM processes" "$CLOVER")"
expect "cloverleaf missing tables typed" "0|0" "$("$QUERY" --sql \
	"SELECT count(*), coalesce(sum(bytes), 0) FROM sets" --sql "SELECT count(*), typeof(count(*)) FROM nvtx" \
	"$CLOVER" | head -1)"

# Our format: empty trace (schema only) opens with zero rows.
make_trace "$TMP/empty.sqlite"
expect "empty trace" "trace 0 gpt $TMP/empty.sqlite
kernels|0
copies|0
sets|0
syncs|0
api_calls|0
nvtx|0
gpus|0
processes|0
meta|0" "$("$QUERY" --counts "$TMP/empty.sqlite")"

make_trace "$TMP/basic.sqlite" "$SRC/tests/analyzer/data/basic.sql"
expect "synthetic counts" "trace 0 gpt $TMP/basic.sqlite
kernels|7
copies|2
sets|1
syncs|1
api_calls|11
nvtx|3
gpus|1
processes|1
meta|7" "$("$QUERY" --counts "$TMP/basic.sqlite")"
expect "synthetic nvtx text from StringIds" "step|800|3200|2400
tail|4800|7200|2400
mark|100||" "$("$QUERY" --sql "SELECT text, start, end, dur FROM nvtx ORDER BY rowid" "$TMP/basic.sqlite")"
expect "synthetic processes own events" "4242|train" "$("$QUERY" --sql "SELECT pid, name FROM processes" \
	"$TMP/basic.sqlite")"
expect "synthetic kernel names" "kA(float*)|kA|4
kB(int)|kB|3" "$("$QUERY" --sql \
	"SELECT name, shortName, count(*) FROM kernels GROUP BY name ORDER BY name" "$TMP/basic.sqlite")"

# A trace whose kernel table lacks columns (an old or cut-down writer): missing columns read NULL.
cat > "$TMP/cut.sql" <<'SQL'
CREATE TABLE GPT_META (name TEXT, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, shortName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 30, 0, 5);
SQL
rm -f "$TMP/cut.sqlite"
sqlite3 "$TMP/cut.sqlite" < "$TMP/cut.sql"
expect "missing columns read null" "10|20|||1" "$("$QUERY" --sql \
	"SELECT start, dur, name, streamId, streamId IS NULL AND name IS NULL FROM kernels" "$TMP/cut.sqlite")"

# An old, cut-down nsys export: metadata in EXPORT_META_DATA, no StringIds, no TARGET_INFO_GPU, no
# session start time; the registered-string NVTX text without StringIds reads NULL.
cat > "$TMP/old.sql" <<'SQL'
CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_SCHEMA_VERSION', '2.1.0');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
	correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 250, 0, 7, 1, 77 << 24, 3, 3);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, textId INTEGER, globalTid INTEGER);
INSERT INTO NVTX_EVENTS VALUES (50, 300, 59, 9, (77 << 24) + 78);
SQL
rm -f "$TMP/old.sqlite"
sqlite3 "$TMP/old.sqlite" < "$TMP/old.sql"
expect "old nsys export" "trace 0 nsys $TMP/old.sqlite
kernels|1
copies|0
sets|0
syncs|0
api_calls|0
nvtx|1
gpus|0
processes|1
meta|1" "$("$QUERY" --counts "$TMP/old.sqlite")"
expect "old nsys export values" "2.1.0
77|150|1|1
78|1" "$("$QUERY" --sql "SELECT value FROM meta" --sql \
	"SELECT pid, dur, name IS NULL, nameId = 3 FROM kernels" --sql "SELECT tid, text IS NULL FROM nvtx" \
	"$TMP/old.sqlite")"

# Two per-process traces of one job: the second started 500 ns later, so its times move by +500.
sed -e 's/1700000000000000000/1700000000000000500/' -e 's/4242/5353/g' \
	"$SRC/tests/analyzer/data/basic.sql" > "$TMP/rank1.sql"
make_trace "$TMP/rank1.sqlite" "$TMP/rank1.sql"
expect "two traces aligned" "0|1000|4242|kA(float*)
1|1500|5353|kA(float*)" "$("$QUERY" --sql \
	"SELECT traceId, min(start), pid, name FROM kernels WHERE name LIKE 'kA%' GROUP BY traceId" \
	"$TMP/basic.sqlite" "$TMP/rank1.sqlite")"
expect "two traces order-independent" "0|1500|5353
1|1000|4242" "$("$QUERY" --sql \
	"SELECT traceId, min(start), pid FROM kernels GROUP BY traceId" "$TMP/rank1.sqlite" "$TMP/basic.sqlite")"
expect "two traces processes" "0|4242|train
1|5353|train" "$("$QUERY" --sql "SELECT traceId, pid, name FROM processes" "$TMP/basic.sqlite" \
	"$TMP/rank1.sqlite")"
expect "nsys and ours together" "0|19
1|7" "$("$QUERY" --sql "SELECT traceId, count(*) FROM kernels GROUP BY traceId" "$H200" "$TMP/basic.sqlite")"

finish
