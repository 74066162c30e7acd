#!/bin/bash
# gpt-trace stats on the synthetic trace of data/basic.sql, whose answers are worked out by hand in
# that file's comments: exact text output, JSON values, two traces merged by name, scope, fixtures.
. "$SRC/tests/analyzer/lib.sh"

make_trace "$TMP/basic.sqlite" "$SRC/tests/analyzer/data/basic.sql"
B=$TMP/basic.sqlite

# kA: 100 200 300 400 ns -> total 1000, mean 250, median (200+300)/2, sample stddev sqrt(50000/3)
# kB: 1500 500 1000 ns -> total 3000, median 1000, stddev 500. Device 0 busy (union of kernels,
# copies, set): 100 + 2000 + 300 + 400 + 1000 + 2000 + 1000 + 100 = 6900 of the span 900..12000.
# Stream 7: 100 + 200 + 500 + 300 kernels + 2000 copy + 100 set = 3200; stream 8: 1500 + 400 +
# 1000 + 1000 copy = 3900. NVTX "step" [800, 3200) launched kernels 1-4: 100 + 1500 + 200 + 500.
expect "stats text" "trace: TRACE (gpt-trace)
span: 11.100 us (900 to 12000 ns)

GPU kernels by name
Time %  Total (us)  Count  Avg (us)  Med (us)  Min (us)  Max (us)  StdDev (us)    Owner  Kernel
  75.0       3.000      3     1.000     1.000     0.500     1.500        0.500  program  kB(int)
  25.0       1.000      4     0.250     0.250     0.100     0.400        0.129  program  kA(float*)

Memory operations by kind
Count  Total (us)  Avg (us)  Med (us)  Min (us)  Max (us)  Bytes  Avg bytes    GB/s  Operation
    1       2.000     2.000     2.000     2.000     2.000  20000      20000  10.000  HtoD (pageable to device)
    1       1.000     1.000     1.000     1.000     1.000  40000      40000  40.000  DtoH (device to pinned)
    1       0.100     0.100     0.100     0.100     0.100   4096       4096  40.960  memset (device)

CUDA API calls by name
Time %  Total (us)  Count  Avg (us)  Med (us)  Min (us)  Max (us)  StdDev (us)  API call
  77.2       2.100      1     2.100     2.100     2.100     2.100        0.000  cudaMemcpy
  12.9       0.350      7     0.050     0.050     0.050     0.050        0.000  cudaLaunchKernel
   7.4       0.200      1     0.200     0.200     0.200     0.200        0.000  cudaDeviceSynchronize
   1.8       0.050      1     0.050     0.050     0.050     0.050        0.000  cudaMemcpyAsync
   0.7       0.020      1     0.020     0.020     0.020     0.020        0.000  cudaMemsetAsync

GPU busy time (share of the span)
Busy %  Busy (us)  Operations  Device / stream
  62.2      6.900          10  GPU 0 (NVIDIA H200)
  28.8      3.200           6    stream 7
  35.1      3.900           4    stream 8

NVTX ranges (kernel time: kernels launched inside, same thread)
Count  Total (us)  Avg (us)  Kernels  Kernel time (us)  NVTX range
    1       2.400     2.400        4             2.300  step
    1       2.400     2.400        3             1.700  tail" "$("$GPT" stats "$B" | sed "s|$B|TRACE|")"

json_check() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
' "$@"
}

"$GPT" stats --format json "$B" > "$TMP/basic.json"
expect "stats json" "ok" "$(json_check "$TMP/basic.json" '
assert d["schema"] == "gpt-trace-stats/1" and d["scope"] is None
k = {r["name"]: r for r in d["kernels"]}
assert k["kA(float*)"]["count"] == 4 and k["kA(float*)"]["total_ns"] == 1000
assert k["kA(float*)"]["median_ns"] == 250 and abs(k["kA(float*)"]["stddev_ns"] - (50000 / 3) ** 0.5) < 1e-3
assert k["kB(int)"]["median_ns"] == 1000 and k["kB(int)"]["min_ns"] == 500 and k["kB(int)"]["share"] == 0.75
m = {(r["copy_kind"], r["src_kind"], r["dst_kind"], r["mem_kind"]): r for r in d["memory"]}
assert m[(1, 0, 2, None)]["bytes"] == 20000 and m[(1, 0, 2, None)]["bandwidth_bytes_per_s"] == 1e10
assert m[(2, 2, 1, None)]["bytes"] == 40000 and m[(None, None, None, 2)]["bytes"] == 4096
assert d["span"] == {"start_ns": 900, "end_ns": 12000, "duration_ns": 11100}
assert d["devices"][0]["busy_ns"] == 6900 and d["devices"][0]["operations"] == 10
assert [(s["stream"], s["busy_ns"]) for s in d["streams"]] == [(7, 3200), (8, 3900)]
n = {r["text"]: r for r in d["nvtx"]}
assert n["step"]["kernels"] == 4 and n["step"]["kernel_ns"] == 2300 and n["tail"]["kernel_ns"] == 1700
a = {r["name"]: r for r in d["api"]}
assert a["cudaLaunchKernel"]["count"] == 7 and a["cudaLaunchKernel"]["median_ns"] == 50
print("ok")')"

# An even count takes the mean of the two middle values; an odd count the middle one.
expect "stats markdown" "| 25.0 | 1.000 | 4 | 0.250 | 0.250 | 0.100 | 0.400 | 0.129 | program | kA(float*) |" \
	"$("$GPT" stats --format markdown "$B" | grep 'kA(float')"

# Two per-process traces: kernels merge by name across traces; devices stay per trace.
sed -e 's/1700000000000000000/1700000000000000500/' -e 's/4242/5353/g' \
	"$SRC/tests/analyzer/data/basic.sql" > "$TMP/rank1.sql"
make_trace "$TMP/rank1.sqlite" "$TMP/rank1.sql"
"$GPT" stats --format json "$B" "$TMP/rank1.sqlite" > "$TMP/two.json"
expect "stats two traces" "ok" "$(json_check "$TMP/two.json" '
k = {r["name"]: r for r in d["kernels"]}
assert len(d["kernels"]) == 2, d["kernels"]
assert k["kA(float*)"]["count"] == 8 and k["kA(float*)"]["median_ns"] == 250
assert abs(k["kA(float*)"]["stddev_ns"] - (100000 / 7) ** 0.5) < 1e-3
assert k["kB(int)"]["count"] == 6 and abs(k["kB(int)"]["stddev_ns"] - 200000 ** 0.5) < 1e-3
assert d["span"]["start_ns"] == 900 and d["span"]["end_ns"] == 12500
assert [(x["trace"], x["busy_ns"]) for x in d["devices"]] == [(0, 6900), (1, 6900)]
assert {r["text"]: r["count"] for r in d["nvtx"]} == {"step": 2, "tail": 2}
print("ok")')"

# Scope: the NVTX range "tail" holds kernels 5-7 (kA 300, kA 400, kB 1000).
expect "stats scoped to nvtx range" "scope: NVTX range 'tail'
  58.8       1.000      1     1.000     1.000     1.000     1.000        0.000  program  kB(int)
  41.2       0.700      2     0.350     0.350     0.300     0.400        0.071  program  kA(float*)" \
	"$("$GPT" stats --nvtx tail "$B" | sed -n '2p;/^ *[0-9.]* .*k[AB](/p')"
expect "stats scoped to kernel glob and window" " 100.0       1.000      4     0.250     0.250     0.100     0.400        0.129  program  kA(float*)" \
	"$("$GPT" stats --kernel 'kA*' --window 0: "$B" | grep 'kA(float')"
expect "stats window in ms from the first event" "1" "$("$GPT" stats --format json --window 0.0041:0.0051 "$B" |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["kernels"]))')"
expect_exit "stats bad window" 2 "invalid --window" "$GPT" stats --window 5:1 "$B"
expect_exit "stats bad format" 2 "unknown format" "$GPT" stats --format yaml "$B"
expect_exit "stats no trace" 2 "no trace given" "$GPT" stats
expect_exit "stats unknown nvtx" 2 "no NVTX range named 'nope'" "$GPT" stats --nvtx nope "$B"

# Empty trace: every table says none, exit 0.
make_trace "$TMP/empty.sqlite"
expect "stats empty trace" "5" "$("$GPT" stats "$TMP/empty.sqlite" | grep -c '(none)')"

# Real exports: counts from the fixtures' provenance README, checked with sqlite3.
"$GPT" stats --format json "$H200" > "$TMP/h200.json"
expect "stats h200" "ok" "$(json_check "$TMP/h200.json" '
assert sum(r["count"] for r in d["kernels"]) == 19
assert [(r["operation"], r["count"]) for r in d["memory"] if r["dst_kind"] == 1] == [("DtoH (device to pinned)", 1)]
assert sum(r["count"] for r in d["nvtx"]) == 652
assert abs(sum(r["share"] for r in d["kernels"]) - 1) < 1e-5
print("ok")')"
"$GPT" stats --format json "$CLOVER" > "$TMP/clover.json"
expect "stats cloverleaf" "ok" "$(json_check "$TMP/clover.json" '
assert sum(r["count"] for r in d["kernels"]) == 1312
assert sum(r["count"] for r in d["memory"] if r["src_kind"] == 0 or r["dst_kind"] == 0) == 279
assert d["nvtx"] == [] and len(d["devices"]) == 1
print("ok")')"
# Medians come from each name's distinct durations counted in the first pass (no sort), up to
# 2^21 distinct values in all; beyond, from the sorted SQL pass. kD: 300,000 launches of durations
# 1..300,000 ns in a shuffled order (median (150,000 + 150,001) / 2), kE: 101 launches of 7, 7 and
# 9 .. 107 ns (median: the 51st, 57); then 2,200,000 distinct durations of kF (median 1,100,000.5), more than
# are counted.
medians() {
	make_trace "$TMP/$1.sqlite"
	sqlite3 "$TMP/$1.sqlite" "
	INSERT INTO StringIds VALUES (1, 'kD'), (2, 'kE'), (3, 'kF');
	WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
		demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
		staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
	SELECT i * 10000000, i * 10000000 + ((i * 7919) % $2) + 1, 0, 1, 7, i, 1 << 24, $3, $3, 32, 1, 1, 1,
		32, 1, 1, 0, 0, 0, 0, i FROM n;
	$4"
	GPT_TRACE_SQL_PROFILE=1 "$GPT" stats --format json "$TMP/$1.sqlite" > "$TMP/$1.json" 2> "$TMP/$1.profile"
}
medians counted 300000 1 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 101)
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
		demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
		staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
	SELECT 5000000000000 + i * 1000, 5000000000000 + i * 1000 + (CASE WHEN i < 3 THEN 7 ELSE i + 6 END), 0, 1, 7, i,
		1 << 24, 2, 2, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, i FROM n"
expect "medians counted: kD and kE" "150000.5 57.0" "$(python3 -c "import json; k = {r['name']: r for r in json.load(open('$TMP/counted.json'))['kernels']}; print(k['kD']['median_ns'], k['kE']['median_ns'])")"
expect "medians counted: no sort of the kernels by duration" "0" "$(grep -c 'FROM kernels ORDER BY dur' "$TMP/counted.profile")"
medians sorted 2200000 3 ""
expect "medians past the count: the kernels sorted by duration" "1" "$(grep -c 'FROM kernels ORDER BY dur' "$TMP/sorted.profile")"
# the HTML report's kernel table takes its medians the same two ways
for t in counted sorted; do
	"$GPT" report -q --format html -o "$TMP/$t.html" "$TMP/$t.sqlite"
done
expect "html medians: counted, then sorted by SQL" "150000.5 57.0 1100000.5" \
	"$(grep -o 'data-median-ns="[0-9.]*"' "$TMP/counted.html" "$TMP/sorted.html" | cut -d'"' -f2 | tr '\n' ' ' | sed 's/ $//')"
expect "medians past the count: sorted by SQL" "1100000.5" "$(python3 -c "import json; print(json.load(open('$TMP/sorted.json'))['kernels'][0]['median_ns'])")"
finish
