-- Shorthands for the synthetic rule traces, loaded after schema/schema.sql and before a case:
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
