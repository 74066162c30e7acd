#!/bin/bash
# Make a synthetic gpt-trace trace for the analyzer benchmark: N kernels (default 10 million) from
# schema/schema.sql, filled by recursive CTEs so no row passes through a script.
#   usage: make-trace.sh OUT.sqlite [N]
# Shape, close to a training loop: 50 kernel names with different durations, 4 streams round-robin,
# one cudaLaunchKernel API row per kernel (4 us apart, 2.5 us long), a cudaStreamSynchronize every
# 1000 launches, a pageable 4 MiB HtoD copy every 10000 launches, and an NVTX "step" range around
# every 1000 launches.
set -eu
out=$1
n=${2:-10000000}
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -f "$out"
{
	cat "$src/schema/schema.sql"
	cat <<SQL
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -262144;
BEGIN;
INSERT INTO GPT_META VALUES ('schema_version', '1'), ('tool', 'gpt-trace bench/analyzer/make-trace.sh'),
	('time_origin_ns', '1700000000000000000'), ('command', 'synthetic-train --kernels $n'),
	('process_name', 'synthetic-train'), ('pid', '1000'), ('trace_complete', '1');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, smCount,
	computeMajor, computeMinor) VALUES (0, 0, 'NVIDIA H200', '0000:45:00.0', 150137864192, 4916736000000,
	1980000000, 132, 9, 0);
INSERT INTO PROCESSES VALUES (1000 << 24, 1000, 'synthetic-train');
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 50)
INSERT INTO StringIds SELECT i, printf('void kernel_%02d<float, %d>(float const*, float*, int)', i, i * 32) FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 50)
INSERT INTO StringIds SELECT 100 + i, printf('kernel_%02d', i) FROM k;
INSERT INTO StringIds VALUES (200, 'cudaLaunchKernel'), (201, 'cudaStreamSynchronize'),
	(202, 'cudaMemcpyAsync'), (203, 'step');
-- kernel i: name 1 + (i * 7919) % 50, stream 7 + i % 4, launched at 4000 i, runs 3 us later for
-- 1 us + 200 ns per name rank + jitter
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
	staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
SELECT 4000 * i + 3000, 4000 * i + 3000 + 1000 + 200 * ((i * 7919) % 50) + (i * 31) % 97, 0, 1, 7 + i % 4,
	i + 1, 1000 << 24, 1 + (i * 7919) % 50, 101 + (i * 7919) % 50, 32, 1 + (i * 7919) % 50 * 8, 1, 1, 256,
	1, 1, 0, 0, 0, 0, i + 1 FROM k;
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
SELECT 4000 * i, 4000 * i + 2500, 0, (1000 << 24) + 1001, i + 1, 200, 0 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 1000)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
SELECT 4000000 * i - 1400, 4000000 * i + 20000, 0, (1000 << 24) + 1001, $n + i, 201, 0 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 1000)
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId,
	globalPid, syncType, eventId)
SELECT 4000000 * i - 1400, 4000000 * i + 20000, 0, 1, 7, $n + i, 1000 << 24, 3, 0 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 10000)
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	bytes, copyKind, srcKind, dstKind)
SELECT 40000000 * i + 21000, 40000000 * i + 21000 + 1200000, 0, 1, 11, 2 * $n + i, 1000 << 24, 4194304, 1,
	0, 2 FROM k;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 10000)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
SELECT 40000000 * i + 20500, 40000000 * i + 20500 + 1201000, 0, (1000 << 24) + 1001, 2 * $n + i, 202, 0
	FROM k;
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n / 1000 - 1)
INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId)
SELECT 4000000 * i, 4000000 * (i + 1) - 100, 59, 203, (1000 << 24) + 1001, 0 FROM k;
COMMIT;
SQL
} | sqlite3 "$out" > /dev/null
