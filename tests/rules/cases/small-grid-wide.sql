-- The well-written variant: every launch has at least one block per SM (132 and 264 blocks).
INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, computeMajor, computeMinor)
	VALUES (0, 0, 'NVIDIA H200', 132, 9, 0);
INSERT INTO api SELECT 1000000 + 200000 * n, 1004000 + 200000 * n, 2 * n, 1, NULL FROM loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1010000 + 200000 * n, 1110000 + 200000 * n, 2 * n, 'full', 132 FROM loop WHERE n < 10;
INSERT INTO api SELECT 1005000 + 200000 * n, 1009000 + 200000 * n, 2 * n + 1, 1, NULL FROM loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1110000 + 200000 * n, 1210000 + 200000 * n, 2 * n + 1, 'wide', 264 FROM loop WHERE n < 10;
