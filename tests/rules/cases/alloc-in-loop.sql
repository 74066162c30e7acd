-- Allocation and pinning calls inside a loop of four iterations, and a peak near capacity (times in
-- us after 1 ms, iteration i at base = 1000 + 500 i; host thread 101, device 0):
--   kernel A  base+0..100     launched at base-10..base-5
--   cudaMalloc     base+150..200   (50 us)
--   cudaHostAlloc  base+200..300   (100 us, host pinning)
--   kernel B  base+310..400   launched at base+300..305: a host-wait gap of 210 us from base+100
--   (iterations 1-3) the next kernel A at base+500: a host-wait gap of 100 us from base+400
-- The gap after the calls takes their pending time: 50 us for allocation-churn and 100 us for
-- host-pinning-in-loop per iteration (200 us and 400 us in all); nothing is pending at the 100 us gaps.
-- idle-gaps: host-wait 4 x 210 + 3 x 100 = 1140 us, of which 600 us are the
-- allocation rules', 540 us its own; families: allocation 600 us (cudaHostAlloc 400, cudaMalloc 200),
-- host code 4 x 50 + 3 x 90 = 470 us, launch 70 us.
-- Memory: TARGET_INFO_GPU gives device 0 1 GB; 4 allocations of 230 MB (one per iteration, never
-- freed) peak at 920 MB (92%) at the last one: near-oom fires.
INSERT INTO StringIds (id, value) VALUES (8, 'cudaMalloc_v3020'), (9, 'cudaHostAlloc_v3020');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount) VALUES (0, 0, 'Test GPU', 1000000000, 132);
INSERT INTO api SELECT 1000000 + n * 500000 - 10000, 1000000 + n * 500000 - 5000, 100 + n, 1, NULL
	FROM loop WHERE n < 4;
INSERT INTO kernel (start, end, corr, name) SELECT 1000000 + n * 500000, 1000000 + n * 500000 + 100000, 100 + n, 'A'
	FROM loop WHERE n < 4;
INSERT INTO api SELECT 1000000 + n * 500000 + 150000, 1000000 + n * 500000 + 200000, 200 + n, 8, NULL
	FROM loop WHERE n < 4;
INSERT INTO api SELECT 1000000 + n * 500000 + 200000, 1000000 + n * 500000 + 300000, 300 + n, 9, NULL
	FROM loop WHERE n < 4;
INSERT INTO api SELECT 1000000 + n * 500000 + 300000, 1000000 + n * 500000 + 305000, 400 + n, 1, NULL
	FROM loop WHERE n < 4;
INSERT INTO kernel (start, end, corr, name) SELECT 1000000 + n * 500000 + 310000, 1000000 + n * 500000 + 400000,
	400 + n, 'B' FROM loop WHERE n < 4;
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc, bytes, memKind,
	memoryOperationType, correlationId)
	SELECT 1000000 + n * 500000 + 160000, 100 << 24, 0, 1, 4096 + n * 300000000, 0, 230000000, 2, 0, 200 + n
	FROM loop WHERE n < 4;
