-- A framework's pool reserved up front, as JAX/XLA does (H200, 2026-11-27: one 112.58 GB allocation,
-- 75% of the device, by cuMemSetAccess): TARGET_INFO_GPU gives device 0 1 GB; at 100 us one
-- cuMemSetAccess call reserves 950 MB (95%), then four kernels run. near-oom fires at 95%, but as
-- info, with the pool named: the pool's size is a setting (XLA_PYTHON_CLIENT_MEM_FRACTION), and how
-- full it is the records cannot tell. The same 950 MB by cudaMalloc inside an iteration would be a
-- critical near-oom (alloc-in-loop.sql's 92% is a warning).
INSERT INTO StringIds (id, value) VALUES (8, 'cuMemSetAccess');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount) VALUES (0, 0, 'Test GPU', 1000000000, 132);
INSERT INTO api VALUES (100000, 150000, 50, 8, NULL);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc, bytes, memKind,
	memoryOperationType, correlationId) VALUES (120000, 100 << 24, 0, 1, 4096, 0, 950000000, 2, 0, 50);
INSERT INTO api SELECT 1000000 + n * 500000 - 10000, 1000000 + n * 500000 - 5000, 100 + n, 1, NULL
	FROM loop WHERE n < 4;
INSERT INTO kernel (start, end, corr, name) SELECT 1000000 + n * 500000, 1000000 + n * 500000 + 100000, 100 + n, 'A'
	FROM loop WHERE n < 4;
