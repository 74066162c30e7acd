-- A small synthetic trace with hand-computable statistics, loaded after schema/schema.sql.
-- One process (pid 4242, thread 4243) on one H200; times in ns relative to time_origin_ns.
-- Kernels: kA 100, 200, 300, 400 ns; kB 1500, 500, 1000 ns. Streams 7 and 8. One pageable HtoD copy
-- (20000 B in 2000 ns), one pinned DtoH copy (40000 B in 1000 ns), one memset, one context sync.
-- NVTX: range "step" [800, 3200) holds the first four launches; range "tail" [4800, 7200) the next
-- three; a mark at 100.
INSERT INTO GPT_META VALUES ('schema_version', '1'), ('tool', 'gpt-trace'),
	('time_origin_ns', '1700000000000000000'), ('command', './train --steps 2'),
	('process_name', 'train'), ('pid', '4242'), ('trace_complete', '1');
INSERT INTO StringIds VALUES (1, 'kA(float*)'), (2, 'kB(int)'), (3, 'cudaLaunchKernel'),
	(4, 'cudaMemcpy'), (5, 'cudaMemcpyAsync'), (6, 'cudaMemsetAsync'), (7, 'cudaDeviceSynchronize'),
	(8, 'kA'), (9, 'kB'), (10, 'tail');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, smCount,
	computeMajor, computeMinor, l2CacheSize, uuid)
	VALUES (0, 0, 'NVIDIA H200', '0000:45:00.0', 150137864192, 4916736000000, 1980000000, 132, 9, 0,
	62914560, 'GPU-0');
INSERT INTO PROCESSES VALUES (4242 << 24, 4242, 'train'), (99 << 24, 99, 'idle-helper');
-- Launches: correlationId n at [start, start + 50).
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
	VALUES (900, 950, 0, (4242 << 24) + 4243, 1, 3, 0), (1400, 1450, 0, (4242 << 24) + 4243, 2, 3, 0),
	(1900, 1950, 0, (4242 << 24) + 4243, 3, 3, 0), (2900, 2950, 0, (4242 << 24) + 4243, 4, 3, 0),
	(4900, 4950, 0, (4242 << 24) + 4243, 5, 3, 0), (5900, 5950, 0, (4242 << 24) + 4243, 6, 3, 0),
	(6900, 6950, 0, (4242 << 24) + 4243, 7, 3, 0), (8100, 10200, 0, (4242 << 24) + 4243, 8, 4, 0),
	(10300, 10350, 0, (4242 << 24) + 4243, 9, 5, 0), (11500, 11520, 0, (4242 << 24) + 4243, 10, 6, 0),
	(11800, 12000, 0, (4242 << 24) + 4243, 11, 7, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
	staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
	VALUES (1000, 1100, 0, 1, 7, 1, 4242 << 24, 1, 8, NULL, 32, 4, 1, 1, 128, 1, 1, 0, 0, 0, 0, 1),
	(1500, 3000, 0, 1, 8, 2, 4242 << 24, 2, 9, NULL, 32, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 2),
	(2000, 2200, 0, 1, 7, 3, 4242 << 24, 1, 8, NULL, 32, 4, 1, 1, 128, 1, 1, 0, 0, 0, 0, 3),
	(3000, 3500, 0, 1, 7, 4, 4242 << 24, 2, 9, NULL, 32, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 4),
	(5000, 5300, 0, 1, 7, 5, 4242 << 24, 1, 8, NULL, 32, 4, 1, 1, 128, 1, 1, 0, 0, 0, 0, 5),
	(6000, 6400, 0, 1, 8, 6, 4242 << 24, 1, 8, NULL, 32, 4, 1, 1, 128, 1, 1, 0, 0, 0, 0, 6),
	(7000, 8000, 0, 1, 8, 7, 4242 << 24, 2, 9, NULL, 32, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 7);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	bytes, copyKind, srcKind, dstKind)
	VALUES (8200, 10200, 0, 1, 7, 8, 4242 << 24, 20000, 1, 0, 2),
	(10400, 11400, 0, 1, 8, 9, 4242 << 24, 40000, 2, 2, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	value, bytes, memKind)
	VALUES (11600, 11700, 0, 1, 7, 10, 4242 << 24, 0, 4096, 2);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId,
	globalPid, syncType, eventId)
	VALUES (11800, 12000, 0, 1, 0, 11, 4242 << 24, 4, 0);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId)
	VALUES (800, 3200, 59, 'step', (4242 << 24) + 4243, NULL, 0),
	(4800, 7200, 59, NULL, (4242 << 24) + 4243, 10, 0),
	(100, NULL, 34, 'mark', (4242 << 24) + 4243, NULL, 0);
