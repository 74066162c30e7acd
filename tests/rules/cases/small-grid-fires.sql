-- 132 SMs (an H200). narrow: 10 launches of 33 blocks, 100 us each, leaving 3/4 of the SMs idle:
-- 1 ms x (1 - 33/132) = 750000 ns. wide: 10 launches of 264 blocks, 100 us each, not small.
-- Idle SM time 750 us of 2 ms kernel time (37.5%) >= min_waste_pct 5.
INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, computeMajor, computeMinor)
	VALUES (0, 0, 'NVIDIA H200', 132, 9, 0);
INSERT INTO api SELECT 1000000 + 200000 * n, 1004000 + 200000 * n, 2 * n, 1, NULL FROM loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1010000 + 200000 * n, 1110000 + 200000 * n, 2 * n, 'narrow', 33 FROM loop WHERE n < 10;
INSERT INTO api SELECT 1005000 + 200000 * n, 1009000 + 200000 * n, 2 * n + 1, 1, NULL FROM loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1110000 + 200000 * n, 1210000 + 200000 * n, 2 * n + 1, 'wide', 264 FROM loop WHERE n < 10;
