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
-- A launch-bound loop: 200 launches of a 2 us kernel, each launch call taking 4 us, issued back to
-- back every 5 us. Each kernel starts 3 us into its launch call, so the device idles 3 us before
-- every kernel but the first. Then one 500 us kernel that is not small.
--   launch cost: median of the 199 repeated launches = 4000 ns (the first launch is left out)
--   small: tiny (median 2000 < 4000), 200 launches >= min_launches 100
--   recoverable: 199 gaps x min(3000, 4000) = 597000 ns
--   span 1000000..2503000 = 1503000 ns: 39.7% -> critical
INSERT INTO api SELECT 1000000 + 5000 * n, 1004000 + 5000 * n, n, 1, NULL FROM loop WHERE n < 200;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1003000 + 5000 * n, 1005000 + 5000 * n, n, 'tiny_kernel' FROM loop WHERE n < 200;
INSERT INTO api VALUES (2000000, 2004000, 200, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (2003000, 2503000, 200, 'big_kernel');
