-- 132 SMs (an H200). tiny: 1000 launches of 1 block, 1.5 us each: shorter than min_kernel_us (2 us),
-- the least any kernel takes, so more blocks would not shorten them: nothing claimed, not listed.
-- short: 1000 launches of 1 block, 3 us each: each could take max(3 us x 1/132, 2 us) = 2 us, so
-- 1 us each is claimed: 1 ms of the 4.5 ms kernel time (22%) >= min_waste_pct 5.
INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, computeMajor, computeMinor)
	VALUES (0, 0, 'NVIDIA H200', 132, 9, 0);
INSERT INTO api SELECT 1000000 + 20000 * n, 1004000 + 20000 * n, 2 * n, 1, NULL FROM loop WHERE n < 1000;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1005000 + 20000 * n, 1006500 + 20000 * n, 2 * n, 'tiny', 1 FROM loop WHERE n < 1000;
INSERT INTO api SELECT 1007000 + 20000 * n, 1008000 + 20000 * n, 2 * n + 1, 1, NULL FROM loop WHERE n < 1000;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1009000 + 20000 * n, 1012000 + 20000 * n, 2 * n + 1, 'short', 1 FROM loop WHERE n < 1000;
