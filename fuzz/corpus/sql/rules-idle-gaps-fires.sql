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
-- One gap of each cause on device 0 (times below in us after 1 ms; host thread 101):
--   k1 10..110                      launched at 0..5
--   k2 160..260   gap 50 host-wait: launched at 150..155, after the device went idle at 110
--   k3 310..410   gap 50 sync-wait: at 260 the host was in cudaDeviceSynchronize 170..262
--   k4 450..550   gap 40 other:     launched at 320..325, long before the idle at 410 (stream 8)
--   k5 553..600   gap 3: below min_gap_us 5, not counted
--   k6 645..700   gap 45 host-wait: the host was still inside its launch call 590..640 at 600
-- host-wait 95 us (2), sync-wait 50 us (1), other 40 us (1); recoverable 145000 ns;
-- active 690 us (idle 26.8%); span 700 us (recoverable 20.7%) -> critical.
INSERT INTO api VALUES (1000000, 1005000, 1, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1010000, 1110000, 1, 'k1');
INSERT INTO api VALUES (1150000, 1155000, 2, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1160000, 1260000, 2, 'k2');
INSERT INTO api VALUES (1170000, 1262000, 3, 2, NULL);
INSERT INTO api VALUES (1300000, 1305000, 4, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1310000, 1410000, 4, 'k3');
INSERT INTO api VALUES (1320000, 1325000, 5, 1, NULL);
INSERT INTO kernel (start, end, stream, corr, name) VALUES (1450000, 1550000, 8, 5, 'k4');
INSERT INTO api VALUES (1330000, 1335000, 6, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1553000, 1600000, 6, 'k5');
INSERT INTO api VALUES (1590000, 1640000, 7, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1645000, 1700000, 7, 'k6');
