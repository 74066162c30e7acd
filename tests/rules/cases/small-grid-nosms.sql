-- The same kernels in a trace without a GPU table (TARGET_INFO_GPU empty): the SM count falls
-- back to small-grid.sm_count (132), and the evidence says so; the numbers are unchanged.
INSERT INTO api SELECT 1000000 + 200000 * n, 1004000 + 200000 * n, 2 * n, 1, NULL FROM loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1010000 + 200000 * n, 1110000 + 200000 * n, 2 * n, 'narrow', 33 FROM loop WHERE n < 10;
INSERT INTO api SELECT 1005000 + 200000 * n, 1009000 + 200000 * n, 2 * n + 1, 1, NULL FROM loop WHERE n < 10;
INSERT INTO kernel (start, end, corr, name, grid)
	SELECT 1110000 + 200000 * n, 1210000 + 200000 * n, 2 * n + 1, 'wide', 264 FROM loop WHERE n < 10;
