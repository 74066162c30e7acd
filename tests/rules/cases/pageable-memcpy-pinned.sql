-- The well-written variant: the same copies, every host buffer pinned (cudaMallocHost).
INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, computeMajor, computeMinor)
	VALUES (0, 0, 'NVIDIA H200', 132, 9, 0);
INSERT INTO api SELECT 1000000 + 300000 * n, 1060000 + 300000 * n, n, 5, NULL FROM loop WHERE n < 20;
INSERT INTO copy SELECT 1010000 + 300000 * n, 1060000 + 300000 * n, 7, n, 1000000, 1, 1, 2, 0
	FROM loop WHERE n < 20;
INSERT INTO api SELECT 11000000 + 10000 * n, 11004000 + 10000 * n, 200 + n, 5, NULL FROM loop WHERE n < 10;
INSERT INTO copy SELECT 11002000 + 10000 * n, 11004000 + 10000 * n, 7, 200 + n, 4096, 2, 2, 1, 0
	FROM loop WHERE n < 10;
