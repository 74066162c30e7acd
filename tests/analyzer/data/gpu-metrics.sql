-- GPU metrics with hand-computable per-kernel efficiency, loaded after schema/schema.sql.
-- One H100 (memoryBandwidth 3.352 TB/s); six 1000 ns samples stored as nsys does (one GPU_METRICS row
-- per sample and metric, typeId = 0x1000100000000 | device):
--   sample     [0,1000) [1000,2000) [2000,3000) [3000,4000) [4000,5000) [5000,6000)
--   SMs           100      100          96          90           1           1
--   Tensor          0        0          80          60           0           0
--   DRAM rd+wr  40+30    45+35        10+2        10+4         0+0         0+0
-- Kernels: copy [0,2000) SM 100, DRAM 42.5+32.5 = 75% -> memory-bound, 75% of 3352 GB/s = 2514 GB/s;
-- gemm [2000,3500): 1000 ns of sample 3, 500 of sample 4: SM (96000+45000)/1500 = 94, tensor
-- (80000+30000)/1500 = 73.333, DRAM 10 + 2.667 -> compute-bound; chase [4000,6000) SM 1 ->
-- latency-bound; late [7000,7500) no sample -> unknown. Of 6000 ns: memory 2000, compute 1500,
-- latency 2000, unknown 500.
INSERT INTO GPT_META VALUES ('gpt_schema_version', '3'), ('time_origin_ns', '1700000000000000000'),
	('pid', '4242'), ('trace_complete', '1');
INSERT INTO StringIds VALUES (1, 'copy4'), (2, 'gemm'), (3, 'pointer_chase'), (4, 'late');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, memoryBandwidth, clockRate, smCount, computeMajor, computeMinor)
	VALUES (0, 0, 'NVIDIA H100 80GB HBM3', 3352000000000, 1980000000, 132, 9, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
	staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
	VALUES (0, 2000, 0, 1, 7, 1, 4242 << 24, 1, 1, 32, 528, 1, 1, 512, 1, 1, 0, 0, 0, 0, 1),
	(2000, 3500, 0, 1, 7, 2, 4242 << 24, 2, 2, 168, 66, 2, 1, 384, 1, 1, 0, 0, 0, 0, 2),
	(4000, 6000, 0, 1, 7, 3, 4242 << 24, 3, 3, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 3),
	(7000, 7500, 0, 1, 7, 4, 4242 << 24, 4, 4, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 4);
INSERT INTO TARGET_INFO_GPU_METRICS VALUES
	(281479271677952, 0, 'GPU 0 PM sampling (gpt-trace)', 2, 'SMs Active [Throughput %]'),
	(281479271677952, 0, 'GPU 0 PM sampling (gpt-trace)', 3, 'Tensor Active [Throughput %]'),
	(281479271677952, 0, 'GPU 0 PM sampling (gpt-trace)', 5, 'DRAM Read Bandwidth [Throughput %]'),
	(281479271677952, 0, 'GPU 0 PM sampling (gpt-trace)', 6, 'DRAM Write Bandwidth [Throughput %]');
INSERT INTO GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value) VALUES
	(0, 0, 281479271677952, 2, 100), (0, 0, 281479271677952, 3, 0),
	(0, 0, 281479271677952, 5, 40), (0, 0, 281479271677952, 6, 30),
	(0, 1000, 281479271677952, 2, 100), (0, 1000, 281479271677952, 3, 0),
	(0, 1000, 281479271677952, 5, 45), (0, 1000, 281479271677952, 6, 35),
	(0, 2000, 281479271677952, 2, 96), (0, 2000, 281479271677952, 3, 80),
	(0, 2000, 281479271677952, 5, 10), (0, 2000, 281479271677952, 6, 2),
	(0, 3000, 281479271677952, 2, 90), (0, 3000, 281479271677952, 3, 60),
	(0, 3000, 281479271677952, 5, 10), (0, 3000, 281479271677952, 6, 4),
	(0, 4000, 281479271677952, 2, 1), (0, 4000, 281479271677952, 3, 0),
	(0, 4000, 281479271677952, 5, 0), (0, 4000, 281479271677952, 6, 0),
	(0, 5000, 281479271677952, 2, 1), (0, 5000, 281479271677952, 3, 0),
	(0, 5000, 281479271677952, 5, 0), (0, 5000, 281479271677952, 6, 0);
