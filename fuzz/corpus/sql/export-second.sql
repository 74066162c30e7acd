-- A second process of the same job for the export tests (with data/timeline.sql): pid 5151 runs two
-- kernels on GPU 0, stream 7, which pid 4242 uses too, so both streams are named by their pid.
INSERT INTO GPT_META VALUES ('schema_version', '1'), ('tool', 'gpt-trace'),
	('time_origin_ns', '1700000000000000000'), ('process_name', 'train'), ('pid', '5151');
INSERT INTO StringIds VALUES (1, 'kC(float*)'), (2, 'kC'), (20, 'cudaLaunchKernel_v7000');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, smCount,
	computeMajor, computeMinor) VALUES
	(0, 0, 'NVIDIA H200', '0000:45:00.0', 150137864192, 4916736000000, 1980000000, 132, 9, 0);
INSERT INTO PROCESSES VALUES (5151 << 24, 5151, 'train rank 1');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
	VALUES (1200, 1300, 0, (5151 << 24) + 5151, 1, 20, 0), (1400, 1500, 0, (5151 << 24) + 5151, 2, 20, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
	demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
	staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
	VALUES (3000, 3500, 0, 1, 7, 1, 5151 << 24, 1, 2, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 1),
	(3600, 3900, 0, 1, 7, 2, 5151 << 24, 1, 2, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 2);
