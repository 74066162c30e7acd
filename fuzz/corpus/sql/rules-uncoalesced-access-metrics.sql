-- Shorthands for the synthetic rule traces, loaded after collector/schema.sql and before a case:
-- TEMP views whose INSTEAD OF triggers fill the nsys-compatible tables with the columns a case
-- does not care about set to fixed values. One process (pid 100, so globalPid = 100 << 24), host
-- thread 101 unless a case says otherwise, device 0, context 1. Times are ns.
INSERT INTO StringIds VALUES
	(1, 'cudaLaunchKernel_v7000'), (2, 'cudaDeviceSynchronize_v3020'),
	(3, 'cudaStreamSynchronize_v3020'), (4, 'cudaMemcpy_v3020'), (5, 'cudaMemcpyAsync_v3020'),
	(6, 'cudaEventSynchronize_v3020'), (7, 'cudaMemsetAsync_v3020');

-- name: the kernel's name (text); grid: blocks in x.
CREATE TEMP VIEW kernel(start, end, stream, corr, name, grid, device, graph_node) AS
	SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL;
CREATE TEMP TRIGGER kernel_insert INSTEAD OF INSERT ON kernel BEGIN
	INSERT INTO StringIds (value) SELECT NEW.name
		WHERE NOT EXISTS (SELECT 1 FROM StringIds WHERE value = NEW.name);
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,
		correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY,
		gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,
		localMemoryPerThread, localMemoryTotal, gridId, graphNodeId)
	VALUES (NEW.start, NEW.end, COALESCE(NEW.device, 0), 1, COALESCE(NEW.stream, 7), NEW.corr,
		100 << 24, (SELECT MIN(id) FROM StringIds WHERE value = NEW.name),
		(SELECT MIN(id) FROM StringIds WHERE value = NEW.name), 32, COALESCE(NEW.grid, 1024), 1,
		1, 256, 1, 1, 0, 0, 0, 0, NEW.corr, NEW.graph_node);
END;

-- name: a StringIds id (the ids inserted above).
CREATE TEMP VIEW api(start, end, corr, name, tid) AS SELECT NULL, NULL, NULL, NULL, NULL;
CREATE TEMP TRIGGER api_insert INSTEAD OF INSERT ON api BEGIN
	INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
		nameId, returnValue)
	VALUES (NEW.start, NEW.end, 0, (100 << 24) | COALESCE(NEW.tid, 101), NEW.corr, NEW.name, 0);
END;

-- kind: 1 HtoD, 2 DtoH; src/dst: 0 pageable, 1 pinned, 2 device.
CREATE TEMP VIEW copy(start, end, stream, corr, bytes, kind, src, dst, device) AS
	SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL;
CREATE TEMP TRIGGER copy_insert INSTEAD OF INSERT ON copy BEGIN
	INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,
		correlationId, globalPid, bytes, copyKind, srcKind, dstKind)
	VALUES (NEW.start, NEW.end, COALESCE(NEW.device, 0), 1, COALESCE(NEW.stream, 7), NEW.corr,
		100 << 24, NEW.bytes, NEW.kind, NEW.src, NEW.dst);
END;

-- type: 1 event sync, 2 stream wait event, 3 stream sync, 4 context sync.
CREATE TEMP VIEW sync(start, end, stream, corr, type, device) AS
	SELECT NULL, NULL, NULL, NULL, NULL, NULL;
CREATE TEMP TRIGGER sync_insert INSTEAD OF INSERT ON sync BEGIN
	INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId,
		correlationId, globalPid, syncType, eventId)
	VALUES (NEW.start, NEW.end, COALESCE(NEW.device, 0), 1, COALESCE(NEW.stream, 7), NEW.corr,
		100 << 24, NEW.type, 0);
END;

-- A thousand-row counter for loops: SELECT n FROM loop WHERE n < 200.
CREATE TEMP TABLE loop(n INTEGER PRIMARY KEY);
WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c WHERE n < 999)
INSERT INTO loop SELECT n FROM c;
-- Hardware counters per launch, in the GPT_KERNEL_METRICS table that gpt-trace run --metrics
-- writes (inject/metrics.c); the test creates the kernel_metrics view over it with rule-run -x,
-- standing in for the loader. 1024 requests per direction and kernel:
--   coalesced_copy  100 us  loads 4/request, stores 4/request, ideal 4: not flagged
--   strided_gather  200 us  loads 32/request (ideal 4: 87.5% excess), stores 4: loads flagged;
--                           recoverable 200000 x 28672 / 36864 = 155555 ns
--   transpose       150 us  loads 4, stores 32/request (ideal 4): stores flagged, 116666 ns
--   double_copy     120 us  loads and stores 8/request, no ideal counts: against the assumed 4,
--                           both 50% excess and flagged, 60000 ns (a 64-bit copy: the false
--                           positive that assumed_sectors=8 or the ideal columns remove)
CREATE TABLE GPT_KERNEL_METRICS (correlationId INTEGER NOT NULL, deviceId INTEGER,
	contextId INTEGER, kernelName TEXT, shortName TEXT, source TEXT, gldSectors INTEGER,
	gldRequests INTEGER, gstSectors INTEGER, gstRequests INTEGER, gldSectorsIdeal INTEGER,
	gstSectorsIdeal INTEGER, idealSource TEXT, durationNs INTEGER, replayDurationNs INTEGER,
	passes INTEGER);
INSERT INTO api VALUES (1000000, 1004000, 1, 1, NULL), (1005000, 1009000, 2, 1, NULL),
	(1010000, 1014000, 3, 1, NULL), (1015000, 1019000, 4, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1020000, 1120000, 1, 'coalesced_copy'),
	(1120000, 1320000, 2, 'strided_gather'), (1320000, 1470000, 3, 'transpose'),
	(1470000, 1590000, 4, 'double_copy');
INSERT INTO GPT_KERNEL_METRICS (correlationId, deviceId, contextId, gldSectors, gldRequests,
	gstSectors, gstRequests, gldSectorsIdeal, gstSectorsIdeal) VALUES
	(1, 0, 1, 4096, 1024, 4096, 1024, 4096, 4096),
	(2, 0, 1, 32768, 1024, 4096, 1024, 4096, 4096),
	(3, 0, 1, 4096, 1024, 32768, 1024, 4096, 4096),
	(4, 0, 1, 8192, 1024, 8192, 1024, NULL, NULL);
-- Per source line (GPT_SOURCE_METRICS, from the SASS Metrics API on -lineinfo builds): the gather's
-- two lines and the transpose's store line; the test's source_metrics view stands in for the loader.
CREATE TABLE GPT_SOURCE_METRICS (kernelName TEXT, shortName TEXT, file TEXT, line INTEGER,
	gldSectors INTEGER, gldSectorsIdeal INTEGER, gldRequests INTEGER, gstSectors INTEGER,
	gstSectorsIdeal INTEGER, gstRequests INTEGER, launches INTEGER);
INSERT INTO GPT_SOURCE_METRICS VALUES
	('_Z14strided_gatherv', 'strided_gather', '/src/access.cu', 42, 24576, 3072, 768, 0, 0, 0, 1),
	('_Z14strided_gatherv', 'strided_gather', '/src/access.cu', 43, 8192, 1024, 256, 4096, 4096, 1024, 1),
	('_Z9transposev', 'transpose', '/src/access.cu', 57, 4096, 4096, 1024, 32768, 4096, 1024, 1);
