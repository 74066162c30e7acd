-- A synthetic trace for the export tests, loaded after schema/schema.sql. Every kind of event the
-- timeline shows, with hand-checkable nesting, flows and counters. Times in ns.
--
-- Process "train" (pid 4242): main thread 4242, worker thread 4243. GPU 0 (H200), streams 7 and 13;
-- GPU 1 (H200), stream 7.
--
-- main thread:
--   NVTX "epoch" [1000, 20000]
--     NVTX "step 1" [1100, 9000]
--       cudaLaunchKernel_v7000 [1200, 1300] corr 1 -> kA on GPU 0 stream 7 [2000, 3000]
--       cudaLaunchKernel_v7000 [1400, 1500] corr 2 -> long-named kernel, GPU 0 stream 13 [2500, 4000]
--       cudaMemcpyAsync_v3020 [1600, 1700] corr 3 -> 1 MB pageable HtoD copy, GPU 0 stream 7 [4000, 5000]
--       cudaMemsetAsync_v3020 [1800, 1850] corr 4 -> memset, GPU 0 stream 7 [5000, 5100]
--       cudaGraphLaunch_v10000 [1900, 2100] corr 5 -> three graph kernels, GPU 0 stream 13
--                                                   [4100, 4200], [4200, 4300], [4300, 4400]
--       cudaLaunchKernel_v7000 [2200, 2400] corr 6, with the driver's cuLaunchKernel [2250, 2350]
--                                            corr 14 inside -> kB on GPU 1 stream 7 [2600, 2700]
--                                            (CUPTI gives every API call its own id)
--       cudaStreamSynchronize_v3020 [2500, 6000] corr 7, blocked [2600, 5900] on stream 7
--       NVTX mark "checkpoint" at 6500
--     cudaEventSynchronize_v3020 [9500, 9800] corr 8, blocked [9550, 9750] on event 42
--     cudaDeviceSynchronize_v3020 [10000, 11000] corr 9, blocked [10050, 10950]
--     cudaMalloc_v3020 [11500, 11600] corr 10 (no GPU work)
--   NVTX start/end ranges "load A" [500, 7000], "load B" [3000, 12000], "load C" [8000, 9000]:
--     A and B overlap without nesting, so B gets a second lane; C fits the first lane again.
-- worker thread:
--   cudaLaunchKernel_v7000 [30000, 30500] corr 11 -> kernel with quotes, backslash, tab and a
--     control character in its name, GPU 0 stream 7 [31000, 31500]
--   NVTX "overlapping" [30200, 30800]: starts inside that call and ends after it (overlap track)
--   cudaLaunchKernel_v7000 [49000, 49100] corr 12 -> kA GPU 0 stream 13 [50000, 51000]
--   cudaLaunchKernel_v7000 [49200, 49300] corr 13 -> kA GPU 0 stream 13 [50500, 51500] (overlaps
--     the previous kernel on its stream: overlap track)
--   NVTX mark with invalid UTF-8 at 52000
-- no API call: kernel kA on GPU 0 stream 7 [40000, 40100] corr 999; a stream sync on stream 7
--   [60000, 61000] corr 777.
INSERT INTO GPT_META VALUES ('schema_version', '1'), ('tool', 'gpt-trace'),
	('time_origin_ns', '1700000000000000000'), ('process_name', 'train'), ('pid', '4242');
INSERT INTO StringIds VALUES
	(1, 'kA(float*)'), (2, 'kA'),
	(3, 'void very_long_kernel_name<cutlass::gemm::GemmShape<128, 128, 32>, cutlass::epilogue::thread::LinearCombination<float, 4>>(Params)'),
	(4, 'very_long_kernel_name'),
	(5, 'graph_node(int)'), (6, 'graph_node'),
	(7, 'kB(int)'), (8, 'kB'),
	(9, 'odd<"q">(a\b,' || char(9) || 'c' || char(1) || ')'), (10, 'odd'),
	(20, 'cudaLaunchKernel_v7000'), (21, 'cudaMemcpyAsync_v3020'), (22, 'cudaMemsetAsync_v3020'),
	(23, 'cudaGraphLaunch_v10000'), (24, 'cuLaunchKernel'), (25, 'cudaStreamSynchronize_v3020'),
	(26, 'cudaEventSynchronize_v3020'), (27, 'cudaDeviceSynchronize_v3020'), (28, 'cudaMalloc_v3020');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, smCount,
	computeMajor, computeMinor) VALUES
	(0, 0, 'NVIDIA H200', '0000:45:00.0', 150137864192, 4916736000000, 1980000000, 132, 9, 0),
	(0, 1, 'NVIDIA H200', '0000:46:00.0', 150137864192, 4916736000000, 1980000000, 132, 9, 0);
INSERT INTO PROCESSES VALUES (4242 << 24, 4242, 'train');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
	VALUES (1200, 1300, 0, (4242 << 24) + 4242, 1, 20, 0), (1400, 1500, 0, (4242 << 24) + 4242, 2, 20, 0),
	(1600, 1700, 0, (4242 << 24) + 4242, 3, 21, 0), (1800, 1850, 0, (4242 << 24) + 4242, 4, 22, 0),
	(1900, 2100, 0, (4242 << 24) + 4242, 5, 23, 0), (2200, 2400, 0, (4242 << 24) + 4242, 6, 20, 0),
	(2250, 2350, 1, (4242 << 24) + 4242, 14, 24, 0), (2500, 6000, 0, (4242 << 24) + 4242, 7, 25, 0),
	(9500, 9800, 0, (4242 << 24) + 4242, 8, 26, 0), (10000, 11000, 0, (4242 << 24) + 4242, 9, 27, 0),
	(11500, 11600, 0, (4242 << 24) + 4242, 10, 28, 2),
	(30000, 30500, 0, (4242 << 24) + 4243, 11, 20, 0), (49000, 49100, 0, (4242 << 24) + 4243, 12, 20, 0),
	(49200, 49300, 0, (4242 << 24) + 4243, 13, 20, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
	staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, graphId,
	graphNodeId)
	VALUES (2000, 3000, 0, 1, 7, 1, 4242 << 24, 1, 2, NULL, 32, 4, 2, 1, 128, 1, 1, 1024, 2048, 16, 0, 1,
		NULL, NULL),
	(2500, 4000, 0, 1, 13, 2, 4242 << 24, 3, 4, NULL, 168, 132, 1, 1, 256, 1, 1, 49152, 0, 0, 0, 2, NULL,
		NULL),
	(4100, 4200, 0, 1, 13, 5, 4242 << 24, 5, 6, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 3, 1, 101),
	(4200, 4300, 0, 1, 13, 5, 4242 << 24, 5, 6, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 4, 1, 102),
	(4300, 4400, 0, 1, 13, 5, 4242 << 24, 5, 6, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 5, 1, 103),
	(2600, 2700, 1, 2, 7, 6, 4242 << 24, 7, 8, NULL, 24, 8, 1, 1, 64, 1, 1, 0, 0, 0, 0, 6, NULL, NULL),
	(31000, 31500, 0, 1, 7, 11, 4242 << 24, 9, 10, NULL, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 7, NULL, NULL),
	(50000, 51000, 0, 1, 13, 12, 4242 << 24, 1, 2, NULL, 32, 4, 2, 1, 128, 1, 1, 1024, 2048, 16, 0, 8,
		NULL, NULL),
	(50500, 51500, 0, 1, 13, 13, 4242 << 24, 1, 2, NULL, 32, 4, 2, 1, 128, 1, 1, 1024, 2048, 16, 0, 9,
		NULL, NULL),
	(40000, 40100, 0, 1, 7, 999, 4242 << 24, 1, 2, NULL, 32, 4, 2, 1, 128, 1, 1, 1024, 2048, 16, 0, 10,
		NULL, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	bytes, copyKind, srcKind, dstKind)
	VALUES (4000, 5000, 0, 1, 7, 3, 4242 << 24, 1000000, 1, 0, 2);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	value, bytes, memKind)
	VALUES (5000, 5100, 0, 1, 7, 4, 4242 << 24, 255, 4096, 2);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId,
	globalPid, syncType, eventId)
	VALUES (2600, 5900, 0, 1, 7, 7, 4242 << 24, 3, 4294967295),
	(9550, 9750, 0, 1, 4294967295, 8, 4242 << 24, 1, 42),
	(10050, 10950, 0, 1, 4294967295, 9, 4242 << 24, 4, 4294967295),
	(60000, 61000, 0, 1, 7, 777, 4242 << 24, 3, 4294967295);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, color)
	VALUES (1000, 20000, 59, 'epoch', (4242 << 24) + 4242, 0, NULL),
	(1100, 9000, 59, 'step 1', (4242 << 24) + 4242, 0, 4278255360),
	(6500, NULL, 34, 'checkpoint', (4242 << 24) + 4242, 0, NULL),
	(500, 7000, 60, 'load A', (4242 << 24) + 4242, 0, NULL),
	(3000, 12000, 60, 'load B', (4242 << 24) + 4242, 0, NULL),
	(8000, 9000, 60, 'load C', (4242 << 24) + 4242, 0, NULL),
	(30200, 30800, 59, 'overlapping', (4242 << 24) + 4243, 0, NULL),
	(52000, NULL, 34, CAST(X'6F6B20FF21' AS TEXT), (4242 << 24) + 4243, 0, NULL);
