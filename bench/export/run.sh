#!/bin/bash
# Export benchmark: a synthetic 1-million-kernel trace (made from schema/schema.sql with recursive
# CTEs, no script in the loop) exported as Perfetto protobuf and Chrome JSON, plain and gzipped.
# Records wall time, peak RSS (/usr/bin/time -v) and file size per format, and checks the Perfetto
# file is under half the JSON's size. Memory should stay flat as the trace grows, so a second, 4x
# smaller trace is exported too for comparison.
#
#   usage: bench/export/run.sh [GPT-TRACE-BINARY] [KERNELS]     (defaults: build/bin/gpt-trace, 1000000)
#
# Shape: 4 streams round-robin, 40 kernel names (every fifth demangled name longer than 96
# characters, so its slice is named by the short name), one cudaLaunchKernel row per kernel (4 us
# apart), a cudaStreamSynchronize with its sync record every 1000 launches, a 1 MiB pageable HtoD
# copy every 5000 launches, an NVTX "step" range around every 1000 launches.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
gpt=${1:-$src/build/bin/gpt-trace}
n=${2:-1000000}
work=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpt-export-bench.XXXXXX")}
mkdir -p "$work"

make_trace() {
	local out=$1 n=$2
	rm -f "$out"
	{
		cat "$src/schema/schema.sql"
		cat <<SQL
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
BEGIN;
INSERT INTO GPT_META VALUES ('schema_version', '1'), ('tool', 'gpt-trace bench/export/run.sh'),
	('time_origin_ns', '1700000000000000000'), ('process_name', 'synthetic-train'), ('pid', '1000');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, smCount,
	computeMajor, computeMinor) VALUES (0, 0, 'NVIDIA H200', '0000:45:00.0', 150137864192, 4916736000000,
	1980000000, 132, 9, 0);
INSERT INTO PROCESSES VALUES (1000 << 24, 1000, 'synthetic-train');
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 40)
INSERT INTO StringIds SELECT i, CASE WHEN i % 5 = 0
	THEN printf('void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_%d_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_%d::Params)', i, i)
	ELSE printf('void kernel_%02d<float, %d>(float const*, float*, int)', i, i * 32) END FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 40)
INSERT INTO StringIds SELECT 100 + i, printf('kernel_%02d', i) FROM k;
INSERT INTO StringIds VALUES (200, 'cudaLaunchKernel_v7000'), (201, 'cudaStreamSynchronize_v3020'),
	(202, 'cudaMemcpyAsync_v3020'), (203, 'step');
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
	staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
SELECT 4000 * i + 3000, 4000 * i + 3000 + 1000 + 300 * ((i * 7919) % 40), 0, 1, 7 + i % 4, i + 1, 1000 << 24,
	1 + (i * 7919) % 40, 101 + (i * 7919) % 40, 32, 1 + (i * 7919) % 40 * 8, 1, 1, 256, 1, 1, 0, 0, 0, 0,
	i + 1 FROM k;
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
SELECT 4000 * i, 4000 * i + 2500, 0, (1000 << 24) + 1000, i + 1, 200, 0 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 1000)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
SELECT 4000000 * i - 1400, 4000000 * i - 1400 + 900, 0, (1000 << 24) + 1000, $n + i, 201, 0 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 1000)
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId,
	globalPid, syncType, eventId)
SELECT 4000000 * i - 1300, 4000000 * i - 1300 + 700, 0, 1, 7, $n + i, 1000 << 24, 3, 4294967295 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 5000)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
SELECT 20000000 * i + 2600, 20000000 * i + 2600 + 300, 0, (1000 << 24) + 1000, 2 * $n + i, 202, 0 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 5000)
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	bytes, copyKind, srcKind, dstKind)
SELECT 20000000 * i + 50000, 20000000 * i + 50000 + 80000, 0, 1, 11, 2 * $n + i, 1000 << 24, 1048576, 1, 0, 2
	FROM k;
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 1000 - 1)
INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId)
SELECT 4000000 * i, 4000000 * (i + 1) - 1500, 59, 203, (1000 << 24) + 1000, 0 FROM k;
COMMIT;
SQL
	} | sqlite3 "$out" > /dev/null
}

# measure LABEL OUTPUT ARGS...: one export under /usr/bin/time -v; prints a table row
measure() {
	local label=$1 out=$2 secs cpu rss size
	shift 2
	/usr/bin/time -v "$gpt" export --no-findings -o "$out" "$@" > /dev/null 2> "$work/time.txt"
	secs=$(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt" |
		awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
	cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$work/time.txt")
	rss=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$work/time.txt")
	size=$(stat -c %s "$out")
	printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$secs" "$cpu" "$((rss / 1024))" \
		"$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')" "$size"
}

command -v /usr/bin/time > /dev/null || { echo "bench: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
[ -x "$gpt" ] || { echo "bench: no gpt-trace at $gpt" >&2; exit 2; }

small=$((n / 4))
start=$(date +%s)
make_trace "$work/trace.sqlite" "$n"
make_trace "$work/small.sqlite" "$small"
echo "made the traces in $(( $(date +%s) - start )) s: $(stat -c %s "$work/trace.sqlite") bytes ($n kernels), $(stat -c %s "$work/small.sqlite") bytes ($small kernels)"
echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| export ($n kernels) | wall (s) | CPU user+sys (s) | peak RSS (MiB) | size (MiB) | size (bytes) |"
echo "|---|---|---|---|---|---|"
measure perfetto "$work/trace.perfetto-trace" "$work/trace.sqlite"
measure perfetto.gz "$work/trace.perfetto-trace.gz" --gzip "$work/trace.sqlite"
measure chrome "$work/trace.json" --format chrome "$work/trace.sqlite"
measure chrome.gz "$work/trace.json.gz" --format chrome --gzip "$work/trace.sqlite"
echo
echo "| export ($small kernels) | wall (s) | CPU user+sys (s) | peak RSS (MiB) | size (MiB) | size (bytes) |"
echo "|---|---|---|---|---|---|"
measure perfetto "$work/small.perfetto-trace" "$work/small.sqlite"
measure chrome "$work/small.json" --format chrome "$work/small.sqlite"
echo
ratio=$(awk -v p="$(stat -c %s "$work/trace.perfetto-trace")" -v j="$(stat -c %s "$work/trace.json")" \
	'BEGIN { printf "%.3f", p / j }')
echo "perfetto / chrome json size: $ratio"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if ! awk -v r="$ratio" 'BEGIN { exit !(r < 0.5) }'; then
	echo "bench: the Perfetto file is not under half the JSON's size" >&2
	exit 1
fi
[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"
