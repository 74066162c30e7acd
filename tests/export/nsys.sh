#!/bin/bash
# Export the two real Nsight Systems fixtures (H200 PyTorch+nvFuser; A100 CloverLeaf, an older schema
# without NVTX_EVENTS and MEMSET tables) and check what Perfetto's importer sees against the raw nsys
# tables, read here with sqlite3 (not through the loader): slices per host thread and per stream,
# arrows, kernel names and launch arguments, copy kinds with the file's own enum labels,
# synchronizations, NVTX names, timestamps to the nanosecond, and the counters.
. "$(dirname "$0")/lib.sh"
need_checker

has_table() {
	[ -n "$(sqlite3 "$1" "SELECT name FROM sqlite_master WHERE type = 'table' AND name = '$2'")" ]
}

# raw FILE SQL: rows from the nsys file, tab-separated, no header
raw() {
	sqlite3 -separator $'\t' "$1" "$2"
}

# Our own traces share the nsys tables, so the same checks run on real H200 captures of the samples
# (tests/fixtures/gpu): PyTorch training with NVTX, a CUDA graph, NVTX domains, stream syncs.
GPU=$(cd "$(dirname "$0")/../fixtures/gpu" && pwd)
for fixture in "$H200" "$CLOVER" "$GPU/train_small.sqlite" "$GPU/graph.sqlite" "$GPU/nvtx.sqlite" \
	"$GPU/sync_every_launch_stream.sqlite" "$GPU/threads.sqlite"; do
	name=$(basename "$fixture" .sqlite)
	nvtx="SELECT NULL AS globalTid, NULL AS eventType, NULL AS start, NULL AS end, NULL AS text WHERE 0"
	has_table "$fixture" NVTX_EVENTS &&
		nvtx="SELECT n.globalTid, n.eventType, n.start, n.end, coalesce(n.text, s.value) AS text
			FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
	memset="SELECT NULL AS start, NULL AS end, NULL AS streamId, NULL AS correlationId WHERE 0"
	has_table "$fixture" CUPTI_ACTIVITY_KIND_MEMSET &&
		memset="SELECT start, end, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET"
	work="SELECT start, end, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL
		SELECT start, end, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL $memset"
	origin=$(raw "$fixture" "SELECT min(m) FROM (SELECT min(start) m FROM ($work) UNION ALL
		SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL
		SELECT min(start) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION UNION ALL
		SELECT min(start) FROM ($nvtx) WHERE eventType IN (34, 59, 60))")

	# Expected, from the raw tables.
	raw "$fixture" "SELECT tid, count(*) FROM (
		SELECT globalTid & 16777215 AS tid FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL
		SELECT globalTid & 16777215 FROM ($nvtx) WHERE eventType IN (34, 59) UNION ALL
		SELECT (SELECT r.globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
			WHERE r.correlationId = y.correlationId ORDER BY r.start LIMIT 1)
			FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION y WHERE y.correlationId IN
			(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME))
		GROUP BY 1 ORDER BY 1" > "$TMP/want-threads"
	raw "$fixture" "SELECT 'stream ' || streamId, count(*) FROM ($work) GROUP BY 1 ORDER BY 1" > "$TMP/want-streams"
	raw "$fixture" "SELECT count(*) FROM ($work) WHERE correlationId IN
		(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME)" > "$TMP/want-flows"
	raw "$fixture" "SELECT CASE WHEN length(CAST(d.value AS BLOB)) <= 96 THEN d.value
		ELSE coalesce(nullif(s.value, ''), d.value) END, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k
		JOIN StringIds d ON d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName
		GROUP BY 1 ORDER BY 1" > "$TMP/want-kernel-names"
	raw "$fixture" "SELECT correlationId, start - $origin, end - start,
		'(' || gridX || ', ' || gridY || ', ' || gridZ || ')', '(' || blockX || ', ' || blockY || ', ' || blockZ || ')',
		registersPerThread, staticSharedMemory, dynamicSharedMemory, d.value
		FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = k.demangledName
		ORDER BY 1, 2" > "$TMP/want-kernels"
	raw "$fixture" "SELECT o.label, sk.label, dk.label, count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY c
		JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = c.copyKind JOIN ENUM_CUDA_MEM_KIND sk ON sk.id = c.srcKind
		JOIN ENUM_CUDA_MEM_KIND dk ON dk.id = c.dstKind GROUP BY 1, 2, 3 ORDER BY 1, 2, 3" > "$TMP/want-copies"
	raw "$fixture" "SELECT count(*), coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" > "$TMP/want-syncs"
	raw "$fixture" "SELECT text, count(*) FROM ($nvtx) WHERE eventType IN (34, 59, 60)
		GROUP BY 1 ORDER BY 1" > "$TMP/want-nvtx"
	# The slice names drop CUPTI's version suffix: cudaLaunchKernel_v7000 is 'cudaLaunchKernel', while
	# cudaLaunchKernelExC_v11060 (PyTorch uses both) is another name.
	raw "$fixture" "SELECT count(*), sum(CASE WHEN s.value GLOB 'cudaLaunchKernel_v[0-9]*' THEN 1 ELSE 0 END)
		FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId" > "$TMP/want-api"
	copies=$(raw "$fixture" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")

	for variant in perfetto chrome chrome-gzip; do
		case $variant in
		perfetto) args=(); out=$name.perfetto-trace ;;
		chrome) args=(--format chrome); out=$name.json ;;
		chrome-gzip) args=(--format chrome --gzip); out=$name.json.gz ;;
		esac
		# The CloverLeaf trace is the larger one; once in each format is enough.
		[ "$fixture" = "$CLOVER" ] && [ "$variant" = chrome ] && continue
		expect_ok "$name $variant: export" "$GPT" export --no-findings "${args[@]}" -o "$TMP/$out" "$fixture"
		arg() {
			echo "coalesce(extract_arg(s.arg_set_id, 'debug.$1'), extract_arg(s.arg_set_id, 'args.$1'))"
		}
		check "$TMP/$out" \
			"select th.tid, count(*) from slice s join thread_track tt on tt.id = s.track_id
				join thread th using(utid) where th.tid < 2000000000 group by 1 order by 1" \
			"select $TRACK_NAME, count(*) from slice s $TRACK_JOIN where $TRACK_NAME like 'stream %'
				group by 1 order by 1" \
			"select count(*) from flow" \
			"select s.name, count(*) from slice s where s.category = 'cuda.kernel' group by 1 order by 1" \
			"select $(arg 'correlation id'), s.ts - (select min(ts) from slice), s.dur, $(arg grid), $(arg block),
				$(arg 'registers per thread'), $(arg 'static shared memory'), $(arg 'dynamic shared memory'),
				$(arg kernel) from slice s where s.category = 'cuda.kernel' order by 1, 2" \
			"select $(arg 'copy kind'), $(arg 'source memory'), $(arg 'destination memory'), count(*),
				sum($(arg bytes)) from slice s where s.category = 'cuda.memcpy' group by 1, 2, 3 order by 1, 2, 3" \
			"select count(*), coalesce(sum(dur), 0) from slice where category = 'cuda.sync'" \
			"select name, count(*) from slice where category = 'nvtx' group by 1 order by 1" \
			"select count(*), sum(name = 'cudaLaunchKernel') from slice where category = 'cuda.api'" \
			"select ct.name, count(*), min(c.value) >= 0 and max(c.value) <= 100 and max(c.value) > 0
				from counter_track ct join counter c on c.track_id = ct.id where ct.name like '%busy%' group by 1" \
			"select count(*) from counter_track ct join counter c on c.track_id = ct.id
				where ct.name like 'GPU % copy % GB/s' and c.value > 0" \
			> "$TMP/got"
		for q in threads:1 streams:2 flows:3 kernel-names:4 kernels:5 copies:6 syncs:7 nvtx:8 api:9; do
			expect "$name $variant: ${q%:*}" "$(cat "$TMP/want-${q%:*}")" "$(block "$TMP/got" "${q#*:}" | tail -n +2)"
		done
		expect "$name $variant: busy counter" "$(printf 'GPU 0 busy %%\t%s\t1' "$(block "$TMP/got" 10 | tail -n +2 | cut -f2)")" \
			"$(block "$TMP/got" 10 | tail -n +2)"
		bandwidth=$(block "$TMP/got" 11 | tail -n +2)
		if [ "$copies" -gt 0 ] && [ "$bandwidth" -gt 0 ]; then
			echo "ok   $name $variant: copy bandwidth counter"
		else
			echo "FAIL $name $variant: $copies copies but $bandwidth non-zero bandwidth samples"
			failures=$((failures + 1))
		fi
	done
done
finish
