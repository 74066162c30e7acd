-- The well-written variant: the same kernels and copies issued with cudaMemcpyAsync into pinned
-- memory, queued ahead; the host does not block per copy.
INSERT INTO api SELECT 1000000 + 10000 * n, 1004000 + 10000 * n, 2 * n, 1, NULL FROM loop WHERE n < 12;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1010000 + 111000 * n, 1110000 + 111000 * n, 2 * n, 'step' FROM loop WHERE n < 12;
INSERT INTO api SELECT 1005000 + 10000 * n, 1008000 + 10000 * n, 2 * n + 1, 5, NULL FROM loop WHERE n < 12;
INSERT INTO copy SELECT 1111000 + 111000 * n, 1119000 + 111000 * n, 8, 2 * n + 1, 4096, 2, 2, 1, 0
	FROM loop WHERE n < 12;
