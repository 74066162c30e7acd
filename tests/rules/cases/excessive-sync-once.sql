-- The well-written variant: the same 20 kernels queued ahead (launch calls 5 us apart), running
-- back to back 1 us apart, and one cudaStreamSynchronize at the end.
INSERT INTO api SELECT 1000000 + 5000 * n, 1004000 + 5000 * n, n, 1, NULL FROM loop WHERE n < 20;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1010000 + 51000 * n, 1060000 + 51000 * n, n, 'step' FROM loop WHERE n < 20;
INSERT INTO api VALUES (1105000, 1980000, 20, 3, NULL);
INSERT INTO sync VALUES (1105500, 1979500, 7, 20, 3, 0);
