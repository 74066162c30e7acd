#!/bin/bash
# trace_set_scope(): time window, NVTX range (same process only), kernel-name glob, and their
# combination, on the synthetic trace and on the H200 export.
. "$SRC/tests/analyzer/lib.sh"

make_trace "$TMP/basic.sqlite" "$SRC/tests/analyzer/data/basic.sql"
B=$TMP/basic.sqlite
K="SELECT group_concat(start, ',') FROM (SELECT start FROM kernels ORDER BY start)"
A="SELECT group_concat(correlationId, ',') FROM (SELECT correlationId FROM api_calls ORDER BY start)"

expect "no scope" "1000,1500,2000,3000,5000,6000,7000" "$("$QUERY" --sql "$K" "$B")"
expect "window [2000, 6000)" "2000,3000,5000" "$("$QUERY" --window 2000:6000 --sql "$K" "$B")"
expect "window copies" "1" "$("$QUERY" --window 8000:10300 --sql "SELECT count(*) FROM copies" "$B")"
expect "window open end" "7000" "$("$QUERY" --window 6500:0 --sql "$K" "$B")"
expect "nvtx step kernels" "1000,1500,2000,3000" "$("$QUERY" --nvtx step --sql "$K" "$B")"
expect "nvtx step api calls" "1,2,3,4" "$("$QUERY" --nvtx step --sql "$A" "$B")"
expect "nvtx tail (StringIds text)" "5000,6000,7000" "$("$QUERY" --nvtx tail --sql "$K" "$B")"
expect "kernel glob" "1500,3000,7000" "$("$QUERY" --kernel 'kB*' --sql "$K" "$B")"
expect "glob leaves copies" "2" "$("$QUERY" --kernel 'kB*' --sql "SELECT count(*) FROM copies" "$B")"
expect "glob and window and nvtx" "1500,3000" "$("$QUERY" --kernel 'kB*' --window 1200:9000 --nvtx step \
	--sql "$K" "$B")"
expect "scope keeps gpus and processes" "1|1" "$("$QUERY" --nvtx step \
	--sql "SELECT (SELECT count(*) FROM gpus), (SELECT count(*) FROM processes)" "$B")"

# Ranges of another process do not scope this one: rank 1's "step" covers only rank 1's events.
sed -e 's/1700000000000000000/1700000000000000000/' -e 's/4242/5353/g' -e "s/'step'/'other'/" \
	"$SRC/tests/analyzer/data/basic.sql" > "$TMP/rank1.sql"
make_trace "$TMP/rank1.sqlite" "$TMP/rank1.sql"
expect "nvtx same process only" "0|4" "$("$QUERY" --nvtx step \
	--sql "SELECT traceId, count(*) FROM kernels GROUP BY traceId" "$B" "$TMP/rank1.sqlite")"

# Overlapping and nested ranges of one name merge: kernels inside either count once.
cat > "$TMP/nested.sql" <<'SQL'
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES
	(900, 2100, 59, 'step', (4242 << 24) + 4243), (950, 1200, 59, 'step', (4242 << 24) + 4243),
	(6900, 7100, 59, 'step', (4242 << 24) + 4243);
SQL
make_trace "$TMP/nested.sqlite" "$SRC/tests/analyzer/data/basic.sql" "$TMP/nested.sql"
expect "nested ranges" "1000,1500,2000,3000,7000" "$("$QUERY" --nvtx step --sql "$K" "$TMP/nested.sqlite")"

# H200: 652 NVTX ranges; the kernels launched inside a scope are a subset that can be counted.
expect "h200 window" "19|0" "$("$QUERY" --window 1:2000000000 \
	--sql "SELECT count(*), (SELECT count(*) FROM kernels WHERE start < 1 OR start >= 2000000000) FROM kernels" \
	"$H200")"
n=$("$QUERY" --nvtx 'Fusion::resetTvUses' --sql "SELECT count(*) FROM nvtx" "$H200")
expect "h200 nvtx range scope non-empty" "yes" "$([ "$n" -ge 1 ] && echo yes || echo "no ($n)")"
finish
